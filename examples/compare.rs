//! Every benchmark workload, for hashwheel and every peer that can run it,
//! in one process, alternating implementations round by round; prints one
//! markdown table: median and min per implementation and each peer's ratio
//! to hashwheel.
//!
//! ```text
//! cargo run --release --example compare             # full run, a few minutes
//! cargo run --release --example compare -- --quick  # smaller, under a minute
//! cargo run --release --example compare -- --only register,reset  # some sections
//! cargo run --release --example compare -- --imps hashwheel,tokio    # some implementations
//! cargo run --release --example compare -- --only register --register-ops 1000000  # timers per round
//! ```
//!
//! See BENCHMARKS.md for what each row stands for.

#[path = "../benches/harness/mod.rs"]
mod harness;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use harness::workloads::{self as w, Env};
use harness::{median, Imp, Rng};

/// How much of each workload to run.
struct Config {
    quick: bool,
    rounds: usize,
    slow_rounds: usize,
    register_ops: u64,
    reset_ops: u64,
    sizes: Vec<usize>,
    /// Sizes from which insert + cancel runs `slow_rounds` rounds.
    slow_size: usize,
    memory_n: usize,
    bursts: Vec<usize>,
    pass_n: usize,
    queue_n: usize,
    late_n: usize,
    idle_window: Duration,
}

impl Config {
    fn new(quick: bool) -> Config {
        if quick {
            Config {
                quick,
                rounds: 3,
                slow_rounds: 1,
                register_ops: 50_000,
                reset_ops: 200_000,
                sizes: vec![10_000, 100_000, 1_000_000],
                slow_size: 1_000_000,
                memory_n: 1_000_000,
                bursts: vec![100_000],
                pass_n: 100_000,
                queue_n: 100_000,
                late_n: 10_000,
                idle_window: Duration::from_millis(500),
            }
        } else {
            Config {
                quick,
                rounds: 5,
                slow_rounds: 3,
                register_ops: 200_000,
                reset_ops: 1_000_000,
                sizes: vec![10_000, 100_000, 1_000_000, 4_000_000],
                slow_size: 4_000_000,
                memory_n: 1_000_000,
                bursts: vec![100_000, 1_000_000],
                pass_n: 1_000_000,
                queue_n: 1_000_000,
                late_n: 10_000,
                idle_window: Duration::from_secs(2),
            }
        }
    }
}

// ===== the table =====

struct Row {
    name: String,
    unit: &'static str,
    values: HashMap<Imp, Vec<f64>>,
}

#[derive(Default)]
struct Table {
    rows: Vec<Row>,
}

impl Table {
    fn add(&mut self, name: &str, unit: &'static str, imp: Imp, v: f64) {
        let i = match self.rows.iter().position(|r| r.name == name) {
            Some(i) => i,
            None => {
                self.rows.push(Row {
                    name: name.to_string(),
                    unit,
                    values: HashMap::new(),
                });
                self.rows.len() - 1
            }
        };
        self.rows[i].values.entry(imp).or_default().push(v);
    }

    fn print(&mut self) {
        print!("| workload | unit |");
        for imp in Imp::ALL {
            print!(" {} |", imp.name());
        }
        println!();
        println!("|---|---|{}", "---|".repeat(Imp::ALL.len()));
        for row in &mut self.rows {
            let mut medians = HashMap::new();
            for (imp, v) in row.values.iter_mut() {
                medians.insert(*imp, median(v));
            }
            print!("| {} | {} |", row.name, row.unit);
            for imp in Imp::ALL {
                let Some(v) = row.values.get(&imp) else {
                    print!(" – |");
                    continue;
                };
                let med = medians[&imp];
                let min = v.iter().copied().fold(f64::INFINITY, f64::min);
                print!(" {} ({})", fmt(med), fmt(min));
                let base = ratio_base(imp, &medians);
                if let Some(b) = base.and_then(|b| medians.get(&b)) {
                    if *b > 0.0 {
                        print!(" ×{:.2}", med / b);
                    }
                }
                print!(" |");
            }
            println!();
        }
    }
}

/// What `imp`'s ratio compares it with: tokio-util's `DelayQueue` with
/// hashwheel's where the row has it, every other peer with hashwheel's
/// futures (or its `DelayQueue` on the queue-only rows).
fn ratio_base(imp: Imp, medians: &HashMap<Imp, f64>) -> Option<Imp> {
    let has = |i| medians.contains_key(&i);
    match imp {
        Imp::Hashwheel => None,
        Imp::HashwheelQueue => None,
        Imp::TokioUtil if has(Imp::HashwheelQueue) => Some(Imp::HashwheelQueue),
        _ if has(Imp::Hashwheel) => Some(Imp::Hashwheel),
        _ => Some(Imp::HashwheelQueue),
    }
}

