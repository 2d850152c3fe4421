//! Every entry's due tick, in a word of its own: a shard's [`Words`], one
//! atomic per slab slot, in chunks that a sleep can hold on to, so that it
//! moves its deadline later without the shard lock.
//!
//! # Ground rules
//!
//! - The word of the entry `key` is slot `key % CHUNK` of chunk
//!   `key / CHUNK`. It holds the entry's due tick and two flags:
//!   [`DRIVER_REMOVES`] (a sleep's entry, which the driver removes when it
//!   fires it) and [`SHARED`] (its sleep holds the word's chunk). The due
//!   tick is at or after the tick the entry is filed at: a deadline moved
//!   later only writes the word, and the driver files the entry again when
//!   it meets it, waking no one (tokio's rule).
//! - Under the shard lock only the lock holder writes a word that is not
//!   shared: filing writes it whole, a move writes its tick.
//! - A shared word has one more writer: its sleep, which moves it later
//!   without the lock, with a compare-and-swap from the word it last wrote
//!   ([`Chunk::move_later`]). The driver fires a shared word's entry only
//!   by a compare-and-swap of its own, to `FIRED` ([`Words::fire`]). So
//!   exactly one of a move and a firing of the same tick wins: a sleep
//!   whose move fails knows the driver has its entry and registers again; a
//!   driver whose firing fails reads the new tick and files the entry there.
//! - A sleep writes its word without the lock only while its due tick is
//!   after the shard's elapsed tick. A slot is filed again only for a
//!   tick after that one, so a stale sleep's compare-and-swap can never
//!   match its slot's next entry.
//! - A chunk stays while any sleep holds it; the table drops its own
//!   chunks beyond the slab's capacity when the slab gives its memory back.
//! - Ticks stay below [`SHARED`]: the wheel's tick is at least 1 ms, so its
//!   last tick is below 2^63 / 10^6.

use std::fmt;

use crate::engine::sync::{Arc, AtomicU64, Ordering};

/// In a word: the driver removes the entry when it fires it (a sleep's).
pub(crate) const DRIVER_REMOVES: u64 = 1 << 63;

/// In a word: its sleep holds the chunk and moves the word later without
/// the lock.
const SHARED: u64 = 1 << 62;

/// A shared word whose entry the driver has fired.
const FIRED: u64 = u64::MAX;

/// The due tick's bits.
const TICK: u64 = SHARED - 1;

/// Words per chunk: a 4 KiB page; a few under loom, whose atomics are
/// costly to make.
const CHUNK: usize = if cfg!(loom) { 4 } else { 512 };

/// One chunk of a shard's words.
#[derive(Debug)]
pub(crate) struct Chunk([AtomicU64; CHUNK]);

impl Chunk {
    fn new() -> Chunk {
        Chunk(std::array::from_fn(|_| AtomicU64::new(0)))
    }

    #[inline]
    fn word(&self, key: u32) -> &AtomicU64 {
        &self.0[key as usize % CHUNK]
    }

    /// A sleep moves the due tick of its entry `key` from `old`, the tick it
    /// last gave, to the later `new`, without the lock. `false`: the driver
    /// fired the entry first.
    pub(crate) fn move_later(&self, key: u32, old: u64, new: u64) -> bool {
        debug_assert!(old < new && new <= TICK);
        const FLAGS: u64 = DRIVER_REMOVES | SHARED;
        match self.word(key).compare_exchange(
            old | FLAGS,
            new | FLAGS,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => true,
            Err(found) => {
                // Fired, or fired and filed again for a later tick by the
                // slot's next entry (see the ground rules).
                debug_assert!(found == FIRED || found & TICK > old);
                false
            }
        }
    }
}

/// A shard's words, one per slab slot (see the module docs).
#[derive(Default)]
pub(crate) struct Words {
    chunks: Vec<Arc<Chunk>>,
}

/// The number of chunks, not their words.
impl fmt::Debug for Words {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Words")
            .field("chunks", &self.chunks.len())
            .finish()
    }
}

impl Words {
    #[inline]
    fn word(&self, key: u32) -> &AtomicU64 {
        self.chunks[key as usize / CHUNK].word(key)
    }

    /// Files the word of a new entry `key`: due at `tick`, removed by the
    /// driver or not.
    #[inline]
    pub(crate) fn file(&mut self, key: u32, tick: u64, driver_removes: bool) {
        debug_assert!(tick <= TICK);
        let flag = if driver_removes { DRIVER_REMOVES } else { 0 };
        match self.chunks.get(key as usize / CHUNK) {
            Some(chunk) => chunk.word(key).store(tick | flag, Ordering::Relaxed),
            None => self.grow_to(key, tick | flag),
        }
    }

