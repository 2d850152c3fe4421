//! The entry protocol: how a timer's entry in its shard is filed, polled,
//! moved, cancelled and fired. It is written here once; the shard, the due
//! words and the two variants below keep their own data, and follow it.
//!
//! This module is also the only place where a timer's deadline becomes the
//! tick it is filed at: a deadline is nanoseconds from the wheel's origin
//! (see `engine::clock`); timers hold deadlines and keys, and the ticks, and
//! the clock reads that compare them with now, are worked out here.
//!
//! # Ground rules
//!
//! 1. **One entry per timer.** A timer has at most one entry, in the shard
//!    it was made on, and reaches it through a [`ShardRef`] made when the
//!    timer was. That hold is also the timer's place among the wheel's
//!    `max_timers` live timers, given back when it is dropped and nowhere
//!    else; a shared entry's handles reach the shard through a `ShardHold`,
//!    which claims nothing.
//! 2. **Registration is lazy.** A timer gets its entry on its first poll. A
//!    timer whose deadline has been reached by then gets none: it completes
//!    there, as tokio's timer would fire it at once, even when the tick of
//!    the deadline has not ended (waiting for the tick would only make it
//!    late). The clock says whether the deadline has been reached, and is
//!    read only where it may have been: for a tick at or before the one the
//!    driver plans to wake at (`Core::wakes_by`). A later tick has not begun
//!    while the driver's alarm for that one has not fired, and once it has
//!    fired the driver's pass raises it; so the server's timers, seconds
//!    ahead of older ones, register without a clock read. (On the real
//!    clock a driver late for its alarm can leave a reached deadline of a
//!    later tick unseen: it is filed, and fired by that pass or at the end of
//!    its tick, never early.) A timer's setter that knows the deadline has
//!    been reached (`Reached::Yes`: an `Interval`, which reads the clock for
//!    its ticks) spares the read. The shard's processed tick decides the rest,
//!    under its lock. An entry filed for a tick that ended after the
//!    driver's last pass is expired by its next one, which the filing asks
//!    for. A registered entry moved earlier is a move, not a first poll: its
//!    tick decides, as tokio's timer decides after a reset (see
//!    `OwnedEntry::move_entry`).
//! 3. **The processed line.** Each shard publishes how far the driver has
//!    processed it (`processed`, an atomic written under the lock after each
//!    advance). An entry whose due tick is after that line belongs to its
//!    timer; from the moment the line reaches it, to the driver. A timer
//!    tells which side it is on from its own due tick and that atomic, so a
//!    poll after its tick completes without the lock.
//! 4. **Wakers.** An entry's waker changes only under the lock: by its
//!    timer (a poll with another waker, a cancel), by the driver once the
//!    processed line has reached the entry, or by a shutdown once
//!    `Core::shutdown` is raised. So a timer that knows which waker its entry
//!    holds (a [`WakerId`](crate::engine::waker_id::WakerId)) and sees
//!    neither can answer a poll with that waker `Pending` without the lock.
//!    Wakers are woken and dropped only after the lock is released.
//! 5. **Moves.** A deadline moved later keeps the entry where it is: the new
//!    tick goes into the entry's due word (see `engine::due_word`), and the
//!    driver files the entry again when it meets it at the old tick, waking
//!    no one (tokio's rule). A move within the entry's own tick changes
//!    nothing and takes no lock. The first move to a later tick takes the
//!    lock once, to share the word with the timer; later moves write it with
//!    a compare-and-swap and no lock. The driver fires a shared word's entry
//!    with a compare-and-swap of its own, so a move and a firing of the same
//!    tick cannot both win: the loser learns it (the timer registers again,
//!    the driver files the entry at the new tick). A deadline moved earlier
//!    moves the entry, under the lock.
//! 6. **Removal.** A cancelled entry that the wheel has not filed yet is
//!    removed at once; any other leaves its waker at once and its slot with
//!    the shard's next sweep (see `engine::shard`).
//!
//! # The two variants
//!
//! - An **owned** entry ([`owned::OwnedEntry`], a `Sleep`'s and a
//!   `DelayQueue` alarm's) is polled, moved and cancelled by its timer alone,
//!   through its [`poll`](owned::OwnedEntry::poll),
//!   [`reset`](owned::OwnedEntry::reset) and drop, always with the deadline
//!   it was last given. Its states: no entry, filed (the timer's), taken by the
//!   driver at its tick (which removes it while it fires it, under the lock
//!   it holds anyway), done. A timer whose entry was taken registers again
//!   if it is reset.
//! - A **shared** entry ([`shared::SharedEntry`], a `Delay`'s and a
//!   scheduled future's) can be cancelled from any thread by its handles,
//!   so its fate is one atomic word: pending (with or without an entry),
//!   expired, cancelled, shut down. It moves out of pending once, by a
//!   compare-and-swap; every move that removes the entry (a handle's cancel,
//!   the owner's drop, a scheduled future's settling) happens under the
//!   shard lock, so the entry is removed exactly once. The driver never
//!   removes it: it fires the entry by waking it (the entry is its own
//!   waker), which settles the word, and leaves the slot to the owner. It is
//!   filed with [`ShardRef::file_shared`].

pub(crate) mod owned;
pub(crate) mod shared;

use std::task::Waker;

use super::shard::Registration;
use crate::engine::clock::Deadline;
use crate::engine::shards::ShardRef;

impl<const CLAIMS: bool> ShardRef<CLAIMS> {
    /// Whether `deadline`, due at `tick`, has been reached, by the clock,
    /// read only where it may have been (see the ground rules).
    #[inline]
    fn has_passed(&self, deadline: Deadline, tick: u64) -> bool {
        let core = self.core();
        // A tick after the one the driver wakes at has not begun (tick 0
        // wraps: it has ended, which the shard's processed tick tells).
        !core.wakes_by(tick.wrapping_sub(1)) && core.clock.reached(deadline)
    }

    /// Files a shared entry due at `deadline`, waking the waker `make`
    /// returns. `keep` runs under the shard lock with the new key: `false`
    /// (the owner was cancelled meanwhile) removes the entry at once, and
    /// the key returned names none.
    pub(crate) fn file_shared(
        &self,
        deadline: Deadline,
        make: impl FnOnce() -> Waker,
        keep: impl FnOnce(u32) -> bool,
    ) -> Registration {
        let core = self.core();
        let tick = core.clock.tick_of(deadline);
        if self.has_passed(deadline, tick) {
            return Registration::Passed;
        }
        let (registration, kept) = self.get().with_lock(|ops| {
            if ops.is_shutdown() {
                return (Registration::Shutdown, false);
            } else if tick <= ops.processed() {
                return (Registration::Passed, false);
            }
            let key = ops.insert(tick, make());
            let kept = keep(key);
            if !kept {
                ops.remove(key);
            }
            (Registration::Key(key), kept)
        });
        if kept {
            core.wake_driver_for(tick);
        }
        registration
    }
}
