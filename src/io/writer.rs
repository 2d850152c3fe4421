//! [`TimeoutWriter`]: a write timeout on any `AsyncWrite`.

use pin_project_lite::pin_project;

use crate::io::state::Timeouts;

pin_project! {
    /// An [`AsyncWrite`](tokio::io::AsyncWrite) whose writes fail with
    /// [`TimedOut`](std::io::ErrorKind::TimedOut) when they stay pending too
    /// long: tokio-io-timeout's `TimeoutWriter`, on a hashwheel wheel.
    ///
    /// There is no timeout until [`set_timeout`](TimeoutWriter::set_timeout)
    /// sets one. Then a countdown starts when a write, a flush or a shutdown
    /// returns `Pending` (the peer is not reading); one that completes ends
    /// it, and one still pending when it runs out returns an error of kind
    /// `TimedOut` instead. The next that waits starts a new countdown. A
    /// countdown ends at the millisecond tokio-io-timeout's would, never
    /// before.
    ///
    /// Reads ([`AsyncRead`](tokio::io::AsyncRead),
    /// [`AsyncBufRead`](tokio::io::AsyncBufRead)) and seeks
    /// ([`AsyncSeek`](tokio::io::AsyncSeek)) pass straight through.
    ///
    /// Its timeout takes part in tokio's
    /// [cooperative scheduling](tokio::task::coop) as tokio-io-timeout's
    /// does: a write that times out spends a unit of the task's budget.
    ///
    /// It is [`Unpin`], `Send` and `Sync` when `W` is, and allocates nothing
    /// of its own for one timeout. See the [module docs](crate::io) for its
    /// timer and what it does once its wheel has shut down, and the crate's
    /// BENCHMARKS.md for what it costs.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    /// use hashwheel::io::TimeoutWriter;
    /// use tokio::io::AsyncWriteExt;
    ///
    /// // A peer that never reads: the pipe's 64 bytes fill up.
    /// let (_peer, socket) = tokio::io::duplex(64);
    /// let mut writer = TimeoutWriter::new(socket);
    /// writer.set_timeout(Some(Duration::from_millis(100)));
    ///
    /// let err = writer.write_all(&[0; 100]).await.unwrap_err();
    /// assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
    /// # }
    /// ```
    #[derive(Debug)]
    pub struct TimeoutWriter<W> {
        #[pin]
        inner: W,
        timeouts: Timeouts<1>,
    }
}

wrapper!(TimeoutWriter<W>, "writer", reads None, writes Some(0));

timeout! {
    TimeoutWriter<W>, 0, "write", timeout, set_timeout, set_timeout_pinned,
    /// A write waiting with its countdown running starts its countdown
    /// again, now, with the new timeout (or none). A write that was waiting
    /// with no timeout gets its countdown from its next poll.
}
