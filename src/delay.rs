//! `Delay` and its `TimeoutHandle`: the Netty-style cancellable timeout.
//!
//! # Invariants
//!
//! A delay's fate is one word, `DelayShared::word`: its state (pending,
//! expired, cancelled, shut down) in the low bits and its entry's key plus
//! one above them (zero while it has none). Every transition that removes the
//! entry (a handle's cancel, the delay's drop) happens under the shard lock,
//! so the entry is removed exactly once: it exists while the key is set and
//! the state is not `CANCELLED`.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use futures_util::task::AtomicWaker;
use tokio::time::Instant;

use crate::engine::clock::Deadline;
use crate::engine::entry::Filing;
use crate::engine::registry;
use crate::engine::sync::AtomicU64;
use crate::engine::{ShardHold, ShardRef};
use crate::error::Error;
// std's `Arc`, even under loom: the driver wakes a delay through
// `impl Wake`, which takes a std `Arc`.
use std::sync::Arc;

const PENDING: u64 = 0;
const EXPIRED: u64 = 1;
const CANCELLED: u64 = 2;
const SHUTDOWN: u64 = 3;
const STATE: u64 = 0b11;

fn state(word: u64) -> u64 {
    word & STATE
}

fn key(word: u64) -> Option<u32> {
    match word >> 2 {
        0 => None,
        k => Some((k - 1) as u32),
    }
}

fn with_key(state: u64, key: u32) -> u64 {
    ((u64::from(key) + 1) << 2) | state
}

/// A future waiting in the wheel to be spawned, where to spawn it, and the
/// timer's place among the wheel's live ones until it is spawned or dropped.
struct Scheduled {
    future: Pin<Box<dyn Future<Output = ()> + Send>>,
    runtime: tokio::runtime::Handle,
    claim: ShardRef,
}

/// What happens when the timer expires, is cancelled or shuts down.
enum OnExpire {
    /// A `Delay`: wake the task that polls it.
    Wake(AtomicWaker),
    /// `spawn_after`: spawn the future on expiry, drop it otherwise.
    Spawn(std::sync::Mutex<Option<Scheduled>>),
}

impl fmt::Debug for OnExpire {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OnExpire::Wake(_) => "Wake",
            OnExpire::Spawn(_) => "Spawn",
        })
    }
}

#[derive(Debug)]
struct DelayShared {
    /// Handles reach the shard through this too, so it claims no capacity:
    /// the `Delay` (or the `Scheduled` future) holds the claim.
    shard: ShardHold,
    deadline: Deadline,
    word: AtomicU64,
    on_expire: OnExpire,
}

impl DelayShared {
    fn new(shard: ShardHold, deadline: Deadline, on_expire: OnExpire) -> Arc<DelayShared> {
        Arc::new(DelayShared {
            shard,
            deadline,
            word: AtomicU64::new(PENDING),
            on_expire,
        })
    }

    /// Gives the timer an entry in its shard; returns the state after.
    fn register(self: &Arc<Self>) -> u64 {
        let filing = self.shard.file_shared(
            self.deadline,
            || Waker::from(self.clone()),
            |_, key| {
                // Fails when cancelled before it could register: the entry
                // goes again.
                self.word
                    .compare_exchange(
                        PENDING,
                        with_key(PENDING, key),
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    )
                    .is_ok()
            },
        );
        match filing {
            Filing::Filed => {}
            // Its tick has ended: tokio's timer would fire it at once.
            Filing::Ended => {
                self.settle(EXPIRED);
            }
            Filing::Shutdown => {
                self.settle(SHUTDOWN);
            }
        }
        state(self.word.load(Ordering::Acquire))
    }

    /// Tells whoever waits that the state has changed: wakes a `Delay`'s
    /// task, or settles a scheduled future (`spawn_after`), which has no
    /// owner to remove its entry.
    fn notify(self: &Arc<Self>) {
        match &self.on_expire {
            OnExpire::Wake(waker) => waker.wake(),
            OnExpire::Spawn(slot) => {
                let word = self.word.load(Ordering::Acquire);
                let taken = slot
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .take();
                let Some(scheduled) = taken else {
                    return;
                };
                let Scheduled {
                    future,
                    runtime,
                    claim,
                } = scheduled;
                if state(word) != CANCELLED {
                    if let Some(k) = key(word) {
                        self.shard.get().with_lock(|ops| ops.remove(k));
                    }
                }
                // The timer is over: its capacity goes back before the
                // future is spawned.
                drop(claim);
                if state(word) == EXPIRED {
                    drop(runtime.spawn(future));
                }
            }
        }
    }

