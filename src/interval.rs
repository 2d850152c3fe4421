use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_core::Stream;
use tokio::time::{Instant, MissedTickBehavior};

use crate::engine::clock::{instant_after, later, Reached};
use crate::engine::shards::ShardRef;
use crate::engine::tokio_reliance::sleep_duration;
use crate::error::Error;
use crate::sleep::Sleep;
use crate::wheel::{claim_default, try_claim_default};

/// How late a tick may be before it counts as missed (tokio's threshold).
const MISSED_AFTER: Duration = Duration::from_millis(5);

/// Ticks at a fixed period, made by [`Wheel::interval`](crate::Wheel::interval)
/// or [`Wheel::interval_at`](crate::Wheel::interval_at): tokio's `Interval` on
/// the wheel.
///
/// The first tick completes at once (or at the start given to
/// `interval_at`); then every `period`. Ticks that were missed because the
/// task was busy are handled by the [`MissedTickBehavior`], with tokio's
/// meaning (`Burst` by default). It is an [`Unpin`] `Stream` of the
/// instants at which each tick was scheduled.
///
/// It takes part in tokio's [cooperative scheduling](tokio::task::coop) as
/// tokio's `Interval` does: each tick spends a unit of the task's budget,
/// so a burst of missed ticks lets the runtime's other tasks run in between.
/// Catching up, it yields when the budget is spent (after 128 ticks with
/// tokio's budget). On the real clock tokio's `Interval` also yields once
/// sooner, after the missed ticks that its driver's last pass before the
/// stall had covered: the next ones wait for that driver though their
/// deadlines have passed, where a passed deadline completes here at once.
///
/// # Cancel safety
///
/// [`tick`](Interval::tick) is cancel safe: if it is dropped before it
/// completes (in a `select!` whose other branch won), no tick is lost.
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use tokio::time::Instant;
///
/// let wheel = hashwheel::Wheel::new();
/// let start = Instant::now();
/// let mut interval = wheel.interval(Duration::from_millis(10));
/// interval.tick().await; // at once
/// interval.tick().await;
/// interval.tick().await;
/// assert!(start.elapsed() >= Duration::from_millis(20));
/// # }
/// ```
#[derive(Debug)]
pub struct Interval {
    sleep: Sleep,
    period: Duration,
    missed: MissedTickBehavior,
}

impl Interval {
    /// An interval of a [`checked`] `period` on the wheel of `shard`, whose
    /// first tick is at `start`.
    pub(crate) fn new(period: Duration, shard: ShardRef, start: Instant) -> Interval {
        Interval {
            sleep: Sleep::until(shard, start),
            period,
            missed: MissedTickBehavior::Burst,
        }
    }

    /// Completes at the next tick and returns the instant it was scheduled
    /// for.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    /// use tokio::time::Instant;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let start = Instant::now();
    /// let mut interval = wheel.interval(Duration::from_millis(10));
    /// assert_eq!(interval.tick().await, start); // the first tick is at once
    /// assert_eq!(interval.tick().await, start + Duration::from_millis(10));
    /// assert!(Instant::now() >= start + Duration::from_millis(10));
    /// # }
    /// ```
    pub async fn tick(&mut self) -> Instant {
        std::future::poll_fn(|cx| self.poll_tick(cx)).await
    }

    /// Polls for the next tick; the waker of `cx` is woken when it comes.
    ///
    /// `Ready` holds the instant the tick was scheduled for, as
    /// [`tick`](Interval::tick) returns it.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::future::poll_fn;
    /// use std::task::Poll;
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let mut interval = wheel.interval(Duration::from_millis(10));
    /// let first = poll_fn(|cx| interval.poll_tick(cx)).await;
    /// // The next tick is not due yet: the poll is pending.
    /// let pending = poll_fn(|cx| Poll::Ready(interval.poll_tick(cx).is_pending())).await;
    /// assert!(pending);
    /// let second = poll_fn(|cx| interval.poll_tick(cx)).await;
    /// assert_eq!(second, first + Duration::from_millis(10));
    /// # }
    /// ```
    pub fn poll_tick(&mut self, cx: &mut Context<'_>) -> Poll<Instant> {
        if self.sleep.poll_sleep(cx).is_pending() {
            return Poll::Pending;
        }
        let scheduled = self.sleep.deadline();
        let now = Instant::now();
        let late = now.saturating_duration_since(scheduled);
        // A tick more than the threshold late was missed: the behavior
        // says what comes next. On time, or with `Burst`, one period on.
        let next = match self.missed {
            MissedTickBehavior::Delay if late > MISSED_AFTER => later(now, self.period),
            MissedTickBehavior::Skip if late > MISSED_AFTER => {
                let into = late.as_nanos() % self.period.as_nanos();
                let into = u64::try_from(into).expect("below the period");
                later(now, self.period - Duration::from_nanos(into))
            }
            _ => later(scheduled, self.period),
        };
        self.sleep.reset_known(next, Reached::by(next, now));
        Poll::Ready(scheduled)
    }

