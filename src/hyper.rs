//! hyper's pluggable timer on a wheel: [`Timer`].
//!
//! [`Timer`] implements [`hyper::rt::Timer`]. hyper
//! 1.x arms its connection timers (an HTTP/1 server's header-read timeout,
//! which also reaps idle keep-alive connections, and HTTP/2's keep-alive
//! pings) through the timer given to `.timer(..)` on its connection
//! builders, and on hyper-util's `server::conn::auto::Builder`. Hand it a
//! [`Timer`] and those timers live in a hashwheel wheel:
//!
//! ```
//! use std::time::Duration;
//!
//! let mut builder = hyper::server::conn::http1::Builder::new();
//! builder
//!     .timer(hashwheel::hyper::Timer::new()) // was: hyper_util::rt::TokioTimer::new()
//!     .header_read_timeout(Duration::from_secs(5));
//! // builder.serve_connection(io, service).await
//! ```
//!
//! Each sleep hyper asks for is a hashwheel [`Sleep`](crate::Sleep) in a
//! small box ([`Sleep`]): 32 bytes and `Unpin`, against a boxed tokio
//! `Sleep` of over 100 bytes for hyper-util's `TokioTimer`. hyper's default
//! `Timer::reset` drops the sleep and allocates a new one;
//! [`Timer::reset`](::hyper::rt::Timer::reset) here recognises its own
//! sleeps and moves their deadline in place, in O(1) with no allocation
//! and no new timer (see [`Sleep::reset`](crate::Sleep::reset)). (hyper
//! 1.x resets the timer of its HTTP/2 keep-alive pings; its HTTP/1 server
//! drops the header-read sleep once a request head has arrived and asks for
//! a new one when the connection next waits for a head.)
//!
//! Only available with the `hyper` feature.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant as StdInstant};

use tokio::time::Instant;

use crate::error::Error;
use crate::sleep::Sleep as WheelSleep;
use crate::wheel::Wheel;
use crate::wheel_or_default::WheelOrDefault;

/// A [`hyper::rt::Timer`] whose sleeps are hashwheel
/// sleeps.
///
/// [`Timer::new`] makes each sleep on the default wheel of the runtime it
/// is made on (as [`hashwheel::sleep`](fn@crate::sleep) does), the way
/// hyper-util's `TokioTimer` uses the runtime's own timer;
/// [`Timer::from`]`(wheel)` makes them on the given [`Wheel`]. Clones share
/// the same wheel.
///
/// - `sleep` and `sleep_until` box a [`Sleep`]; hyper's
///   `std::time::Instant` deadlines become [`tokio::time::Instant`]s.
/// - `reset` moves one of its own sleeps in place (no allocation, no new
///   registration) and replaces a sleep made by another timer with a new
///   one.
/// - `now` reads tokio's clock, so hyper's deadlines follow tokio's paused
///   clock in tests (`start_paused`, `tokio::time::advance`).
///
/// A sleep whose wheel has shut down, or whose runtime is gone, completes
/// as if its deadline had passed (see [`Sleep`](crate::Sleep)): hyper then
/// times the connection out instead of waiting forever.
///
/// A wheel at its [`max_timers`](crate::Builder::max_timers) bound sheds
/// load, and never panics: hyper's `Timer` has no way to return an error,
/// so the sleep it gets is already complete (hyper then times out the
/// connection it was for), and the refusal is counted in the wheel's
/// [`refused_count`](crate::Metrics::refused_count). Such a sleep is not
/// a [`Sleep`]; `reset` replaces it with a new one, which the wheel may
/// accept by then.
///
/// # Panics
///
/// A `Timer::new()` panics when hyper asks it for a sleep outside a tokio
/// runtime, or in one built without its timer, as `TokioTimer` does. hyper
/// asks from its connection futures, which run on the runtime. A `Timer`
/// built from a [`Wheel`] needs no runtime and never panics.
///
/// # Examples
///
/// An HTTP/1 server whose header-read timeout (and keep-alive idle
/// timeout) runs on the wheel:
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use hyper::server::conn::http1;
///
/// let mut builder = http1::Builder::new();
/// builder
///     .timer(hashwheel::hyper::Timer::new())
///     .header_read_timeout(Duration::from_secs(5));
/// # }
/// ```
///
/// On a wheel of its own, with a coarser tick:
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
///
/// let wheel = hashwheel::Wheel::builder()
///     .tick(Duration::from_millis(10))
///     .build()
///     .unwrap();
/// let timer = hashwheel::hyper::Timer::from(wheel.clone());
/// hyper::server::conn::http1::Builder::new().timer(timer);
/// # }
/// ```
///
/// At the wheel's bound, a sleep that is already complete:
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use hyper::rt::Timer as _;
/// use std::time::Duration;
///
/// let wheel = hashwheel::Wheel::builder().max_timers(1).build().unwrap();
/// let timer = hashwheel::hyper::Timer::from(wheel.clone());
/// let _held = timer.sleep(Duration::from_secs(5)); // the wheel is full
/// let start = tokio::time::Instant::now();
/// timer.sleep(Duration::from_secs(5)).await; // at once
/// assert_eq!(start.elapsed(), Duration::ZERO);
/// assert_eq!(wheel.metrics().refused_count(), 1);
/// # }
/// ```
#[derive(Debug, Clone, Default)]
#[cfg_attr(docsrs, doc(cfg(feature = "hyper")))]
pub struct Timer {
    wheel: WheelOrDefault,
}

