//! The soak's clients: the demo's ordinary ones, reconnecting, and the
//! misbehaving ones. Each runs rounds (a connection each) until the soak
//! stops, every wait in a round bounded. The clients wait on tokio's
//! timer, not on the wheel under test.
//!
//! - chatty: `GET /` every few milliseconds on a keep-alive connection;
//! - slow: `GET /slow` back to back, each answered 408 at the request timeout;
//! - idle: one `GET /`, then silence until the server reaps the connection;
//! - slowloris: a request head trickled a byte at a time, slower than the
//!   header-read timeout allows;
//! - half-closed: shuts its writes down after part of a request head, or
//!   after a whole `GET /slow` head (whose 408 it then reads), in turn;
//! - reset: resets the connection (`SO_LINGER` 0, then close) in the
//!   middle of a request head, or while its `GET /slow` runs, in turn;
//! - never-read: asks for `GET /big` with a small receive buffer, never
//!   reads, and closes after the write timeout (plus a margin).
//!
//! Outside the stretch at the wheel's bound, a chatty, slow or idle
//! client sees nothing but its answers; inside it, a 503 or a closed
//! connection is the load being shed.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::{FusedFuture, FutureExt};
use hyper::StatusCode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::task::JoinSet;
use tokio::time::{sleep, timeout, Instant};

use crate::load;
use crate::soak_server::Config;
use crate::soak_stats::{Listener, Stats};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    Chatty,
    Slow,
    Idle,
    Slowloris,
    HalfClosed,
    Reset,
    NeverRead,
}

impl Client {
    /// Every kind, with how many clients of it run.
    pub const PLAN: [(Client, usize); 7] = [
        (Client::Chatty, 32),
        (Client::Slow, 8),
        (Client::Idle, 16),
        (Client::Slowloris, 16),
        (Client::HalfClosed, 8),
        (Client::Reset, 8),
        (Client::NeverRead, 4),
    ];

    pub fn name(self) -> &'static str {
        [
            "chatty",
            "slow",
            "idle",
            "slowloris",
            "half-closed",
            "reset",
            "never-read",
        ][self as usize]
    }

    pub fn listener(self) -> Listener {
        match self {
            Client::Chatty | Client::Slow | Client::Idle => Listener::Ordinary,
            Client::Slowloris => Listener::Slowloris,
            Client::HalfClosed => Listener::HalfClosed,
            Client::Reset => Listener::Reset,
            Client::NeverRead => Listener::NeverRead,
        }
    }
}

/// Between two chatty requests.
const CHATTY_PAUSE: Duration = Duration::from_millis(5);
/// Between two misbehaving rounds.
const ROUND_PAUSE: Duration = Duration::from_millis(100);
/// Between two bytes of a slowloris head.
const TRICKLE: Duration = Duration::from_millis(100);
/// What a server that times out takes, beyond its timeout, before a client
/// gives up on it (a blocked worker's 500 ms included).
const GIVE_UP: Duration = Duration::from_secs(2);
/// A shed seen by a client this long after the stretch at the bound still
/// counts as the stretch's.
const SHED_GRACE: Duration = Duration::from_secs(1);

/// What the clients saw, by kind.
#[derive(Debug)]
pub struct ClientStats {
    start: Instant,
    pub rounds: [AtomicU64; 7],
    /// Answers and closes a client of the kind should not have seen.
    pub wrong: [AtomicU64; 7],
    /// 503s and closed connections seen in the stretch at the bound.
    pub shed: AtomicU64,
    pub answered: AtomicU64,
    first_wrong: Mutex<Option<String>>,
    /// Connects and handshakes that failed.
    pub connect: load::Stats,
}

impl ClientStats {
    pub fn new(start: Instant) -> ClientStats {
        ClientStats {
            start,
            rounds: Default::default(),
            wrong: Default::default(),
            shed: AtomicU64::new(0),
            answered: AtomicU64::new(0),
            first_wrong: Mutex::new(None),
            connect: load::Stats::default(),
        }
    }

    fn wrong(&self, c: Client, what: String) {
        self.wrong[c as usize].fetch_add(1, Relaxed);
        let at = self.start.elapsed().as_secs_f64();
        let mut first = self.first_wrong.lock().unwrap();
        first.get_or_insert_with(|| format!("{}: {what}, {at:.1} s into the run", c.name()));
    }