    /// Makes the next tick come one period from now.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    /// use tokio::time::Instant;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let mut interval = wheel.interval(Duration::from_millis(10));
    /// interval.tick().await;
    /// tokio::time::advance(Duration::from_millis(4)).await;
    /// interval.reset(); // next tick one period from now
    /// let start = Instant::now();
    /// interval.tick().await;
    /// assert!(start.elapsed() >= Duration::from_millis(10));
    /// # }
    /// ```
    pub fn reset(&mut self) {
        self.reset_at(instant_after(self.period));
    }

    /// Makes the next tick come at once.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    /// use tokio::time::Instant;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let mut interval = wheel.interval(Duration::from_secs(60));
    /// interval.tick().await;
    /// interval.reset_immediately();
    /// let start = Instant::now();
    /// interval.tick().await; // not a minute later
    /// assert!(start.elapsed() < Duration::from_secs(1));
    /// # }
    /// ```
    pub fn reset_immediately(&mut self) {
        self.sleep.reset_known(Instant::now(), Reached::Yes);
    }

    /// Makes the next tick come `after` from now.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    /// use tokio::time::Instant;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let mut interval = wheel.interval(Duration::from_millis(10));
    /// interval.tick().await;
    /// let start = Instant::now();
    /// interval.reset_after(Duration::from_millis(50));
    /// assert!(interval.tick().await >= start + Duration::from_millis(50));
    /// assert!(start.elapsed() >= Duration::from_millis(50));
    /// # }
    /// ```
    pub fn reset_after(&mut self, after: Duration) {
        self.reset_at(instant_after(sleep_duration(after)));
    }

    /// Makes the next tick come at `deadline`.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    /// use tokio::time::Instant;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let mut interval = wheel.interval(Duration::from_millis(10));
    /// interval.tick().await;
    /// let at = Instant::now() + Duration::from_millis(30);
    /// interval.reset_at(at);
    /// assert_eq!(interval.tick().await, at);
    /// assert!(Instant::now() >= at);
    /// # }
    /// ```
    pub fn reset_at(&mut self, deadline: Instant) {
        self.sleep.reset(deadline);
    }

    /// The period.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let interval = wheel.interval(Duration::from_millis(250));
    /// assert_eq!(interval.period(), Duration::from_millis(250));
    /// # }
    /// ```
    pub fn period(&self) -> Duration {
        self.period
    }

    /// What happens to missed ticks: `Burst` unless
    /// [`set_missed_tick_behavior`](Interval::set_missed_tick_behavior)
    /// changed it.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    /// use tokio::time::MissedTickBehavior;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let interval = wheel.interval(Duration::from_millis(10));
    /// assert_eq!(interval.missed_tick_behavior(), MissedTickBehavior::Burst);
    /// # }
    /// ```
    pub fn missed_tick_behavior(&self) -> MissedTickBehavior {
        self.missed
    }

    /// Sets what happens to missed ticks.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    /// use tokio::time::MissedTickBehavior;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let mut interval = wheel.interval(Duration::from_millis(10));
    /// interval.set_missed_tick_behavior(MissedTickBehavior::Skip);
    /// assert_eq!(interval.missed_tick_behavior(), MissedTickBehavior::Skip);
    /// # }
    /// ```
    pub fn set_missed_tick_behavior(&mut self, behavior: MissedTickBehavior) {
        self.missed = behavior;
    }
}

impl Stream for Interval {
    type Item = Instant;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Instant>> {
        self.get_mut().poll_tick(cx).map(Some)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (usize::MAX, None)
    }
}

