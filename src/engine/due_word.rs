//! Every entry's due tick, in a word of its own: one atomic per slab slot,
//! in chunks that stay put, so that a sleep moves its deadline later
//! without the shard lock. The lock holder reaches a chunk through
//! [`Words`], a plain list under the lock; a sleep through the shard's
//! [`Directory`], which it reads without the lock.
//!
//! # Ground rules
//!
//! - The word of the entry `key` is slot `key % CHUNK` of chunk
//!   `key / CHUNK`. It holds the entry's due tick and two flags:
//!   [`DRIVER_REMOVES`] (a sleep's entry, which the driver removes when it
//!   fires it) and [`SHARED`] (its sleep moves it without the lock). The due
//!   tick is at or after the tick the entry is filed at: a deadline moved
//!   later only writes the word, and the driver files the entry again when
//!   it meets it, waking no one (tokio's rule).
//! - Under the shard lock only the lock holder writes a word that is not
//!   shared: filing writes it whole, a move writes its tick.
//! - A shared word has one more writer: its sleep, which moves it later
//!   without the lock, with a compare-and-swap from the word it last wrote
//!   ([`Directory::move_later`]). The driver fires a shared word's entry only
//!   by a compare-and-swap of its own, to `FIRED` ([`Words::fire`]). So
//!   exactly one of a move and a firing of the same tick wins: a sleep
//!   whose move fails knows the driver has its entry and registers again; a
//!   driver whose firing fails reads the new tick and files the entry there.
//! - A sleep writes its word without the lock only while its due tick is
//!   after the shard's processed tick. A slot is filed again only for a
//!   tick after that one, so a stale sleep's compare-and-swap can never
//!   match its slot's next entry.
//! - A chunk, once made, stays for the life of its shard: a sleep that
//!   shares its word may look it up at any time, without the lock (its
//!   compare-and-swap then fails if the entry is gone), so no chunk can be
//!   freed before the shard. A shard that gives a burst's slab back keeps
//!   those words: 8 bytes a slot, where the slab gives back 32. This is
//!   what keeps a `Sleep` at 32 bytes: it finds its chunk by its key
//!   instead of holding a reference to it.
//! - Only the lock holder makes chunks, and puts each in both [`Words`] and
//!   the [`Directory`] before it files a key in it; a sleep learns its key,
//!   and that its word is shared, under that lock, so its lookup finds the
//!   chunk.
//! - Ticks stay below [`SHARED`]: the wheel's tick is at least 1 ms, so its
//!   last tick is below 2^63 / 10^6.

use std::sync::OnceLock;

use crate::engine::sync::{Arc, AtomicU64, Ordering};

/// In a word: the driver removes the entry when it fires it (a sleep's).
pub(crate) const DRIVER_REMOVES: u64 = 1 << 63;

/// In a word: its sleep moves it later without the lock.
const SHARED: u64 = 1 << 62;

/// A shared word whose entry the driver has fired.
const FIRED: u64 = u64::MAX;

/// The due tick's bits.
const TICK: u64 = SHARED - 1;

/// Words per chunk: a 4 KiB page; a few under loom, whose atomics are
/// costly to make.
const CHUNK: usize = if cfg!(loom) { 4 } else { 512 };

/// One chunk of a shard's words.
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

/// Segments in a [`Directory`]: segment `s` has room for `2^s` chunks, so
/// that these many hold the chunks of every `u32` key.
const SEGMENTS: usize = (u32::BITS - CHUNK.trailing_zeros() + 1) as usize;

/// Every chunk of a shard, by number, reachable without the lock (see the
/// module docs). It grows by segments that double, each made when its
/// first chunk is, so it never moves a chunk and costs a sleep two lookups.
pub(crate) struct Directory {
    segments: [OnceLock<Segment>; SEGMENTS],
}

/// Room for `2^s` chunks, each set once.
type Segment = Box<[OnceLock<Arc<Chunk>>]>;

impl Default for Directory {
    fn default() -> Directory {
        Directory {
            segments: [const { OnceLock::new() }; SEGMENTS],
        }
    }
}

/// The segment of chunk `c`, and its place in it.
#[inline]
fn segment_of(c: usize) -> (usize, usize) {
    let n = c + 1;
    let s = (usize::BITS - 1 - n.leading_zeros()) as usize;
    (s, n - (1 << s))
}

impl Directory {
    /// Chunk `c`, if it has been made.
    #[inline]
    fn get(&self, c: usize) -> Option<&Chunk> {
        let (s, i) = segment_of(c);
        self.segments.get(s)?.get()?[i].get().map(|chunk| &**chunk)
    }

    /// Puts the new chunk `c` in its place: the lock holder's, before it
    /// files a key in it.
    fn put(&self, c: usize, chunk: Arc<Chunk>) {
        let (s, i) = segment_of(c);
        let segment =
            self.segments[s].get_or_init(|| (0..1usize << s).map(|_| OnceLock::new()).collect());
        let fresh = segment[i].set(chunk).is_ok();
        debug_assert!(fresh, "a chunk is made once");
    }