    pub fn first_wrong(&self) -> Option<String> {
        self.first_wrong.lock().unwrap().clone()
    }
}

/// Everything a client needs.
#[derive(Clone)]
pub struct Ctx {
    pub addrs: [SocketAddr; 5],
    pub config: Arc<Config>,
    pub server: Arc<Stats>,
    pub stats: Arc<ClientStats>,
    pub stop: Arc<AtomicBool>,
}

/// Starts every client of [`Client::PLAN`].
pub fn start(ctx: &Ctx) -> JoinSet<()> {
    let mut tasks = JoinSet::new();
    for (kind, n) in Client::PLAN {
        for i in 0..n {
            let ctx = ctx.clone();
            tasks.spawn(async move {
                let mut round = i;
                while !ctx.stop.load(Relaxed) {
                    ctx.stats.rounds[kind as usize].fetch_add(1, Relaxed);
                    one_round(kind, round, &ctx).await;
                    round += 1;
                }
            });
        }
    }
    tasks
}

async fn one_round(kind: Client, round: usize, ctx: &Ctx) {
    let addr = ctx.addrs[kind.listener() as usize];
    match kind {
        Client::Chatty | Client::Slow | Client::Idle => ordinary(kind, addr, ctx).await,
        Client::Slowloris => slowloris(addr, ctx).await,
        Client::HalfClosed => half_closed(addr, round % 2 == 0, ctx).await,
        Client::Reset => reset(addr, round % 2 == 0, ctx).await,
        Client::NeverRead => never_read(addr, ctx).await,
    }
}

/// A shed answer or close: right in the stretch at the bound, wrong
/// elsewhere.
fn shed(kind: Client, ctx: &Ctx, what: String) {
    if ctx.server.in_stretch(Instant::now(), SHED_GRACE) {
        ctx.stats.shed.fetch_add(1, Relaxed);
    } else {
        ctx.stats.wrong(kind, what);
    }
}

async fn ordinary(kind: Client, addr: SocketAddr, ctx: &Ctx) {
    let Some((mut send, conn)) = load::connect(addr, &ctx.stats.connect).await else {
        sleep(ROUND_PAUSE).await;
        return;
    };
    let mut conn = conn.fuse();
    let (path, expect) = match kind {
        Client::Slow => ("/slow", StatusCode::REQUEST_TIMEOUT),
        _ => ("/", StatusCode::OK),
    };
    for n in 1.. {
        let sent = Instant::now();
        // hyper's client can leave a request unanswered when its connection
        // ends just as the request is handed to it (a server shedding the
        // connection at once): the connection's end is the answer then.
        let answer = tokio::select! {
            biased;
            answer = timeout(ctx.config.request + GIVE_UP, load::get(&mut send, path)) => {
                answer.map(|a| a.map_err(|e| e.to_string()))
            }
            end = &mut conn => Ok(Err(format!("its connection ended: {end:?}"))),
        };
        match answer {
            Ok(Ok(status)) if status == expect => {
                ctx.stats.answered.fetch_add(1, Relaxed);
            }
            Ok(Ok(StatusCode::SERVICE_UNAVAILABLE)) => shed(kind, ctx, "a 503".into()),
            Ok(Ok(status)) => ctx.stats.wrong(kind, format!("answered {status}")),
            Ok(Err(e)) => {
                shed(kind, ctx, format!("connection closed: {e}"));
                return;
            }
            Err(_) => {
                let since = sent.saturating_duration_since(ctx.stats.start);
                let what = format!(
                    "no answer to request {n} of its connection, sent {:.3} s into the run",
                    since.as_secs_f64()
                );
                ctx.stats.wrong(kind, what);
                return;
            }
        }
        if kind == Client::Idle || ctx.stop.load(Relaxed) {
            break;
        }
        if kind == Client::Chatty {
            sleep(CHATTY_PAUSE).await;
        }
    }
    if kind == Client::Idle {
        // Silent now: the server must reap the connection.
        if !conn.is_terminated() && timeout(ctx.config.header + GIVE_UP, conn).await.is_err() {
            ctx.stats.wrong(kind, "not reaped".into());
        }
        sleep(ROUND_PAUSE).await;
    } else {
        drop(send);
        if !conn.is_terminated() {
            let _ = timeout(GIVE_UP, conn).await;
        }
    }
}

