//! `hashwheel::io` beside tokio-io-timeout, where a server's streams live:
//! in tasks on the workers of a multi-thread runtime.
//!
//! Columns: [`Imp::Hashwheel`] is `hashwheel::io::TimeoutStream` made with
//! `new` (the runtime's default wheel, as a switch from tokio-io-timeout
//! makes it); [`Imp::Tokio`] is `tokio_io_timeout::TimeoutStream` (built on
//! `tokio::time`), or, in the idle-timeout rows, the idle timeout written
//! by hand with a `tokio::time::Sleep` beside the stream, reset after every
//! read (and [`Imp::HashwheelFree`] the same with `hashwheel::sleep`);
//! [`Imp::NoTimer`] is the bare stream. Each row's name says which.
//!
//! - Per read ([`read_costs`]): one task per worker (1 and 2 workers)
//!   reads `ops` times from its own wrapped stream, in one poll of the task,
//!   with the task's context, as [`tasks::timed_tasks`] runs every in-task
//!   row. The stream's reads are always ready, or pending once and then
//!   ready (a socket between messages: the wrapper's countdown starts at
//!   the pending poll and ends at the ready one). The added cost is the
//!   row's CPU per read less the bare stream's median.
//! - Idle connections ([`idle_connections`]): `n` tasks, each with a
//!   wrapped stream whose read never completes. Memory: RSS growth per
//!   connection while they are made and their reads wait, in a fresh child
//!   process (the bare stream's tasks are the baseline). Reap: with a 2 s
//!   timeout, the process CPU from the moment every read waits until every
//!   task has had its `TimedOut` and ended, per connection. A task that
//!   ends before its timeout fails the run. Both crates set a read timeout;
//!   hashwheel's idle timeout, which tokio-io-timeout lacks, has rows of
//!   its own beside them.
//!
//! Implementations alternate round by round, as `table::rounds` does.
//! [`rows`], before the tests, is `compare`'s `io_read` and `io_idle`
//! sections.

use std::future::{poll_fn, Future};
use std::hint::black_box;
use std::io;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant as StdInstant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Instant;

use crate::cpu::{rss_bytes, Meter, Span};
use crate::median;
use crate::support::{child_job, multi_thread, unsupported, wait_until, FAR};
use crate::task_rt::{run_in_task, timed_tasks, Rt, TaskEnv, RT1};
use crate::Imp;

/// One measured value: a row of the caller's table, its unit, a column.
#[derive(Debug, Clone)]
pub struct Value {
    pub row: String,
    pub unit: &'static str,
    pub imp: Imp,
    pub value: f64,
}

/// The columns of the read-timeout rows.
const READ: [Imp; 3] = [Imp::NoTimer, Imp::Hashwheel, Imp::Tokio];
/// The columns of the idle-timeout rows: the wrapper, and the idle timeout
/// by hand with each crate's sleep.
const IDLE: [Imp; 4] = [Imp::NoTimer, Imp::Hashwheel, Imp::HashwheelFree, Imp::Tokio];

/// How long the reap rows' timeouts are: long enough that every
/// connection's read waits before the first one times out.
const REAP_AFTER: Duration = Duration::from_secs(2);

/// How many idle connections the idle rows hold.
pub const IDLE_CONNS: usize = 100_000;

/// Runs `f` for every implementation in `imps` but those in `skip`, `n`
/// times, each round starting with the next (as `table::rounds`).
fn rounds(n: usize, imps: &[Imp], skip: &[Imp], mut f: impl FnMut(Imp)) {
    let imps: Vec<Imp> = imps.iter().copied().filter(|i| !skip.contains(i)).collect();
    for r in 0..n {
        for k in 0..imps.len() {
            f(imps[(k + r) % imps.len()]);
        }
    }
}

/// The values of `row` and, for every column but the bare stream, a row
/// `added` of each value less the bare stream's median (when it ran).
fn with_added(row: &str, added: &str, unit: &'static str, values: Vec<(Imp, f64)>) -> Vec<Value> {
    let mut bare: Vec<f64> = values
        .iter()
        .filter(|(i, _)| *i == Imp::NoTimer)
        .map(|&(_, v)| v)
        .collect();
    let base = (!bare.is_empty()).then(|| median(&mut bare));
    let mut out: Vec<Value> = values
        .iter()
        .map(|&(imp, value)| Value {
            row: row.to_string(),
            unit,
            imp,
            value,
        })
        .collect();
    if let Some(base) = base {
        out.extend(
            values
                .iter()
                .filter(|(i, _)| *i != Imp::NoTimer)
                .map(|&(imp, v)| Value {
                    row: added.to_string(),
                    unit,
                    imp,
                    value: v - base,
                }),
        );
    }
    out
}

// ===== streams =====

/// A stream whose reads are ready with one byte, every time, or (with
/// `pending_first`) pending once and then ready, as a socket read between
/// messages is. Its writes are ready.
#[derive(Debug)]
struct Script {
    pending_first: bool,
    pending: bool,
}

