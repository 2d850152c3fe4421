//! A held wheel or the runtime's default: what a wrapper (hyper's `Timer`,
//! tower's `Timeout`, the `io` wrappers) makes its timers on.

use std::fmt;
#[cfg(any(feature = "hyper", feature = "tower"))]
use std::time::Duration;

use tokio::time::Instant;

use crate::error::Error;
use crate::sleep::Sleep;
use crate::wheel::{try_claim_default, Wheel};

/// The wheel a wrapper makes its timers on (hyper's `Timer`, tower's
/// `Timeout`, the `io` wrappers): one it holds, or the default wheel of
/// whichever runtime makes each timer. Each timer made on the default goes
/// through the free functions' thread-local lookup, not through a
/// [`Wheel::current`] clone.
#[derive(Clone, Default)]
pub(crate) struct WheelOrDefault(pub(crate) Option<Wheel>);

impl WheelOrDefault {
    /// A place on the held wheel, or on the current runtime's default
    /// one: the error of the `try_` constructors ([`Wheel::try_sleep`],
    /// [`try_sleep`](fn@crate::try_sleep)) when there is none.
    fn claim(&self) -> Result<crate::engine::shards::ShardRef, Error> {
        self.0.as_ref().map_or_else(try_claim_default, Wheel::claim)
    }

    /// A sleep of `duration`.
    #[cfg(feature = "hyper")]
    pub(crate) fn try_sleep(&self, duration: Duration) -> Result<Sleep, Error> {
        Ok(Sleep::after(self.claim()?, duration))
    }

    /// A sleep until `deadline`.
    pub(crate) fn try_sleep_until(&self, deadline: Instant) -> Result<Sleep, Error> {
        Ok(Sleep::until(self.claim()?, deadline))
    }

    /// The future `call` makes, with a timeout of `duration`; `call` is
    /// made only once the timer has its place on the wheel, so that a
    /// refusal makes no call.
    #[cfg(feature = "tower")]
    pub(crate) fn try_timeout_of<F: std::future::Future>(
        &self,
        duration: Duration,
        call: impl FnOnce() -> F,
    ) -> Result<crate::timeout::Timeout<F>, Error> {
        let shard = self.claim()?;
        let deadline = crate::engine::clock::instant_after(duration);
        Ok(crate::timeout::Timeout::new(shard, deadline, call()))
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
