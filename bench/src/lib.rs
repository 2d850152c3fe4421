//! hashwheel's measurement tools: the workloads shared by the criterion
//! bench (`benches/timers.rs`) and `compare` (`src/bin/compare/`: one table,
//! all implementations in one process), and the stress workload of the
//! `stress` binary and `tests/stress.rs`.
//!
//! The files: `timers` (each implementation's type and one trait per kind
//! of timer), `plain_thread` and `in_task` (the workloads, written once
//! against those traits, outside tasks and inside them), `plain_rt` (the
//! plain-thread rows' runtime), `task_rt` (the in-task runtimes and how a
//! body runs in their tasks), `server` (the
//! server simulation), `io` (`hashwheel::io` beside tokio-io-timeout),
//! `queue` (one surface over the two `DelayQueue`s), `cpu` (what a span
//! measures), `support` (what the workload files share), `replay` (the
//! server row on the paused clock, for `replay`) and `stress`.
//!
//! `compare`'s sections live beside their workloads: each workload file
//! ends with a `rows` module, whose functions run the workloads round by
//! round and fill their rows of the table, and whose `SECTIONS` names them
//! for `--only`. What those share: `table` (the table and how rounds
//! alternate implementations), `config` (how much of each workload to run),
//! `section` (what a section is and the environments every section gets)
//! and `compare` (every file's sections, in the order `compare` runs them).
//! The binary keeps the command line, the report's head and the charts.
//!
//! Every workload runs the same way for every implementation and returns
//! what it measured; the callers only decide how often and in which order.
//! Throughput workloads count the CPU of the whole process (every thread:
//! the caller, tokio's workers, where hashwheel's driver and tokio's timer
//! driver run, and the implementation's own helper thread), less the helper
//! threads of the *other* implementations (pingora's clock thread and
//! futures-timer's thread, once started, live as long as the process).

pub mod compare;
pub mod config;
pub mod cpu;
pub mod in_task;
pub mod io;
pub mod plain_rt;
pub mod plain_thread;
pub mod queue;
pub mod replay;
pub mod section;
pub mod server;
pub mod stress;
pub mod support;
pub mod table;
pub mod task_rt;
pub mod timers;

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// An implementation under test. Its type, and the kinds of timer it
/// offers (the traits its type implements, which decide the workloads it
/// runs), are in [`timers`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Imp {
    /// This crate's timer futures (`Sleep`, `Timeout`).
    Hashwheel,
    /// This crate's free functions (`hashwheel::sleep`, `hashwheel::timeout`)
    /// on the runtime's default wheel.
    HashwheelFree,
    /// This crate's `DelayQueue`.
    HashwheelQueue,
    /// `tokio::time`.
    Tokio,
    /// `tokio::time` on a runtime built with tokio's alternative timer
    /// (`Builder::enable_alt_timer`: a timer wheel per worker, registrations
    /// queued on the worker and filed when it parks): the calls of
    /// [`Imp::Tokio`] on another runtime. Only with `--cfg tokio_unstable`,
    /// which that builder method needs, as its users build.
    #[cfg(tokio_unstable)]
    TokioAlt,
    /// `tokio_util::time::DelayQueue`.
    TokioUtil,
    /// `pingora_timeout::fast_timeout` (`fast_sleep`, `fast_timeout`).
    Pingora,
    /// `futures_timer::Delay`.
    FuturesTimer,
    /// No timer at all: the baseline of the server and timeout rows, which
    /// do the same work without any timer.
    NoTimer,
    /// What any timer that wakes a task must do, and nothing else: read the
    /// clock for its deadline (`now + d`, as `tokio::time::sleep` does) and
    /// keep a clone of the task's waker, in a 32-byte record that the
    /// harness holds where it would hold a timer, then drops. No structure
    /// finds it at its deadline: the floor under the register + cancel and
    /// insert + cancel rows, not a timer.
    Floor,
}

/// Whether this build has the tokio-alt column ([`Imp::TokioAlt`]): only
/// with `RUSTFLAGS="--cfg tokio_unstable"`.
pub const ALT_TIMER_BUILT: bool = cfg!(tokio_unstable);

/// How to build with the tokio-alt column, for the messages that say it is
/// missing.
pub const ALT_TIMER_HOW: &str =
    "RUSTFLAGS=\"--cfg tokio_unstable\" CARGO_TARGET_DIR=target/unstable \
cargo run --release -p hashwheel-bench --bin compare -- ...";

