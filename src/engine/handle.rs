//! Starting a wheel, and the handle that keeps it: what the public `Wheel`
//! wraps and the per-runtime registry keeps.
//!
//! # Invariants
//!
//! - Every clone of a [`WheelHandle`] shares one `Inner`, which counts as
//!   one of `Core::handles` while it lives; dropping the last one notifies
//!   the driver (see `engine::shards`).

use std::time::Duration;

use crate::engine::config::{BuildKind, Config};
use crate::engine::core::Core;
use crate::engine::counts::Counts;
use crate::engine::driver;
use crate::engine::publish::Telemetry;
use crate::engine::shards::{ShardRef, Shards};
use crate::engine::sync::{Arc, Ordering};
use crate::engine::tokio_reliance;

/// A running wheel: its shards, and a count among its handles.
#[derive(Debug, Clone)]
pub(crate) struct WheelHandle {
    inner: Arc<Inner>,
}

/// The one value behind every clone of a handle.
#[derive(Debug)]
struct Inner {
    shards: Arc<Shards>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        let core = &self.shards.core;
        if core.handles.fetch_sub(1, Ordering::AcqRel) == 1 {
            core.signal.notify_one();
        }
    }
}

impl WheelHandle {
    /// Builds a wheel with `config` and spawns its driver on the current
    /// tokio runtime.
    pub(crate) fn start(config: &Config) -> Result<WheelHandle, BuildKind> {
        let shards = config.validate()?;
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| BuildKind::NoRuntime)?;
        WheelHandle::spawn(config, shards, &runtime).ok_or(BuildKind::NoTimer)
    }

    /// Builds a wheel of `shards` shards with `config`, whose settings are
    /// valid, and spawns its driver on `runtime`; `None` when that runtime
    /// has no timer.
    pub(crate) fn spawn(
        config: &Config,
        shards: usize,
        runtime: &tokio::runtime::Handle,
    ) -> Option<WheelHandle> {
        // Counting ticks from one of tokio's own tick boundaries makes the
        // wheel's ticks end where tokio's do: one rounding, not two.
        let timer = tokio_reliance::timer_of(runtime)?;
        let origin = timer.boundary.unwrap_or_else(tokio::time::Instant::now);
        let mut core = Core::new(origin, config.tick, config.buckets(), config.max_timers);
        core.clock.runs_on(runtime.runtime_flavor());
        let shards = Arc::new(Shards::new(Arc::new(core), shards));
        // The handle first: a driver that ran before it existed (on another
        // worker) would find the wheel abandoned and shut it down.
        let handle = WheelHandle::new(shards.clone());
        let telemetry = Telemetry::new(config);
        runtime.spawn(driver::run(shards, timer.fires_at_once, telemetry));
        Some(handle)
    }

    fn new(shards: Arc<Shards>) -> WheelHandle {
        shards.core.handles.fetch_add(1, Ordering::AcqRel);
        WheelHandle {
            inner: Arc::new(Inner { shards }),
        }
    }

    pub(crate) fn shards(&self) -> &Shards {
        &self.inner.shards
    }

    pub(crate) fn core(&self) -> &Core {
        &self.inner.shards.core
    }

    /// A hold on the shard this thread uses, counted among the live timers;
    /// `None` when `max_timers` are alive already.
    #[inline]
    pub(crate) fn claim(&self) -> Option<ShardRef> {
        // Not `ShardRef::claim(shards.current())`: counting on the core the
        // handle holds before picking the shard saves the shard's load on
        // the path every held wheel's timer takes.
        let shards = self.shards();
        shards
            .core
            .acquire()
            .then(|| ShardRef::new(shards.current()))
    }

    /// The wheel's resolution.
    pub(crate) fn tick(&self) -> Duration {
        self.core().clock.tick()
    }

    /// The number of buckets per shard.
    pub(crate) fn buckets(&self) -> usize {
        self.core().buckets
    }

    /// The shards' counts, added up, and the driver's.
    pub(crate) fn counts(&self) -> Counts {
        self.shards().counts()
    }

    /// Shuts the wheel down; returns how many timers were pending.
    pub(crate) fn shutdown(&self) -> usize {
        self.shards().shutdown()
    }

    #[inline]
    pub(crate) fn is_shutdown(&self) -> bool {
        self.core().is_shutdown()
    }
}
