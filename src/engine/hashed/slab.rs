//! Where a wheel's entries live: a slab that hands out the lowest free key.
//!
//! `slab::Slab` reuses the slot freed last. At millions of timers cancelled
//! in random order that sends the next million inserts to random addresses,
//! each a cache miss (reading the free slot's link, then writing the
//! entry); handing out the lowest free key instead fills freed memory front
//! to back, which the prefetcher follows, and keeps the live entries packed
//! low so that a shrink can give the rest back.
//!
//! # Invariants
//!
//! - `entries[k]` is `Some` exactly when key `k` is occupied; `len` counts
//!   them.
//! - Bit `k` of `free` is set exactly when `k < entries.len()` and `entries[k]`
//!   is `None`. Bit `w` of `summary` is set exactly when `free[w] != 0`.
//! - Every key below `low` is occupied: the search for a free key starts
//!   there.

/// Entry storage that hands out the lowest free key (see the module docs).
#[derive(Debug)]
pub(crate) struct Slab<E> {
    entries: Vec<Option<E>>,
    free: Vec<u64>,
    summary: Vec<u64>,
    len: usize,
    low: usize,
}

impl<E> Slab<E> {
    pub(crate) fn with_capacity(capacity: usize) -> Slab<E> {
        Slab {
            entries: Vec::with_capacity(capacity),
            free: Vec::new(),
            summary: Vec::new(),
            len: 0,
            low: 0,
        }
    }

    /// Occupied keys.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn capacity(&self) -> usize {
        self.entries.capacity()
    }

    pub(crate) fn reserve(&mut self, additional: usize) {
        self.entries
            .reserve(additional.saturating_sub(self.entries.len() - self.len));
    }

    /// The key the next [`insert`](Self::insert) will use: never more than
    /// [`len`](Self::len).
    #[cfg(test)]
    fn next_key(&self) -> usize {
        if self.len == self.entries.len() {
            self.entries.len()
        } else {
            self.lowest_free()
        }
    }

    /// Stores `value` under the lowest free key and returns that key.
    #[inline(always)]
    pub(crate) fn insert(&mut self, value: E) -> usize {
        if self.len == self.entries.len() {
            let key = self.entries.len();
            self.entries.push(Some(value));
            if key % 64 == 0 {
                self.free.push(0);
                if self.free.len() % 64 == 1 {
                    self.summary.push(0);
                }
            }
            self.len += 1;
            self.low = key + 1;
            return key;
        }
        let key = self.lowest_free();
        debug_assert!(self.entries[key].is_none());
        self.entries[key] = Some(value);
        let w = key / 64;
        self.free[w] &= !(1 << (key % 64));
        if self.free[w] == 0 {
            self.summary[w / 64] &= !(1 << (w % 64));
        }
        self.len += 1;
        self.low = key + 1;
        key
    }

    /// The lowest free key; there must be one.
    #[inline]
    fn lowest_free(&self) -> usize {
        let (w, b) = (self.low / 64, self.low % 64);
        if let Some(&word) = self.free.get(w) {
            let word = word & (!0 << b);
            if word != 0 {
                return w * 64 + word.trailing_zeros() as usize;
            }
        }
        // The next word holding a free key, 64 words per summary word.
        let mut s = (w + 1) / 64;
        let mut mask = !0u64 << ((w + 1) % 64);
        loop {
            let bits = self.summary[s] & mask;
            if bits != 0 {
                let w = s * 64 + bits.trailing_zeros() as usize;
                return w * 64 + self.free[w].trailing_zeros() as usize;
            }
            s += 1;
            mask = !0;
        }
    }

    /// Takes the value out of `key`.
    ///
    /// # Panics
    ///
    /// If `key` is not occupied.
    #[inline]
    pub(crate) fn remove(&mut self, key: usize) -> E {
        let value = self.entries[key].take().expect("occupied slot");
        let w = key / 64;
        if self.free[w] == 0 {
            self.summary[w / 64] |= 1 << (w % 64);
        }
        self.free[w] |= 1 << (key % 64);
        self.len -= 1;
        self.low = self.low.min(key);
        value
    }

    /// The occupied keys and their values, in key order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, &E)> {
        self.entries
            .iter()
            .enumerate()
            .filter_map(|(k, e)| Some((k, e.as_ref()?)))
    }

    pub(crate) fn get(&self, key: usize) -> Option<&E> {
        self.entries.get(key)?.as_ref()
    }

    pub(crate) fn get_mut(&mut self, key: usize) -> Option<&mut E> {
        self.entries.get_mut(key)?.as_mut()
    }

    /// Gives back the memory past the last occupied key.
    pub(crate) fn shrink_to_fit(&mut self) {
        while let Some(None) = self.entries.last() {
            self.entries.pop();
        }
        let n = self.entries.len();
        self.free.truncate(n.div_ceil(64));
        if n % 64 != 0 {
            if let Some(last) = self.free.last_mut() {
                *last &= (1 << (n % 64)) - 1;
            }
        }
        self.summary.truncate(self.free.len().div_ceil(64));
        let words = self.free.len();
        if words % 64 != 0 {
            if let Some(last) = self.summary.last_mut() {
                *last &= (1 << (words % 64)) - 1;
            }
        }
        if let (Some(&word), Some(last)) = (self.free.last(), self.summary.last_mut()) {
            if word == 0 {
                *last &= !(1 << ((words - 1) % 64));
            }
        }
        self.low = self.low.min(n);
        self.entries.shrink_to_fit();
        self.free.shrink_to_fit();
        self.summary.shrink_to_fit();
        debug_assert!(self.bitmaps_exact());
    }

    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.free.clear();
        self.summary.clear();
        self.len = 0;
        self.low = 0;
    }

    /// The bitmaps' invariants (debug builds, where the slab is small).
    fn bitmaps_exact(&self) -> bool {
        if self.entries.len() > 4096 {
            return true;
        }
        let free_ok = (0..self.free.len() * 64).all(|k| {
            let set = self.free[k / 64] & (1 << (k % 64)) != 0;
            set == self.entries.get(k).is_some_and(Option::is_none)
        });
        let summary_ok = (0..self.summary.len() * 64).all(|w| {
            let set = self.summary[w / 64] & (1 << (w % 64)) != 0;
            set == self.free.get(w).is_some_and(|&f| f != 0)
        });
        let low_ok = self.entries[..self.low.min(self.entries.len())]
            .iter()
            .all(Option::is_some);
        free_ok && summary_ok && low_ok && self.free.len() == self.entries.len().div_ceil(64)
    }
}

