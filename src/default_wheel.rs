//! The default wheel: one per tokio runtime, found through the current
//! runtime the way tokio's own timer is, so that `hashwheel::sleep` can
//! stand in for `tokio::time::sleep`.
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

use std::cell::RefCell;
use std::future::{Future, IntoFuture};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use tokio::runtime::{Handle, Id};
use tokio::task;
use tokio::time::Instant;

use crate::builder::Builder;
use crate::clock::instant_after;
use crate::delay::{Delay, TimeoutHandle};
use crate::driver::shard::Shard;
use crate::driver::ShardRef;
use crate::error::{BuildError, BuildKind, Error};
use crate::interval::Interval;
use crate::lazy_timeout::LazyTimeout;
use crate::sleep::Sleep;
use crate::sync::Arc;
use crate::timeout::Timeout;
use crate::timer::Wheel;

// ===== the registry =====

/// A runtime's default wheel.
#[derive(Debug)]
struct Entry {
    runtime: Id,
    wheel: Wheel,
    /// The runtime had shut down when the wheel was built.
    closed: bool,
}

impl Entry {
    /// Whether this entry serves `runtime`.
    fn serves(&self, runtime: Id) -> bool {
        self.runtime == runtime && (self.closed || !self.wheel.is_shutdown())
    }
}

/// Every runtime's default wheel. A handful of entries (one per live
/// runtime), looked at only when a thread's cache misses.
static REGISTRY: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// What a thread remembers of the last call it served.
#[derive(Debug)]
struct Cached {
    runtime: Id,
    /// The task that made that call, if it was made in one: a task runs on
    /// one runtime for its whole life, so the same task finds the same
    /// runtime without asking tokio for a handle.
    task: Option<task::Id>,
    /// The shard of `wheel` this thread uses ([`Wheel::thread_shard`]), so
    /// that a hit claims on it without looking it up. Declared before
    /// `wheel` so that it is dropped first: when the entry holds the last
    /// handle, the driver that handle's drop wakes must find no count of
    /// the cache's left on the shard.
    shard: Arc<Shard>,
    wheel: Wheel,
}

thread_local! {
    /// The last runtime this thread served, and its default wheel.
    static CURRENT: RefCell<Option<Cached>> = const { RefCell::new(None) };
}

fn registry() -> MutexGuard<'static, Vec<Entry>> {
    // Nothing panics while holding the lock; a poisoned one is still sound.
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// The registry's wheel for `runtime`, if it serves it.
fn find(runtime: Id) -> Option<Wheel> {
    registry()
        .iter()
        .find(|e| e.serves(runtime))
        .map(|e| e.wheel.clone())
}

/// How [`install`] treats a runtime that already has a live default wheel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Existing {
    /// Keep it and return it (first use racing with first use).
    Keep,
    /// Keep it and fail (`Builder::build_default`).
    Refuse,
}

/// Makes `wheel` the default wheel of `runtime`, unless the runtime has a
/// live one already: then `Keep` returns that one and `Refuse` fails.
/// Dead entries, this runtime's and others', are dropped on the way.
fn install(runtime: Id, wheel: Wheel, existing: Existing) -> Result<Wheel, BuildError> {
    let mut reg = registry();
    if let Some(e) = reg.iter().find(|e| e.serves(runtime)) {
        let found = e.wheel.clone();
        drop(reg);
        drop(wheel);
        return match existing {
            Existing::Keep => Ok(found),
            Existing::Refuse => Err(BuildError::new(BuildKind::DefaultExists)),
        };
    }
    let mut dead = Vec::new();
    let mut i = 0;
    while i < reg.len() {
        if reg[i].wheel.is_shutdown() {
            dead.push(reg.swap_remove(i));
        } else {
            i += 1;
        }
    }
    reg.push(Entry {
        runtime,
        wheel: wheel.clone(),
        closed: wheel.is_shutdown(),
    });
    drop(reg);
    drop(dead);
    Ok(wheel)
}

