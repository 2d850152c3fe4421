//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::time::Duration;

/// Lets the wheel's driver task run after `tokio::time::advance`: on a
/// current-thread runtime each yield lets every task woken so far run once.
pub async fn settle() {
    for _ in 0..4 {
        tokio::task::yield_now().await;
    }
}

/// Advances the paused clock by `d` and lets the driver catch up.
pub async fn advance(d: Duration) {
    tokio::time::advance(d).await;
    settle().await;
}

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}
