//! The server row: a simulated server on a 2-worker runtime on the real
//! clock, with the timers a server keeps per connection.
//!
//! `conns` connections, each a task holding an idle timer (a `Sleep` reset
//! on every message) and wrapping the handling of each message in a request
//! `timeout` (5 s). The handling is a future that completes quickly: it
//! yields once (as a request that waits on I/O briefly) and is ready on its
//! second poll, so every timeout is registered and then cancelled.
//!
//! A generator task sends messages at `rate` per second in all, to the
//! connections in turn (round robin), so each active connection gets one
//! every `period = active connections / rate`. One connection in ten goes
//! silent at a random time in the first part of the run and must be reaped
//! by its idle timer before the run ends; an active one must never be.
//!
//! The no-timer baseline ([`Imp::NoTimer`]) runs the same connections and
//! messages with no idle timer and no request timeout, and reads no clock:
//! the timer CPU of an implementation is its run's process CPU minus the
//! baseline's, per message.
//!
//! [`rows`], at the end, is `compare`'s `server` section.

use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::{Duration, Instant as StdInstant};

use futures::task::AtomicWaker;
use hashwheel::Wheel;
use pingora_timeout::fast_timeout::{fast_sleep, fast_timeout};
use tokio::runtime::Runtime;
use tokio::time::Instant;

use super::cpu::{Meter, Span};
use super::support::{lock, runtime_for, unsupported, wait_until};
use super::task_rt::assert_in_task;
use super::{quantile, Imp, Rng};

/// The thread name of the server's runtime.
pub const SERVER_RT: &str = "server-rt";

/// One connection in this many goes silent.
pub(crate) const SILENT_EVERY: usize = 10;

/// The shape of one server run.
#[derive(Debug, Clone, Copy)]
pub struct ServerConfig {
    pub conns: usize,
    /// Messages per second, over all connections.
    pub rate: u64,
    /// How long messages are sent: the measured window.
    pub run: Duration,
    /// The idle timeout.
    pub idle: Duration,
    /// The request timeout around each message's handling.
    pub request: Duration,
}

impl ServerConfig {
    /// A run of `run` with `conns` connections at `rate` messages per
    /// second. The idle timeout is `min_idle`, or more when an active
    /// connection's period between messages needs it (at least twice the
    /// period plus 2 s, so that no active connection is reaped).
    pub fn new(conns: usize, rate: u64, run: Duration, min_idle: Duration) -> ServerConfig {
        let active = conns - conns.div_ceil(SILENT_EVERY);
        let period = Duration::from_secs_f64(active as f64 / rate as f64);
        let idle = min_idle.max(period * 2 + Duration::from_secs(2));
        ServerConfig {
            conns,
            rate,
            run,
            idle,
            request: Duration::from_secs(5),
        }
    }

    /// The window in which silent connections go silent: early enough that
    /// each is reaped (idle timeout later) with a second to spare.
    fn silence_window(&self) -> Duration {
        self.run
            .checked_sub(self.idle + Duration::from_secs(1))
            .filter(|w| !w.is_zero())
            .unwrap_or_else(|| {
                panic!(
                    "a server run of {:?} is too short for an idle timeout of {:?}",
                    self.run, self.idle
                )
            })
    }
}

/// What a server run measured.
#[derive(Debug, Clone)]
pub struct ServerResult {
    /// The process's CPU and the wall time while messages were sent.
    pub span: Span,
    pub messages: u64,
    /// Lateness of each silent connection's reap (from its idle deadline to
    /// its task running), sorted, in ms; negative: early.
    pub lateness_ms: Vec<f64>,
    pub silent: usize,
    /// Silent connections reaped before their idle deadline.
    pub early: usize,
    /// Silent connections not reaped in the run.
    pub unreaped: usize,
    /// Active connections reaped (must be 0: the workload is wrong if not).
    pub active_reaped: usize,
    /// Request timeouts that elapsed (must be 0).
    pub request_timeouts: u64,
}

impl ServerResult {
    pub fn cpu_per_message_ns(&self) -> f64 {
        self.span.cpu_ns as f64 / self.messages.max(1) as f64
    }

    pub fn messages_per_sec(&self) -> f64 {
        self.messages as f64 / (self.span.wall_ns as f64 / 1e9)
    }

    pub fn lateness(&self, q: f64) -> f64 {
        quantile(&self.lateness_ms, q)
    }
}

