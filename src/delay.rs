//! `Delay` and its `TimeoutHandle`: the Netty-style cancellable timeout,
//! over a shared entry of the engine (`engine::entry::shared`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::Instant;

use crate::coop;
use crate::engine::clock::Deadline;
use crate::engine::entry::shared::{Outcome, SharedEntry};
use crate::engine::registry::Kind;
use crate::engine::shards::ShardRef;
use crate::error::Error;
use crate::wheel::{claim_default, try_claim_default};

/// A cancellable timeout, made by [`Wheel::delay`](crate::Wheel::delay):
/// Netty's `newTimeout` as a future.
///
/// It resolves to `Ok(())` when its deadline passes (at the first tick at or
/// after it; on its first poll for a zero duration or a deadline already
/// passed), or to an [`Error`] that says why not: cancelled through a
/// [`TimeoutHandle`] ([`Error::is_cancelled`]), or the wheel shut down
/// ([`Error::is_shutdown`]). Like every timer here it registers lazily, on
/// its first poll; a handle can cancel it before that.
///
/// A delay that comes due while the wheel is shutting down may resolve to
/// either outcome: `Ok(())` if the driver fired it first, the shutdown error
/// otherwise. It never resolves `Ok` before its deadline.
///
/// It takes part in tokio's [cooperative scheduling](tokio::task::coop) as
/// tokio's `Sleep` does.
///
/// # Cancel safety
///
/// Cancel safe. Dropping a pending delay cancels its timer: its handles
/// then report [`is_cancelled`](TimeoutHandle::is_cancelled).
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
///
/// let wheel = hashwheel::Wheel::new();
/// let delay = wheel.delay(Duration::from_secs(30));
/// let handle = delay.handle();
/// let waiter = tokio::spawn(delay);
/// // The response arrived first: call the timeout off.
/// assert!(handle.cancel());
/// assert!(waiter.await.unwrap().unwrap_err().is_cancelled());
/// # }
/// ```
#[must_use = "futures do nothing unless you `.await` or poll them"]
#[derive(Debug)]
pub struct Delay {
    /// The delay's own handle: what it polls, and what [`handle`](Delay::handle) clones.
    handle: TimeoutHandle,
    /// This delay's place among the wheel's live timers, given back when it
    /// is dropped (its handles may live on).
    _claim: ShardRef,
}

impl Delay {
    /// A delay on the wheel of `shard`, until the deadline `at` gives on it.
    pub(crate) fn new(shard: ShardRef, at: impl FnOnce(&ShardRef) -> Deadline) -> Delay {
        let entry = SharedEntry::delay(&shard, at(&shard));
        Delay {
            handle: TimeoutHandle { entry },
            _claim: shard,
        }
    }

    /// A handle that can cancel this delay from anywhere.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let delay = wheel.delay(Duration::from_secs(30));
    /// let handle = delay.handle();
    /// // Handles are `Send`: cancel from another task.
    /// tokio::spawn(async move { handle.cancel() }).await.unwrap();
    /// assert!(delay.await.unwrap_err().is_cancelled());
    /// # }
    /// ```
    pub fn handle(&self) -> TimeoutHandle {
        self.handle.clone()
    }

    /// The instant at which this delay expires.
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
    /// let at = Instant::now() + Duration::from_millis(20);
    /// let delay = wheel.delay_at(at);
    /// assert!(delay.deadline() >= at);
    /// delay.await.unwrap();
    /// assert!(Instant::now() >= at);
    /// # }
    /// ```
    pub fn deadline(&self) -> Instant {
        self.handle.deadline()
    }
}

impl Future for Delay {
    type Output = Result<(), Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // The task's budget, spent as by a `Sleep`.
        coop::budgeted(cx, |cx| self.handle.entry.poll(cx)).map(|outcome| match outcome {
            Outcome::Expired => Ok(()),
            Outcome::Cancelled => Err(Error(Kind::Cancelled)),
            Outcome::Shutdown => Err(Error(Kind::Shutdown)),
        })
    }
}

impl Drop for Delay {
    fn drop(&mut self) {
        self.handle.entry.release();
    }
}

// ===== TimeoutHandle =====

/// Cancels a [`Delay`] or a task scheduled by
/// [`Wheel::spawn_after`](crate::Wheel::spawn_after) from anywhere:
/// `Clone + Send + Sync`, made by [`Delay::handle`] or returned by
/// `spawn_after`.
///
/// A handle refers to its own delay only. Once that delay is gone (it
/// expired, was cancelled, or was dropped) the handle does nothing and keeps
/// reporting how it ended; it never touches another timer, even one made
/// later in its place.
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
///
/// let wheel = hashwheel::Wheel::new();
/// let delay = wheel.delay(Duration::from_millis(20));
/// let handle = delay.handle();
/// assert!(delay.await.is_ok());
/// assert!(handle.is_expired());
/// assert!(!handle.cancel()); // too late: it has fired
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct TimeoutHandle {
    /// A delay's entry, or a scheduled future's (`spawn_after`).
    pub(crate) entry: Arc<SharedEntry>,
}