    /// A sleep moves the due tick of its entry `key` from `old`, the tick it
    /// last gave, to the later `new`, without the lock. `false`: the driver
    /// fired the entry first.
    pub(crate) fn move_later(&self, key: u32, old: u64, new: u64) -> bool {
        debug_assert!(old < new && new <= TICK);
        const FLAGS: u64 = DRIVER_REMOVES | SHARED;
        let chunk = self
            .get(key as usize / CHUNK)
            .expect("a shared word's chunk was made before its key was filed");
        match chunk.word(key).compare_exchange(
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

/// A shard's words, one per slab slot, for the lock holder (see the module
/// docs): the chunks in a list, one index from a key to its word.
#[derive(Default)]
pub(crate) struct Words {
    chunks: Vec<Arc<Chunk>>,
}

impl Words {
    #[inline]
    fn word(&self, key: u32) -> &AtomicU64 {
        self.chunks[key as usize / CHUNK].word(key)
    }

    /// Files the word of a new entry `key`: due at `tick`, removed by the
    /// driver or not. A new chunk goes in `directory` too.
    #[inline]
    pub(crate) fn file(
        &mut self,
        directory: &Directory,
        key: u32,
        tick: u64,
        driver_removes: bool,
    ) {
        debug_assert!(tick <= TICK);
        let flag = if driver_removes { DRIVER_REMOVES } else { 0 };
        match self.chunks.get(key as usize / CHUNK) {
            Some(chunk) => chunk.word(key).store(tick | flag, Ordering::Relaxed),
            None => self.grow_to(directory, key, tick | flag),
        }
    }

    /// Adds the chunks up to `key`'s and files its word: once per 512
    /// slots the slab grows by, over its most.
    #[cold]
    fn grow_to(&mut self, directory: &Directory, key: u32, word: u64) {
        while self.chunks.len() <= key as usize / CHUNK {
            let chunk = Arc::new(Chunk::new());
            directory.put(self.chunks.len(), chunk.clone());
            self.chunks.push(chunk);
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
    /// shared: its sleep moves it later from then on, through the
    /// [`Directory`].
    pub(crate) fn move_to(&self, key: u32, tick: u64, share: bool) {
        debug_assert!(tick <= TICK);
        let word = self.word(key);
        let w = word.load(Ordering::Relaxed);
        debug_assert_ne!(w, FIRED, "a fired entry is not moved");
        let flags = (w & !TICK) | if share { SHARED } else { 0 };
        word.store(tick | flags, Ordering::Release);
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
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn shared(words: &mut Words, directory: &Directory, key: u32, tick: u64) {
        words.file(directory, key, tick, true);
        words.move_to(key, tick, true);
    }

    #[test]
    fn a_firing_and_a_move_of_the_same_tick_exclude_each_other() {
        let (mut words, directory) = (Words::default(), Directory::default());
        shared(&mut words, &directory, 700, 5);
        assert!(directory.move_later(700, 5, 9));
        assert_eq!(words.fire(700, 6), Err(9), "moved later: filed again");
        assert_eq!(words.fire(700, 9), Ok(9));
        assert_eq!(words.due(700), None);
        assert!(!directory.move_later(700, 9, 12), "fired: the move fails");
    }

    #[test]
    fn words_keep_their_flags_and_others_are_untouched() {
        let (mut words, directory) = (Words::default(), Directory::default());
        words.file(&directory, 3, 20, false);
        words.file(&directory, 4, 20, true);
        words.move_to(4, 7, false);
        assert_eq!((words.due(3), words.due(4)), (Some(20), Some(7)));
        assert!(!words.driver_removes(3) && words.driver_removes(4));
        assert_eq!(words.fire(4, 6), Err(7));
        assert_eq!(words.fire(4, 7), Ok(7));
        assert_eq!(words.due(4), Some(7), "a word not shared is only read");
    }

    #[test]
    fn the_directory_finds_every_chunk_the_list_has() {
        let (mut words, directory) = (Words::default(), Directory::default());
        // Keys in chunks across the first five segments, filed out of order.
        let keys = [0, 511, 512, 5000, 1536, 20_000, 9 * CHUNK as u32 + 7];
        for (i, &key) in keys.iter().enumerate() {
            shared(&mut words, &directory, key, 10 + i as u64);
        }
        for c in 0..words.chunks.len() {
            let by_list: *const Chunk = &*words.chunks[c];
            assert!(
                std::ptr::eq(directory.get(c).unwrap(), by_list),
                "chunk {c}"
            );
        }
        assert!(directory.get(words.chunks.len()).is_none());
        for (i, &key) in keys.iter().enumerate() {
            let tick = 10 + i as u64;
            assert!(directory.move_later(key, tick, tick + 1), "key {key}");
            assert_eq!(words.due(key), Some(tick + 1));
        }
    }

    #[test]
    fn segments_double_and_tile_the_chunk_numbers() {
        let mut next = 0;
        for s in 0..SEGMENTS {
            for i in 0..1usize << s {
                assert_eq!(segment_of(next), (s, i));
                next += 1;
            }
        }
        let last = (u32::MAX as usize) / CHUNK;
        assert!(segment_of(last).0 < SEGMENTS, "every u32 key has a segment");
    }
}