// ===== the timers =====

/// What a connection does with timers, for each implementation.
trait Timers: Clone + Send + Sync + 'static {
    /// Whether there are timers at all (false for the baseline).
    const TIMED: bool = true;
    /// Whether a reset needs the time of the message (a deadline).
    const RESET_AT: bool;
    type Idle: Future<Output = ()> + Send + 'static;
    fn idle(&self, now: StdInstant, d: Duration) -> Self::Idle;
    /// Moves the idle timer to `d` after the message received at `now`
    /// (read only when [`Timers::RESET_AT`] or for bookkeeping).
    fn reset(&self, idle: Pin<&mut Self::Idle>, now: Option<StdInstant>, d: Duration);
    /// `f` under a timeout of `d`: whether it completed in time.
    fn request<F>(&self, d: Duration, f: F) -> impl Future<Output = bool> + Send
    where
        F: Future<Output = ()> + Send + 'static;
}

#[derive(Debug, Clone)]
struct NoTimers;

impl Timers for NoTimers {
    const TIMED: bool = false;
    const RESET_AT: bool = false;
    type Idle = std::future::Pending<()>;
    fn idle(&self, _: StdInstant, _: Duration) -> Self::Idle {
        std::future::pending()
    }
    fn reset(&self, _: Pin<&mut Self::Idle>, _: Option<StdInstant>, _: Duration) {}
    async fn request<F>(&self, _: Duration, f: F) -> bool
    where
        F: Future<Output = ()> + Send + 'static,
    {
        f.await;
        true
    }
}

#[derive(Debug, Clone)]
struct WheelTimers(Wheel);

impl Timers for WheelTimers {
    const RESET_AT: bool = true;
    type Idle = hashwheel::Sleep;
    fn idle(&self, now: StdInstant, d: Duration) -> Self::Idle {
        self.0.sleep_until(Instant::from_std(now + d))
    }
    fn reset(&self, idle: Pin<&mut Self::Idle>, now: Option<StdInstant>, d: Duration) {
        let now = now.expect("a reset needs the message's time");
        idle.get_mut().reset(Instant::from_std(now + d));
    }
    fn request<F>(&self, d: Duration, f: F) -> impl Future<Output = bool> + Send
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let t = self.0.timeout(d, f);
        async move { t.await.is_ok() }
    }
}

#[derive(Debug, Clone)]
struct FreeTimers;

impl Timers for FreeTimers {
    const RESET_AT: bool = true;
    type Idle = hashwheel::Sleep;
    fn idle(&self, now: StdInstant, d: Duration) -> Self::Idle {
        hashwheel::sleep_until(Instant::from_std(now + d))
    }
    fn reset(&self, idle: Pin<&mut Self::Idle>, now: Option<StdInstant>, d: Duration) {
        let now = now.expect("a reset needs the message's time");
        idle.get_mut().reset(Instant::from_std(now + d));
    }
    fn request<F>(&self, d: Duration, f: F) -> impl Future<Output = bool> + Send
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let t = hashwheel::timeout(d, f);
        async move { t.await.is_ok() }
    }
}

#[derive(Debug, Clone)]
struct TokioTimers;

impl Timers for TokioTimers {
    const RESET_AT: bool = true;
    type Idle = tokio::time::Sleep;
    fn idle(&self, now: StdInstant, d: Duration) -> Self::Idle {
        tokio::time::sleep_until(Instant::from_std(now + d))
    }
    fn reset(&self, idle: Pin<&mut Self::Idle>, now: Option<StdInstant>, d: Duration) {
        let now = now.expect("a reset needs the message's time");
        idle.reset(Instant::from_std(now + d));
    }
    fn request<F>(&self, d: Duration, f: F) -> impl Future<Output = bool> + Send
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let t = tokio::time::timeout(d, f);
        async move { t.await.is_ok() }
    }
}

/// pingora-timeout has no reset: a new `fast_sleep` replaces the old one,
/// in place. `M` is `fast_sleep` itself (its future's type has no name).
#[derive(Debug, Clone)]
struct PingoraTimers<M>(M);

