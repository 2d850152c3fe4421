//! The server row as a deterministic replay (see `hashwheel_bench::replay`),
//! counted under valgrind: instructions and cache misses per message of the
//! timers alone, the same on every run whatever else the machine does.
//!
//! ```text
//! cargo build --release -p hashwheel-bench --bin replay
//! target/release/replay                          # the table: 200k and 1M, under callgrind
//! target/release/replay --conns 200000 --jobs 2  # one size, two valgrinds at once
//! target/release/replay check --conns 2000 --measured 2000   # every backend, natively, checked
//! target/release/replay run tokio 200000 200000  # one replay (what the table runs under valgrind)
//! target/release/replay --warm-ms 12000          # a warm-up of an idle timeout and more (see below)
//! ```
//!
//! The table runs each backend's replay under `valgrind --tool=callgrind
//! --cache-sim=yes --toggle-collect=*measured_phase*` on a fixed cache
//! (32 KiB 8-way I1 and D1, 8 MiB 16-way last level, 64-byte lines): only
//! the measured phase is counted (not the setup, the warm-up nor the
//! drain), with the caches simulated from the start. A backend's cost per message is its
//! count less the no-timer replay's, divided by the messages of the
//! measured phase (the same in every replay). Estimated cycles: Ir + 10 x
//! D1 misses + 100 x last-level misses. The callgrind files stay in `--out`
//! (default `target/replay`) for `callgrind_annotate`.
//!
//! The default warm-up gives every connection a message (one round of the
//! generator). `--warm-ms` longer than the idle timeout also brings, into
//! the measured phase, the deadlines the moved idle timers were first filed
//! for: tokio moves a timer later lazily and re-files it there.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use hashwheel_bench::replay::{replay, ReplayConfig, BACKENDS};
use hashwheel_bench::Imp;

/// The server row's rate: 200k messages per second.
const RATE: u64 = 200_000;

fn key(imp: Imp) -> &'static str {
    match imp {
        Imp::NoTimer => "none",
        Imp::Hashwheel => "hashwheel",
        Imp::HashwheelFree => "free",
        Imp::Tokio => "tokio",
        _ => unreachable!("not a replay backend"),
    }
}

fn backend(k: &str) -> Imp {
    BACKENDS
        .into_iter()
        .find(|&i| key(i) == k)
        .unwrap_or_else(|| usage(&format!("no backend {k:?}")))
}

fn usage(why: &str) -> ! {
    let keys: Vec<&str> = BACKENDS.iter().map(|&i| key(i)).collect();
    eprintln!(
        "replay: {why}\nusage: replay [--conns N,...] [--measured N] [--warm-ms N] [--jobs N] [--out DIR]\n       \
         replay check [--conns N,...] [--measured N] [--warm-ms N]\n       \
         replay run BACKEND CONNS MEASURED [--warm-ms=N]\n\
         backends: {}",
        keys.join(", ")
    );
    std::process::exit(2)
}

fn number(s: &str) -> usize {
    s.parse()
        .unwrap_or_else(|_| usage(&format!("not a number: {s:?}")))
}

struct Opts {
    conns: Vec<usize>,
    measured: usize,
    jobs: usize,
    out: PathBuf,
    warm_ms: Option<u64>,
}

fn opts(args: &[String]) -> Opts {
    let mut o = Opts {
        conns: vec![200_000, 1_000_000],
        measured: 200_000,
        jobs: 1,
        out: PathBuf::from("target/replay"),
        warm_ms: None,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut v = || {
            it.next()
                .unwrap_or_else(|| usage(&format!("{a} needs a value")))
        };
        match a.as_str() {
            "--conns" => o.conns = v().split(',').map(number).collect(),
            "--measured" => o.measured = number(v()),
            "--jobs" => o.jobs = number(v()).max(1),
            "--out" => o.out = PathBuf::from(v()),
            "--warm-ms" => o.warm_ms = Some(number(v()) as u64),
            _ => usage(&format!("unknown option {a:?}")),
        }
    }
    o
}

/// One replay, checked; prints what it did.
fn run_one(imp: Imp, conns: usize, measured: usize, warm_ms: Option<u64>) -> Result<(), String> {
    let cfg = ReplayConfig::new(conns, RATE, measured);
    let r = replay(imp, &cfg, warm_ms);
    println!(
        "{} conns={} idle={:?} warm_messages={} measured_messages={} silent={} reaped={} early={} max_late={:?} active_reaped={} request_timeouts={} task_future_bytes={}",
        key(imp),
        conns,
        cfg.idle,
        r.warm_messages,
        r.measured_messages,
        r.silent,
        r.reaped,
        r.early,
        r.max_late,
        r.active_reaped,
        r.request_timeouts,
        r.task_future_bytes
    );
    r.check(imp)
}

/// Callgrind's totals of one file, by event name.
fn totals(file: &Path) -> Result<HashMap<String, u64>, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
    };
    let events = field("events:").ok_or("no events line")?;
    let values = field("totals:")
        .or_else(|| field("summary:"))
        .ok_or("no totals line")?;
    Ok(events
        .into_iter()
        .zip(values.iter().map(|v| v.parse().unwrap_or(0)))
        .collect())
}

/// A phase's counts: instructions, D1 misses, last-level misses.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    ir: f64,
    d1: f64,
    ll: f64,
}

