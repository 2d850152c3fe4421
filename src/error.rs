//! Errors returned by hashwheel.
//!
//! - [`Elapsed`]: a [`Timeout`](crate::Timeout) ran out before its future
//!   completed.
//! - [`Error`]: a timer could not be made, or could not do its job. The
//!   reason is told by predicates, so that new reasons can be added without
//!   breaking callers.
//! - [`BuildError`]: a [`Builder`](crate::Builder) was given a configuration
//!   it cannot build.

use std::fmt;
use std::io;

use crate::engine::config::BuildKind;
use crate::engine::core::AT_CAPACITY;
use crate::engine::registry::Kind;

/// What [`Error`] and [`BuildError`] display outside a runtime.
const NO_RUNTIME: &str =
    "there is no reactor running, must be called from the context of a Tokio 1.x runtime";

/// What [`Error`] and [`BuildError`] display in a runtime without its timer.
const NO_TIMER: &str =
    "the Tokio runtime has no timer: build it with enable_time() or enable_all()";

// ===== Elapsed =====

/// A [`Timeout`](crate::Timeout) elapsed before its future completed.
///
/// It displays as "deadline has elapsed" and converts into an
/// [`io::Error`] of kind [`io::ErrorKind::TimedOut`], so `?` works in I/O
/// code.
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
///
/// let wheel = hashwheel::Wheel::new();
/// let err = wheel
///     .timeout(Duration::from_millis(10), std::future::pending::<()>())
///     .await
///     .unwrap_err();
/// assert_eq!(err.to_string(), "deadline has elapsed");
/// let io: std::io::Error = err.into();
/// assert_eq!(io.kind(), std::io::ErrorKind::TimedOut);
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Elapsed(pub(crate) ());

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("deadline has elapsed")
    }
}

impl std::error::Error for Elapsed {}

impl From<Elapsed> for io::Error {
    fn from(e: Elapsed) -> io::Error {
        io::Error::new(io::ErrorKind::TimedOut, e)
    }
}

// ===== Error =====

/// Why a timer could not be made, or could not complete normally.
///
/// Every `try_` constructor returns it, and a [`Delay`](crate::Delay)
/// resolves to it. Ask it with the predicates; each says whether the
/// condition passes on its own (transient) or stays (permanent):
///
/// - [`is_no_runtime`](Error::is_no_runtime): called outside a tokio
///   runtime, with no wheel given. Permanent for that caller: call from
///   within a runtime.
/// - [`is_no_timer`](Error::is_no_timer): the runtime was built without
///   its timer (`enable_time` or `enable_all`). Permanent for that runtime.
///   Told by catching tokio's panic: see [below](#a-runtime-without-its-timer)
///   for what that means under `panic = "abort"`.
/// - [`is_at_capacity`](Error::is_at_capacity): the wheel already holds
///   `max_timers` timers. Transient: it clears as timers complete or are
///   dropped.
/// - [`is_shutdown`](Error::is_shutdown): the wheel was shut down, or the
///   runtime that drove it is gone. Permanent for that wheel; a runtime's
///   default wheel is replaced on the runtime's next use, if the runtime
///   is alive.
/// - [`is_cancelled`](Error::is_cancelled): a
///   [`TimeoutHandle`](crate::TimeoutHandle) cancelled the timer. Permanent
///   for that timer.
///
/// It converts into an [`io::Error`] of kind [`io::ErrorKind::Other`].
///
/// # A runtime without its timer
///
/// Outside any runtime nothing panics: tokio says so without one
/// (`tokio::runtime::Handle::try_current`), and
/// [`is_no_runtime`](Error::is_no_runtime) holds. Inside a runtime tokio
/// has no way to ask whether it has a timer: the first `try_` form that
/// needs the runtime's default wheel (the free functions such as
/// [`try_sleep`](crate::try_sleep), [`Wheel::try_current`](crate::Wheel::try_current),
/// [`DelayQueue::try_new`](crate::DelayQueue::try_new)), and
/// [`Builder::build`](crate::Builder::build), make a tokio sleep and catch
/// the panic tokio raises without a timer. So:
///
/// - with `panic = "abort"` (a `[profile]` setting) that panic aborts the
///   process: the `try_` forms cannot return
///   [`is_no_timer`](Error::is_no_timer) there; build every runtime they
///   run in with its timer;
/// - with unwinding, tokio's panic message still reaches stderr, through
///   the process's panic hook, each time a thread first finds the runtime
///   without a timer (a thread then remembers the runtime it last found
///   so).
///
/// A [`Wheel`](crate::Wheel) already built asks nothing of tokio: its
/// `try_` methods never panic this way.
///
/// # Examples
///
/// ```
/// // No runtime here: an error, not a panic.
/// let err = hashwheel::try_sleep(std::time::Duration::from_secs(1)).unwrap_err();
/// assert!(err.is_no_runtime());
/// assert!(!err.is_no_timer() && !err.is_at_capacity() && !err.is_shutdown());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Error(pub(crate) Kind);