impl<S, M> Timers for PingoraTimers<M>
where
    M: Fn(Duration) -> S + Clone + Send + Sync + 'static,
    S: Future<Output = ()> + Send + 'static,
{
    const RESET_AT: bool = false;
    type Idle = S;
    fn idle(&self, _: StdInstant, d: Duration) -> S {
        (self.0)(d)
    }
    fn reset(&self, mut idle: Pin<&mut S>, _: Option<StdInstant>, d: Duration) {
        idle.set((self.0)(d));
    }
    fn request<F>(&self, d: Duration, f: F) -> impl Future<Output = bool> + Send
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let t = fast_timeout(d, f);
        async move { t.await.is_ok() }
    }
}

// ===== the connections =====

/// A connection's inbox: messages waiting, and whether it is closed.
#[derive(Debug, Default)]
pub(crate) struct Conn {
    pub(crate) pending: AtomicU32,
    pub(crate) closed: AtomicBool,
    pub(crate) waker: AtomicWaker,
}

impl Conn {
    pub(crate) fn send(&self) {
        self.pending.fetch_add(1, Ordering::Release);
        self.waker.wake();
    }

    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.waker.wake();
    }
}

#[derive(Debug, Default)]
struct Shared {
    /// Connections whose idle timer is registered (first poll done).
    started: AtomicUsize,
    done: AtomicUsize,
    /// Each reap: whether the connection was a silent one, and its
    /// lateness in ns (negative: early).
    reaps: Mutex<Vec<(bool, i64)>>,
    request_timeouts: AtomicU64,
}

pub(crate) enum Event {
    Messages(u32),
    Idle,
    Closed,
}

/// What a request's handling is: pending once (a brief wait, as on I/O),
/// then done.
pub(crate) async fn handle() {
    tokio::task::yield_now().await;
}

/// `b - a` in ns, negative when `b` is earlier.
fn signed_ns(a: StdInstant, b: StdInstant) -> i64 {
    match b.checked_duration_since(a) {
        Some(d) => d.as_nanos() as i64,
        None => -(a.duration_since(b).as_nanos() as i64),
    }
}

