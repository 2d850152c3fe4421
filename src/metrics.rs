//! A snapshot of a wheel's counters.

use std::time::Duration;

/// Counters of a [`Wheel`](crate::Wheel), read by
/// [`Wheel::metrics`](crate::Wheel::metrics).
///
/// Gauges are named `num_*`; counters that only grow, `*_count`.
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
    pub(crate) max_driver_lag: Duration,
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

    /// The longest the driver has woken after the tick it planned to wake
    /// at: how far a stalled runtime made timers late.
    pub fn max_driver_lag(&self) -> Duration {
        self.max_driver_lag
    }
}