impl Script {
    fn new(pending_first: bool) -> Script {
        Script {
            pending_first,
            pending: pending_first,
        }
    }
}

impl AsyncRead for Script {
    /// Not inlined, as a socket's read is not (its body is the I/O
    /// driver's): otherwise the bare stream's loop, which nothing stands
    /// between, folds into a few instructions that no wrapped stream's can.
    #[inline(never)]
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.pending {
            self.pending = false;
            return Poll::Pending;
        }
        self.pending = self.pending_first;
        buf.put_slice(&[1]);
        Poll::Ready(Ok(()))
    }
}

/// A stream whose reads wait forever, keeping the task's waker as a
/// socket's registration does. Its writes are ready.
#[derive(Debug, Default)]
struct Idle {
    waker: Option<Waker>,
}

impl AsyncRead for Idle {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        _: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if !self.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            self.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}

/// Ready writes, for the streams above: a `TimeoutStream` of either crate
/// wants an `AsyncWrite`.
macro_rules! ready_writes {
    ($ty:ty) => {
        impl AsyncWrite for $ty {
            fn poll_write(
                self: Pin<&mut Self>,
                _: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                Poll::Ready(Ok(buf.len()))
            }
            fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(()))
            }
            fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(()))
            }
        }
    };
}
ready_writes!(Script);
ready_writes!(Idle);

// ===== per read =====

/// One read of `r` with `cx`, as an `.await` polls it: pending once first
/// when `pending_first`, then ready with one byte.
fn read_once<R: AsyncRead + ?Sized>(
    mut r: Pin<&mut R>,
    cx: &mut Context<'_>,
    pending_first: bool,
    bytes: &mut [u8; 16],
) {
    let mut buf = ReadBuf::new(bytes);
    if pending_first {
        assert!(r.as_mut().poll_read(cx, &mut buf).is_pending());
    }
    match r.poll_read(cx, &mut buf) {
        Poll::Ready(Ok(())) => assert_eq!(buf.filled().len(), 1),
        other => panic!("a read of the script: {other:?}"),
    }
    black_box(&buf);
}

/// What wraps the stream in a per-read row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Timeout {
    /// A 30 s read timeout (tokio-io-timeout's `TimeoutStream` in the
    /// `Tokio` column).
    Read,
    /// A 30 s idle timeout: the wrapper's in the `Hashwheel` column; by
    /// hand, a sleep reset after every read, with `hashwheel::sleep` in the
    /// `HashwheelFree` column and `tokio::time::sleep` in the `Tokio` one.
    Idle,
    /// The wrapper with no timeout set (the `io_reads` job alone).
    None,
}

impl Timeout {
    fn from_id(id: &str) -> Option<Timeout> {
        match id {
            "read" => Some(Timeout::Read),
            "idle" => Some(Timeout::Idle),
            "none" => Some(Timeout::None),
            _ => None,
        }
    }
}

/// In each task (one per worker of `rt`): `ops` reads of one wrapped
/// [`Script`] stream.
fn reads(rt: Rt<'_>, imp: Imp, timeout: Timeout, pending_first: bool, ops: u64) -> Span {
    timed_tasks(rt, imp, move |cx| {
        read_loop(cx, imp, timeout, pending_first, ops)
    })
}

/// `ops` reads of one [`Script`] stream wrapped as `imp` wraps it with
/// `timeout`, polled with `cx`.
fn read_loop(cx: &mut Context<'_>, imp: Imp, timeout: Timeout, pending_first: bool, ops: u64) {
    let mut bytes = [0u8; 16];
    let stream = Script::new(pending_first);
    match (imp, timeout) {
        (Imp::NoTimer, _) => {
            let mut s = pin!(stream);
            for _ in 0..ops {
                read_once(s.as_mut(), cx, pending_first, &mut bytes);
            }
        }
        (Imp::Hashwheel, _) => {
            let mut s = hashwheel::io::TimeoutStream::new(stream);
            match timeout {
                Timeout::Read => s.set_read_timeout(Some(FAR)),
                Timeout::Idle => s.set_idle_timeout(Some(FAR)),
                Timeout::None => {}
            }
            for _ in 0..ops {
                read_once(Pin::new(&mut s), cx, pending_first, &mut bytes);
            }
        }
        (Imp::Tokio, Timeout::Read | Timeout::None) => {
            let mut s = pin!(tokio_io_timeout::TimeoutStream::new(stream));
            if timeout == Timeout::Read {
                s.as_mut().set_read_timeout_pinned(Some(FAR));
            }
            for _ in 0..ops {
                read_once(s.as_mut(), cx, pending_first, &mut bytes);
            }
        }
        (Imp::Tokio, Timeout::Idle) => {
            let sleep = pin!(tokio::time::sleep(FAR));
            by_hand(stream, sleep, cx, pending_first, ops, |s, at| s.reset(at));
        }
        (Imp::HashwheelFree, Timeout::Idle) => {
            let mut sleep = hashwheel::sleep(FAR);
            let sleep = Pin::new(&mut sleep);
            by_hand(stream, sleep, cx, pending_first, ops, |s, at| {
                s.get_mut().reset(at)
            });
        }
        _ => unsupported(imp),
    }
}

