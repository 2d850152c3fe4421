//! The hashed timing wheel: Varghese & Lauck (1996), scheme 6.
//!
//! A plain, synchronous data structure with no tokio in it. Time is counted
//! in whole ticks (`u64`); what a tick lasts is the caller's business.
//! Entries live in a slab ([`Slab`], which hands out the lowest free key)
//! and are chained per bucket through their keys in doubly linked lists, so
//! insert, cancel and reschedule are O(1).
//! A bucket keeps its entries in the order they were filed (new ones go to
//! its tail), so entries due at one tick expire in that order.
//! A bucket is chosen with `tick & mask`; every entry keeps its absolute
//! expiry tick, so an entry one or more turns away stays in its bucket until
//! the turn in which it is due.
//! An entry inserted (or rescheduled) for a future tick is not linked into
//! its bucket at once: it waits, *unfiled*, in a short list that is filed
//! in order when it reaches [`FILE_AT`] entries or before the wheel
//! advances or drains. Most timers are cancelled long before they are due
//! (a request's timeout, removed when the request completes); one removed
//! while unfiled leaves a hole in that list (or shortens it, if it was the
//! newest) and never touches a bucket or a neighbour, so neither the link
//! nor the unlink is paid for it.
//! An owner may also keep a later due tick in an entry's value and leave
//! the entry where it is (the `DelayQueue` does, for a deadline moved
//! later); once the entry's tick has come, [`HashedWheel::recheck_due`]
//! moves it on, and [`HashedWheel::peek_earliest`] takes the owner's tick.
//! To the wheel such an entry is an ordinary one, due at its own tick.
//!
//! # Invariants
//!
//! - `processed` is the last tick that has elapsed: every entry whose
//!   tick is at or before `processed` is in the due list or detached, never in a
//!   bucket.
//! - Every entry is in exactly one of four places, and its fields say which:
//!   * unfiled (`prev == UNFILED`): `unfiled[next]` is its key and its tick
//!     is after `processed` (which only [`HashedWheel::advance`] moves, after
//!     filing them all). Holes in `unfiled` are [`NIL`], never its last
//!     element; it never holds more than [`FILE_AT`] keys and holes
//!     together.
//!   * a bucket (`prev` neither `DETACHED` nor `UNFILED`, and
//!     `tick > processed`): the bucket is `tick & mask`;
//!   * the due list (`prev` neither `DETACHED` nor `UNFILED`, and
//!     `tick <= processed`): it is due and
//!     waits for [`HashedWheel::pop_due`];
//!   * detached (`prev == DETACHED`): in no list: it was popped from the
//!     due list (it has expired).
//! - `mins[b]` is a lower bound of the ticks in bucket `b` ([`NEVER`] when the
//!   bucket is empty). It is exact after the bucket was last visited and only
//!   goes stale (too low) when entries leave it, which can cost a spurious
//!   visit but never a late one.
//! - `buckets[b].max` is an upper bound of the ticks in bucket `b` (0 when
//!   it is empty), stale (too high) only after entries leave it. A bucket
//!   whose upper bound has come is due as a whole: it moves to the due list
//!   in one splice, without a walk over its entries.
//! - `buckets[b].tail` is the last entry of bucket `b` ([`NIL`] when it is
//!   empty).
//! - `next` is a lower bound of every tick in every bucket and of every
//!   unfiled entry's tick.
//! - Bit `b` of `occupied` is set exactly when bucket `b` holds an entry
//!   (`mins[b] != NEVER`): scans skip 64 empty buckets at a time, so an
//!   empty or sparse wheel costs no walk over its buckets.

mod advance;
mod due;
#[cfg(all(test, not(loom)))]
mod model_test;
mod slab;

use slab::Slab;

/// The tick of an entry that never expires.
pub(crate) const NEVER: u64 = u64::MAX;

/// End of a list.
const NIL: u32 = u32::MAX;
/// `prev` of an entry that is in no list.
const DETACHED: u32 = u32::MAX - 1;
/// `prev` of an entry that waits to be filed; its `next` is its index in
/// the unfiled list.
const UNFILED: u32 = u32::MAX - 2;
/// Keys are `u32` in the lists; the three values above are reserved.
pub(crate) const MAX_ENTRIES: usize = (u32::MAX - 3) as usize;

