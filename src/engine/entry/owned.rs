//! An owned entry: the variant of the entry protocol (see [`super`]) behind
//! a `Sleep` (and a `DelayQueue`'s alarm), which alone polls, moves and
//! cancels it, until the driver takes it at its tick.
//!
//! # Invariants
//!
//! - `state` says whether the entry exists: `Registered` while `key` names
//!   an entry in the shard of `shard`, which holds the waker whose id is
//!   `waker`; `Unchecked` before the first poll (and after a reset that
//!   found the entry gone), `Reached` instead when the one who set the
//!   deadline knew it had passed; `Done` once it completed (or the driver
//!   took it, as [`OwnedEntry::take_fired`] finds).
//! - `shares_word` is set once a reset has shared the entry's due word,
//!   and cleared whenever the entry is gone.
//! - `deadline` is the one the entry is filed for: every call to the
//!   shard passes it, never a stale one.

use std::task::{Context, Poll};

use tokio::time::Instant;

use crate::engine::clock::{Deadline, Reached};
use crate::engine::shard::Registration;
use crate::engine::shards::ShardRef;
use crate::engine::waker_id::WakerId;

/// A `Sleep`'s hold on the wheel: its deadline, and its entry once it has one.
#[derive(Debug)]
pub(crate) struct OwnedEntry {
    shard: ShardRef,
    /// Finite: far deadlines are clamped (see `engine::clock`).
    deadline: Deadline,
    key: u32,
    /// The waker the entry holds, while `Registered`: a poll with that
    /// waker takes no lock.
    waker: WakerId,
    /// A reset moved the entry to a later tick, which shared its due
    /// word: later moves then take no lock.
    shares_word: bool,
    state: State,
    /// Polled or reset at least once: only then can it have fired, as in
    /// tokio, whose `Sleep` makes its timer on the first poll or reset.
    touched: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Not registered yet.
    Unchecked,
    /// Not registered, and the deadline had passed when it was set: the
    /// first poll completes it.
    Reached,
    /// Has an entry under `key`.
    Registered,
    /// Completed.
    Done,
}

impl OwnedEntry {
    /// The hold on the entry's shard.
    #[inline]
    pub(crate) fn shard(&self) -> &ShardRef {
        &self.shard
    }

    /// An entry due at `deadline`.
    pub(crate) fn new(shard: ShardRef, deadline: Deadline) -> OwnedEntry {
        OwnedEntry {
            shard,
            deadline,
            key: 0,
            waker: WakerId::NONE,
            shares_word: false,
            touched: false,
            state: State::Unchecked,
        }
    }

    /// The instant at which the entry is due.
    pub(crate) fn deadline(&self) -> Instant {
        self.shard.core().clock.instant_of(self.deadline)
    }

    /// Whether the timer has fired: it was polled or reset, and the tick of
    /// its deadline has elapsed, by the same rule as a first poll (see the
    /// ground rules in [`super`]): by the clock where it can pause,
    /// otherwise by how far the shard has processed.
    pub(crate) fn is_elapsed(&self) -> bool {
        if self.state == State::Done || !self.touched {
            return self.state == State::Done;
        }
        let clock = &self.shard.core().clock;
        if clock.pausable() {
            self.tick() <= clock.now_tick()
        } else {
            self.shard.get().is_processed(self.tick())
        }
    }

    /// Moves the deadline to `deadline`, whether or not the timer has
    /// completed (see the ground rules in [`super`] for what each move
    /// costs); `reached` is what the caller knows of whether it has passed.
    #[inline]
    pub(crate) fn reset(&mut self, deadline: Instant, reached: Reached) {
        let at = self.shard.core().clock.deadline_of(deadline);
        self.reset_to(at, reached);
    }

    /// Moves the deadline to `deadline` (see [`reset`](OwnedEntry::reset)).
    #[inline]
    pub(crate) fn reset_to(&mut self, deadline: Deadline, reached: Reached) {
        let old = std::mem::replace(&mut self.deadline, deadline);
        self.touched = true;
        if self.state != State::Registered || !self.move_entry(old, reached) {
            self.leave_entry(match reached {
                Reached::Yes => State::Reached,
                Reached::Unknown => State::Unchecked,
            });
        }
    }