/// The default wheel of `runtime`, the current runtime, from the registry,
/// built with the default configuration if it has none.
#[cold]
fn lookup(runtime: Id) -> Wheel {
    if let Some(wheel) = find(runtime) {
        return wheel;
    }
    let wheel = Builder::new()
        .build()
        .expect("the default configuration builds inside a runtime");
    install(runtime, wheel, Existing::Keep).expect("`Keep` never fails")
}

// ===== finding the current runtime's wheel =====

/// Runs `f` on the current runtime's default wheel; panics outside a
/// runtime with a message that names `what`.
///
/// The fastest path, a call from the same task as the thread's last one,
/// is a read of tokio's current task id and a thread-local comparison: no
/// runtime handle. Otherwise it is one [`Handle::try_current`] (the same
/// lookup `tokio::time::sleep` makes) and the same comparison.
#[track_caller]
#[inline]
fn with_current<R, F: FnOnce(&Wheel) -> R>(what: &str, f: F) -> R {
    let task = task::try_id();
    if task.is_some() {
        // A miss hands `f` back. `try_with` fails only while the thread's
        // locals are being destroyed: the call then goes the slow way.
        let mut f = Some(f);
        let hit = CURRENT.try_with(|cell| {
            let cached = cell.try_borrow().ok()?;
            let c = cached.as_ref()?;
            if c.task == task && !c.wheel.is_shutdown() {
                let f = f.take().expect("called once");
                Some(f(&c.wheel))
            } else {
                None
            }
        });
        if let Ok(Some(r)) = hit {
            return r;
        }
        return with_runtime(what, task, f.take().expect("not called on a miss"));
    }
    with_runtime(what, task, f)
}

/// [`with_current`] for a call from a task the thread did not serve last,
/// or from outside any task.
#[track_caller]
fn with_runtime<R>(what: &str, task: Option<task::Id>, f: impl FnOnce(&Wheel) -> R) -> R {
    // The handle goes at once: holding it (a count on an `Arc` that every
    // worker shares) while the timer is made costs a contended cache line.
    let runtime = match Handle::try_current() {
        Ok(handle) => handle.id(),
        Err(_) => no_runtime(what),
    };
    let mut f = Some(f);
    let hit = CURRENT.try_with(|cell| {
        let mut cached = cell.try_borrow_mut().ok()?;
        match &mut *cached {
            Some(c) if c.runtime == runtime && !c.wheel.is_shutdown() => {
                c.task = task;
                let f = f.take().expect("called once");
                Some(f(&c.wheel))
            }
            _ => None,
        }
    });
    if let Ok(Some(r)) = hit {
        return r;
    }
    let wheel = lookup(runtime);
    let f = f.take().expect("called once");
    let r = f(&wheel);
    remember(Cached {
        runtime,
        task,
        shard: wheel.thread_shard(),
        wheel,
    });
    r
}

/// Caches the wheel of a runtime as this thread's.
#[cold]
fn remember(cached: Cached) {
    // A thread whose locals are being destroyed, or a nested call, just
    // does not cache.
    let old = CURRENT.try_with(|cell| {
        cell.try_borrow_mut()
            .ok()
            .and_then(|mut slot| slot.replace(cached))
    });
    drop(old);
}

#[cold]
#[track_caller]
fn no_runtime(what: &str) -> ! {
    panic!("hashwheel::{what} must be called from the context of a Tokio 1.x runtime")
}

/// Makes a timer with `make` on the current runtime's default wheel;
/// panics, naming `what`, outside a runtime or when the wheel is full.
#[track_caller]
#[inline]
fn make<T>(what: &str, make: impl FnOnce(&Wheel) -> Result<T, Error>) -> T {
    match with_current(what, make) {
        Ok(timer) => timer,
        Err(e) => at_capacity(what, e),
    }
}

