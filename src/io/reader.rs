//! [`TimeoutReader`]: a read timeout on any `AsyncRead`.

use pin_project_lite::pin_project;

use crate::io::state::Timeouts;

pin_project! {
    /// An [`AsyncRead`](tokio::io::AsyncRead) whose reads fail with
    /// [`TimedOut`](std::io::ErrorKind::TimedOut) when they stay pending too
    /// long: tokio-io-timeout's `TimeoutReader`, on a hashwheel wheel.
    ///
    /// There is no timeout until [`set_timeout`](TimeoutReader::set_timeout)
    /// sets one. Then a countdown starts when a read returns `Pending`; a
    /// read that completes (with data, end of file or an error) ends it, and
    /// a read still pending when it runs out returns an error of kind
    /// `TimedOut` instead. The next read that waits starts a new countdown.
    /// A countdown ends at the millisecond tokio-io-timeout's would, never
    /// before.
    ///
    /// [`poll_fill_buf`](tokio::io::AsyncBufRead::poll_fill_buf) reads, and
    /// is timed alike. Writes ([`AsyncWrite`](tokio::io::AsyncWrite)) and
    /// seeks ([`AsyncSeek`](tokio::io::AsyncSeek)) pass straight through.
    ///
    /// Its timeout takes part in tokio's
    /// [cooperative scheduling](tokio::task::coop) as tokio-io-timeout's
    /// does: a read that times out spends a unit of the task's budget.
    ///
    /// It is [`Unpin`], `Send` and `Sync` when `R` is, and allocates nothing
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
    /// use hashwheel::io::TimeoutReader;
    /// use tokio::io::AsyncReadExt;
    ///
    /// // A peer that never sends.
    /// let (_peer, socket) = tokio::io::duplex(64);
    /// let mut reader = TimeoutReader::new(socket);
    /// reader.set_timeout(Some(Duration::from_millis(100)));
    ///
    /// let err = reader.read(&mut [0; 8]).await.unwrap_err();
    /// assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
    /// # }
    /// ```
    #[derive(Debug)]
    pub struct TimeoutReader<R> {
        #[pin]
        inner: R,
        timeouts: Timeouts<1>,
    }
}

wrapper!(TimeoutReader<R>, "reader", reads Some(0), writes None);

timeout! {
    TimeoutReader<R>, 0, "read", timeout, set_timeout, set_timeout_pinned,
    /// A read waiting with its countdown running starts its countdown
    /// again, now, with the new timeout (or none). A read that was waiting
    /// with no timeout gets its countdown from its next poll.
}
