//! The server row replayed deterministically: the connection pattern of
//! [`server`](super::server) on tokio's paused clock, on one thread, so that
//! a run under valgrind counts the same instructions and misses every time.
//!
//! `conns` connection tasks each hold an idle timer (reset on every
//! message) and handle each message under a request timeout whose future is
//! pending once. A generator sends `per_tick` messages each millisecond of
//! the paused clock, to the connections in turn, skipping the silent ones
//! (one in ten, each silent from a tick drawn with a fixed seed). The run
//! has three phases:
//!
//! 1. **warm-up**: enough ticks for every connection to have had a message,
//!    so that the idle deadlines are spread over a period as in a server's
//!    steady state (not all at the start) and each timer has been moved at
//!    least once;
//! 2. **measured**: [`measured_phase`], the function a profiler counts
//!    alone (`callgrind --toggle-collect`);
//! 3. **drain**: the active connections close, the clock runs on until
//!    every silent connection is reaped, and the run checks what it
//!    measured: every silent connection reaped, none before its deadline nor
//!    more than [`MAX_LATE`] after, no active one reaped, no request
//!    timeout elapsed.
//!
//! tokio's alternative timer has no replay: it runs on multi-thread
//! runtimes only, and tokio's paused clock on current-thread ones only.

use std::future::{pending, poll_fn, Future};
use std::ops::Range;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use hashwheel::Wheel;
use tokio::runtime::Runtime;
use tokio::time::Instant;

use super::server::{handle, Conn, Event, ServerConfig, SILENT_EVERY};
use super::support::lock;
use super::{Imp, Rng};

/// The latest a reap may come after its idle deadline: the timers' 1 ms
/// resolution, and a tick of the generator.
pub const MAX_LATE: Duration = Duration::from_millis(2);

/// The backends the replay runs: [`Imp::SERVER`] but for pingora (a
/// real-time thread of its own) and tokio's alternative timer (no paused
/// clock), and the no-timer run the others are read against.
pub const BACKENDS: [Imp; 4] = [Imp::NoTimer, Imp::Hashwheel, Imp::HashwheelFree, Imp::Tokio];

/// The shape of one replay.
#[derive(Debug, Clone, Copy)]
pub struct ReplayConfig {
    pub conns: usize,
    /// Messages per millisecond of the paused clock (the server row's rate
    /// of 200k/s is 200).
    pub per_tick: usize,
    /// Messages sent in the measured phase (rounded up to whole ticks).
    pub measured: usize,
    pub idle: Duration,
    pub request: Duration,
}

impl ReplayConfig {
    /// The server row's shape for `conns` connections at `rate` messages
    /// per second: the same idle and request timeouts.
    pub fn new(conns: usize, rate: u64, measured: usize) -> ReplayConfig {
        let s = ServerConfig::new(
            conns,
            rate,
            Duration::from_secs(40),
            Duration::from_secs(10),
        );
        ReplayConfig {
            conns,
            per_tick: (rate / 1000).max(1) as usize,
            measured,
            idle: s.idle,
            request: s.request,
        }
    }

    /// Warm-up ticks: enough for every connection to get a message (a full
    /// round of the generator, with room for the silent ones it skips),
    /// plus a tenth.
    fn warm_ticks(&self) -> u64 {
        let round = self.conns.div_ceil(self.per_tick) as u64;
        round + round / 10 + 1
    }

    fn measured_ticks(&self) -> u64 {
        self.measured.div_ceil(self.per_tick) as u64
    }
}

/// What a replay did and checked.
#[derive(Debug, Clone, Default)]
pub struct ReplayResult {
    pub warm_messages: u64,
    pub measured_messages: u64,
    pub silent: usize,
    pub reaped: usize,
    /// Reaps before the idle deadline.
    pub early: usize,
    /// The latest reap after its deadline.
    pub max_late: Duration,
    pub active_reaped: usize,
    pub request_timeouts: u64,
    /// The size of a connection task's future: the timer futures it holds
    /// decide how many of its cache lines a message touches.
    pub task_future_bytes: usize,
}

impl ReplayResult {
    /// What is wrong with the run, if anything: for a timed backend every
    /// silent connection reaped in time and nothing else ended by a timer.
    pub fn check(&self, imp: Imp) -> Result<(), String> {
        let mut bad = Vec::new();
        if imp != Imp::NoTimer {
            if self.reaped != self.silent {
                bad.push(format!("{} of {} silent reaped", self.reaped, self.silent));
            }
            if self.early > 0 {
                bad.push(format!("{} reaped early", self.early));
            }
            if self.max_late > MAX_LATE {
                bad.push(format!("a reap {:?} late", self.max_late));
            }
        }
        if self.active_reaped > 0 {
            bad.push(format!("{} active connections reaped", self.active_reaped));
        }
        if self.request_timeouts > 0 {
            bad.push(format!(
                "{} request timeouts elapsed",
                self.request_timeouts
            ));
        }
        match bad.is_empty() {
            true => Ok(()),
            false => Err(format!("{}: {}", imp.name(), bad.join(", "))),
        }
    }
}

