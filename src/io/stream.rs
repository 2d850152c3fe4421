//! [`TimeoutStream`]: read, write and idle timeouts on a stream.

use pin_project_lite::pin_project;

use crate::io::state::Timeouts;

/// The index of the read countdown.
const READ: usize = 0;
/// The index of the write countdown.
const WRITE: usize = 1;

pin_project! {
    /// A stream whose reads and writes fail with
    /// [`TimedOut`](std::io::ErrorKind::TimedOut) when they stay pending too
    /// long, or when the stream has been idle too long:
    /// tokio-io-timeout's `TimeoutStream` on a hashwheel wheel, with an idle
    /// timeout.
    ///
    /// There is no timeout until one is set. Reads and writes (with flushes
    /// and shutdowns) have a countdown each, as a
    /// [`TimeoutReader`](super::TimeoutReader) and a
    /// [`TimeoutWriter`](super::TimeoutWriter) do: it starts when an
    /// operation returns `Pending`, an operation of its direction that
    /// completes ends it, and an operation still pending when it runs out
    /// returns an error of kind `TimedOut`. A countdown ends at the
    /// millisecond tokio-io-timeout's would, never before.
    ///
    /// The [idle timeout](TimeoutStream::set_idle_timeout) is what a server
    /// reaps connections by: once no read and no write has completed
    /// successfully for that long (since the last one, or since the idle
    /// timeout was set), the read or write that is waiting returns
    /// `TimedOut`, never earlier. A success that was ready at once, with
    /// nothing waiting, counts from the stream's next wait instead of its
    /// own instant (see
    /// [`set_idle_timeout`](TimeoutStream::set_idle_timeout)). A read and a
    /// write that wait at once each look at the earlier of their own
    /// countdown and the idle deadline: the first to come ends the
    /// operation. When the idle timeout fires, the idle time counts again
    /// from there, as after a successful operation.
    ///
    /// `poll_fill_buf` reads, and is timed as a read; seeks pass straight
    /// through.
    ///
    /// Its timeouts take part in tokio's
    /// [cooperative scheduling](tokio::task::coop) as tokio-io-timeout's
    /// do: an operation that times out spends a unit of the task's budget.
    ///
    /// It is [`Unpin`], `Send` and `Sync` when `S` is, and allocates nothing
    /// until a timeout is set. See the [module docs](crate::io) for its
    /// timers and what it does once its wheel has shut down, and the crate's
    /// BENCHMARKS.md for what it costs.
    ///
    /// # Examples
    ///
    /// A server's connection task, reaped after 30 s without a message, and
    /// whose writes may wait 5 s for a slow reader:
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    /// use hashwheel::io::TimeoutStream;
    /// use tokio::io::{AsyncReadExt, AsyncWriteExt};
    ///
    /// let (mut client, socket) = tokio::io::duplex(1024);
    /// let mut conn = TimeoutStream::new(socket);
    /// conn.set_idle_timeout(Some(Duration::from_secs(30)));
    /// conn.set_write_timeout(Some(Duration::from_secs(5)));
    ///
    /// client.write_all(b"ping").await.unwrap();
    /// let mut buf = [0; 64];
    /// loop {
    ///     match conn.read(&mut buf).await {
    ///         Ok(0) => break, // the client hung up
    ///         Ok(n) => conn.write_all(&buf[..n]).await.unwrap(),
    ///         Err(e) if e.kind() == std::io::ErrorKind::TimedOut => break, // idle: reap
    ///         Err(e) => panic!("{e}"),
    ///     }
    /// }
    /// # }
    /// ```
    #[derive(Debug)]
    pub struct TimeoutStream<S> {
        #[pin]
        inner: S,
        timeouts: Timeouts<2>,
    }
}

wrapper!(TimeoutStream<S>, "stream");

timeout! { TimeoutStream<S>, dir READ, "read", read_timeout, set_read_timeout, set_read_timeout_pinned }
timeout! { TimeoutStream<S>, dir WRITE, "write", write_timeout, set_write_timeout, set_write_timeout_pinned }
timeout! { TimeoutStream<S>, idle, idle_timeout, set_idle_timeout, set_idle_timeout_pinned }

reads!(TimeoutStream<S>, Some(READ));
writes!(TimeoutStream<S>, Some(WRITE));
