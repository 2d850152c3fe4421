use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use pin_project_lite::pin_project;
use tokio::time::Instant;

use crate::engine::shards::ShardRef;
use crate::error::{Elapsed, Error};
use crate::sleep::lazy::{After, LazySleep};
use crate::wheel::try_claim_default;

pin_project! {
    /// A future with a time limit counted from the first poll at which it
    /// is pending, made by [`Wheel::lazy_timeout`](crate::Wheel::lazy_timeout)
    /// or [`lazy_timeout`](fn@crate::lazy_timeout).
    ///
    /// It resolves as a [`Timeout`](crate::Timeout) does: `Ok` with the
    /// inner future's output if that completes first, `Err(Elapsed)` when
    /// the time runs out. Only the start differs.
    ///
    /// - **Ready on its first poll:** no clock is read and no timer is
    ///   registered. Made by the free function, it does not
    ///   even look up the runtime or its wheel. This is the case it exists
    ///   for: a request whose data is already buffered, a cache hit.
    /// - **Pending on its first poll:** the clock is read then, and the
    ///   deadline is `duration` from that poll. From there it is a
    ///   [`Timeout`](crate::Timeout) made at that moment, to the tick. A
    ///   zero duration times out at that poll.
    ///
    /// So its deadline is never earlier than that of a `Timeout` made at
    /// the same call, and later by however long passed between the call and
    /// the first poll. Where the future is made and awaited at once
    /// (`lazy_timeout(d, f).await`) the two agree. Use
    /// [`Timeout`](crate::Timeout), the drop-in for `tokio::time::timeout`,
    /// wherever the time before the first poll must count.
    /// pingora's `fast_timeout` starts its timer the same way.
    ///
    /// It takes part in tokio's [cooperative scheduling](tokio::task::coop)
    /// as tokio's `Timeout` does.
    ///
    /// `LazyTimeout<F>` is [`Unpin`] when `F` is.
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
    /// use tokio::time::Instant;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let start = Instant::now();
    /// let t = wheel.lazy_timeout(Duration::from_millis(10), std::future::pending::<()>());
    /// // Not started yet: the 10 ms run from the first poll.
    /// assert_eq!(t.deadline(), None);
    /// tokio::time::sleep(Duration::from_millis(5)).await;
    /// assert!(t.await.is_err());
    /// assert!(start.elapsed() >= Duration::from_millis(15));
    /// # }
    /// ```
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    #[derive(Debug)]
    pub struct LazyTimeout<F> {
        #[pin]
        value: F,
        timer: LazySleep<After>,
    }
}

