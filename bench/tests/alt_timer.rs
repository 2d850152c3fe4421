//! hashwheel on a runtime that runs tokio's alternative timer
//! (`Builder::enable_alt_timer`, `--cfg tokio_unstable`): its driver sleeps
//! on a tokio timer of that flavor, which panics when a timer is made on a
//! runtime that is shutting down. Dropping such a runtime with timers
//! pending must end cleanly, with every timer completed.
#![cfg(tokio_unstable)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn alt_runtime(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_alt_timer()
        .build()
        .expect("a runtime with the alternative timer")
}

/// Timers due soon and far, on the default wheel and on a held one, and
/// the runtime dropped while they wait: no panic, and each waiting task is
/// either completed or dropped with its runtime.
#[test]
fn dropping_the_runtime_with_timers_pending_ends_cleanly() {
    for workers in [1, 2] {
        for round in 0..20u64 {
            let rt = alt_runtime(workers);
            let done = Arc::new(AtomicUsize::new(0));
            let wheel = rt.block_on(async { hashwheel::Wheel::new() });
            for i in 0..64u64 {
                let done = done.clone();
                let wheel = wheel.clone();
                rt.spawn(async move {
                    // Some due while the runtime shuts down, some far away.
                    let d = Duration::from_millis(if i % 2 == 0 { 1 + i % 5 } else { 60_000 });
                    hashwheel::sleep(d).await;
                    wheel.sleep(d).await;
                    done.fetch_add(1, Ordering::Relaxed);
                });
            }
            // Let the drivers arm their tokio sleeps, then drop the runtime,
            // at a moment that moves with the round.
            std::thread::sleep(Duration::from_micros(200 * round));
            drop(rt);
            assert!(wheel.is_shutdown(), "the runtime's end shut the wheel down");
        }
    }
}

/// The same with the runtime shut down in the background.
#[test]
fn shutdown_background_with_timers_pending_ends_cleanly() {
    let rt = alt_runtime(2);
    rt.block_on(async {
        for _ in 0..256 {
            tokio::spawn(async {
                hashwheel::sleep(Duration::from_millis(2)).await;
                hashwheel::sleep(Duration::from_secs(60)).await;
            });
        }
        tokio::time::sleep(Duration::from_millis(3)).await;
    });
    rt.shutdown_background();
}

/// Under the alternative timer the driver re-arms from its task, not from
/// tokio's wake-up: timers still fire, never before their deadline, on
/// every worker.
#[test]
fn timers_fire_never_early() {
    let rt = alt_runtime(2);
    rt.block_on(async {
        let mut tasks = Vec::new();
        for i in 0..200u64 {
            tasks.push(tokio::spawn(async move {
                let d = Duration::from_millis(1 + i % 20);
                let start = tokio::time::Instant::now();
                hashwheel::sleep(d).await;
                assert!(
                    start.elapsed() >= d,
                    "fired early: {:?} < {d:?}",
                    start.elapsed()
                );
                let deadline = tokio::time::Instant::now() + d;
                hashwheel::timeout_at(deadline, std::future::pending::<()>())
                    .await
                    .unwrap_err();
                assert!(tokio::time::Instant::now() >= deadline);
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
    });
}
