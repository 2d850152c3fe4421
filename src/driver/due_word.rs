//! The due tick of a sleep that keeps moving its deadline later (an idle
//! timer reset on every message), kept in a word that the sleep and the
//! driver share, so that a move later takes no shard lock.
//!
//! # Ground rules
//!
//! - A sleep gets a [`DueWord`] at its first move to a later tick, which
//!   files the word with its entry under the shard lock (see
//!   `Shard::reset`). From then on the entry's due tick is the word's, for
//!   the sleep and for the driver; the entry itself stays filed at the tick
//!   it had, and the driver files it again when it meets it there.
//! - The word holds the entry's due tick, or `FIRED` once the driver has
//!   claimed the entry (which it then removes, under the same lock, and
//!   whose waker it wakes).
//! - Two parties write it: the sleep that owns it and the driver. The
//!   driver writes only under the shard lock, with a compare-and-swap from
//!   the tick it read to `FIRED` ([`DueWord::claim`]). The sleep writes
//!   under the lock (a move earlier) or, to move it later, with a
//!   compare-and-swap from the tick it last gave to the new one
//!   ([`DueWord::move_later`]). Exactly one of a move and a claim of the
//!   same tick wins: a sleep whose move fails knows the driver has its
//!   entry and registers again; a driver whose claim fails reads the new
//!   tick and files the entry there, waking no one.
//! - A word is only written while its entry is in the wheel, or in the one
//!   race above; a sleep drops its word when it registers a new entry.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::sync::{Arc, AtomicU64, Ordering};

/// In a [`DueWord`]: the driver has claimed the entry.
const FIRED: u64 = u64::MAX;

/// A sleep's due tick, shared with the driver (see the module docs).
#[derive(Debug)]
pub(crate) struct DueWord(AtomicU64);

impl DueWord {
    pub(crate) fn new(tick: u64) -> DueWord {
        debug_assert_ne!(tick, FIRED);
        DueWord(AtomicU64::new(tick))
    }

    /// The due tick, or `None` once the driver has claimed the entry.
    pub(crate) fn tick(&self) -> Option<u64> {
        match self.0.load(Ordering::Acquire) {
            FIRED => None,
            tick => Some(tick),
        }
    }

    /// The sleep moves its due tick from `old`, the tick it last gave, to
    /// `new`. `false`: the driver claimed the entry first.
    pub(crate) fn move_later(&self, old: u64, new: u64) -> bool {
        debug_assert!(new > old && new != FIRED);
        match self
            .0
            .compare_exchange(old, new, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => true,
            Err(found) => {
                debug_assert_eq!(found, FIRED, "only the driver changes a sleep's word");
                false
            }
        }
    }

    /// The sleep sets its due tick under the shard lock, where the driver
    /// cannot claim the entry (a move earlier, which also moves the entry).
    pub(crate) fn set(&self, tick: u64) {
        debug_assert_ne!(tick, FIRED);
        debug_assert_ne!(self.tick(), None, "a claimed entry is not moved");
        self.0.store(tick, Ordering::Release);
    }

    /// The driver, under the shard lock, at tick `now`: claims the entry if
    /// its due tick has come (`Ok`), or returns the later tick it has moved
    /// to, where the entry is to be filed again.
    pub(crate) fn claim(&self, now: u64) -> Result<(), u64> {
        let mut due = self.0.load(Ordering::Acquire);
        loop {
            debug_assert_ne!(due, FIRED, "an entry is claimed once");
            if due > now {
                return Err(due);
            }
            match self
                .0
                .compare_exchange(due, FIRED, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Ok(()),
                Err(moved) => due = moved,
            }
        }
    }
}

/// A shard's due words, by entry key: the driver's way from an entry to
/// its word. Only sleeps that moved later have one.
pub(crate) type Words = HashMap<u32, Arc<DueWord>, BuildHasherDefault<KeyHasher>>;

/// Hashes an entry key with one multiplication: keys are slab indices,
/// chosen by the shard, not by anyone who could pick colliding ones.
#[derive(Debug, Default)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.mix(u64::from(*b));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.mix(u64::from(n));
    }
}

impl KeyHasher {
    fn mix(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(8) ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_claim_and_a_move_of_the_same_tick_exclude_each_other() {
        let w = DueWord::new(5);
        assert!(w.move_later(5, 9));
        assert_eq!(w.claim(6), Err(9), "moved later: filed again");
        assert_eq!(w.claim(9), Ok(()));
        assert_eq!(w.tick(), None);
        assert!(!w.move_later(9, 12), "claimed: the move fails");
    }

    #[test]
    fn a_word_set_earlier_is_claimed_at_its_new_tick() {
        let w = DueWord::new(20);
        w.set(4);
        assert_eq!(w.tick(), Some(4));
        assert_eq!(w.claim(3), Err(4));
        assert_eq!(w.claim(4), Ok(()));
    }
}
