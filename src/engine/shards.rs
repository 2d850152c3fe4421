//! The shards of one wheel ([`Shards`]), a timer's hold on its shard
//! ([`ShardRef`]), and how a thread picks its shard.
//!
//! # Invariants
//!
//! - The driver lives while a wheel handle or a hold on one of its shards
//!   does: `Core::handles` counts the handles, each shard's `Arc` count the
//!   holds (the driver's own included). Dropping the last handle, or a hold
//!   once no handle is left, notifies the driver, which then checks whether
//!   it may exit.
//! - Capacity (`max_timers`) is taken when a claiming hold is made and
//!   given back when it is dropped, and nowhere else.

use std::cell::Cell;
use std::task::Waker;
use std::time::Duration;

use tokio::time::Instant;

use crate::engine::clock::Deadline;

use crate::engine::core::Core;
use crate::engine::counts::Counts;
use crate::engine::shard::Shard;
use crate::engine::sync::{Arc, Ordering};

thread_local! {
    static SHARD_HINT: Cell<usize> = const { Cell::new(usize::MAX) };
}

static NEXT_HINT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A number for the current thread, handed out round-robin, so that threads
/// spread over the shards.
#[inline]
pub(crate) fn thread_hint() -> usize {
    SHARD_HINT.with(|c| {
        let v = c.get();
        if v != usize::MAX {
            return v;
        }
        let v = NEXT_HINT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        c.set(v);
        v
    })
}

/// Wakes every waker in `wakers`, draining it; a waker that panics is
/// counted and does not stop the others.
pub(crate) fn wake_all(core: &Core, wakers: &mut Vec<Waker>) {
    for w in wakers.drain(..) {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| w.wake()));
        if r.is_err() {
            core.count(|c| c.waker_panics += 1);
        }
    }
}

/// A timer's hold on its shard, and the guard of its capacity.
///
/// - The hold keeps the wheel's driver alive (see the invariants); when it
///   lets go after every `Wheel` handle is gone, it tells the driver, which
///   exits once no hold is left.
/// - A claiming hold (`CLAIMS`, the default: every timer future's) also
///   stands for one of the wheel's `max_timers` live timers, counted when
///   it is made ([`ShardRef::claim`], or `Wheel::claim`) and given back when
///   it is dropped: capacity is released here and nowhere else.
/// - A [`ShardHold`] claims nothing: the way a `TimeoutHandle` reaches its
///   delay's shard, which may outlive the delay.
#[derive(Debug)]
pub(crate) struct ShardRef<const CLAIMS: bool = true>(Option<Arc<Shard>>);

/// A hold on a shard that counts no live timer (see [`ShardRef`]).
pub(crate) type ShardHold = ShardRef<false>;

impl ShardRef {
    /// A claiming hold on `shard` for a live timer that the caller has
    /// already counted ([`Core::acquire`]).
    pub(crate) fn new(shard: &Arc<Shard>) -> ShardRef {
        ShardRef(Some(shard.clone()))
    }

    /// A hold on `shard` for one more live timer; `None` when `max_timers`
    /// are alive already.
    #[inline]
    pub(crate) fn claim(shard: &Arc<Shard>) -> Option<ShardRef> {
        shard.core.acquire().then(|| ShardRef::new(shard))
    }

    /// A second hold on the same shard, claiming nothing.
    pub(crate) fn hold(&self) -> ShardHold {
        ShardRef(self.0.clone())
    }
}

impl<const CLAIMS: bool> ShardRef<CLAIMS> {
    /// Moves the hold, and its claim, out of `self`, which is left holding
    /// nothing: for a timer that hands its hold to the sleep it starts.
    #[inline]
    pub(crate) fn take(&mut self) -> ShardRef<CLAIMS> {
        ShardRef(self.0.take())
    }

    pub(crate) fn get(&self) -> &Shard {
        self.0
            .as_deref()
            .expect("a hold is used only before it is taken (by its drop, or by `take`)")
    }

    pub(crate) fn core(&self) -> &Core {
        &self.get().core
    }

    /// The deadline `d` from now on this wheel's clock: what a timer made
    /// with a duration hands the engine.
    #[inline]
    pub(crate) fn deadline_after(&self, d: Duration) -> Deadline {
        self.core().clock.deadline_after(d)
    }

    /// The deadline of `t` on this wheel's clock: what a timer made with
    /// an instant hands the engine.
    #[inline]
    pub(crate) fn deadline_at(&self, t: Instant) -> Deadline {
        self.core().clock.deadline_of(t)
    }
}

// Every timer drops a hold. The take is inline, so that the drop glue
// around it sees the field emptied and keeps no unwinding path for it; the
// last handle's signal is cold, so that the rest is a load and a decrement.
impl<const CLAIMS: bool> Drop for ShardRef<CLAIMS> {
    #[inline]
    fn drop(&mut self) {
        if let Some(shard) = self.0.take() {
            release::<CLAIMS>(shard);
        }
    }
}

/// A hold let go: its claim returned, and the driver told if no handle is
/// left to keep the wheel.
fn release<const CLAIMS: bool>(shard: Arc<Shard>) {
    if CLAIMS {
        shard.core.release();
    }
    if shard.core.handles.load(Ordering::Acquire) == 0 {
        last_handle_gone(shard);
    }
}

#[cold]
fn last_handle_gone(shard: Arc<Shard>) {
    let core = shard.core.clone();
    drop(shard);
    core.signal.notify_one();
}

/// The wheel as the driver and the public handle see it: the shared core
/// and every shard.
#[derive(Debug)]
pub(crate) struct Shards {
    pub(crate) core: Arc<Core>,
    pub(crate) shards: Box<[Arc<Shard>]>,
}

impl Shards {
    pub(crate) fn new(core: Arc<Core>, n: usize) -> Shards {
        let processed = core.clock.now_tick();
        let shards = (0..n)
            .map(|_| Arc::new(Shard::new(core.clone(), processed)))
            .collect();
        Shards { core, shards }
    }

    /// The shard for the current thread.
    #[inline]
    pub(crate) fn current(&self) -> &Arc<Shard> {
        let n = self.shards.len();
        // A mask, not a division, for the usual power-of-two count: a `div`
        // here was a tenth of registering a timer.
        let i = if n.is_power_of_two() {
            thread_hint() & (n - 1)
        } else {
            thread_hint() % n
        };
        &self.shards[i]
    }

    /// Shuts every shard down and wakes every pending timer; returns how
    /// many there were. Idempotent.
    pub(crate) fn shutdown(&self) -> usize {
        self.core.shutdown.store(true, Ordering::Release);
        let mut wakers = Vec::new();
        let mut n = 0;
        for shard in self.shards.iter() {
            n += shard.shutdown(&mut wakers);
            wake_all(&self.core, &mut wakers);
        }
        self.core.signal.notify_one();
        n
    }

    /// Every count of the wheel: the shards' and the driver's.
    pub(crate) fn counts(&self) -> Counts {
        let mut c = self.core.counts();
        c.shards = self.shards.len();
        for shard in self.shards.iter() {
            shard.add_counts(&mut c);
        }
        c
    }
}
