//! The hashed timing wheel: Varghese & Lauck (1996), scheme 6.
//!
//! A plain, synchronous data structure with no tokio in it. Time is counted
//! in whole ticks (`u64`); what a tick lasts is the caller's business.
//! Entries live in a slab ([`Slots`], which hands out the lowest free key)
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
//! - `elapsed` is the last tick that has been processed: every entry whose
//!   tick is at or before `elapsed` is in the due list or detached, never in a
//!   bucket.
//! - Every entry is in exactly one of four places, and its fields say which:
//!   * unfiled (`prev == UNFILED`): `unfiled[next]` is its key and its tick
//!     is after `elapsed` (which only [`HashedWheel::advance`] moves, after
//!     filing them all). Holes in `unfiled` are [`NIL`], never its last
//!     element; it never holds more than [`FILE_AT`] keys and holes
//!     together.
//!   * a bucket (`prev` neither `DETACHED` nor `UNFILED`, and
//!     `tick > elapsed`): the bucket is `tick & mask`;
//!   * the due list (`prev` neither `DETACHED` nor `UNFILED`, and
//!     `tick <= elapsed`): it is due and
//!     waits for [`HashedWheel::pop_due`];
//!   * detached (`prev == DETACHED`): in no list. Either it was popped from
//!     the due list (it has expired), or its tick is [`NEVER`] (it is parked
//!     and never expires).
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

#[cfg(all(test, not(loom)))]
mod model_test;
mod slots;

use slots::Slots;

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
/// advances) is never filed. In the server simulation of `examples/compare`
/// (200k connections, 200k messages/s on two workers, a request timeout
/// per message) 32 % of the timeouts' cancels found their entry unfiled
/// with 64, 76 % with 256, 93 % with 1024; a batch of 1024 is filed in
/// microseconds, and the list is 4 KiB at most.
const FILE_AT: usize = 1024;

/// The most buckets a wheel may have.
pub(crate) const MAX_SLOTS: usize = 1 << 30;

/// Where an entry is, as seen by its owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// In a bucket: it expires at its tick.
    Scheduled,
    /// Its tick has been reached: it is in the due list or was popped from it.
    Expired,
    /// Its tick is [`NEVER`]: it is held but never expires.
    Parked,
}

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
    entries: Slots<Entry<T>>,
    /// Each bucket's list and upper bound, together on one cache line.
    buckets: Box<[Bucket]>,
    /// Each bucket's lower bound, apart: [`scan_next`](Self::scan_next)
    /// reads them in a row.
    mins: Box<[u64]>,
    /// One bit per bucket: it holds an entry.
    occupied: Box<[u64]>,
    mask: u64,
    elapsed: u64,
    next: u64,
    due_head: u32,
    due_tail: u32,
    /// Keys of the entries not filed yet, in the order they came ([`NIL`]:
    /// a hole left by one removed or moved since).
    unfiled: Vec<u32>,
    /// Entries in buckets, in the due list, unfiled, or parked: everything
    /// that has not expired yet (or has expired but not been popped).
    pending: usize,
}

impl<T> HashedWheel<T> {
    /// A wheel of `slots` buckets (a power of two) starting at tick `elapsed`.
    pub(crate) fn new(slots: usize, elapsed: u64) -> Self {
        Self::with_capacity(slots, elapsed, 0)
    }

    pub(crate) fn with_capacity(slots: usize, elapsed: u64, capacity: usize) -> Self {
        assert!(
            slots.is_power_of_two() && slots <= MAX_SLOTS,
            "slots must be a power of two no larger than 2^30"
        );
        HashedWheel {
            entries: Slots::with_capacity(capacity),
            buckets: vec![Bucket::EMPTY; slots].into_boxed_slice(),
            mins: vec![NEVER; slots].into_boxed_slice(),
            occupied: vec![0; slots.div_ceil(64)].into_boxed_slice(),
            mask: slots as u64 - 1,
            elapsed,
            next: NEVER,
            due_head: NIL,
            due_tail: NIL,
            unfiled: Vec::new(),
            pending: 0,
        }
    }

