//! Every benchmark workload, for hashwheel and every peer that can run it,
//! in one process, alternating implementations round by round; prints one
//! markdown table (median and min per implementation and each peer's ratio
//! to hashwheel) and writes SVG charts.
//!
//! The rows that matter run where a server's timers live: inside tasks on a
//! multi-thread runtime (`task, …` and `server, …` rows). The `plain
//! thread†` rows register timers from a thread outside the runtime, inside
//! `rt.enter()`, which takes other paths; they are kept, as secondary.
//!
//! ```text
//! cargo run --release -p hashwheel-bench --bin compare             # full run (~20 min, 14 of them the server rows)
//! cargo run --release -p hashwheel-bench --bin compare -- --quick  # smaller (~70 s)
//! cargo run --release -p hashwheel-bench --bin compare -- --only task_register,server  # some sections
//! cargo run --release -p hashwheel-bench --bin compare -- --imps hashwheel,tokio    # some implementations
//! cargo run --release -p hashwheel-bench --bin compare -- --only register --register-ops 1000000  # timers per round
//! cargo run --release -p hashwheel-bench --bin compare -- --only server --server-secs 20 --server-conns 200000
//! cargo run --release -p hashwheel-bench --bin compare -- --charts docs/charts    # where the SVGs go
//! cargo run --release -p hashwheel-bench --bin compare -- --only io_read,io_idle  # hashwheel::io beside tokio-io-timeout
//! ```
//!
//! Options (`--help` lists them, with the sections and implementation ids;
//! an unknown option is an error): `--quick`, `--only SECTION,...`, `--imps ID,...`,
//! `--register-ops N` (also the in-task rows' ops per task), `--server-secs N`, `--server-conns N,...`,
//! `--server-rate N` (messages/s), `--server-rounds N`, `--charts DIR`
//! (default `target/charts`), `--no-charts`.
//!
//! The `tokio::time (alt timer)` column (id `tokio_alt` or `tokio-alt`) runs
//! tokio's alternative timer (`Builder::enable_alt_timer`, a timer wheel
//! per worker) in the in-task rows (register + cancel, reset, timeout,
//! insert + cancel) and the server rows. It needs `--cfg tokio_unstable`,
//! as its users build; a target dir of its own keeps the normal build:
//!
//! ```text
//! RUSTFLAGS="--cfg tokio_unstable" CARGO_TARGET_DIR=target/unstable \
//!   cargo run --release -p hashwheel-bench --bin compare -- --only task_register --imps hashwheel,tokio,tokio-alt
//! ```
//!
//! Built without it, compare says so at its start and under its table.
//!
//! Each section lives in the bench library beside the workload it runs (a
//! `rows` module at the end of `in_task.rs`, `server.rs`, `io.rs` and
//! `plain_thread.rs`; `compare.rs` lists them in run order). This binary
//! holds the command line, the report's head and the charts. See
//! BENCHMARKS.md for what each row stands for.

mod charts;
mod recorder;

use std::time::{Duration, Instant};

use hashwheel_bench as harness;

use harness::compare;
use harness::config::Config;
use harness::plain_thread as w;
use harness::section::Envs;
use harness::table::{self, count, Table};
use harness::{Imp, ALT_TIMER_BUILT, ALT_TIMER_HOW};

// ===== machine facts =====

fn command(cmd: &str, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new(cmd).args(args).output().ok()?;
    let s = String::from_utf8(out.stdout).ok()?;
    Some(s.trim().to_string()).filter(|s| !s.is_empty())
}

fn machine() -> Vec<(&'static str, String)> {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let unknown = || "unknown".to_string();
    vec![
        (
            "date",
            command("date", &["-u", "+%Y-%m-%d %H:%M UTC"]).unwrap_or_else(unknown),
        ),
        (
            "commit",
            command("git", &["rev-parse", "--short", "HEAD"]).unwrap_or_else(unknown),
        ),
        ("cpu", cpu),
        ("cores", cores.to_string()),
        (
            "rustc",
            command("rustc", &["--version"]).unwrap_or_else(unknown),
        ),
        ("kernel", command("uname", &["-sr"]).unwrap_or_else(unknown)),
    ]
}

// ===== main =====

/// The options that take a value, and those that do not.
const VALUE_FLAGS: [&str; 8] = [
    "--only",
    "--imps",
    "--register-ops",
    "--server-secs",
    "--server-conns",
    "--server-rate",
    "--server-rounds",
    "--charts",
];
const SWITCHES: [&str; 2] = ["--quick", "--no-charts"];

/// The implementation ids, for messages.
fn ids() -> String {
    let ids: Vec<&str> = Imp::ALL.iter().map(|i| i.id()).collect();
    ids.join(", ")
}

/// What this build says of the tokio-alt column.
fn alt_timer_note() -> String {
    if ALT_TIMER_BUILT {
        "built with --cfg tokio_unstable: the tokio::time (alt timer) column runs tokio's \
         alternative timer (Builder::enable_alt_timer) on runtimes of its own"
            .to_string()
    } else {
        format!(
            "NOT in this build (it needs --cfg tokio_unstable); build it with:\n  {ALT_TIMER_HOW}"
        )
    }
}

