//! The synchronisation primitives the driver uses: std's, or loom's under
//! `--cfg loom`, so that the loom models run the production code.

#[cfg(loom)]
pub(crate) use loom::sync::{
    atomic::{AtomicBool, AtomicU64, AtomicUsize},
    Arc, Mutex, MutexGuard,
};

#[cfg(not(loom))]
pub(crate) use std::sync::{
    atomic::{AtomicBool, AtomicU64, AtomicUsize},
    Arc, Mutex, MutexGuard,
};

pub(crate) use std::sync::atomic::Ordering;

/// Locks `m`, ignoring poisoning: no code path panics while holding a
/// shard lock, and a poisoned lock must not stop other timers.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}
