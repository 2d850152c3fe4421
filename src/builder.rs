//! Configuration of a [`Wheel`].

use std::time::Duration;

use crate::driver::{task, Core, Shards};
use crate::error::{BuildError, BuildKind};
use crate::sync::Arc;
use crate::wheel::MAX_SLOTS;
use crate::Wheel;

/// Configures and builds a [`Wheel`].
///
/// | setting | default | allowed |
/// |---|---|---|
/// | [`tick`](Builder::tick) | 1 ms | 1 ms up to 2^64 ns |
/// | [`slots`](Builder::slots) | 4096 | 1 to 2^30, rounded up to a power of two |
/// | [`max_pending`](Builder::max_pending) | unbounded | at least 1 |
/// | [`shards`](Builder::shards) | 4 × the available parallelism, a power of two, at most 64 | 1 to 1024 |
///
/// `tick × slots` (one turn of the wheel) must fit a [`Duration`].
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

    /// Builds the wheel and spawns its driver on the current tokio runtime.
    ///
    /// # Errors
    ///
    /// A [`BuildError`] when a setting is out of range (see the table above)
    /// or when called outside a tokio runtime.
    pub fn build(self) -> Result<Wheel, BuildError> {
        let shards = self.validate()?;
        let handle = tokio::runtime::Handle::try_current()
            .map_err(|_| BuildError::new(BuildKind::NoRuntime))?;
        let core = Arc::new(Core::new(
            tokio::time::Instant::now(),
            self.tick,
            self.slots.next_power_of_two(),
            self.max_pending,
        ));
        let shards = Arc::new(Shards::new(core, shards));
        // The handle first: a driver that ran before it existed (on another
        // worker) would find the wheel abandoned and shut it down.
        let wheel = Wheel::from_shards(shards.clone());
        handle.spawn(task::run(shards));
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
        crate::default_wheel::build_default(self)
    }

    /// Checks every setting; returns the number of shards to use.
    fn validate(&self) -> Result<usize, BuildError> {
        let err = |k| Err(BuildError::new(k));
        if self.tick < Duration::from_millis(1) {
            return err(BuildKind::TickTooShort);
        }
        if u64::try_from(self.tick.as_nanos()).is_err() {
            return err(BuildKind::TickTooLong);
        }
        if self.slots == 0 {
            return err(BuildKind::ZeroSlots);
        }
        if self.slots > MAX_SLOTS {
            return err(BuildKind::TooManySlots);
        }
        let slots = u32::try_from(self.slots.next_power_of_two()).expect("at most 2^30");
        if self.tick.checked_mul(slots).is_none() {
            return err(BuildKind::SpanOverflow);
        }
        if self.max_pending == Some(0) {
            return err(BuildKind::ZeroMaxPending);
        }
        match self.shards {
            Some(n) if n == 0 || n > 1024 => err(BuildKind::BadShards),
            Some(n) => Ok(n),
            None => {
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
                Ok((cores * 4).next_power_of_two().min(64))
            }
        }
    }
}