    /// Moves a pending delay to `to`, keeping its key; false if it was not
    /// pending.
    fn settle(&self, to: u64) -> bool {
        let mut w = self.word.load(Ordering::Acquire);
        loop {
            if state(w) != PENDING {
                return false;
            }
            match self.word.compare_exchange_weak(
                w,
                (w & !STATE) | to,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(actual) => w = actual,
            }
        }
    }
}

/// The driver wakes an expired delay's entry through this.
impl Wake for DelayShared {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let to = if self.shard.core().is_shutdown() {
            SHUTDOWN
        } else {
            EXPIRED
        };
        self.settle(to);
        self.notify();
    }
}

/// A cancellable timeout, made by [`Wheel::delay`](crate::Wheel::delay):
/// Netty's `newTimeout` as a future.
///
/// It resolves to `Ok(())` when its deadline passes (at the first tick at or
/// after it), or to an [`Error`] that says why not: cancelled through a
/// [`TimeoutHandle`] ([`Error::is_cancelled`]), or the wheel shut down
/// ([`Error::is_shutdown`]). Like every timer here it registers lazily, on
/// its first poll; a handle can cancel it before that.
///
/// A delay that comes due while the wheel is shutting down may resolve to
/// either outcome: `Ok(())` if the driver fired it first, the shutdown error
/// otherwise. It never resolves `Ok` before its deadline.
///
/// # Cancel safety
///
/// Cancel safe. Dropping a pending delay cancels its timer: its handles
/// then report [`is_cancelled`](TimeoutHandle::is_cancelled).
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
///
/// let wheel = hashwheel::Wheel::new();
/// let delay = wheel.delay(Duration::from_secs(30));
/// let handle = delay.handle();
/// let waiter = tokio::spawn(delay);
/// // The response arrived first: call the timeout off.
/// assert!(handle.cancel());
/// assert!(waiter.await.unwrap().unwrap_err().is_cancelled());
/// # }
/// ```
#[must_use = "futures do nothing unless you `.await` or poll them"]
#[derive(Debug)]
pub struct Delay {
    shared: Arc<DelayShared>,
    /// This delay's place among the wheel's live timers, given back when it
    /// is dropped (its handles may live on).
    _claim: ShardRef,
}

impl Delay {
    /// A delay `duration` from now on the wheel of `shard`.
    pub(crate) fn after(shard: ShardRef, duration: std::time::Duration) -> Delay {
        let at = shard.core().clock.deadline_after(duration);
        Delay::new(shard, at)
    }

    /// A delay until `deadline` on the wheel of `shard`.
    pub(crate) fn until(shard: ShardRef, deadline: Instant) -> Delay {
        let at = shard.core().clock.deadline_of(deadline);
        Delay::new(shard, at)
    }

    pub(crate) fn new(shard: ShardRef, deadline: Deadline) -> Delay {
        Delay {
            shared: DelayShared::new(shard.hold(), deadline, OnExpire::Wake(AtomicWaker::new())),
            _claim: shard,
        }
    }

    /// A handle that can cancel this delay from anywhere.
    pub fn handle(&self) -> TimeoutHandle {
        TimeoutHandle {
            shared: self.shared.clone(),
        }
    }

    /// The instant at which this delay expires.
    pub fn deadline(&self) -> Instant {
        self.shared
            .shard
            .core()
            .clock
            .instant_of(self.shared.deadline)
    }

    fn outcome(word: u64) -> Poll<Result<(), Error>> {
        match state(word) {
            EXPIRED => Poll::Ready(Ok(())),
            CANCELLED => Poll::Ready(Err(Error::cancelled())),
            SHUTDOWN => Poll::Ready(Err(Error::shutdown())),
            _ => Poll::Pending,
        }
    }
}

impl Future for Delay {
    type Output = Result<(), Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if let OnExpire::Wake(waker) = &this.shared.on_expire {
            waker.register(cx.waker());
        }
        let word = this.shared.word.load(Ordering::Acquire);
        if state(word) != PENDING || key(word).is_some() {
            return Delay::outcome(word);
        }
        this.shared.register();
        Delay::outcome(this.shared.word.load(Ordering::Acquire))
    }
}

impl Drop for Delay {
    fn drop(&mut self) {
        let sh = &self.shared;
        let word = sh.word.load(Ordering::Acquire);
        match key(word) {
            None => {
                sh.settle(CANCELLED);
            }
            Some(k) => sh.shard.get().with_lock(|ops| {
                // A handle's cancel removes the entry itself, under this lock.
                if state(sh.word.load(Ordering::Acquire)) != CANCELLED {
                    sh.settle(CANCELLED);
                    ops.remove(k);
                }
            }),
        }
    }
}

