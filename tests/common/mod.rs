//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::time::Duration;

/// Lets spawned tasks run: on a current-thread runtime each yield lets
/// every task woken so far run once. (Not needed for the wheel's own
/// timers: they are woken by the time `tokio::time::advance` returns.)
pub async fn settle() {
    for _ in 0..4 {
        tokio::task::yield_now().await;
    }
}

/// `tokio::time::advance`: when it returns, every timer due has been woken,
/// as with tokio's own timer.
pub async fn advance(d: Duration) {
    tokio::time::advance(d).await;
}

/// A current-thread runtime with its clock paused, for a test that must
/// do something outside a runtime first.
pub fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A sleep of `due` on `wheel`, registered and planned for by the driver,
/// then `jump` of the paused clock at once: the driver wakes `jump - due`
/// after the tick it planned (on time when they are equal), and the sleep
/// completes.
pub async fn late_by(wheel: &hashwheel::Wheel, due: Duration, jump: Duration) {
    let mut sleep = tokio_test::task::spawn(wheel.sleep(due));
    tokio_test::assert_pending!(sleep.poll());
    settle().await;
    advance(jump).await;
    tokio_test::assert_ready!(sleep.poll());
}

/// How many cases a proptest runs: `PROPTEST_CASES` from the environment,
/// else `default`.
pub fn proptest_cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}
