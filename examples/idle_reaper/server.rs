//! An echo server that closes idle connections through a hashwheel
//! `Wheel`, in the three ways a tokio server does it:
//!
//! - [`serve_with_sleep`]: each connection owns a `Sleep` and resets it on
//!   every read, inside `select!` (no `tokio::pin!`: the sleep is `Unpin`).
//! - [`Reaper`]: one task owns a `DelayQueue` of connection ids; connections
//!   report activity to it, and it tells those that expire to close. Each
//!   report moves a connection's deadline later, which writes its queue
//!   entry only: the entry moves to its new tick when its old one comes.
//! - [`serve_with_idle_timeout`]: the socket wrapped in a
//!   `hashwheel::io::TimeoutStream` with an idle timeout; a read that finds
//!   the connection idle returns `TimedOut`. No timer in sight: the
//!   wrapper keeps one, and moves it only when a read waits.
//!
//! Generic over the stream, so the same code serves TCP in the example and
//! in-memory pipes in the tests.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::ErrorKind;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt;
use hashwheel::io::TimeoutStream;
use hashwheel::Wheel;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// Live counters of a server.
#[derive(Debug, Default)]
pub struct Stats {
    pub open: AtomicUsize,
    pub bytes: AtomicU64,
    pub reaped: AtomicUsize,
}

/// How a connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The server closed it for being idle.
    Reaped,
    /// The client went away.
    ClientClosed,
}

/// Counts a connection as open for as long as it lives.
struct Open<'a>(&'a Stats);

impl<'a> Open<'a> {
    fn new(stats: &'a Stats) -> Self {
        stats.open.fetch_add(1, Ordering::Relaxed);
        Open(stats)
    }
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Echoes one read; `None` when the client has gone.
async fn echo_once<S>(
    stream: &mut S,
    read: std::io::Result<usize>,
    buf: &[u8],
    stats: &Stats,
) -> Option<()>
where
    S: AsyncWrite + Unpin,
{
    match read {
        Ok(0) | Err(_) => None,
        Ok(n) => {
            stream.write_all(&buf[..n]).await.ok()?;
            stats.bytes.fetch_add(n as u64, Ordering::Relaxed);
            Some(())
        }
    }
}

/// Pattern 1: a per-connection `Sleep`, reset on every read.
pub async fn serve_with_sleep<S>(
    wheel: &Wheel,
    mut stream: S,
    idle: Duration,
    stats: &Stats,
) -> Outcome
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let _open = Open::new(stats);
    let mut buf = [0u8; 1024];
    let mut deadline = wheel.sleep(idle);
    loop {
        tokio::select! {
            read = stream.read(&mut buf) => {
                if echo_once(&mut stream, read, &buf, stats).await.is_none() {
                    return Outcome::ClientClosed;
                }
                // The per-read hot path: moving the deadline later records
                // the new tick, with no lock (but for the first move, which
                // shares the entry's due word with the sleep), and the next poll of
                // `deadline`, with the same waker, takes no lock either.
                deadline.reset(Instant::now() + idle);
            }
            _ = &mut deadline => {
                stats.reaped.fetch_add(1, Ordering::Relaxed);
                return Outcome::Reaped;
            }
        }
    }
}

/// Pattern 3: the stream wrapped in a `TimeoutStream` whose idle timeout
/// fails the read (or the echo's write) that finds the connection idle.
pub async fn serve_with_idle_timeout<S>(
    wheel: &Wheel,
    stream: S,
    idle: Duration,
    stats: &Stats,
) -> Outcome
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let _open = Open::new(stats);
    let mut stream = TimeoutStream::with_wheel(wheel, stream);
    stream.set_idle_timeout(Some(idle));
    let mut buf = [0u8; 1024];
    loop {
        match stream.read(&mut buf).await {
            Err(e) if e.kind() == ErrorKind::TimedOut => {
                stats.reaped.fetch_add(1, Ordering::Relaxed);
                return Outcome::Reaped;
            }
            read => {
                if echo_once(&mut stream, read, &buf, stats).await.is_none() {
                    return Outcome::ClientClosed;
                }
            }
        }
    }
}

