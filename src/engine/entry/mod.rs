//! What a timer future asks of its shard, in deadlines: the only place
//! where a timer's deadline becomes the tick it is filed at.
//!
//! A deadline is nanoseconds from the wheel's origin (see `crate::engine::clock`).
//! Public types hold deadlines and keys; the ticks, and the clock reads that
//! compare them with now, are worked out here.
//!
//! # Ground rules
//!
//! - A timer whose deadline's tick has been processed by its first poll
//!   gets no entry: tokio's timer would fire it at once, so it completes
//!   there. Where tokio's clock can be paused (a current-thread runtime)
//!   the clock is asked which ticks have ended, as tokio's driver has
//!   processed them all whenever a task runs after `advance`; elsewhere the
//!   shard's processed tick decides, under its lock, with no clock read
//!   (see `Clock::pausable`). An entry filed for a tick that ended after
//!   the driver's last pass is expired by its next one, which the filing
//!   asks for.
//! - An owned entry (a `Sleep`'s) is filed with [`ShardRef::file_owned`]
//!   and belongs to the driver once its tick has been processed (see the
//!   `engine::shard` module docs): polling, resetting and cancelling it all go
//!   through here with the deadline it was last given, never a stale one.
//!   A poll with the waker the entry already holds, before the entry's tick
//!   and before a shutdown, returns `Pending` without the lock: the sleep
//!   keeps the [`WakerId`] of the waker it last stored. A reset to a
//!   deadline in the entry's own tick changes nothing in the shard and
//!   takes no lock either. A reset to a later tick takes the lock once, to
//!   share the entry's due word with the sleep, which keeps the word's
//!   [`Chunk`]; its later moves after that write the word without the lock
//!   (see `due_word`).
//! - A shared entry (a `Delay`'s, a scheduled future's) is filed with
//!   [`ShardRef::file_shared`]; its owner removes it (through `ShardOps`,
//!   under the shard lock).
//! - Every timer future holds a claiming [`ShardRef`], made when the timer
//!   is: its place among the wheel's `max_pending` live timers goes back
//!   when that hold is dropped, and nowhere else. A shared entry's
//!   handles reach the shard through a `ShardHold`, which claims nothing.

pub(crate) mod owned;
pub(crate) mod shared;

use std::task::{Poll, Waker};

use super::due_word::Chunk;
use super::shard::{Registration, Reset, ShardOps};
use super::waker_id::WakerId;
use crate::engine::clock::Deadline;
use crate::engine::shards::ShardRef;
use crate::engine::sync::Arc;

/// How filing a shared entry went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Filing {
    /// The entry is in the wheel, or `keep` turned it down and it was
    /// removed again.
    Filed,
    /// The deadline's tick has ended: no entry.
    Ended,
    /// The wheel has shut down: no entry.
    Shutdown,
}

impl<const CLAIMS: bool> ShardRef<CLAIMS> {
    /// Whether the tick of `deadline` has ended, by the same rule as a
    /// first poll (see the ground rules): by the clock where it can pause,
    /// otherwise by how far the shard has been processed.
    pub(crate) fn has_ended(&self, deadline: Deadline) -> bool {
        let clock = &self.core().clock;
        let tick = clock.tick_of(deadline);
        if clock.pausable() {
            tick <= clock.now_tick()
        } else {
            self.get().has_passed(tick)
        }
    }

    /// Files a sleep's entry, due at `deadline`, that wakes `waker`.
    pub(crate) fn file_owned(&self, deadline: Deadline, waker: &Waker) -> Registration {
        let clock = &self.core().clock;
        let tick = clock.tick_of(deadline);
        if clock.pausable() && tick <= clock.now_tick() {
            return Registration::Elapsed;
        }
        self.get().register(tick, waker)
    }

