//! A [`Wheel`]: made, looked up, asked and shut down here; what it makes
//! is in two files beside this one, the futures it is polled through
//! (`timers`) and what it schedules apart from them (`scheduled`); how it
//! is configured is [`Builder`](crate::Builder)'s.

use std::time::Duration;

use crate::engine::handle::WheelHandle;
use crate::engine::registry::{self, Kind};
use crate::engine::shards::ShardRef;
use crate::error::{unwrap_or_fail, Error};
use crate::metrics::Metrics;

mod scheduled;
mod timers;

/// A hashed timing wheel and the handle to its driver task.
///
/// A `Wheel` makes timers: [`sleep`](Wheel::sleep), [`timeout`](Wheel::timeout)
/// and the cancellable [`delay`](Wheel::delay). It is cheap to clone (every
/// clone is the same wheel) and `Send + Sync`. Its driver is a tokio task
/// spawned on the runtime the wheel was built in; it runs until
/// [`shutdown`](Wheel::shutdown), until its runtime shuts down, or until the
/// last `Wheel` handle and the last timer are dropped.
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use tokio::time::Instant;
///
/// let wheel = hashwheel::Wheel::new();
/// let start = Instant::now();
/// wheel.sleep(Duration::from_millis(100)).await;
/// assert!(start.elapsed() >= Duration::from_millis(100));
/// # }
/// ```
///
/// # Implementation
///
/// A hashed timing wheel (Varghese & Lauck, *Hashed and Hierarchical Timing
/// Wheels*, 1996, scheme 6), the scheme of Netty's `HashedWheelTimer` and of
/// the Linux timer wheel: time is cut into [ticks](crate::Builder::tick), a
/// ring of [buckets](crate::Builder::buckets) holds each timer in the bucket
/// its tick maps to, and threads keep their timers in
/// [shards](crate::Builder::shards) of their own. Starting, moving and
/// cancelling a timer cost O(1); firing costs O(1) per timer fired, plus a
/// look at each tick with work. The design in full is in the engine's module
/// docs, in the crate's source (`src/engine/mod.rs`).
#[derive(Debug, Clone)]
pub struct Wheel {
    pub(crate) handle: WheelHandle,
}

