//! The load generator: keep-alive connections to the server over
//! loopback, of three kinds.
//!
//! - chatty: requests back to back until the run ends; must never be closed;
//! - idle: one request, then silence; must be reaped by the server's
//!   header-read timeout, not before it;
//! - slow: `GET /slow` back to back; every one must come back 408 after the
//!   request timeout, on a connection that stays open.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper::client::conn::http1::{handshake, SendRequest};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Chatty,
    Idle,
    Slow,
}

/// How many connections of each kind.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub chatty: usize,
    pub idle: usize,
    pub slow: usize,
}

impl Plan {
    /// `conns` split 85% chatty, 10% idle, 5% slow (at least one each).
    pub fn split(conns: usize) -> Plan {
        let idle = (conns / 10).max(1);
        let slow = (conns / 20).max(1);
        Plan {
            chatty: conns.saturating_sub(idle + slow).max(1),
            idle,
            slow,
        }
    }

    pub fn total(&self) -> usize {
        self.chatty + self.idle + self.slow
    }
}

/// What the clients saw.
#[derive(Debug, Default)]
pub struct Stats {
    pub open: AtomicU64,
    /// Responses received, of any kind.
    pub responses: AtomicU64,
    pub chatty_ok: AtomicU64,
    /// Chatty connections that failed or were closed by the server.
    pub chatty_closed: AtomicU64,
    pub slow_408: AtomicU64,
    /// Slow requests that did not come back 408, or came back early.
    pub slow_wrong: AtomicU64,
    pub idle_reaped: AtomicU64,
    /// Idle connections closed before the header-read timeout.
    pub idle_early: AtomicU64,
    /// Idle connections still open when the generator gave up on them.
    pub idle_not_reaped: AtomicU64,
    /// Connects, handshakes or requests that failed otherwise.
    pub errors: AtomicU64,
    pub first_error: Mutex<Option<String>>,
}

impl Stats {
    pub fn error(&self, what: &str, e: impl std::fmt::Display) {
        self.errors.fetch_add(1, Relaxed);
        self.note(what, e);
    }

    fn note(&self, what: &str, e: impl std::fmt::Display) {
        let mut first = self.first_error.lock().unwrap();
        first.get_or_insert_with(|| format!("{what}: {e}"));
    }
}

/// Timing the clients need to know.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub header_timeout: Duration,
    pub request_timeout: Duration,
    /// Idle connections not reaped by then count as not reaped.
    pub give_up: Instant,
}

/// The running clients.
pub struct Load {
    tasks: JoinSet<Vec<u32>>,
}

impl Load {
    /// Starts every client; they connect at most 256 at a time.
    pub fn start(
        addr: SocketAddr,
        plan: Plan,
        timing: Timing,
        stats: Arc<Stats>,
        stop: Arc<AtomicBool>,
    ) -> Load {
        let connecting = Arc::new(Semaphore::new(256));
        let mut tasks = JoinSet::new();
        let kinds = [
            (Kind::Idle, plan.idle),
            (Kind::Slow, plan.slow),
            (Kind::Chatty, plan.chatty),
        ];
        for (kind, n) in kinds {
            for _ in 0..n {
                let (stats, stop, connecting) = (stats.clone(), stop.clone(), connecting.clone());
                tasks.spawn(async move {
                    let permit = connecting.acquire_owned().await.unwrap();
                    let Some((send, conn)) = connect(addr, &stats).await else {
                        return Vec::new();
                    };
                    drop(permit);
                    stats.open.fetch_add(1, Relaxed);
                    let latencies = client(kind, send, conn, timing, &stats, &stop).await;
                    stats.open.fetch_sub(1, Relaxed);
                    latencies
                });
            }
        }
        Load { tasks }
    }

    /// Waits for every client; the chatty requests' latencies in µs.
    pub async fn finish(mut self) -> Vec<u32> {
        let mut all = Vec::new();
        while let Some(done) = self.tasks.join_next().await {
            all.extend(done.expect("a client task panicked"));
        }
        all
    }
}