    /// The last tick processed by [`advance`](Self::advance).
    pub(crate) fn elapsed(&self) -> u64 {
        self.elapsed
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
    /// [`elapsed`](Self::elapsed) goes straight to the due list; [`NEVER`]
    /// parks the entry. Gives the value back when the slab is full.
    #[inline]
    pub(crate) fn insert(&mut self, tick: u64, value: T) -> Result<u32, T> {
        // The lowest free key is at most the number of occupied ones.
        if self.entries.len() >= MAX_ENTRIES {
            return Err(value);
        }
        let key = self.entries.insert(Entry {
            tick,
            prev: DETACHED,
            next: NIL,
            value,
        }) as u32;
        self.pending += 1;
        self.place_later(key, tick);
        Ok(key)
    }

    /// Removes the entry, wherever it is, and returns its value.
    ///
    /// # Panics
    ///
    /// If `key` holds no entry.
    #[inline]
    pub(crate) fn remove(&mut self, key: u32) -> T {
        let e = &self.entries[key as usize];
        if e.prev != DETACHED {
            self.detach(key);
            self.pending -= 1;
        } else if e.tick == NEVER {
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
        } else if e.tick != NEVER {
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
        (e.prev != DETACHED && e.prev != UNFILED && e.tick > self.elapsed).then_some(e.tick)
    }

    /// The value of `key` and the tick it is filed at.
    pub(crate) fn get_with_tick(&self, key: u32) -> Option<(u64, &T)> {
        self.entries.get(key as usize).map(|e| (e.tick, &e.value))
    }

    pub(crate) fn get(&self, key: u32) -> Option<&T> {
        self.entries.get(key as usize).map(|e| &e.value)
    }

    pub(crate) fn get_mut(&mut self, key: u32) -> Option<&mut T> {
        self.entries.get_mut(key as usize).map(|e| &mut e.value)
    }

    pub(crate) fn tick_of(&self, key: u32) -> u64 {
        self.entries[key as usize].tick
    }

    pub(crate) fn place_of(&self, key: u32) -> Place {
        let e = &self.entries[key as usize];
        if e.tick == NEVER {
            Place::Parked
        } else if e.prev != DETACHED && e.tick > self.elapsed {
            // In a bucket, or unfiled (whose tick is always ahead).
            Place::Scheduled
        } else {
            Place::Expired
        }
    }

    /// Processes every tick up to and including `now`: each entry whose tick
    /// has come moves to the due list. With more ticks to catch up than the
    /// wheel has buckets, each bucket is visited once.
    pub(crate) fn advance(&mut self, now: u64) {
        if now <= self.elapsed {
            return;
        }
        self.file_unfiled();
        if self.next <= now {
            // Ticks `elapsed + 1 ..= now`, each bucket at most once.
            let span = (now - self.elapsed).min(self.mask + 1);
            let mut i = 0;
            while let Some(j) = self.next_occupied(i).filter(|&j| j < span) {
                let b = self.bucket_at(j);
                if self.mins[b] <= now {
                    self.visit(b, now);
                }
                i = j + 1;
            }
        }
        self.elapsed = now;
        self.next = self.scan_next();
        debug_assert!(self.occupancy_exact());
    }

    /// The bucket of tick `elapsed + 1 + i`.
    fn bucket_at(&self, i: u64) -> usize {
        (self.elapsed.wrapping_add(1).wrapping_add(i) & self.mask) as usize
    }

    /// The smallest `j >= i`, below the number of buckets, whose bucket
    /// (that of tick `elapsed + 1 + j`) holds an entry.
    fn next_occupied(&self, mut i: u64) -> Option<u64> {
        let slots = self.mask + 1;
        while i < slots {
            let b = self.bucket_at(i);
            let bits = self.occupied[b / 64] >> (b % 64);
            if bits != 0 {
                let j = i + u64::from(bits.trailing_zeros());
                return (j < slots).then_some(j);
            }
            // To the end of the word, or of the buckets, where ticks wrap.
            i += (64 - (b % 64) as u64).min(slots - b as u64);
        }
        None
    }

    fn mark(&mut self, b: usize) {
        self.occupied[b / 64] |= 1 << (b % 64);
    }

    fn unmark(&mut self, b: usize) {
        self.occupied[b / 64] &= !(1 << (b % 64));
    }

    /// The `occupied` invariant (debug builds).
    fn occupancy_exact(&self) -> bool {
        self.mins.iter().enumerate().all(|(b, &m)| {
            let set = self.occupied[b / 64] & (1 << (b % 64)) != 0;
            set == (m != NEVER) && set == (self.buckets[b].head != NIL)
        })
    }

    /// Moves the due entries of bucket `b` to the due list and makes the
    /// bucket's bounds exact again.
    fn visit(&mut self, b: usize, now: u64) {
        if self.buckets[b].max <= now {
            self.splice_due(b);
            return;
        }
        let mut key = self.buckets[b].head;
        let (mut min, mut max) = (NEVER, 0);
        while key != NIL {
            let e = &self.entries[key as usize];
            let next = e.next;
            if e.tick <= now {
                self.unlink_from(key, Some(b));
                self.push_due(key);
            } else {
                min = min.min(e.tick);
                max = max.max(e.tick);
            }
            key = next;
        }
        self.mins[b] = min;
        self.buckets[b].max = max;
        if min == NEVER {
            self.unmark(b);
        }
    }

    /// Appends the whole of bucket `b`, every entry of which is due, to the
    /// due list, in the order a walk would have moved them.
    fn splice_due(&mut self, b: usize) {
        let Bucket { head, tail, .. } = std::mem::replace(&mut self.buckets[b], Bucket::EMPTY);
        self.mins[b] = NEVER;
        self.unmark(b);
        if head == NIL {
            return;
        }
        if self.due_tail == NIL {
            self.due_head = head;
        } else {
            self.entries[self.due_tail as usize].next = head;
            self.entries[head as usize].prev = self.due_tail;
        }
        self.due_tail = tail;
    }

    /// The earliest tick that can hold work, scanning the buckets in tick
    /// order from `elapsed + 1`: the first bucket holding an entry of the
    /// current turn has the earliest tick of all.
    fn scan_next(&self) -> u64 {
        let mut best = NEVER;
        let mut i = 0;
        while let Some(j) = self.next_occupied(i) {
            let t = self.elapsed.saturating_add(j + 1);
            let m = self.mins[self.bucket_at(j)];
            if m == t {
                return t;
            }
            best = best.min(m);
            i = j + 1;
        }
        best
    }

    /// The earliest tick at which [`advance`](Self::advance) can find work:
    /// `elapsed` itself when entries are due now, `None` when no entry will
    /// ever expire. A lower bound: the tick may turn out to hold nothing.
    pub(crate) fn next_expiration(&self) -> Option<u64> {
        if self.due_head != NIL {
            Some(self.elapsed)
        } else if self.next == NEVER {
            None
        } else {
            Some(self.next)
        }
    }

    /// Takes the first entry off the due list; it stays in the slab,
    /// detached and expired, until its owner removes it.
    pub(crate) fn pop_due(&mut self) -> Option<(u32, &mut T)> {
        let key = self.due_head;
        if key == NIL {
            return None;
        }
        self.unlink_from(key, None);
        self.pending -= 1;
        Some((key, &mut self.entries[key as usize].value))
    }

    /// The entry that expires first: the head of the due list, else the
    /// scheduled entry with the smallest tick as `due` works it out from the
    /// tick an entry is filed at and its value (never earlier than that
    /// tick: an owner may keep a later one in the value). O(slots) at worst:
    /// buckets are scanned in tick order and the scan stops at the first
    /// bucket whose tick is already beaten.
    pub(crate) fn peek_earliest(&self, due: impl Fn(u64, &T) -> u64) -> Option<u32> {
        if self.due_head != NIL {
            return Some(self.due_head);
        }
        let mut best: Option<(u64, u32)> = None;
        let mut i = 0;
        while let Some(j) = self.next_occupied(i) {
            i = j + 1;
            let t = self.elapsed.saturating_add(j + 1);
            let b = self.bucket_at(j);
            let mut key = self.buckets[b].head;
            while key != NIL {
                let e = &self.entries[key as usize];
                let tick = due(e.tick, &e.value);
                debug_assert!(tick >= e.tick, "a due tick before the filed one");
                if best.is_none_or(|(best, _)| tick < best) {
                    best = Some((tick, key));
                }
                key = e.next;
            }
            // Every later bucket holds ticks after `t` only.
            if best.is_some_and(|(tick, _)| tick <= t) {
                break;
            }
        }
        // Then the unfiled entries, which came after every filed one: only
        // an earlier tick beats what the buckets hold.
        for &key in self.unfiled.iter().filter(|&&k| k != NIL) {
            let e = &self.entries[key as usize];
            let tick = due(e.tick, &e.value);
            if best.is_none_or(|(t, _)| tick < t) {
                best = Some((tick, key));
            }
        }
        best.map(|(_, key)| key)
    }

    /// Walks the due list and asks `later` of each entry (given the tick it
    /// is filed at) whether it is really due at a later tick: an owner may
    /// record a later deadline in the value instead of moving the entry.
    /// One whose later tick is still ahead goes back to be filed there; one
    /// whose later tick has come too stays due, with that tick. Returns
    /// whether any stayed: the due list may then be out of tick order (see
    /// [`sort_due`](Self::sort_due)).
    pub(crate) fn recheck_due(
        &mut self,
        mut later: impl FnMut(u64, &mut T) -> Option<u64>,
    ) -> bool {
        let mut retick = false;
        let mut key = self.due_head;
        while key != NIL {
            let e = &mut self.entries[key as usize];
            let next = e.next;
            if let Some(tick) = later(e.tick, &mut e.value) {
                debug_assert!(tick > e.tick && tick != NEVER, "not a later tick");
                if tick > self.elapsed {
                    self.unlink_from(key, None);
                    self.place_later(key, tick);
                } else {
                    e.tick = tick;
                    retick = true;
                }
            }
            key = next;
        }
        retick
    }

    /// Puts the due list in tick order, keeping the order of entries that
    /// share a tick. For a catch-up over more than a turn, which visits each
    /// bucket once and so mixes turns. O(n + span) when the ticks span at
    /// most four per entry, O(n log n) otherwise.
    pub(crate) fn sort_due(&mut self) {
        let mut due: Vec<(u64, u32)> = Vec::new();
        let mut key = self.due_head;
        while key != NIL {
            let e = &self.entries[key as usize];
            due.push((e.tick, key));
            key = e.next;
        }
        if due.windows(2).all(|w| w[0].0 <= w[1].0) {
            return;
        }
        let lo = due.iter().map(|&(t, _)| t).min().unwrap_or(0);
        let hi = due.iter().map(|&(t, _)| t).max().unwrap_or(0);
        let order: Vec<u32> = if hi - lo < 4 * due.len() as u64 {
            // Counting sort: stable, linear.
            let mut starts = vec![0usize; (hi - lo + 2) as usize];
            for &(t, _) in &due {
                starts[(t - lo + 1) as usize] += 1;
            }
            for i in 1..starts.len() {
                starts[i] += starts[i - 1];
            }
            let mut order = vec![NIL; due.len()];
            for &(t, k) in &due {
                let at = &mut starts[(t - lo) as usize];
                order[*at] = k;
                *at += 1;
            }
            order
        } else {
            due.sort_by_key(|&(t, _)| t);
            due.iter().map(|&(_, k)| k).collect()
        };
        let mut prev = NIL;
        for &k in &order {
            let e = &mut self.entries[k as usize];
            e.prev = prev;
            e.next = NIL;
            if prev == NIL {
                self.due_head = k;
            } else {
                self.entries[prev as usize].next = k;
            }
            prev = k;
        }
        self.due_tail = prev;
        debug_assert!(self.due_ticks_sorted());
    }

    fn due_ticks_sorted(&self) -> bool {
        let mut key = self.due_head;
        let mut last = 0;
        while key != NIL {
            let e = &self.entries[key as usize];
            if e.tick < last {
                return false;
            }
            last = e.tick;
            key = e.next;
        }
        true
    }

    /// The first entry of the due list, if any, without taking it.
    pub(crate) fn peek_due(&self) -> Option<u32> {
        (self.due_head != NIL).then_some(self.due_head)
    }

    /// Detaches every pending entry (scheduled, due or parked) and hands
    /// each to `f`; they stay in the slab. Used at shutdown.
    pub(crate) fn drain_pending(&mut self, mut f: impl FnMut(u32, &mut T)) {
        self.file_unfiled();
        let keys: Vec<u32> = self
            .entries
            .iter()
            .filter(|(_, e)| e.prev != DETACHED || e.tick == NEVER)
            .map(|(k, _)| k as u32)
            .collect();
        for key in keys {
            if self.entries[key as usize].prev != DETACHED {
                self.unlink(key);
            }
            // Expired from now on, even a parked entry.
            self.entries[key as usize].tick = self.elapsed;
            self.pending -= 1;
            f(key, &mut self.entries[key as usize].value);
        }
        self.mins.fill(NEVER);
        self.occupied.fill(0);
        self.buckets.fill(Bucket::EMPTY);
        self.next = NEVER;
    }

    /// Removes every entry.
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.unfiled.clear();
        self.buckets.fill(Bucket::EMPTY);
        self.mins.fill(NEVER);
        self.occupied.fill(0);
        self.next = NEVER;
        self.due_head = NIL;
        self.due_tail = NIL;
        self.pending = 0;
    }

    // ===== lists =====

    /// Puts a detached entry where `tick` says, leaving it unfiled when its
    /// tick is ahead.
    fn place_later(&mut self, key: u32, tick: u64) {
        if tick == NEVER || tick <= self.elapsed {
            self.place(key, tick);
            return;
        }
        if self.unfiled.len() == FILE_AT {
            self.file_unfiled();
        }
        let e = &mut self.entries[key as usize];
        debug_assert_eq!(e.prev, DETACHED, "placed twice");
        e.tick = tick;
        e.prev = UNFILED;
        e.next = self.unfiled.len() as u32;
        self.unfiled.push(key);
        if tick < self.next {
            self.next = tick;
        }
    }

    /// Files every unfiled entry in its bucket, in the order they came.
    fn file_unfiled(&mut self) {
        let mut keys = std::mem::take(&mut self.unfiled);
        for &key in keys.iter().filter(|&&k| k != NIL) {
            let e = &mut self.entries[key as usize];
            debug_assert!(e.prev == UNFILED && e.tick > self.elapsed);
            e.prev = DETACHED;
            let tick = e.tick;
            self.place(key, tick);
        }
        keys.clear();
        self.unfiled = keys;
    }

    /// Takes a linked or unfiled entry out of where it is.
    fn detach(&mut self, key: u32) {
        let e = &mut self.entries[key as usize];
        if e.prev == UNFILED {
            let at = e.next as usize;
            debug_assert_eq!(self.unfiled[at], key);
            e.prev = DETACHED;
            e.next = NIL;
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
        } else {
            self.unlink(key);
        }
    }

    /// Links a detached entry where `tick` says.
    fn place(&mut self, key: u32, tick: u64) {
        debug_assert_eq!(self.entries[key as usize].prev, DETACHED, "placed twice");
        self.entries[key as usize].tick = tick;
        if tick == NEVER {
            let e = &mut self.entries[key as usize];
            e.prev = DETACHED;
            e.next = NIL;
        } else if tick <= self.elapsed {
            // Ahead of what advancing moved there: the last entry filed as
            // due comes out first, as from tokio-util's stack of expired
            // values.
            self.push_due_front(key);
        } else {
            let b = (tick & self.mask) as usize;
            let tail = self.buckets[b].tail;
            {
                let e = &mut self.entries[key as usize];
                e.prev = tail;
                e.next = NIL;
            }
            if tail == NIL {
                self.buckets[b].head = key;
            } else {
                self.entries[tail as usize].next = key;
            }
            self.buckets[b].tail = key;
            self.mark(b);
            if tick < self.mins[b] {
                self.mins[b] = tick;
            }
            if tick > self.buckets[b].max {
                self.buckets[b].max = tick;
            }
            if tick < self.next {
                self.next = tick;
            }
        }
    }

    fn push_due(&mut self, key: u32) {
        let tail = self.due_tail;
        {
            let e = &mut self.entries[key as usize];
            e.prev = NIL;
            e.next = NIL;
        }
        if tail == NIL {
            self.due_head = key;
        } else {
            self.entries[tail as usize].next = key;
            self.entries[key as usize].prev = tail;
        }
        self.due_tail = key;
    }

    fn push_due_front(&mut self, key: u32) {
        let head = self.due_head;
        {
            let e = &mut self.entries[key as usize];
            e.prev = NIL;
            e.next = head;
        }
        if head == NIL {
            self.due_tail = key;
        } else {
            self.entries[head as usize].prev = key;
        }
        self.due_head = key;
    }

    /// Unlinks a linked entry from its bucket or from the due list.
    fn unlink(&mut self, key: u32) {
        let tick = self.entries[key as usize].tick;
        let bucket = (tick > self.elapsed).then_some((tick & self.mask) as usize);
        self.unlink_from(key, bucket);
        if let Some(b) = bucket {
            if self.buckets[b].head == NIL {
                self.mins[b] = NEVER;
                self.buckets[b].max = 0;
                self.unmark(b);
            }
        }
    }

    /// Unlinks `key` from bucket `b`, or from the due list when `None`.
    fn unlink_from(&mut self, key: u32, bucket: Option<usize>) {
        let (prev, next) = {
            let e = &mut self.entries[key as usize];
            let links = (e.prev, e.next);
            e.prev = DETACHED;
            e.next = NIL;
            links
        };
        debug_assert_ne!(prev, DETACHED, "unlinking an entry in no list");
        // An entry without a predecessor heads the list its tick names.
        debug_assert!(
            prev != NIL
                || match bucket {
                    Some(b) => self.buckets[b].head == key,
                    None => self.due_head == key,
                }
        );
        if prev == NIL {
            match bucket {
                Some(b) => self.buckets[b].head = next,
                None => self.due_head = next,
            }
        } else {
            self.entries[prev as usize].next = next;
        }
        if next == NIL {
            match bucket {
                Some(b) => self.buckets[b].tail = prev,
                None => self.due_tail = prev,
            }
        } else {
            self.entries[next as usize].prev = prev;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(w: &mut HashedWheel<u32>) -> Vec<u32> {
        let mut out = Vec::new();
        while let Some((_, v)) = w.pop_due() {
            out.push(*v);
        }
        out.sort_unstable();
        out
    }

    #[test]
    fn entries_fire_at_their_tick_not_before() {
        let mut w = HashedWheel::new(8, 0);
        w.insert(3, 3).unwrap();
        w.insert(5, 5).unwrap();
        w.advance(2);
        assert!(drain(&mut w).is_empty());
        w.advance(3);
        assert_eq!(drain(&mut w), [3]);
        w.advance(4);
        assert!(drain(&mut w).is_empty());
        w.advance(5);
        assert_eq!(drain(&mut w), [5]);
        assert_eq!(w.pending(), 0);
    }

    #[test]
    fn a_wholly_due_bucket_moves_in_one_splice_in_walk_order() {
        let mut w = HashedWheel::new(4, 0);
        let a = w.insert(1, 10).unwrap();
        let b = w.insert(1, 11).unwrap();
        let c = w.insert(1, 12).unwrap();
        w.insert(2, 20).unwrap();
        w.insert(5, 50).unwrap(); // bucket 1, one turn away
                                  // Leaving the bucket keeps its tail right: remove the tail (the last
                                  // filed) and the middle.
        w.remove(c);
        w.remove(b);
        w.advance(2);
        let mut order = Vec::new();
        while let Some((_, v)) = w.pop_due() {
            order.push(*v);
        }
        assert_eq!(order, [10, 20]);
        w.remove(a);
        // Bucket 1 still holds tick 5 after its due entries left it; a new
        // entry there links behind nothing stale.
        w.insert(9, 90).unwrap();
        w.advance(5);
        assert_eq!(drain(&mut w), [50]);
        w.advance(9);
        assert_eq!(drain(&mut w), [90]);
        assert_eq!(w.pending(), 0);
    }

    /// Entries of one tick expire in the order they were filed, whether
    /// their bucket moves whole or is walked: a herd of tasks is woken in
    /// the order it registered, which is the order its memory was touched.
    #[test]
    fn entries_of_one_tick_expire_in_filing_order() {
        let popped = |w: &mut HashedWheel<u32>| {
            let mut out = Vec::new();
            while let Some((_, v)) = w.pop_due() {
                out.push(*v);
            }
            out
        };
        let mut w = HashedWheel::new(4, 0);
        for v in 0..5 {
            w.insert(2, v).unwrap();
        }
        w.advance(2);
        assert_eq!(popped(&mut w), [0, 1, 2, 3, 4]);
        // The same bucket with an entry a turn away: walked, not spliced.
        w.insert(10, 99).unwrap();
        for v in 0..5 {
            w.insert(6, v).unwrap();
        }
        w.advance(6);
        assert_eq!(popped(&mut w), [0, 1, 2, 3, 4]);
        w.advance(10);
        assert_eq!(drain(&mut w), [99]);
    }

    #[test]
    fn entries_turns_away_wait_for_their_round() {
        let mut w = HashedWheel::new(4, 0);
        // Same bucket (1), three different turns.
        for t in [1, 5, 9] {
            w.insert(t, t as u32).unwrap();
        }
        let mut fired = Vec::new();
        for now in 1..=9 {
            w.advance(now);
            for v in drain(&mut w) {
                fired.push((now, v));
            }
        }
        assert_eq!(fired, [(1, 1), (5, 5), (9, 9)]);
    }

    #[test]
    fn catching_up_more_than_a_turn_fires_everything_due_once() {
        let mut w = HashedWheel::new(8, 0);
        for t in 1..=40u64 {
            w.insert(t, t as u32).unwrap();
        }
        w.advance(30);
        assert_eq!(drain(&mut w), (1..=30).collect::<Vec<_>>());
        assert_eq!(w.pending(), 10);
        assert_eq!(w.next_expiration(), Some(31));
        w.advance(1000);
        assert_eq!(drain(&mut w), (31..=40).collect::<Vec<_>>());
        assert_eq!(w.next_expiration(), None);
    }

    #[test]
    fn remove_and_reschedule_are_exact() {
        let mut w = HashedWheel::new(16, 0);
        let a = w.insert(10, 1).unwrap();
        let b = w.insert(10, 2).unwrap();
        let c = w.insert(26, 3).unwrap();
        assert_eq!(w.remove(b), 2);
        w.reschedule(c, 4);
        w.advance(4);
        assert_eq!(drain(&mut w), [3]);
        assert_eq!(w.place_of(c), Place::Expired);
        w.reschedule(c, 12);
        assert_eq!(w.place_of(c), Place::Scheduled);
        assert_eq!(w.pending(), 2);
        w.advance(11);
        assert_eq!(drain(&mut w), [1]);
        w.advance(12);
        assert_eq!(drain(&mut w), [3]);
        assert_eq!(w.remove(a), 1);
        assert_eq!(w.remove(c), 3);
        assert_eq!(w.len(), 0);
    }

    #[test]
    fn past_ticks_go_to_the_due_list_and_never_parks() {
        let mut w = HashedWheel::new(4, 100);
        let k = w.insert(50, 1).unwrap();
        assert_eq!(w.place_of(k), Place::Expired);
        assert_eq!(w.next_expiration(), Some(100));
        let p = w.insert(NEVER, 2).unwrap();
        assert_eq!(w.place_of(p), Place::Parked);
        assert_eq!(drain(&mut w), [1]);
        w.advance(u64::MAX - 1);
        assert!(drain(&mut w).is_empty());
        assert_eq!(w.pending(), 1);
        assert_eq!(w.remove(p), 2);
        assert_eq!(w.pending(), 0);
    }

    #[test]
    fn next_expiration_finds_the_earliest_tick() {
        let mut w = HashedWheel::new(8, 0);
        assert_eq!(w.next_expiration(), None);
        w.insert(20, 0).unwrap(); // bucket 4, turn 2
        w.insert(13, 0).unwrap(); // bucket 5, turn 1
        w.advance(1);
        assert_eq!(w.next_expiration(), Some(13));
        let k = w.insert(3, 0).unwrap();
        assert_eq!(w.next_expiration(), Some(3));
        w.remove(k);
        w.advance(3);
        assert_eq!(w.next_expiration(), Some(13));
    }

    #[test]
    fn peek_earliest_finds_the_smallest_tick() {
        let mut w = HashedWheel::new(8, 0);
        assert_eq!(w.peek_earliest(|t, _| t), None);
        let far = w.insert(17, 0).unwrap(); // bucket 1, turn 3
        let near = w.insert(10, 0).unwrap(); // bucket 2, turn 2
        assert_eq!(w.peek_earliest(|t, _| t), Some(near));
        w.remove(near);
        assert_eq!(w.peek_earliest(|t, _| t), Some(far));
        let due = w.insert(0, 0).unwrap();
        assert_eq!(w.peek_earliest(|t, _| t), Some(due));
    }

    /// An owner that keeps a later tick in the value (here: the value is
    /// how many ticks later): `peek_earliest` counts it, and `recheck_due`
    /// files an entry whose later tick is ahead again and keeps one whose
    /// later tick has come too, at that tick.
    #[test]
    fn an_owners_later_tick_counts_in_peek_and_recheck() {
        let mut w = HashedWheel::new(8, 0);
        let later = |t: u64, &v: &u32| t + u64::from(v);
        let pop = |w: &mut HashedWheel<u32>| {
            std::iter::from_fn(|| w.pop_due().map(|(k, _)| k)).collect::<Vec<_>>()
        };
        let pushed = w.insert(2, 0).unwrap();
        let plain = w.insert(5, 0).unwrap();
        let caught = w.insert(3, 0).unwrap();
        w.advance(1); // files them all
        assert!(w.filed_at(pushed).is_some() && w.filed_at(plain).is_some());
        *w.get_mut(pushed).unwrap() = 7; // due at 9
        *w.get_mut(caught).unwrap() = 1; // due at 4
        assert_eq!(w.peek_earliest(later), Some(caught));
        assert_eq!(w.get_with_tick(pushed), Some((2, &7)));
        w.advance(4);
        let retick = w.recheck_due(|t, v| (*v != 0).then(|| t + u64::from(std::mem::take(v))));
        assert!(retick, "`caught` stays due at 4");
        assert_eq!(w.tick_of(caught), 4);
        assert_eq!(w.tick_of(pushed), 9);
        assert_eq!(w.place_of(pushed), Place::Scheduled);
        assert_eq!(pop(&mut w), [caught]);
        assert_eq!(w.peek_earliest(later), Some(plain));
        w.advance(9);
        assert!(!w.recheck_due(|_, _| None));
        assert_eq!(pop(&mut w), [plain, pushed]);
    }

    #[test]
    fn a_timer_entry_is_32_bytes_in_the_slab() {
        // The shards store a waker (the tick it is due at is in the shard's
        // word table, 8 bytes more); with the future (40 bytes) a pending
        // timer stays within 80 bytes. A vacant slot is `None`: the waker's
        // pointer leaves a niche for it, so the `Option` costs no word.
        type Waker = std::task::Waker;
        assert_eq!(std::mem::size_of::<Entry<Waker>>(), 32);
        assert_eq!(std::mem::size_of::<Option<Entry<Waker>>>(), 32);
    }

    #[test]
    fn sort_due_orders_a_catch_up_over_turns_by_tick() {
        for spread in [1u64, 1000] {
            let mut w = HashedWheel::new(4, 0);
            // Ticks over five turns, inserted out of order; two share tick 6.
            let ticks = [13u64, 2, 6, 17, 9, 6, 20, 1];
            for (i, &t) in ticks.iter().enumerate() {
                w.insert(t * spread, i as u32).unwrap();
            }
            w.advance(20 * spread);
            w.sort_due();
            let mut out = Vec::new();
            while let Some((k, v)) = w.pop_due() {
                let v = *v;
                out.push((w.tick_of(k) / spread, v));
            }
            let mut want: Vec<(u64, u32)> = ticks
                .iter()
                .enumerate()
                .map(|(i, &t)| (t, i as u32))
                .collect();
            want.sort_by_key(|&(t, _)| t);
            let got: Vec<u64> = out.iter().map(|&(t, _)| t).collect();
            let expect: Vec<u64> = want.iter().map(|&(t, _)| t).collect();
            assert_eq!(got, expect, "spread {spread}");
        }
    }

    /// In pop order.
    fn popped(w: &mut HashedWheel<u32>) -> Vec<u32> {
        let mut out = Vec::new();
        while let Some((_, v)) = w.pop_due() {
            out.push(*v);
        }
        out
    }

    /// An entry removed before it is filed leaves a hole, not a link: the
    /// others are filed in the order they came, and a rescheduled one goes
    /// behind them, as a bucket's tail would take it.
    #[test]
    fn unfiled_entries_leave_holes_and_keep_their_order() {
        let mut w = HashedWheel::new(8, 0);
        let keys: Vec<u32> = (0..5).map(|v| w.insert(4, v).unwrap()).collect();
        assert!(keys.iter().all(|&k| w.is_unfiled(k)));
        assert_eq!(w.place_of(keys[1]), Place::Scheduled);
        assert_eq!(w.remove(keys[1]), 1);
        w.reschedule(keys[0], 4);
        assert_eq!(w.next_expiration(), Some(4), "unfiled ticks count");
        assert_eq!(w.pending(), 4);
        w.advance(3);
        assert!(keys.iter().all(|&k| k == keys[1] || !w.is_unfiled(k)));
        assert!(w.pop_due().is_none(), "never early");
        w.advance(4);
        assert_eq!(popped(&mut w), [2, 3, 4, 0]);
        assert_eq!(w.pending(), 0);
    }

    /// Past [`FILE_AT`] the waiting entries are filed in one batch, in the
    /// order they came; a removed slot is handed out again at once.
    #[test]
    fn a_full_unfiled_list_is_filed_in_order() {
        let mut w = HashedWheel::new(64, 0);
        let n = FILE_AT as u32 + 5;
        let keys: Vec<u32> = (0..n).map(|v| w.insert(7, v).unwrap()).collect();
        assert!(!w.is_unfiled(keys[0]), "filed with the first batch");
        assert!(w.is_unfiled(keys[n as usize - 1]));
        assert_eq!(w.remove(keys[n as usize - 1]), n - 1);
        assert_eq!(w.insert(7, n).unwrap(), keys[n as usize - 1]);
        w.advance(7);
        let mut want: Vec<u32> = (0..n - 1).collect();
        want.push(n);
        assert_eq!(popped(&mut w), want);
    }

    /// A removal or a move of an unfiled entry writes no bucket: bucket
    /// lists and bounds stay as they were.
    #[test]
    fn removing_an_unfiled_entry_touches_no_bucket() {
        let mut w = HashedWheel::new(8, 0);
        let a = w.insert(3, 1).unwrap();
        w.advance(1); // files `a`
        let b = w.insert(3, 2).unwrap();
        let c = w.insert(11, 3).unwrap();
        let bucket = w.buckets[3];
        w.remove(b);
        w.reschedule(c, 19);
        assert_eq!(
            (w.buckets[3].head, w.buckets[3].tail),
            (bucket.head, bucket.tail)
        );
        assert_eq!(w.buckets[3].head, a);
        assert!(w.is_unfiled(c));
        w.advance(3);
        assert_eq!(popped(&mut w), [1]);
        w.advance(18);
        assert!(w.pop_due().is_none());
        w.advance(19);
        assert_eq!(popped(&mut w), [3]);
    }

    /// `peek_earliest` sees unfiled entries; on a tick they share, a filed
    /// entry came first.
    #[test]
    fn peek_earliest_sees_unfiled_entries() {
        let mut w = HashedWheel::new(8, 0);
        let filed = w.insert(6, 1).unwrap();
        w.advance(1);
        let early = w.insert(4, 2).unwrap();
        assert_eq!(w.peek_earliest(|t, _| t), Some(early));
        w.remove(early);
        let tie = w.insert(6, 3).unwrap();
        assert!(w.is_unfiled(tie));
        assert_eq!(w.peek_earliest(|t, _| t), Some(filed));
        w.remove(filed);
        assert_eq!(w.peek_earliest(|t, _| t), Some(tie));
    }

    #[test]
    fn drain_pending_detaches_everything() {
        let mut w = HashedWheel::new(8, 0);
        w.insert(3, 1).unwrap();
        w.insert(NEVER, 2).unwrap();
        w.insert(0, 3).unwrap();
        w.advance(1); // files the first
        w.insert(5, 4).unwrap(); // unfiled
        let mut seen = Vec::new();
        w.drain_pending(|_, v| seen.push(*v));
        seen.sort_unstable();
        assert_eq!(seen, [1, 2, 3, 4]);
        assert_eq!(w.pending(), 0);
        assert_eq!(w.len(), 4);
        assert!(w.pop_due().is_none());
    }

    /// Random inserts, removals and advances on wheels of 1 to 4096 buckets
    /// (the occupancy bitmap wraps inside one word below 64), against a plain
    /// list: every entry comes out exactly at its tick, and
    /// `next_expiration` never passes the earliest scheduled tick.
    #[test]
    fn scans_skip_empty_buckets_and_miss_nothing() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut rand = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for slots in [1u64, 2, 8, 64, 128, 4096] {
            let start = rand(1 << 40);
            let mut w = HashedWheel::new(slots as usize, start);
            let mut live: Vec<(u32, u64)> = Vec::new();
            for _ in 0..3000 {
                match rand(4) {
                    0 | 1 => {
                        let tick = w.elapsed() + 1 + rand(3 * slots + 5);
                        let key = w.insert(tick, tick as u32).unwrap();
                        live.push((key, tick));
                    }
                    2 if !live.is_empty() => {
                        let (key, _) = live.swap_remove(rand(live.len() as u64) as usize);
                        w.remove(key);
                    }
                    _ => {
                        if let (Some(next), Some(min)) =
                            (w.next_expiration(), live.iter().map(|&(_, t)| t).min())
                        {
                            assert!(next <= min, "{slots} buckets: next {next} after {min}");
                        }
                        let now = w.elapsed() + rand(2 * slots + 2);
                        w.advance(now);
                        let mut fired = Vec::new();
                        while let Some((key, _)) = w.pop_due() {
                            fired.push(key);
                        }
                        for &key in &fired {
                            w.remove(key);
                        }
                        fired.sort_unstable();
                        let mut due: Vec<u32> = live
                            .iter()
                            .filter(|&&(_, t)| t <= now)
                            .map(|&(k, _)| k)
                            .collect();
                        due.sort_unstable();
                        assert_eq!(fired, due, "{slots} buckets, advanced to {now}");
                        live.retain(|&(_, t)| t > now);
                    }
                }
            }
        }
    }
}
