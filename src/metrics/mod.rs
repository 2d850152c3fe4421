//! A snapshot of a wheel's counters.

use std::fmt;
use std::ops::Range;
use std::time::Duration;

use crate::engine::counts::Counts;
use crate::engine::lag::{self, LAG_BUCKETS};

/// Counters of a [`Wheel`](crate::Wheel), read by
/// [`Wheel::metrics`](crate::Wheel::metrics).
///
/// Gauges are named `num_*`; counters that only grow, `*_count`. With the
/// `metrics` feature the wheel also publishes these numbers through the
/// `metrics` facade (see [`Builder::name`](crate::Builder::name)).
///
/// A wheel's shards are read one after another, each at its own moment, as
/// tokio sums its workers' metrics: while timers come and go on several
/// threads, a gauge can count a timer that left one shard and another that
/// entered the next (so `num_pending` may read a few over
/// [`max_timers`](crate::Builder::max_timers) at the bound). On a wheel
/// whose timers all stay put, every number is exact.
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
#[derive(Clone, Copy, Default)]
pub struct Metrics(pub(crate) Counts);

// By hand, not derived: a derived `Debug` would print the wheel's inner
// counts, some of which no getter shows. This prints each getter without an
// argument under its own name, and nothing else; the histogram as one map
// from each non-empty bucket's range to its count (the last bucket, which
// runs to `Duration::MAX`, as open-ended), and the quantiles a dashboard
// shows.
impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics")
            .field("num_pending", &self.num_pending())
            .field("num_entries", &self.num_entries())
            .field("num_shards", &self.num_shards())
            .field("fired_count", &self.fired_count())
            .field("cancelled_count", &self.cancelled_count())
            .field("registered_count", &self.registered_count())
            .field("refused_count", &self.refused_count())
            .field("driver_wakeups_count", &self.driver_wakeups_count())
            .field("waker_panic_count", &self.waker_panic_count())
            .field("driver_panic_count", &self.driver_panic_count())
            .field("max_driver_lag", &self.max_driver_lag())
            .field("driver_lag_histogram", &LagHistogram(&self.0.lag_buckets))
            .field("driver_lag_quantile(0.5)", &self.driver_lag_quantile(0.5))
            .field("driver_lag_quantile(0.99)", &self.driver_lag_quantile(0.99))
            .finish()
    }
}

/// A [`Metrics`]' lag histogram, for its `Debug`: the non-empty buckets,
/// each range as [`Metrics::driver_lag_histogram_bucket_range`] gives it.
struct LagHistogram<'a>(&'a [u64; LAG_BUCKETS]);

impl fmt::Debug for LagHistogram<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for (i, count) in self.0.iter().enumerate().filter(|(_, &n)| n != 0) {
            let Range { start, end } = lag::bucket_range(i);
            match end {
                Duration::MAX => map.entry(&(start..), count),
                _ => map.entry(&(start..end), count),
            };
        }
        map.finish()
    }
}

impl Metrics {
    /// Timers in the wheel that have not fired yet. A timer counts from its
    /// first poll, when it registers, until it fires or is dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let sleep = tokio::spawn(wheel.sleep(Duration::from_secs(1)));
    /// assert_eq!(wheel.metrics().num_pending(), 0); // not polled yet
    /// tokio::task::yield_now().await; // the task polls it: it registers
    /// assert_eq!(wheel.metrics().num_pending(), 1);
    /// sleep.await.unwrap();
    /// assert_eq!(wheel.metrics().num_pending(), 0);
    /// # }
    /// ```
    pub fn num_pending(&self) -> usize {
        self.0.pending
    }

    /// Timers the wheel holds: the pending ones plus fired ones whose result
    /// has not been taken yet, such as a fired [`Delay`](crate::Delay) that
    /// has not been polled or dropped since.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// use std::future::Future;
    /// use std::pin::Pin;
    /// use std::task::Poll;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let mut delay = wheel.delay(Duration::from_millis(10));
    /// // Poll it once, so that it registers.
    /// std::future::poll_fn(|cx| {
    ///     assert!(Pin::new(&mut delay).poll(cx).is_pending());
    ///     Poll::Ready(())
    /// })
    /// .await;
    /// tokio::time::advance(Duration::from_millis(20)).await;
    /// // It has fired, but nobody has polled it since.
    /// let m = wheel.metrics();
    /// assert_eq!((m.num_pending(), m.num_entries()), (0, 1));
    /// drop(delay);
    /// assert_eq!(wheel.metrics().num_entries(), 0);
    /// # }
    /// ```
    pub fn num_entries(&self) -> usize {
        self.0.entries
    }