impl TimeoutHandle {
    /// Cancels the delay: it resolves to an error for which
    /// [`Error::is_cancelled`] holds, and the wheel forgets its timer at once.
    ///
    /// Returns `true` if this call cancelled a pending delay, `false` if it
    /// had already expired, been cancelled, or been dropped. Cancelling a
    /// scheduled task drops its future without running it.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let delay = wheel.delay(Duration::from_secs(30));
    /// let handle = delay.handle();
    /// assert!(handle.cancel()); // this call cancelled it
    /// assert!(!handle.cancel()); // nothing left to cancel
    /// assert!(delay.await.unwrap_err().is_cancelled());
    /// # }
    /// ```
    pub fn cancel(&self) -> bool {
        self.entry.cancel()
    }

    /// Whether the delay was cancelled, through a handle or by being dropped
    /// before it expired.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let delay = wheel.delay(Duration::from_secs(30));
    /// let handle = delay.handle();
    /// assert!(!handle.is_cancelled());
    /// drop(delay); // dropping a pending delay cancels it
    /// assert!(handle.is_cancelled());
    /// # }
    /// ```
    pub fn is_cancelled(&self) -> bool {
        self.entry.is_cancelled()
    }

    /// Whether the delay has expired: its deadline passed and the wheel
    /// fired it (for a scheduled task: the task was spawned).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let delay = wheel.delay(Duration::from_millis(10));
    /// let handle = delay.handle();
    /// assert!(!handle.is_expired());
    /// delay.await.unwrap();
    /// assert!(handle.is_expired());
    /// assert!(!handle.is_cancelled());
    /// # }
    /// ```
    pub fn is_expired(&self) -> bool {
        self.entry.is_expired()
    }

    /// The instant at which the delay expires.
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
    /// let delay = wheel.delay(Duration::from_secs(5));
    /// let handle = delay.handle();
    /// assert_eq!(handle.deadline(), delay.deadline());
    /// assert!(handle.deadline() >= Instant::now() + Duration::from_secs(5));
    /// # }
    /// ```
    pub fn deadline(&self) -> Instant {
        self.entry.deadline()
    }
}

// ===== on the default wheel =====

/// A cancellable [`Delay`] that expires `duration` from now, on the
/// current runtime's default wheel (Netty's `newTimeout`; tokio has no
/// equivalent).
///
/// It resolves to `Ok(())` when it expires, or to an
/// [`Error`] when cancelled through its
/// [`handle`](Delay::handle) or when the wheel shuts down.
///
/// # Cancel safety
///
/// Cancel safe, as [`Delay`] is.
///
/// # Panics
///
/// Outside a tokio runtime, in one built without its timer, and when the
/// default wheel is at capacity; [`try_delay`] returns an error instead.
///
/// ```should_panic
/// use std::time::Duration;
///
/// // No runtime here.
/// let _delay = hashwheel::delay(Duration::from_secs(1));
/// ```
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
///
/// let delay = hashwheel::delay(Duration::from_secs(30));
/// let handle = delay.handle();
/// assert!(handle.cancel());
/// assert!(delay.await.unwrap_err().is_cancelled());
///
/// assert!(hashwheel::delay(Duration::from_millis(5)).await.is_ok());
/// # }
/// ```
#[track_caller]
pub fn delay(duration: Duration) -> Delay {
    Delay::new(claim_default("delay"), |s| s.deadline_after(duration))
}

/// Like [`delay`](fn@delay), but returns an error where it would panic.
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
/// let delay = hashwheel::try_delay(Duration::from_secs(30))?;
/// delay.handle().cancel();
/// assert!(delay.await.unwrap_err().is_cancelled());
/// # Ok(())
/// # }
/// ```
pub fn try_delay(duration: Duration) -> Result<Delay, Error> {
    let shard = try_claim_default()?;
    Ok(Delay::new(shard, |s| s.deadline_after(duration)))
}

/// A cancellable [`Delay`] that expires at `deadline`, on the current
/// runtime's default wheel.
///
/// # Cancel safety
///
/// Cancel safe, as [`Delay`] is.
///
/// # Panics
///
/// Outside a tokio runtime, in one built without its timer, and when the
/// default wheel is at capacity; [`try_delay_at`] returns an error instead.
///
/// ```should_panic
/// // No runtime here.
/// let _delay = hashwheel::delay_at(tokio::time::Instant::now());
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
/// let at = Instant::now() + Duration::from_millis(5);
/// assert!(hashwheel::delay_at(at).await.is_ok());
/// assert!(Instant::now() >= at);
/// # }
/// ```
#[track_caller]
pub fn delay_at(deadline: Instant) -> Delay {
    Delay::new(claim_default("delay_at"), |s| s.deadline_at(deadline))
}

/// Like [`delay_at`], but returns an error where it would panic.
///
/// # Errors
///
/// As [`try_delay`]: [`Error::is_no_runtime`], [`Error::is_no_timer`] or
/// [`Error::is_at_capacity`].
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() -> Result<(), hashwheel::error::Error> {
/// use std::time::Duration;
/// use tokio::time::Instant;
///
/// let at = Instant::now() + Duration::from_millis(5);
/// assert!(hashwheel::try_delay_at(at)?.await.is_ok());
/// # Ok(())
/// # }
/// ```
pub fn try_delay_at(deadline: Instant) -> Result<Delay, Error> {
    let shard = try_claim_default()?;
    Ok(Delay::new(shard, |s| s.deadline_at(deadline)))
}