impl<E> std::ops::Index<usize> for Slab<E> {
    type Output = E;

    fn index(&self, key: usize) -> &E {
        self.entries[key].as_ref().expect("occupied slot")
    }
}

impl<E> std::ops::IndexMut<usize> for Slab<E> {
    fn index_mut(&mut self, key: usize) -> &mut E {
        self.entries[key].as_mut().expect("occupied slot")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_keys_come_back_lowest_first() {
        let mut s = Slab::with_capacity(0);
        let keys: Vec<usize> = (0..300).map(|v| s.insert(v)).collect();
        assert_eq!(keys, (0..300).collect::<Vec<_>>());
        // Freed in a scattered order, across words and summary words.
        for k in [250, 3, 64, 130, 7, 299, 128] {
            assert_eq!(s.remove(k), k);
        }
        assert_eq!(s.len(), 293);
        let again: Vec<usize> = (0..8).map(|v| s.insert(1000 + v)).collect();
        assert_eq!(again, [3, 7, 64, 128, 130, 250, 299, 300]);
        assert_eq!(s[300], 1007);
        assert_eq!(s.get(3), Some(&1000));
        assert!(s.get(301).is_none());
        assert!(s.bitmaps_exact());
    }

    #[test]
    fn a_shrink_gives_back_what_follows_the_last_entry() {
        let mut s = Slab::with_capacity(0);
        for v in 0..5000 {
            s.insert(v);
        }
        for k in (0..5000).rev() {
            if k != 100 {
                s.remove(k);
            }
        }
        s.shrink_to_fit();
        assert_eq!(s.len(), 1);
        assert!(s.capacity() < 128, "{}", s.capacity());
        assert!(s.bitmaps_exact());
        // The keys below the survivor come back first, then new ones.
        let keys: Vec<usize> = (0..102).map(|v| s.insert(v)).collect();
        assert_eq!(keys, (0..100).chain([101, 102]).collect::<Vec<_>>());
        s.remove(100);
        s.shrink_to_fit();
        assert!(s.bitmaps_exact());
        s.clear();
        assert_eq!((s.len(), s.insert(1)), (0, 0));
    }

    proptest::proptest! {
        /// Against a model: every insert takes the lowest key no value
        /// holds, every value stays under its key, and shrinks keep both.
        #[test]
        fn behaves_like_a_lowest_free_key_map(
            ops in proptest::collection::vec((0u8..8, 0usize..600), 1..400)
        ) {
            let mut s = Slab::with_capacity(0);
            let mut model = std::collections::BTreeMap::new();
            for (i, (op, at)) in ops.into_iter().enumerate() {
                match op {
                    0..=4 => {
                        let lowest = (0..).find(|k| !model.contains_key(k)).unwrap();
                        proptest::prop_assert_eq!(s.next_key(), lowest);
                        proptest::prop_assert!(lowest <= s.len());
                        proptest::prop_assert_eq!(s.insert(i), lowest);
                        model.insert(lowest, i);
                    }
                    5 | 6 => {
                        if let Some(&k) = model.keys().nth(at % model.len().max(1)) {
                            proptest::prop_assert_eq!(s.remove(k), model.remove(&k).unwrap());
                        }
                    }
                    _ => s.shrink_to_fit(),
                }
                proptest::prop_assert_eq!(s.len(), model.len());
                proptest::prop_assert!(s.bitmaps_exact());
            }
            let got: Vec<(usize, usize)> = s.iter().map(|(k, &v)| (k, v)).collect();
            let want: Vec<(usize, usize)> = model.into_iter().collect();
            proptest::prop_assert_eq!(got, want);
        }
    }
}
