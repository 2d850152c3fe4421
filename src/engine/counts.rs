//! A wheel's counts, in one type: each shard keeps those of its timers in
//! one, the driver its own in another (`Core::counts`), and a snapshot
//! ([`Shards::counts`](crate::engine::shards::Shards::counts)) adds them up
//! for `Wheel::metrics` and the metrics facade. A new counter is a field
//! here, the line that counts it, and a getter on `Metrics` (and a row of
//! `publish`'s table, if the facade publishes it).

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
    /// Adds `other` to these counts (`max_lag`: the larger).
    pub(crate) fn add(&mut self, other: &Counts) {
        self.pending += other.pending;
        self.entries += other.entries;
        self.shards += other.shards;
        self.fired += other.fired;
        self.cancelled += other.cancelled;
        self.registered += other.registered;
        self.drained += other.drained;
        self.wakeups += other.wakeups;
        self.waker_panics += other.waker_panics;
        self.driver_panics += other.driver_panics;
        self.max_lag = self.max_lag.max(other.max_lag);
        self.refused += other.refused;
        for (sum, n) in self.lag_buckets.iter_mut().zip(other.lag_buckets) {
            *sum += n;
        }
    }

    /// Counts a driver pass that ran `lag` after the end of its earliest
    /// due tick.
    pub(crate) fn record_lag(&mut self, lag: Duration) {
        self.max_lag = self.max_lag.max(lag);
        self.lag_buckets[bucket_of(lag)] += 1;
    }
}
