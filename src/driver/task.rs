//! The driver: one tokio task per wheel that advances every shard.
//!
//! It sleeps on one tokio `Sleep` until the end of the earliest tick that can
//! hold a due entry (never, when the wheel holds no timer), or until a
//! registration asks for an earlier one. Each run catches up on every tick
//! elapsed since the last, wakes the expired timers' wakers outside the
//! locks in batches, and yields to the runtime after every [`YIELD_EVERY`]
//! wake-ups.
//!
//! # The alarm
//!
//! The tokio `Sleep` is polled with the waker of an [`Alarm`], not with the
//! task's. When tokio's timer fires it, the alarm expires what is due at
//! once, inside tokio's own timer processing, and only then wakes the task.
//! The timers it wakes are therefore woken in the same step as tokio's own
//! timers for the same instant: when `tokio::time::advance(d).await`
//! returns, or the paused clock has auto-advanced, every wheel timer due by
//! then has been woken, as a `tokio::time::Sleep` would have been. The alarm
//! wakes at most [`INLINE`] timers; a larger batch is left to the task.

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use futures_util::task::AtomicWaker;
use tokio::time::Instant;

use super::{wake_all, Shards};
use crate::sync::{Arc, Ordering};
use crate::wheel::NEVER;

/// Wakers taken per lock hold.
const BATCH: usize = 1024;

/// Wake-ups after which a run yields to the runtime before going on
/// (Netty's per-tick cap).
pub(crate) const YIELD_EVERY: usize = 100_000;

/// The most timers the alarm wakes from inside tokio's timer processing.
const INLINE: usize = 4096;

/// Shuts the wheel down when the driver stops, whether it exits or the
/// runtime drops it: no timer is left waiting on a dead driver.
struct Guard(Arc<Shards>);

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.shutdown();
    }
}

/// No `Wheel` handle and no timer is left.
fn abandoned(shards: &Shards) -> bool {
    shards.core.handles.load(Ordering::Acquire) == 0
        && shards.shards.iter().all(|s| Arc::strong_count(s) == 1)
}

/// The driver's future. The guard is made here, not in the async body, so
/// that a runtime dropping the task before its first poll still shuts the
/// wheel down.
pub(crate) fn run(shards: Arc<Shards>) -> impl Future<Output = ()> + Send {
    let guard = Guard(shards);
    async move { drive(&guard.0).await }
}

/// Expires every shard up to `now`, waking at most about `budget` timers.
/// Returns the earliest tick that can hold work, and whether work that is
/// due now was left for lack of budget.
fn expire(shards: &Shards, now: u64, wakers: &mut Vec<Waker>, budget: usize) -> (u64, bool) {
    let mut next = NEVER;
    let mut woken = 0;
    for shard in shards.shards.iter() {
        loop {
            let found = shard.expire(now, wakers, BATCH.min(budget - woken));
            woken += wakers.len();
            wake_all(&shards.core.stats, wakers);
            if !found.more {
                next = next.min(found.next);
                break;
            }
            if woken >= budget {
                return (now, true);
            }
        }
    }
    (next, false)
}

/// The waker of the driver's tokio sleep (see the module docs).
struct Alarm {
    shards: Arc<Shards>,
    task: AtomicWaker,
}

impl Wake for Alarm {
    fn wake(self: std::sync::Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        let core = &self.shards.core;
        if !core.is_shutdown() {
            let mut wakers = Vec::new();
            expire(&self.shards, core.clock.now_tick(), &mut wakers, INLINE);
        }
        self.task.wake();
    }
}

async fn drive(shards: &Arc<Shards>) {
    let core = &*shards.core;
    let alarm = std::sync::Arc::new(Alarm {
        shards: shards.clone(),
        task: AtomicWaker::new(),
    });
    let alarm_waker = Waker::from(alarm.clone());
    let mut timer = pin!(tokio::time::sleep_until(Instant::now()));
    let mut wakers = Vec::with_capacity(BATCH);
    loop {
        if core.is_shutdown() || abandoned(shards) {
            return;
        }
        core.begin_run();
        let now = core.clock.now_tick();
        let next = loop {
            match expire(shards, now, &mut wakers, YIELD_EVERY) {
                (next, false) => break next,
                (_, true) => tokio::task::yield_now().await,
            }
        };
        let planned = core.end_run(next);
        let at = (planned != NEVER).then(|| core.clock.instant_of_tick(planned));
        if let Some(at) = at {
            timer.as_mut().reset(at);
        }
        let mut notified = pin!(core.signal.notified());
        let fired = poll_fn(|cx| {
            alarm.task.register(cx.waker());
            if notified.as_mut().poll(cx).is_ready() {
                return Poll::Ready(false);
            }
            if at.is_some()
                && timer
                    .as_mut()
                    .poll(&mut Context::from_waker(&alarm_waker))
                    .is_ready()
            {
                return Poll::Ready(true);
            }
            Poll::Pending
        })
        .await;
        if let (true, Some(at)) = (fired, at) {
            record_lag(core, Instant::now().saturating_duration_since(at));
        }
        core.stats.wakeups.fetch_add(1, Ordering::Relaxed);
    }
}

fn record_lag(core: &super::Core, lag: Duration) {
    let ns = u64::try_from(lag.as_nanos()).unwrap_or(u64::MAX);
    core.stats.max_lag_ns.fetch_max(ns, Ordering::Relaxed);
}
