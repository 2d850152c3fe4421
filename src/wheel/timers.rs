//! The timer futures a [`Wheel`] makes: sleeps, timeouts and intervals
//! on that wheel instead of the runtime's default one.

use std::future::IntoFuture;
use std::time::Duration;

use tokio::time::Instant;

use crate::engine::clock::instant_after;
use crate::error::Error;
use crate::interval::{checked, Interval};
use crate::lazy_timeout::LazyTimeout;
use crate::sleep::Sleep;
use crate::timeout::Timeout;
use crate::wheel::Wheel;

impl Wheel {
    /// A [`Sleep`] that completes `duration` from now.
    ///
    /// `Duration::ZERO` completes on the first poll without touching the
    /// wheel; `Duration::MAX` lands 30 years from now, as with tokio (see
    /// [`Sleep`] on far deadlines).
    ///
    /// # Panics
    ///
    /// When the wheel is at its [`max_timers`](crate::Builder::max_timers) bound;
    /// [`try_sleep`](Wheel::try_sleep) returns an error instead.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// use tokio::time::Instant;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let start = Instant::now();
    /// wheel.sleep(Duration::from_millis(10)).await;
    /// assert!(start.elapsed() >= Duration::from_millis(10));
    /// # }
    /// ```
    #[track_caller]
    pub fn sleep(&self, duration: Duration) -> Sleep {
        Sleep::after(self.claim_or_panic("sleep"), duration)
    }

    /// Like [`sleep`](Wheel::sleep), but returns an error when the wheel is
    /// at capacity.
    ///
    /// # Errors
    ///
    /// [`Error::is_at_capacity`] when `max_timers` timers are alive.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::builder().max_timers(1).build().unwrap();
    /// let first = wheel.try_sleep(Duration::from_millis(10)).unwrap();
    /// assert!(wheel.try_sleep(Duration::from_millis(10)).unwrap_err().is_at_capacity());
    /// first.await;
    /// # }
    /// ```
    pub fn try_sleep(&self, duration: Duration) -> Result<Sleep, Error> {
        Ok(Sleep::after(self.claim()?, duration))
    }

    /// A [`Sleep`] that completes at `deadline`. A deadline in the past
    /// completes on the first poll without touching the wheel.
    ///
    /// # Panics
    ///
    /// When the wheel is at capacity; see [`try_sleep_until`](Wheel::try_sleep_until).
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
    /// let deadline = Instant::now() + Duration::from_millis(10);
    /// wheel.sleep_until(deadline).await;
    /// assert!(Instant::now() >= deadline);
    /// # }
    /// ```
    #[track_caller]
    pub fn sleep_until(&self, deadline: Instant) -> Sleep {
        Sleep::until(self.claim_or_panic("sleep_until"), deadline)
    }

    /// Like [`sleep_until`](Wheel::sleep_until), but returns an error when
    /// the wheel is at capacity.
    ///
    /// # Errors
    ///
    /// [`Error::is_at_capacity`] when `max_timers` timers are alive.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), hashwheel::error::Error> {
    /// use std::time::Duration;
    /// use tokio::time::Instant;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// wheel.try_sleep_until(Instant::now() + Duration::from_millis(10))?.await;
    /// # Ok(())
    /// # }
    /// ```
    pub fn try_sleep_until(&self, deadline: Instant) -> Result<Sleep, Error> {
        Ok(Sleep::until(self.claim()?, deadline))
    }

    /// Requires `future` to complete within `duration`: a [`Timeout`] that
    /// resolves to `Err(Elapsed)` if it does not.
    ///
    /// # Panics
    ///
    /// When the wheel is at capacity; see [`try_timeout`](Wheel::try_timeout).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let slow = tokio::time::sleep(Duration::from_secs(5));
    /// assert!(wheel.timeout(Duration::from_secs(1), slow).await.is_err());
    /// # }
    /// ```
    #[track_caller]
    pub fn timeout<F: IntoFuture>(&self, duration: Duration, future: F) -> Timeout<F::IntoFuture> {
        let shard = self.claim_or_panic("timeout");
        Timeout::new(shard, instant_after(duration), future)
    }

    /// Like [`timeout`](Wheel::timeout), but returns an error when the wheel
    /// is at capacity.
    ///
    /// # Errors
    ///
    /// [`Error::is_at_capacity`] when `max_timers` timers are alive.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), hashwheel::error::Error> {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let work = async { 42 };
    /// assert_eq!(wheel.try_timeout(Duration::from_secs(1), work)?.await, Ok(42));
    /// # Ok(())
    /// # }
    /// ```
    pub fn try_timeout<F: IntoFuture>(
        &self,
        duration: Duration,
        future: F,
    ) -> Result<Timeout<F::IntoFuture>, Error> {
        Ok(Timeout::new(self.claim()?, instant_after(duration), future))
    }

    /// Requires `future` to complete by `deadline`.
    ///
    /// # Panics
    ///
    /// When the wheel is at capacity; see [`try_timeout_at`](Wheel::try_timeout_at).
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
    /// let deadline = Instant::now() + Duration::from_millis(10);
    /// assert_eq!(wheel.timeout_at(deadline, async { 5 }).await, Ok(5));
    /// # }
    /// ```
    #[track_caller]
    pub fn timeout_at<F: IntoFuture>(
        &self,
        deadline: Instant,
        future: F,
    ) -> Timeout<F::IntoFuture> {
        Timeout::new(self.claim_or_panic("timeout_at"), deadline, future)
    }

