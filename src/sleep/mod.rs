use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::Instant;

use crate::coop;
use crate::engine::clock::Reached;
use crate::engine::entry::owned::OwnedEntry;
use crate::engine::shards::ShardRef;
use crate::engine::tokio_reliance::sleep_duration;
use crate::error::Error;
use crate::wheel::{claim_default, try_claim_default};

pub(crate) mod lazy;

/// A future that completes at a deadline, made by
/// [`sleep`](fn@crate::sleep) or [`sleep_until`](fn@crate::sleep_until) on
/// the runtime's default wheel, or by [`Wheel::sleep`](crate::Wheel::sleep)
/// or [`Wheel::sleep_until`](crate::Wheel::sleep_until) on a given one; each
/// has a `try_` twin ([`try_sleep`](fn@crate::try_sleep),
/// [`Wheel::try_sleep`](crate::Wheel::try_sleep), ...) that returns an
/// error where it would panic.
///
/// It completes at the first tick of its wheel at or after the deadline:
/// never before the deadline, at most one tick (plus scheduling) after it.
/// A deadline already reached at its first poll (`Duration::ZERO`, an
/// instant in the past) completes on that poll, whatever the tick, without
/// touching the wheel; only while the wheel's driver is itself late for an
/// earlier tick (a blocked runtime) can it wait for that driver's pass,
/// still within a tick.
///
/// Unlike tokio's `Sleep`, it is [`Unpin`]: `tokio::select!` can poll
/// `&mut sleep` in a loop without `tokio::pin!`. It registers with its
/// wheel only at its first poll. Dropping it cancels its timer and drops
/// its waker at once.
///
/// It takes part in tokio's [cooperative scheduling](tokio::task::coop) as
/// tokio's `Sleep` does: each completion spends a unit of the task's
/// budget, so a task that keeps awaiting completed sleeps lets the
/// runtime's other tasks run once its budget is spent.
///
/// Far deadlines behave as with tokio: a duration over 30 years
/// (`Duration::MAX` among them) lands 30 years from now, where
/// `tokio::time::sleep` puts it, and a deadline more than 2^63 ns (about 292
/// years) after the wheel was built is moved to that point. Either way
/// the sleep completes there, so a paused-clock test that awaits it
/// auto-advances to it instead of hanging; nothing overflows or panics.
/// After the wheel shuts down, or its runtime goes away, a pending `Sleep`
/// completes as if its deadline had passed, so that no task waits forever
/// on a dead wheel.
///
/// # Cancel safety
///
/// Cancel safe: polling `&mut sleep` in a `select!` branch that loses
/// keeps its place in the wheel.
///
/// # Examples
///
/// Reset a sleep on every event, the idle-timeout pattern:
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use tokio::time::Instant;
///
/// let wheel = hashwheel::Wheel::new();
/// let (tx, mut rx) = tokio::sync::mpsc::channel::<u32>(8);
/// tokio::spawn(async move {
///     for i in 0..3 {
///         tokio::time::sleep(Duration::from_millis(50)).await;
///         tx.send(i).await.unwrap();
///     }
/// });
/// let idle = Duration::from_millis(100);
/// let mut sleep = wheel.sleep(idle);
/// let mut got = 0;
/// loop {
///     tokio::select! {
///         Some(_) = rx.recv() => {
///             got += 1;
///             sleep.reset(Instant::now() + idle);
///         }
///         _ = &mut sleep => break,
///     }
/// }
/// assert_eq!(got, 3);
/// # }
/// ```
#[must_use = "futures do nothing unless you `.await` or poll them"]
#[derive(Debug)]
pub struct Sleep {
    entry: OwnedEntry,
}

impl Sleep {
    /// A sleep `duration` from now on the wheel of `shard`.
    pub(crate) fn after(shard: ShardRef, duration: Duration) -> Sleep {
        Sleep::started(shard, sleep_duration(duration))
    }

    /// A sleep until `deadline` on the wheel of `shard`.
    pub(crate) fn until(shard: ShardRef, deadline: Instant) -> Sleep {
        let at = shard.deadline_at(deadline);
        let entry = OwnedEntry::new(shard, at);
        Sleep { entry }
    }

    /// A sleep `limit` from now on the wheel of `shard`: a
    /// [`LazySleep`](lazy::LazySleep) starting. The limit counts as a
    /// timeout's does (`Duration::MAX` is 30 years), not clamped as
    /// [`after`](Sleep::after)'s.
    #[inline]
    pub(crate) fn started(shard: ShardRef, limit: Duration) -> Sleep {
        let at = shard.deadline_after(limit);
        let entry = OwnedEntry::new(shard, at);
        Sleep { entry }
    }

    /// The instant at which this sleep completes.
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
    /// let at = Instant::now() + Duration::from_secs(3);
    /// assert_eq!(wheel.sleep_until(at).deadline(), at);
    /// # }
    /// ```
    pub fn deadline(&self) -> Instant {
        self.entry.deadline()
    }

    /// Whether this sleep's timer has fired: it has been polled or reset,
    /// and the tick of its deadline has come (on a multi-thread runtime:
    /// has been processed by the wheel's driver, as tokio's answer comes
    /// from its driver).
    /// As with tokio's `Sleep`, a sleep that was never polled nor reset is
    /// not elapsed, even when its deadline has passed.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let mut sleep = wheel.sleep(Duration::from_millis(10));
    /// assert!(!sleep.is_elapsed());
    /// (&mut sleep).await;
    /// assert!(sleep.is_elapsed());
    /// # }
    /// ```
    pub fn is_elapsed(&self) -> bool {
        self.entry.is_elapsed()
    }

