//! Configuration of a [`Wheel`].

use std::time::Duration;

use crate::engine::clock;
use crate::engine::publish::{self, Telemetry};
use crate::engine::sync::Arc;
use crate::engine::wheel::MAX_SLOTS;
use crate::engine::{driver, Core, Shards};
use crate::error::{BuildError, BuildKind};
use crate::wheel::Wheel;

/// Configures and builds a [`Wheel`].
///
/// | setting | default | allowed |
/// |---|---|---|
/// | [`tick`](Builder::tick) | 1 ms | 1 ms up to 2^62 ns |
/// | [`slots`](Builder::slots) | 4096 | 1 to 2^30, rounded up to a power of two |
/// | [`max_pending`](Builder::max_pending) | unbounded | at least 1 |
/// | [`shards`](Builder::shards) | 4 × the available parallelism, a power of two, at most 64 | 1 to 1024 |
/// | [`name`](Builder::name) | `"unnamed"` (`"default"` for a runtime's default wheel) | any |
/// | `metrics_interval` (feature `metrics`) | 1 s | more than zero |
/// | `stall_threshold` (feature `tracing`) | 100 ms | any |
///
/// `slots × shards` must be at most 2^30: each bucket costs 12 bytes,
/// allocated when the wheel is built.
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() -> Result<(), hashwheel::error::BuildError> {
/// use std::time::Duration;
///
/// let wheel = hashwheel::Wheel::builder()
///     .tick(Duration::from_millis(10))
///     .slots(1000) // rounded up to 1024
///     .max_pending(1_000_000)
///     .build()?;
/// assert_eq!(wheel.slots(), 1024);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Builder {
    tick: Duration,
    slots: usize,
    max_pending: Option<usize>,
    shards: Option<usize>,
    name: Option<&'static str>,
    metrics_interval: Duration,
    stall_threshold: Duration,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

impl Builder {
    /// A builder with the default settings.
    pub fn new() -> Builder {
        Builder {
            tick: Duration::from_millis(1),
            slots: 4096,
            max_pending: None,
            shards: None,
            name: None,
            metrics_interval: publish::METRICS_INTERVAL,
            stall_threshold: publish::STALL_THRESHOLD,
        }
    }

    /// The wheel's resolution: deadlines round up to a whole number of
    /// ticks. At least 1 ms (tokio's own timer resolution).
    pub fn tick(mut self, tick: Duration) -> Builder {
        self.tick = tick;
        self
    }

    /// The number of buckets, rounded up to a power of two. More buckets
    /// mean fewer timers to look at per tick.
    pub fn slots(mut self, slots: usize) -> Builder {
        self.slots = slots;
        self
    }

    /// Bounds the timers alive at once. A `Sleep`, `Timeout` or `Delay`
    /// counts from its creation until it is dropped; beyond the bound the
    /// `try_` constructors return an error and the plain ones panic.
    pub fn max_pending(mut self, max: usize) -> Builder {
        self.max_pending = Some(max);
        self
    }

    /// The number of independently locked shards; each thread uses one,
    /// chosen when it first makes a timer.
    pub fn shards(mut self, shards: usize) -> Builder {
        self.shards = Some(shards);
        self
    }

    /// The wheel's name: the value of the `wheel` label of its metrics
    /// (feature `metrics`) and the `wheel` field of its events (feature
    /// `tracing`). Without a name a wheel is `"unnamed"`, and a runtime's
    /// default wheel (see [`build_default`](Builder::build_default))
    /// `"default"`.
    ///
    /// Wheels of the same name share their metrics: each series counts
    /// them all (two runtimes' default wheels make one `"default"` series).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), hashwheel::error::BuildError> {
    /// let sessions = hashwheel::Wheel::builder().name("sessions").build()?;
    /// # drop(sessions);
    /// # Ok(())
    /// # }
    /// ```
    pub fn name(mut self, name: &'static str) -> Builder {
        self.name = Some(name);
        self
    }

    /// How often the wheel hands its counts to the `metrics` recorder
    /// (1 s by default): the pending gauge and the counters of registered,
    /// fired, cancelled and rejected timers. A scrape sees a change within
    /// one interval while the wheel's runtime runs, and the final values
    /// once the wheel has shut down. The driver's lag histogram gets its
    /// samples as the driver measures them.
    ///
    /// The publisher runs in the wheel's driver task. On tokio's paused
    /// clock (`start_paused`), after an interval that changed nothing it
    /// waits for the driver's next pass instead of the next interval, so
    /// that auto-advance is not held at every interval.
    ///
    /// Must be more than zero: [`build`](Builder::build) fails otherwise.
    #[cfg(feature = "metrics")]
    #[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
    pub fn metrics_interval(mut self, interval: Duration) -> Builder {
        self.metrics_interval = interval;
        self
    }

    /// How late the driver may run before the wheel reports a stall (100 ms
    /// by default): a pass that runs more than this after the end of its
    /// tick emits a `WARN` event, target `hashwheel`, with the fields
    /// `wheel`, `lag_ms` and `pending`; at most one per second per wheel.
    /// A late driver is the first sign of a runtime blocked by a task that
    /// does not yield, or overloaded.
    #[cfg(feature = "tracing")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
    pub fn stall_threshold(mut self, threshold: Duration) -> Builder {
        self.stall_threshold = threshold;
        self
    }

    /// Names the wheel `name` unless it has a name already.
    pub(crate) fn name_if_unnamed(mut self, name: &'static str) -> Builder {
        self.name.get_or_insert(name);
        self
    }

    /// Builds the wheel and spawns its driver on the current tokio runtime.
    ///
    /// # Errors
    ///
    /// A [`BuildError`] when a setting is out of range (see the table above),
    /// when called outside a tokio runtime
    /// ([`is_no_runtime`](BuildError::is_no_runtime)), or in one built
    /// without its timer ([`is_no_timer`](BuildError::is_no_timer): tokio's
    /// own panic message is printed first, as the process's panic hook
    /// prints every caught panic).
    pub fn build(self) -> Result<Wheel, BuildError> {
        let shards = self.validate()?;
        let handle = tokio::runtime::Handle::try_current()
            .map_err(|_| BuildError::new(BuildKind::NoRuntime))?;
        // Counting ticks from one of tokio's own tick boundaries makes the
        // wheel's ticks end where tokio's do: one rounding, not two. A
        // runtime that has shut down has no timer to ask (and its driver
        // refuses the wheel's task: the wheel is born shut down).
        let origin = if is_closed(&handle) {
            tokio::time::Instant::now()
        } else {
            // tokio panics when asked for a timer on a runtime built
            // without one: that is an error here, not a panic.
            match std::panic::catch_unwind(clock::tokio_tick_boundary) {
                Ok(found) => found.unwrap_or_else(tokio::time::Instant::now),
                Err(_) => return Err(BuildError::new(BuildKind::NoTimer)),
            }
        };
        let mut core = Core::new(
            origin,
            self.tick,
            self.slots.next_power_of_two(),
            self.max_pending,
        );
        core.clock.runs_on(handle.runtime_flavor());
        core.telemetry = Telemetry::new(
            self.name.unwrap_or(publish::UNNAMED),
            self.metrics_interval,
            self.stall_threshold,
        );
        let core = Arc::new(core);
        let shards = Arc::new(Shards::new(core, shards));
        // The handle first: a driver that ran before it existed (on another
        // worker) would find the wheel abandoned and shut it down.
        let wheel = Wheel::from_shards(shards.clone());
        handle.spawn(driver::run(shards));
        Ok(wheel)
    }

    /// Builds the wheel as the current runtime's default wheel: the one that
    /// [`hashwheel::sleep`](crate::sleep), [`timeout`](crate::timeout) and
    /// the other free functions use, and [`Wheel::current`] returns. Call it
    /// once at start-up, before the runtime's first timer; without it, the
    /// first free function call builds one with the default settings.
    ///
    /// The default wheel is the runtime's until the runtime shuts down (or
    /// until [`Wheel::shutdown`] is called on it; the runtime's next timer
    /// then builds a new default wheel with the default settings, unless
    /// `build_default` is called again first).
    ///
    /// # Errors
    ///
    /// As [`build`](Builder::build), and
    /// [`BuildError::is_default_exists`] when the runtime already has a live
    /// default wheel.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), hashwheel::error::BuildError> {
    /// use std::time::Duration;
    ///
    /// hashwheel::Wheel::builder()
    ///     .tick(Duration::from_millis(10))
    ///     .max_pending(1_000_000)
    ///     .build_default()?;
    ///
    /// assert_eq!(hashwheel::Wheel::current().tick(), Duration::from_millis(10));
    /// let start = tokio::time::Instant::now();
    /// hashwheel::sleep(Duration::from_millis(25)).await;
    /// assert_eq!(start.elapsed(), Duration::from_millis(30)); // a whole tick
    ///
    /// let again = hashwheel::Wheel::builder().build_default();
    /// assert!(again.unwrap_err().is_default_exists());
    /// # Ok(())
    /// # }
    /// ```
    pub fn build_default(self) -> Result<Wheel, BuildError> {
        crate::engine::registry::build_default(self)
    }

    /// Checks every setting; returns the number of shards to use.
    fn validate(&self) -> Result<usize, BuildError> {
        let err = |k| Err(BuildError::new(k));
        if self.tick < Duration::from_millis(1) {
            return err(BuildKind::TickTooShort);
        }
        // Two ticks must fit before the clock's horizon (2^63 ns).
        if self.tick.as_nanos() > 1 << 62 {
            return err(BuildKind::TickTooLong);
        }
        if self.slots == 0 {
            return err(BuildKind::ZeroSlots);
        }
        if self.slots > MAX_SLOTS {
            return err(BuildKind::TooManySlots);
        }
        let slots = self.slots.next_power_of_two();
        if self.max_pending == Some(0) {
            return err(BuildKind::ZeroMaxPending);
        }
        if self.metrics_interval.is_zero() {
            return err(BuildKind::ZeroMetricsInterval);
        }
        let shards = match self.shards {
            Some(n) if n == 0 || n > 1024 => return err(BuildKind::BadShards),
            Some(n) => n,
            None => {
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
                (cores * 4).next_power_of_two().min(64)
            }
        };
        // Every shard allocates and fills its buckets at build time.
        if slots.saturating_mul(shards) > MAX_SLOTS {
            return err(BuildKind::TooManyBuckets);
        }
        Ok(shards)
    }
}

/// Whether `handle`'s runtime has shut down: it drops a task spawned on it
/// without ever polling it. A live runtime polls a task before it drops it.
fn is_closed(handle: &tokio::runtime::Handle) -> bool {
    use std::sync::atomic::{AtomicU8, Ordering};
    const POLLED: u8 = 1;
    const DROPPED: u8 = 2;
    struct OnDrop(std::sync::Arc<AtomicU8>);
    impl Drop for OnDrop {
        fn drop(&mut self) {
            self.0.fetch_or(DROPPED, Ordering::AcqRel);
        }
    }
    let seen = std::sync::Arc::new(AtomicU8::new(0));
    let guard = OnDrop(seen.clone());
    drop(handle.spawn(async move {
        guard.0.fetch_or(POLLED, Ordering::AcqRel);
    }));
    seen.load(Ordering::Acquire) == DROPPED
}
