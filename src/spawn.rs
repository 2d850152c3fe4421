//! Futures spawned by the wheel at a deadline: Netty's `newTimeout(task,
//! delay)` for async code, cancellable through a [`TimeoutHandle`].

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use crate::delay::TimeoutHandle;
use crate::engine::entry::shared::{schedule_after, schedule_at};
use crate::engine::registry;
use crate::error::Error;
use crate::wheel::Wheel;

/// The runtime to spawn on, or a panic naming the caller.
#[track_caller]
fn current_runtime(what: &str) -> tokio::runtime::Handle {
    match tokio::runtime::Handle::try_current() {
        Ok(h) => h,
        Err(_) => panic!(
            "hashwheel::Wheel::{what} must be called from the context of a Tokio 1.x runtime"
        ),
    }
}

// ===== impl Wheel =====

impl Wheel {
    /// Spawns `future` on the current runtime `duration` from now: Netty's
    /// `newTimeout(task, delay)` for async code.
    ///
    /// Until then the future waits in the wheel, costing one timer and no
    /// tokio task; cancelling the returned handle first drops it without
    /// running it. Its output is discarded. If the wheel shuts down first, the
    /// future is dropped and the handle reports neither expired nor cancelled.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime, or when the wheel is at capacity (see
    /// [`try_spawn_after`](Wheel::try_spawn_after)).
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
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match self.try_spawn_after(duration, future) {
            Ok(h) => h,
            Err(e) => panic!("hashwheel::Wheel::spawn_after: {e}"),
        }
    }

    /// Like [`spawn_after`](Wheel::spawn_after), but returns an error when
    /// the wheel is at capacity.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime.
    ///
    /// # Errors
    ///
    /// [`Error::is_at_capacity`] when `max_pending` timers are alive.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::builder().max_pending(1).build().unwrap();
    /// let (tx, rx) = tokio::sync::oneshot::channel();
    /// let first = wheel
    ///     .try_spawn_after(Duration::from_secs(1), async move { tx.send(1).unwrap() })
    ///     .unwrap();
    /// let refused = wheel.try_spawn_after(Duration::from_secs(1), async {});
    /// assert!(refused.unwrap_err().is_at_capacity());
    /// assert_eq!(rx.await.unwrap(), 1);
    /// assert!(first.is_expired());
    /// # }
    /// ```
    #[track_caller]
    pub fn try_spawn_after<F>(&self, duration: Duration, future: F) -> Result<TimeoutHandle, Error>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let runtime = current_runtime("spawn_after");
        let shard = self.claim()?;
        Ok(TimeoutHandle::of(schedule_after(
            shard, duration, runtime, future,
        )))
    }

    /// Spawns `future` on the current runtime at `deadline`; see
    /// [`spawn_after`](Wheel::spawn_after).
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime, or when the wheel is at capacity (see
    /// [`try_spawn_at`](Wheel::try_spawn_at)).
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
    /// assert!(rx.await.unwrap() >= at);
    /// assert!(handle.is_expired());
    /// # }
    /// ```
    #[track_caller]
    pub fn spawn_at<F>(&self, deadline: Instant, future: F) -> TimeoutHandle
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match self.try_spawn_at(deadline, future) {
            Ok(h) => h,
            Err(e) => panic!("hashwheel::Wheel::spawn_at: {e}"),
        }
    }

    /// Like [`spawn_at`](Wheel::spawn_at), but returns an error when the
    /// wheel is at capacity.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime.
    ///
    /// # Errors
    ///
    /// [`Error::is_at_capacity`] when `max_pending` timers are alive.
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
    /// let at = Instant::now() + Duration::from_secs(1);
    /// let handle = wheel.try_spawn_at(at, async { unreachable!("cancelled") }).unwrap();
    /// assert!(handle.cancel()); // dropped without running
    /// tokio::time::advance(Duration::from_secs(2)).await;
    /// assert!(handle.is_cancelled());
    /// assert!(!handle.is_expired());
    /// # }
    /// ```
    #[track_caller]
    pub fn try_spawn_at<F>(&self, deadline: Instant, future: F) -> Result<TimeoutHandle, Error>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let runtime = current_runtime("spawn_at");
        let shard = self.claim()?;
        Ok(TimeoutHandle::of(schedule_at(
            shard, deadline, runtime, future,
        )))
    }
}

// ===== on the default wheel =====

/// Spawns `future` on the current runtime `duration` from now, timed by
/// the runtime's default wheel; see [`Wheel::spawn_after`](crate::Wheel::spawn_after).
///
/// Until then the future waits in the wheel, costing one timer and no tokio
/// task; cancelling the returned [`TimeoutHandle`] first drops it unrun.
///
/// # Panics
///
/// Outside a tokio runtime, and when the default wheel is at capacity.
///
/// ```should_panic
/// use std::time::Duration;
///
/// // No runtime here.
/// let _handle = hashwheel::spawn_after(Duration::from_secs(1), async {});
/// ```
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
///
/// let (tx, rx) = tokio::sync::oneshot::channel();
/// let retry = hashwheel::spawn_after(Duration::from_secs(1), async move {
///     tx.send("retried").unwrap();
/// });
/// assert_eq!(rx.await.unwrap(), "retried");
/// assert!(retry.is_expired());
///
/// let never = hashwheel::spawn_after(Duration::from_secs(1), async { unreachable!() });
/// assert!(never.cancel());
/// # }
/// ```
#[track_caller]
pub fn spawn_after<F>(duration: Duration, future: F) -> TimeoutHandle
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let shard = registry::claim("spawn_after");
    let runtime = tokio::runtime::Handle::current();
    TimeoutHandle::of(schedule_after(shard, duration, runtime, future))
}

/// Spawns `future` on the current runtime at `deadline`, through the
/// runtime's default wheel: see [`Wheel::spawn_at`](crate::Wheel::spawn_at).
///
/// # Panics
///
/// Outside a tokio runtime, or when the default wheel is at capacity.
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use tokio::time::Instant;
///
/// let at = Instant::now() + Duration::from_millis(250);
/// let (tx, rx) = tokio::sync::oneshot::channel();
/// hashwheel::spawn_at(at, async move { tx.send(Instant::now()).unwrap() });
/// assert!(rx.await.unwrap() >= at);
/// # }
/// ```
#[track_caller]
pub fn spawn_at<F>(deadline: Instant, future: F) -> TimeoutHandle
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let shard = registry::claim("spawn_at");
    let runtime = tokio::runtime::Handle::current();
    TimeoutHandle::of(schedule_at(shard, deadline, runtime, future))
}