/// The future a [`Timer`] hands to hyper: a hashwheel
/// [`Sleep`](crate::Sleep) that implements
/// [`hyper::rt::Sleep`].
///
/// hyper receives it as a `Pin<Box<dyn hyper::rt::Sleep>>`;
/// `downcast_mut_pin::<hashwheel::hyper::Sleep>()` gets it back (a sleep
/// shed at the wheel's bound is not one: see [`Timer`]). It is
/// [`Unpin`], `Send` and `Sync`.
///
/// # Cancel safety
///
/// Cancel safe, as [`crate::Sleep`] is.
#[must_use = "futures do nothing unless you `.await` or poll them"]
#[derive(Debug)]
#[cfg_attr(docsrs, doc(cfg(feature = "hyper")))]
pub struct Sleep {
    inner: WheelSleep,
}

// ===== impl Timer =====

impl Timer {
    /// A timer whose sleeps are made on the default wheel of the runtime
    /// each one is made on ([`Wheel::current`]).
    ///
    /// Building it looks nothing up: it can be made outside a runtime.
    ///
    /// # Examples
    ///
    /// ```
    /// use hyper::rt::Timer as _;
    /// use std::time::Duration;
    ///
    /// // No runtime needed to build it ...
    /// let timer = hashwheel::hyper::Timer::new();
    /// assert!(timer.wheel().is_none());
    ///
    /// // ... only to ask it for a sleep, as hyper does on its connections.
    /// let runtime = tokio::runtime::Builder::new_current_thread()
    ///     .enable_time()
    ///     .start_paused(true)
    ///     .build()
    ///     .unwrap();
    /// runtime.block_on(async {
    ///     let start = timer.now();
    ///     timer.sleep(Duration::from_millis(10)).await;
    ///     assert!(timer.now() >= start + Duration::from_millis(10));
    /// });
    /// ```
    pub fn new() -> Timer {
        Timer::default()
    }

    /// The wheel this timer uses, if it was built from one; `None` for
    /// [`Timer::new`], whose sleeps go to the current runtime's default
    /// wheel.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let wheel = hashwheel::Wheel::new();
    /// let timer = hashwheel::hyper::Timer::from(wheel.clone());
    /// assert_eq!(timer.wheel().unwrap().tick(), wheel.tick());
    /// assert!(hashwheel::hyper::Timer::new().wheel().is_none());
    /// # }
    /// ```
    pub fn wheel(&self) -> Option<&Wheel> {
        self.wheel.0.as_ref()
    }
}

/// The sleep hyper gets: `made`, or, when the wheel refused it at its
/// `max_timers` bound, one already complete; any other error panics as the
/// free function `what` does.
#[track_caller]
fn boxed(made: Result<WheelSleep, Error>, what: &str) -> Pin<Box<dyn ::hyper::rt::Sleep>> {
    match made {
        Ok(inner) => Box::pin(Sleep { inner }),
        Err(e) if e.is_at_capacity() => Box::pin(Shed),
        Err(e) => e.fail(what),
    }
}

/// A sleep the wheel refused at its `max_timers` bound: complete at once,
/// so that hyper times out the connection it was for.
struct Shed;

