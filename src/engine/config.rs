//! A wheel's settings, checked once before it is built.

use std::borrow::Cow;
use std::time::Duration;

use crate::engine::hashed::MAX_SLOTS;

/// The name of a runtime's default wheel, unless its builder names it.
pub(crate) const DEFAULT_WHEEL: &str = "default";

/// The name of a wheel built by a `Builder` that was not given one.
pub(crate) const UNNAMED: &str = "unnamed";

/// The tick, by default.
pub(crate) const TICK: Duration = Duration::from_millis(1);

/// Buckets per shard, by default.
pub(crate) const SLOTS: usize = 4096;

/// The most shards a wheel may have.
pub(crate) const MAX_SHARDS: usize = 1024;

/// How often the publisher hands the counts to the recorder, by default.
pub(crate) const METRICS_INTERVAL: Duration = Duration::from_secs(1);

/// How late a driver pass may run before it is reported, by default.
pub(crate) const STALL_THRESHOLD: Duration = Duration::from_millis(100);

/// A wheel's settings; the public `Builder` wraps one.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) tick: Duration,
    pub(crate) slots: usize,
    pub(crate) max_pending: Option<usize>,
    /// `None`: four per available core (see [`Config::validate`]).
    pub(crate) shards: Option<usize>,
    /// The `wheel` label of its metrics and field of its events; `None`:
    /// [`UNNAMED`].
    pub(crate) name: Option<Cow<'static, str>>,
    /// How often the metrics facade hears from the wheel.
    pub(crate) metrics_interval: Duration,
    /// How late a driver pass may run before a stall is reported.
    pub(crate) stall_threshold: Duration,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            tick: TICK,
            slots: SLOTS,
            max_pending: None,
            shards: None,
            name: None,
            metrics_interval: METRICS_INTERVAL,
            stall_threshold: STALL_THRESHOLD,
        }
    }
}

/// Why a wheel could not be built (the public `BuildError` says it in words).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BuildKind {
    NoRuntime,
    NoTimer,
    TickTooShort,
    TickTooLong,
    ZeroSlots,
    TooManySlots,
    ZeroMaxPending,
    BadShards,
    TooManyBuckets,
    DefaultExists,
    ZeroMetricsInterval,
}

impl Config {
    /// The same settings, named `name` unless they have a name already (a
    /// runtime's default wheel is `"default"`).
    pub(crate) fn named_if_unnamed(mut self, name: &'static str) -> Config {
        self.name.get_or_insert(Cow::Borrowed(name));
        self
    }

    /// The name the wheel reports under.
    pub(crate) fn name(&self) -> Cow<'static, str> {
        self.name.clone().unwrap_or(Cow::Borrowed(UNNAMED))
    }

    /// The number of buckets: `slots` rounded up to a power of two.
    pub(crate) fn slots(&self) -> usize {
        self.slots.next_power_of_two()
    }

    /// Checks every setting; returns the number of shards to use.
    pub(crate) fn validate(&self) -> Result<usize, BuildKind> {
        if self.tick < Duration::from_millis(1) {
            return Err(BuildKind::TickTooShort);
        }
        // Two ticks must fit before the clock's horizon (2^63 ns).
        if self.tick.as_nanos() > 1 << 62 {
            return Err(BuildKind::TickTooLong);
        }
        if self.slots == 0 {
            return Err(BuildKind::ZeroSlots);
        }
        if self.slots > MAX_SLOTS {
            return Err(BuildKind::TooManySlots);
        }
        if self.max_pending == Some(0) {
            return Err(BuildKind::ZeroMaxPending);
        }
        if self.metrics_interval.is_zero() {
            return Err(BuildKind::ZeroMetricsInterval);
        }
        let shards = match self.shards {
            Some(n) if n == 0 || n > MAX_SHARDS => return Err(BuildKind::BadShards),
            Some(n) => n,
            None => {
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
                (cores * 4).next_power_of_two().min(64)
            }
        };
        // Every shard allocates and fills its buckets at build time.
        if self.slots().saturating_mul(shards) > MAX_SLOTS {
            return Err(BuildKind::TooManyBuckets);
        }
        Ok(shards)
    }
}