/// Schedules `future` to be spawned on `runtime` at `deadline`; see
/// [`Wheel::spawn_after`](crate::Wheel::spawn_after).
pub(crate) fn schedule<F>(
    shard: ShardRef,
    deadline: Deadline,
    runtime: tokio::runtime::Handle,
    future: F,
) -> TimeoutHandle
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let scheduled = Scheduled {
        future: Box::pin(async move {
            future.await;
        }),
        runtime,
        claim: shard,
    };
    let hold = scheduled.claim.hold();
    let on_expire = OnExpire::Spawn(std::sync::Mutex::new(Some(scheduled)));
    let shared = DelayShared::new(hold, deadline, on_expire);
    if shared.register() != PENDING {
        // Expired at once, or the wheel is shut down: settle it now.
        shared.notify();
    }
    TimeoutHandle { shared }
}

// ===== TimeoutHandle =====

/// Cancels a [`Delay`] or a task scheduled by
/// [`Wheel::spawn_after`](crate::Wheel::spawn_after) from anywhere:
/// `Clone + Send + Sync`, made by [`Delay::handle`] or returned by
/// `spawn_after`.
///
/// A handle refers to its own delay only. Once that delay is gone (it
/// expired, was cancelled, or was dropped) the handle does nothing and keeps
/// reporting how it ended; it never touches another timer, even one that
/// reuses the wheel slot.
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
///
/// let wheel = hashwheel::Wheel::new();
/// let delay = wheel.delay(Duration::from_millis(20));
/// let handle = delay.handle();
/// assert!(delay.await.is_ok());
/// assert!(handle.is_expired());
/// assert!(!handle.cancel()); // too late: it has fired
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct TimeoutHandle {
    shared: Arc<DelayShared>,
}

impl TimeoutHandle {
    /// Cancels the delay: it resolves to an error for which
    /// [`Error::is_cancelled`] holds, and its entry leaves the wheel now.
    ///
    /// Returns `true` if this call cancelled a pending delay, `false` if it
    /// had already expired, been cancelled, or been dropped. Cancelling a
    /// scheduled task drops its future without running it.
    pub fn cancel(&self) -> bool {
        let sh = &self.shared;
        loop {
            let word = sh.word.load(Ordering::Acquire);
            if state(word) != PENDING {
                return false;
            }
            let swapped = match key(word) {
                None => sh
                    .word
                    .compare_exchange(word, CANCELLED, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok(),
                Some(k) => sh.shard.get().with_lock(|ops| {
                    let ok = sh
                        .word
                        .compare_exchange(
                            word,
                            with_key(CANCELLED, k),
                            Ordering::AcqRel,
                            Ordering::Acquire,
                        )
                        .is_ok();
                    if ok {
                        ops.remove(k);
                    }
                    ok
                }),
            };
            if swapped {
                sh.notify();
                return true;
            }
        }
    }

    /// Whether the delay was cancelled, through a handle or by being dropped
    /// before it expired.
    pub fn is_cancelled(&self) -> bool {
        state(self.shared.word.load(Ordering::Acquire)) == CANCELLED
    }

    /// Whether the delay has expired: its deadline passed and the wheel
    /// fired it (for a scheduled task: the task was spawned).
    pub fn is_expired(&self) -> bool {
        state(self.shared.word.load(Ordering::Acquire)) == EXPIRED
    }

    /// The instant at which the delay expires.
    pub fn deadline(&self) -> Instant {
        self.shared
            .shard
            .core()
            .clock
            .instant_of(self.shared.deadline)
    }
}

// ===== on the default wheel =====

/// A cancellable [`Delay`] that expires `duration` from now, on the
/// current runtime's default wheel (Netty's `newTimeout`; tokio has no
/// equivalent).
///
/// It resolves to `Ok(())` when it expires, or to an
/// [`Error`] when cancelled through its
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
    Delay::after(registry::claim("delay"), duration)
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
    Delay::until(registry::claim("delay_at"), deadline)
}

/// Spawns `future` on the current runtime `duration` from now, timed by
/// the runtime's default wheel; see [`Wheel::spawn_after`](crate::Wheel::spawn_after).
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
    registry::make("spawn_after", |w| w.try_spawn_after(duration, future))
}

/// Spawns `future` on the current runtime at `deadline`, through the
/// runtime's default wheel: see [`Wheel::spawn_at`](crate::Wheel::spawn_at).
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
    registry::make("spawn_at", |w| w.try_spawn_at(deadline, future))
}