async fn connection<T: Timers>(
    t: T,
    conn: Arc<Conn>,
    silent: bool,
    sh: Arc<Shared>,
    cfg: ServerConfig,
) {
    assert_in_task(SERVER_RT, tokio::runtime::Handle::current().id());
    let start = StdInstant::now();
    let mut deadline = start + cfg.idle;
    let mut idle = pin!(t.idle(start, cfg.idle));
    let mut registered = false;
    loop {
        let event = poll_fn(|cx| {
            conn.waker.register(cx.waker());
            if conn.closed.load(Ordering::Acquire) {
                return Poll::Ready(Event::Closed);
            }
            let n = conn.pending.swap(0, Ordering::Acquire);
            if n > 0 {
                return Poll::Ready(Event::Messages(n));
            }
            if idle.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Event::Idle);
            }
            if !registered {
                registered = true;
                sh.started.fetch_add(1, Ordering::AcqRel);
            }
            Poll::Pending
        })
        .await;
        match event {
            Event::Closed => break,
            Event::Messages(n) => {
                for _ in 0..n {
                    // The message's time: what a deadline is computed from,
                    // and for silent connections the reap's bookkeeping.
                    let now = (T::RESET_AT || (T::TIMED && silent)).then(StdInstant::now);
                    if let Some(now) = now {
                        deadline = now + cfg.idle;
                    }
                    t.reset(idle.as_mut(), now, cfg.idle);
                    if !t.request(cfg.request, handle()).await {
                        sh.request_timeouts.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            Event::Idle => {
                let late = signed_ns(deadline, StdInstant::now());
                lock(&sh.reaps).push((silent, late));
                break;
            }
        }
    }
    sh.done.fetch_add(1, Ordering::AcqRel);
}

/// Sends `rate` messages per second to the connections in turn, skipping
/// the ones gone silent, for `run`; returns how many it sent.
async fn generate(
    conns: Arc<[Arc<Conn>]>,
    silent_at: Arc<[Option<Duration>]>,
    rate: u64,
    run: Duration,
) -> u64 {
    assert_in_task(SERVER_RT, tokio::runtime::Handle::current().id());
    let start = StdInstant::now();
    let mut tick = tokio::time::interval(Duration::from_millis(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let (n, mut next, mut sent) = (conns.len(), 0, 0u64);
    loop {
        tick.tick().await;
        let elapsed = start.elapsed();
        if elapsed >= run {
            return sent;
        }
        let target = (elapsed.as_nanos() * rate as u128 / 1_000_000_000) as u64;
        while sent < target {
            let i = next;
            next = if next + 1 == n { 0 } else { next + 1 };
            if silent_at[i].is_some_and(|s| elapsed >= s) {
                continue;
            }
            conns[i].send();
            sent += 1;
        }
    }
}

/// One server run of `imp` (one of [`Imp::SERVER`]) on a fresh 2-worker
/// runtime (on tokio's alternative timer for [`Imp::TokioAlt`]).
pub fn server(imp: Imp, cfg: &ServerConfig) -> ServerResult {
    let rt = runtime_for(imp, 2, SERVER_RT);
    let r = match imp.api() {
        Imp::NoTimer => run(&rt, imp, NoTimers, cfg),
        Imp::Hashwheel => {
            let wheel = {
                let _g = rt.enter();
                Wheel::new()
            };
            run(&rt, imp, WheelTimers(wheel), cfg)
        }
        Imp::HashwheelFree => run(&rt, imp, FreeTimers, cfg),
        Imp::Tokio => run(&rt, imp, TokioTimers, cfg),
        Imp::Pingora => run(&rt, imp, PingoraTimers(fast_sleep), cfg),
        _ => unsupported(imp),
    };
    rt.shutdown_timeout(Duration::from_secs(10));
    r
}

fn run<T: Timers>(rt: &Runtime, imp: Imp, t: T, cfg: &ServerConfig) -> ServerResult {
    let cfg = *cfg;
    let window = cfg.silence_window();
    let mut rng = Rng::new(cfg.conns as u64);
    let silent_at: Arc<[Option<Duration>]> = (0..cfg.conns)
        .map(|i| {
            (i % SILENT_EVERY == 0)
                .then(|| Duration::from_nanos(rng.range(0, window.as_nanos() as u64)))
        })
        .collect();
    let silent = silent_at.iter().filter(|s| s.is_some()).count();
    let conns: Arc<[Arc<Conn>]> = (0..cfg.conns).map(|_| Arc::new(Conn::default())).collect();
    let sh = Arc::new(Shared::default());

    // An accept loop: a task spawns the connections.
    let accept = {
        let (conns, sh, silent_at) = (conns.clone(), sh.clone(), silent_at.clone());
        rt.spawn(async move {
            for (i, conn) in conns.iter().enumerate() {
                let c = connection(
                    t.clone(),
                    conn.clone(),
                    silent_at[i].is_some(),
                    sh.clone(),
                    cfg,
                );
                tokio::spawn(c);
            }
        })
    };
    rt.block_on(accept).expect("accept task");
    let limit = StdInstant::now() + Duration::from_secs(300);
    let up = wait_until(limit, || sh.started.load(Ordering::Acquire) == cfg.conns);
    assert!(up, "{} connections did not all start", cfg.conns);

    let m = Meter::start(imp);
    let gen = rt.spawn(generate(conns.clone(), silent_at, cfg.rate, cfg.run));
    let messages = rt.block_on(gen).expect("generator task");
    let span = m.stop();

    for c in conns.iter() {
        c.close();
    }
    let limit = StdInstant::now() + Duration::from_secs(300);
    let down = wait_until(limit, || sh.done.load(Ordering::Acquire) == cfg.conns);
    assert!(down, "{} connections did not all close", cfg.conns);

    let reaps = std::mem::take(&mut *lock(&sh.reaps));
    let mut lateness_ms: Vec<f64> = reaps
        .iter()
        .filter(|r| r.0)
        .map(|r| r.1 as f64 / 1e6)
        .collect();
    lateness_ms.sort_by(f64::total_cmp);
    let reaped = lateness_ms.len();
    ServerResult {
        span,
        messages,
        early: lateness_ms.iter().filter(|&&l| l < 0.0).count(),
        unreaped: if imp == Imp::NoTimer {
            0
        } else {
            silent - reaped
        },
        active_reaped: reaps.len() - reaped,
        request_timeouts: sh.request_timeouts.load(Ordering::Relaxed),
        lateness_ms,
        silent,
    }
}

/// `compare`'s rows of the server simulation: the `server` section.
pub mod rows {
    use std::collections::HashMap;

    use crate::config::Config;
    use crate::section::{Envs, Section};
    use crate::server::{self, ServerConfig};
    use crate::table::{count, rounds, Table};
    use crate::{median, Imp};

    /// The server's section.
    pub const SECTIONS: &[Section] = &[Section::new("server", server)];

    /// The name of the server's timer CPU row for `conns` connections.
    pub fn server_cpu_row(conns: usize) -> String {
        format!(
            "{}: timer CPU per message (run − its round's no-timer run)",
            server_head(conns)
        )
    }

    fn server_head(conns: usize) -> String {
        format!("server, {} connections, 2 workers", count(conns))
    }

    /// The server rows: every implementation and the no-timer baseline,
    /// alternating. The timer CPU per message of a run is its process CPU per
    /// message less the baseline's in the same round; the median, min and max
    /// over the rounds go to stderr beside the per-run lines.
    pub fn server(cfg: &Config, _: &Envs, t: &mut Table) {
        for &conns in &cfg.server_conns {
            let sc = ServerConfig::new(conns, cfg.server_rate, cfg.server_run, cfg.server_min_idle);
            let head = server_head(conns);
            eprintln!(
                "  {head}: {} msg/s for {:?}, idle timeout {:?}, request timeout {:?}",
                sc.rate, sc.run, sc.idle, sc.request
            );
            let timer_cpu = server_cpu_row(conns);
            t.reserve(&timer_cpu, "ns/msg");
            let mut per_msg: HashMap<Imp, Vec<f64>> = HashMap::new();
            rounds(cfg.server_rounds, Imp::SERVER, |imp| {
                let r = server::server(imp, &sc);
                eprintln!(
                    "  {:<34} {:>7.0} ns/msg, {:>7.0} msg/s, {} reaped of {} silent, p99 {:.2} ms",
                    imp.name(),
                    r.cpu_per_message_ns(),
                    r.messages_per_sec(),
                    r.lateness_ms.len(),
                    r.silent,
                    r.lateness(0.99),
                );
                if r.request_timeouts > 0 {
                    eprintln!(
                        "  {}: {} request timeouts elapsed",
                        imp.name(),
                        r.request_timeouts
                    );
                }
                per_msg.entry(imp).or_default().push(r.cpu_per_message_ns());
                let row = |what: &str| format!("{head}: {what}");
                t.add(
                    &row("process CPU per message (all work)"),
                    "ns/msg",
                    imp,
                    r.cpu_per_message_ns(),
                );
                t.add(
                    &row("messages sent per second"),
                    "msg/s",
                    imp,
                    r.messages_per_sec(),
                );
                if imp == Imp::NoTimer {
                    return;
                }
                t.add(&row("reap lateness p50"), "ms", imp, r.lateness(0.5));
                t.add(&row("reap lateness p99"), "ms", imp, r.lateness(0.99));
                t.add(&row("reap lateness max"), "ms", imp, r.lateness(1.0));
                t.add(&row("early reaps"), "conns", imp, r.early as f64);
                t.add(
                    &row("wrong reaps (silent not reaped + active reaped)"),
                    "conns",
                    imp,
                    (r.unreaped + r.active_reaped) as f64,
                );
            });
            let Some(base) = per_msg.remove(&Imp::NoTimer) else {
                eprintln!("  {head}: no baseline run (--imps without none): no timer CPU row");
                continue;
            };
            // Each round's timer CPU against the no-timer run of the same round:
            // the baseline moves between rounds as much as the timer CPU does.
            let mut cpu: Vec<(Imp, Vec<f64>)> = per_msg
                .into_iter()
                .map(|(imp, v)| (imp, v.iter().zip(&base).map(|(x, b)| x - b).collect()))
                .collect();
            cpu.sort_by_key(|(imp, _)| Imp::ALL.iter().position(|i| i == imp));
            let tokio = cpu
                .iter()
                .find(|(imp, _)| *imp == Imp::Tokio)
                .map(|(_, v)| median(&mut v.clone()));
            for (imp, v) in &cpu {
                let (lo, hi) = v
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
                        (l.min(x), h.max(x))
                    });
                let med = median(&mut v.clone());
                let vs = tokio.map_or(String::new(), |k| format!(", {:.2}x tokio's", med / k));
                eprintln!(
                "  {head}: timer CPU of {} over {} rounds: median {med:.0} ns/msg (min {lo:.0}, max {hi:.0}){vs}",
                imp.name(),
                v.len()
            );
                for &x in v {
                    t.add(&timer_cpu, "ns/msg", *imp, x);
                }
            }
        }
    }
}
