//! A long stress run of the wheel on the real clock.
//!
//! ```text
//! cargo run --release --example stress -- --secs 60
//! ```
//!
//! Repeats the workload of `tests/stress.rs` (many tasks doing a random mix
//! of sleep, timeout, delay cancelled from another task, reset, drop and
//! `DelayQueue` use, then a burst of a million timers) until `--secs` have
//! passed, checking after each round that nothing fired early, every
//! future completed, every cancel matched, nothing was left in the wheel
//! and the burst's memory was given back. Prints each round's numbers.
//!
//! The wheel gives a shard's slab back whenever the shard empties, but
//! glibc's allocator, once it has freed a large mapped block, raises its
//! mapping threshold (up to 32 MiB) and serves later allocations of that
//! size from heaps it keeps for reuse: from the second round on, the
//! burst's memory would stay resident (reused by the next burst, spread
//! over the arenas of the threads that made it) whatever the wheel does.
//! So that every round's check measures the wheel, the example runs
//! itself again with `MALLOC_MMAP_THRESHOLD_` set, which fixes that
//! threshold (other allocators ignore the variable).

mod workload;

use std::time::{Duration, Instant};

/// glibc's variable that fixes its mapping threshold (see the module docs).
const MMAP_THRESHOLD: &str = "MALLOC_MMAP_THRESHOLD_";

fn main() {
    if std::env::var_os(MMAP_THRESHOLD).is_none() {
        let status = std::process::Command::new(std::env::current_exe().expect("own path"))
            .args(std::env::args_os().skip(1))
            .env(MMAP_THRESHOLD, "131072")
            .status()
            .expect("run the stress example again");
        std::process::exit(status.code().unwrap_or(1));
    }
    let mut secs = 30u64;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--secs" => {
                secs = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .expect("--secs takes a number of seconds");
            }
            other => panic!("unknown argument {other}; usage: stress [--secs N]"),
        }
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_time()
        .build()
        .unwrap();
    let cfg = workload::Config {
        tasks: 2_000,
        ops_per_task: 1_000,
        burst: 1_000_000,
    };
    let start = Instant::now();
    let mut total = 0;
    let mut round = 0;
    while round == 0 || start.elapsed() < Duration::from_secs(secs) {
        round += 1;
        let t = Instant::now();
        let r = workload::run(&rt, cfg, Duration::from_secs(600));
        workload::check(&r, 32 << 20);
        total += r.ops;
        println!(
            "round {round}: {} ops, {} timers fired, 0 early, max late {:?}, {} cancelled, \
             RSS {} -> {} -> {} MiB, {:?}",
            r.ops,
            r.timers_fired,
            r.max_late,
            r.cancels,
            r.rss_before_burst >> 20,
            r.rss_at_burst >> 20,
            r.rss_after_burst >> 20,
            t.elapsed()
        );
    }
    println!(
        "{total} operations in {round} rounds, {:?}: no timer early, lost or left behind",
        start.elapsed()
    );
}