    /// How many worker threads can make timers on the wheel at once without
    /// waiting on each other: the wheel's [`shards`](crate::Builder::shards)
    /// setting.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::builder().shards(2).build().unwrap();
    /// assert_eq!(wheel.metrics().num_shards(), 2);
    /// # let _ = Duration::ZERO;
    /// # }
    /// ```
    pub fn num_shards(&self) -> usize {
        self.0.shards
    }

    /// Timers the driver has fired.
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
    /// wheel.delay(Duration::from_millis(5)).await.unwrap();
    /// assert_eq!(wheel.metrics().fired_count(), 2);
    /// # }
    /// ```
    pub fn fired_count(&self) -> u64 {
        self.0.fired
    }

    /// Timers removed before they fired: dropped, cancelled through a handle,
    /// or moved to a deadline that had already passed.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let delay = wheel.delay(Duration::from_secs(60));
    /// let handle = delay.handle();
    /// let waiter = tokio::spawn(delay);
    /// tokio::task::yield_now().await; // the task polls it: it registers
    /// handle.cancel();
    /// assert!(waiter.await.unwrap().unwrap_err().is_cancelled());
    /// let m = wheel.metrics();
    /// assert_eq!((m.cancelled_count(), m.fired_count()), (1, 0));
    /// # }
    /// ```
    pub fn cancelled_count(&self) -> u64 {
        self.0.cancelled
    }

    /// Times the wheel's driver has woken up to fire timers or to note a new
    /// earliest deadline. An idle wheel does not wake.
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
    /// let woken = wheel.metrics().driver_wakeups_count();
    /// assert!(woken >= 1);
    /// // An hour with no timers: the driver sleeps through it.
    /// tokio::time::sleep(Duration::from_secs(3600)).await;
    /// assert_eq!(wheel.metrics().driver_wakeups_count(), woken);
    /// # }
    /// ```
    pub fn driver_wakeups_count(&self) -> u64 {
        self.0.wakeups
    }

    /// Wakers that panicked when the driver woke them. The driver goes on.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// use std::future::Future;
    /// use std::pin::Pin;
    /// use std::sync::Arc;
    /// use std::task::{Context, Wake, Waker};
    ///
    /// struct Panics;
    /// impl Wake for Panics {
    ///     fn wake(self: Arc<Self>) {
    ///         panic!("a broken waker");
    ///     }
    /// }
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let waker = Waker::from(Arc::new(Panics));
    /// let mut sleep = wheel.sleep(Duration::from_millis(10));
    /// assert!(Pin::new(&mut sleep).poll(&mut Context::from_waker(&waker)).is_pending());
    /// tokio::time::advance(Duration::from_millis(20)).await;
    /// assert_eq!(wheel.metrics().waker_panic_count(), 1);
    /// // The wheel still works.
    /// wheel.sleep(Duration::from_millis(10)).await;
    /// # }
    /// ```
    pub fn waker_panic_count(&self) -> u64 {
        self.0.waker_panics
    }

    /// Times the timer driver itself panicked (a bug in this crate, or a
    /// `metrics` recorder that panicked). Each time it starts again at
    /// once, and every timer keeps its deadline: none fires early, none is
    /// lost. With the `tracing` feature each is also an ERROR event, and
    /// the `metrics` feature publishes the count as
    /// `hashwheel_driver_panics_total`. (Checked with an injected fault by
    /// the driver's own unit tests.)
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
    /// assert_eq!(wheel.metrics().driver_panic_count(), 0); // a healthy driver
    /// # }
    /// ```
    pub fn driver_panic_count(&self) -> u64 {
        self.0.driver_panics
    }

    /// The longest the wheel has fired timers after the end of the earliest
    /// tick among them (or, for a timer made after its tick had ended, after
    /// the timer was made): how far a stalled runtime made timers late.
    /// Every firing counts: the first, one after an idle period, one for a
    /// new earliest timer.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// wheel.sleep(Duration::from_millis(10)).await;
    /// assert_eq!(wheel.metrics().max_driver_lag(), Duration::ZERO); // on time
    ///
    /// let sleep = tokio::spawn(wheel.sleep(Duration::from_millis(10)));
    /// tokio::task::yield_now().await; // it registers for 10 ms from now
    /// // Nothing runs until 35 ms from now: the driver runs 25 ms late.
    /// tokio::time::advance(Duration::from_millis(35)).await;
    /// sleep.await.unwrap();
    /// assert_eq!(wheel.metrics().max_driver_lag(), Duration::from_millis(25));
    /// # }
    /// ```
    pub fn max_driver_lag(&self) -> Duration {
        self.0.max_lag
    }

