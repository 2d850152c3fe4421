//! What a single-owner queue (`DelayQueue`) needs from the engine, in
//! deadlines: a private hashed wheel on its wheel's clock, with no lock, and
//! one alarm on the shared wheel that wakes the queue's task when its next
//! due tick comes.
//!
//! # Invariants
//!
//! - Every value is one entry of `wheel`, never due before `start`, the
//!   tick the queue was made in (a deadline from before that counts as the
//!   queue's first tick, as tokio-util counts it). Its due tick is the tick
//!   it is filed at plus its `later` ticks: a value moved to a later
//!   deadline while linked into a bucket stays there (moving it would
//!   unlink it from two list neighbours, a cache miss each at millions of
//!   values) and goes on to its due tick when its filed tick comes. `pushed`
//!   counts the values whose `later` is not 0; no value in the wheel's due
//!   list has one once [`QueueWheel::look`] returns.
//! - A [`Due`] is a tick the queue may hold work at. The queue stores and
//!   compares them, and asks this module what deadline or instant one
//!   stands for; it never computes one.
//! - The [`QueueAlarm`] is a `Sleep`'s owned entry (`engine::entry::owned`),
//!   set for the end of the queue's next [`Due`] tick: the driver removes
//!   it once that tick has elapsed, and a dropped alarm cancels it.
//! - After the shared wheel shuts down, no alarm rings again: the queue then
//!   hands out what it holds as if every deadline had passed
//!   ([`QueueWheel::expire_all`]), as a `Sleep` completes then.

use std::num::NonZeroU32;
use std::task::{Context, Waker};
use std::time::Duration;

use tokio::time::Instant;

use crate::engine::clock::{Clock, Deadline, Reached};
use crate::engine::core::Core;
use crate::engine::entry::owned::OwnedEntry;
use crate::engine::hashed::{HashedWheel, NEVER};
use crate::engine::shards::ShardRef;

/// A moment at which the queue may have work: the end of a tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Due(u64);

impl Due {
    /// The tick `tick` (tests).
    #[cfg(test)]
    pub(crate) fn at(tick: u64) -> Due {
        Due(tick)
    }
}

/// What [`QueueWheel::look`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Look {
    /// The entry under this key is due.
    Ready(u32),
    /// Nothing is due yet; the next work can come at this moment.
    Wait(Due),
    /// No entry will ever come due.
    Never,
}

/// A queued value, the generation of its key, and how many ticks after
/// the one it is filed at it is due. One struct, so that the two `u32`s
/// share the padding of a word-aligned `T` (a `u64` value costs 32 bytes
/// an entry, a `String` 48, as with no `later` at all). The generation is
/// never zero, which gives the wheel's `Option` of an entry a spare value.
#[derive(Debug)]
pub(crate) struct Queued<T> {
    pub(crate) value: T,
    pub(crate) generation: NonZeroU32,
    later: u32,
}

impl<T> Queued<T> {
    fn due(&self, filed: u64) -> u64 {
        filed + u64::from(self.later)
    }
}

/// A single-owner hashed wheel whose entries carry a `T`, in deadlines.
#[derive(Debug)]
pub(crate) struct QueueWheel<T> {
    wheel: HashedWheel<Queued<T>>,
    clock: Clock,
    buckets: u64,
    start: u64,
    /// Values due later than the tick they are filed at.
    pushed: usize,
}

impl<T> QueueWheel<T> {
    /// An empty queue wheel on the clock and buckets of `alarm`'s wheel,
    /// with room for `capacity` values.
    pub(crate) fn new(alarm: &QueueAlarm, capacity: usize) -> QueueWheel<T> {
        let core = alarm.core();
        let start = core.clock.now_tick();
        QueueWheel {
            wheel: HashedWheel::with_capacity(core.buckets, start, capacity),
            clock: core.clock,
            buckets: core.buckets as u64,
            start,
            pushed: 0,
        }
    }

    /// The deadline `d` from now, on the queue's own copy of the wheel's
    /// clock (no look through the shard).
    pub(crate) fn deadline_after(&self, d: Duration) -> Deadline {
        self.clock.deadline_after(d)
    }

    /// The deadline of `when`.
    pub(crate) fn deadline_at(&self, when: Instant) -> Deadline {
        self.clock.deadline_of(when)
    }

    fn tick_of(&self, deadline: Deadline) -> u64 {
        self.clock.tick_of(deadline).max(self.start)
    }

    /// Files `value` at `deadline`; gives it back when the wheel is full.
    pub(crate) fn insert(
        &mut self,
        deadline: Deadline,
        value: T,
        generation: NonZeroU32,
    ) -> Result<(u32, Due), T> {
        let tick = self.tick_of(deadline);
        let queued = Queued {
            value,
            generation,
            later: 0,
        };
        let key = self.wheel.insert(tick, queued).map_err(|q| q.value)?;
        Ok((key, Due(tick)))
    }

    /// Moves the entry `key` to `deadline`. A later deadline for an entry
    /// linked into a bucket only records how much later (see the module
    /// invariants); anything else moves the entry now.
    pub(crate) fn reschedule(&mut self, key: u32, deadline: Deadline) -> Due {
        let tick = self.tick_of(deadline);
        let later = self
            .wheel
            .filed_at(key)
            .filter(|&filed| tick > filed)
            .and_then(|filed| u32::try_from(tick - filed).ok());
        let q = self.wheel.get_mut(key).expect("a queued value");
        let was = q.later != 0;
        q.later = later.unwrap_or(0);
        if later.is_none() {
            self.wheel.reschedule(key, tick);
        }
        self.pushed = self.pushed + usize::from(later.is_some()) - usize::from(was);
        Due(tick)
    }