/// A timer's place on the current runtime's default wheel; panics, naming
/// `what`, outside a runtime or when the wheel is full. The timer is made
/// from it after the thread-local lookup, which then hands back one word
/// rather than the whole timer.
#[track_caller]
#[inline]
fn claim(what: &str) -> ShardRef {
    let task = task::try_id();
    if task.is_some() {
        // The fast path of `with_current`, written out for this one call:
        // the result is left in a local rather than returned through
        // `try_with`'s nested enums, whose copies `perf` showed stalling.
        // With this, a free function costs what a held `Wheel` does
        // (BENCHMARKS.md); it was 15-18 ns more.
        let mut hit = None;
        let _ = CURRENT.try_with(|cell| {
            if let Ok(cached) = cell.try_borrow() {
                if let Some(c) = cached.as_ref() {
                    if c.task == task && !c.shard.core.is_shutdown() {
                        hit = Some(ShardRef::claim(&c.shard));
                    }
                }
            }
        });
        match hit {
            Some(Some(shard)) => return shard,
            Some(None) => at_capacity(what, Error::at_capacity()),
            None => {}
        }
    }
    match with_runtime(what, task, Wheel::claim) {
        Ok(shard) => shard,
        Err(e) => at_capacity(what, e),
    }
}

#[cold]
#[track_caller]
fn at_capacity(what: &str, e: Error) -> ! {
    panic!("hashwheel::{what}: {e}")
}

/// The current runtime's default wheel; see [`Wheel::current`].
#[track_caller]
pub(crate) fn current() -> Wheel {
    with_current("Wheel::current", Wheel::clone)
}

/// The current runtime's default wheel, or an error outside a runtime.
pub(crate) fn try_current() -> Result<Wheel, BuildError> {
    let handle = Handle::try_current().map_err(|_| BuildError::new(BuildKind::NoRuntime))?;
    Ok(lookup(handle.id()))
}

/// Builds `builder`'s wheel as the current runtime's default wheel; see
/// [`Builder::build_default`].
pub(crate) fn build_default(builder: Builder) -> Result<Wheel, BuildError> {
    let handle = Handle::try_current().map_err(|_| BuildError::new(BuildKind::NoRuntime))?;
    let runtime = handle.id();
    if find(runtime).is_some() {
        return Err(BuildError::new(BuildKind::DefaultExists));
    }
    install(runtime, builder.build()?, Existing::Refuse)
}

// ===== the free functions =====

/// Waits until `duration` has elapsed, on the current runtime's default
/// wheel: a drop-in for [`tokio::time::sleep`].
///
/// The same as [`Wheel::current()`](Wheel::current)`.sleep(duration)`,
/// without the clone. The [`Sleep`] completes at the first tick (1 ms by
/// default) at or after the deadline, never before it, and is [`Unpin`].
/// `Duration::ZERO` completes on the first poll; `Duration::MAX` lands 30
/// years from now, as `tokio::time::sleep` puts it.
///
/// # Cancel safety
///
/// Cancel safe, as [`Sleep`] is.
///
/// # Panics
///
/// Outside a tokio runtime, and when the default wheel is at its
/// [`max_pending`](Builder::max_pending) bound (see
/// [`Builder::build_default`]).
///
/// ```should_panic
/// use std::time::Duration;
///
/// // No runtime here: "hashwheel::sleep must be called from the context
/// // of a Tokio 1.x runtime".
/// let _sleep = hashwheel::sleep(Duration::from_millis(10));
/// ```
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use hashwheel::sleep;
/// use tokio::time::Instant;
///
/// let start = Instant::now();
/// sleep(Duration::from_millis(100)).await;
/// assert_eq!(start.elapsed(), Duration::from_millis(100));
/// # }
/// ```
#[track_caller]
pub fn sleep(duration: Duration) -> Sleep {
    Sleep::after(claim("sleep"), duration)
}