/// `period`, as the wheel's timers hold it; a panic, as tokio's `interval`
/// raises, on a zero one: there is no sensible interval to make, whatever
/// the wheel. The constructors check it before they claim their timer
/// (on a line of its own, or as the first argument of [`Interval::new`]:
/// arguments are evaluated in order), so that a zero period panics even
/// on a wheel at capacity.
#[track_caller]
pub(crate) fn checked(period: Duration) -> Duration {
    assert!(period > Duration::ZERO, "`period` must be non-zero.");
    sleep_duration(period)
}

// ===== on the default wheel =====

/// An [`Interval`] on the current runtime's default wheel that ticks at
/// once and then every `period`: a drop-in for `tokio::time::interval`.
///
/// Missed ticks follow the interval's
/// [`MissedTickBehavior`] (`Burst` by
/// default), as in tokio. Ticks come at the wheel's tick boundaries (1 ms by
/// default), never early.
///
/// # Panics
///
/// When `period` is zero, outside a tokio runtime, in one built without its
/// timer, and when the default wheel is at capacity; [`try_interval`]
/// returns an error for all but the first.
///
/// ```should_panic
/// use std::time::Duration;
///
/// // No runtime here.
/// let _interval = hashwheel::interval(Duration::from_millis(10));
/// ```
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use hashwheel::interval;
/// use tokio::time::Instant;
///
/// let start = Instant::now();
/// let mut ticks = interval(Duration::from_millis(10));
/// ticks.tick().await; // at once
/// ticks.tick().await;
/// ticks.tick().await;
/// assert!(start.elapsed() >= Duration::from_millis(20));
/// # }
/// ```
#[track_caller]
pub fn interval(period: Duration) -> Interval {
    Interval::new(checked(period), claim_default("interval"), Instant::now())
}

/// Like [`interval`](fn@interval), but returns an error where it would
/// panic for want of a timer.
///
/// # Panics
///
/// When `period` is zero.
///
/// # Errors
///
/// [`Error::is_no_runtime`] outside a tokio runtime,
/// [`Error::is_no_timer`] in one built without its timer, and
/// [`Error::is_at_capacity`] when the default wheel is at its
/// [`max_timers`](crate::Builder::max_timers) bound.
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() -> Result<(), hashwheel::error::Error> {
/// use std::time::Duration;
///
/// let mut ticks = hashwheel::try_interval(Duration::from_millis(10))?;
/// ticks.tick().await; // at once
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn try_interval(period: Duration) -> Result<Interval, Error> {
    try_interval_at(Instant::now(), period)
}

/// An [`Interval`] on the current runtime's default wheel that ticks at
/// `start` and then every `period`: a drop-in for
/// `tokio::time::interval_at`.
///
/// # Panics
///
/// When `period` is zero, outside a tokio runtime, in one built without its
/// timer, and when the default wheel is at capacity; [`try_interval_at`]
/// returns an error for all but the first.
///
/// ```should_panic
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use tokio::time::Instant;
///
/// let _interval = hashwheel::interval_at(Instant::now(), Duration::ZERO); // `period` must be non-zero.
/// # }
/// ```
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use hashwheel::interval_at;
/// use tokio::time::Instant;
///
/// let start = Instant::now() + Duration::from_millis(50);
/// let mut ticks = interval_at(start, Duration::from_millis(10));
/// assert_eq!(ticks.tick().await, start);
/// assert_eq!(ticks.tick().await, start + Duration::from_millis(10));
/// # }
/// ```
#[track_caller]
pub fn interval_at(start: Instant, period: Duration) -> Interval {
    Interval::new(checked(period), claim_default("interval_at"), start)
}

/// Like [`interval_at`], but returns an error where it would panic for want
/// of a timer.
///
/// # Panics
///
/// When `period` is zero.
///
/// # Errors
///
/// As [`try_interval`]: [`Error::is_no_runtime`], [`Error::is_no_timer`]
/// or [`Error::is_at_capacity`].
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() -> Result<(), hashwheel::error::Error> {
/// use std::time::Duration;
/// use tokio::time::Instant;
///
/// let start = Instant::now() + Duration::from_millis(50);
/// let mut ticks = hashwheel::try_interval_at(start, Duration::from_millis(10))?;
/// assert_eq!(ticks.tick().await, start);
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn try_interval_at(start: Instant, period: Duration) -> Result<Interval, Error> {
    Ok(Interval::new(checked(period), try_claim_default()?, start))
}
