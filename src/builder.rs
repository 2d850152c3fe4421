//! Configuration of a [`Wheel`].

use std::borrow::Cow;
use std::time::Duration;

use crate::engine::config::Config;
use crate::engine::handle::WheelHandle;
use crate::engine::registry;
use crate::error::BuildError;
use crate::wheel::Wheel;

/// Configures and builds a [`Wheel`].
///
/// | setting | default | allowed |
/// |---|---|---|
/// | [`tick`](crate::Builder::tick) | 1 ms | 1 ms to 1 hour |
/// | [`buckets`](crate::Builder::buckets) | 4096 | 1 to 2^20, rounded up to a power of two |
/// | [`max_timers`](crate::Builder::max_timers) | unbounded | at least 1 |
/// | [`shards`](crate::Builder::shards) | 4 × the available parallelism, a power of two, at most 64 | 1 to 1024 |
///
/// `buckets × shards` must be at most 2^20: a wheel holds its buckets from
/// the moment it is built, and `build` returns within milliseconds.
///
/// A setting outside these ranges makes [`build`](Builder::build) return an
/// error that names its limit. Every setting it accepts works over its
/// whole range, extremes included: no setting makes the wheel stop, fire a
/// timer early or overflow (the crate's test suite drives the builder over
/// every range and runs timers on each wheel it builds).
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
///     .buckets(1000) // rounded up to 1024
///     .max_timers(1_000_000)
///     .build()?;
/// assert_eq!(wheel.buckets(), 1024);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct Builder {
    config: Config,
}

impl Builder {
    /// A builder with the default settings (see the table above).
    ///
    /// Making one looks nothing up: it works outside a runtime; only
    /// [`build`](Builder::build) needs one.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), hashwheel::error::BuildError> {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Builder::new().build()?;
    /// assert_eq!(wheel.tick(), Duration::from_millis(1));
    /// assert_eq!(wheel.buckets(), 4096);
    /// # Ok(())
    /// # }
    /// ```
    pub fn new() -> Builder {
        Builder::default()
    }

    /// The wheel's resolution: deadlines round up to a whole number of
    /// ticks. At least 1 ms (tokio's own timer resolution), and at most
    /// 1 hour: a timer may fire up to a tick late, and no timer is served
    /// by a coarser one.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), hashwheel::error::BuildError> {
    /// use std::time::Duration;
    /// use tokio::time::Instant;
    ///
    /// let wheel = hashwheel::Wheel::builder().tick(Duration::from_millis(10)).build()?;
    /// assert_eq!(wheel.tick(), Duration::from_millis(10));
    ///
    /// let start = Instant::now();
    /// wheel.sleep(Duration::from_millis(15)).await;
    /// assert_eq!(start.elapsed(), Duration::from_millis(20)); // rounded up to a tick
    ///
    /// let err = hashwheel::Wheel::builder().tick(Duration::from_micros(10)).build();
    /// assert_eq!(err.unwrap_err().to_string(), "tick must be at least 1 millisecond");
    /// let err = hashwheel::Wheel::builder().tick(Duration::from_secs(7200)).build();
    /// assert_eq!(err.unwrap_err().to_string(), "tick must be at most 1 hour");
    /// # Ok(())
    /// # }
    /// ```
    pub fn tick(self, tick: Duration) -> Builder {
        self.with(|c| c.tick = tick)
    }

