//! The due list: entries whose tick has come, handed out in order, and
//! what an owner asks of it (the earliest entry, its own later ticks).

use super::{Bucket, HashedWheel, DETACHED, NEVER, NIL};

impl<T> HashedWheel<T> {
    /// Takes the first entry off the due list; it stays in the slab,
    /// detached and expired, until its owner removes it.
    pub(crate) fn pop_due(&mut self) -> Option<(u32, &mut T)> {
        let key = self.due.head;
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
    /// tick: an owner may keep a later one in the value). O(buckets) at worst:
    /// buckets are scanned in tick order and the scan stops at the first
    /// bucket whose tick is already beaten.
    pub(crate) fn peek_earliest(&self, due: impl Fn(u64, &T) -> u64) -> Option<u32> {
        if self.due.head != NIL {
            return Some(self.due.head);
        }
        let mut best: Option<(u64, u32)> = None;
        let mut i = 0;
        while let Some(j) = self.next_occupied(i) {
            i = j + 1;
            let t = self.processed.saturating_add(j + 1);
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
        let mut key = self.due.head;
        while key != NIL {
            let e = &mut self.entries[key as usize];
            let next = e.next;
            if let Some(tick) = later(e.tick, &mut e.value) {
                debug_assert!(tick > e.tick && tick != NEVER, "not a later tick");
                if tick > self.processed {
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
        let mut key = self.due.head;
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
            (e.prev, e.next) = (prev, NIL);
            if prev == NIL {
                self.due.head = k;
            } else {
                self.entries[prev as usize].next = k;
            }
            prev = k;
        }
        self.due.tail = prev;
        debug_assert!(self.due_ticks_sorted());
    }

    pub(super) fn due_ticks_sorted(&self) -> bool {
        let mut key = self.due.head;
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
        (self.due.head != NIL).then_some(self.due.head)
    }

    /// Detaches every pending entry (scheduled, due or parked) and hands
    /// each to `f`; they stay in the slab. Used at shutdown.
    pub(crate) fn drain_pending(&mut self, mut f: impl FnMut(u32, &mut T)) {
        self.file_unfiled();
        let keys: Vec<u32> = self
            .entries
            .iter()
            .filter(|(_, e)| e.prev != DETACHED)
            .map(|(k, _)| k as u32)
            .collect();
        for key in keys {
            self.unlink(key);
            // Expired from now on.
            self.entries[key as usize].tick = self.processed;
            self.pending -= 1;
            f(key, &mut self.entries[key as usize].value);
        }
        self.mins.fill(NEVER);
        self.occupied.fill(0);
        self.buckets.fill(Bucket::EMPTY);
        self.next = NEVER;
    }

    /// Appends `key`, detached, to the due list.
    #[inline]
    pub(super) fn push_due(&mut self, key: u32) {
        let tail = std::mem::replace(&mut self.due.tail, key);
        let e = &mut self.entries[key as usize];
        (e.prev, e.next) = (tail, NIL);
        if tail == NIL {
            self.due.head = key;
        } else {
            self.entries[tail as usize].next = key;
        }
    }

    /// Puts `key`, detached, first on the due list.
    #[inline]
    pub(super) fn push_due_front(&mut self, key: u32) {
        let head = std::mem::replace(&mut self.due.head, key);
        let e = &mut self.entries[key as usize];
        (e.prev, e.next) = (NIL, head);
        if head == NIL {
            self.due.tail = key;
        } else {
            self.entries[head as usize].prev = key;
        }
    }
}
