//! The timer of a timeout, started at its first pending poll: a
//! [`Timeout`](crate::Timeout) knows its deadline when it is made, a
//! [`LazyTimeout`](crate::LazyTimeout) counts its limit from that poll.
//! Neither touches the wheel for a future that completes on its first poll.

use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::time::Instant;

use crate::coop;
use crate::engine::shards::ShardRef;
use crate::error::Elapsed;
use crate::sleep::Sleep;
use crate::wheel::claim_default;

/// A [`Sleep`] made at its first poll. Until then it keeps only what
/// starts it (`S`: [`At`] or [`After`]), in the room the sleep takes later.
#[derive(Debug)]
pub(crate) enum LazySleep<S> {
    Unstarted(S),
    Started(Sleep),
}

/// What starts a [`LazySleep`].
pub(crate) trait Start {
    /// The sleep, leaving `self` holding nothing that needs a drop.
    fn start(&mut self) -> Sleep;
}

/// Due at an instant, on the wheel of `shard` (a `Timeout`'s). The
/// instant is converted to the wheel's time only at the start, so a
/// timeout whose future is ready at once converts nothing.
#[derive(Debug)]
pub(crate) struct At {
    pub(crate) shard: ShardRef,
    pub(crate) at: Instant,
}

/// Due `limit` after the start, on the wheel of `shard`, or on the default
/// wheel of the runtime it starts on (`None`).
#[derive(Debug)]
pub(crate) struct After {
    pub(crate) shard: Option<ShardRef>,
    pub(crate) limit: Duration,
}

impl Start for At {
    #[inline]
    fn start(&mut self) -> Sleep {
        Sleep::until(self.shard.take(), self.at)
    }
}

impl Start for After {
    /// # Panics
    ///
    /// On the default wheel: outside a tokio runtime, in one built without
    /// its timer, or while its default wheel is at capacity; `self` is then
    /// left as it was.
    #[inline]
    fn start(&mut self) -> Sleep {
        match self.shard.take() {
            Some(shard) => Sleep::started(shard, self.limit),
            None => Sleep::started(claim_default("lazy_timeout"), self.limit),
        }
    }
}

impl<S: Start> LazySleep<S> {
    /// Polls a timeout: its inner future `value` first and, while that is
    /// pending, this sleep, started at the first such poll, within the
    /// task's budget as [`coop::budgeted_after`] spends it.
    #[inline]
    pub(crate) fn poll_timeout<F: Future>(
        &mut self,
        value: Pin<&mut F>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<F::Output, Elapsed>> {
        let had_budget = coop::has_budget();
        if let Poll::Ready(v) = value.poll(cx) {
            return Poll::Ready(Ok(v));
        }
        if let LazySleep::Unstarted(s) = self {
            let sleep = s.start();
            // What is replaced holds nothing now: no drop to run for it.
            std::mem::forget(std::mem::replace(self, LazySleep::Started(sleep)));
        }
        let LazySleep::Started(sleep) = self else {
            unreachable!("a lazy sleep is started above")
        };
        ready!(coop::budgeted_after(had_budget, cx, |cx| sleep.poll_unbudgeted(cx)));
        Poll::Ready(Err(Elapsed(())))
    }
}