/// Waits until `deadline`, on the current runtime's default wheel: a
/// drop-in for [`tokio::time::sleep_until`].
///
/// A deadline in the past completes on the first poll.
///
/// # Cancel safety
///
/// Cancel safe, as [`Sleep`] is.
///
/// # Panics
///
/// Outside a tokio runtime, and when the default wheel is at capacity.
///
/// ```should_panic
/// // No runtime here.
/// let _sleep = hashwheel::sleep_until(tokio::time::Instant::now());
/// ```
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use hashwheel::sleep_until;
/// use tokio::time::Instant;
///
/// let deadline = Instant::now() + Duration::from_millis(10);
/// sleep_until(deadline).await;
/// assert_eq!(Instant::now(), deadline);
/// # }
/// ```
#[track_caller]
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep::until(claim("sleep_until"), deadline)
}

/// Requires `future` to complete within `duration`, timed by the current
/// runtime's default wheel: a drop-in for [`tokio::time::timeout`].
///
/// The [`Timeout`] resolves to `Ok` with the future's output, or to
/// `Err(`[`Elapsed`](crate::error::Elapsed)`)` at the deadline. The future
/// is polled first, so one that is ready at once never touches the wheel.
///
/// # Cancel safety
///
/// As cancel safe as `future`.
///
/// # Panics
///
/// Outside a tokio runtime, and when the default wheel is at capacity.
///
/// ```should_panic
/// use std::time::Duration;
///
/// // No runtime here.
/// let _timeout = hashwheel::timeout(Duration::from_secs(1), async {});
/// ```
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use hashwheel::timeout;
///
/// let (_tx, rx) = tokio::sync::oneshot::channel::<()>();
/// let got = timeout(Duration::from_millis(10), rx).await;
/// assert_eq!(got.unwrap_err().to_string(), "deadline has elapsed");
///
/// assert_eq!(timeout(Duration::from_secs(1), async { 5 }).await, Ok(5));
/// # }
/// ```
#[track_caller]
pub fn timeout<F: IntoFuture>(duration: Duration, future: F) -> Timeout<F::IntoFuture> {
    let shard = claim("timeout");
    Timeout::new(future.into_future(), shard, instant_after(duration))
}

/// Requires `future` to complete within `duration` of the first poll at
/// which it is pending, timed by the default wheel of the runtime it is
/// polled on: a [`LazyTimeout`].
///
/// A future that is ready on its first poll costs no clock read, no wheel
/// access and no runtime lookup, and needs no runtime. Otherwise the
/// deadline is `duration` from that first pending poll, not from this call
/// as with [`timeout`] (and `tokio::time::timeout`): later by whatever time
/// passed in between, never earlier. Made and awaited at once, the two
/// agree.
///
/// # Cancel safety
///
/// As cancel safe as `future`.
///
/// # Panics
///
/// When polled, if `future` is pending on its first poll outside a tokio
/// runtime, or while that runtime's default wheel is at capacity.
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use hashwheel::lazy_timeout;
/// use tokio::time::Instant;
///
/// // Ready at once: no timer at all.
/// assert_eq!(lazy_timeout(Duration::from_secs(1), async { 5 }).await, Ok(5));
///
/// // Pending: the second runs from the first poll.
/// let start = Instant::now();
/// let (_tx, rx) = tokio::sync::oneshot::channel::<()>();
/// assert!(lazy_timeout(Duration::from_secs(1), rx).await.is_err());
/// assert_eq!(start.elapsed(), Duration::from_secs(1));
/// # }
/// ```
pub fn lazy_timeout<F: IntoFuture>(duration: Duration, future: F) -> LazyTimeout<F::IntoFuture> {
    LazyTimeout::new(future.into_future(), duration, None)
}

/// The sleep of a [`lazy_timeout`] whose future was pending on its first
/// poll: `duration` from now, on the current runtime's default wheel.
#[track_caller]
#[inline]
pub(crate) fn start_sleep(duration: Duration) -> Sleep {
    Sleep::after(claim("lazy_timeout"), duration)
}

