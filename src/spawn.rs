//! Futures spawned by the wheel at a deadline: Netty's `newTimeout(task,
//! delay)` for async code, cancellable through a [`TimeoutHandle`].

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use crate::delay::TimeoutHandle;
use crate::error::{unwrap_or_fail, Error};
use crate::wheel::Wheel;

// ===== on the default wheel =====

/// Spawns `future` on the current runtime `duration` from now, timed by
/// the runtime's default wheel; see [`Wheel::spawn_after`](crate::Wheel::spawn_after).
///
/// Until then the future waits in the wheel, costing one timer and no tokio
/// task; cancelling the returned [`TimeoutHandle`] first drops it unrun.
///
/// # Panics
///
/// Outside a tokio runtime, in one built without its timer, and when the
/// default wheel is at capacity; [`try_spawn_after`] returns an error
/// instead.
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
    F: Future<Output: Send + 'static> + Send + 'static,
{
    unwrap_or_fail(try_spawn_after(duration, future), "spawn_after")
}

/// Like [`spawn_after`](fn@spawn_after), but returns an error where it
/// would panic.
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
/// let (tx, rx) = tokio::sync::oneshot::channel();
/// hashwheel::try_spawn_after(Duration::from_secs(1), async move { tx.send(()).unwrap() })?;
/// rx.await.unwrap();
/// # Ok(())
/// # }
/// ```
pub fn try_spawn_after<F>(duration: Duration, future: F) -> Result<TimeoutHandle, Error>
where
    F: Future<Output: Send + 'static> + Send + 'static,
{
    Wheel::try_current()?.try_spawn_after(duration, future)
}

/// Spawns `future` on the current runtime at `deadline`, through the
/// runtime's default wheel: see [`Wheel::spawn_at`](crate::Wheel::spawn_at).
///
/// # Panics
///
/// Outside a tokio runtime, in one built without its timer, and when the
/// default wheel is at capacity; [`try_spawn_at`] returns an error instead.
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
    F: Future<Output: Send + 'static> + Send + 'static,
{
    unwrap_or_fail(try_spawn_at(deadline, future), "spawn_at")
}

/// Like [`spawn_at`](fn@spawn_at), but returns an error where it would
/// panic.
///
/// # Errors
///
/// As [`try_spawn_after`]: [`Error::is_no_runtime`],
/// [`Error::is_no_timer`] or [`Error::is_at_capacity`].
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() -> Result<(), hashwheel::error::Error> {
/// use std::time::Duration;
/// use tokio::time::Instant;
///
/// let at = Instant::now() + Duration::from_millis(250);
/// let (tx, rx) = tokio::sync::oneshot::channel();
/// hashwheel::try_spawn_at(at, async move { tx.send(Instant::now()).unwrap() })?;
/// assert!(rx.await.unwrap() >= at);
/// # Ok(())
/// # }
/// ```
pub fn try_spawn_at<F>(deadline: Instant, future: F) -> Result<TimeoutHandle, Error>
where
    F: Future<Output: Send + 'static> + Send + 'static,
{
    Wheel::try_current()?.try_spawn_at(deadline, future)
}
