use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use pin_project_lite::pin_project;
use tokio::time::Instant;

use crate::engine::clock::instant_after;
use crate::engine::shards::ShardRef;
use crate::error::{Elapsed, Error};
use crate::sleep::lazy::{At, LazySleep};
use crate::wheel::{claim_default, try_claim_default};

pin_project! {
    /// A future with a deadline, made by
    /// [`Wheel::timeout`](crate::Wheel::timeout) or
    /// [`Wheel::timeout_at`](crate::Wheel::timeout_at).
    ///
    /// It resolves to `Ok` with the inner future's output if that completes
    /// first, or to `Err(Elapsed)` at the deadline. The inner future is polled
    /// first, so a future that is ready on its first poll completes without
    /// registering a timer at all. Its deadline is read from the clock when
    /// it is made, as tokio's is; the timer starts only at the first poll at
    /// which the future is pending. A zero duration, or a deadline already
    /// passed, times out at that poll, whatever the wheel's tick.
    ///
    /// It takes part in tokio's [cooperative scheduling](tokio::task::coop)
    /// as tokio's `Timeout` does: a ready inner future spends nothing more of
    /// the task's budget, firing spends a unit, and an inner future that
    /// used up the budget does not keep the deadline from being checked.
    ///
    /// `Timeout<F>` is [`Unpin`] when `F` is.
    ///
    /// # Cancel safety
    ///
    /// As cancel safe as the inner future: dropping the timeout drops it.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let (tx, rx) = tokio::sync::oneshot::channel::<u32>();
    /// tokio::spawn(async move {
    ///     tokio::time::sleep(Duration::from_millis(5)).await;
    ///     tx.send(7).unwrap();
    /// });
    /// let got = wheel.timeout(Duration::from_millis(10), rx).await;
    /// assert_eq!(got.unwrap().unwrap(), 7);
    /// # }
    /// ```
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    #[derive(Debug)]
    pub struct Timeout<F> {
        #[pin]
        value: F,
        timer: LazySleep<At>,
    }
}

impl<F> Timeout<F> {
    /// A timeout of `f` at `at` on the wheel of `shard`.
    pub(crate) fn new(shard: ShardRef, at: Instant, f: impl IntoFuture<IntoFuture = F>) -> Self {
        Timeout {
            value: f.into_future(),
            timer: LazySleep::Unstarted(At { shard, at }),
        }
    }

    /// The inner future.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let timeout = wheel.timeout(Duration::from_secs(1), std::future::ready(3));
    /// assert_eq!(timeout.get_ref().clone().await, 3);
    /// # }
    /// ```
    pub fn get_ref(&self) -> &F {
        &self.value
    }

    /// The inner future, mutably.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let (tx, rx) = tokio::sync::oneshot::channel::<u32>();
    /// let mut timeout = wheel.timeout(Duration::from_secs(1), rx);
    /// tx.send(5).unwrap();
    /// // Reach through to the receiver without waiting.
    /// assert_eq!(timeout.get_mut().try_recv(), Ok(5));
    /// # }
    /// ```
    pub fn get_mut(&mut self) -> &mut F {
        &mut self.value
    }

    /// Gives back the inner future, dropping the timer.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let timeout = wheel.timeout(Duration::from_millis(1), async { 9 });
    /// let work = timeout.into_inner(); // no deadline any more
    /// tokio::time::advance(Duration::from_secs(1)).await;
    /// assert_eq!(work.await, 9);
    /// # }
    /// ```
    pub fn into_inner(self) -> F {
        self.value
    }

    /// The deadline.
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
    /// let timeout = wheel.timeout(Duration::from_secs(2), async {});
    /// assert_eq!(timeout.deadline(), Instant::now() + Duration::from_secs(2));
    /// # }
    /// ```
    pub fn deadline(&self) -> Instant {
        match &self.timer {
            LazySleep::Unstarted(start) => start.at,
            LazySleep::Started(sleep) => sleep.deadline(),
        }
    }
}

