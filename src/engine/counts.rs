//! A wheel's counts, in one type: each shard adds its own to it
//! ([`Shard::add_counts`](crate::engine::shard::Shard::add_counts)), the
//! driver its counters ([`Stats::add_counts`](crate::engine::core::Stats::add_counts)),
//! and `Wheel::metrics` wraps the sum. A new counter is a field here, the
//! line that fills it in where it is kept, and a getter on `Metrics`.

use std::time::Duration;

use crate::engine::lag::LAG_BUCKETS;

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
    /// Timers refused at `max_pending`.
    pub(crate) rejected: u64,
    /// The driver's lag, by bucket (see `engine::lag`).
    pub(crate) lag_buckets: [u64; LAG_BUCKETS],
}
