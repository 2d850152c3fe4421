//! A wheel's counts, in one type: the driver keeps its own in one
//! (`Core::counts`), each shard those of its timers (fired, cancelled,
//! drained) in another, and a snapshot
//! ([`Shards::counts`](crate::engine::shards::Shards::counts)) starts from
//! the driver's and has each shard add its own, with its pending timers and
//! entries, for `Wheel::metrics` and the metrics facade. A new counter is a
//! field here, the line that counts it (and, for a shard's, the line of
//! `Shard::add_counts` that adds it), and a getter on `Metrics` (and a row
//! of `publish`'s table, if the facade publishes it).

use std::time::Duration;

use crate::engine::lag::{bucket_of, LAG_BUCKETS};

/// What a wheel has counted, at one moment (see the module docs).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Timers in the wheel that have not fired yet.
    pub(crate) pending: usize,
    /// Entries the slabs hold: pending timers plus fired ones not yet
    /// polled or dropped.
    pub(crate) entries: usize,
    pub(crate) shards: usize,
    pub(crate) fired: u64,
    pub(crate) cancelled: u64,
    /// Entries ever registered: every one is pending, fired, cancelled or
    /// drained by a shutdown, so this is their sum, and registering counts
    /// nothing.
    pub(crate) registered: u64,
    /// Entries that were pending when their shard shut down.
    pub(crate) drained: u64,
    pub(crate) wakeups: u64,
    pub(crate) waker_panics: u64,
    /// Driver passes that panicked (a bug): each restarted the driver.
    pub(crate) driver_panics: u64,
    pub(crate) max_lag: Duration,
    /// Timers refused at `max_timers`.
    pub(crate) refused: u64,
    /// The driver's lag, by bucket (see `engine::lag`).
    pub(crate) lag_buckets: [u64; LAG_BUCKETS],
}

impl Counts {
    /// Counts a driver pass that ran `lag` after the end of its earliest
    /// due tick.
    pub(crate) fn record_lag(&mut self, lag: Duration) {
        self.max_lag = self.max_lag.max(lag);
        self.lag_buckets[bucket_of(lag)] += 1;
    }
}
