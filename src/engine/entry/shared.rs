//! A shared entry: the variant of the entry protocol (see [`super`]) behind
//! a `Delay`, the `TimeoutHandle`s that cancel it from anywhere, and a future
//! scheduled with `spawn_after`.
//!
//! # Invariants
//!
//! `SharedEntry::state` holds the state (pending, expired,
//! cancelled, shut down) in its low two bits and the entry's key plus one
//! above them (zero while it has none). The entry exists while the key is
//! set and the state is not `CANCELLED`; how the state moves is the shared
//! variant of the protocol in [`super`].

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
// std's `Arc`, even under loom: the driver wakes a shared entry through
// `impl Wake`, which takes a std `Arc`.
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use futures_util::task::AtomicWaker;
use tokio::time::Instant;

use crate::engine::clock::Deadline;
use crate::engine::shard::Registration;
use crate::engine::shards::{ShardHold, ShardRef};
use crate::engine::sync::AtomicU64;

const PENDING: u64 = 0;
const EXPIRED: u64 = 1;
const CANCELLED: u64 = 2;
const SHUTDOWN: u64 = 3;
const STATE: u64 = 0b11;

fn state_of(bits: u64) -> u64 {
    bits & STATE
}

fn key_of(bits: u64) -> Option<u32> {
    match bits >> 2 {
        0 => None,
        k => Some((k - 1) as u32),
    }
}

fn with_key(state: u64, key: u32) -> u64 {
    ((u64::from(key) + 1) << 2) | state
}

/// How a shared entry ended, once it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Its deadline passed and the driver fired it.
    Expired,
    /// A handle cancelled it, or its owner dropped it first.
    Cancelled,
    /// The wheel shut down first.
    Shutdown,
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
pub(crate) struct SharedEntry {
    /// Handles reach the shard through this too, so it claims no capacity:
    /// the owner (the `Delay`, or the `Scheduled` future) holds the claim.
    shard: ShardHold,
    deadline: Deadline,
    state: AtomicU64,
    on_expire: OnExpire,
}

impl SharedEntry {
    fn new(shard: ShardHold, deadline: Deadline, on_expire: OnExpire) -> Arc<SharedEntry> {
        Arc::new(SharedEntry {
            shard,
            deadline,
            state: AtomicU64::new(PENDING),
            on_expire,
        })
    }

    /// Gives the timer an entry in its shard; returns the state after.
    fn register(self: &Arc<Self>) -> u64 {
        let filing = self.shard.file_shared(
            self.deadline,
            || Waker::from(self.clone()),
            |key| {
                // Fails when cancelled before it could register: the entry
                // goes again.
                self.state
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
            Registration::Key(_) => {}
            // Its tick has elapsed: tokio's timer would fire it at once.
            Registration::Passed => self.settle(EXPIRED),
            Registration::Shutdown => self.settle(SHUTDOWN),
        }
        state_of(self.state.load(Ordering::Acquire))
    }

    /// Tells whoever waits that the state has changed: wakes a `Delay`'s
    /// task, or settles a scheduled future (`spawn_after`), which has no
    /// owner to remove its entry.
    fn notify(self: &Arc<Self>) {
        match &self.on_expire {
            OnExpire::Wake(waker) => waker.wake(),
            OnExpire::Spawn(slot) => {
                let bits = self.state.load(Ordering::Acquire);
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
                if state_of(bits) != CANCELLED {
                    if let Some(k) = key_of(bits) {
                        self.shard.get().with_lock(|ops| ops.remove(k));
                    }
                }
                // The timer is over: its capacity goes back before the
                // future is spawned.
                drop(claim);
                if state_of(bits) == EXPIRED {
                    drop(runtime.spawn(future));
                }
            }
        }
    }

    /// Moves a pending delay to `to`, keeping its key; nothing if it is not
    /// pending.
    fn settle(&self, to: u64) {
        let pending = |w| (state_of(w) == PENDING).then_some((w & !STATE) | to);
        let _ = self
            .state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, pending);
    }
}

/// The driver wakes an expired delay's entry through this.
impl Wake for SharedEntry {
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

impl SharedEntry {
    /// The entry of a `Delay` due at `deadline` on the wheel of `shard`.
    #[inline]
    pub(crate) fn delay(shard: &ShardRef, deadline: Deadline) -> Arc<SharedEntry> {
        SharedEntry::new(shard.hold(), deadline, OnExpire::Wake(AtomicWaker::new()))
    }

    /// The instant at which the entry is due.
    pub(crate) fn deadline(&self) -> Instant {
        self.shard.core().clock.instant_of(self.deadline)
    }

    /// Polls the owner's entry: registers it on the first poll, and keeps
    /// `cx`'s waker for the moment it ends.
    pub(crate) fn poll(self: &Arc<Self>, cx: &mut Context<'_>) -> Poll<Outcome> {
        if let OnExpire::Wake(waker) = &self.on_expire {
            waker.register(cx.waker());
        }
        let bits = self.state.load(Ordering::Acquire);
        if state_of(bits) != PENDING || key_of(bits).is_some() {
            return outcome(bits);
        }
        self.register();
        outcome(self.state.load(Ordering::Acquire))
    }

    /// The owner lets go (a `Delay` dropped): a pending entry is cancelled,
    /// and removed if it is in the wheel.
    pub(crate) fn release(&self) {
        let bits = self.state.load(Ordering::Acquire);
        match key_of(bits) {
            None => self.settle(CANCELLED),
            Some(k) => self.shard.get().with_lock(|ops| {
                // A handle's cancel removes the entry itself, under this lock.
                if state_of(self.state.load(Ordering::Acquire)) != CANCELLED {
                    self.settle(CANCELLED);
                    ops.remove(k);
                }
            }),
        }
    }

    /// A handle's cancel: `true` if this call cancelled a pending entry.
    pub(crate) fn cancel(self: &Arc<Self>) -> bool {
        loop {
            let bits = self.state.load(Ordering::Acquire);
            if state_of(bits) != PENDING {
                return false;
            }
            let swapped = match key_of(bits) {
                None => self
                    .state
                    .compare_exchange(bits, CANCELLED, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok(),
                Some(k) => self.shard.get().with_lock(|ops| {
                    let ok = self
                        .state
                        .compare_exchange(
                            bits,
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
                self.notify();
                return true;
            }
        }
    }

    /// Whether the entry was cancelled.
    pub(crate) fn is_cancelled(&self) -> bool {
        state_of(self.state.load(Ordering::Acquire)) == CANCELLED
    }

    /// Whether the entry expired (for a scheduled future: it was spawned).
    pub(crate) fn is_expired(&self) -> bool {
        state_of(self.state.load(Ordering::Acquire)) == EXPIRED
    }
}

fn outcome(bits: u64) -> Poll<Outcome> {
    match state_of(bits) {
        EXPIRED => Poll::Ready(Outcome::Expired),
        CANCELLED => Poll::Ready(Outcome::Cancelled),
        SHUTDOWN => Poll::Ready(Outcome::Shutdown),
        _ => Poll::Pending,
    }
}

// ===== scheduled futures =====

/// Schedules `future` to be spawned on `runtime` at `deadline` (Netty's
/// `newTimeout(task, delay)`); the entry is what its handles hold.
pub(crate) fn schedule<F>(
    shard: ShardRef,
    deadline: Deadline,
    runtime: tokio::runtime::Handle,
    future: F,
) -> Arc<SharedEntry>
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
    let entry = SharedEntry::new(hold, deadline, on_expire);
    if entry.register() != PENDING {
        // Expired at once, or the wheel is shut down: settle it now.
        entry.notify();
    }
    entry
}