    /// Polls the owned entry `key`, due at `deadline`: `Ready` once its tick
    /// has been processed (without the lock) or the wheel has shut down;
    /// otherwise the entry keeps `waker`. `held` is the id of the waker the
    /// entry holds, as the sleep last learnt it: when `waker` is that one,
    /// a pending poll takes no lock (see `waker_id`).
    pub(crate) fn poll_owned(
        &self,
        key: u32,
        deadline: Deadline,
        waker: &Waker,
        held: &mut WakerId,
    ) -> Poll<()> {
        let due = self.core().clock.tick_of(deadline);
        let shard = self.get();
        if shard.has_passed(due) {
            return Poll::Ready(());
        }
        // The entry holds this waker and nobody else swaps it while the tick
        // is ahead: the driver takes it only after publishing the tick
        // (checked above), a shutdown only after raising its flag.
        if held.is(waker) && !self.core().is_shutdown() {
            return Poll::Pending;
        }
        let poll = shard.poll(key, due, waker);
        if poll.is_pending() {
            *held = WakerId::of(waker);
        }
        poll
    }

    /// Moves the owned entry `key` from deadline `old` to `new`. `false`
    /// when it no longer has an entry (see `Shard::reset`): then the sleep
    /// registers again on its next poll. `word` is the chunk of the entry's
    /// due word, once the sleep shares it.
    pub(crate) fn reset_owned(
        &self,
        key: u32,
        old: Deadline,
        new: Deadline,
        word: &mut Option<Arc<Chunk>>,
    ) -> bool {
        let clock = &self.core().clock;
        let (old, tick) = (clock.tick_of(old), clock.tick_of(new));
        if tick >= old && !self.core().is_shutdown() {
            // Whether the driver has the entry already, as the locked path
            // would find it.
            if self.get().has_passed(old) {
                return false;
            }
            if tick == old {
                // The same tick: the entry, and what the shard would
                // answer, stay as they are. No lock.
                return true;
            }
            // Later: the word, if the entry has one, is all that changes
            // (no lock), unless the driver claims the entry first.
            if let Some(chunk) = word {
                return chunk.move_later(key, old, tick);
            }
            return match self.get().reset(key, old, tick, 0, true) {
                Reset::Gone => false,
                Reset::Moved(chunk) => {
                    *word = chunk;
                    true
                }
            };
        }
        // Earlier, or after a shutdown (which the locked path tells). Only
        // a deadline moved earlier can have ended already; elsewhere than
        // where the clock can pause, that is left to the driver, as tokio
        // leaves it (no clock read; see the ground rules).
        let now = if tick >= old || !clock.pausable() {
            0
        } else {
            clock.now_tick()
        };
        matches!(
            self.get().reset(key, old, tick, now, false),
            Reset::Moved(_)
        )
    }

    /// Removes the owned entry `key`, due at `deadline`, unless the driver
    /// has it.
    pub(crate) fn cancel_owned(&self, key: u32, deadline: Deadline) {
        self.get().cancel(key, self.core().clock.tick_of(deadline));
    }

    /// Files a shared entry due at `deadline`, waking the waker `make`
    /// returns. `keep` runs under the shard lock with the new key: `false`
    /// (the owner was cancelled meanwhile) removes the entry at once.
    pub(crate) fn file_shared(
        &self,
        deadline: Deadline,
        make: impl FnOnce() -> Waker,
        keep: impl FnOnce(&mut ShardOps<'_>, u32) -> bool,
    ) -> Filing {
        let core = self.core();
        let tick = core.clock.tick_of(deadline);
        if core.clock.pausable() && tick <= core.clock.now_tick() {
            return Filing::Ended;
        }
        let (filing, kept) = self.get().with_lock(|ops| {
            if ops.is_shutdown() {
                (Filing::Shutdown, false)
            } else if tick <= ops.elapsed() {
                (Filing::Ended, false)
            } else {
                let key = ops.insert(tick, make());
                let kept = keep(ops, key);
                if !kept {
                    ops.remove(key);
                }
                (Filing::Filed, kept)
            }
        });
        if kept {
            core.wake_driver_for(tick);
        }
        filing
    }
}
