//! One surface over the two `DelayQueue`s, hashwheel's and tokio-util's,
//! so that each queue workload is written once.

use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::Instant;

/// What the queue workloads do with a `DelayQueue<u32>`.
pub trait Queue: Send + 'static {
    type Key: Send + 'static;
    fn insert(&mut self, v: u32, d: Duration) -> Self::Key;
    fn insert_at(&mut self, v: u32, at: Instant) -> Self::Key;
    fn reset_at(&mut self, key: &Self::Key, at: Instant);
    fn reset(&mut self, key: &Self::Key, d: Duration);
    fn remove(&mut self, key: &Self::Key) -> u32;
    /// The next expired value, as `poll_expired` gives it.
    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<u32>>;
}

macro_rules! queue {
    ($t:ty, $key:ty) => {
        impl Queue for $t {
            type Key = $key;
            fn insert(&mut self, v: u32, d: Duration) -> Self::Key {
                <$t>::insert(self, v, d)
            }
            fn insert_at(&mut self, v: u32, at: Instant) -> Self::Key {
                <$t>::insert_at(self, v, at)
            }
            fn reset_at(&mut self, key: &Self::Key, at: Instant) {
                <$t>::reset_at(self, key, at)
            }
            fn reset(&mut self, key: &Self::Key, d: Duration) {
                <$t>::reset(self, key, d)
            }
            fn remove(&mut self, key: &Self::Key) -> u32 {
                <$t>::remove(self, key).into_inner()
            }
            fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<u32>> {
                <$t>::poll_expired(self, cx).map(|e| e.map(|e| e.into_inner()))
            }
        }
    };
}

queue!(
    tokio_util::time::DelayQueue<u32>,
    tokio_util::time::delay_queue::Key
);
queue!(hashwheel::DelayQueue<u32>, hashwheel::delay_queue::Key);

/// Waits for the next expired value.
pub async fn next<Q: Queue>(q: &mut Q) -> Option<u32> {
    std::future::poll_fn(|cx| q.poll_next(cx)).await
}