/// Requires `future` to complete by `deadline`, timed by the current
/// runtime's default wheel: a drop-in for [`tokio::time::timeout_at`].
///
/// # Cancel safety
///
/// As cancel safe as `future`.
///
/// # Panics
///
/// Outside a tokio runtime, and when the default wheel is at capacity.
///
/// ```should_panic
/// // No runtime here.
/// let _timeout = hashwheel::timeout_at(tokio::time::Instant::now(), async {});
/// ```
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use hashwheel::timeout_at;
/// use tokio::time::Instant;
///
/// let deadline = Instant::now() + Duration::from_millis(10);
/// let slow = tokio::time::sleep(Duration::from_secs(1));
/// assert!(timeout_at(deadline, slow).await.is_err());
/// assert_eq!(Instant::now(), deadline);
/// # }
/// ```
#[track_caller]
pub fn timeout_at<F: IntoFuture>(deadline: Instant, future: F) -> Timeout<F::IntoFuture> {
    Timeout::new(future.into_future(), claim("timeout_at"), deadline)
}

/// A cancellable [`Delay`] that expires `duration` from now, on the
/// current runtime's default wheel (Netty's `newTimeout`; tokio has no
/// equivalent).
///
/// It resolves to `Ok(())` when it expires, or to an
/// [`Error`](crate::error::Error) when cancelled through its
/// [`handle`](Delay::handle) or when the wheel shuts down.
///
/// # Cancel safety
///
/// Cancel safe, as [`Delay`] is.
///
/// # Panics
///
/// Outside a tokio runtime, and when the default wheel is at capacity.
///
/// ```should_panic
/// use std::time::Duration;
///
/// // No runtime here.
/// let _delay = hashwheel::delay(Duration::from_secs(1));
/// ```
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
///
/// let delay = hashwheel::delay(Duration::from_secs(30));
/// let handle = delay.handle();
/// assert!(handle.cancel());
/// assert!(delay.await.unwrap_err().is_cancelled());
///
/// assert!(hashwheel::delay(Duration::from_millis(5)).await.is_ok());
/// # }
/// ```
#[track_caller]
pub fn delay(duration: Duration) -> Delay {
    Delay::after(claim("delay"), duration)
}

/// A cancellable [`Delay`] that expires at `deadline`, on the current
/// runtime's default wheel.
///
/// # Cancel safety
///
/// Cancel safe, as [`Delay`] is.
///
/// # Panics
///
/// Outside a tokio runtime, and when the default wheel is at capacity.
///
/// ```should_panic
/// // No runtime here.
/// let _delay = hashwheel::delay_at(tokio::time::Instant::now());
/// ```
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use tokio::time::Instant;
///
/// let at = Instant::now() + Duration::from_millis(5);
/// assert!(hashwheel::delay_at(at).await.is_ok());
/// assert_eq!(Instant::now(), at);
/// # }
/// ```
#[track_caller]
pub fn delay_at(deadline: Instant) -> Delay {
    Delay::until(claim("delay_at"), deadline)
}

/// An [`Interval`] on the current runtime's default wheel that ticks at
/// once and then every `period`: a drop-in for [`tokio::time::interval`].
///
/// Missed ticks follow the interval's
/// [`MissedTickBehavior`](tokio::time::MissedTickBehavior) (`Burst` by
/// default), as in tokio. Ticks come at the wheel's tick boundaries (1 ms by
/// default), never early.
///
/// # Panics
///
/// When `period` is zero, outside a tokio runtime, and when the default
/// wheel is at capacity.
///
/// ```should_panic
/// use std::time::Duration;
///
/// // No runtime here.
/// let _interval = hashwheel::interval(Duration::from_millis(10));
/// ```
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use hashwheel::interval;
/// use tokio::time::Instant;
///
/// let start = Instant::now();
/// let mut ticks = interval(Duration::from_millis(10));
/// ticks.tick().await; // at once
/// ticks.tick().await;
/// ticks.tick().await;
/// assert_eq!(start.elapsed(), Duration::from_millis(20));
/// # }
/// ```
#[track_caller]
pub fn interval(period: Duration) -> Interval {
    assert!(period > Duration::ZERO, "`period` must be non-zero.");
    let first = Sleep::until(claim("interval"), Instant::now());
    Interval::new(first, period)
}

