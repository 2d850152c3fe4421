//! The default wheel: one per tokio runtime, found through the current
//! runtime the way tokio's own timer is, so that `hashwheel::sleep` can
//! stand in for `tokio::time::sleep`. The free functions themselves sit
//! beside their types, as tokio's do (`sleep` with `Sleep`, `timeout` with
//! `Timeout`, ...); this module is how they find their wheel: [`claim`] a
//! place on it for a timer, or [`current`] for the wheel itself. It keeps
//! engine handles ([`WheelHandle`]), which the public `Wheel` wraps.
//!
//! # Invariants
//!
//! - [`REGISTRY`] maps a runtime's [`Id`] to that runtime's default wheel,
//!   whose driver is a task on that runtime. A wheel is served for its
//!   runtime only while it has not shut down. Its driver's guard shuts it
//!   down when the runtime drops the driver, so a default wheel never
//!   outlives its runtime's driver: a shut-down entry is dead, replaced on
//!   the next use and pruned whenever an entry is added.
//! - The one exception is an entry marked `closed`: its wheel was already
//!   shut down when it was built, because the runtime had shut down and
//!   refused the driver. It is served as it is (its timers complete at
//!   once, as on any shut-down wheel) instead of being rebuilt on every call.
//! - [`CURRENT`] caches, per thread, the last runtime it served, that
//!   runtime's wheel and the task that made the call. The cache is only a
//!   shortcut to the registry: an entry is used only when the current task's
//!   id matches (a task is bound to its runtime for life) or the current
//!   runtime's id does, and its wheel has not shut down; otherwise the
//!   registry decides.
//! - No lock is held while building a wheel (building spawns the driver),
//!   nor while dropping one.
//!
//! Tokio documents that a runtime [`Id`] may be reused once its runtime is
//! gone (tokio 1.x draws them from a process-wide 64-bit counter, so in
//! practice it never is). A dead runtime's wheel has shut down, so a reused
//! id is not served it: the liveness check sends the call to the registry,
//! which builds a new wheel. Only a `closed` entry would still be served to
//! a reused id, until the next new entry prunes it.

use std::cell::{Cell, RefCell};
use std::sync::{Mutex, MutexGuard};

use tokio::runtime::{Handle, Id};
use tokio::task;

use crate::engine::config::DEFAULT_WHEEL;
use crate::engine::config::{BuildKind, Config};
use crate::engine::handle::WheelHandle;
use crate::engine::shard::Shard;
use crate::engine::shards::ShardRef;
use crate::engine::sync::Arc;

// ===== the registry =====

/// A runtime's default wheel.
#[derive(Debug)]
struct RuntimeWheel {
    runtime: Id,
    wheel: WheelHandle,
    /// The runtime had shut down when the wheel was built.
    closed: bool,
}

/// Every runtime's default wheel. A handful of entries (one per live
/// runtime), looked at only when a thread's cache misses.
static REGISTRY: Mutex<Vec<RuntimeWheel>> = Mutex::new(Vec::new());

/// What a thread remembers of the last call it served.
#[derive(Debug)]
struct Cached {
    runtime: Id,
    /// The task that made the last call served, if it was made in one: a
    /// task runs on one runtime for its whole life, so the same task finds
    /// the same runtime without asking tokio for a handle. A `Cell`, so
    /// that a hit only reads the cache.
    task: Cell<Option<task::Id>>,
    /// The shard of `wheel` this thread uses (`Shards::current`, which
    /// `WheelHandle::claim` claims on), so that a hit claims on it without
    /// looking it up. Declared before
    /// `wheel` so that it is dropped first: when the entry holds the last
    /// handle, the driver that handle's drop wakes must find no count of
    /// the cache's left on the shard.
    shard: Arc<Shard>,
    wheel: WheelHandle,
}

thread_local! {
    /// The last runtime this thread served, and its default wheel.
    static CURRENT: RefCell<Option<Cached>> = const { RefCell::new(None) };
}