    /// The tick the entry `key` is due at.
    fn due_of(&self, key: u32) -> u64 {
        let (filed, q) = self.wheel.get_with_tick(key).expect("a queued value");
        q.due(filed)
    }

    /// The deadline of the entry `key` as tokio-util reports it: the end of
    /// the tick it expires at.
    pub(crate) fn deadline_of(&self, key: u32) -> Instant {
        self.clock.instant_of_tick(self.due_of(key))
    }

    /// Moves on the values that the wheel's advance found due at the tick
    /// they are filed at but that are due later: to their bucket when their
    /// tick is still ahead, else they stay due with their own tick. Returns
    /// whether the due list may be out of tick order.
    fn recheck_due(&mut self) -> bool {
        if self.pushed == 0 {
            return false;
        }
        let mut settled = 0;
        let retick = self.wheel.recheck_due(|filed, q| {
            (q.later != 0).then(|| {
                settled += 1;
                let due = q.due(filed);
                q.later = 0;
                due
            })
        });
        self.pushed -= settled;
        retick
    }

    /// Advances to now and says what comes next. Values found due at the
    /// tick they are filed at but due later move on (see the invariants).
    /// Across more than a turn, advancing visits each bucket once, which
    /// mixes turns: the due entries are then put in deadline order, as
    /// tokio-util hands them out.
    pub(crate) fn look(&mut self) -> Look {
        if let Some(key) = self.wheel.peek_due() {
            debug_assert!(self.get(key).is_some_and(|q| q.later == 0));
            return Look::Ready(key);
        }
        let now = self.clock.now_tick();
        let processed = self.wheel.processed();
        if now > processed {
            self.wheel.advance(now);
            let retick = self.recheck_due();
            if retick || now - processed >= self.buckets {
                self.wheel.sort_due();
            }
            if let Some(key) = self.wheel.peek_due() {
                return Look::Ready(key);
            }
        }
        match self.wheel.next_expiration() {
            Some(tick) => Look::Wait(Due(tick)),
            None => Look::Never,
        }
    }

    pub(crate) fn remove(&mut self, key: u32) -> Queued<T> {
        let q = self.wheel.remove(key);
        self.pushed -= usize::from(q.later != 0);
        q
    }

    pub(crate) fn get(&self, key: u32) -> Option<&Queued<T>> {
        self.wheel.get_with_tick(key).map(|(_, q)| q)
    }

    /// The entry that expires first.
    pub(crate) fn peek_earliest(&self) -> Option<u32> {
        self.wheel.peek_earliest(|filed, q| q.due(filed))
    }

    pub(crate) fn len(&self) -> usize {
        self.wheel.len()
    }

    pub(crate) fn capacity(&self) -> usize {
        self.wheel.capacity()
    }

    pub(crate) fn reserve(&mut self, additional: usize) {
        self.wheel.reserve(additional);
    }

    pub(crate) fn shrink_to_fit(&mut self) {
        self.wheel.shrink_to_fit();
    }

    pub(crate) fn clear(&mut self) {
        self.wheel.clear();
        self.pushed = 0;
    }

    /// Makes every entry due, in deadline order: for a queue whose shared
    /// wheel has shut down, which no alarm will wake again. Entries
    /// inserted afterwards are due at once.
    pub(crate) fn expire_all(&mut self) {
        self.wheel.advance(NEVER - 1);
        self.recheck_due();
        self.wheel.sort_due();
    }
}

/// What [`QueueAlarm::set`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ring {
    /// The waker will be woken when the tick comes.
    Set,
    /// The tick has elapsed: the shared wheel has processed it.
    Elapsed,
    /// The shared wheel has shut down: nothing will ring again.
    Shutdown,
}

/// The queue's one wake-up on the shared wheel: a sleep's owned entry,
/// due at the end of the [`Due`] the queue waits for.
#[derive(Debug)]
pub(crate) struct QueueAlarm(OwnedEntry);

impl QueueAlarm {
    pub(crate) fn new(shard: ShardRef) -> QueueAlarm {
        QueueAlarm(OwnedEntry::new(shard, Deadline::ORIGIN))
    }

    fn core(&self) -> &Core {
        self.0.shard().core()
    }

    /// Makes sure `waker` is woken when `due` comes: the entry is moved as
    /// a sleep's is reset (to a later tick, only its due tick is written:
    /// the driver files it again when it meets it, waking no one). Asked
    /// again for the same tick by the same task, it takes no lock.
    pub(crate) fn set(&mut self, due: Due, waker: &Waker) -> Ring {
        let at = self.core().clock.deadline_of_tick(due.0);
        self.0.reset_to(at, Reached::Unknown);
        if self.0.poll(&mut Context::from_waker(waker)).is_pending() {
            Ring::Set
        } else if self.core().is_shutdown() {
            Ring::Shutdown
        } else {
            Ring::Elapsed
        }
    }

    /// Whether the alarm has rung since it was set: its tick has come and
    /// the shared wheel has processed it (and removed its entry). The alarm
    /// then holds nothing, as after a [`set`](QueueAlarm::set) that finds
    /// [`Ring::Elapsed`]. Asked again, the answer is `false` until the alarm is
    /// set and rings again.
    pub(crate) fn take_rung(&mut self) -> bool {
        self.0.take_fired()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_stay_smaller_than_tokio_utils() {
        // tokio-util stores 56 bytes per u64 value. The key's generation is
        // never zero, so a vacant slot costs the entry no extra word, and
        // `later` fills the padding a word-aligned value leaves.
        assert_eq!(HashedWheel::<Queued<u32>>::slot_bytes(), 32);
        assert_eq!(HashedWheel::<Queued<u64>>::slot_bytes(), 32);
        assert_eq!(HashedWheel::<Queued<String>>::slot_bytes(), 48);
    }
}