/// The most entries (and holes) that wait to be filed. A timer cancelled
/// within this many insertions on its wheel (and before the wheel next
/// advances) is never filed. A server's request timeouts are mostly
/// cancelled within a thousand insertions, a batch of 1024 is filed in
/// microseconds, and the list is 4 KiB at most.
const FILE_AT: usize = 1024;

/// A bucket: its list of entries and an upper bound of their ticks.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    head: u32,
    tail: u32,
    max: u64,
}

impl Bucket {
    const EMPTY: Bucket = Bucket {
        head: NIL,
        tail: NIL,
        max: 0,
    };
}

#[derive(Debug)]
struct Entry<T> {
    tick: u64,
    prev: u32,
    next: u32,
    value: T,
}

/// A hashed timing wheel whose entries carry a `T`.
#[derive(Debug)]
pub(crate) struct HashedWheel<T> {
    entries: Slab<Entry<T>>,
    /// Each bucket's list and upper bound, together on one cache line.
    buckets: Box<[Bucket]>,
    /// Each bucket's lower bound, apart: [`scan_next`](Self::scan_next)
    /// reads them in a row.
    mins: Box<[u64]>,
    /// One bit per bucket: it holds an entry.
    occupied: Box<[u64]>,
    mask: u64,
    processed: u64,
    next: u64,
    /// The due list: a bucket's list, its bound unused.
    due: Bucket,
    /// Keys of the entries not filed yet, in the order they came ([`NIL`]:
    /// a hole left by one removed or moved since).
    unfiled: Vec<u32>,
    /// Entries in buckets, in the due list, unfiled, or parked: everything
    /// that has not expired yet (or has expired but not been popped).
    pending: usize,
}

impl<T> HashedWheel<T> {
    /// A wheel of `buckets` buckets (a power of two) starting at tick `processed`.
    pub(crate) fn new(buckets: usize, processed: u64) -> Self {
        Self::with_capacity(buckets, processed, 0)
    }

    pub(crate) fn with_capacity(buckets: usize, processed: u64, capacity: usize) -> Self {
        assert!(buckets.is_power_of_two(), "buckets must be a power of two");
        HashedWheel {
            entries: Slab::with_capacity(capacity),
            buckets: vec![Bucket::EMPTY; buckets].into_boxed_slice(),
            mins: vec![NEVER; buckets].into_boxed_slice(),
            occupied: vec![0; buckets.div_ceil(64)].into_boxed_slice(),
            mask: buckets as u64 - 1,
            processed,
            next: NEVER,
            due: Bucket::EMPTY,
            unfiled: Vec::new(),
            pending: 0,
        }
    }

    /// The last tick processed by [`advance`](Self::advance).
    pub(crate) fn processed(&self) -> u64 {
        self.processed
    }

    /// Entries that have not been popped as expired: scheduled, due or parked.
    pub(crate) fn pending(&self) -> usize {
        self.pending
    }

    /// Every entry the slab holds, expired ones included.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// What the slab stores per entry carrying a `T`, vacant or not.
    #[cfg(test)]
    pub(crate) const fn slot_bytes() -> usize {
        std::mem::size_of::<Option<Entry<T>>>()
    }

    pub(crate) fn capacity(&self) -> usize {
        self.entries.capacity()
    }

    pub(crate) fn reserve(&mut self, additional: usize) {
        self.entries.reserve(additional);
    }

    pub(crate) fn shrink_to_fit(&mut self) {
        self.entries.shrink_to_fit();
    }

    /// Stores `value` to expire at `tick`. A tick at or before
    /// [`processed`](Self::processed) goes straight to the due list. Gives the value back when the slab is full.
    // Always inline: out of line, its `Result` carrying a waker went back
    // through memory, and the call cost a registration a twentieth of its
    // instructions.
    #[inline(always)]
    pub(crate) fn insert(&mut self, tick: u64, value: T) -> Result<u32, T> {
        // The lowest free key is at most the number of occupied ones.
        if self.entries.len() >= MAX_ENTRIES {
            return Err(value);
        }
        self.pending += 1;
        if tick > self.processed && self.unfiled.len() < FILE_AT {
            // The usual case, `place_later`'s unfiled branch written with
            // the entry: a timer made for a future tick, while the unfiled
            // list has room. One write of the entry, no second pass over it.
            let at = self.unfiled.len() as u32;
            let key = self.entries.insert(Entry {
                tick,
                prev: UNFILED,
                next: at,
                value,
            }) as u32;
            self.unfiled.push(key);
            self.next = self.next.min(tick);
            return Ok(key);
        }
        Ok(self.insert_and_place(tick, value))
    }

