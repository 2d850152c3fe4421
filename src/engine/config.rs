//! A wheel's settings, checked once before it is built.

use std::borrow::Cow;
use std::time::Duration;

/// The name of a runtime's default wheel, unless its builder names it.
pub(crate) const DEFAULT_WHEEL: &str = "default";

/// The name of a wheel built by a `Builder` that was not given one.
pub(crate) const UNNAMED: &str = "unnamed";

/// The tick, by default.
pub(crate) const TICK: Duration = Duration::from_millis(1);

/// The longest tick. Every timer may fire up to a tick late, so a coarser
/// tick serves no timer: the coarse wheels of timer libraries tick in
/// milliseconds to seconds (Netty's default is 100 ms), and a timeout of
/// hours is still kept within an hour by this one.
pub(crate) const MAX_TICK: Duration = Duration::from_secs(3600);

/// The most buckets of a wheel, all its shards' together. Every bucket is allocated and filled before `build` returns
/// (24 bytes and a bit each): 2^20 of them are 24 MiB, built in about
/// 3 ms. A wheel of one shard that size turns once in 17 minutes at the
/// default tick; more buckets would only spread a wheel's timers thinner.
pub(crate) const MAX_BUCKETS: usize = 1 << 20;

/// Buckets per shard, by default.
pub(crate) const BUCKETS: usize = 4096;

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
    pub(crate) buckets: usize,
    pub(crate) max_timers: Option<usize>,
    /// `None`: four per available core (see [`Config::validate`]).
    pub(crate) shards: Option<usize>,
    /// The `wheel` label of its metrics and field of its events; `None`:
    /// [`UNNAMED`].
    pub(crate) name: Option<Cow<'static, str>>,
    /// How often the metrics facade hears from the wheel.
    pub(crate) metrics_interval: Duration,
    /// How late a driver pass may run before a stall is reported (read
    /// with the `tracing` feature only).
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    pub(crate) stall_threshold: Duration,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            tick: TICK,
            buckets: BUCKETS,
            max_timers: None,
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
    ZeroBuckets,
    TooManyBucketsPerShard,
    ZeroMaxTimers,
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

    /// The number of buckets: `buckets` rounded up to a power of two.
    pub(crate) fn buckets(&self) -> usize {
        self.buckets.next_power_of_two()
    }

    /// Checks every setting; returns the number of shards to use.
    pub(crate) fn validate(&self) -> Result<usize, BuildKind> {
        if self.tick < Duration::from_millis(1) {
            return Err(BuildKind::TickTooShort);
        }
        if self.tick > MAX_TICK {
            return Err(BuildKind::TickTooLong);
        }
        if self.buckets == 0 {
            return Err(BuildKind::ZeroBuckets);
        }
        if self.buckets > MAX_BUCKETS {
            return Err(BuildKind::TooManyBucketsPerShard);
        }
        if self.max_timers == Some(0) {
            return Err(BuildKind::ZeroMaxTimers);
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
        if self.buckets().saturating_mul(shards) > MAX_BUCKETS {
            return Err(BuildKind::TooManyBuckets);
        }
        Ok(shards)
    }
}