    /// Moves the registered entry from deadline `old` to `self.deadline`.
    /// `false` when it no longer has an entry (see `Shard::reset`): then
    /// the sleep registers again on its next poll. The first move later
    /// shares the entry's due word with the sleep.
    #[inline]
    fn move_entry(&mut self, old: Deadline, reached: Reached) -> bool {
        let (shard, core) = (self.shard.get(), self.shard.core());
        let (old, tick) = (core.clock.tick_of(old), self.tick());
        // A deadline known to be reached completes now, whatever its tick.
        if tick >= old && reached != Reached::Yes && !core.is_shutdown() {
            // Whether the driver has the entry already, as the locked path
            // would find it.
            if shard.is_processed(old) {
                return false;
            }
            if tick == old {
                // The same tick: the entry, and what the shard would
                // answer, stay as they are. No lock.
                return true;
            }
            // Later: the word, if the entry has one, is all that changes
            // (no lock), unless the driver fires the entry first.
            if self.shares_word {
                return shard.directory.move_later(self.key, old, tick);
            }
            self.shares_word = shard.reset(self.key, old, tick, 0, true);
            return self.shares_word;
        }
        // Earlier, reached, or after a shutdown (which the locked path
        // tells). A deadline its mover knows to be reached goes now, and
        // the task is woken. Otherwise only a deadline moved earlier can
        // have elapsed already, by its tick, as tokio's timer tells after a
        // move; elsewhere than where the clock can pause, that is left to
        // the driver, as tokio leaves it (no clock read).
        let now = if reached == Reached::Yes {
            tick
        } else if tick >= old || !core.clock.pausable() {
            0
        } else {
            core.clock.now_tick()
        };
        shard.reset(self.key, old, tick, now, false)
    }

    /// The entry is gone (fired, or removed): its slot's word is another
    /// entry's from now on.
    fn leave_entry(&mut self, state: State) {
        self.state = state;
        self.shares_word = false;
    }

    /// Polls the timer: registers its entry on the first poll (none when
    /// the deadline has been reached), and keeps `cx`'s waker until it
    /// completes: `Ready` once its tick has elapsed (without the lock) or
    /// the wheel has shut down.
    #[inline]
    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.touched = true;
        let waker = cx.waker();
        match self.state {
            State::Done | State::Reached => {}
            State::Registered => {
                let (shard, tick) = (self.shard.get(), self.tick());
                if !shard.is_processed(tick) {
                    // The entry holds this waker and nobody else swaps it
                    // while the tick is ahead: the driver takes it only
                    // after publishing the tick (checked above), a shutdown
                    // only after raising its flag. So a poll with it takes
                    // no lock (see `waker_id`).
                    if self.waker.is(waker) && !shard.core.is_shutdown() {
                        return Poll::Pending;
                    }
                    if shard.poll(self.key, tick, waker).is_pending() {
                        self.waker = WakerId::of(waker);
                        return Poll::Pending;
                    }
                }
            }
            State::Unchecked => {
                let tick = self.tick();
                if !self.shard.has_passed(self.deadline, tick) {
                    if let Registration::Key(key) = self.shard.get().register(tick, waker) {
                        self.key = key;
                        self.waker = WakerId::of(waker);
                        debug_assert!(!self.shares_word, "a word is its entry's");
                        self.state = State::Registered;
                        return Poll::Pending;
                    }
                }
            }
        }
        self.leave_entry(State::Done);
        Poll::Ready(())
    }

    /// Whether the entry has fired since it was registered: its tick has
    /// been processed (the driver has removed it). It then completes; asked
    /// again, `false` until it is registered and fires again.
    pub(crate) fn take_fired(&mut self) -> bool {
        let fired = self.state == State::Registered && self.shard.get().is_processed(self.tick());
        if fired {
            self.leave_entry(State::Done);
        }
        fired
    }

    /// The tick of the deadline.
    #[inline]
    fn tick(&self) -> u64 {
        self.shard.core().clock.tick_of(self.deadline)
    }

    /// Whether a reset has shared the entry's due word with this entry.
    #[cfg(test)]
    pub(crate) fn shares_word(&self) -> bool {
        self.shares_word
    }
}

impl Drop for OwnedEntry {
    #[inline]
    fn drop(&mut self) {
        if self.state == State::Registered {
            // Unless the driver has it.
            self.shard.get().cancel(self.key, self.tick());
        }
    }
}