// ===== the timers =====

/// What a connection does with timers, per backend.
trait Timers: Clone + Send + Sync + 'static {
    const TIMED: bool = true;
    type Idle: Future<Output = ()> + Send + 'static;
    fn idle(&self, deadline: Instant) -> Self::Idle;
    fn reset(&self, idle: Pin<&mut Self::Idle>, deadline: Instant);
    /// `f` under a timeout of `d`: whether it completed in time.
    fn request<F>(&self, d: Duration, f: F) -> impl Future<Output = bool> + Send
    where
        F: Future<Output = ()> + Send + 'static;
}

#[derive(Debug, Clone)]
struct NoTimers;

impl Timers for NoTimers {
    const TIMED: bool = false;
    type Idle = std::future::Pending<()>;
    fn idle(&self, _: Instant) -> Self::Idle {
        pending()
    }
    fn reset(&self, _: Pin<&mut Self::Idle>, _: Instant) {}
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
    type Idle = hashwheel::Sleep;
    fn idle(&self, deadline: Instant) -> Self::Idle {
        self.0.sleep_until(deadline)
    }
    fn reset(&self, idle: Pin<&mut Self::Idle>, deadline: Instant) {
        idle.get_mut().reset(deadline);
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
    type Idle = hashwheel::Sleep;
    fn idle(&self, deadline: Instant) -> Self::Idle {
        hashwheel::sleep_until(deadline)
    }
    fn reset(&self, idle: Pin<&mut Self::Idle>, deadline: Instant) {
        idle.get_mut().reset(deadline);
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
    type Idle = tokio::time::Sleep;
    fn idle(&self, deadline: Instant) -> Self::Idle {
        tokio::time::sleep_until(deadline)
    }
    fn reset(&self, idle: Pin<&mut Self::Idle>, deadline: Instant) {
        idle.reset(deadline);
    }
    fn request<F>(&self, d: Duration, f: F) -> impl Future<Output = bool> + Send
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let t = tokio::time::timeout(d, f);
        async move { t.await.is_ok() }
    }
}

// ===== the connections =====

#[derive(Debug, Default)]
struct Shared {
    started: AtomicUsize,
    done: AtomicUsize,
    /// Each reap: whether the connection was silent, and how long after its
    /// deadline it came (`None`: before it).
    reaps: Mutex<Vec<(bool, Option<Duration>)>>,
    request_timeouts: AtomicU64,
}

async fn connection<T: Timers>(
    t: T,
    conn: Arc<Conn>,
    silent: bool,
    sh: Arc<Shared>,
    cfg: ReplayConfig,
) {
    let mut deadline = Instant::now() + cfg.idle;
    let mut idle = pin!(t.idle(deadline));
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
                    if T::TIMED {
                        deadline = Instant::now() + cfg.idle;
                        t.reset(idle.as_mut(), deadline);
                    }
                    if !t.request(cfg.request, handle()).await {
                        sh.request_timeouts.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            Event::Idle => {
                let late = Instant::now().checked_duration_since(deadline);
                lock(&sh.reaps).push((silent, late));
                break;
            }
        }
    }
    sh.done.fetch_add(1, Ordering::AcqRel);
}

/// The generator's state across the phases.
struct Generator {
    conns: Arc<[Arc<Conn>]>,
    /// The tick from which each silent connection gets no message.
    silent_from: Vec<Option<u64>>,
    start: Instant,
    per_tick: usize,
    next: usize,
    sent: u64,
}

impl Generator {
    /// Sends each tick's messages, then waits for the next tick (by then
    /// every connection has handled what it was sent).
    async fn ticks(&mut self, ticks: Range<u64>) {
        let n = self.conns.len();
        for k in ticks {
            let mut batch = 0;
            let mut skipped = 0;
            while batch < self.per_tick && skipped < n {
                let i = self.next;
                self.next = if i + 1 == n { 0 } else { i + 1 };
                if self.silent_from[i].is_some_and(|s| k >= s) {
                    skipped += 1;
                    continue;
                }
                self.conns[i].send();
                batch += 1;
                self.sent += 1;
            }
            tokio::time::sleep_until(self.start + Duration::from_millis(k + 1)).await;
        }
    }
}

/// The measured phase: the one function a profiler counts (callgrind's
/// `--toggle-collect=*replay*measured_phase*`). Every task, timer driver
/// and timer of the current-thread runtime runs inside its `block_on`.
#[inline(never)]
fn measured_phase(rt: &Runtime, g: &mut Generator, ticks: Range<u64>) {
    rt.block_on(g.ticks(ticks));
}