fn usage() -> String {
    format!(
        "usage: compare [--quick] [--no-charts] [--only SECTION,...] [--imps ID,...] \
         [--register-ops N] [--server-secs N] [--server-conns N,...] [--server-rate N] \
         [--server-rounds N] [--charts DIR]\nsections: {}\nimplementations: {}\ntokio-alt: {}",
        compare::names(),
        ids(),
        alt_timer_note()
    )
}

/// Every argument is a known option or an option's value: a mistyped one
/// must not start a 20-minute full run.
fn check_args(args: &[String]) {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{}", usage());
        std::process::exit(0);
    }
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let ok = if VALUE_FLAGS.contains(&a.as_str()) {
            it.next().is_some_and(|v| !v.starts_with("--"))
        } else {
            SWITCHES.contains(&a.as_str())
        };
        if !ok {
            eprintln!("compare: unknown option or missing value: {a}\n{}", usage());
            std::process::exit(2);
        }
    }
}

fn main() {
    harness::io::child_main();
    w::child_main();
    let args: Vec<String> = std::env::args().skip(1).collect();
    check_args(&args);
    let quick = args.iter().any(|a| a == "--quick");
    let list = |flag: &str| -> Option<Vec<String>> {
        let i = args.iter().position(|a| a == flag)?;
        Some(args.get(i + 1)?.split(',').map(String::from).collect())
    };
    let only = list("--only");
    if let Some(keep) = list("--imps") {
        for k in &keep {
            if !ALT_TIMER_BUILT && k.replace('-', "_") == "tokio_alt" {
                eprintln!("compare: --imps {k}: tokio-alt is {}", alt_timer_note());
                std::process::exit(2);
            }
            assert!(
                Imp::from_id(k).is_some(),
                "--imps {k}: no such implementation; implementations: {}",
                ids()
            );
        }
        let keep: Vec<Imp> = keep.iter().filter_map(|k| Imp::from_id(k)).collect();
        let skip = Imp::ALL.iter().copied().filter(|i| !keep.contains(i));
        table::SKIP.set(skip.collect()).expect("set once");
    }
    let sections = compare::select(only.as_deref()).unwrap_or_else(|e| panic!("{e}"));
    let mut cfg = Config::new(quick);
    let number = |flag: &str, v: &str| -> u64 {
        v.parse()
            .unwrap_or_else(|_| panic!("{flag} takes a number, not {v:?}"))
    };
    if let Some(n) = list("--register-ops") {
        cfg.register_ops = number("--register-ops", &n[0]);
        cfg.task_ops = cfg.register_ops;
    }
    if let Some(n) = list("--server-secs") {
        cfg.server_run = Duration::from_secs(number("--server-secs", &n[0]));
    }
    if let Some(n) = list("--server-conns") {
        cfg.server_conns = n
            .iter()
            .map(|c| number("--server-conns", c) as usize)
            .collect();
    }
    if let Some(n) = list("--server-rate") {
        cfg.server_rate = number("--server-rate", &n[0]);
    }
    if let Some(n) = list("--server-rounds") {
        cfg.server_rounds = number("--server-rounds", &n[0]) as usize;
    }
    let charts = match list("--charts") {
        _ if args.iter().any(|a| a == "--no-charts") => None,
        Some(d) => Some(std::path::PathBuf::from(&d[0])),
        None => Some(std::path::PathBuf::from("target/charts")),
    };
    eprintln!("tokio-alt: {}", alt_timer_note());
    let recording = recorder::install();
    let started = Instant::now();
    let envs = Envs::new();
    let mut t = Table::default();
    for section in sections {
        eprintln!(
            "[{:>5.1}s] {}",
            started.elapsed().as_secs_f64(),
            section.name
        );
        (section.run)(&cfg, &envs, &mut t);
    }

    let took = started.elapsed();
    let mode = if cfg.quick { "quick" } else { "full" };
    println!();
    println!(
        "hashwheel compare ({mode} run, {:.0} s)",
        took.as_secs_f64()
    );
    for (k, v) in machine() {
        println!("- {k}: {v}");
    }
    if let Some(what) = recording {
        println!("- metrics: {what}");
    }
    println!(
        "- rounds: {} ({} for inserts of {} and more and for idle CPU; {} for the server rows), implementations alternating",
        cfg.rounds,
        cfg.slow_rounds,
        count(cfg.slow_size),
        cfg.server_rounds,
    );
    println!(
        "- server rows: {} messages/s for {:?} per run",
        cfg.server_rate, cfg.server_run
    );
    println!("- tokio-alt: {}", alt_timer_note());
    println!();
    println!("Each cell: median (min) over the rounds; ×r = that peer's median ÷ hashwheel's (above 1: hashwheel is lower); tokio-util's DelayQueue is compared with hashwheel's DelayQueue.");
    println!();
    t.print();
    println!();
    println!("{}", w::rows::PLAIN_NOTE);
    if let Some(dir) = charts {
        match charts::write_all(&dir, &cfg, &t) {
            Ok(files) => {
                for f in files {
                    eprintln!("chart: {}", f.display());
                }
            }
            Err(e) => eprintln!("charts: {e}"),
        }
    }
}