    /// Moves the deadline to `deadline`, whether or not the sleep has
    /// completed: a completed sleep becomes pending again.
    ///
    /// O(1), and nothing is allocated. As with tokio's timer, a deadline
    /// moved later never wakes the task at the old one. Moving a deadline
    /// later, as an idle timeout reset on every message does, is the
    /// cheapest case: one that stays within the same wheel tick changes
    /// nothing, and after the first move the others cost a single write. A
    /// deadline moved into the past completes the sleep and wakes the task
    /// that last polled it.
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
    /// let mut sleep = wheel.sleep(Duration::from_millis(10));
    /// sleep.reset(start + Duration::from_millis(30));
    /// (&mut sleep).await;
    /// assert!(start.elapsed() >= Duration::from_millis(30));
    /// # }
    /// ```
    #[inline]
    pub fn reset(&mut self, deadline: Instant) {
        self.entry.reset(deadline, Reached::Unknown);
    }

    /// [`reset`](Sleep::reset), for a caller that knows whether `deadline`
    /// has passed (`reached`).
    pub(crate) fn reset_known(&mut self, deadline: Instant, reached: Reached) {
        self.entry.reset(deadline, reached);
    }

    /// Polls the sleep through a `&mut` (for the timers built on it),
    /// spending the task's budget as tokio's `Sleep` does
    /// ([`coop::budgeted`]).
    #[inline]
    pub(crate) fn poll_sleep(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        coop::budgeted(cx, |cx| self.entry.poll(cx))
    }

    /// Polls the sleep without touching the task's budget: for a timer
    /// that spends the budget itself (a timeout's, through
    /// [`coop::budgeted_after`]).
    #[inline]
    pub(crate) fn poll_unbudgeted(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.entry.poll(cx)
    }
}

impl Future for Sleep {
    type Output = ();

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.get_mut().poll_sleep(cx)
    }
}

// ===== on the default wheel =====

/// Waits until `duration` has elapsed, on the current runtime's default
/// wheel: a drop-in for `tokio::time::sleep`.
///
/// The same as [`Wheel::current()`](crate::Wheel::current)`.sleep(duration)`,
/// without the clone. The [`Sleep`] completes at the first tick (1 ms by
/// default) at or after the deadline, never before it, and is [`Unpin`].
/// `Duration::ZERO` completes on the first poll; `Duration::MAX` lands 30
/// years from now, as `tokio::time::sleep` puts it.
///
/// # Cancel safety
///
/// Cancel safe, as [`Sleep`] is.
///
/// # Panics
///
/// Outside a tokio runtime, in one built without its timer, and when the
/// default wheel is at its [`max_timers`](crate::Builder::max_timers)
/// bound (see [`Builder::build_default`](crate::Builder::build_default));
/// [`try_sleep`] returns an error instead.
///
/// ```should_panic
/// use std::time::Duration;
///
/// // No runtime here: "hashwheel::sleep must be called from the context
/// // of a Tokio 1.x runtime".
/// let _sleep = hashwheel::sleep(Duration::from_millis(10));
/// ```
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use hashwheel::sleep;
/// use tokio::time::Instant;
///
/// let start = Instant::now();
/// sleep(Duration::from_millis(100)).await;
/// assert!(start.elapsed() >= Duration::from_millis(100));
/// # }
/// ```
#[track_caller]
pub fn sleep(duration: Duration) -> Sleep {
    Sleep::after(claim_default("sleep"), duration)
}

/// Like [`sleep`], but returns an error where it would panic.
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
/// hashwheel::try_sleep(Duration::from_millis(10))?.await;
/// # Ok(())
/// # }
/// ```
pub fn try_sleep(duration: Duration) -> Result<Sleep, Error> {
    Ok(Sleep::after(try_claim_default()?, duration))
}

/// Waits until `deadline`, on the current runtime's default wheel: a
/// drop-in for `tokio::time::sleep_until`.
///
/// A deadline in the past completes on the first poll.
///
/// # Cancel safety
///
/// Cancel safe, as [`Sleep`] is.
///
/// # Panics
///
/// Outside a tokio runtime, in one built without its timer, and when the
/// default wheel is at capacity; [`try_sleep_until`] returns an error
/// instead.
///
/// ```should_panic
/// // No runtime here.
/// let _sleep = hashwheel::sleep_until(tokio::time::Instant::now());
/// ```
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use hashwheel::sleep_until;
/// use tokio::time::Instant;
///
/// let deadline = Instant::now() + Duration::from_millis(10);
/// sleep_until(deadline).await;
/// assert!(Instant::now() >= deadline);
/// # }
/// ```
#[track_caller]
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep::until(claim_default("sleep_until"), deadline)
}

/// Like [`sleep_until`], but returns an error where it would panic.
///
/// # Errors
///
/// As [`try_sleep`]: [`Error::is_no_runtime`], [`Error::is_no_timer`] or
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
/// hashwheel::try_sleep_until(Instant::now() + Duration::from_millis(10))?.await;
/// # Ok(())
/// # }
/// ```
pub fn try_sleep_until(deadline: Instant) -> Result<Sleep, Error> {
    Ok(Sleep::until(try_claim_default()?, deadline))
}

#[cfg(all(test, not(loom)))]
mod tests;