fn fmt(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Runs `f` for every implementation in `imps`, `rounds` times, each round
/// starting with the next implementation.
/// Implementations that `--imps` leaves out (for profiling one of them).
static SKIP: std::sync::OnceLock<Vec<Imp>> = std::sync::OnceLock::new();

fn rounds(n: usize, imps: &[Imp], mut f: impl FnMut(Imp)) {
    let skip = SKIP.get().map_or(&[][..], |s| s.as_slice());
    let imps: Vec<Imp> = imps.iter().copied().filter(|i| !skip.contains(i)).collect();
    for r in 0..n {
        for k in 0..imps.len() {
            f(imps[(k + r) % imps.len()]);
        }
    }
}

fn count(n: usize) -> String {
    match n {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        n if n >= 1_000 && n % 1_000 == 0 => format!("{}k", n / 1_000),
        n => n.to_string(),
    }
}

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

// ===== the workloads =====

const NS: &str = "ns/op";

fn register_cancel(cfg: &Config, env: &Env, t: &mut Table) {
    for threads in [1, 2] {
        let name = |m| format!("register + cancel a 30 s sleep, {threads} thread(s), {m}");
        let ops = cfg.register_ops;
        rounds(cfg.rounds, &Imp::FREE, |imp| {
            let (cpu, wall) = w::register_cancel(env, imp, threads, ops).per_op(ops);
            t.add(&name("CPU"), NS, imp, cpu);
            t.add(&name("wall"), NS, imp, wall);
        });
    }
}

fn timeout(cfg: &Config, env: &Env, t: &mut Table) {
    for (pending, what) in [(true, "pending once, then ready"), (false, "ready at once")] {
        let name = format!("timeout(30 s, f), f {what}, CPU");
        let ops = cfg.register_ops;
        rounds(cfg.rounds, &Imp::FREE, |imp| {
            let cpu = w::timeout(env, imp, pending, ops).per_op(ops).0;
            t.add(&name, NS, imp, cpu);
        });
    }
}

fn insert_cancel(cfg: &Config, env: &Env, t: &mut Table) {
    for &n in &cfg.sizes {
        let mut rng = Rng::new(n as u64);
        let deadlines = rng.durations(n, Duration::from_secs(10), Duration::from_secs(60));
        let order = rng.permutation(n);
        let r = if n >= cfg.slow_size {
            cfg.slow_rounds
        } else {
            cfg.rounds
        };
        let insert = format!("insert {} pending timers (10–60 s), CPU", count(n));
        let cancel = format!("cancel those {} (random order), CPU", count(n));
        rounds(r, &Imp::HOLDERS, |imp| {
            let ic = w::insert_cancel(env, imp, &deadlines, &order);
            t.add(&insert, NS, imp, ic.insert.per_op(n as u64).0);
            t.add(&cancel, NS, imp, ic.cancel.per_op(n as u64).0);
        });
    }
}

fn memory(cfg: &Config, _: &Env, t: &mut Table) {
    let name = format!("memory per pending timer, RSS of {}", count(cfg.memory_n));
    for imp in Imp::MAIN {
        if let Some(b) = w::bytes_per_timer(imp, cfg.memory_n) {
            t.add(&name, "B", imp, b);
        }
        t.add(
            "size_of the timer a user holds",
            "B",
            imp,
            w::size_of_timer(imp) as f64,
        );
    }
}

fn reset(cfg: &Config, env: &Env, t: &mut Table) {
    for (poll, what) in [(false, ""), (true, " and poll")] {
        let name = format!("reset a pending timer to a later deadline{what}, CPU");
        let ops = cfg.reset_ops;
        rounds(cfg.rounds, &Imp::MAIN, |imp| {
            t.add(&name, NS, imp, w::reset(env, imp, poll, ops).per_op(ops).0);
        });
    }
}

fn burst(cfg: &Config, _: &Env, t: &mut Table) {
    for &n in &cfg.bursts {
        let name = format!(
            "{} tasks on one deadline: deadline → last wake-up",
            count(n)
        );
        let early = format!("{} tasks on one deadline: early wake-ups", count(n));
        let r = if n > 100_000 {
            cfg.slow_rounds
        } else {
            cfg.rounds
        };
        rounds(r, &Imp::FUTURES, |imp| match w::burst(imp, n) {
            Some(b) => {
                t.add(&name, "ms", imp, b.last_wake.as_secs_f64() * 1e3);
                t.add(&early, "tasks", imp, b.early as f64);
            }
            None => eprintln!(
                "{}: {n} tasks could not register before the deadline",
                imp.name()
            ),
        });
    }
}

fn lateness(cfg: &Config, _: &Env, t: &mut Table) {
    let head = format!("{} random sleeps 1–500 ms (real clock)", count(cfg.late_n));
    rounds(cfg.slow_rounds, &Imp::MAIN, |imp| {
        let l = w::lateness(imp, cfg.late_n);
        t.add(&format!("{head}: lateness p50"), "ms", imp, l.p50_ms);
        t.add(&format!("{head}: lateness p99"), "ms", imp, l.p99_ms);
        t.add(&format!("{head}: lateness max"), "ms", imp, l.max_ms);
        t.add(
            &format!("{head}: early fires"),
            "timers",
            imp,
            l.early as f64,
        );
    });
}

fn idle(cfg: &Config, _: &Env, t: &mut Table) {
    let window = cfg.idle_window;
    for (timers, what) in [(0, "nothing pending"), (100_000, "100k timers 60 s away")] {
        let imps: &[Imp] = if timers == 0 {
            &Imp::FUTURES
        } else {
            &Imp::MAIN
        };
        let name = format!("CPU over {window:?} with {what}");
        rounds(cfg.slow_rounds, imps, |imp| {
            let used = w::idle_cpu(imp, timers, window);
            t.add(&name, "ms", imp, used.as_secs_f64() * 1e3);
        });
    }
}

fn expiry_pass(cfg: &Config, _: &Env, t: &mut Table) {
    let n = cfg.pass_n;
    let name = format!(
        "expiry pass: {} due timers, counting wakers, paused clock",
        count(n)
    );
    rounds(cfg.rounds, &[Imp::Hashwheel, Imp::Tokio], |imp| {
        t.add(
            &name,
            "ms",
            imp,
            w::expiry_pass(imp, n).wall_ns as f64 / 1e6,
        );
    });
}

fn delay_queue(cfg: &Config, _: &Env, t: &mut Table) {
    let n = cfg.queue_n;
    let mut rng = Rng::new(3);
    let deadlines = rng.durations(n, Duration::from_secs(10), Duration::from_secs(60));
    let order = rng.permutation(n);
    rounds(cfg.rounds, &Imp::QUEUES, |imp| {
        let q = w::delay_queue(imp, &deadlines, &order);
        let ops = [
            ("insert", q.insert),
            ("reset", q.reset),
            ("remove", q.remove),
            ("drain", q.drain),
        ];
        for (op, s) in ops {
            let name = format!("DelayQueue {op}, {} entries, CPU", count(n));
            t.add(&name, NS, imp, s.per_op(n as u64).0);
        }
    });
}

type Section = fn(&Config, &Env, &mut Table);

/// Every section, in order. The ones on tokio's paused clock come last: once
/// a clock has been paused, every `tokio::time::Instant::now()` in the
/// process (with tokio's `test-util`, which the dev-dependencies enable)
/// takes a slower path.
const SECTIONS: [(&str, Section); 10] = [
    ("register", register_cancel),
    ("timeout", timeout),
    ("insert", insert_cancel),
    ("memory", memory),
    ("reset", reset),
    ("burst", burst),
    ("lateness", lateness),
    ("idle", idle),
    ("pass", expiry_pass),
    ("queue", delay_queue),
];

// ===== main =====

fn main() {
    w::child_main();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let list = |flag: &str| -> Option<Vec<String>> {
        let i = args.iter().position(|a| a == flag)?;
        Some(args.get(i + 1)?.split(',').map(String::from).collect())
    };
    let only = list("--only");
    if let Some(keep) = list("--imps") {
        let skip = Imp::ALL
            .into_iter()
            .filter(|i| !keep.iter().any(|k| k == i.id()));
        SKIP.set(skip.collect()).expect("set once");
    }
    let mut cfg = Config::new(quick);
    if let Some(n) = list("--register-ops") {
        cfg.register_ops = n[0].parse().expect("--register-ops takes a number");
    }
    let started = Instant::now();
    let env = Env::new();
    let mut t = Table::default();
    for (name, section) in SECTIONS {
        if only.as_ref().is_some_and(|o| !o.iter().any(|x| x == name)) {
            continue;
        }
        eprintln!("[{:>5.1}s] {name}", started.elapsed().as_secs_f64());
        section(&cfg, &env, &mut t);
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
    println!(
        "- rounds: {} ({} for inserts of {} and more, bursts of more than 100k tasks, lateness and idle CPU), implementations alternating",
        cfg.rounds,
        cfg.slow_rounds,
        count(cfg.slow_size)
    );
    println!();
    println!("Each cell: median (min) over the rounds; ×r = that peer's median ÷ hashwheel's (above 1: hashwheel is lower); tokio-util's DelayQueue is compared with hashwheel's DelayQueue.");
    println!();
    t.print();
}
