//! Every entry's due tick, in a word of its own: a shard's [`Words`], one
//! atomic per slab slot, in chunks that a sleep reaches through its shard
//! without the lock, so that it moves its deadline later without the shard
//! lock.
//!
//! # Ground rules
//!
//! - The word of the entry `key` is slot `key % CHUNK` of chunk
//!   `key / CHUNK`. It holds the entry's due tick and two flags:
//!   [`DRIVER_REMOVES`] (a sleep's entry, which the driver removes when it
//!   fires it) and [`SHARED`] (its sleep writes it too). The due
//!   tick is at or after the tick the entry is filed at: a deadline moved
//!   later only writes the word, and the driver files the entry again when
//!   it meets it, waking no one (tokio's rule).
//! - Under the shard lock only the lock holder writes a word that is not
//!   shared: filing writes it whole, a move writes its tick.
//! - A shared word has one more writer: its sleep, which moves it later
//!   without the lock, with a compare-and-swap from the word it last wrote
//!   ([`Words::move_later`]). The driver fires a shared word's entry only
//!   by a compare-and-swap of its own, to `FIRED` ([`Words::claim`]). So
//!   exactly one of a move and a firing of the same tick wins: a sleep
//!   whose move fails knows the driver has its entry and registers again; a
//!   driver whose claim fails reads the new tick and files the entry there.
//! - A sleep writes its word without the lock only while its due tick is
//!   after the shard's processed tick. A slot is filed again only for a
//!   tick after that one, so a stale sleep's compare-and-swap can never
//!   match its slot's next entry.
//! - Chunks are made under the shard lock, when a key in them is first
//!   filed, and read without it. A chunk stays for the life of its shard,
//!   as a sleep may reach it at any time: words take 8 bytes per slot at
//!   the slab's peak, which an emptied shard keeps when it gives its slab
//!   back. (A sleep that held its chunk itself took 8 bytes more in every
//!   sleep, pending or not.)
//! - Ticks stay below [`SHARED`]: the wheel's tick is at least 1 ms, so its
//!   last tick is below 2^63 / 10^6.

use std::fmt;
use std::sync::OnceLock;

use crate::sync::{AtomicU64, Ordering};

/// In a word: the driver removes the entry when it fires it (a sleep's).
pub(crate) const DRIVER_REMOVES: u64 = 1 << 63;

/// In a word: its sleep moves it later without the lock.
const SHARED: u64 = 1 << 62;

/// A shared word whose entry the driver has claimed.
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
}

/// Chunk slots in the first page of a [`Words`] table; page `p` has
/// `FIRST_PAGE << p` of them.
const FIRST_PAGE: usize = 64;

/// Pages enough for a chunk per [`CHUNK`] keys up to `u32::MAX`.
const PAGES: usize = (u32::BITS as usize + 1) - (FIRST_PAGE * CHUNK).trailing_zeros() as usize;

/// A page: a run of chunk slots, each chunk made when a key in it is
/// first filed.
type Page = Box<[OnceLock<Box<Chunk>>]>;

/// A shard's words, one per slab slot (see the module docs). Chunks are
/// made under the shard lock and read without it: page `p` holds the
/// chunks from `FIRST_PAGE * (2^p - 1)` on, so a table of a few pages
/// reaches a few keys and 4 KiB more of words is made only when a key
/// needs it.
pub(crate) struct Words {
    pages: [OnceLock<Page>; PAGES],
}

/// The number of chunks made, not their words.
impl fmt::Debug for Words {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let chunks = self
            .pages
            .iter()
            .filter_map(OnceLock::get)
            .flat_map(|page| page.iter())
            .filter(|chunk| chunk.get().is_some())
            .count();
        f.debug_struct("Words").field("chunks", &chunks).finish()
    }
}

impl Default for Words {
    fn default() -> Words {
        Words {
            pages: std::array::from_fn(|_| OnceLock::new()),
        }
    }
}

/// The page of the chunk of `key` and the chunk's slot in it.
#[inline]
fn place(key: u32) -> (usize, usize) {
    let chunk = key as usize / CHUNK;
    let page = (chunk / FIRST_PAGE + 1).ilog2() as usize;
    (page, chunk - FIRST_PAGE * ((1 << page) - 1))
}

impl Words {
    /// The chunk of `key`, if a key in it has been filed.
    #[inline]
    fn chunk(&self, key: u32) -> Option<&Chunk> {
        let (page, slot) = place(key);
        Some(self.pages[page].get()?[slot].get()?)
    }

    #[inline]
    fn word(&self, key: u32) -> &AtomicU64 {
        self.chunk(key).expect("a filed entry has a word").word(key)
    }