/// The idle timeout by hand, as a server's `select!` loop keeps it: the
/// read polled first, the sleep polled when the read waits, and the sleep
/// moved `FAR` past every read that completes.
fn by_hand<S: Future<Output = ()> + ?Sized>(
    stream: Script,
    mut sleep: Pin<&mut S>,
    cx: &mut Context<'_>,
    pending_first: bool,
    ops: u64,
    reset: impl Fn(Pin<&mut S>, Instant),
) {
    let mut s = pin!(stream);
    let mut bytes = [0u8; 16];
    for _ in 0..ops {
        let mut buf = ReadBuf::new(&mut bytes);
        if pending_first {
            assert!(s.as_mut().poll_read(cx, &mut buf).is_pending());
            assert!(sleep.as_mut().poll(cx).is_pending());
        }
        assert!(s.as_mut().poll_read(cx, &mut buf).is_ready());
        reset(sleep.as_mut(), Instant::now() + FAR);
        black_box(&buf);
    }
}

/// The per-read rows: CPU per read of each column, and the added cost over
/// the bare stream, for a read timeout on 1 and 2 workers and for an idle
/// timeout on 1 worker.
pub fn read_costs(env: &TaskEnv, ops: u64, n_rounds: usize, skip: &[Imp]) -> Vec<Value> {
    let mut out = Vec::new();
    let kinds = [(false, "always ready"), (true, "pending once, then ready")];
    for workers in [1, 2] {
        let head = match workers {
            1 => "io, task, 1 worker".to_string(),
            n => format!("io, task, {n} workers (a task on each)"),
        };
        for (pending_first, what) in kinds {
            let row = format!(
                "{head}: read {what}, 30 s read timeout (tokio::time = tokio-io-timeout), CPU per read"
            );
            let added = format!(
                "{head}: read {what}, 30 s read timeout: added CPU per read (wrapper − bare stream)"
            );
            let mut values = Vec::new();
            rounds(n_rounds, &READ, skip, |imp| {
                let span = reads(env.rt(imp, workers), imp, Timeout::Read, pending_first, ops);
                values.push((imp, span.per_op(ops * workers as u64).0));
            });
            out.extend(with_added(&row, &added, "ns/read", values));
        }
    }
    for (pending_first, what) in kinds {
        let head = "io, task, 1 worker";
        let row = format!(
            "{head}: read {what}, 30 s idle timeout (hashwheel::sleep, tokio::time: a sleep reset after every read, by hand), CPU per read"
        );
        let added =
            format!("{head}: read {what}, 30 s idle timeout: added CPU per read (− bare stream)");
        let mut values = Vec::new();
        rounds(n_rounds, &IDLE, skip, |imp| {
            let span = reads(env.rt(imp, 1), imp, Timeout::Idle, pending_first, ops);
            values.push((imp, span.per_op(ops).0));
        });
        out.extend(with_added(&row, &added, "ns/read", values));
    }
    out
}

// ===== idle connections =====

/// What the idle connections' tasks count.
#[derive(Debug, Default)]
struct Conns {
    /// Tasks whose read has waited once.
    waiting: AtomicUsize,
    /// Tasks whose read ended with `TimedOut`.
    reaped: AtomicUsize,
    /// Tasks whose read ended with `TimedOut` before its timeout.
    early: AtomicUsize,
    /// Tasks whose read ended otherwise.
    wrong: AtomicUsize,
}

/// Spawns one idle connection's task on `rt`: a stream wrapped as `imp`
/// wraps it, with a `kind` timeout of `timeout` (a read timeout counts from
/// the read's first wait, hashwheel's idle timeout from its setting; the
/// bare stream: none), read until the read ends.
/// Each is its own future type, so that each task is the size its wrapper
/// makes it; the wrapper is made in its task, as a server wraps the stream
/// it accepted, so that the task holds it once.
fn spawn_conn(
    rt: &tokio::runtime::Runtime,
    imp: Imp,
    kind: Timeout,
    timeout: Duration,
    conns: &Arc<Conns>,
) {
    let conns = conns.clone();
    let stream = Idle::default();
    match imp {
        Imp::NoTimer => drop(rt.spawn(async move {
            wait_pinned(pin!(stream), None, timeout, conns).await;
        })),
        Imp::Hashwheel if kind == Timeout::Idle => drop(rt.spawn(async move {
            // Read before the timeout is set, whose idle time counts from
            // a clock read of its own, at or after this one.
            let set = Some(Instant::now());
            let mut s = hashwheel::io::TimeoutStream::new(stream);
            s.set_idle_timeout(Some(timeout));
            wait_pinned(pin!(s), set, timeout, conns).await;
        })),
        Imp::Hashwheel => drop(rt.spawn(async move {
            let mut s = hashwheel::io::TimeoutStream::new(stream);
            s.set_read_timeout(Some(timeout));
            wait_pinned(pin!(s), None, timeout, conns).await;
        })),
        Imp::Tokio => drop(rt.spawn(async move {
            let mut s = tokio_io_timeout::TimeoutStream::new(stream);
            s.set_read_timeout(Some(timeout));
            wait_pinned(pin!(s), None, timeout, conns).await;
        })),
        _ => unsupported(imp),
    }
}

