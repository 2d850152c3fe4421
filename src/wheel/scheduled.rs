//! What a [`Wheel`] schedules beyond a future it is polled by: a
//! [`Delay`] and its cancelling handles, a future spawned at a deadline, a
//! [`DelayQueue`].

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use crate::delay::{Delay, TimeoutHandle};
use crate::delay_queue::DelayQueue;
use crate::engine::clock::instant_after;
use crate::engine::entry::shared::schedule;
use crate::engine::registry::Kind;
use crate::error::{unwrap_or_fail, Error};
use crate::wheel::Wheel;

impl Wheel {
    /// A cancellable [`Delay`] that expires `duration` from now; see
    /// [`Delay::handle`].
    ///
    /// # Panics
    ///
    /// When the wheel is at capacity; see [`try_delay`](Wheel::try_delay).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// assert!(wheel.delay(Duration::from_millis(10)).await.is_ok());
    /// # }
    /// ```
    #[track_caller]
    pub fn delay(&self, duration: Duration) -> Delay {
        Delay::new(self.claim_or_panic("delay"), |s| s.deadline_after(duration))
    }

    /// Like [`delay`](Wheel::delay), but returns an error when the wheel is
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
    /// let first = wheel.try_delay(Duration::from_millis(10)).unwrap();
    /// assert!(wheel.try_delay(Duration::from_millis(10)).unwrap_err().is_at_capacity());
    /// assert!(first.await.is_ok());
    /// # }
    /// ```
    pub fn try_delay(&self, duration: Duration) -> Result<Delay, Error> {
        Ok(Delay::new(self.claim()?, |s| s.deadline_after(duration)))
    }

    /// A cancellable [`Delay`] that expires at `deadline`.
    ///
    /// # Panics
    ///
    /// When the wheel is at capacity; see [`try_delay_at`](Wheel::try_delay_at).
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
    /// let at = Instant::now() + Duration::from_millis(10);
    /// assert!(wheel.delay_at(at).await.is_ok());
    /// assert!(Instant::now() >= at);
    /// # }
    /// ```
    #[track_caller]
    pub fn delay_at(&self, deadline: Instant) -> Delay {
        Delay::new(self.claim_or_panic("delay_at"), |s| s.deadline_at(deadline))
    }

    /// Like [`delay_at`](Wheel::delay_at), but returns an error when the
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
    /// let delay = wheel.try_delay_at(Instant::now() + Duration::from_millis(10))?;
    /// assert!(delay.await.is_ok());
    /// # Ok(())
    /// # }
    /// ```
    pub fn try_delay_at(&self, deadline: Instant) -> Result<Delay, Error> {
        Ok(Delay::new(self.claim()?, |s| s.deadline_at(deadline)))
    }

    /// Spawns `future` on the current runtime `duration` from now: Netty's
    /// `newTimeout(task, delay)` for async code.
    ///
    /// Until then the future waits in the wheel, costing one timer and no
    /// tokio task; cancelling the returned handle first drops it without
    /// running it. A zero duration spawns it at once. Its output is
    /// discarded. If the wheel shuts down first, the future is dropped and
    /// the handle reports neither expired nor cancelled.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime, or when the wheel is at capacity;
    /// [`try_spawn_after`](Wheel::try_spawn_after) returns an error instead.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let (tx, rx) = tokio::sync::oneshot::channel();
    /// let retry = wheel.spawn_after(Duration::from_secs(1), async move {
    ///     tx.send("retried").unwrap();
    /// });
    /// assert_eq!(rx.await.unwrap(), "retried");
    /// assert!(retry.is_expired());
    /// # }
    /// ```
    #[track_caller]
    pub fn spawn_after<F>(&self, duration: Duration, future: F) -> TimeoutHandle
    where
        F: Future<Output: Send + 'static> + Send + 'static,
    {
        unwrap_or_fail(self.try_spawn_after(duration, future), "Wheel::spawn_after")
    }

    /// Like [`spawn_after`](Wheel::spawn_after), but returns an error where
    /// it would panic.
    ///
    /// # Errors
    ///
    /// [`Error::is_no_runtime`] outside a tokio runtime (there is nowhere
    /// to spawn), and [`Error::is_at_capacity`] when `max_timers` timers
    /// are alive.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), hashwheel::error::Error> {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let (tx, rx) = tokio::sync::oneshot::channel();
    /// wheel.try_spawn_after(Duration::from_secs(1), async move { tx.send(()).unwrap() })?;
    /// rx.await.unwrap();
    /// # Ok(())
    /// # }
    /// ```
    pub fn try_spawn_after<F>(&self, duration: Duration, future: F) -> Result<TimeoutHandle, Error>
    where
        F: Future<Output: Send + 'static> + Send + 'static,
    {
        self.try_spawn_at(instant_after(duration), future)
    }

