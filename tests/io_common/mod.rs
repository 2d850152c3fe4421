//! What the `io_*` tests share: hashwheel's wrappers and tokio-io-timeout's
//! behind one trait, so that a scenario runs on both and their outcomes are
//! compared; and small streams and pollers.
#![allow(dead_code)]

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, DuplexStream, ReadBuf};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// A stream wrapper with read and write timeouts: hashwheel's
/// [`Ours`] or tokio-io-timeout's [`Theirs`].
pub trait Imp {
    type Stream<S: AsyncRead + AsyncWrite + Unpin>: AsyncRead + AsyncWrite + Unpin;
    fn wrap<S: AsyncRead + AsyncWrite + Unpin>(s: S) -> Self::Stream<S>;
    fn set_read<S: AsyncRead + AsyncWrite + Unpin>(w: &mut Self::Stream<S>, t: Option<Duration>);
    fn set_write<S: AsyncRead + AsyncWrite + Unpin>(w: &mut Self::Stream<S>, t: Option<Duration>);
}

/// `hashwheel::io::TimeoutStream::new`: the runtime's default wheel.
pub struct Ours;
/// `tokio_io_timeout::TimeoutStream`, pinned in a box (it is `!Unpin`);
/// its timeouts set through the `_pinned` setters.
pub struct Theirs;

impl Imp for Ours {
    type Stream<S: AsyncRead + AsyncWrite + Unpin> = hashwheel::io::TimeoutStream<S>;
    fn wrap<S: AsyncRead + AsyncWrite + Unpin>(s: S) -> Self::Stream<S> {
        hashwheel::io::TimeoutStream::new(s)
    }
    fn set_read<S: AsyncRead + AsyncWrite + Unpin>(w: &mut Self::Stream<S>, t: Option<Duration>) {
        w.set_read_timeout(t);
    }
    fn set_write<S: AsyncRead + AsyncWrite + Unpin>(w: &mut Self::Stream<S>, t: Option<Duration>) {
        w.set_write_timeout(t);
    }
}

impl Imp for Theirs {
    type Stream<S: AsyncRead + AsyncWrite + Unpin> = Pin<Box<tokio_io_timeout::TimeoutStream<S>>>;
    fn wrap<S: AsyncRead + AsyncWrite + Unpin>(s: S) -> Self::Stream<S> {
        Box::pin(tokio_io_timeout::TimeoutStream::new(s))
    }
    fn set_read<S: AsyncRead + AsyncWrite + Unpin>(w: &mut Self::Stream<S>, t: Option<Duration>) {
        w.as_mut().set_read_timeout_pinned(t);
    }
    fn set_write<S: AsyncRead + AsyncWrite + Unpin>(w: &mut Self::Stream<S>, t: Option<Duration>) {
        w.as_mut().set_write_timeout_pinned(t);
    }
}

/// How an operation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok(usize),
    Err(io::ErrorKind),
    Pending,
}

impl<T: Into<usize>> From<io::Result<T>> for Outcome {
    fn from(r: io::Result<T>) -> Outcome {
        match r {
            Ok(n) => Outcome::Ok(n.into()),
            Err(e) => Outcome::Err(e.kind()),
        }
    }
}

pub const TIMED_OUT: Outcome = Outcome::Err(io::ErrorKind::TimedOut);

/// The paused clock's time since a start, to read event times by.
#[derive(Debug, Clone, Copy)]
pub struct Clock(Instant);

impl Clock {
    pub fn start() -> Clock {
        Clock(Instant::now())
    }

    /// The instant `n` ms after the start.
    pub fn at(&self, n: u64) -> Instant {
        self.0 + ms(n)
    }

    /// Elapsed time in microseconds.
    pub fn us(&self) -> u64 {
        self.0.elapsed().as_micros() as u64
    }

    /// Elapsed time in milliseconds, exact: a fraction panics.
    pub fn ms(&self) -> u64 {
        let e = self.0.elapsed();
        assert_eq!(e.subsec_nanos() % 1_000_000, 0, "{e:?} is not whole ms");
        e.as_millis() as u64
    }
}

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Advances the paused clock by `d`; the timers due are woken when it
/// returns (tokio's and the wheel's).
pub async fn advance(d: Duration) {
    tokio::time::advance(d).await;
}

/// A peer that sends one byte at each of `times` (ms after `clock`'s
/// start), then keeps the pipe open until aborted.
pub fn send_at(clock: Clock, mut peer: DuplexStream, times: &'static [u64]) -> JoinHandle<()> {
    tokio::spawn(async move {
        for &at in times {
            tokio::time::sleep_until(clock.at(at)).await;
            peer.write_all(b"x").await.unwrap();
        }
        std::future::pending::<()>().await;
    })
}

/// `n` reads of `io`, each with when it ended (ms after `clock`'s start).
pub async fn read_n<T: AsyncRead + Unpin>(
    io: &mut T,
    n: usize,
    clock: &Clock,
) -> Vec<(u64, Outcome)> {
    let mut seen = Vec::new();
    for _ in 0..n {
        let r = io.read(&mut [0; 16]).await;
        seen.push((clock.ms(), r.into()));
    }
    seen
}

/// Polls one read of up to 16 bytes with a waker that does nothing.
pub fn poll_read<T: AsyncRead + Unpin>(io: &mut T) -> Outcome {
    let mut bytes = [0u8; 16];
    let mut buf = ReadBuf::new(&mut bytes);
    let mut cx = Context::from_waker(Waker::noop());
    match Pin::new(io).poll_read(&mut cx, &mut buf) {
        Poll::Ready(r) => r.map(|()| buf.filled().len()).into(),
        Poll::Pending => Outcome::Pending,
    }
}

/// Polls one write of `bytes` with a waker that does nothing.
pub fn poll_write<T: AsyncWrite + Unpin>(io: &mut T, bytes: &[u8]) -> Outcome {
    let mut cx = Context::from_waker(Waker::noop());
    match Pin::new(io).poll_write(&mut cx, bytes) {
        Poll::Ready(r) => r.into(),
        Poll::Pending => Outcome::Pending,
    }
}

/// A stream whose reads and writes wait forever (it keeps no waker: nothing
/// would wake it), needing no runtime.
#[derive(Debug, Default)]
pub struct Never;

impl AsyncRead for Never {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        _: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Poll::Pending
    }
}

impl AsyncWrite for Never {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, _: &[u8]) -> Poll<io::Result<usize>> {
        Poll::Pending
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Pending
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Pending
    }
}