fn registry() -> MutexGuard<'static, Vec<RuntimeWheel>> {
    // Nothing panics while holding the lock; a poisoned one is still sound.
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// The wheel of `reg` that serves `runtime`: its own, unless it has shut
/// down after it was built (one built on a runtime that had shut down
/// already serves it still).
fn find(reg: &[RuntimeWheel], runtime: Id) -> Option<WheelHandle> {
    reg.iter()
        .find(|e| e.runtime == runtime && (e.closed || !e.wheel.is_shutdown()))
        .map(|e| e.wheel.clone())
}

/// Makes `wheel` the default wheel of `runtime`; the runtime's live one
/// instead, if it has one already (`Err`). Dead entries, this runtime's and
/// others', are dropped on the way.
fn install(runtime: Id, wheel: WheelHandle) -> Result<WheelHandle, WheelHandle> {
    let mut reg = registry();
    if let Some(found) = find(&reg, runtime) {
        drop(reg);
        drop(wheel);
        return Err(found);
    }
    let (dead, live): (Vec<_>, Vec<_>) = std::mem::take(&mut *reg)
        .into_iter()
        .partition(|e| e.wheel.is_shutdown());
    *reg = live;
    reg.push(RuntimeWheel {
        runtime,
        wheel: wheel.clone(),
        closed: wheel.is_shutdown(),
    });
    drop(reg);
    drop(dead);
    Ok(wheel)
}

/// Why a timer could not be made, or could not do its job: the engine's
/// one error kind (the public `Error` says it in words; a `Builder`'s own
/// reasons are `BuildKind`s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// A `TimeoutHandle` cancelled the timer.
    Cancelled,
    /// The wheel has shut down.
    Shutdown,
    /// The wheel holds `max_timers` timers.
    AtCapacity,
    /// No runtime is current.
    NoRuntime,
    /// The current runtime was built without its timer.
    NoTimer,
}

thread_local! {
    /// The last runtime this thread found without a timer. A runtime keeps
    /// its timer setting for life; finding out costs a panic inside tokio,
    /// caught, which the panic hook prints, so it is found out once.
    static NO_TIMER: Cell<Option<Id>> = const { Cell::new(None) };
}

/// The default wheel of the current runtime `handle` from the registry,
/// built with the default configuration if it has none.
fn lookup(handle: &Handle) -> Result<WheelHandle, Kind> {
    let runtime = handle.id();
    if let Some(wheel) = find(&registry(), runtime) {
        return Ok(wheel);
    }
    if NO_TIMER.try_with(Cell::get).ok().flatten() == Some(runtime) {
        return Err(Kind::NoTimer);
    }
    let config = Config::default().named_if_unnamed(DEFAULT_WHEEL);
    let shards = config
        .validate()
        .expect("the default configuration is valid");
    let Some(wheel) = WheelHandle::spawn(&config, shards, handle) else {
        let _ = NO_TIMER.try_with(|c| c.set(Some(runtime)));
        return Err(Kind::NoTimer);
    };
    // First use racing with first use: the first installed wins.
    Ok(install(runtime, wheel).unwrap_or_else(|found| found))
}

// ===== finding the current runtime's wheel =====

/// Runs `f` on the thread's cache if it serves the current call (see the
/// invariants); `None` otherwise (no cache yet, another runtime's, a wheel
/// shut down, no runtime, or the thread's locals being destroyed).
///
/// One look serves both usual calls: from the task the thread served last,
/// which asks tokio nothing but its task id, and from another task of the
/// same runtime, a server worker's usual call, which asks tokio for the
/// current runtime once ([`serves_current`], as `tokio::time::sleep` asks
/// it for its timer). Inline, with the question to tokio out of line, so
/// that a hit costs a free function a compare, not a call.
#[inline]
fn cached<R>(task: Option<task::Id>, f: impl FnOnce(&Cached) -> R) -> Option<R> {
    CURRENT
        .try_with(|cell| {
            let cached = cell.try_borrow().ok()?;
            let c = cached.as_ref()?;
            let serves = (task.is_some() && c.task.get() == task) || serves_current(c, task);
            (serves && !c.shard.core.is_shutdown()).then(|| f(c))
        })
        .ok()
        .flatten()
}