/// Reads `r` until the read ends; counts its first wait, and how it ended:
/// with `TimedOut`, not before `timeout` from `start` (or from the first
/// wait).
async fn wait_pinned<R: AsyncRead + ?Sized>(
    mut r: Pin<&mut R>,
    start: Option<Instant>,
    timeout: Duration,
    conns: Arc<Conns>,
) {
    let mut bytes = [0u8; 64];
    let mut start = start;
    let mut counted = false;
    let end = poll_fn(|cx| {
        let mut buf = ReadBuf::new(&mut bytes);
        // Read before the poll, whose countdown (if it starts one) counts
        // from a clock read of its own, at or after this one.
        let before = (!counted).then(Instant::now);
        let p = r.as_mut().poll_read(cx, &mut buf);
        if let (Poll::Pending, Some(before)) = (&p, before) {
            counted = true;
            start.get_or_insert(before);
            conns.waiting.fetch_add(1, Ordering::AcqRel);
        }
        p
    })
    .await;
    let on_time = start.is_some_and(|s| s.elapsed() >= timeout);
    match end {
        Err(e) if e.kind() == io::ErrorKind::TimedOut && on_time => &conns.reaped,
        Err(e) if e.kind() == io::ErrorKind::TimedOut => &conns.early,
        _ => &conns.wrong,
    }
    .fetch_add(1, Ordering::AcqRel);
}

/// Spawns `n` idle connections on `rt` and waits until every read waits.
fn open(
    rt: &tokio::runtime::Runtime,
    imp: Imp,
    kind: Timeout,
    n: usize,
    timeout: Duration,
) -> Arc<Conns> {
    let conns = Arc::new(Conns::default());
    for _ in 0..n {
        spawn_conn(rt, imp, kind, timeout, &conns);
    }
    let limit = StdInstant::now() + Duration::from_secs(60);
    let all = wait_until(limit, || conns.waiting.load(Ordering::Acquire) == n);
    assert!(all, "{n} idle connections did not all start");
    conns
}

/// The CPU to reap `n` idle connections on `rt`: from the moment every
/// read waits (each with a [`REAP_AFTER`] timeout of `kind`) until every
/// task has ended, per connection.
fn reap(rt: Rt<'_>, imp: Imp, kind: Timeout, n: usize) -> f64 {
    let conns = open(rt.rt, imp, kind, n, REAP_AFTER);
    assert_eq!(
        conns.reaped.load(Ordering::Acquire),
        0,
        "a connection was reaped before every read waited: raise REAP_AFTER"
    );
    let m = Meter::start(imp);
    let limit = StdInstant::now() + REAP_AFTER + Duration::from_secs(60);
    let ended = [&conns.reaped, &conns.early, &conns.wrong];
    let done = || {
        ended
            .iter()
            .map(|c| c.load(Ordering::Acquire))
            .sum::<usize>()
            == n
    };
    assert!(wait_until(limit, done), "{n} idle connections not reaped");
    let span = m.stop();
    let [early, wrong] = [&conns.early, &conns.wrong].map(|c| c.load(Ordering::Acquire));
    assert_eq!(
        (early, wrong),
        (0, 0),
        "{}: connections reaped early, and ended otherwise than TimedOut",
        imp.name()
    );
    span.cpu_ns as f64 / n as f64
}

/// The environment variable (the harness's) that makes this binary a
/// child measuring one thing; this module's jobs are
/// `io_memory <imp id> <hold> <read|idle> <n>`,
/// `io_reads <imp id> <read|idle|none> <ready|pending> <ops>` and
/// `io_reap <imp id> <read|idle> <n>`.
const CHILD: &str = "HASHWHEEL_BENCH_CHILD";

/// How a connection's task holds its wrapper, in the memory rows. The
/// wrapper is made and its timeout set in the task, each way a
/// tokio-io-timeout user can (its wrapper is `!Unpin`); hashwheel's is
/// held the same three ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hold {
    /// Pinned in the task (`pin!`), then the timeout set through the pin.
    PinThenSet,
    /// `Box::pin`, then the timeout set through the pin.
    BoxPin,
    /// The timeout set on the wrapper, which is then pinned in the task
    /// (`tokio::pin!`): the common tokio-io-timeout pattern.
    SetThenPin,
}

impl Hold {
    const ALL: [Hold; 3] = [Hold::PinThenSet, Hold::BoxPin, Hold::SetThenPin];