impl Counts {
    fn of(t: &HashMap<String, u64>) -> Counts {
        let g = |k: &str| t.get(k).copied().unwrap_or(0) as f64;
        Counts {
            ir: g("Ir"),
            d1: g("D1mr") + g("D1mw"),
            ll: g("DLmr") + g("DLmw") + g("ILmr"),
        }
    }

    fn cycles(self) -> f64 {
        self.ir + 10.0 * self.d1 + 100.0 * self.ll
    }

    fn less(self, o: Counts, per: f64) -> Counts {
        Counts {
            ir: (self.ir - o.ir) / per,
            d1: (self.d1 - o.d1) / per,
            ll: (self.ll - o.ll) / per,
        }
    }
}

/// Runs `imp`'s replay under callgrind; its counts and measured messages.
fn under_valgrind(imp: Imp, conns: usize, o: &Opts) -> Result<(Counts, f64), String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let file = o.out.join(format!("replay-{}-{conns}.callgrind", key(imp)));
    let out = Command::new("valgrind")
        .args([
            "--tool=callgrind",
            "--cache-sim=yes",
            "--toggle-collect=*measured_phase*",
            // Costs per instruction, so that replay_breakdown.py --atomics
            // can count the atomic read-modify-writes.
            "--dump-instr=yes",
            // A fixed machine: valgrind would take the host's caches, which
            // a VM may report oddly (this one: a 256 MB direct-mapped LL).
            "--I1=32768,8,64",
            "--D1=32768,8,64",
            "--LL=8388608,16,64",
        ])
        .arg(format!("--callgrind-out-file={}", file.display()))
        .arg(me)
        .args(["run", key(imp), &conns.to_string(), &o.measured.to_string()])
        .args(o.warm_ms.map(|w| format!("--warm-ms={w}")))
        .output()
        .map_err(|e| format!("valgrind: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "{} at {conns}: {}\n{stdout}{}",
            key(imp),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    eprint!("{stdout}");
    let measured = stdout
        .split_whitespace()
        .find_map(|w| w.strip_prefix("measured_messages="))
        .and_then(|m| m.parse::<f64>().ok())
        .ok_or("no measured_messages in the replay's output")?;
    Ok((Counts::of(&totals(&file)?), measured))
}

fn table(o: &Opts) -> Result<(), String> {
    std::fs::create_dir_all(&o.out).map_err(|e| e.to_string())?;
    let runs: Vec<(usize, Imp)> = o
        .conns
        .iter()
        .flat_map(|&c| BACKENDS.map(|i| (c, i)))
        .collect();
    let mut got: HashMap<(usize, Imp), (Counts, f64)> = HashMap::new();
    for chunk in runs.chunks(o.jobs) {
        let done: Vec<_> = std::thread::scope(|s| {
            let hs: Vec<_> = chunk
                .iter()
                .map(|&(c, i)| s.spawn(move || ((c, i), under_valgrind(i, c, o))))
                .collect();
            hs.into_iter()
                .map(|h| h.join().expect("a valgrind thread"))
                .collect()
        });
        for (k, r) in done {
            got.insert(k, r?);
        }
    }
    println!(
        "timer cost per message (replay less the no-timer replay; estimated cycles = Ir + 10 x D1 misses + 100 x LL misses)"
    );
    println!(
        "| connections | backend | est. cycles | Ir | D1 misses | LL misses | est. cycles / tokio's |"
    );
    println!("|---|---|---|---|---|---|---|");
    for &c in &o.conns {
        let (base, m) = got[&(c, Imp::NoTimer)];
        let per = |i: Imp| {
            let (x, mi) = got[&(c, i)];
            assert_eq!(mi, m, "the replays sent different messages");
            x.less(base, m)
        };
        let tokio = per(Imp::Tokio).cycles();
        for i in BACKENDS.into_iter().filter(|&i| i != Imp::NoTimer) {
            let x = per(i);
            println!(
                "| {c} | {} | {:.0} | {:.0} | {:.2} | {:.2} | {:.2}x |",
                i.name(),
                x.cycles(),
                x.ir,
                x.d1,
                x.ll,
                x.cycles() / tokio
            );
        }
        let b = Counts {
            ir: base.ir / m,
            d1: base.d1 / m,
            ll: base.ll / m,
        };
        println!(
            "| {c} | no timer (whole message, for scale) | {:.0} | {:.0} | {:.2} | {:.2} | |",
            b.cycles(),
            b.ir,
            b.d1,
            b.ll
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args.first().map(String::as_str) {
        Some("run") => match &args[1..] {
            [b, c, m] => run_one(backend(b), number(c), number(m), None),
            [b, c, m, w] => match w.strip_prefix("--warm-ms=") {
                Some(w) => run_one(backend(b), number(c), number(m), Some(number(w) as u64)),
                None => usage("run takes BACKEND CONNS MEASURED [--warm-ms=N]"),
            },
            _ => usage("run takes BACKEND CONNS MEASURED [--warm-ms=N]"),
        },
        Some("check") => {
            let o = opts(&args[1..]);
            o.conns
                .iter()
                .flat_map(|&c| BACKENDS.map(|i| (c, i)))
                .try_for_each(|(c, i)| run_one(i, c, o.measured, o.warm_ms))
        }
        _ => table(&opts(&args)),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("replay: {e}");
            ExitCode::FAILURE
        }
    }
}
