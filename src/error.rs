//! Errors returned by hashwheel.
//!
//! - [`Elapsed`]: a [`Timeout`](crate::Timeout) ran out before its future
//!   completed.
//! - [`Error`]: a timer could not do its job. The reason is told by
//!   predicates, so that new reasons can be added without breaking callers.
//! - [`BuildError`]: a [`Builder`](crate::Builder) was given a configuration
//!   it cannot build.

use std::fmt;
use std::io;

use crate::engine::config::BuildKind;
use crate::engine::core::AT_CAPACITY;

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
pub struct Elapsed(());

impl Elapsed {
    pub(crate) fn new() -> Elapsed {
        Elapsed(())
    }
}

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

/// Why a timer could not complete normally.
///
/// Ask it with the predicates:
///
/// - [`is_cancelled`](Error::is_cancelled): a
///   [`TimeoutHandle`](crate::TimeoutHandle) cancelled the timer. Permanent
///   for that timer.
/// - [`is_shutdown`](Error::is_shutdown): the wheel was shut down, or the
///   runtime that drove it is gone. Permanent for that wheel.
/// - [`is_at_capacity`](Error::is_at_capacity): the wheel already holds
///   `max_pending` timers. Transient: it clears as timers complete or are
///   dropped.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Error(Kind);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Cancelled,
    Shutdown,
    AtCapacity,
}

impl Error {
    pub(crate) fn cancelled() -> Error {
        Error(Kind::Cancelled)
    }

    pub(crate) fn shutdown() -> Error {
        Error(Kind::Shutdown)
    }

    pub(crate) fn at_capacity() -> Error {
        Error(Kind::AtCapacity)
    }

    /// The timer was cancelled through its [`TimeoutHandle`](crate::TimeoutHandle).
    pub fn is_cancelled(&self) -> bool {
        self.0 == Kind::Cancelled
    }

    /// The wheel has shut down: [`Wheel::shutdown`](crate::Wheel::shutdown)
    /// was called, or the runtime that ran its driver is gone.
    pub fn is_shutdown(&self) -> bool {
        self.0 == Kind::Shutdown
    }

    /// The wheel already holds as many timers as its
    /// [`max_pending`](crate::Builder::max_pending) bound allows.
    pub fn is_at_capacity(&self) -> bool {
        self.0 == Kind::AtCapacity
    }

    fn description(&self) -> &'static str {
        match self.0 {
            Kind::Cancelled => "the timer was cancelled",
            Kind::Shutdown => "the timer wheel has shut down",
            Kind::AtCapacity => AT_CAPACITY,
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Error").field(&self.0).finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.description())
    }
}

impl std::error::Error for Error {}

// ===== BuildError =====

/// A [`Builder`](crate::Builder) configuration that cannot be built, or no
/// runtime to build it on. Displays what is wrong and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError(BuildKind);

impl BuildError {
    pub(crate) fn new(kind: BuildKind) -> BuildError {
        BuildError(kind)
    }

    /// The builder was called outside a tokio runtime, so there is nowhere to
    /// run the driver.
    pub fn is_no_runtime(&self) -> bool {
        self.0 == BuildKind::NoRuntime
    }

    /// The tokio runtime was built without its timer (`enable_time` or
    /// `enable_all`), which the driver sleeps on.
    pub fn is_no_timer(&self) -> bool {
        self.0 == BuildKind::NoTimer
    }

    /// [`Builder::build_default`](crate::Builder::build_default) was called
    /// on a runtime that already has a live default wheel.
    pub fn is_default_exists(&self) -> bool {
        self.0 == BuildKind::DefaultExists
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0 {
            BuildKind::NoRuntime => {
                "there is no reactor running, must be called from the context of a Tokio 1.x runtime"
            }
            BuildKind::NoTimer => {
                "the Tokio runtime has no timer: build it with enable_time() or enable_all()"
            }
            BuildKind::TickTooShort => "tick must be at least 1 millisecond",
            BuildKind::TickTooLong => "tick must be at most 2^62 nanoseconds (about 146 years)",
            BuildKind::ZeroSlots => "slots must be at least 1",
            BuildKind::TooManySlots => "slots must be at most 2^30 (1073741824)",
            BuildKind::ZeroMaxPending => "max_pending must be at least 1",
            BuildKind::BadShards => "shards must be between 1 and 1024",
            BuildKind::TooManyBuckets => {
                "slots × shards must be at most 2^30 (every bucket costs 12 bytes up front)"
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