impl<F: Future> Future for Timeout<F> {
    type Output = Result<F::Output, Elapsed>;

    // Inline: out of line, a timeout pending once costs more instructions
    // (op_cost).
    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        this.timer.poll_timeout(this.value, cx)
    }
}

// ===== on the default wheel =====

/// Requires `future` to complete within `duration`, timed by the current
/// runtime's default wheel: a drop-in for `tokio::time::timeout`.
///
/// The [`Timeout`] resolves to `Ok` with the future's output, or to
/// `Err(`[`Elapsed`]`)` at the deadline. The future
/// is polled first, so one that is ready at once never touches the wheel.
///
/// # Cancel safety
///
/// As cancel safe as `future`.
///
/// # Panics
///
/// Outside a tokio runtime, in one built without its timer, and when the
/// default wheel is at capacity; [`try_timeout`] returns an error instead.
///
/// ```should_panic
/// use std::time::Duration;
///
/// // No runtime here.
/// let _timeout = hashwheel::timeout(Duration::from_secs(1), async {});
/// ```
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use hashwheel::timeout;
///
/// let (_tx, rx) = tokio::sync::oneshot::channel::<()>();
/// let got = timeout(Duration::from_millis(10), rx).await;
/// assert_eq!(got.unwrap_err().to_string(), "deadline has elapsed");
///
/// assert_eq!(timeout(Duration::from_secs(1), async { 5 }).await, Ok(5));
/// # }
/// ```
#[track_caller]
pub fn timeout<F: IntoFuture>(duration: Duration, future: F) -> Timeout<F::IntoFuture> {
    Timeout::new(claim_default("timeout"), instant_after(duration), future)
}

/// Like [`timeout`](fn@timeout), but returns an error where it would panic.
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
/// let (_tx, rx) = tokio::sync::oneshot::channel::<()>();
/// assert!(hashwheel::try_timeout(Duration::from_millis(10), rx)?.await.is_err());
/// # Ok(())
/// # }
/// ```
pub fn try_timeout<F: IntoFuture>(
    duration: Duration,
    future: F,
) -> Result<Timeout<F::IntoFuture>, Error> {
    let shard = try_claim_default()?;
    Ok(Timeout::new(shard, instant_after(duration), future))
}

/// Requires `future` to complete by `deadline`, timed by the current
/// runtime's default wheel: a drop-in for `tokio::time::timeout_at`.
///
/// # Cancel safety
///
/// As cancel safe as `future`.
///
/// # Panics
///
/// Outside a tokio runtime, in one built without its timer, and when the
/// default wheel is at capacity; [`try_timeout_at`] returns an error
/// instead.
///
/// ```should_panic
/// // No runtime here.
/// let _timeout = hashwheel::timeout_at(tokio::time::Instant::now(), async {});
/// ```
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use hashwheel::timeout_at;
/// use tokio::time::Instant;
///
/// let deadline = Instant::now() + Duration::from_millis(10);
/// let slow = tokio::time::sleep(Duration::from_secs(1));
/// assert!(timeout_at(deadline, slow).await.is_err());
/// assert!(Instant::now() >= deadline);
/// # }
/// ```
#[track_caller]
pub fn timeout_at<F: IntoFuture>(deadline: Instant, future: F) -> Timeout<F::IntoFuture> {
    Timeout::new(claim_default("timeout_at"), deadline, future)
}

/// Like [`timeout_at`], but returns an error where it would panic.
///
/// # Errors
///
/// As [`try_timeout`]: [`Error::is_no_runtime`], [`Error::is_no_timer`] or
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
/// let deadline = Instant::now() + Duration::from_secs(1);
/// assert_eq!(hashwheel::try_timeout_at(deadline, async { 5 })?.await, Ok(5));
/// # Ok(())
/// # }
/// ```
pub fn try_timeout_at<F: IntoFuture>(
    deadline: Instant,
    future: F,
) -> Result<Timeout<F::IntoFuture>, Error> {
    Ok(Timeout::new(try_claim_default()?, deadline, future))
}