impl Error {
    /// Panics with this error, naming the function `what` that failed:
    /// what a plain constructor does where its `try_` twin returns `self`.
    #[cold]
    #[track_caller]
    pub(crate) fn fail(self, what: &str) -> ! {
        match self.0 {
            // tokio's wording, as `tokio::time::sleep` panics outside a runtime.
            Kind::NoRuntime => {
                panic!("hashwheel::{what} must be called from the context of a Tokio 1.x runtime")
            }
            _ => panic!("hashwheel::{what}: {self}"),
        }
    }

    /// The timer was cancelled through its [`TimeoutHandle`](crate::TimeoutHandle).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let delay = wheel.delay(Duration::from_secs(30));
    /// delay.handle().cancel();
    /// let err = delay.await.unwrap_err();
    /// assert!(err.is_cancelled());
    /// assert!(!err.is_shutdown());
    /// # }
    /// ```
    pub fn is_cancelled(&self) -> bool {
        self.0 == Kind::Cancelled
    }

    /// The wheel has shut down: [`Wheel::shutdown`](crate::Wheel::shutdown)
    /// was called, or the runtime that ran its driver is gone.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// wheel.shutdown();
    /// // A delay made on a wheel that has shut down resolves at once.
    /// let err = wheel.delay(Duration::from_secs(30)).await.unwrap_err();
    /// assert!(err.is_shutdown());
    /// assert!(!err.is_cancelled());
    /// # }
    /// ```
    pub fn is_shutdown(&self) -> bool {
        self.0 == Kind::Shutdown
    }

    /// The wheel already holds as many timers as its
    /// [`max_timers`](crate::Builder::max_timers) bound allows.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::builder().max_timers(1).build()?;
    /// let first = wheel.try_sleep(Duration::from_secs(1))?;
    /// let err = wheel.try_sleep(Duration::from_secs(1)).unwrap_err();
    /// assert!(err.is_at_capacity());
    ///
    /// drop(first); // transient: a dropped timer frees its place
    /// assert!(wheel.try_sleep(Duration::from_secs(1)).is_ok());
    /// # Ok(())
    /// # }
    /// ```
    pub fn is_at_capacity(&self) -> bool {
        self.0 == Kind::AtCapacity
    }

    /// The call was made outside a tokio runtime and was given no wheel,
    /// so it had no default wheel to use.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// // No runtime here.
    /// let err = hashwheel::try_sleep(Duration::from_secs(1)).unwrap_err();
    /// assert!(err.is_no_runtime());
    /// assert!(hashwheel::Wheel::try_current().unwrap_err().is_no_runtime());
    /// ```
    pub fn is_no_runtime(&self) -> bool {
        self.0 == Kind::NoRuntime
    }