/// One replay of `imp` (one of [`BACKENDS`]), warmed up for `warm_ms`
/// milliseconds of paused time, or by default one round of the generator.
/// A warm-up of an idle timeout or more brings into the measured phase the
/// deadlines that the timers moved by messages were first filed for, where
/// tokio (which moves a timer later lazily) re-files them.
pub fn replay(imp: Imp, cfg: &ReplayConfig, warm_ms: Option<u64>) -> ReplayResult {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("tokio runtime");
    match imp {
        Imp::NoTimer => run(&rt, NoTimers, cfg, warm_ms),
        Imp::Hashwheel => {
            let wheel = {
                let _g = rt.enter();
                Wheel::new()
            };
            run(&rt, WheelTimers(wheel), cfg, warm_ms)
        }
        Imp::HashwheelFree => run(&rt, FreeTimers, cfg, warm_ms),
        Imp::Tokio => run(&rt, TokioTimers, cfg, warm_ms),
        _ => panic!("{} has no replay", imp.name()),
    }
}

fn run<T: Timers>(rt: &Runtime, t: T, cfg: &ReplayConfig, warm_ms: Option<u64>) -> ReplayResult {
    let cfg = *cfg;
    let (warm, measured) = (warm_ms.unwrap_or(cfg.warm_ticks()), cfg.measured_ticks());
    let mut rng = Rng::new(cfg.conns as u64);
    let silent_from: Vec<Option<u64>> = (0..cfg.conns)
        .map(|i| (i % SILENT_EVERY == 0).then(|| rng.range(0, warm + measured)))
        .collect();
    let silent = silent_from.iter().filter(|s| s.is_some()).count();
    let conns: Arc<[Arc<Conn>]> = (0..cfg.conns).map(|_| Arc::new(Conn::default())).collect();
    let sh = Arc::new(Shared::default());

    let mut task_future_bytes = 0;
    let start = rt.block_on(async {
        for (i, conn) in conns.iter().enumerate() {
            let silent = silent_from[i].is_some();
            let task = connection(t.clone(), conn.clone(), silent, sh.clone(), cfg);
            task_future_bytes = std::mem::size_of_val(&task);
            tokio::spawn(task);
        }
        while sh.started.load(Ordering::Acquire) < cfg.conns {
            tokio::task::yield_now().await;
        }
        Instant::now()
    });
    let mut g = Generator {
        conns: conns.clone(),
        silent_from: silent_from.clone(),
        start,
        per_tick: cfg.per_tick,
        next: 0,
        sent: 0,
    };
    rt.block_on(g.ticks(0..warm));
    let warm_messages = g.sent;
    measured_phase(rt, &mut g, warm..warm + measured);
    let measured_messages = g.sent - warm_messages;

    // Drain: the active connections close; the silent ones wait for their
    // reap (all of them, for the no-timer run, which has none).
    for (i, c) in conns.iter().enumerate() {
        if !T::TIMED || silent_from[i].is_none() {
            c.close();
        }
    }
    let limit = cfg.idle + Duration::from_secs(10);
    rt.block_on(async {
        let until = Instant::now() + limit;
        while sh.done.load(Ordering::Acquire) < cfg.conns && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    for c in conns.iter() {
        c.close();
    }
    rt.block_on(async {
        while sh.done.load(Ordering::Acquire) < cfg.conns {
            tokio::task::yield_now().await;
        }
    });

    let reaps = std::mem::take(&mut *lock(&sh.reaps));
    let silent_reaps: Vec<Option<Duration>> = reaps.iter().filter(|r| r.0).map(|r| r.1).collect();
    ReplayResult {
        warm_messages,
        measured_messages,
        silent,
        reaped: silent_reaps.len(),
        early: silent_reaps.iter().filter(|l| l.is_none()).count(),
        max_late: silent_reaps
            .iter()
            .flatten()
            .copied()
            .max()
            .unwrap_or_default(),
        active_reaped: reaps.len() - silent_reaps.len(),
        request_timeouts: sh.request_timeouts.load(Ordering::Relaxed),
        task_future_bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_backend_replays_and_reaps_in_time() {
        let cfg = ReplayConfig::new(1000, 200_000, 1000);
        for imp in BACKENDS {
            let r = replay(imp, &cfg, None);
            assert_eq!(r.check(imp), Ok(()));
            assert_eq!(r.measured_messages, 1000, "{}", imp.name());
            assert_eq!(r.silent, 100);
        }
    }

    #[test]
    fn check_names_what_went_wrong() {
        let ok = ReplayResult {
            silent: 3,
            reaped: 3,
            ..ReplayResult::default()
        };
        assert_eq!(ok.check(Imp::Tokio), Ok(()));
        let unreaped = ReplayResult {
            reaped: 2,
            ..ok.clone()
        };
        assert!(unreaped.check(Imp::Tokio).unwrap_err().contains("2 of 3"));
        let early = ReplayResult {
            early: 1,
            ..ok.clone()
        };
        assert!(early.check(Imp::Hashwheel).unwrap_err().contains("early"));
        let late = ReplayResult {
            max_late: MAX_LATE * 2,
            ..ok.clone()
        };
        assert!(late.check(Imp::HashwheelFree).is_err());
        let active = ReplayResult {
            active_reaped: 1,
            ..ok
        };
        assert!(active.check(Imp::NoTimer).is_err());
    }
}
