//! A held wheel or the runtime's default: what a wrapper (hyper's `Timer`,
//! tower's `Timeout`, the `io` wrappers) makes its timers on.

use std::fmt;
#[cfg(any(feature = "hyper", feature = "tower"))]
use std::time::Duration;

use crate::error::Error;
use crate::wheel::Wheel;

/// The wheel a wrapper makes its timers on (hyper's `Timer`, tower's
/// `Timeout`, the `io` wrappers): one it holds, or the default wheel of
/// whichever runtime makes each timer. Each timer made on the default goes
/// through the free functions' thread-local lookup, not through a
/// [`Wheel::current`] clone.
#[derive(Clone, Default)]
pub(crate) struct WheelOrDefault(Option<Wheel>);

impl WheelOrDefault {
    /// The default wheel of the runtime each timer is made on.
    pub(crate) const fn current() -> WheelOrDefault {
        WheelOrDefault(None)
    }

    /// `wheel` itself.
    pub(crate) fn held(wheel: Wheel) -> WheelOrDefault {
        WheelOrDefault(Some(wheel))
    }

    /// The held wheel, if any.
    #[cfg(feature = "hyper")]
    pub(crate) fn wheel(&self) -> Option<&Wheel> {
        self.0.as_ref()
    }

    /// A sleep until `deadline` on the held wheel, or on the current
    /// runtime's default; an error where [`try_sleep_until`](crate::try_sleep_until)
    /// and [`Wheel::try_sleep_until`] return one.
    pub(crate) fn try_sleep_until(
        &self,
        deadline: tokio::time::Instant,
    ) -> Result<crate::sleep::Sleep, Error> {
        match &self.0 {
            Some(wheel) => wheel.try_sleep_until(deadline),
            None => crate::sleep::try_sleep_until(deadline),
        }
    }

    /// A sleep of `duration`; panics as [`sleep`](fn@crate::sleep) and
    /// [`Wheel::sleep`] do.
    #[cfg(feature = "hyper")]
    #[track_caller]
    pub(crate) fn sleep(&self, duration: Duration) -> crate::sleep::Sleep {
        match &self.0 {
            Some(wheel) => wheel.sleep(duration),
            None => crate::sleep::sleep(duration),
        }
    }

    /// A sleep until `deadline`; panics as [`sleep_until`](crate::sleep_until)
    /// and [`Wheel::sleep_until`] do.
    #[cfg(feature = "hyper")]
    #[track_caller]
    pub(crate) fn sleep_until(&self, deadline: tokio::time::Instant) -> crate::sleep::Sleep {
        match &self.0 {
            Some(wheel) => wheel.sleep_until(deadline),
            None => crate::sleep::sleep_until(deadline),
        }
    }

    /// `future` with a timeout of `duration`; panics as
    /// [`timeout`](fn@crate::timeout) and [`Wheel::timeout`] do.
    #[cfg(feature = "tower")]
    #[track_caller]
    pub(crate) fn timeout<F: std::future::IntoFuture>(
        &self,
        duration: Duration,
        future: F,
    ) -> crate::timeout::Timeout<F::IntoFuture> {
        match &self.0 {
            Some(wheel) => wheel.timeout(duration, future),
            None => crate::timeout::timeout(duration, future),
        }
    }
}

impl fmt::Debug for WheelOrDefault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(wheel) => wheel.fmt(f),
            None => f.write_str("the current runtime's default wheel"),
        }
    }
}