    /// The current tokio runtime was built without its timer
    /// (`enable_time` or `enable_all`), which a wheel's driver sleeps on.
    ///
    /// tokio tells this only by panicking: the panic is caught, but the
    /// process's panic hook prints it, and under `panic = "abort"` it ends
    /// the process (see [a runtime without its timer](Error#a-runtime-without-its-timer)).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap(); // no timer
    /// let _entered = rt.enter();
    /// let err = hashwheel::try_sleep(Duration::from_secs(1)).unwrap_err();
    /// assert!(err.is_no_timer());
    /// assert!(!err.is_no_runtime());
    /// ```
    pub fn is_no_timer(&self) -> bool {
        self.0 == Kind::NoTimer
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0 {
            Kind::Cancelled => "the timer was cancelled",
            Kind::Shutdown => "the timer wheel has shut down",
            Kind::AtCapacity => AT_CAPACITY,
            Kind::NoRuntime => NO_RUNTIME,
            Kind::NoTimer => NO_TIMER,
        })
    }
}

impl std::error::Error for Error {}

impl From<Error> for io::Error {
    fn from(e: Error) -> io::Error {
        io::Error::other(e)
    }
}

/// The value of `result`, or the panic of its error naming the function
/// `what` (see [`Error::fail`]): a plain constructor over its `try_` twin.
#[track_caller]
pub(crate) fn unwrap_or_fail<T>(result: Result<T, Error>, what: &str) -> T {
    match result {
        Ok(value) => value,
        Err(e) => e.fail(what),
    }
}

// ===== BuildError =====

/// A [`Builder`](crate::Builder) configuration that cannot be built, or no
/// runtime to build it on. Displays what is wrong and what is allowed.
///
/// Every kind is permanent: a setting out of range stays out of range, a
/// runtime keeps the timer setting it was built with, and a runtime keeps
/// its default wheel until that wheel shuts down. Its predicates
/// [`is_no_runtime`](BuildError::is_no_runtime) and
/// [`is_no_timer`](BuildError::is_no_timer) mean what [`Error`]'s do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError(pub(crate) BuildKind);

impl BuildError {
    /// The builder was called outside a tokio runtime, so there is nowhere to
    /// run the driver.
    ///
    /// # Examples
    ///
    /// ```
    /// // No runtime here.
    /// let err = hashwheel::Wheel::builder().build().unwrap_err();
    /// assert!(err.is_no_runtime());
    /// ```
    pub fn is_no_runtime(&self) -> bool {
        self.0 == BuildKind::NoRuntime
    }

    /// The tokio runtime was built without its timer (`enable_time` or
    /// `enable_all`), which the driver sleeps on.
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap(); // no timer
    /// let _entered = rt.enter();
    /// let err = hashwheel::Wheel::builder().build().unwrap_err();
    /// assert!(err.is_no_timer());
    /// ```
    pub fn is_no_timer(&self) -> bool {
        self.0 == BuildKind::NoTimer
    }

    /// [`Builder::build_default`](crate::Builder::build_default) was called
    /// on a runtime that already has a live default wheel.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// // The runtime's first timer builds its default wheel.
    /// hashwheel::sleep(Duration::from_millis(1)).await;
    /// let err = hashwheel::Wheel::builder().build_default().unwrap_err();
    /// assert!(err.is_default_exists());
    /// # }
    /// ```
    pub fn is_default_exists(&self) -> bool {
        self.0 == BuildKind::DefaultExists
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0 {
            BuildKind::NoRuntime => NO_RUNTIME,
            BuildKind::NoTimer => NO_TIMER,
            BuildKind::TickTooShort => "tick must be at least 1 millisecond",
            BuildKind::TickTooLong => "tick must be at most 1 hour",
            BuildKind::ZeroBuckets => "buckets must be at least 1",
            BuildKind::TooManyBucketsPerShard => "buckets must be at most 2^20 (1048576)",
            BuildKind::ZeroMaxTimers => "max_timers must be at least 1",
            BuildKind::BadShards => "shards must be between 1 and 1024",
            BuildKind::TooManyBuckets => {
                "buckets × shards must be at most 2^20 (1048576 buckets, 24 MiB, all allocated by build)"
            }
            BuildKind::ZeroMetricsInterval => "metrics_interval must be more than zero",
            BuildKind::DefaultExists => {
                "this runtime already has a default wheel: call Builder::build_default \
                 before the runtime's first hashwheel::sleep, timeout, delay or Wheel::current"
            }
        })
    }
}

impl std::error::Error for BuildError {}