    /// Like [`timeout_at`](Wheel::timeout_at), but returns an error when the
    /// wheel is at capacity.
    ///
    /// # Errors
    ///
    /// [`Error::is_at_capacity`] when `max_timers` timers are alive.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), hashwheel::error::Error> {
    /// use std::time::Duration;
    /// use tokio::time::Instant;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let deadline = Instant::now() + Duration::from_millis(10);
    /// let slow = tokio::time::sleep(Duration::from_secs(1));
    /// assert!(wheel.try_timeout_at(deadline, slow)?.await.is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn try_timeout_at<F: IntoFuture>(
        &self,
        deadline: Instant,
        future: F,
    ) -> Result<Timeout<F::IntoFuture>, Error> {
        Ok(Timeout::new(self.claim()?, deadline, future))
    }

    /// Requires `future` to complete within `duration` of the first poll
    /// at which it is pending: a [`LazyTimeout`]. A future that is ready
    /// on its first poll costs no clock read and no timer; otherwise
    /// the deadline counts from that poll, not from this call as with
    /// [`timeout`](Wheel::timeout), so it can only be later.
    ///
    /// # Panics
    ///
    /// When the wheel is at capacity (a lazy timeout counts from when it is
    /// made); see [`try_lazy_timeout`](Wheel::try_lazy_timeout).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let cached = async { "hit" };
    /// assert_eq!(wheel.lazy_timeout(Duration::from_secs(1), cached).await, Ok("hit"));
    /// assert_eq!(wheel.metrics().num_pending(), 0);
    /// # }
    /// ```
    #[track_caller]
    pub fn lazy_timeout<F: IntoFuture>(
        &self,
        duration: Duration,
        future: F,
    ) -> LazyTimeout<F::IntoFuture> {
        let shard = Some(self.claim_or_panic("lazy_timeout"));
        LazyTimeout::new(shard, duration, future.into_future())
    }

    /// Like [`lazy_timeout`](Wheel::lazy_timeout), but returns an error when
    /// the wheel is at capacity.
    ///
    /// # Errors
    ///
    /// [`Error::is_at_capacity`] when `max_timers` timers are alive.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), hashwheel::error::Error> {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let cached = async { "hit" };
    /// assert_eq!(wheel.try_lazy_timeout(Duration::from_secs(1), cached)?.await, Ok("hit"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn try_lazy_timeout<F: IntoFuture>(
        &self,
        duration: Duration,
        future: F,
    ) -> Result<LazyTimeout<F::IntoFuture>, Error> {
        let shard = Some(self.claim()?);
        Ok(LazyTimeout::new(shard, duration, future.into_future()))
    }

    /// An [`Interval`] whose first tick completes at once and then every
    /// `period`.
    ///
    /// # Panics
    ///
    /// When `period` is zero, or the wheel is at capacity;
    /// [`try_interval`](Wheel::try_interval) returns an error for the
    /// second.
    ///
    /// ```should_panic
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let wheel = hashwheel::Wheel::new();
    /// let _ = wheel.interval(std::time::Duration::ZERO); // `period` must be non-zero.
    /// # }
    /// ```
    #[track_caller]
    pub fn interval(&self, period: Duration) -> Interval {
        let period = checked(period);
        Interval::new(period, self.claim_or_panic("interval"), Instant::now())
    }

    /// Like [`interval`](Wheel::interval), but returns an error when the
    /// wheel is at capacity.
    ///
    /// # Panics
    ///
    /// When `period` is zero.
    ///
    /// # Errors
    ///
    /// [`Error::is_at_capacity`] when `max_timers` timers are alive.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::builder().max_timers(1).build().unwrap();
    /// let mut ticks = wheel.try_interval(Duration::from_millis(10)).unwrap();
    /// assert!(wheel.try_interval(Duration::from_millis(10)).unwrap_err().is_at_capacity());
    /// ticks.tick().await;
    /// # }
    /// ```
    #[track_caller]
    pub fn try_interval(&self, period: Duration) -> Result<Interval, Error> {
        self.try_interval_at(Instant::now(), period)
    }

    /// An [`Interval`] whose first tick completes at `start` and then every
    /// `period`.
    ///
    /// # Panics
    ///
    /// When `period` is zero, or the wheel is at capacity;
    /// [`try_interval_at`](Wheel::try_interval_at) returns an error for
    /// the second.
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
    /// let start = Instant::now() + Duration::from_millis(50);
    /// let mut interval = wheel.interval_at(start, Duration::from_millis(10));
    /// assert_eq!(interval.tick().await, start);
    /// # }
    /// ```
    #[track_caller]
    pub fn interval_at(&self, start: Instant, period: Duration) -> Interval {
        Interval::new(checked(period), self.claim_or_panic("interval_at"), start)
    }

    /// Like [`interval_at`](Wheel::interval_at), but returns an error when
    /// the wheel is at capacity.
    ///
    /// # Panics
    ///
    /// When `period` is zero.
    ///
    /// # Errors
    ///
    /// [`Error::is_at_capacity`] when `max_timers` timers are alive.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), hashwheel::error::Error> {
    /// use std::time::Duration;
    /// use tokio::time::Instant;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let start = Instant::now() + Duration::from_millis(50);
    /// let mut interval = wheel.try_interval_at(start, Duration::from_millis(10))?;
    /// assert_eq!(interval.tick().await, start);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn try_interval_at(&self, start: Instant, period: Duration) -> Result<Interval, Error> {
        Ok(Interval::new(checked(period), self.claim()?, start))
    }
}