enum Event {
    Open(u64, oneshot::Sender<()>),
    Active(u64),
    Closed(u64),
}

/// Pattern 2: a central reaper task that owns a `DelayQueue`.
#[derive(Debug, Clone)]
pub struct Reaper {
    tx: mpsc::UnboundedSender<Event>,
    next_id: std::sync::Arc<AtomicU64>,
}

impl Reaper {
    /// Spawns the reaper task; it ends when every `Reaper` clone is dropped.
    pub fn spawn(wheel: &Wheel, idle: Duration) -> Reaper {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut queue = wheel.delay_queue::<u64>();
        tokio::spawn(async move {
            let mut conns = HashMap::new();
            loop {
                tokio::select! {
                    event = rx.recv() => match event {
                        None => break,
                        Some(Event::Open(id, close)) => {
                            let key = queue.insert(id, idle);
                            conns.insert(id, (key, close));
                        }
                        Some(Event::Active(id)) => {
                            if let Some((key, _)) = conns.get(&id) {
                                queue.reset(key, idle);
                            }
                        }
                        Some(Event::Closed(id)) => {
                            if let Some((key, _)) = conns.remove(&id) {
                                queue.remove(&key);
                            }
                        }
                    },
                    Some(expired) = queue.next() => {
                        if let Some((_, close)) = conns.remove(expired.get_ref()) {
                            let _ = close.send(());
                        }
                    }
                }
            }
        });
        Reaper {
            tx,
            next_id: Default::default(),
        }
    }

    /// Serves one connection under the reaper's watch.
    pub async fn serve<S>(&self, mut stream: S, stats: &Stats) -> Outcome
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        let _open = Open::new(stats);
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (close_tx, mut close) = oneshot::channel();
        let _ = self.tx.send(Event::Open(id, close_tx));
        let mut buf = [0u8; 1024];
        loop {
            tokio::select! {
                read = stream.read(&mut buf) => {
                    if echo_once(&mut stream, read, &buf, stats).await.is_none() {
                        let _ = self.tx.send(Event::Closed(id));
                        return Outcome::ClientClosed;
                    }
                    let _ = self.tx.send(Event::Active(id));
                }
                _ = &mut close => {
                    stats.reaped.fetch_add(1, Ordering::Relaxed);
                    return Outcome::Reaped;
                }
            }
        }
    }
}

/// What a client does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Sends a line every `idle / 4` for the whole run, then hangs up.
    Chatty,
    /// Connects and never sends.
    Silent,
    /// Chatty for half the run, then silent.
    HalfWay,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Chatty, Kind::Silent, Kind::HalfWay];

    /// Whether a correct server reaps this client.
    pub fn should_be_reaped(self) -> bool {
        self != Kind::Chatty
    }
}

/// Plays one client of `kind` for `run` against a server that reaps after
/// `idle`; returns whether the server closed the connection on it.
pub async fn client<S>(mut stream: S, kind: Kind, run: Duration, idle: Duration) -> bool
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let start = Instant::now();
    let talk_for = match kind {
        Kind::Chatty => run,
        Kind::Silent => Duration::ZERO,
        Kind::HalfWay => run / 2,
    };
    let mut buf = [0u8; 64];
    while start.elapsed() < talk_for {
        if stream.write_all(b"ping\n").await.is_err() {
            return true;
        }
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return true,
            Ok(_) => {}
        }
        tokio::time::sleep(idle / 4).await;
    }
    if kind == Kind::Chatty {
        return false; // hangs up itself
    }
    // Silent now: wait for the server to close, at most two idle periods
    // past the end of the run.
    let wait = (start + run + idle * 2).saturating_duration_since(Instant::now());
    matches!(
        tokio::time::timeout(wait, stream.read(&mut buf)).await,
        Ok(Ok(0) | Err(_))
    )
}
