//! Which waker a sleep's entry holds, as the sleep remembers it, so that a
//! poll with the same waker can skip the shard lock.
//!
//! A [`WakerId`] is a waker's data pointer and the number of its vtable in a
//! process-wide table. Two wakers with equal ids are equal as
//! [`Waker::will_wake`] compares them (same data pointer, same vtable), so a
//! sleep polled with the waker its entry already holds has nothing to store
//! and needs no lock to learn that.
//!
//! # Ground rules
//!
//! - The table only grows: a slot, once set, keeps its vtable for the life
//!   of the process. A number therefore names one vtable forever, and
//!   comparing an id needs one relaxed load.
//! - A vtable met when the table is full gets no number: its id matches no
//!   waker, and those sleeps always take the lock. Nothing is lost but
//!   speed. A program meets a handful of waker vtables (tokio's tasks, a
//!   combinator or two), far fewer than the table holds.
//! - A vtable may have more than one address (one per codegen unit); a
//!   second address takes a second number. Again only speed is at stake:
//!   an id never matches a waker that `will_wake` would tell apart.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{RawWakerVTable, Waker};

/// Vtables the table can number (a power of two); `SLOTS` itself means
/// "none".
const SLOTS: usize = 64;

/// The process's vtable numbers. Plain std atomics, also under loom: the
/// table is append-only and no model depends on its interleavings.
static VTABLES: Vtables = Vtables::new();

/// Numbered vtables' addresses, each in the slot of its number; 0 is a free
/// slot.
struct Vtables([AtomicUsize; SLOTS]);

/// A waker's identity (see the module docs). Packed to 9 bytes so that the
/// sleep that keeps it stays 32 bytes: a vtable address in place of its
/// number would save the lookup at each registration, but make each sleep
/// 8 bytes larger, which in the replay's connection task (two sleeps) costs
/// a cache line more per message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C, packed)]
pub(crate) struct WakerId {
    data: usize,
    vtable: u8,
}

impl WakerId {
    /// Matches no waker.
    pub(crate) const NONE: WakerId = WakerId {
        data: 0,
        vtable: SLOTS as u8,
    };

    /// The id of `waker`, numbering its vtable if it is new.
    #[inline]
    pub(crate) fn of(waker: &Waker) -> WakerId {
        WakerId {
            data: waker.data() as usize,
            vtable: VTABLES.number(vtable_addr(waker)),
        }
    }

    /// Whether `waker` is the waker this id was taken from (or one equal to
    /// it, as `will_wake` sees it). No lock, one relaxed load.
    #[inline]
    pub(crate) fn is(self, waker: &Waker) -> bool {
        let (data, vtable) = (self.data, self.vtable);
        data == waker.data() as usize && VTABLES.addr(vtable) == Some(vtable_addr(waker))
    }
}

fn vtable_addr(waker: &Waker) -> usize {
    waker.vtable() as *const RawWakerVTable as usize
}

impl Vtables {
    const fn new() -> Vtables {
        Vtables([const { AtomicUsize::new(0) }; SLOTS])
    }

    /// The address numbered `n`, if any.
    #[inline]
    fn addr(&self, n: u8) -> Option<usize> {
        self.0
            .get(n as usize)
            .map(|slot| slot.load(Ordering::Relaxed))
    }

    /// The number of the vtable at `addr`, given one if it has none and a
    /// slot is free; `SLOTS` if the table is full. The search starts at a
    /// slot picked by a hash of the address, so that a registration finds
    /// its vtable at the first look however many others came before it.
    #[inline]
    fn number(&self, addr: usize) -> u8 {
        let start =
            (addr as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOTS.trailing_zeros());
        for i in (0..SLOTS).map(|k| (start as usize + k) % SLOTS) {
            let slot = &self.0[i];
            let mut seen = slot.load(Ordering::Relaxed);
            if seen == 0 {
                // Several threads may race for the slot; one wins, and a
                // loser with the same vtable takes the winner's number.
                seen = match slot.compare_exchange(0, addr, Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) => addr,
                    Err(current) => current,
                };
            }
            if seen == addr {
                return i as u8;
            }
        }
        SLOTS as u8
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::Arc;
    use std::task::Wake;

    use super::*;

    struct Noop;

    impl Wake for Noop {
        fn wake(self: Arc<Self>) {}
    }

    #[test]
    fn an_id_matches_its_waker_and_its_clones_only() {
        let a = Waker::from(Arc::new(Noop));
        let b = Waker::from(Arc::new(Noop));
        let id = WakerId::of(&a);
        assert!(id.is(&a));
        assert!(id.is(&a.clone()));
        assert!(!id.is(&b), "another task's waker");
        assert!(!id.is(Waker::noop()));
        assert!(!WakerId::NONE.is(&a));
        assert!(!WakerId::NONE.is(Waker::noop()));
    }

    /// Vtables beyond what the table holds get no number: their ids match
    /// nothing, so their sleeps take the lock, and no id is ever wrong.
    #[test]
    fn a_full_table_numbers_nothing_more() {
        let table = Vtables::new();
        // Fake vtable addresses (ids only compare them).
        let addr = |i: usize| 0x10_0000 + 64 * i;
        let numbers: Vec<u8> = (0..SLOTS + 5).map(|i| table.number(addr(i))).collect();
        let mut given = numbers[..SLOTS].to_vec();
        given.sort_unstable();
        assert_eq!(
            given,
            (0..SLOTS as u8).collect::<Vec<_>>(),
            "each slot once"
        );
        assert!(numbers[SLOTS..].iter().all(|&n| n as usize == SLOTS));
        for (i, &n) in numbers.iter().enumerate() {
            assert_eq!(table.number(addr(i)), n, "a vtable keeps its number");
            if (n as usize) < SLOTS {
                assert_eq!(table.addr(n), Some(addr(i)));
            }
        }
        assert_eq!(table.addr(SLOTS as u8), None);
    }

    /// Two wakers with the same data pointer and different vtables (both
    /// null here: std's no-op waker and `futures`') are told apart, as
    /// `will_wake` tells them apart.
    #[test]
    fn the_vtable_counts_too() {
        let other = futures_util::task::noop_waker();
        assert_eq!(other.data(), Waker::noop().data());
        assert!(!other.will_wake(Waker::noop()));
        assert!(!WakerId::of(Waker::noop()).is(&other));
        assert!(!WakerId::of(&other).is(Waker::noop()));
        assert!(WakerId::of(&other).is(&other));
    }
}