    fn id(self) -> &'static str {
        match self {
            Hold::PinThenSet => "pin_then_set",
            Hold::BoxPin => "box_pin",
            Hold::SetThenPin => "set_then_pin",
        }
    }

    fn from_id(id: &str) -> Option<Hold> {
        Hold::ALL.into_iter().find(|h| h.id() == id)
    }

    fn what(self) -> &'static str {
        match self {
            Hold::PinThenSet => "wrapper pinned in the task, then its timeout set",
            Hold::BoxPin => "wrapper Box::pin'd, then its timeout set",
            Hold::SetThenPin => "timeout set, then the wrapper tokio::pin!'d in the task",
        }
    }
}

/// How many workers the memory rows' runtime has.
const MEMORY_WORKERS: usize = 2;

/// Spawns one idle connection over `tokio::io::duplex` on `rt`: the task
/// holds both halves (the peer never writes) and reads its half, wrapped
/// as `imp` wraps it and held as `hold` says, with a [`FAR`] timeout of
/// `kind` (read, or hashwheel's idle), until the read ends.
fn spawn_duplex_conn(
    rt: &tokio::runtime::Runtime,
    imp: Imp,
    hold: Hold,
    kind: Timeout,
    conns: &Arc<Conns>,
) {
    let conns = conns.clone();
    let (peer, socket) = tokio::io::duplex(64);
    macro_rules! held {
        ($new:expr, $set:ident, $set_pinned:ident) => {
            match hold {
                Hold::PinThenSet => drop(rt.spawn(async move {
                    let mut s = pin!($new(socket));
                    s.as_mut().$set_pinned(Some(FAR));
                    wait_pinned(s, None, FAR, conns).await;
                    drop(peer);
                })),
                Hold::BoxPin => drop(rt.spawn(async move {
                    let mut s = Box::pin($new(socket));
                    s.as_mut().$set_pinned(Some(FAR));
                    wait_pinned(s.as_mut(), None, FAR, conns).await;
                    drop(peer);
                })),
                Hold::SetThenPin => drop(rt.spawn(async move {
                    let mut s = $new(socket);
                    s.$set(Some(FAR));
                    tokio::pin!(s);
                    wait_pinned(s, None, FAR, conns).await;
                    drop(peer);
                })),
            }
        };
    }
    match imp {
        Imp::NoTimer => drop(rt.spawn(async move {
            wait_pinned(pin!(socket), None, FAR, conns).await;
            drop(peer);
        })),
        Imp::Hashwheel if kind == Timeout::Idle => held!(
            hashwheel::io::TimeoutStream::new,
            set_idle_timeout,
            set_idle_timeout_pinned
        ),
        Imp::Hashwheel => held!(
            hashwheel::io::TimeoutStream::new,
            set_read_timeout,
            set_read_timeout_pinned
        ),
        Imp::Tokio => held!(
            tokio_io_timeout::TimeoutStream::new,
            set_read_timeout,
            set_read_timeout_pinned
        ),
        _ => unsupported(imp),
    }
}

/// RSS growth per idle connection: `n` connections over `tokio::io::duplex`
/// (see [`spawn_duplex_conn`]) on a fresh 2-worker runtime, measured once
/// every read waits. The default wheel and tokio's timer are made before
/// the first measurement.
fn rss_per_conn(imp: Imp, hold: Hold, kind: Timeout, n: usize) -> f64 {
    let rt = multi_thread(MEMORY_WORKERS, RT1);
    let wheel = {
        let _g = rt.enter();
        hashwheel::Wheel::new()
    };
    let r = Rt {
        rt: &rt,
        wheel: &wheel,
        name: RT1,
        workers: MEMORY_WORKERS,
        alt_timer: false,
    };
    run_in_task(r, |cx| {
        let mut made = hashwheel::sleep(FAR);
        assert!(Pin::new(&mut made).poll(cx).is_pending());
        assert!(pin!(tokio::time::sleep(FAR)).poll(cx).is_pending());
    });
    let before = rss_bytes();
    let conns = Arc::new(Conns::default());
    for _ in 0..n {
        spawn_duplex_conn(&rt, imp, hold, kind, &conns);
    }
    let limit = StdInstant::now() + Duration::from_secs(60);
    let all = wait_until(limit, || conns.waiting.load(Ordering::Acquire) == n);
    assert!(all, "{n} idle connections did not all start");
    let after = rss_bytes();
    black_box(conns);
    rt.shutdown_background();
    (after - before) as f64 / n as f64
}

/// `ops` reads (always ready, or pending once and then ready) of a
/// [`Script`] stream wrapped as `imp` wraps it with `timeout`, in one task
/// on a current-thread runtime, as [`read_costs`] runs them: the job to run
/// under cachegrind, twice with different `ops`, for instructions per read
/// (see BENCHMARKS.md).
fn reads_alone(imp: Imp, timeout: Timeout, pending_first: bool, ops: u64) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(poll_fn(|cx| {
        read_loop(cx, imp, timeout, pending_first, ops);
        Poll::Ready(())
    }));
}

