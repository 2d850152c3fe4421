// The summary line of these docs is the doc comment on `pub mod io` in
// `lib.rs`.

//! [`TimeoutReader`], [`TimeoutWriter`] and [`TimeoutStream`] wrap an
//! [`AsyncRead`](tokio::io::AsyncRead), an
//! [`AsyncWrite`](tokio::io::AsyncWrite) or both, and turn an operation
//! that stays pending too long into an error of kind
//! [`io::ErrorKind::TimedOut`](std::io::ErrorKind::TimedOut). They have
//! tokio-io-timeout 1.2's methods and meaning, so switching is the `use`
//! line:
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
//! # Cost
//!
//! - A wrapper with no timeout set holds one null pointer beside the
//!   stream, allocates nothing, and adds a branch to each operation.
//! - Setting a timeout allocates one box, the size of a
//!   [`Sleep`](crate::Sleep), an instant and one word: all that a wrapper
//!   with one timeout (a stream's idle, read or write timeout, a reader's
//!   or a writer's) needs. A second timeout, the sleep of a stream's writes
//!   under its idle timeout, a wheel given to `with_wheel`, and a timeout
//!   over 9 years go in a second box, made when first needed. The sleep is
//!   made when an operation first waits, and reused.
//! - An operation that completes ends its direction's countdown with a
//!   store; it neither cancels nor moves the sleep. With an idle timeout,
//!   a successful one that was ready at once, with nothing else waiting,
//!   records the activity in the same store, and the stream's next wait
//!   reads the clock for it; one that waited, or that completes while
//!   another operation waits (a stream split between two tasks), reads the
//!   clock then, so that the waiting operation's deadline moves with it.
//!   Either way the idle time counts from an instant no earlier than the
//!   operation's: never early. (No cheaper clock bounds that instant from
//!   above: a coarse system clock trails the precise one by more than its
//!   resolution, and only tokio's clock follows a paused test.)
//! - An operation that waits starts a countdown: a clock read when its
//!   direction has a timeout of its own (the idle deadline needs none).
//!   The sleep is moved only to an earlier deadline, O(1) (see
//!   [`Sleep::reset`](crate::Sleep::reset)); a sleep due sooner than the new
//!   deadline stays where it is.
//! - A sleep due before the deadline it stands for (left behind by an
//!   operation that completed, or by a countdown that started since) wakes
//!   its task once at its old deadline; the poll that follows finds
//!   nothing due and, if an operation waits, moves the sleep on. A
//!   connection that waits once per message thus costs one move of its
//!   sleep and one wake-up per countdown period, however many messages.
//!
//! tokio-io-timeout wraps a tokio `Sleep` per direction (made with the
//! wrapper, which must be pinned). An operation that completes after
//! waiting moves that sleep to the present, through tokio's timer, and
//! the task is woken once more: at once when the clock is on one of
//! tokio's millisecond ticks; otherwise at the next tick, unless the task
//! waits on the stream again first. (The benchmark member's `io` tests
//! count these wake-ups for both crates, on tokio's paused clock.)
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
//!   at its [`max_pending`](crate::Builder::max_pending) bound. Transient.
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