impl Wheel {
    /// A wheel with the default settings (1 ms tick, 4096 buckets, unbounded)
    /// whose driver runs on the current tokio runtime.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime, or in one built without its timer.
    /// [`Builder::build`](crate::Builder::build) returns an error instead.
    ///
    /// ```should_panic
    /// let _wheel = hashwheel::Wheel::new(); // no runtime here
    /// ```
    #[track_caller]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Wheel {
        match Wheel::builder().build() {
            Ok(w) => w,
            Err(e) => panic!("hashwheel::Wheel::new: {e}"),
        }
    }

    /// The current runtime's default wheel: the one the free functions
    /// ([`hashwheel::sleep`](fn@crate::sleep), [`timeout`](fn@crate::timeout), ...)
    /// use. It is built with the default settings on first use, unless
    /// [`Builder::build_default`](crate::Builder::build_default) configured it.
    ///
    /// Each runtime has its own. Its driver runs on that runtime and dies
    /// with it: when the runtime shuts down, the wheel shuts down and its
    /// pending timers complete (see [`shutdown`](Wheel::shutdown)).
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime, or in one built without its timer;
    /// [`try_current`](Wheel::try_current) returns an error instead.
    ///
    /// ```should_panic
    /// let _wheel = hashwheel::Wheel::current(); // no runtime here
    /// ```
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// hashwheel::sleep(Duration::from_millis(5)).await;
    /// assert_eq!(hashwheel::Wheel::current().metrics().fired_count(), 1);
    /// # }
    /// ```
    #[track_caller]
    pub fn current() -> Wheel {
        unwrap_or_fail(Wheel::try_current(), "Wheel::current")
    }

    /// Like [`current`](Wheel::current), but returns an error where it
    /// would panic.
    ///
    /// # Errors
    ///
    /// - [`Error::is_no_runtime`] outside a tokio runtime;
    /// - [`Error::is_no_timer`] in a runtime built without its timer.
    ///
    /// In a runtime that has shut down it returns a wheel that has shut down
    /// too: its timers complete at once (see [`shutdown`](Wheel::shutdown)).
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap(); // no timer
    /// let _entered = rt.enter();
    /// assert!(hashwheel::Wheel::try_current().unwrap_err().is_no_timer());
    /// ```
    pub fn try_current() -> Result<Wheel, Error> {
        registry::current()
            .map(|handle| Wheel { handle })
            .map_err(Error)
    }

    /// A place on this wheel for one more timer, on the shard this thread
    /// uses; an error when `max_timers` timers are alive.
    #[inline]
    pub(crate) fn claim(&self) -> Result<ShardRef, Error> {
        self.handle.claim().ok_or(Error(Kind::AtCapacity))
    }

    /// [`claim`](Wheel::claim), or a panic naming `Wheel::{what}`.
    #[track_caller]
    #[inline]
    pub(crate) fn claim_or_panic(&self, what: &str) -> ShardRef {
        match self.claim() {
            Ok(s) => s,
            Err(e) => fail_on_wheel(e, what),
        }
    }

    /// The tick: the wheel's resolution (see
    /// [`Builder::tick`](crate::Builder::tick)). A deadline rounds up to the
    /// end of its tick.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), hashwheel::error::BuildError> {
    /// use std::time::Duration;
    ///
    /// assert_eq!(hashwheel::Wheel::new().tick(), Duration::from_millis(1));
    /// let coarse = hashwheel::Wheel::builder().tick(Duration::from_millis(100)).build()?;
    /// assert_eq!(coarse.tick(), Duration::from_millis(100));
    /// # Ok(())
    /// # }
    /// ```
    pub fn tick(&self) -> Duration {
        self.handle.tick()
    }

    /// The number of buckets (a power of two; see
    /// [`Builder::buckets`](crate::Builder::buckets)).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), hashwheel::error::BuildError> {
    /// assert_eq!(hashwheel::Wheel::new().buckets(), 4096);
    /// let small = hashwheel::Wheel::builder().buckets(100).build()?;
    /// assert_eq!(small.buckets(), 128);
    /// # Ok(())
    /// # }
    /// ```
    pub fn buckets(&self) -> usize {
        self.handle.buckets()
    }

    /// A snapshot of the wheel's counters: it does not change as the wheel
    /// goes on; call again for fresh numbers.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let before = wheel.metrics();
    /// wheel.sleep(Duration::from_millis(5)).await;
    /// assert_eq!(before.fired_count(), 0); // a snapshot
    /// assert_eq!(wheel.metrics().fired_count(), 1);
    /// # }
    /// ```
    pub fn metrics(&self) -> Metrics {
        Metrics(self.handle.counts())
    }

    /// Stops the driver and wakes every pending timer: a [`Delay`](crate::Delay) resolves
    /// to an error for which [`Error::is_shutdown`] holds; a [`Sleep`](crate::Sleep) and a
    /// [`Timeout`](crate::Timeout) complete as if their deadline had passed; a
    /// [`DelayQueue`](crate::DelayQueue) hands out every value it holds at once, in deadline
    /// order. Timers made afterwards (and values inserted afterwards) do the
    /// same on their first poll.
    ///
    /// Returns how many timers were pending. Calling it again returns 0.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let delay = wheel.delay(Duration::from_secs(60));
    /// let waiter = tokio::spawn(delay);
    /// tokio::task::yield_now().await; // let it register
    /// assert_eq!(wheel.shutdown(), 1);
    /// assert!(waiter.await.unwrap().unwrap_err().is_shutdown());
    /// # }
    /// ```
    pub fn shutdown(&self) -> usize {
        self.handle.shutdown()
    }

    /// Whether the wheel has shut down: through
    /// [`shutdown`](Wheel::shutdown), or because the runtime that ran it is
    /// gone.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let wheel = hashwheel::Wheel::new();
    /// assert!(!wheel.is_shutdown());
    /// wheel.shutdown();
    /// assert!(wheel.is_shutdown());
    /// assert!(wheel.clone().is_shutdown()); // every clone is the same wheel
    /// # }
    /// ```
    pub fn is_shutdown(&self) -> bool {
        self.handle.is_shutdown()
    }
}

// ===== the current runtime's default wheel =====

/// A place for one more timer on the current runtime's default wheel; an
/// error outside a runtime, in one without its timer, or when the wheel is
/// at capacity. What the free functions' `try_` forms make their timers
/// from.
pub(crate) fn try_claim_default() -> Result<ShardRef, Error> {
    registry::claim().map_err(Error)
}

/// [`try_claim_default`], or a panic naming the free function `what`.
#[track_caller]
#[inline]
pub(crate) fn claim_default(what: &str) -> ShardRef {
    match registry::claim() {
        Ok(s) => s,
        Err(r) => Error(r).fail(what),
    }
}

/// [`Wheel::claim_or_panic`]'s panic, out of line: with the message's
/// formatting inline, the claim was not inlined into the timer constructors.
#[cold]
#[track_caller]
fn fail_on_wheel(e: Error, what: &str) -> ! {
    e.fail(&format!("Wheel::{what}"))
}