impl Future for Shed {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        Poll::Ready(())
    }
}

impl ::hyper::rt::Sleep for Shed {}

impl From<Wheel> for Timer {
    /// A timer whose sleeps are made on `wheel`.
    fn from(wheel: Wheel) -> Timer {
        let wheel = WheelOrDefault(Some(wheel));
        Timer { wheel }
    }
}

impl ::hyper::rt::Timer for Timer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn ::hyper::rt::Sleep>> {
        boxed(self.wheel.try_sleep(duration), "sleep")
    }

    fn sleep_until(&self, deadline: StdInstant) -> Pin<Box<dyn ::hyper::rt::Sleep>> {
        boxed(self.wheel.try_sleep_until(deadline.into()), "sleep_until")
    }

    fn now(&self) -> StdInstant {
        Instant::now().into_std()
    }

    fn reset(&self, sleep: &mut Pin<Box<dyn ::hyper::rt::Sleep>>, new_deadline: StdInstant) {
        match sleep.as_mut().downcast_mut_pin::<Sleep>() {
            Some(ours) => ours.get_mut().reset(Instant::from_std(new_deadline)),
            None => *sleep = ::hyper::rt::Timer::sleep_until(self, new_deadline),
        }
    }
}

// ===== impl Sleep =====

impl Sleep {
    /// The instant at which this sleep completes.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let at = tokio::time::Instant::now() + Duration::from_secs(3);
    /// let sleep = hashwheel::hyper::Sleep::from(wheel.sleep_until(at));
    /// assert_eq!(sleep.deadline(), at);
    /// # }
    /// ```
    pub fn deadline(&self) -> Instant {
        self.inner.deadline()
    }

    /// Whether this sleep's timer has fired, as
    /// [`crate::Sleep::is_elapsed`] tells: it has been polled or reset and
    /// its deadline's tick has come. A sleep never polled nor reset is not
    /// elapsed, even after its deadline.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let mut sleep = hashwheel::hyper::Sleep::from(wheel.sleep(Duration::from_millis(10)));
    /// assert!(!sleep.is_elapsed());
    /// (&mut sleep).await;
    /// assert!(sleep.is_elapsed());
    /// # }
    /// ```
    pub fn is_elapsed(&self) -> bool {
        self.inner.is_elapsed()
    }

    /// Moves the deadline in place: see [`crate::Sleep::reset`]. This is
    /// what [`Timer`]'s `reset` does with its own sleeps.
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
    /// let mut sleep = hashwheel::hyper::Sleep::from(wheel.sleep(Duration::from_millis(10)));
    /// sleep.reset(start + Duration::from_millis(30));
    /// (&mut sleep).await;
    /// assert!(start.elapsed() >= Duration::from_millis(30));
    /// # }
    /// ```
    pub fn reset(&mut self, deadline: Instant) {
        self.inner.reset(deadline);
    }

    /// The hashwheel sleep inside.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let sleep = hashwheel::hyper::Sleep::from(wheel.sleep(Duration::from_secs(1)));
    /// assert_eq!(sleep.get_ref().deadline(), sleep.deadline());
    /// # }
    /// ```
    pub fn get_ref(&self) -> &WheelSleep {
        &self.inner
    }

    /// The hashwheel sleep inside, mutably.
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
    /// let mut sleep = hashwheel::hyper::Sleep::from(wheel.sleep(Duration::from_secs(1)));
    /// let at = Instant::now() + Duration::from_secs(5);
    /// sleep.get_mut().reset(at);
    /// assert_eq!(sleep.deadline(), at);
    /// # }
    /// ```
    pub fn get_mut(&mut self) -> &mut WheelSleep {
        &mut self.inner
    }

    /// Gives back the hashwheel sleep inside.
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
    /// let sleep = hashwheel::hyper::Sleep::from(wheel.sleep(Duration::from_millis(10)));
    /// let inner: hashwheel::Sleep = sleep.into_inner();
    /// inner.await;
    /// assert!(start.elapsed() >= Duration::from_millis(10));
    /// # }
    /// ```
    pub fn into_inner(self) -> WheelSleep {
        self.inner
    }
}

impl From<WheelSleep> for Sleep {
    fn from(inner: WheelSleep) -> Sleep {
        Sleep { inner }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.get_mut().inner).poll(cx)
    }
}

impl ::hyper::rt::Sleep for Sleep {}
