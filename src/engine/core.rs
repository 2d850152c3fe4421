//! What every shard of one wheel shares: the clock, the capacity count, the
//! driver's schedule and its signal, and the driver's counts ([`Core`]).
//!
//! # Invariants
//!
//! - `next_wake` is at or below the earliest tick the driver has to wake
//!   for: every registration that lowers it notifies the driver.
//! - `live` counts the timers alive while `max_timers` is set: each holds
//!   one count in its claiming `ShardRef`, which gives it back when dropped.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::engine::clock::Clock;
use crate::engine::counts::Counts;
use crate::engine::sync::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// What a timer made beyond a wheel's `max_timers` bound is told.
pub(crate) const AT_CAPACITY: &str = "the timer wheel is at capacity (max_timers timers are alive)";

/// Keeps a value on its own cache lines, away from its neighbours.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct Padded<T>(pub(crate) T);

/// What every shard of one wheel shares.
#[derive(Debug)]
pub(crate) struct Core {
    pub(crate) clock: Clock,
    pub(crate) buckets: usize,
    pub(crate) max_timers: Option<usize>,
    /// Timer futures alive, counted only when `max_timers` is set: each
    /// holds one count in its claiming
    /// [`ShardRef`](crate::engine::shards::ShardRef), which gives it back.
    pub(crate) live: Padded<AtomicUsize>,
    /// The earliest tick the driver plans to wake for (`u64::MAX`: none).
    next_wake: Padded<AtomicU64>,
    /// When a registration first asked the driver for an earlier tick since
    /// its last pass, in nanoseconds from the clock's origin (`u64::MAX`:
    /// none). A timer registered after its deadline has passed (its tick
    /// not yet processed by an idle driver) is late only from then. A
    /// measurement, not part of the handshake the loom models check: std's
    /// atomic even under loom, so it adds no interleavings to explore.
    signalled_ns: std::sync::atomic::AtomicU64,
    pub(crate) shutdown: AtomicBool,
    /// `Wheel` handles alive.
    pub(crate) handles: AtomicUsize,
    pub(crate) signal: Notify,
    /// What the driver counts (wake-ups, panics, lag) and the refused
    /// timers. Like `signalled_ns`, a measurement: std's lock even under
    /// loom, taken once per pass or refusal, never on a timer's way.
    counts: Mutex<Counts>,
}

impl Core {
    pub(crate) fn new(
        origin: Instant,
        tick: Duration,
        buckets: usize,
        max_timers: Option<usize>,
    ) -> Core {
        Core {
            clock: Clock::new(origin, tick),
            buckets,
            max_timers,
            live: Padded(AtomicUsize::new(0)),
            next_wake: Padded(AtomicU64::new(u64::MAX)),
            signalled_ns: std::sync::atomic::AtomicU64::new(u64::MAX),
            shutdown: AtomicBool::new(false),
            handles: AtomicUsize::new(0),
            signal: Notify::new(),
            counts: Mutex::default(),
        }
    }

    #[inline]
    pub(crate) fn is_shutdown(&self) -> bool {
        self.shutdown.load(Ordering::Acquire)
    }

    /// Updates the driver's counts with `f`.
    pub(crate) fn count(&self, f: impl FnOnce(&mut Counts)) {
        f(&mut self.counts.lock().unwrap_or_else(PoisonError::into_inner));
    }

    /// The driver's counts.
    pub(crate) fn counts(&self) -> Counts {
        *self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    // ===== capacity =====

    /// Counts one more live timer, unless `max_timers` are alive already.
    // Inline, and only the test of the bound: every timer's making calls
    // it, and without a bound (the default) there is nothing to count.
    #[inline]
    pub(crate) fn acquire(&self) -> bool {
        self.max_timers.is_none() || self.acquire_bounded()
    }

    /// [`acquire`](Core::acquire) under a `max_timers` bound.
    #[inline(never)]
    fn acquire_bounded(&self) -> bool {
        let max = self.max_timers.unwrap_or(usize::MAX);
        if self.live.0.fetch_add(1, Ordering::Relaxed) < max {
            return true;
        }
        self.live.0.fetch_sub(1, Ordering::Relaxed);
        self.count(|c| c.refused += 1);
        false
    }

    /// Gives a count back: only a claiming
    /// [`ShardRef`](crate::engine::shards::ShardRef) does, when dropped.
    pub(crate) fn release(&self) {
        if self.max_timers.is_some() {
            self.live.0.fetch_sub(1, Ordering::Relaxed);
        }
    }

    // ===== the driver's schedule =====

    /// Makes sure the driver wakes by `tick`.
    // Inline: every registration calls it, and nearly always for a tick the
    // driver already wakes by (one load and a compare).
    #[inline]
    pub(crate) fn wake_driver_for(&self, tick: u64) {
        if tick < self.next_wake.0.load(Ordering::Relaxed) {
            self.wake_driver_earlier(tick);
        }
    }

    /// Whether the driver plans to wake at or before `tick`, so that, where
    /// tokio's clock can be paused, `tick` has not ended by tokio's timer:
    /// the driver's alarm is a tokio sleep at the end of `next_wake`, which
    /// tokio has not fired yet (firing it runs the driver's pass, which
    /// raises `next_wake` past every ended tick), and every registration
    /// that lowered it did so for a tick it had checked against the clock.
    /// A first poll for such a tick needs no clock read (see
    /// `engine::entry`'s ground rule 2).
    #[inline]
    pub(crate) fn wakes_by(&self, tick: u64) -> bool {
        self.next_wake.0.load(Ordering::Relaxed) <= tick
    }

    /// [`wake_driver_for`](Core::wake_driver_for) a tick earlier than the
    /// one the driver last asked for.
    fn wake_driver_earlier(&self, tick: u64) {
        if tick < self.next_wake.0.fetch_min(tick, Ordering::AcqRel) {
            self.signalled_ns.fetch_min(
                self.clock.now_ns().max(0) as u64,
                std::sync::atomic::Ordering::Relaxed,
            );
            self.signal.notify_one();
        }
    }

    /// The instant a registration first asked the driver for an earlier
    /// tick since the last call, if one did.
    pub(crate) fn take_signalled(&self) -> Option<Instant> {
        match self
            .signalled_ns
            .swap(u64::MAX, std::sync::atomic::Ordering::Relaxed)
        {
            u64::MAX => None,
            ns => Some(self.clock.instant_of_ns(ns)),
        }
    }

    /// Called by the driver before it looks at the shards: from now on every
    /// registration notifies it, so none can slip between its look and its
    /// sleep.
    pub(crate) fn begin_run(&self) {
        self.next_wake.0.store(u64::MAX, Ordering::SeqCst);
    }

    /// Called by the driver after it looked at every shard, with the earliest
    /// tick they hold; returns the tick to sleep until.
    pub(crate) fn end_run(&self, next: u64) -> u64 {
        self.next_wake.0.fetch_min(next, Ordering::AcqRel).min(next)
    }
}
