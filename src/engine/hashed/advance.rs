//! Advancing the wheel: which buckets hold work (the occupancy bitmap),
//! and moving their due entries to the due list.

use super::{Bucket, HashedWheel, NEVER, NIL};

impl<T> HashedWheel<T> {
    /// Processes every tick up to and including `now`: each entry whose tick
    /// has come moves to the due list. With more ticks to catch up than the
    /// wheel has buckets, each bucket is visited once.
    pub(crate) fn advance(&mut self, now: u64) {
        if now <= self.processed {
            return;
        }
        self.file_unfiled();
        if self.next <= now {
            // Ticks `processed + 1 ..= now`, each bucket at most once.
            let span = (now - self.processed).min(self.mask + 1);
            let mut i = 0;
            while let Some(j) = self.next_occupied(i).filter(|&j| j < span) {
                let b = self.bucket_at(j);
                if self.mins[b] <= now {
                    self.visit(b, now);
                }
                i = j + 1;
            }
        }
        self.processed = now;
        self.next = self.scan_next();
        debug_assert!(self.occupancy_exact());
    }

    /// The bucket of tick `processed + 1 + i`.
    pub(super) fn bucket_at(&self, i: u64) -> usize {
        (self.processed.wrapping_add(1).wrapping_add(i) & self.mask) as usize
    }

    /// The smallest `j >= i`, below the number of buckets, whose bucket
    /// (that of tick `processed + 1 + j`) holds an entry.
    pub(super) fn next_occupied(&self, mut i: u64) -> Option<u64> {
        let buckets = self.mask + 1;
        while i < buckets {
            let b = self.bucket_at(i);
            let bits = self.occupied[b / 64] >> (b % 64);
            if bits != 0 {
                let j = i + u64::from(bits.trailing_zeros());
                return (j < buckets).then_some(j);
            }
            // To the end of the word, or of the buckets, where ticks wrap.
            i += (64 - (b % 64) as u64).min(buckets - b as u64);
        }
        None
    }

    pub(super) fn mark(&mut self, b: usize) {
        self.occupied[b / 64] |= 1 << (b % 64);
    }

    pub(super) fn unmark(&mut self, b: usize) {
        self.occupied[b / 64] &= !(1 << (b % 64));
    }

    /// The `occupied` invariant (debug builds).
    pub(super) fn occupancy_exact(&self) -> bool {
        self.mins.iter().enumerate().all(|(b, &m)| {
            let set = self.occupied[b / 64] & (1 << (b % 64)) != 0;
            set == (m != NEVER) && set == (self.buckets[b].head != NIL)
        })
    }

    /// Moves the due entries of bucket `b` to the due list and makes the
    /// bucket's bounds exact again.
    pub(super) fn visit(&mut self, b: usize, now: u64) {
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
    pub(super) fn splice_due(&mut self, b: usize) {
        let Bucket { head, tail, .. } = std::mem::replace(&mut self.buckets[b], Bucket::EMPTY);
        self.mins[b] = NEVER;
        self.unmark(b);
        if head == NIL {
            return;
        }
        if self.due.tail == NIL {
            self.due.head = head;
        } else {
            self.entries[self.due.tail as usize].next = head;
            self.entries[head as usize].prev = self.due.tail;
        }
        self.due.tail = tail;
    }

    /// The earliest tick that can hold work, scanning the buckets in tick
    /// order from `processed + 1`: the first bucket holding an entry of the
    /// current turn has the earliest tick of all.
    pub(super) fn scan_next(&self) -> u64 {
        let mut best = NEVER;
        let mut i = 0;
        while let Some(j) = self.next_occupied(i) {
            let t = self.processed.saturating_add(j + 1);
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
    /// `processed` itself when entries are due now, `None` when no entry will
    /// ever expire. A lower bound: the tick may turn out to hold nothing.
    pub(crate) fn next_expiration(&self) -> Option<u64> {
        if self.due.head != NIL {
            Some(self.processed)
        } else if self.next == NEVER {
            None
        } else {
            Some(self.next)
        }
    }
}
