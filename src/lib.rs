//! A timer for tokio programs with millions of timeouts: a hashed timing
//! wheel (Varghese & Lauck 1996, the scheme behind Netty's
//! `HashedWheelTimer`) driven by one tokio task.
//!
//! Servers keep a timeout or two per connection and per request, and almost
//! none of them fire. Here starting and cancelling a timer cost O(1),
//! threads making timers at once do not wait on each other, and every
//! future is `Unpin`, `Send` and `Sync`. [`Wheel`'s implementation
//! notes](Wheel#implementation) tell how.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! use std::time::Duration;
//!
//! let wheel = hashwheel::Wheel::new();
//! wheel.sleep(Duration::from_millis(10)).await;
//!
//! let work = async { 42 };
//! assert_eq!(wheel.timeout(Duration::from_secs(1), work).await, Ok(42));
//!
//! let delay = wheel.delay(Duration::from_secs(30));
//! let handle = delay.handle();
//! handle.cancel();
//! assert!(delay.await.unwrap_err().is_cancelled());
//! # }
//! ```
//!
//! # Compared with `tokio::time`
//!
//! - The same names and meanings: [`Wheel::sleep`], [`Wheel::sleep_until`],
//!   [`Wheel::timeout`], [`Wheel::timeout_at`], [`Sleep::reset`],
//!   [`error::Elapsed`]; tests run on tokio's paused clock as they do with
//!   tokio's timer. The free functions ([`sleep`](fn@sleep),
//!   [`timeout`](fn@timeout), ...) and the re-exported [`Instant`],
//!   [`Duration`] and [`MissedTickBehavior`] make `use hashwheel as time;` a
//!   stand-in for `use tokio::time;`.
//! - Resolution is one tick (1 ms by default); a deadline rounds up to the
//!   next tick, never down.
//! - [`Sleep`] is `Unpin`: no `tokio::pin!` before `select!`.
//! - [`Delay`] and [`TimeoutHandle`] add Netty's cancellable timeout.
//! - [`Wheel::lazy_timeout`] and [`lazy_timeout`](fn@lazy_timeout) add a
//!   timeout that starts at the first poll finding its future pending (as
//!   pingora's `fast_timeout`): a future ready at once costs no clock read.
//! - When the wheel shuts down, pending timers complete instead of hanging.
//! - [`io`] wraps any stream as tokio-io-timeout does (switch by the `use`
//!   line), `Unpin`, with an idle timeout to reap connections by.
//!
//! The [`migration`] guide takes a program over from `tokio::time`,
//! tokio-util's `DelayQueue`, hyper and tower, or tokio-io-timeout.
//!
//! # Features
//!
//! All off by default:
//!
//! - `hyper`: `hashwheel::hyper::Timer`, a `hyper::rt::Timer` for hyper's
//!   connection builders (`.timer(..)`): header-read and keep-alive timers
//!   on the wheel, reset in place.
//! - `tower`: `hashwheel::tower::{Timeout, TimeoutLayer}`, tower's timeout
//!   middleware on the wheel.
//! - `test-util`: `hashwheel::{advance, pause, resume}`, tokio's clock
//!   controls (it enables tokio's `test-util`), so that a paused-clock test
//!   suite written against `tokio::time` switches with its `use` line.
//! - `metrics`: every wheel publishes its pending timers (gauge
//!   `hashwheel_timers_pending`), the timers registered, fired, cancelled
//!   and refused at `max_timers` (counters `hashwheel_timers_*_total`) and
//!   its driver's lag (histogram `hashwheel_driver_lag_seconds`) through the
//!   [`metrics`](https://docs.rs/metrics) facade, labelled `wheel` with
//!   [`Builder::name`], to whatever recorder the program installs
//!   (Prometheus, StatsD, ...). [`Wheel::metrics`] holds the same numbers
//!   without it.
//! - `tracing`: a `WARN` event (target `hashwheel`, fields `wheel`,
//!   `lag_ms`, `pending`) when the driver runs later than
//!   `Builder::stall_threshold` (100 ms) after the tick it planned to
//!   wake at, the first sign of a blocked or overloaded runtime; at most
//!   one a second per wheel. `DEBUG` events when a driver starts and
//!   stops.
#![forbid(unsafe_code)]
#![warn(
    missing_docs,
    missing_debug_implementations,
    rust_2018_idioms,
    unreachable_pub
)]
#![deny(unused_must_use)]
#![doc(test(attr(deny(warnings))))]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod builder;
mod coop;
mod delay;
pub mod delay_queue;
mod engine;
pub mod error;
#[cfg(feature = "hyper")]
#[cfg_attr(docsrs, doc(cfg(feature = "hyper")))]
pub mod hyper;
mod interval;
pub mod io;
mod lazy_timeout;
mod metrics;
mod sleep;
mod spawn;
mod timeout;
#[cfg(feature = "tower")]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub mod tower;
mod wheel;
mod wheel_or_default;

pub use builder::Builder;
pub use delay::{delay, delay_at, try_delay, try_delay_at, Delay, TimeoutHandle};
pub use delay_queue::DelayQueue;
pub use interval::{interval, interval_at, try_interval, try_interval_at, Interval};
pub use lazy_timeout::{lazy_timeout, try_lazy_timeout, LazyTimeout};
pub use metrics::Metrics;
pub use sleep::{sleep, sleep_until, try_sleep, try_sleep_until, Sleep};
pub use spawn::{spawn_after, spawn_at, try_spawn_after, try_spawn_at};
/// std's `Duration`, re-exported as `tokio::time` re-exports it.
pub use std::time::Duration;
pub use timeout::{timeout, timeout_at, try_timeout, try_timeout_at, Timeout};
/// tokio's `Instant`, which every deadline here is: re-exported, with
/// [`Duration`], so that a `use tokio::time::{sleep, Duration, Instant};`
/// line, or `use tokio::time;` (as `use hashwheel as time;`), switches
/// whole.
pub use tokio::time::Instant;
/// What an [`Interval`] does with ticks it missed: tokio's type, re-exported
/// so that `use hashwheel::MissedTickBehavior` works as tokio's does.
pub use tokio::time::MissedTickBehavior;
/// tokio's test clock controls, re-exported behind the `test-util`
/// feature (which enables tokio's): a paused-clock suite that calls
/// `time::advance` keeps those calls when `time` becomes hashwheel.
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use hashwheel as time; // was: use tokio::time;
/// use std::time::Duration;
///
/// time::pause();
/// let start = time::Instant::now();
/// let sleep = time::sleep(Duration::from_secs(60));
/// time::advance(Duration::from_secs(60)).await;
/// sleep.await; // a minute on the paused clock, at once
/// assert!(start.elapsed() >= Duration::from_secs(60));
/// time::resume();
/// # }
/// ```
#[cfg(feature = "test-util")]
#[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
pub use tokio::time::{advance, pause, resume};
pub use wheel::Wheel;

#[doc = include_str!("../docs/migration.md")]
pub mod migration {}

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