    /// Spawns `future` on the current runtime at `deadline`; see
    /// [`spawn_after`](Wheel::spawn_after). A deadline already passed
    /// spawns it at once.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime, or when the wheel is at capacity;
    /// [`try_spawn_at`](Wheel::try_spawn_at) returns an error instead.
    ///
    /// ```should_panic
    /// // No runtime here: nowhere to spawn.
    /// # let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// # let wheel = rt.block_on(async { hashwheel::Wheel::new() });
    /// let _handle = wheel.spawn_at(tokio::time::Instant::now(), async {});
    /// ```
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
    /// let at = Instant::now() + Duration::from_millis(250);
    /// let (tx, rx) = tokio::sync::oneshot::channel();
    /// let handle = wheel.spawn_at(at, async move { tx.send(Instant::now()).unwrap() });
    /// assert_eq!(rx.await.unwrap(), at);
    /// assert!(handle.is_expired());
    /// # }
    /// ```
    #[track_caller]
    pub fn spawn_at<F>(&self, deadline: Instant, future: F) -> TimeoutHandle
    where
        F: Future<Output: Send + 'static> + Send + 'static,
    {
        unwrap_or_fail(self.try_spawn_at(deadline, future), "Wheel::spawn_at")
    }

    /// Like [`spawn_at`](Wheel::spawn_at), but returns an error where it
    /// would panic.
    ///
    /// # Errors
    ///
    /// As [`try_spawn_after`](Wheel::try_spawn_after):
    /// [`Error::is_no_runtime`] or [`Error::is_at_capacity`].
    ///
    /// # Examples
    ///
    /// ```
    /// // No runtime here: nowhere to spawn.
    /// # let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// # let wheel = rt.block_on(async { hashwheel::Wheel::new() });
    /// let at = tokio::time::Instant::now();
    /// let err = wheel.try_spawn_at(at, async {}).unwrap_err();
    /// assert!(err.is_no_runtime());
    /// ```
    pub fn try_spawn_at<F>(&self, deadline: Instant, future: F) -> Result<TimeoutHandle, Error>
    where
        F: Future<Output: Send + 'static> + Send + 'static,
    {
        // The runtime first: outside one that is the error, whatever the
        // wheel holds.
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| Error(Kind::NoRuntime))?;
        let shard = self.claim()?;
        let at = shard.deadline_at(deadline);
        let entry = schedule(shard, at, runtime, future);
        Ok(TimeoutHandle { entry })
    }

    /// An empty [`DelayQueue`] whose values expire on this wheel's ticks.
    ///
    /// # Panics
    ///
    /// When the wheel is at its [`max_timers`](crate::Builder::max_timers) bound:
    /// the queue keeps one timer on the wheel.
    /// [`try_delay_queue`](Wheel::try_delay_queue) returns an error instead.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let mut queue = wheel.delay_queue();
    /// queue.insert(1u32, Duration::from_millis(5));
    /// let expired = std::future::poll_fn(|cx| queue.poll_expired(cx)).await;
    /// assert_eq!(expired.unwrap().into_inner(), 1);
    /// # }
    /// ```
    #[track_caller]
    pub fn delay_queue<T>(&self) -> DelayQueue<T> {
        DelayQueue::on(self.claim_or_panic("delay_queue"), 0)
    }

    /// Like [`delay_queue`](Wheel::delay_queue), but returns an error when
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
    /// # async fn main() {
    /// let wheel = hashwheel::Wheel::builder().max_timers(1).build().unwrap();
    /// let queue = wheel.try_delay_queue::<u32>().unwrap();
    /// assert!(wheel.try_delay_queue::<u32>().unwrap_err().is_at_capacity());
    /// drop(queue);
    /// assert!(wheel.try_delay_queue::<u32>().is_ok());
    /// # }
    /// ```
    pub fn try_delay_queue<T>(&self) -> Result<DelayQueue<T>, Error> {
        self.try_delay_queue_with_capacity(0)
    }

    /// An empty [`DelayQueue`] with room for `capacity` values.
    ///
    /// # Panics
    ///
    /// As [`delay_queue`](Wheel::delay_queue);
    /// [`try_delay_queue_with_capacity`](Wheel::try_delay_queue_with_capacity)
    /// returns an error instead.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let wheel = hashwheel::Wheel::new();
    /// let queue = wheel.delay_queue_with_capacity::<u32>(100);
    /// assert!(queue.capacity() >= 100);
    /// # }
    /// ```
    #[track_caller]
    pub fn delay_queue_with_capacity<T>(&self, capacity: usize) -> DelayQueue<T> {
        DelayQueue::on(self.claim_or_panic("delay_queue_with_capacity"), capacity)
    }

    /// Like [`delay_queue_with_capacity`](Wheel::delay_queue_with_capacity),
    /// but returns an error when the wheel is at capacity.
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
    /// let wheel = hashwheel::Wheel::new();
    /// let queue = wheel.try_delay_queue_with_capacity::<u32>(100)?;
    /// assert!(queue.capacity() >= 100);
    /// # Ok(())
    /// # }
    /// ```
    pub fn try_delay_queue_with_capacity<T>(
        &self,
        capacity: usize,
    ) -> Result<DelayQueue<T>, Error> {
        Ok(DelayQueue::on(self.claim()?, capacity))
    }
}
