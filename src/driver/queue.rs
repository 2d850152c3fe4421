//! What a single-owner queue (`DelayQueue`) needs from the engine, in
//! deadlines: a private hashed wheel on its wheel's clock, with no lock.
//!
//! # Invariants
//!
//! - Every value is one entry of `wheel`, filed at its deadline's tick, and
//!   never before `start`, the tick the queue was made in (a deadline from
//!   before that counts as the queue's first tick, as tokio-util counts it).
//! - A [`Due`] is a tick the queue may hold work at. The queue stores and
//!   compares them, and asks this module what deadline or instant one
//!   stands for; it never computes one.

use tokio::time::Instant;

use super::Core;
use crate::clock::Clock;
use crate::clock::Deadline;
use crate::wheel::HashedWheel;

/// A moment at which the queue may have work: the end of a tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Due(u64);

/// What [`QueueWheel::look`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Look {
    /// The entry under this key is due.
    Ready(u32),
    /// Nothing is due yet; the next work can come at `due`. `come`: the
    /// clock had already reached it when looked at.
    Wait { due: Due, come: bool },
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

    /// The deadline, from the wheel's origin, at which `due` comes.
    pub(crate) fn deadline_of_due(&self, due: Due) -> Deadline {
        self.clock.deadline_of_tick(due.0)
    }

    /// The instant at which `due` comes.
    pub(crate) fn instant_of_due(&self, due: Due) -> Instant {
        self.clock.instant_of_tick(due.0)
    }

    /// Whether the clock has reached `due`.
    pub(crate) fn has_come(&self, due: Due) -> bool {
        self.clock.now_tick() >= due.0
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
            Some(tick) => Look::Wait {
                due: Due(tick),
                come: now >= tick,
            },
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
}
