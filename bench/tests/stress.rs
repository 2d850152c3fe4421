//! A bounded stress run on a multi-thread runtime and the real clock: the
//! workload of the `stress` binary (run it longer with
//! `cargo run --release -p hashwheel-bench --bin stress -- --secs N`).
//!
//! Its only timing check is exact: nothing fires before its deadline. The
//! rest: every future completes (a watchdog turns a lost wake-up into a
//! failure instead of a hang), `cancel()` returning true matches a cancelled
//! delay one for one, nothing is left pending or in the slab, and after a
//! burst of a million timers the heap is back within 4 MiB of where it was
//! but for the burst's due words, 8 bytes a timer, which a shard keeps
//! (`workload::heap_bound`; the burst itself allocates a dozen times that
//! much). The heap is counted by the
//! workload's global allocator: bytes allocated and not freed, which is what
//! the wheel gives back, so this is the only test in this file (a test
//! beside it would add its own allocations). Resident memory is printed,
//! not checked: it says how the allocator keeps freed memory (glibc may
//! keep a freed block at the top of an arena), not what the wheel gave
//! back.

use std::alloc::System;
use std::time::Duration;

use hashwheel_bench::stress::{self as workload, Heap};

/// Every allocation of the process goes through this counter (see
/// [`workload::Config::heap`]).
#[global_allocator]
static HEAP: Heap = Heap::new(System, usize::MAX);

#[test]
fn stress_mixed_operations_then_a_million_timer_burst() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    let cfg = workload::Config {
        tasks: 1_000,
        ops_per_task: 1_000,
        burst: 1_000_000,
        heap: || HEAP.allocated() as u64,
    };
    let r = workload::run(&rt, cfg, Duration::from_secs(300));
    println!(
        "{} ops, {} timers fired, {} delays cancelled, latest {:?} after its deadline (not asserted), \
         heap {} -> {} -> {} KiB, RSS {} -> {} -> {} KiB",
        r.ops,
        r.timers_fired,
        r.cancels,
        r.max_late,
        r.heap_before_burst >> 10,
        r.heap_at_burst >> 10,
        r.heap_after_burst >> 10,
        r.rss_before_burst >> 10,
        r.rss_at_burst >> 10,
        r.rss_after_burst >> 10
    );
    assert_eq!(r.ops, cfg.tasks * cfg.ops_per_task);
    workload::check(&r, workload::heap_bound(&cfg));
}