    /// [`insert`](Self::insert) for a tick that is due or meets a
    /// full unfiled list: out of line, so that the usual case stays small
    /// enough to inline.
    #[inline(never)]
    fn insert_and_place(&mut self, tick: u64, value: T) -> u32 {
        let key = self.entries.insert(Entry {
            tick,
            prev: DETACHED,
            next: NIL,
            value,
        }) as u32;
        self.place_later(key, tick);
        key
    }

    /// Removes the entry, wherever it is, and returns its value.
    ///
    /// # Panics
    ///
    /// If `key` holds no entry.
    #[inline]
    pub(crate) fn remove(&mut self, key: u32) -> T {
        let e = &self.entries[key as usize];
        if e.prev == UNFILED {
            // The usual case, a timer cancelled long before it is due:
            // `detach`'s unfiled branch, inline.
            let at = e.next as usize;
            self.pending -= 1;
            self.unfile(at, key);
        } else if e.prev != DETACHED {
            self.detach(key);
            self.pending -= 1;
        }
        self.entries.remove(key as usize).value
    }

    /// Removes the entries `keys` and hands their values to `f`.
    ///
    /// Each removal writes the entry's two list neighbours, which at
    /// millions of entries are random in memory: a cache miss each, which
    /// one removal after another would wait for in turn. So the neighbours
    /// of the whole batch are read first, in loads that depend on nothing
    /// but their own entry: their misses overlap, and the removals that
    /// follow find the lines in the cache.
    pub(crate) fn remove_many(&mut self, keys: &[u32], mut f: impl FnMut(T)) {
        let mut seen = 0;
        for &key in keys {
            let e = &self.entries[key as usize];
            for n in [e.prev, e.next] {
                // A reserved value (`NIL`, ...) lies past every slot.
                if let Some(neighbour) = self.entries.get(n as usize) {
                    seen ^= neighbour.tick;
                }
            }
        }
        // Their xor is what keeps the loads from being optimised away.
        std::hint::black_box(seen);
        for &key in keys {
            f(self.remove(key));
        }
    }

    /// Moves the entry to expire at `tick` (same rules as `insert`). An
    /// expired entry becomes pending again.
    pub(crate) fn reschedule(&mut self, key: u32, tick: u64) {
        let e = &self.entries[key as usize];
        if e.prev != DETACHED {
            self.detach(key);
        } else {
            // It had expired; it is pending again.
            self.pending += 1;
        }
        self.place_later(key, tick);
    }

    /// Whether the entry waits to be filed: removing it touches no list.
    pub(crate) fn is_unfiled(&self, key: u32) -> bool {
        self.entries[key as usize].prev == UNFILED
    }

    /// The tick the entry is filed at, if it is linked into a bucket:
    /// moving it then means unlinking it from its two list neighbours.
    pub(crate) fn filed_at(&self, key: u32) -> Option<u64> {
        let e = &self.entries[key as usize];
        (e.prev != DETACHED && e.prev != UNFILED && e.tick > self.processed).then_some(e.tick)
    }

    /// The value of `key` and the tick it is filed at.
    pub(crate) fn get_with_tick(&self, key: u32) -> Option<(u64, &T)> {
        self.entries.get(key as usize).map(|e| (e.tick, &e.value))
    }

    pub(crate) fn get_mut(&mut self, key: u32) -> Option<&mut T> {
        self.entries.get_mut(key as usize).map(|e| &mut e.value)
    }

    /// The tick the entry expires at, unless that tick has been reached
    /// (it is due, or was popped as due): it is in a bucket or unfiled.
    pub(crate) fn scheduled_at(&self, key: u32) -> Option<u64> {
        let e = &self.entries[key as usize];
        (e.prev != DETACHED && e.tick > self.processed).then_some(e.tick)
    }

