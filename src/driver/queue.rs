//! What a single-owner queue (`DelayQueue`) needs from the engine, in
//! deadlines: a private hashed wheel on its wheel's clock, with no lock, and
//! one alarm on the shared wheel that wakes the queue's task when its next
//! due tick comes.
//!
//! # Invariants
//!
//! - Every value is one entry of `wheel`, filed at its deadline's tick, and
//!   never before `start`, the tick the queue was made in (a deadline from
//!   before that counts as the queue's first tick, as tokio-util counts it).
//! - A [`Due`] is a tick the queue may hold work at. The queue stores and
//!   compares them, and asks this module what deadline or instant one
//!   stands for; it never computes one.
//! - The [`QueueAlarm`] holds at most one entry of its shard, an owned one
//!   (the driver removes it once its tick is processed, as a `Sleep`'s):
//!   `entry` names it and the tick it is filed at, and `waker` is a clone
//!   of the waker it holds. The alarm forgets the entry as soon as the shard
//!   has processed its tick, and cancels it when dropped.
//! - After the shared wheel shuts down, no alarm rings again: the queue then
//!   hands out what it holds as if every deadline had passed
//!   ([`QueueWheel::expire_all`]), as a `Sleep` completes then.

use std::task::Waker;

use tokio::time::Instant;

use super::shard::{Registration, Reset};
use super::{Core, ShardRef};
use crate::clock::Clock;
use crate::clock::Deadline;
use crate::wheel::{HashedWheel, NEVER};

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

/// A single-owner hashed wheel whose entries carry a `T`, in deadlines.
#[derive(Debug)]
pub(crate) struct QueueWheel<T> {
    wheel: HashedWheel<T>,
    clock: Clock,
    slots: u64,
    start: u64,
}

impl<T> QueueWheel<T> {
    /// An empty queue wheel on `core`'s clock, with room for `capacity`.
    pub(crate) fn new(core: &Core, capacity: usize) -> QueueWheel<T> {
        let start = core.clock.now_tick();
        QueueWheel {
            wheel: HashedWheel::with_capacity(core.slots, start, capacity),
            clock: core.clock,
            slots: core.slots as u64,
            start,
        }
    }

    /// The wheel's clock, the queue's own copy: a deadline is worked out
    /// without a look through the shard.
    pub(crate) fn clock(&self) -> &Clock {
        &self.clock
    }

    fn tick_of(&self, deadline: Deadline) -> u64 {
        self.clock.tick_of(deadline).max(self.start)
    }

    /// Files `value` at `deadline`; gives it back when the wheel is full.
    pub(crate) fn insert(&mut self, deadline: Deadline, value: T) -> Result<(u32, Due), T> {
        let tick = self.tick_of(deadline);
        let key = self.wheel.insert(tick, value)?;
        Ok((key, Due(tick)))
    }

    /// Moves the entry `key` to `deadline`.
    pub(crate) fn reschedule(&mut self, key: u32, deadline: Deadline) -> Due {
        let tick = self.tick_of(deadline);
        self.wheel.reschedule(key, tick);
        Due(tick)
    }

    /// The deadline of the entry `key` as tokio-util reports it: the end of
    /// the tick it expires at.
    pub(crate) fn deadline_of(&self, key: u32) -> Instant {
        self.clock.instant_of_tick(self.wheel.tick_of(key))
    }

    /// Advances to now and says what comes next. Across more than a turn,
    /// advancing visits each bucket once, which mixes turns: the due
    /// entries are then put in deadline order, as tokio-util hands them out.
    pub(crate) fn look(&mut self) -> Look {
        if let Some(key) = self.wheel.peek_due() {
            return Look::Ready(key);
        }
        let now = self.clock.now_tick();
        let elapsed = self.wheel.elapsed();
        if now > elapsed {
            self.wheel.advance(now);
            if now - elapsed >= self.slots {
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

    pub(crate) fn remove(&mut self, key: u32) -> T {
        self.wheel.remove(key)
    }

    pub(crate) fn get(&self, key: u32) -> Option<&T> {
        self.wheel.get(key)
    }

    /// The entry that expires first.
    pub(crate) fn peek_earliest(&self) -> Option<u32> {
        self.wheel.peek_earliest()
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
    }

    /// Makes every entry due, in deadline order: for a queue whose shared
    /// wheel has shut down, which no alarm will wake again. Entries
    /// inserted afterwards are due at once.
    pub(crate) fn expire_all(&mut self) {
        self.wheel.advance(NEVER - 1);
        self.wheel.sort_due();
    }
}

/// What [`QueueAlarm::set`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ring {
    /// The waker will be woken when the tick comes.
    Set,
    /// The tick has come: the shared wheel has processed it.
    Come,
    /// The shared wheel has shut down: nothing will ring again.
    Shutdown,
}

/// The queue's one wake-up on the shared wheel: an owned entry of a shard,
/// filed at the [`Due`] the queue waits for.
#[derive(Debug)]
pub(crate) struct QueueAlarm {
    shard: ShardRef,
    /// The entry's key and the tick it is filed at, while it has one.
    entry: Option<(u32, u64)>,
    /// A clone of the waker the entry holds: a poll by the same task
    /// needs no lock.
    waker: Option<Waker>,
}

impl QueueAlarm {
    pub(crate) fn new(shard: ShardRef) -> QueueAlarm {
        QueueAlarm {
            shard,
            entry: None,
            waker: None,
        }
    }

    pub(crate) fn core(&self) -> &Core {
        self.shard.core()
    }

    /// Makes sure `waker` is woken when `due` comes. An entry filed for
    /// another tick is moved (to a later one, only its due tick is
    /// written: the driver files it again when it meets it, waking no one).
    /// Asked again for the same tick by the same task, it takes no lock.
    pub(crate) fn set(&mut self, due: Due, waker: &Waker) -> Ring {
        let shard = self.shard.get();
        if shard.core.is_shutdown() {
            (self.entry, self.waker) = (None, None);
            return Ring::Shutdown;
        }
        if let Some((key, tick)) = self.entry {
            // `now` 0: an earlier tick that has already ended is left to the
            // driver, which the move notifies.
            if tick != due.0 && matches!(shard.reset(key, tick, due.0, 0, false), Reset::Gone) {
                (self.entry, self.waker) = (None, None);
            } else {
                self.entry = Some((key, due.0));
            }
        }
        let Some((key, tick)) = self.entry else {
            return match shard.register(due.0, waker) {
                Registration::Key(key) => {
                    self.entry = Some((key, due.0));
                    self.waker = Some(waker.clone());
                    Ring::Set
                }
                Registration::Elapsed => Ring::Come,
                Registration::Shutdown => Ring::Shutdown,
            };
        };
        if self.waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
            if !shard.has_passed(tick) {
                return Ring::Set;
            }
        } else if shard.poll(key, tick, waker).is_pending() {
            self.waker = Some(waker.clone());
            return Ring::Set;
        }
        // Processed (the driver has removed the entry), or removed by a
        // shutdown that came meanwhile.
        (self.entry, self.waker) = (None, None);
        if shard.core.is_shutdown() {
            Ring::Shutdown
        } else {
            Ring::Come
        }
    }
}

impl Drop for QueueAlarm {
    fn drop(&mut self) {
        if let Some((key, tick)) = self.entry.take() {
            self.shard.get().cancel(key, tick);
        }
    }
}
