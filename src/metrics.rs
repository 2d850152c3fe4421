//! A snapshot of a wheel's counters.

use std::ops::Range;
use std::time::Duration;

use crate::engine::lag::{self, LAG_BUCKETS};

/// Counters of a [`Wheel`](crate::Wheel), read by
/// [`Wheel::metrics`](crate::Wheel::metrics).
///
/// Gauges are named `num_*`; counters that only grow, `*_count`. With the
/// `metrics` feature the wheel also publishes these numbers through the
/// `metrics` facade (see [`Builder::name`](crate::Builder::name)).
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
///
/// let wheel = hashwheel::Wheel::new();
/// wheel.sleep(Duration::from_millis(5)).await;
/// let m = wheel.metrics();
/// assert_eq!(m.num_pending(), 0);
/// assert_eq!(m.fired_count(), 1);
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Metrics {
    pub(crate) num_pending: usize,
    pub(crate) num_entries: usize,
    pub(crate) num_shards: usize,
    pub(crate) fired_count: u64,
    pub(crate) cancelled_count: u64,
    pub(crate) driver_wakeups_count: u64,
    pub(crate) waker_panic_count: u64,
    pub(crate) driver_panic_count: u64,
    pub(crate) max_driver_lag: Duration,
    pub(crate) registered_count: u64,
    pub(crate) rejected_count: u64,
    pub(crate) driver_lag_buckets: [u64; LAG_BUCKETS],
}

impl Metrics {
    /// Timers in the wheel that have not fired yet.
    pub fn num_pending(&self) -> usize {
        self.num_pending
    }

    /// Entries the wheel's slabs hold: pending timers plus those that have
    /// fired but whose future has not yet been polled or dropped.
    pub fn num_entries(&self) -> usize {
        self.num_entries
    }

    /// The number of shards.
    pub fn num_shards(&self) -> usize {
        self.num_shards
    }

    /// Timers the driver has fired.
    pub fn fired_count(&self) -> u64 {
        self.fired_count
    }

    /// Timers removed before they fired: dropped, cancelled through a handle,
    /// or moved to a deadline that had already passed.
    pub fn cancelled_count(&self) -> u64 {
        self.cancelled_count
    }

    /// Times the driver has woken up: its alarm, run by tokio's timer at a
    /// tick with work, or its task, run for a registration that needs an
    /// earlier tick or a batch too big for the alarm. An idle wheel does not
    /// wake.
    pub fn driver_wakeups_count(&self) -> u64 {
        self.driver_wakeups_count
    }

    /// Wakers that panicked when the driver woke them. The driver goes on.
    pub fn waker_panic_count(&self) -> u64 {
        self.waker_panic_count
    }

    /// Times the timer driver itself panicked (a bug in this crate, or a
    /// `metrics` recorder that panicked). Each time it starts again at
    /// once, and every timer keeps its deadline: none fires early, none is
    /// lost. With the `tracing` feature each is also an ERROR event, and
    /// the `metrics` feature publishes the count as
    /// `hashwheel_driver_panics_total`. (Checked with an injected fault by
    /// the driver's own unit tests.)
    pub fn driver_panic_count(&self) -> u64 {
        self.driver_panic_count
    }

    /// The longest a driver pass that fired timers ran after the end of the
    /// earliest tick it fired (or, for a timer made after its tick had
    /// ended, after the timer was made): how far a stalled runtime made
    /// timers late.
    /// Every such pass counts, whether tokio's timer or the driver's task
    /// ran it (its first, one after an idle period, one for a new earliest
    /// timer); checked by `tests/wheel_metrics.rs` and
    /// `tests/stall_events.rs`.
    pub fn max_driver_lag(&self) -> Duration {
        self.max_driver_lag
    }

    /// Timers the wheel has taken: every registration of a sleep, timeout
    /// or delay (a timer registers on its first poll), and again after a
    /// reset that has to register it anew. Each is, at any time, pending,
    /// fired, cancelled, or ended by a shutdown.
    pub fn registered_count(&self) -> u64 {
        self.registered_count
    }