    /// Removes every entry.
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.unfiled.clear();
        self.buckets.fill(Bucket::EMPTY);
        self.mins.fill(NEVER);
        self.occupied.fill(0);
        self.next = NEVER;
        self.due = Bucket::EMPTY;
        self.pending = 0;
    }

    // ===== lists =====

    /// Puts a detached entry where `tick` says, leaving it unfiled when its
    /// tick is ahead.
    pub(super) fn place_later(&mut self, key: u32, tick: u64) {
        debug_assert_eq!(self.entries[key as usize].prev, DETACHED, "placed twice");
        self.entries[key as usize].tick = tick;
        if tick <= self.processed {
            // Ahead of what advancing moved there: the last entry filed as
            // due comes out first, as from tokio-util's stack of expired
            // values.
            self.push_due_front(key);
            return;
        }
        if self.unfiled.len() == FILE_AT {
            self.file_unfiled();
        }
        let e = &mut self.entries[key as usize];
        (e.prev, e.next) = (UNFILED, self.unfiled.len() as u32);
        self.unfiled.push(key);
        self.next = self.next.min(tick);
    }

    /// Files every unfiled entry in its bucket, in the order they came.
    pub(super) fn file_unfiled(&mut self) {
        let mut keys = std::mem::take(&mut self.unfiled);
        for &key in keys.iter().filter(|&&k| k != NIL) {
            let e = &self.entries[key as usize];
            debug_assert!(e.prev == UNFILED && e.tick > self.processed);
            let tick = e.tick;
            self.link(key, tick);
        }
        keys.clear();
        self.unfiled = keys;
    }

    /// Takes a linked or unfiled entry out of where it is.
    pub(super) fn detach(&mut self, key: u32) {
        let e = &mut self.entries[key as usize];
        if e.prev == UNFILED {
            let at = e.next as usize;
            (e.prev, e.next) = (DETACHED, NIL);
            self.unfile(at, key);
        } else {
            self.unlink(key);
        }
    }

    /// Takes `key`, the unfiled entry at `at`, out of the unfiled list (its
    /// own links are the caller's).
    #[inline]
    fn unfile(&mut self, at: usize, key: u32) {
        debug_assert_eq!(self.unfiled[at], key);
        if at + 1 == self.unfiled.len() {
            // The newest (a timer cancelled right after it was made):
            // the list gets shorter, by the holes before it too, and is
            // filed that much later.
            self.unfiled.pop();
            while self.unfiled.last() == Some(&NIL) {
                self.unfiled.pop();
            }
        } else {
            self.unfiled[at] = NIL;
        }
    }

    /// Links the entry `key` at the tail of the bucket of `tick`, a tick
    /// after `processed`, whatever its links said (a detached or an unfiled
    /// entry: filing a batch writes each entry once).
    #[inline(always)]
    fn link(&mut self, key: u32, tick: u64) {
        let b = (tick & self.mask) as usize;
        let bucket = &mut self.buckets[b];
        let tail = bucket.tail;
        if tail == NIL {
            bucket.head = key;
        }
        bucket.tail = key;
        bucket.max = bucket.max.max(tick);
        let e = &mut self.entries[key as usize];
        (e.tick, e.prev, e.next) = (tick, tail, NIL);
        if tail != NIL {
            self.entries[tail as usize].next = key;
        }
        self.mark(b);
        self.mins[b] = self.mins[b].min(tick);
        self.next = self.next.min(tick);
    }

    /// Unlinks a linked entry from its bucket or from the due list.
    #[inline]
    pub(super) fn unlink(&mut self, key: u32) {
        let tick = self.entries[key as usize].tick;
        let bucket = (tick > self.processed).then_some((tick & self.mask) as usize);
        self.unlink_from(key, bucket);
        if let Some(b) = bucket {
            if self.buckets[b].head == NIL {
                self.mins[b] = NEVER;
                self.buckets[b].max = 0;
                self.unmark(b);
            }
        }
    }

    /// Bucket `b`'s list, or the due list when `None`.
    #[inline]
    fn list(&mut self, bucket: Option<usize>) -> &mut Bucket {
        match bucket {
            Some(b) => &mut self.buckets[b],
            None => &mut self.due,
        }
    }

    /// Unlinks `key` from bucket `b`, or from the due list when `None`.
    #[inline]
    pub(super) fn unlink_from(&mut self, key: u32, bucket: Option<usize>) {
        let e = &mut self.entries[key as usize];
        let (prev, next) = (e.prev, e.next);
        (e.prev, e.next) = (DETACHED, NIL);
        debug_assert_ne!(prev, DETACHED, "unlinking an entry in no list");
        // An entry without a predecessor heads the list its tick names.
        debug_assert!(prev != NIL || self.list(bucket).head == key);
        if prev == NIL {
            self.list(bucket).head = next;
        } else {
            self.entries[prev as usize].next = next;
        }
        if next == NIL {
            self.list(bucket).tail = prev;
        } else {
            self.entries[next as usize].prev = prev;
        }
    }
}

#[cfg(test)]
mod tests;
