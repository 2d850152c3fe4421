//! The timer of a timeout, started at its first pending poll: a
//! [`Timeout`](crate::Timeout) knows its deadline when it is made, a
//! [`LazyTimeout`](crate::LazyTimeout) counts its limit from that poll.
//! Neither touches the wheel for a future that completes on its first poll.

use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::Instant;

use crate::engine::shards::ShardRef;
use crate::sleep::Sleep;
use crate::wheel::claim_default;

/// A [`Sleep`] made at its first poll. Until then it keeps only its
/// place on a wheel and when it is due, in the room the sleep takes later.
#[derive(Debug)]
pub(crate) enum LazySleep {
    /// Due at an instant (a `Timeout`'s).
    At {
        shard: ShardRef,
        at: Instant,
    },
    /// Due this long after its start.
    After {
        shard: ShardRef,
        limit: Duration,
    },
    /// Due this long after its start, on the default wheel of the runtime
    /// it starts on.
    OnDefault(Duration),
    Started(Sleep),
}

impl LazySleep {
    /// The deadline, once it is known: at once for [`LazySleep::At`], from
    /// the start for the others.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        match self {
            LazySleep::At { at, .. } => Some(*at),
            LazySleep::After { .. } | LazySleep::OnDefault(_) => None,
            LazySleep::Started(sleep) => Some(sleep.deadline()),
        }
    }

    /// Starts the sleep if it has not started, and polls it for a timeout
    /// whose inner future has just returned `Pending`
    /// ([`Sleep::poll_timeout`]).
    ///
    /// # Panics
    ///
    /// Starting on the default wheel: outside a tokio runtime, in one
    /// built without its timer, or while its default wheel is at capacity;
    /// the sleep is then left unstarted.
    #[inline]
    pub(crate) fn poll_timeout(&mut self, had_budget: bool, cx: &mut Context<'_>) -> Poll<()> {
        let started = match self {
            LazySleep::Started(sleep) => return sleep.poll_timeout(had_budget, cx),
            LazySleep::At { shard, at } => Sleep::until(shard.take(), *at),
            LazySleep::After { shard, limit } => Sleep::started(shard.take(), *limit),
            LazySleep::OnDefault(limit) => Sleep::started(claim_default("lazy_timeout"), *limit),
        };
        // What is replaced holds nothing now (its hold was taken): no drop
        // to run for it.
        std::mem::forget(std::mem::replace(self, LazySleep::Started(started)));
        match self {
            LazySleep::Started(sleep) => sleep.poll_timeout(had_budget, cx),
            _ => unreachable!("a lazy sleep is started above"),
        }
    }
}