async fn open(addr: SocketAddr, ctx: &Ctx) -> Option<TcpStream> {
    match TcpStream::connect(addr).await {
        Ok(s) => {
            let _ = s.set_nodelay(true);
            Some(s)
        }
        Err(e) => {
            ctx.stats.connect.error("connect", e);
            sleep(ROUND_PAUSE).await;
            None
        }
    }
}

const HEAD: &[u8] =
    b"GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Trickle: one byte at a time\r\n\r\n";

/// Until the server closes the connection (or resets it), within
/// `within`; what it sent before.
async fn read_to_close(stream: &mut TcpStream, within: Duration) -> Option<Vec<u8>> {
    let mut got = Vec::new();
    match timeout(within, stream.read_to_end(&mut got)).await {
        Ok(_) => Some(got),
        Err(_) => None,
    }
}

async fn slowloris(addr: SocketAddr, ctx: &Ctx) {
    let Some(stream) = open(addr, ctx).await else {
        return;
    };
    let (mut rd, mut wr) = stream.into_split();
    let trickle = async {
        for &b in HEAD {
            if wr.write_all(&[b]).await.is_err() {
                break;
            }
            sleep(TRICKLE).await;
        }
        std::future::pending::<()>().await
    };
    let mut got = Vec::new();
    tokio::select! {
        _ = rd.read_to_end(&mut got) => {
            if !got.is_empty() {
                ctx.stats.wrong(Client::Slowloris, format!("answered {:?}", first_line(&got)));
            }
        }
        _ = trickle => {}
        _ = sleep(ctx.config.header + GIVE_UP) => {
            ctx.stats.wrong(Client::Slowloris, "not timed out".into());
        }
    }
    sleep(ROUND_PAUSE).await;
}

/// A connection with part of [`HEAD`] sent, or all of it.
async fn with_head(addr: SocketAddr, partial: bool, ctx: &Ctx) -> Option<TcpStream> {
    let mut stream = open(addr, ctx).await?;
    let head = if partial { &HEAD[..24] } else { HEAD };
    let _ = stream.write_all(head).await;
    Some(stream)
}

async fn half_closed(addr: SocketAddr, partial: bool, ctx: &Ctx) {
    let Some(mut stream) = with_head(addr, partial, ctx).await else {
        return;
    };
    let _ = stream.shutdown().await;
    let within = ctx.config.request + GIVE_UP;
    match read_to_close(&mut stream, within).await {
        None => ctx.stats.wrong(Client::HalfClosed, "not closed".into()),
        Some(got) if partial && !got.is_empty() => ctx.stats.wrong(
            Client::HalfClosed,
            format!("answered {:?}", first_line(&got)),
        ),
        Some(got) if !partial && !got.starts_with(b"HTTP/1.1 408") => {
            let what = format!("answered {:?}", first_line(&got));
            // Shed: a 503, or the connection closed when its header-read
            // timer was refused.
            if got.is_empty() || got.starts_with(b"HTTP/1.1 503") {
                shed(Client::HalfClosed, ctx, what);
            } else {
                ctx.stats.wrong(Client::HalfClosed, what);
            }
        }
        Some(_) => {}
    }
    sleep(ROUND_PAUSE).await;
}

async fn reset(addr: SocketAddr, partial: bool, ctx: &Ctx) {
    let Some(stream) = with_head(addr, partial, ctx).await else {
        return;
    };
    // Let the server read it (and, for a whole head, start the request).
    sleep(ROUND_PAUSE).await;
    let _ = stream.set_zero_linger();
    drop(stream);
    sleep(ROUND_PAUSE).await;
}

async fn never_read(addr: SocketAddr, ctx: &Ctx) {
    let connected = async {
        let socket = TcpSocket::new_v4()?;
        socket.set_recv_buffer_size(8 * 1024)?;
        socket.connect(addr).await
    };
    let mut stream = match connected.await {
        Ok(s) => s,
        Err(e) => {
            ctx.stats.connect.error("connect", e);
            sleep(ROUND_PAUSE).await;
            return;
        }
    };
    let _ = stream
        .write_all(b"GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await;
    // Never read: the server's writes wait until its write timeout.
    sleep(ctx.config.write + GIVE_UP).await;
    drop(stream);
    sleep(ROUND_PAUSE).await;
}

fn first_line(got: &[u8]) -> String {
    let line = got.split(|&b| b == b'\r').next().unwrap_or_default();
    String::from_utf8_lossy(line).into_owned()
}