    /// Timers refused because [`max_pending`](crate::Builder::max_pending)
    /// timers were alive already: each `try_` constructor that returned an
    /// error for which [`is_at_capacity`](crate::error::Error::is_at_capacity)
    /// holds, and each plain constructor that panicked for it.
    pub fn rejected_count(&self) -> u64 {
        self.rejected_count
    }

    /// The number of buckets of the driver's lag histogram.
    ///
    /// The histogram counts, for each driver pass that fired timers, how
    /// long after the end of the earliest tick it fired that pass ran: what
    /// [`max_driver_lag`](Metrics::max_driver_lag) is the largest of. Its
    /// buckets have fixed power-of-two bounds: bucket 0 holds lags under
    /// 1 µs, bucket `i` lags from 2^(i-1) µs up to 2^i µs, and the last one
    /// everything longer.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let sleep = tokio::spawn(wheel.sleep(Duration::from_millis(10)));
    /// // The sleep registers; the driver plans to wake at 10 ms.
    /// tokio::time::sleep(Duration::from_millis(1)).await;
    /// // Nothing runs until 50 ms: the driver runs 40 ms late.
    /// tokio::time::advance(Duration::from_millis(49)).await;
    /// sleep.await.unwrap();
    ///
    /// let m = wheel.metrics();
    /// assert_eq!(m.max_driver_lag(), Duration::from_millis(40));
    /// let late: u64 = (0..m.driver_lag_histogram_num_buckets())
    ///     .filter(|&i| m.driver_lag_histogram_bucket_range(i).start >= Duration::from_millis(10))
    ///     .map(|i| m.driver_lag_histogram_bucket_count(i))
    ///     .sum();
    /// assert_eq!(late, 1);
    /// assert_eq!(m.driver_lag_quantile(1.0), Some(Duration::from_millis(40)));
    /// # }
    /// ```
    pub fn driver_lag_histogram_num_buckets(&self) -> usize {
        LAG_BUCKETS
    }

    /// The lags bucket `bucket` of the driver's lag histogram counts; the
    /// last bucket's range ends at `Duration::MAX`.
    ///
    /// # Panics
    ///
    /// When `bucket` is not below
    /// [`driver_lag_histogram_num_buckets`](Metrics::driver_lag_histogram_num_buckets).
    #[track_caller]
    pub fn driver_lag_histogram_bucket_range(&self, bucket: usize) -> Range<Duration> {
        lag::bucket_range(bucket)
    }

    /// How many driver passes ran with a lag in bucket `bucket`'s range.
    ///
    /// # Panics
    ///
    /// When `bucket` is not below
    /// [`driver_lag_histogram_num_buckets`](Metrics::driver_lag_histogram_num_buckets).
    #[track_caller]
    pub fn driver_lag_histogram_bucket_count(&self, bucket: usize) -> u64 {
        assert!(
            bucket < LAG_BUCKETS,
            "lag histogram bucket {bucket} out of range (there are {LAG_BUCKETS})"
        );
        self.driver_lag_buckets[bucket]
    }

    /// An upper bound of the `q`-quantile of the driver's lag (`0.99`: the
    /// lag that 99 % of the passes ran within): the end of the histogram
    /// bucket that holds it, or [`max_driver_lag`](Metrics::max_driver_lag)
    /// when that is less. At most twice the true quantile, or 1 µs when it
    /// is under 1 µs. `None` before the driver's first measured pass.
    ///
    /// # Panics
    ///
    /// When `q` is not within `0.0..=1.0`.
    #[track_caller]
    pub fn driver_lag_quantile(&self, q: f64) -> Option<Duration> {
        assert!((0.0..=1.0).contains(&q), "quantile {q} is not within 0..=1");
        lag::quantile(&self.driver_lag_buckets, self.max_driver_lag, q)
    }
}
