//! Read, write and idle timeouts on any tokio stream: a drop-in for
//! tokio-io-timeout, with an idle timeout to reap connections by.
//!
//! [`TimeoutReader`], [`TimeoutWriter`] and [`TimeoutStream`] wrap an
//! [`AsyncRead`](tokio::io::AsyncRead), an
//! [`AsyncWrite`](tokio::io::AsyncWrite) or both, and turn an operation
//! that stays pending too long into an error of kind
//! [`io::ErrorKind::TimedOut`](std::io::ErrorKind::TimedOut). They have
//! tokio-io-timeout 1.2's methods and meaning, so a program switches by its
//! `use` line:
//!
//! ```
//! # #![allow(unused_imports)]
//! // use tokio_io_timeout::TimeoutStream;
//! use hashwheel::io::TimeoutStream;
//! ```
//!
//! - No timeout until one is set. A countdown starts when an operation
//!   returns `Pending`; an operation of its direction that completes ends
//!   it; an operation still pending when it runs out returns `TimedOut`,
//!   and the next that waits starts a new one. Its deadline is the instant
//!   the operation first waited plus the timeout, rounded up to the
//!   wheel's tick: with the default 1 ms tick, the millisecond at which
//!   tokio's own timer (and so tokio-io-timeout) fires, never before. A
//!   zero timeout fails the operation's first poll that would wait, at
//!   once, on any tick.
//! - [`TimeoutStream::set_idle_timeout`]: once no read and no write has
//!   completed successfully for that long, the operation that waits
//!   returns `TimedOut`, never earlier. The idle time counts from the
//!   setting and from each success: from the instant it completes if it
//!   waited, or if another operation of the stream was waiting; from the
//!   stream's next wait if it was ready at once with nothing waiting (the
//!   rule tokio-io-timeout's countdowns follow: they start at the first
//!   poll that waits). This is the timeout a server reaps idle
//!   connections by, without a `Sleep` held beside the socket, reset after
//!   every read and raced in a `select!`.
//! - Every wrapper is [`Unpin`] (and `Send`, `Sync`) when what it wraps
//!   is: no `Box::pin` or `tokio::pin!` before use, and the setters that
//!   take `&mut self` work at any time.
//!
//! # Which wheel
//!
//! `new` makes a wrapper whose timer, made when an operation first waits
//! with a timeout set, goes on the default wheel of the runtime that polls
//! it (the wheel of [`hashwheel::sleep`](fn@crate::sleep)); `with_wheel`
//! gives it a [`Wheel`](crate::Wheel) of your own.
//!
//! What a wrapper costs, in memory and per operation, beside
//! tokio-io-timeout, is in the crate's BENCHMARKS.md.
//!
//! # Differences from tokio-io-timeout
//!
//! Code written for tokio-io-timeout compiles and behaves the same, but:
//!
//! - the wrappers are `Unpin` (theirs never are), and the `&mut self`
//!   setters may be called while an operation waits: they act as the
//!   `_pinned` ones do;
//! - `TimeoutStream` has an idle timeout, and every wrapper a
//!   `with_wheel` constructor;
//! - `new` needs no runtime (theirs makes a tokio `Sleep`, and panics
//!   outside one);
//! - `Duration::MAX` waits 30 years where theirs panics on an `Instant`
//!   overflow;
//! - a wheel that has shut down gives an error (see below) where tokio's
//!   timer, once its runtime is gone, panics.
//!
//! # Errors
//!
//! Besides `TimedOut` and the wrapped stream's own errors, an operation
//! that waits with a timeout set fails with an error of kind
//! [`Other`](std::io::ErrorKind::Other) when it cannot have a timer. Its
//! inner error is a [`hashwheel::error::Error`](crate::error::Error)
//! (`get_ref()` and `downcast_ref`), whose predicates say why:
//!
//! - [`is_shutdown`](crate::error::Error::is_shutdown): the wrapper's wheel
//!   has shut down ([`Wheel::shutdown`](crate::Wheel::shutdown), or its
//!   runtime is gone). Permanent for a wrapper made `with_wheel`; one on
//!   the default wheel moves to the runtime's new default wheel, if the
//!   runtime is alive.
//! - [`is_at_capacity`](crate::error::Error::is_at_capacity): the wheel is
//!   at its [`max_timers`](crate::Builder::max_timers) bound. Transient.
//! - [`is_no_runtime`](crate::error::Error::is_no_runtime): a wrapper on
//!   the default wheel is polled outside a tokio runtime.
//! - [`is_no_timer`](crate::error::Error::is_no_timer): a wrapper on the
//!   default wheel is polled in a runtime built without its timer.
//!   Permanent for that runtime.
//!
//! An operation that does not wait goes on working: the error is never
//! early, and never a hang or a panic.
//!
//! # Examples
//!
//! A server's accept loop, reaping connections idle for 60 s:
//!
//! ```no_run
//! use std::time::Duration;
//! use hashwheel::io::TimeoutStream;
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//!
//! # #[allow(dead_code)]
//! # async fn serve() -> std::io::Result<()> {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! loop {
//!     let (socket, _) = listener.accept().await?;
//!     let mut conn = TimeoutStream::new(socket);
//!     conn.set_idle_timeout(Some(Duration::from_secs(60)));
//!     tokio::spawn(async move {
//!         let mut buf = [0; 1024];
//!         // An idle connection's read returns `TimedOut`: the loop ends
//!         // and the socket is closed.
//!         while let Ok(n @ 1..) = conn.read(&mut buf).await {
//!             if conn.write_all(&buf[..n]).await.is_err() {
//!                 break;
//!             }
//!         }
//!     });
//! }
//! # }
//! ```
//!
//! [`TimeoutReader`]: crate::io::TimeoutReader
//! [`TimeoutWriter`]: crate::io::TimeoutWriter
//! [`TimeoutStream`]: crate::io::TimeoutStream
//! [`TimeoutStream::set_idle_timeout`]: crate::io::TimeoutStream::set_idle_timeout

#[macro_use]
mod wrapper;

mod reader;
mod state;
mod stream;
mod writer;

pub use reader::TimeoutReader;
pub use stream::TimeoutStream;
pub use writer::TimeoutWriter;