    /// Timers the wheel has taken: every registration of a sleep, timeout
    /// or delay (a timer registers on its first poll), and again after a
    /// reset that has to register it anew. Each is, at any time, pending,
    /// fired, cancelled, or ended by a shutdown.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let unpolled = wheel.sleep(Duration::from_secs(1));
    /// wheel.sleep(Duration::from_millis(5)).await;
    /// drop(unpolled); // never polled: it never registered
    /// let m = wheel.metrics();
    /// assert_eq!((m.registered_count(), m.fired_count()), (1, 1));
    /// # }
    /// ```
    pub fn registered_count(&self) -> u64 {
        self.0.registered
    }

    /// Timers refused because [`max_timers`](crate::Builder::max_timers)
    /// timers were alive already: each `try_` constructor that returned an
    /// error for which [`is_at_capacity`](crate::error::Error::is_at_capacity)
    /// holds, and each plain constructor that panicked for it.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::builder().max_timers(1).build().unwrap();
    /// let _held = wheel.sleep(Duration::from_secs(1));
    /// assert!(wheel.try_delay(Duration::from_secs(1)).is_err());
    /// assert!(wheel.try_sleep(Duration::from_secs(1)).is_err());
    /// assert_eq!(wheel.metrics().refused_count(), 2);
    /// # }
    /// ```
    pub fn refused_count(&self) -> u64 {
        self.0.refused
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
    ///
    /// ```should_panic
    /// let m = hashwheel::Metrics::default();
    /// m.driver_lag_histogram_bucket_range(m.driver_lag_histogram_num_buckets());
    /// ```
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let m = hashwheel::Metrics::default();
    /// let us = Duration::from_micros;
    /// assert_eq!(m.driver_lag_histogram_bucket_range(0), Duration::ZERO..us(1));
    /// assert_eq!(m.driver_lag_histogram_bucket_range(1), us(1)..us(2));
    /// assert_eq!(m.driver_lag_histogram_bucket_range(4), us(8)..us(16));
    /// let last = m.driver_lag_histogram_num_buckets() - 1;
    /// assert_eq!(m.driver_lag_histogram_bucket_range(last).end, Duration::MAX);
    /// ```
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
    ///
    /// ```should_panic
    /// let m = hashwheel::Metrics::default();
    /// m.driver_lag_histogram_bucket_count(m.driver_lag_histogram_num_buckets());
    /// ```
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// wheel.sleep(Duration::from_millis(5)).await; // fired on time
    /// let m = wheel.metrics();
    /// // A pass on time has a lag under 1 µs: bucket 0.
    /// assert_eq!(m.driver_lag_histogram_bucket_count(0), 1);
    /// let passes: u64 = (0..m.driver_lag_histogram_num_buckets())
    ///     .map(|i| m.driver_lag_histogram_bucket_count(i))
    ///     .sum();
    /// assert_eq!(passes, 1);
    /// # }
    /// ```
    #[track_caller]
    pub fn driver_lag_histogram_bucket_count(&self, bucket: usize) -> u64 {
        // The range's check, and its panic, for the bucket.
        lag::bucket_range(bucket);
        self.0.lag_buckets[bucket]
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
    ///
    /// ```should_panic
    /// hashwheel::Metrics::default().driver_lag_quantile(1.5);
    /// ```
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// assert_eq!(wheel.metrics().driver_lag_quantile(0.99), None); // nothing measured yet
    ///
    /// wheel.sleep(Duration::from_millis(5)).await; // fired on time
    /// let p99 = wheel.metrics().driver_lag_quantile(0.99).unwrap();
    /// assert!(p99 <= Duration::from_micros(1));
    /// # }
    /// ```
    #[track_caller]
    pub fn driver_lag_quantile(&self, q: f64) -> Option<Duration> {
        assert!((0.0..=1.0).contains(&q), "quantile {q} is not within 0..=1");
        lag::quantile(&self.0.lag_buckets, self.0.max_lag, q)
    }
}

#[cfg(test)]
mod tests;