/// Whether `c` is the current runtime's entry; if so, `task` is the one it
/// served last.
#[inline(never)]
fn serves_current(c: &Cached, task: Option<task::Id>) -> bool {
    // The handle goes at once: holding it (a count on an `Arc` that every
    // worker shares) while the timer is made costs a contended cache line.
    match Handle::try_current() {
        Ok(handle) if handle.id() == c.runtime => {
            c.task.set(task);
            true
        }
        _ => false,
    }
}

/// The current runtime's default wheel, from the registry, which a call
/// from task `task` caches as the thread's: what a call does when
/// [`cached`] misses.
#[cold]
fn uncached(task: Option<task::Id>) -> Result<WheelHandle, Kind> {
    let handle = Handle::try_current().map_err(|_| Kind::NoRuntime)?;
    let wheel = lookup(&handle)?;
    let cached = Cached {
        runtime: handle.id(),
        task: Cell::new(task),
        shard: wheel.shards().current().clone(),
        wheel: wheel.clone(),
    };
    // A thread whose locals are being destroyed, or a nested call, just
    // does not cache.
    let old = CURRENT.try_with(|cell| {
        cell.try_borrow_mut()
            .ok()
            .and_then(|mut slot| slot.replace(cached))
    });
    drop(old);
    Ok(wheel)
}

/// A timer's place on the current runtime's default wheel; an error
/// outside a runtime, in one without its timer, or when the wheel is full.
/// The timer is made from it after the thread-local lookup, which then
/// hands back one word rather than the whole timer. A hit claims on the
/// shard the cache keeps for this thread. Always inline: out of line (the
/// compiler's choice), its call and its result through memory weigh on a
/// ready `timeout` (op_cost).
#[inline(always)]
pub(crate) fn claim() -> Result<ShardRef, Kind> {
    let task = task::try_id();
    match cached(task, |c| ShardRef::claim(&c.shard)) {
        Some(Some(claimed)) => Ok(claimed),
        Some(None) => Err(Kind::AtCapacity),
        None => claim_uncached(task),
    }
}

/// [`claim`] when [`cached`] misses: out of line, so that the hit stays
/// small enough to be inlined into every free function.
#[cold]
#[inline(never)]
fn claim_uncached(task: Option<task::Id>) -> Result<ShardRef, Kind> {
    uncached(task)?.claim().ok_or(Kind::AtCapacity)
}

/// The current runtime's default wheel; an error outside a runtime, or in
/// one without its timer.
pub(crate) fn current() -> Result<WheelHandle, Kind> {
    let task = task::try_id();
    cached(task, |c| c.wheel.clone()).map_or_else(|| uncached(task), Ok)
}

/// Builds a wheel with `config` as the current runtime's default wheel
/// (the public `Builder::build_default`).
pub(crate) fn build_default(config: &Config) -> Result<WheelHandle, BuildKind> {
    let handle = Handle::try_current().map_err(|_| BuildKind::NoRuntime)?;
    let runtime = handle.id();
    if find(&registry(), runtime).is_some() {
        return Err(BuildKind::DefaultExists);
    }
    let config = config.clone().named_if_unnamed(DEFAULT_WHEEL);
    install(runtime, WheelHandle::start(&config)?).map_err(|_| BuildKind::DefaultExists)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_default_configuration_is_valid() {
        let config = Config::default().named_if_unnamed(DEFAULT_WHEEL);
        assert!(config.validate().is_ok());
    }
}