impl Imp {
    pub const ALL: &[Imp] = &[
        Imp::Hashwheel,
        Imp::HashwheelFree,
        Imp::HashwheelQueue,
        Imp::Tokio,
        #[cfg(tokio_unstable)]
        Imp::TokioAlt,
        Imp::TokioUtil,
        Imp::Pingora,
        Imp::FuturesTimer,
        Imp::NoTimer,
        Imp::Floor,
    ];
    /// The server simulation: its no-timer baseline, every timer future, and
    /// tokio's alternative timer where it is built.
    pub const SERVER: &[Imp] = &[
        Imp::NoTimer,
        Imp::Hashwheel,
        Imp::HashwheelFree,
        Imp::Tokio,
        #[cfg(tokio_unstable)]
        Imp::TokioAlt,
        Imp::Pingora,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Imp::Hashwheel => "hashwheel",
            Imp::HashwheelFree => "hashwheel::sleep (default wheel)",
            Imp::HashwheelQueue => "hashwheel DelayQueue",
            Imp::Tokio => "tokio::time",
            #[cfg(tokio_unstable)]
            Imp::TokioAlt => "tokio::time (alt timer)",
            Imp::TokioUtil => "tokio-util DelayQueue",
            Imp::Pingora => "pingora-timeout",
            Imp::FuturesTimer => "futures-timer",
            Imp::NoTimer => "no timer (baseline)",
            Imp::Floor => "floor (deadline + waker, no timer)",
        }
    }

    /// A short name for benchmark ids and command lines.
    pub fn id(self) -> &'static str {
        match self {
            Imp::Hashwheel => "hashwheel",
            Imp::HashwheelFree => "hashwheel_free",
            Imp::HashwheelQueue => "hashwheel_queue",
            Imp::Tokio => "tokio",
            #[cfg(tokio_unstable)]
            Imp::TokioAlt => "tokio_alt",
            Imp::TokioUtil => "tokio_util",
            Imp::Pingora => "pingora",
            Imp::FuturesTimer => "futures_timer",
            Imp::NoTimer => "none",
            Imp::Floor => "floor",
        }
    }

    /// The implementation whose [`Imp::id`] is `id`, with `-` read as `_`
    /// (`tokio-alt` is `tokio_alt`).
    pub fn from_id(id: &str) -> Option<Imp> {
        let id = id.replace('-', "_");
        Imp::ALL.iter().copied().find(|i| i.id() == id)
    }

    /// Whether this is `tokio::time` on a runtime with tokio's alternative
    /// timer ([`Imp::TokioAlt`]), which runs on runtimes of its own.
    pub fn alt_timer(self) -> bool {
        #[cfg(tokio_unstable)]
        if self == Imp::TokioAlt {
            return true;
        }
        false
    }

    /// The calls a workload makes for this implementation: tokio's for
    /// [`Imp::TokioAlt`], whose difference is its runtime; itself for the
    /// others.
    pub fn api(self) -> Imp {
        if self.alt_timer() {
            Imp::Tokio
        } else {
            self
        }
    }

    /// The name (`comm`) of the thread the implementation runs on its own.
    pub fn helper_thread(self) -> Option<&'static str> {
        match self {
            Imp::Pingora => Some("Timer thread"),
            Imp::FuturesTimer => Some("futures-timer"),
            _ => None,
        }
    }
}

/// Polls `f` once with a waker that does nothing.
pub fn poll_noop<F: Future + ?Sized>(f: Pin<&mut F>) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(Waker::noop()))
}

/// A future that is pending on its first poll and ready on the second, or
/// ready at once.
#[derive(Debug, Default)]
pub struct PendingOnce(bool);

impl PendingOnce {
    /// Pending once first when `pending_first`, else ready at once.
    pub fn new(pending_first: bool) -> PendingOnce {
        PendingOnce(!pending_first)
    }
}

impl Future for PendingOnce {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            Poll::Pending
        }
    }
}

/// A small deterministic generator (xorshift64*), so that every
/// implementation gets the same deadlines.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `lo..hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo)
    }

    /// `n` durations uniformly in `lo..hi`, at microsecond resolution.
    pub fn durations(&mut self, n: usize, lo: Duration, hi: Duration) -> Vec<Duration> {
        let (lo, hi) = (lo.as_micros() as u64, hi.as_micros() as u64);
        (0..n)
            .map(|_| Duration::from_micros(self.range(lo, hi)))
            .collect()
    }

    /// A random permutation of `0..n` (Fisher–Yates).
    pub fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut p: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = self.range(0, i as u64 + 1) as usize;
            p.swap(i, j);
        }
        p
    }
}

/// The inputs of the insert/cancel rows: `n` deadlines 10–60 s ahead and a
/// random order of `0..n`, the same for every implementation.
pub fn pending_inputs(n: usize, seed: u64) -> (Vec<Duration>, Vec<usize>) {
    let mut rng = Rng::new(seed);
    let deadlines = rng.durations(n, Duration::from_secs(10), Duration::from_secs(60));
    (deadlines, rng.permutation(n))
}

/// The median of `v` (sorted in place); NaN when empty.
pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The `q` quantile (0..=1) of sorted `v`, nearest rank.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}
