//! [`TimeoutStream`]: read, write and idle timeouts on a stream.

use pin_project_lite::pin_project;

use crate::io::state::{Timeouts, IDLE};

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
    /// of its own for one timeout. See the [module docs](crate::io) for its
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

// Reads are direction 0, writes direction 1.
wrapper!(TimeoutStream<S>, "stream", reads Some(0), writes Some(1));

timeout! {
    TimeoutStream<S>, 0, "read", read_timeout, set_read_timeout, set_read_timeout_pinned,
    /// A read waiting with its countdown running starts its countdown
    /// again, now, with the new timeout (or none). A read that was waiting
    /// with no timeout gets its countdown from its next poll.
}
timeout! {
    TimeoutStream<S>, 1, "write", write_timeout, set_write_timeout, set_write_timeout_pinned,
    /// A write waiting with its countdown running starts its countdown
    /// again, now, with the new timeout (or none). A write that was waiting
    /// with no timeout gets its countdown from its next poll.
}
timeout! {
    TimeoutStream<S>, IDLE, "idle", idle_timeout, set_idle_timeout, set_idle_timeout_pinned,
    /// The idle time counts from now, and again from each read or write
    /// that completes successfully: from the instant it completes if it
    /// waited, or if another read or write of the stream was waiting
    /// meanwhile; otherwise (it was ready at once, and nothing waited) from
    /// the stream's next wait, so that a task's work between a ready read
    /// and its next wait is not idle time, as tokio-io-timeout's countdowns
    /// start at the first poll that waits. The read or write that waits
    /// returns `TimedOut` once `timeout` of idle time has passed: never
    /// less than `timeout` after the last success. A read or write waiting
    /// with a countdown running moves its deadline to match; one that was
    /// waiting with no timeout at all gets the idle deadline from its next
    /// poll.
}
