//! A long stress run of the wheel on the real clock.
//!
//! ```text
//! cargo run --release -p hashwheel-bench --bin stress -- --secs 60
//! ```
//!
//! Repeats the workload of `tests/stress.rs` (many tasks doing a random mix
//! of sleep, timeout, delay cancelled from another task, reset, drop and
//! `DelayQueue` use, then a burst of a million timers) until `--secs` have
//! passed, checking after each round that nothing fired early, every
//! future completed, every cancel matched, nothing was left in the wheel
//! and the burst's heap was given back (allocated bytes, counted by the
//! workload's global allocator). Prints each round's numbers, resident
//! memory included; that one is glibc's to decide and is not checked.

use std::alloc::System;
use std::time::{Duration, Instant};

use hashwheel_bench::stress::{self as workload, Heap};

/// Every allocation of the process goes through this counter (see
/// [`workload::Config::heap`]).
#[global_allocator]
static HEAP: Heap = Heap::new(System, usize::MAX);

fn main() {
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
        heap: || HEAP.allocated() as u64,
    };
    let start = Instant::now();
    let mut total = 0;
    let mut round = 0;
    while round == 0 || start.elapsed() < Duration::from_secs(secs) {
        round += 1;
        let t = Instant::now();
        let r = workload::run(&rt, cfg, Duration::from_secs(600));
        workload::check(&r, workload::heap_bound(&cfg));
        total += r.ops;
        println!(
            "round {round}: {} ops, {} timers fired, 0 early, max late {:?}, {} cancelled, \
             heap {} -> {} -> {} MiB, RSS {} -> {} -> {} MiB, {:?}",
            r.ops,
            r.timers_fired,
            r.max_late,
            r.cancels,
            r.heap_before_burst >> 20,
            r.heap_at_burst >> 20,
            r.heap_after_burst >> 20,
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