pub type Conn = JoinHandle<Result<(), hyper::Error>>;

pub async fn connect(addr: SocketAddr, stats: &Stats) -> Option<(SendRequest<Empty<Bytes>>, Conn)> {
    let stream = match TcpStream::connect(addr).await {
        Ok(s) => s,
        Err(e) => {
            stats.error("connect", e);
            return None;
        }
    };
    let _ = stream.set_nodelay(true);
    match handshake(TokioIo::new(stream)).await {
        Ok((send, conn)) => Some((send, tokio::spawn(conn))),
        Err(e) => {
            stats.error("handshake", e);
            None
        }
    }
}

/// One request; its status, or the error.
pub async fn get(
    send: &mut SendRequest<Empty<Bytes>>,
    path: &str,
) -> Result<StatusCode, hyper::Error> {
    send.ready().await?;
    let req = Request::get(path)
        .header("host", "127.0.0.1")
        .body(Empty::new())
        .expect("a valid request");
    let res = send.send_request(req).await?;
    let status = res.status();
    res.into_body().collect().await?;
    Ok(status)
}

async fn client(
    kind: Kind,
    mut send: SendRequest<Empty<Bytes>>,
    conn: Conn,
    timing: Timing,
    stats: &Stats,
    stop: &AtomicBool,
) -> Vec<u32> {
    let mut latencies = Vec::new();
    match kind {
        Kind::Chatty => {
            while !stop.load(Relaxed) {
                let start = Instant::now();
                match get(&mut send, "/").await {
                    Ok(StatusCode::OK) => {
                        latencies.push(start.elapsed().as_micros().min(u32::MAX as u128) as u32);
                        stats.responses.fetch_add(1, Relaxed);
                        stats.chatty_ok.fetch_add(1, Relaxed);
                    }
                    Ok(status) => {
                        stats.responses.fetch_add(1, Relaxed);
                        stats.error("chatty request", status);
                    }
                    Err(e) => {
                        stats.chatty_closed.fetch_add(1, Relaxed);
                        stats.note("chatty connection closed", e);
                        break;
                    }
                }
            }
        }
        Kind::Slow => {
            while !stop.load(Relaxed) {
                let start = Instant::now();
                match get(&mut send, "/slow").await {
                    Ok(status) => {
                        stats.responses.fetch_add(1, Relaxed);
                        let waited = start.elapsed();
                        if status == StatusCode::REQUEST_TIMEOUT && waited >= timing.request_timeout
                        {
                            stats.slow_408.fetch_add(1, Relaxed);
                        } else {
                            stats.slow_wrong.fetch_add(1, Relaxed);
                            stats.note("slow request", format!("{status} after {waited:?}"));
                        }
                    }
                    Err(e) => {
                        stats.error("slow request", e);
                        break;
                    }
                }
            }
        }
        Kind::Idle => {
            // The server arms its header-read timer after its response,
            // so after this instant: a close sooner than the timeout from
            // here is early, with no margin needed.
            let idle_from = Instant::now();
            match get(&mut send, "/").await {
                Ok(StatusCode::OK) => {
                    stats.responses.fetch_add(1, Relaxed);
                }
                Ok(status) => stats.error("idle connection's request", status),
                Err(e) => stats.error("idle connection's request", e),
            }
            // Now silent: the server must close the connection.
            match tokio::time::timeout_at(timing.give_up, conn).await {
                Ok(_) if idle_from.elapsed() < timing.header_timeout => {
                    stats.idle_early.fetch_add(1, Relaxed);
                    stats.note(
                        "idle connection",
                        format!("closed after {:?}", idle_from.elapsed()),
                    );
                }
                Ok(_) => {
                    stats.idle_reaped.fetch_add(1, Relaxed);
                }
                Err(_) => {
                    stats.idle_not_reaped.fetch_add(1, Relaxed);
                }
            }
            return latencies;
        }
    }
    // Close our side; the connection task ends cleanly.
    drop(send);
    let _ = conn.await;
    latencies
}