    /// Adds the chunks up to `key`'s and files its word: once per 512
    /// slots the slab grows by.
    #[cold]
    fn grow_to(&mut self, key: u32, word: u64) {
        while self.chunks.len() <= key as usize / CHUNK {
            self.chunks.push(Arc::new(Chunk::new()));
        }
        self.word(key).store(word, Ordering::Relaxed);
    }

    /// The due tick of the entry `key`, or `None` if the driver has fired
    /// it through its shared word.
    pub(crate) fn due(&self, key: u32) -> Option<u64> {
        match self.word(key).load(Ordering::Acquire) {
            FIRED => None,
            w => Some(w & TICK),
        }
    }

    /// Whether the driver removes the entry `key` when it fires it.
    pub(crate) fn driver_removes(&self, key: u32) -> bool {
        self.word(key).load(Ordering::Relaxed) & DRIVER_REMOVES != 0
    }

    /// Moves the due tick of the entry `key` to `tick`, under the lock,
    /// where the driver cannot fire it. With `share`, the word becomes
    /// shared and its chunk is returned, for the sleep to keep.
    pub(crate) fn move_to(&self, key: u32, tick: u64, share: bool) -> Option<Arc<Chunk>> {
        debug_assert!(tick <= TICK);
        let word = self.word(key);
        let w = word.load(Ordering::Relaxed);
        debug_assert_ne!(w, FIRED, "a fired entry is not moved");
        let flags = (w & !TICK) | if share { SHARED } else { 0 };
        word.store(tick | flags, Ordering::Release);
        share.then(|| self.chunks[key as usize / CHUNK].clone())
    }

    /// The driver, under the lock, at tick `now`: fires the entry `key` if
    /// its due tick has come (`Ok`, with that tick), or returns the later
    /// tick it has moved to, where the entry is to be filed again. A shared
    /// word is fired with a compare-and-swap (see the module docs); the
    /// others only read.
    pub(crate) fn fire(&self, key: u32, now: u64) -> Result<u64, u64> {
        let word = self.word(key);
        let mut w = word.load(Ordering::Acquire);
        loop {
            debug_assert_ne!(w, FIRED, "an entry is fired once");
            if w & TICK > now {
                return Err(w & TICK);
            }
            if w & SHARED == 0 {
                return Ok(w & TICK);
            }
            match word.compare_exchange(w, FIRED, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Ok(w & TICK),
                Err(moved) => w = moved,
            }
        }
    }

    /// Drops the chunks beyond a slab of `capacity` slots (after the slab
    /// gave its memory back); sleeps keep the ones they hold.
    pub(crate) fn fit(&mut self, capacity: usize) {
        self.chunks.truncate(capacity.div_ceil(CHUNK));
        self.chunks.shrink_to_fit();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn shared(words: &mut Words, key: u32, tick: u64) -> Arc<Chunk> {
        words.file(key, tick, true);
        words
            .move_to(key, tick, true)
            .expect("a shared word's chunk")
    }

    #[test]
    fn a_firing_and_a_move_of_the_same_tick_exclude_each_other() {
        let mut words = Words::default();
        let chunk = shared(&mut words, 700, 5);
        assert!(chunk.move_later(700, 5, 9));
        assert_eq!(words.fire(700, 6), Err(9), "moved later: filed again");
        assert_eq!(words.fire(700, 9), Ok(9));
        assert_eq!(words.due(700), None);
        assert!(!chunk.move_later(700, 9, 12), "fired: the move fails");
    }

    #[test]
    fn words_keep_their_flags_and_others_are_untouched() {
        let mut words = Words::default();
        words.file(3, 20, false);
        words.file(4, 20, true);
        words.move_to(4, 7, false);
        assert_eq!((words.due(3), words.due(4)), (Some(20), Some(7)));
        assert!(!words.driver_removes(3) && words.driver_removes(4));
        assert_eq!(words.fire(4, 6), Err(7));
        assert_eq!(words.fire(4, 7), Ok(7));
        assert_eq!(words.due(4), Some(7), "a word not shared is only read");
    }

    #[test]
    fn a_chunk_outlives_the_table_that_dropped_it() {
        let mut words = Words::default();
        let chunk = shared(&mut words, 1, 5);
        words.fit(0);
        assert!(words.chunks.is_empty());
        assert!(
            chunk.move_later(1, 5, 6),
            "the sleep's chunk is still there"
        );
    }
}
