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

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// How many cases a proptest runs: `PROPTEST_CASES` from the environment,
/// else `default`.
pub fn proptest_cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}
