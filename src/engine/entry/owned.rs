//! An owned entry: the variant of the entry protocol (see [`super`]) behind
//! a `Sleep`, which alone polls, moves and cancels it, until the driver
//! takes it at its tick.
//!
//! # Invariants
//!
//! - `state` says whether the entry exists: `Registered` while `key` names
//!   an entry in the shard of `shard`, which holds the waker whose id is
//!   `waker`; `Unchecked` before the first poll (and after a reset that
//!   found the entry gone), `Reached` instead when the one who set the
//!   deadline knew it had passed; `Done` once it completed.
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
    /// An entry on the wheel of `shard` whose deadline is set later, by
    /// [`start`](OwnedEntry::start), before its first poll or reset (for a
    /// `LazyTimeout` made on a held wheel).
    pub(crate) fn unstarted(shard: ShardRef) -> OwnedEntry {
        OwnedEntry::new(shard, Deadline::ORIGIN)
    }

    /// Sets the deadline of an [`unstarted`](OwnedEntry::unstarted) sleep.
    #[inline]
    pub(crate) fn start(&mut self, deadline: Deadline) {
        debug_assert!(self.state == State::Unchecked && !self.touched);
        self.deadline = deadline;
    }

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

    /// Whether the timer has fired: it was polled or reset, and its tick
    /// has elapsed (see [`ShardRef::is_elapsed`]).
    pub(crate) fn is_elapsed(&self) -> bool {
        self.state == State::Done || (self.touched && self.shard.is_elapsed(self.deadline))
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
        if self.state != State::Registered
            || !self
                .shard
                .reset_owned(self.key, old, deadline, reached, &mut self.shares_word)
        {
            self.leave_entry(match reached {
                Reached::Yes => State::Reached,
                Reached::Unknown => State::Unchecked,
            });
        }
    }

    /// The entry is gone (fired, or removed): its slot's word is another
    /// entry's from now on.
    fn leave_entry(&mut self, state: State) {
        self.state = state;
        self.shares_word = false;
    }

    /// Polls the timer: registers its entry on the first poll, and keeps
    /// `cx`'s waker until it completes.
    #[inline]
    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.touched = true;
        match self.state {
            State::Done => Poll::Ready(()),
            State::Registered => {
                if self
                    .shard
                    .poll_owned(self.key, self.deadline, cx.waker(), &mut self.waker)
                    .is_ready()
                {
                    self.leave_entry(State::Done);
                    Poll::Ready(())
                } else {
                    Poll::Pending
                }
            }
            State::Unchecked => match self.shard.file_owned(self.deadline, cx.waker()) {
                Registration::Key(key) => {
                    self.key = key;
                    self.waker = WakerId::of(cx.waker());
                    debug_assert!(!self.shares_word, "a word is its entry's");
                    self.state = State::Registered;
                    Poll::Pending
                }
                Registration::Passed | Registration::Shutdown => {
                    self.state = State::Done;
                    Poll::Ready(())
                }
            },
            State::Reached => {
                self.state = State::Done;
                Poll::Ready(())
            }
        }
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
            self.shard.cancel_owned(self.key, self.deadline);
        }
    }
}