    /// Files the word of a new entry `key`: due at `tick`, removed by the
    /// driver or not. Under the shard lock.
    #[inline]
    pub(crate) fn file(&self, key: u32, tick: u64, driver_removes: bool) {
        debug_assert!(tick <= TICK);
        let flag = if driver_removes { DRIVER_REMOVES } else { 0 };
        let word = match self.chunk(key) {
            Some(chunk) => chunk.word(key),
            None => self.make(key).word(key),
        };
        word.store(tick | flag, Ordering::Relaxed);
    }

    /// Makes the chunk of `key` (and its page): once per 512 slots the slab
    /// grows by.
    #[cold]
    fn make(&self, key: u32) -> &Chunk {
        let (page, slot) = place(key);
        let chunks = self.pages[page]
            .get_or_init(|| (0..FIRST_PAGE << page).map(|_| OnceLock::new()).collect());
        chunks[slot].get_or_init(|| Box::new(Chunk::new()))
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
    /// shared: its sleep moves it later without the lock from then on
    /// ([`Words::move_later`]).
    pub(crate) fn move_to(&self, key: u32, tick: u64, share: bool) {
        debug_assert!(tick <= TICK);
        let word = self.word(key);
        let w = word.load(Ordering::Relaxed);
        debug_assert_ne!(w, FIRED, "a fired entry is not moved");
        let flags = (w & !TICK) | if share { SHARED } else { 0 };
        word.store(tick | flags, Ordering::Release);
    }

    /// A sleep moves the due tick of its entry `key`, whose word it
    /// shares, from `old`, the tick it last gave, to the later `new`,
    /// without the lock. `false`: the driver fired the entry first.
    #[inline]
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

    /// The driver, under the lock, at tick `now`: fires the entry `key` if
    /// its due tick has come (`Ok`, with whether the driver removes it), or
    /// returns the later tick it has moved to, where the entry is to be
    /// filed again. A shared word is claimed with a compare-and-swap (see
    /// the module docs); the others only read.
    pub(crate) fn claim(&self, key: u32, now: u64) -> Result<bool, u64> {
        let word = self.word(key);
        let mut w = word.load(Ordering::Acquire);
        loop {
            debug_assert_ne!(w, FIRED, "an entry is fired once");
            if w & TICK > now {
                return Err(w & TICK);
            }
            let driver_removes = w & DRIVER_REMOVES != 0;
            if w & SHARED == 0 {
                return Ok(driver_removes);
            }
            match word.compare_exchange(w, FIRED, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Ok(driver_removes),
                Err(moved) => w = moved,
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn shared(words: &Words, key: u32, tick: u64) {
        words.file(key, tick, true);
        words.move_to(key, tick, true);
    }

    #[test]
    fn a_claim_and_a_move_of_the_same_tick_exclude_each_other() {
        let words = Words::default();
        shared(&words, 700, 5);
        assert!(words.move_later(700, 5, 9));
        assert_eq!(words.claim(700, 6), Err(9), "moved later: filed again");
        assert_eq!(words.claim(700, 9), Ok(true));
        assert_eq!(words.due(700), None);
        assert!(!words.move_later(700, 9, 12), "fired: the move fails");
    }

    #[test]
    fn words_keep_their_flags_and_others_are_untouched() {
        let words = Words::default();
        words.file(3, 20, false);
        words.file(4, 20, true);
        words.move_to(4, 7, false);
        assert_eq!((words.due(3), words.due(4)), (Some(20), Some(7)));
        assert!(!words.driver_removes(3) && words.driver_removes(4));
        assert_eq!(words.claim(4, 6), Err(7));
        assert_eq!(words.claim(3, 20), Ok(false));
        assert_eq!(words.claim(4, 7), Ok(true));
        assert_eq!(words.due(4), Some(7), "a word not shared is only read");
    }

    #[test]
    fn pages_tile_the_keys_without_gaps_or_overlaps() {
        // Each chunk has one slot of one page, the next chunk the next
        // slot or the first slot of the next page; the last key fits.
        let mut at = (0, 0);
        assert_eq!(place(0), at);
        for chunk in 1..=(u32::MAX as usize / CHUNK) {
            let (page, slot) = place((chunk * CHUNK) as u32);
            at = if at.1 + 1 == FIRST_PAGE << at.0 {
                (at.0 + 1, 0)
            } else {
                (at.0, at.1 + 1)
            };
            assert_eq!((page, slot), at, "chunk {chunk}");
            assert_eq!(place((chunk * CHUNK + CHUNK - 1) as u32), at);
        }
        assert!(place(u32::MAX).0 < PAGES);
    }

    #[test]
    fn a_word_far_up_is_made_alone_and_found_again() {
        let words = Words::default();
        let key = u32::MAX - 4;
        assert!(words.chunk(key).is_none());
        words.file(key, 9, true);
        assert_eq!(words.due(key), Some(9));
        assert!(words.chunk(0).is_none(), "no other chunk is made");
        let made = words.pages.iter().filter(|p| p.get().is_some()).count();
        assert_eq!(made, 1, "only the last page");
    }
}
