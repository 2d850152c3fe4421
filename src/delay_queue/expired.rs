//! What a `DelayQueue` hands out: the keys to its values, and a value that
//! has left it.

use std::num::NonZeroU32;

use tokio::time::Instant;

/// A key to a value in a [`DelayQueue`](super::DelayQueue), returned by
/// [`insert`](super::DelayQueue::insert).
///
/// Keys are generational: once its value has been removed or has expired, a
/// key never reaches another value, even one stored in the same slot; the
/// `try_` methods return `None` for it and the others panic. (A queue
/// counts generations in 32 bits: only a key kept across 2^32 - 1 later
/// inserts, whose slot then holds the value of exactly the insert that
/// brought the count round, could match again.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub(super) index: u32,
    pub(super) generation: NonZeroU32,
}

/// A value that has left a [`DelayQueue`](super::DelayQueue), by expiring or by
/// [`remove`](super::DelayQueue::remove).
#[derive(Debug)]
pub struct Expired<T> {
    pub(super) value: T,
    pub(super) deadline: Instant,
    pub(super) key: Key,
}

impl<T> Expired<T> {
    /// The value.
    pub fn get_ref(&self) -> &T {
        &self.value
    }

    /// The value, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.value
    }

    /// Takes the value.
    pub fn into_inner(self) -> T {
        self.value
    }

    /// The deadline the value had.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// The key the value had. It is no longer valid.
    pub fn key(&self) -> Key {
        self.key
    }
}