/// An [`Interval`] on the current runtime's default wheel that ticks at
/// `start` and then every `period`: a drop-in for
/// [`tokio::time::interval_at`].
///
/// # Panics
///
/// When `period` is zero, outside a tokio runtime, and when the default
/// wheel is at capacity.
///
/// ```should_panic
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use tokio::time::Instant;
///
/// let _interval = hashwheel::interval_at(Instant::now(), Duration::ZERO); // `period` must be non-zero.
/// # }
/// ```
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use hashwheel::interval_at;
/// use tokio::time::Instant;
///
/// let start = Instant::now() + Duration::from_millis(50);
/// let mut ticks = interval_at(start, Duration::from_millis(10));
/// assert_eq!(ticks.tick().await, start);
/// assert_eq!(ticks.tick().await, start + Duration::from_millis(10));
/// # }
/// ```
#[track_caller]
pub fn interval_at(start: Instant, period: Duration) -> Interval {
    assert!(period > Duration::ZERO, "`period` must be non-zero.");
    let first = Sleep::until(claim("interval_at"), start);
    Interval::new(first, period)
}

/// Spawns `future` on the current runtime `duration` from now, timed by
/// the runtime's default wheel; see [`Wheel::spawn_after`].
///
/// Until then the future waits in the wheel, costing one entry and no tokio
/// task; cancelling the returned [`TimeoutHandle`] first drops it unrun.
///
/// # Panics
///
/// Outside a tokio runtime, and when the default wheel is at capacity.
///
/// ```should_panic
/// use std::time::Duration;
///
/// // No runtime here.
/// let _handle = hashwheel::spawn_after(Duration::from_secs(1), async {});
/// ```
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
///
/// let (tx, rx) = tokio::sync::oneshot::channel();
/// let retry = hashwheel::spawn_after(Duration::from_secs(1), async move {
///     tx.send("retried").unwrap();
/// });
/// assert_eq!(rx.await.unwrap(), "retried");
/// assert!(retry.is_expired());
///
/// let never = hashwheel::spawn_after(Duration::from_secs(1), async { unreachable!() });
/// assert!(never.cancel());
/// # }
/// ```
#[track_caller]
pub fn spawn_after<F>(duration: Duration, future: F) -> TimeoutHandle
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    make("spawn_after", |w| w.try_spawn_after(duration, future))
}

/// Spawns `future` on the current runtime at `deadline`, through the
/// runtime's default wheel: see [`Wheel::spawn_at`].
///
/// # Panics
///
/// Outside a tokio runtime, or when the default wheel is at capacity.
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use tokio::time::Instant;
///
/// let at = Instant::now() + Duration::from_millis(250);
/// let (tx, rx) = tokio::sync::oneshot::channel();
/// hashwheel::spawn_at(at, async move { tx.send(Instant::now()).unwrap() });
/// assert_eq!(rx.await.unwrap(), at);
/// # }
/// ```
#[track_caller]
pub fn spawn_at<F>(deadline: Instant, future: F) -> TimeoutHandle
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    make("spawn_at", |w| w.try_spawn_at(deadline, future))
}

/// A `DelayQueue` on the current runtime's default wheel; see
/// [`DelayQueue::new`](crate::DelayQueue::new).
#[track_caller]
pub(crate) fn delay_queue<T>(what: &str, capacity: usize) -> crate::DelayQueue<T> {
    with_current(what, |w| w.delay_queue_with_capacity(capacity))
}