/// `n` idle connections (see [`spawn_conn`]) with a [`REAP_AFTER`] timeout
/// of `kind`, on a current-thread runtime with tokio's paused clock, made
/// and waiting before [`reap_phase`]: the job to run under callgrind, twice
/// with different `n`, for what reaping one costs, counted.
fn reap_alone(imp: Imp, kind: Timeout, n: usize) {
    assert!(
        imp != Imp::NoTimer,
        "a stream with no timeout is never reaped"
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("a runtime");
    let conns = Arc::new(Conns::default());
    rt.block_on(async {
        for _ in 0..n {
            spawn_conn(&rt, imp, kind, REAP_AFTER, &conns);
        }
        // Busy, so that the paused clock stands still until all wait.
        while conns.waiting.load(Ordering::Acquire) < n {
            tokio::task::yield_now().await;
        }
    });
    reap_phase(&rt, &conns, n);
    assert_eq!(
        conns.reaped.load(Ordering::Acquire),
        n,
        "each reaped on time"
    );
}

/// From every read waiting until every task has ended: the clock moved to
/// the timeouts, the timers fired, each task woken, its read ended with
/// `TimedOut`, the task and its wrapper dropped.
#[inline(never)]
fn reap_phase(rt: &tokio::runtime::Runtime, conns: &Conns, n: usize) {
    rt.block_on(async {
        tokio::time::sleep(REAP_AFTER).await;
        let ended = [&conns.reaped, &conns.early, &conns.wrong];
        while ended
            .iter()
            .map(|c| c.load(Ordering::Acquire))
            .sum::<usize>()
            < n
        {
            tokio::task::yield_now().await;
        }
    });
}

/// Call first in `main` (before `plain_thread::child_main`, which takes the
/// harness's other jobs): when this process is a child running one of this
/// module's jobs, runs it, prints its result and exits.
pub fn child_main() {
    let Ok(job) = std::env::var(CHILD) else {
        return;
    };
    match job.split_whitespace().collect::<Vec<_>>().as_slice() {
        ["io_memory", imp, hold, kind, n] => {
            let imp = Imp::from_id(imp).expect("implementation id");
            let hold = Hold::from_id(hold).expect("pin_then_set, box_pin or set_then_pin");
            let kind = Timeout::from_id(kind).expect("read or idle");
            println!(
                "{}",
                rss_per_conn(imp, hold, kind, n.parse().expect("count"))
            );
        }
        ["io_reads", imp, timeout, kind, ops] => {
            let imp = Imp::from_id(imp).expect("implementation id");
            let timeout = Timeout::from_id(timeout).expect("read, idle or none");
            let pending_first = match *kind {
                "ready" => false,
                "pending" => true,
                _ => panic!("ready or pending"),
            };
            reads_alone(imp, timeout, pending_first, ops.parse().expect("count"));
            println!("0");
        }
        ["io_reap", imp, kind, n] => {
            let imp = Imp::from_id(imp).expect("implementation id");
            let kind = Timeout::from_id(kind).expect("read or idle");
            reap_alone(imp, kind, n.parse().expect("count"));
            println!("0");
        }
        _ => return,
    }
    std::process::exit(0);
}

/// The idle-connection rows: memory per connection (and over a bare
/// stream's), the size of the wrapper a user holds, and the CPU to reap
/// them on 1 and 2 workers.
pub fn idle_connections(
    env: &TaskEnv,
    n: usize,
    mem_rounds: usize,
    n_rounds: usize,
    skip: &[Imp],
) -> Vec<Value> {
    let count = match n {
        n if n % 1000 == 0 => format!("{}k", n / 1000),
        n => n.to_string(),
    };
    let mut out = Vec::new();
    let head = format!("io, {count} idle connections");
    // Memory: a bare duplex connection per round, then each crate with a
    // read timeout and hashwheel with an idle timeout, held each way, the
    // columns alternating round by round.
    let mut bare = Vec::new();
    let mut held: Vec<(Hold, Timeout, Imp, f64)> = Vec::new();
    let job = |imp: Imp, hold: Hold, kind: Timeout| {
        let kind = if kind == Timeout::Idle {
            "idle"
        } else {
            "read"
        };
        format!("io_memory {} {} {kind} {n}", imp.id(), hold.id())
    };
    let columns: Vec<(Imp, Timeout)> = [
        (Imp::Hashwheel, Timeout::Read),
        (Imp::Tokio, Timeout::Read),
        (Imp::Hashwheel, Timeout::Idle),
    ]
    .into_iter()
    .filter(|(i, _)| !skip.contains(i))
    .collect();
    for r in 0..mem_rounds {
        match child_job(&job(Imp::NoTimer, Hold::PinThenSet, Timeout::Read)) {
            Some(b) => bare.push((Imp::NoTimer, b)),
            None => eprintln!("the bare stream's memory child failed"),
        }
        for hold in Hold::ALL {
            for k in 0..columns.len() {
                let (imp, kind) = columns[(k + r) % columns.len()];
                match child_job(&job(imp, hold, kind)) {
                    Some(b) => held.push((hold, kind, imp, b)),
                    None => eprintln!("{}: the memory child failed", imp.name()),
                }
            }
        }
    }
    for hold in Hold::ALL {
        for (kind, what) in [
            (
                Timeout::Read,
                "read timeout (tokio::time = tokio-io-timeout)",
            ),
            (Timeout::Idle, "hashwheel's idle timeout"),
        ] {
            let row = format!(
                "{head} over tokio::io::duplex, {MEMORY_WORKERS} workers, {}, {what}: memory per connection, RSS",
                hold.what()
            );
            let added = format!(
                "{head} over tokio::io::duplex, {MEMORY_WORKERS} workers, {}, {what}: memory per connection over a bare duplex's, RSS",
                hold.what()
            );
            let mut values = bare.clone();
            values.extend(
                held.iter()
                    .filter(|(h, k, _, _)| *h == hold && *k == kind)
                    .map(|&(_, _, imp, b)| (imp, b)),
            );
            out.extend(with_added(&row, &added, "B", values));
        }
    }
    let size = "io: size_of a TimeoutStream over its stream's (tokio::time = tokio-io-timeout)";
    let sizes = [
        (
            Imp::Hashwheel,
            size_of::<hashwheel::io::TimeoutStream<Idle>>(),
        ),
        (
            Imp::Tokio,
            size_of::<tokio_io_timeout::TimeoutStream<Idle>>(),
        ),
    ];
    for (imp, bytes) in sizes {
        out.push(Value {
            row: size.to_string(),
            unit: "B",
            imp,
            value: (bytes - size_of::<Idle>()) as f64,
        });
    }
    for workers in [1, 2] {
        for (kind, what, imps) in [
            (
                Timeout::Read,
                "read timeout; tokio::time = tokio-io-timeout",
                &[Imp::Hashwheel, Imp::Tokio][..],
            ),
            (
                Timeout::Idle,
                "hashwheel's idle timeout",
                &[Imp::Hashwheel][..],
            ),
        ] {
            let row = format!(
                "{head}, {workers} worker(s): CPU to reap them ({REAP_AFTER:?} {what}), per connection"
            );
            rounds(n_rounds, imps, skip, |imp| {
                out.push(Value {
                    row: row.clone(),
                    unit: "ns/conn",
                    imp,
                    value: reap(env.rt(imp, workers), imp, kind, n),
                });
            });
        }
    }
    out
}

/// What a read that waited and then completed leaves behind, for each
/// crate's wrapper: the wake-ups its task gets from then on, counted on
/// tokio's paused clock. `hashwheel::io`'s module docs cite these.
/// `cargo test -p hashwheel-bench --lib io::`
/// `compare`'s rows of `hashwheel::io` beside tokio-io-timeout: the
/// `io_read` and `io_idle` sections.
pub mod rows {
    use crate::config::Config;
    use crate::io::{self, Value};
    use crate::median;
    use crate::section::{Envs, Section};
    use crate::table::{self, Table};

    /// These workloads' sections, in the order `compare` runs them.
    pub const SECTIONS: &[Section] =
        &[Section::new("io_read", read), Section::new("io_idle", idle)];

    /// The fewest rounds of the io rows (per read and memory): each is short,
    /// and an added cost of a few ns is the difference of two noisy medians.
    const IO_ROUNDS: usize = 7;

    pub fn read(cfg: &Config, e: &Envs, t: &mut Table) {
        let skip = table::SKIP.get().map_or(&[][..], Vec::as_slice);
        let rounds = cfg.rounds.max(IO_ROUNDS);
        add(t, io::read_costs(&e.task, cfg.task_ops, rounds, skip));
    }

    pub fn idle(cfg: &Config, e: &Envs, t: &mut Table) {
        let skip = table::SKIP.get().map_or(&[][..], Vec::as_slice);
        let n = io::IDLE_CONNS;
        let mem_rounds = cfg.rounds.max(IO_ROUNDS);
        add(
            t,
            io::idle_connections(&e.task, n, mem_rounds, cfg.slow_rounds, skip),
        );
    }

    /// Adds `values` to the table, and prints each cell's median with its min
    /// and max (the table shows the median and the min).
    fn add(t: &mut Table, values: Vec<Value>) {
        let mut cells: Vec<(&str, &str, Vec<f64>)> = Vec::new();
        for v in &values {
            t.add(&v.row, v.unit, v.imp, v.value);
            match cells
                .iter_mut()
                .find(|(row, imp, _)| *row == v.row && *imp == v.imp.name())
            {
                Some((_, _, all)) => all.push(v.value),
                None => cells.push((&v.row, v.imp.name(), vec![v.value])),
            }
        }
        for (row, imp, mut all) in cells {
            let n = all.len();
            let median = median(&mut all);
            println!(
                "io spread, {row}, {imp}: median {median:.3} min {:.3} max {:.3} ({n} rounds)",
                all[0],
                all[n - 1]
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::task::{waker, ArcWake};
    use tokio::io::{AsyncWriteExt, DuplexStream};

    #[derive(Default)]
    struct Wakes(AtomicUsize);

    impl ArcWake for Wakes {
        fn wake_by_ref(w: &Arc<Wakes>) {
            w.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// When the read completes, and what the task does next.
    #[derive(Debug, Clone, Copy)]
    struct Case {
        /// The read completes half a millisecond past one of tokio's
        /// ticks, not on one.
        mid_tick: bool,
        /// The task reads again at once (the read waits).
        read_again: bool,
        /// Then the task waits this long on something else.
        then: Duration,
    }

    /// With `s` (a 30 s read timeout set) and its peer: a read that waits,
    /// a byte from the peer, the read that completes, then what `case`
    /// says. The wake-ups from the completing read on: during it, and
    /// after it.
    async fn wakes_after_a_read<S: AsyncRead + ?Sized>(
        mut s: Pin<&mut S>,
        mut peer: DuplexStream,
        case: Case,
    ) -> (usize, usize) {
        let wakes = Arc::new(Wakes::default());
        let w = waker(wakes.clone());
        let mut cx = Context::from_waker(&w);
        let mut bytes = [0u8; 8];
        let mut read = |s: Pin<&mut S>| s.poll_read(&mut cx, &mut ReadBuf::new(&mut bytes));
        let count = || wakes.0.load(Ordering::SeqCst);
        assert!(read(s.as_mut()).is_pending());
        if case.mid_tick {
            tokio::time::advance(Duration::from_micros(500)).await;
        }
        peer.write_all(b"x").await.unwrap();
        let before = count();
        assert!(matches!(read(s.as_mut()), Poll::Ready(Ok(()))));
        let during = count() - before;
        if case.read_again {
            assert!(read(s.as_mut()).is_pending());
        }
        tokio::time::sleep(case.then).await;
        (during, count() - before - during)
    }

    const T: Duration = Duration::from_secs(30);

    /// `f` on a fresh runtime with a paused clock: each case starts on
    /// one of tokio's ticks.
    fn paused<F: Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .expect("a runtime")
            .block_on(f)
    }

    fn tokio_io_timeout(case: Case) -> (usize, usize) {
        paused(async {
            let (peer, socket) = tokio::io::duplex(64);
            let mut s = pin!(tokio_io_timeout::TimeoutStream::new(socket));
            s.as_mut().set_read_timeout_pinned(Some(T));
            wakes_after_a_read(s, peer, case).await
        })
    }

    fn hashwheel(case: Case) -> (usize, usize) {
        paused(async {
            let (peer, socket) = tokio::io::duplex(64);
            let mut s = hashwheel::io::TimeoutStream::new(socket);
            s.set_read_timeout(Some(T));
            wakes_after_a_read(Pin::new(&mut s), peer, case).await
        })
    }

    fn case(mid_tick: bool, read_again: bool, then: Duration) -> Case {
        Case {
            mid_tick,
            read_again,
            then,
        }
    }

    /// tokio-io-timeout moves its sleep to the present when the read
    /// completes: on one of tokio's ticks the task is woken at once, during
    /// that read; between two, it is woken at the next tick, unless it
    /// reads again first (which moves the sleep 30 s on).
    #[test]
    fn tokio_io_timeout_wakes_the_task_once_more() {
        let ms = Duration::from_millis;
        for read_again in [false, true] {
            let on_tick = case(false, read_again, ms(10));
            assert_eq!(tokio_io_timeout(on_tick), (1, 0), "{on_tick:?}");
        }
        assert_eq!(tokio_io_timeout(case(true, false, ms(1))), (0, 1));
        assert_eq!(tokio_io_timeout(case(true, false, T + ms(1))), (0, 1));
        assert_eq!(tokio_io_timeout(case(true, true, ms(10))), (0, 0));
    }

    /// hashwheel leaves its sleep where it was: a task that waits
    /// elsewhere is woken once, at the old deadline; one that reads again
    /// is woken once at the old deadline too (its read finds nothing due
    /// and waits on), and not before.
    #[test]
    fn hashwheel_wakes_a_task_that_waits_elsewhere_at_the_old_deadline() {
        let ms = Duration::from_millis;
        for mid_tick in [false, true] {
            let c = |read_again, then| case(mid_tick, read_again, then);
            assert_eq!(hashwheel(c(false, ms(10))), (0, 0));
            assert_eq!(hashwheel(c(false, T - ms(10))), (0, 0));
            assert_eq!(hashwheel(c(false, T + ms(1))), (0, 1));
            assert_eq!(hashwheel(c(true, T - ms(10))), (0, 0));
            assert_eq!(hashwheel(c(true, T + ms(1))), (0, 1));
        }
    }
}