impl<F> LazyTimeout<F> {
    /// A lazy timeout on the wheel of `shard`, or on the default wheel of
    /// the runtime it is first pending on (`None`).
    pub(crate) fn new(shard: Option<ShardRef>, limit: Duration, value: F) -> Self {
        LazyTimeout {
            value,
            timer: LazySleep::Unstarted(After { shard, limit }),
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
    /// let timeout = wheel.lazy_timeout(Duration::from_secs(1), std::future::ready(3));
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
    /// let mut timeout = wheel.lazy_timeout(Duration::from_secs(1), rx);
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
    /// let timeout = wheel.lazy_timeout(Duration::from_millis(1), async { 9 });
    /// let work = timeout.into_inner(); // no time limit any more
    /// tokio::time::advance(Duration::from_secs(1)).await;
    /// assert_eq!(work.await, 9);
    /// # }
    /// ```
    pub fn into_inner(self) -> F {
        self.value
    }

    /// The deadline, once the timer has started (at the first poll that
    /// found the inner future pending); `None` before.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::future::{poll_fn, Future};
    /// use std::pin::Pin;
    /// use std::task::Poll;
    /// use std::time::Duration;
    /// use tokio::time::Instant;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let mut timeout = wheel.lazy_timeout(Duration::from_secs(2), std::future::pending::<()>());
    /// assert_eq!(timeout.deadline(), None);
    ///
    /// tokio::time::advance(Duration::from_secs(1)).await;
    /// let polled_at = Instant::now();
    /// // The first poll finds the future pending: the two seconds start now.
    /// poll_fn(|cx| {
    ///     assert!(Pin::new(&mut timeout).poll(cx).is_pending());
    ///     Poll::Ready(())
    /// })
    /// .await;
    /// assert!(timeout.deadline().unwrap() >= polled_at + Duration::from_secs(2));
    /// # }
    /// ```
    pub fn deadline(&self) -> Option<Instant> {
        match &self.timer {
            LazySleep::Unstarted(_) => None,
            LazySleep::Started(sleep) => Some(sleep.deadline()),
        }
    }
}

impl<F: Future> Future for LazyTimeout<F> {
    type Output = Result<F::Output, Elapsed>;

    /// # Panics
    ///
    /// Made by the free function [`lazy_timeout`](fn@crate::lazy_timeout): when
    /// the inner future is first pending outside a tokio runtime, in one
    /// built without its timer, or while the runtime's default wheel is at
    /// capacity.
    // Not inline, unlike `Timeout::poll`: inline, a lazy timeout pending
    // once costs more instructions (op_cost).
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        this.timer.poll_timeout(this.value, cx)
    }
}

// ===== on the default wheel =====

/// Requires `future` to complete within `duration` of the first poll at
/// which it is pending, timed by the default wheel of the runtime it is
/// polled on: a [`LazyTimeout`].
///
/// A future that is ready on its first poll costs no clock read, no wheel
/// access and no runtime lookup, and needs no runtime. Otherwise the
/// deadline is `duration` from that first pending poll, not from this call
/// as with [`timeout`](fn@crate::timeout) (and `tokio::time::timeout`): later by whatever time
/// passed in between, never earlier. Made and awaited at once, the two
/// agree.
///
/// # Cancel safety
///
/// As cancel safe as `future`.
///
/// # Panics
///
/// When polled, if `future` is pending on its first poll outside a tokio
/// runtime, in one built without its timer, or while that runtime's
/// default wheel is at capacity. [`try_lazy_timeout`] finds its wheel when
/// it is made, and returns an error instead.
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use hashwheel::lazy_timeout;
/// use tokio::time::Instant;
///
/// // Ready at once: no timer at all.
/// assert_eq!(lazy_timeout(Duration::from_secs(1), async { 5 }).await, Ok(5));
///
/// // Pending: the second runs from the first poll.
/// let start = Instant::now();
/// let (_tx, rx) = tokio::sync::oneshot::channel::<()>();
/// assert!(lazy_timeout(Duration::from_secs(1), rx).await.is_err());
/// assert!(start.elapsed() >= Duration::from_secs(1));
/// # }
/// ```
pub fn lazy_timeout<F: IntoFuture>(duration: Duration, future: F) -> LazyTimeout<F::IntoFuture> {
    LazyTimeout::new(None, duration, future.into_future())
}

/// Like [`lazy_timeout`](fn@lazy_timeout), but takes its place on the
/// current runtime's default wheel now, and returns an error where the
/// timeout would panic when polled.
///
/// The deadline still counts from the first poll that finds `future`
/// pending; a future ready at once still reads no clock. Only the wheel is
/// found, and a place on it claimed, when this is called (as
/// [`Wheel::try_lazy_timeout`](crate::Wheel::try_lazy_timeout) does), so
/// it needs a runtime now.
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
/// assert!(hashwheel::try_lazy_timeout(Duration::from_secs(1), rx)?.await.is_err());
/// # Ok(())
/// # }
/// ```
pub fn try_lazy_timeout<F: IntoFuture>(
    duration: Duration,
    future: F,
) -> Result<LazyTimeout<F::IntoFuture>, Error> {
    let shard = Some(try_claim_default()?);
    Ok(LazyTimeout::new(shard, duration, future.into_future()))
}