    /// The number of buckets of each shard, rounded up to a power of two.
    /// More buckets mean fewer timers to look at per tick. At most 2^20,
    /// and at most 2^20 in all the shards together (see the table above).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), hashwheel::error::BuildError> {
    /// let wheel = hashwheel::Wheel::builder().buckets(1000).build()?;
    /// assert_eq!(wheel.buckets(), 1024); // the next power of two
    ///
    /// let err = hashwheel::Wheel::builder().buckets(0).build();
    /// assert_eq!(err.unwrap_err().to_string(), "buckets must be at least 1");
    /// let err = hashwheel::Wheel::builder().buckets(1 << 20).shards(2).build();
    /// assert!(err.unwrap_err().to_string().starts_with("buckets × shards must be at most 2^20"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn buckets(self, buckets: usize) -> Builder {
        self.with(|c| c.buckets = buckets)
    }

    /// Bounds the timers alive at once. A `Sleep`, `Timeout` or `Delay`
    /// counts from its creation until it is dropped; beyond the bound the
    /// `try_` constructors return an error and the plain ones panic, and
    /// the adapters shed load: `hashwheel::tower::Timeout` answers the
    /// request with that error, `hashwheel::hyper::Timer` gives hyper a
    /// sleep already complete. Every refusal counts in
    /// [`refused_count`](crate::Metrics::refused_count).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::builder().max_timers(2).build()?;
    /// let _a = wheel.try_sleep(Duration::from_secs(1))?;
    /// let _b = wheel.try_delay(Duration::from_secs(1))?;
    /// assert!(wheel.try_sleep(Duration::from_secs(1)).unwrap_err().is_at_capacity());
    /// assert_eq!(wheel.metrics().refused_count(), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn max_timers(self, max: usize) -> Builder {
        self.with(|c| c.max_timers = Some(max))
    }

    /// How many worker threads can make and cancel timers at once without
    /// waiting on each other. Each thread uses one of these parts of the
    /// wheel, chosen when it first makes a timer; threads that share a part
    /// take turns on it. One part suits a current-thread runtime; the
    /// default suits a multi-thread runtime on this machine.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), hashwheel::error::BuildError> {
    /// let wheel = hashwheel::Wheel::builder().shards(1).build()?;
    /// assert_eq!(wheel.metrics().num_shards(), 1);
    ///
    /// let err = hashwheel::Wheel::builder().shards(0).build();
    /// assert_eq!(err.unwrap_err().to_string(), "shards must be between 1 and 1024");
    /// # Ok(())
    /// # }
    /// ```
    pub fn shards(self, shards: usize) -> Builder {
        self.with(|c| c.shards = Some(shards))
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
    /// It takes a `&'static str` or an owned `String` (a name read from
    /// configuration, say).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), hashwheel::error::BuildError> {
    /// let sessions = hashwheel::Wheel::builder().name("sessions").build()?;
    ///
    /// let tenant = String::from("tenant-42"); // from a config file
    /// let per_tenant = hashwheel::Wheel::builder().name(tenant).build()?;
    /// # drop((sessions, per_tenant));
    /// # Ok(())
    /// # }
    /// ```
    pub fn name(self, name: impl Into<Cow<'static, str>>) -> Builder {
        self.with(|c| c.name = Some(name.into()))
    }

    /// How often the wheel hands its counts to the `metrics` recorder
    /// (1 s by default): the pending gauge and the counters of registered,
    /// fired, cancelled and refused timers. A scrape sees a change within
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
    /// Any longer interval works, up to `Duration::MAX` (a publication
    /// every 30 years, as tokio puts a sleep that long).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), hashwheel::error::BuildError> {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::builder()
    ///     .name("sessions")
    ///     .metrics_interval(Duration::from_secs(10))
    ///     .build()?;
    /// # drop(wheel);
    ///
    /// let err = hashwheel::Wheel::builder().metrics_interval(Duration::ZERO).build();
    /// assert_eq!(err.unwrap_err().to_string(), "metrics_interval must be more than zero");
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "metrics")]
    #[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
    pub fn metrics_interval(self, interval: Duration) -> Builder {
        self.with(|c| c.metrics_interval = interval)
    }

    /// How late the wheel may fire its timers before it reports a stall
    /// (100 ms by default): timers fired more than this after the end of
    /// the earliest tick among them emit a `WARN` event, target
    /// `hashwheel`, with the fields `wheel`, `lag_ms` and `pending` (the
    /// timers pending at that moment); at most one per second per wheel.
    /// Every firing is checked alike: the first after the wheel is built,
    /// one after an idle period, one for a new earliest timer. A late
    /// driver is the first sign of a runtime blocked by a task that does
    /// not yield, or overloaded. Any duration works; `Duration::MAX` never
    /// warns.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), hashwheel::error::BuildError> {
    /// use std::time::Duration;
    ///
    /// // Warn when timers fire more than 20 ms late.
    /// let strict = hashwheel::Wheel::builder()
    ///     .stall_threshold(Duration::from_millis(20))
    ///     .build()?;
    /// // Never warn.
    /// let quiet = hashwheel::Wheel::builder().stall_threshold(Duration::MAX).build()?;
    /// # drop((strict, quiet));
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "tracing")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
    pub fn stall_threshold(self, threshold: Duration) -> Builder {
        self.with(|c| c.stall_threshold = threshold)
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
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::builder().build().unwrap();
    /// wheel.sleep(Duration::from_millis(5)).await;
    /// assert_eq!(wheel.metrics().fired_count(), 1);
    ///
    /// // Out of range: the error names the limit.
    /// let err = hashwheel::Wheel::builder().max_timers(0).build().unwrap_err();
    /// assert_eq!(err.to_string(), "max_timers must be at least 1");
    /// # }
    /// ```
    pub fn build(self) -> Result<Wheel, BuildError> {
        WheelHandle::start(&self.config)
            .map(|handle| Wheel { handle })
            .map_err(BuildError)
    }

    /// Builds the wheel as the current runtime's default wheel: the one that
    /// [`hashwheel::sleep`](fn@crate::sleep), [`timeout`](fn@crate::timeout) and
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
    /// As [`build`](crate::Builder::build), and
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
    ///     .max_timers(1_000_000)
    ///     .build_default()?;
    ///
    /// assert_eq!(hashwheel::Wheel::current().tick(), Duration::from_millis(10));
    /// let start = tokio::time::Instant::now();
    /// hashwheel::sleep(Duration::from_millis(25)).await;
    /// assert!(start.elapsed() >= Duration::from_millis(30)); // a whole tick
    ///
    /// let again = hashwheel::Wheel::builder().build_default();
    /// assert!(again.unwrap_err().is_default_exists());
    /// # Ok(())
    /// # }
    /// ```
    pub fn build_default(self) -> Result<Wheel, BuildError> {
        registry::build_default(&self.config)
            .map(|handle| Wheel { handle })
            .map_err(BuildError)
    }

    /// `self`, with `set` applied to its settings.
    fn with(mut self, set: impl FnOnce(&mut Config)) -> Builder {
        set(&mut self.config);
        self
    }
}

// ===== impl Wheel =====

impl Wheel {
    /// A [`Builder`] to configure a wheel; the same as [`Builder::new`].
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), hashwheel::error::BuildError> {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::builder().tick(Duration::from_millis(5)).build()?;
    /// assert_eq!(wheel.tick(), Duration::from_millis(5));
    /// # Ok(())
    /// # }
    /// ```
    pub fn builder() -> Builder {
        Builder::new()
    }
}
