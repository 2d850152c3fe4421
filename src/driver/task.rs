//! The driver: one tokio task per wheel that advances every shard.
//!
//! It sleeps until the earliest tick that can hold a due entry (never, when
//! the wheel holds no timer), or until a registration asks for an earlier
//! one. Each run catches up on every tick elapsed since the last, wakes the
//! expired timers' wakers outside the locks in batches, and yields to the
//! runtime after every [`YIELD_EVERY`] wake-ups.

use std::pin::pin;
use std::time::Duration;

use super::{wake_all, Shards};
use crate::sync::{Arc, Ordering};
use crate::wheel::NEVER;

/// Wakers taken per lock hold.
const BATCH: usize = 1024;

/// Wake-ups after which a run yields to the runtime before going on
/// (Netty's per-tick cap).
pub(crate) const YIELD_EVERY: usize = 100_000;

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
pub(crate) fn run(shards: Arc<Shards>) -> impl std::future::Future<Output = ()> + Send {
    let guard = Guard(shards);
    async move { drive(&guard.0).await }
}

async fn drive(shards: &Shards) {
    let core = &*shards.core;
    let mut timer = pin!(tokio::time::sleep_until(core.origin));
    let mut wakers = Vec::with_capacity(BATCH);
    loop {
        if core.is_shutdown() || abandoned(shards) {
            return;
        }
        core.begin_run();
        let now = core.now_tick();
        let mut next = NEVER;
        let mut woken = 0;
        for shard in shards.shards.iter() {
            loop {
                let found = shard.expire(now, &mut wakers, BATCH);
                woken += wakers.len();
                wake_all(&core.stats, &mut wakers);
                if woken >= YIELD_EVERY {
                    woken = 0;
                    tokio::task::yield_now().await;
                }
                if !found.more {
                    next = next.min(found.next);
                    break;
                }
            }
        }
        let planned = core.end_run(next);
        let at = if planned == NEVER {
            None
        } else {
            core.instant_of_tick(planned)
        };
        match at {
            None => core.signal.notified().await,
            Some(at) => {
                timer.as_mut().reset(at);
                tokio::select! {
                    biased;
                    _ = core.signal.notified() => {}
                    _ = timer.as_mut() => {
                        let lag = tokio::time::Instant::now().saturating_duration_since(at);
                        record_lag(core, lag);
                    }
                }
            }
        }
        core.stats.wakeups.fetch_add(1, Ordering::Relaxed);
    }
}

fn record_lag(core: &super::Core, lag: Duration) {
    let ns = u64::try_from(lag.as_nanos()).unwrap_or(u64::MAX);
    core.stats.max_lag_ns.fetch_max(ns, Ordering::Relaxed);
}
