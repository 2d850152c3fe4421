//! `Delay` and its `TimeoutHandle`: the Netty-style cancellable timeout,
//! over a shared entry of the engine (`engine::entry::shared`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::time::Instant;

use crate::coop;
use crate::engine::entry::shared::{Outcome, SharedEntry};
use crate::engine::registry;
use crate::engine::shards::ShardRef;
use crate::error::Error;
use crate::wheel::Wheel;

/// A cancellable timeout, made by [`Wheel::delay`](crate::Wheel::delay):
/// Netty's `newTimeout` as a future.
///
/// It resolves to `Ok(())` when its deadline passes (at the first tick at or
/// after it), or to an [`Error`] that says why not: cancelled through a
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
    entry: Arc<SharedEntry>,
    /// This delay's place among the wheel's live timers, given back when it
    /// is dropped (its handles may live on).
    _claim: ShardRef,
}

impl Delay {
    /// A delay `duration` from now on the wheel of `shard`.
    pub(crate) fn after(shard: ShardRef, duration: Duration) -> Delay {
        Delay {
            entry: SharedEntry::delay_after(&shard, duration),
            _claim: shard,
        }
    }

    /// A delay until `deadline` on the wheel of `shard`.
    pub(crate) fn until(shard: ShardRef, deadline: Instant) -> Delay {
        Delay {
            entry: SharedEntry::delay_at(&shard, deadline),
            _claim: shard,
        }
    }

    /// A handle that can cancel this delay from anywhere.
    pub fn handle(&self) -> TimeoutHandle {
        TimeoutHandle {
            entry: self.entry.clone(),
        }
    }

    /// The instant at which this delay expires.
    pub fn deadline(&self) -> Instant {
        self.entry.deadline()
    }
}

impl Future for Delay {
    type Output = Result<(), Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // The task's budget, spent as by a `Sleep`.
        ready!(coop::poll_budget(cx));
        let outcome = ready!(self.entry.poll(cx));
        coop::spend(cx);
        Poll::Ready(match outcome {
            Outcome::Expired => Ok(()),
            Outcome::Cancelled => Err(Error::cancelled()),
            Outcome::Shutdown => Err(Error::shutdown()),
        })
    }
}

impl Drop for Delay {
    fn drop(&mut self) {
        self.entry.release();
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
/// reporting how it ended; it never touches another timer, even one that
/// reuses the wheel slot.
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
    entry: Arc<SharedEntry>,
}

impl TimeoutHandle {
    /// The handle of a scheduled future's entry (`spawn_after`).
    pub(crate) fn of(entry: Arc<SharedEntry>) -> TimeoutHandle {
        TimeoutHandle { entry }
    }

    /// Cancels the delay: it resolves to an error for which
    /// [`Error::is_cancelled`] holds, and its entry leaves the wheel now.
    ///
    /// Returns `true` if this call cancelled a pending delay, `false` if it
    /// had already expired, been cancelled, or been dropped. Cancelling a
    /// scheduled task drops its future without running it.
    pub fn cancel(&self) -> bool {
        self.entry.cancel()
    }

    /// Whether the delay was cancelled, through a handle or by being dropped
    /// before it expired.
    pub fn is_cancelled(&self) -> bool {
        self.entry.is_cancelled()
    }

    /// Whether the delay has expired: its deadline passed and the wheel
    /// fired it (for a scheduled task: the task was spawned).
    pub fn is_expired(&self) -> bool {
        self.entry.is_expired()
    }

    /// The instant at which the delay expires.
    pub fn deadline(&self) -> Instant {
        self.entry.deadline()
    }
}

// ===== impl Wheel =====

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
        let shard = self.claim_or_panic("delay");
        Delay::after(shard, duration)
    }

    /// Like [`delay`](Wheel::delay), but returns an error when the wheel is
    /// at capacity.
    ///
    /// # Errors
    ///
    /// [`Error::is_at_capacity`] when `max_pending` timers are alive.
    pub fn try_delay(&self, duration: Duration) -> Result<Delay, Error> {
        let shard = self.claim()?;
        Ok(Delay::after(shard, duration))
    }

    /// A cancellable [`Delay`] that expires at `deadline`.
    ///
    /// # Panics
    ///
    /// When the wheel is at capacity; see [`try_delay_at`](Wheel::try_delay_at).
    #[track_caller]
    pub fn delay_at(&self, deadline: Instant) -> Delay {
        let shard = self.claim_or_panic("delay_at");
        Delay::until(shard, deadline)
    }

    /// Like [`delay_at`](Wheel::delay_at), but returns an error when the
    /// wheel is at capacity.
    ///
    /// # Errors
    ///
    /// [`Error::is_at_capacity`] when `max_pending` timers are alive.
    pub fn try_delay_at(&self, deadline: Instant) -> Result<Delay, Error> {
        let shard = self.claim()?;
        Ok(Delay::until(shard, deadline))
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
/// Outside a tokio runtime, and when the default wheel is at capacity.
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
    Delay::after(registry::claim("delay"), duration)
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
/// Outside a tokio runtime, and when the default wheel is at capacity.
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
    Delay::until(registry::claim("delay_at"), deadline)
}
