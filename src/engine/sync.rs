//! The synchronisation primitives the driver uses: std's atomics and a spin
//! lock for the shards, or loom's under `--cfg loom`, so that the loom
//! models run the production code.
//!
//! # The shard lock
//!
//! A shard's lock is taken to register a timer, to poll or reset it while
//! it is pending and to cancel it, by the worker that owns the shard; the
//! driver takes it to expire, and another worker only for a timer that
//! moved there. So it is nearly always free, and what counts is what an
//! uncontended lock and unlock cost. std's `Mutex` releases with an atomic
//! swap, to learn whether a waiter sleeps on the futex; on x86 that is a
//! second locked instruction, which waits until the stores of the critical
//! section (the entry, its bucket neighbour) have reached the cache. `spin`'s `SpinMutex` takes
//! the lock with one compare-and-swap and releases it with a plain store,
//! which waits for nothing, and makes register + cancel measurably cheaper
//! in a task.
//!
//! A waiter spins on a load and yields its thread between looks
//! (`spin::relax::Yield`), so a holder that was preempted gets the CPU
//! back. What holds a shard lock is short and never blocks: no waker is
//! woken or dropped under it (see `crate::engine::shard`), and the longest holds
//! are the driver's, which takes expired wakers in batches, and a growing
//! slab's copy.
//!
//! Under loom the lock is loom's `Mutex`: the models check the protocol
//! built on the lock, and `spin` answers for the lock itself.

#[cfg(loom)]
pub(crate) use loom::sync::{
    atomic::{AtomicBool, AtomicU64, AtomicUsize},
    Arc, Mutex, MutexGuard,
};

#[cfg(not(loom))]
pub(crate) use std::sync::{
    atomic::{AtomicBool, AtomicU64, AtomicUsize},
    Arc,
};

/// A shard's lock (see the module docs).
#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct Mutex<T>(spin::mutex::SpinMutex<T, spin::relax::Yield>);

#[cfg(not(loom))]
pub(crate) type MutexGuard<'a, T> = spin::mutex::SpinMutexGuard<'a, T, spin::relax::Yield>;

#[cfg(not(loom))]
impl<T> Mutex<T> {
    pub(crate) const fn new(value: T) -> Mutex<T> {
        Mutex(spin::mutex::SpinMutex::new(value))
    }
}

// As std's `Mutex` is, and as the wheel's handles and timers were with it:
// a panic under the lock leaves nothing half done (no code path panics
// there), so a caller that caught one may go on using the wheel.
#[cfg(not(loom))]
impl<T> std::panic::RefUnwindSafe for Mutex<T> {}
#[cfg(not(loom))]
impl<T> std::panic::UnwindSafe for Mutex<T> {}

pub(crate) use std::sync::atomic::Ordering;

/// Locks a shard. A panic under the lock releases it (the guard's drop)
/// and poisons nothing: no code path panics while holding a shard lock,
/// and if one did, other timers must go on.
#[cfg(not(loom))]
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    #[cfg(test)]
    LOCKS_TAKEN.with(|n| n.set(n.get() + 1));
    m.0.lock()
}

#[cfg(all(test, not(loom)))]
thread_local! {
    static LOCKS_TAKEN: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many shard locks this thread has taken (unit tests only): for the
/// tests of the paths that promise to take none.
#[cfg(all(test, not(loom)))]
pub(crate) fn locks_taken() -> u64 {
    LOCKS_TAKEN.with(|n| n.get())
}

/// Locks a shard, ignoring loom's poisoning (see the other `lock`).
#[cfg(loom)]
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}
