//! The workloads. Each runs one implementation once and returns what it
//! measured.

use std::future::{poll_fn, Future};
use std::hint::black_box;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::task::{Context, Wake, Waker};
use std::time::{Duration, Instant as StdInstant};

use hashwheel::Wheel;
use pingora_timeout::fast_timeout::{fast_sleep, fast_timeout};
use tokio::runtime::Runtime;
use tokio::time::Instant;
use tokio_util::time::DelayQueue;

use super::cpu::{rss_growth_per, threads_cpu_ns, Meter, Span};
use super::queue::{self, Queue};
use super::support::{
    child_job, lock, multi_thread, unsupported, wait_until, InsertCancel, CHILD, FAR,
};
use super::{poll_noop, quantile, Imp, PendingOnce, Rng};

/// A multi-threaded runtime with two workers (a small server), its threads
/// named `name`.
pub fn runtime(name: &str) -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(name)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// A current-thread runtime on tokio's paused clock.
fn paused_runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("tokio runtime")
}

/// What the throughput workloads share across rounds, as a long-running
/// server would: a runtime, a wheel on it and a `DelayQueue` of each kind.
#[derive(Debug)]
pub struct Env {
    pub rt: Runtime,
    pub wheel: Wheel,
    dq: Mutex<DelayQueue<u32>>,
    hq: Mutex<hashwheel::DelayQueue<u32>>,
}

impl Default for Env {
    fn default() -> Self {
        Env::new()
    }
}

impl Env {
    pub fn new() -> Env {
        let rt = runtime("bench-rt");
        let (wheel, dq) = {
            let _g = rt.enter();
            (Wheel::new(), Mutex::new(DelayQueue::new()))
        };
        let hq = Mutex::new(wheel.delay_queue());
        Env { rt, wheel, dq, hq }
    }
}

// ===== register + cancel =====

fn register_cancel_loop(imp: Imp, wheel: &Wheel, n: u64) {
    match imp {
        #[cfg(tokio_unstable)]
        Imp::TokioAlt => unsupported(imp),
        Imp::Hashwheel => {
            for _ in 0..n {
                let mut s = wheel.sleep(FAR);
                assert!(poll_noop(Pin::new(&mut s)).is_pending());
            }
        }
        Imp::HashwheelFree => {
            for _ in 0..n {
                let mut s = hashwheel::sleep(FAR);
                assert!(poll_noop(Pin::new(&mut s)).is_pending());
            }
        }
        Imp::Tokio => {
            for _ in 0..n {
                assert!(poll_noop(pin!(tokio::time::sleep(FAR))).is_pending());
            }
        }
        Imp::Pingora => {
            for _ in 0..n {
                assert!(poll_noop(pin!(fast_sleep(FAR))).is_pending());
            }
        }
        Imp::FuturesTimer => {
            for _ in 0..n {
                assert!(poll_noop(pin!(futures_timer::Delay::new(FAR))).is_pending());
            }
        }
        Imp::TokioUtil | Imp::HashwheelQueue | Imp::NoTimer | Imp::Floor => unsupported(imp),
    }
}

/// `ops` times in all, spread over `threads` threads in parallel: make a
/// 30 s sleep, poll it once, drop it. The span runs from the moment every
/// thread is ready until the last has finished.
pub fn register_cancel(env: &Env, imp: Imp, threads: usize, ops: u64) -> Span {
    let per = ops / threads as u64;
    let ready = Barrier::new(threads + 1);
    let go = Barrier::new(threads + 1);
    let m = std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let _rt = env.rt.enter();
                ready.wait();
                go.wait();
                register_cancel_loop(imp, &env.wheel, per);
            });
        }
        ready.wait();
        let m = Meter::start(imp);
        go.wait();
        m
    });
    // The scope has joined every thread: the span ends after the last.
    m.stop()
}

// ===== timeout =====

/// Polls `f` to completion: pending once first when `pending_first`.
fn finish<F: Future>(mut f: Pin<&mut F>, pending_first: bool) {
    if pending_first {
        assert!(poll_noop(f.as_mut()).is_pending());
    }
    assert!(poll_noop(f).is_ready());
}

/// `ops` times: `timeout(30 s, f)` polled to completion, where `f` is
/// pending once and then ready, or ready at once.
pub fn timeout(env: &Env, imp: Imp, pending_first: bool, ops: u64) -> Span {
    let _rt = env.rt.enter();
    let f = || PendingOnce::new(pending_first);
    let m = Meter::start(imp);
    match imp {
        #[cfg(tokio_unstable)]
        Imp::TokioAlt => unsupported(imp),
        Imp::Hashwheel => {
            for _ in 0..ops {
                finish(pin!(env.wheel.timeout(FAR, f())), pending_first);
            }
        }
        Imp::HashwheelFree => {
            for _ in 0..ops {
                finish(pin!(hashwheel::timeout(FAR, f())), pending_first);
            }
        }
        Imp::Tokio => {
            for _ in 0..ops {
                finish(pin!(tokio::time::timeout(FAR, f())), pending_first);
            }
        }
        Imp::Pingora => {
            for _ in 0..ops {
                finish(pin!(fast_timeout(FAR, f())), pending_first);
            }
        }
        Imp::FuturesTimer => {
            // futures-timer has no timeout: race the future against a
            // `Delay`, as its users do.
            for _ in 0..ops {
                let race = futures::future::select(f(), futures_timer::Delay::new(FAR));
                finish(pin!(race), pending_first);
            }
        }
        Imp::TokioUtil | Imp::HashwheelQueue | Imp::NoTimer | Imp::Floor => unsupported(imp),
    }
    m.stop()
}

// ===== many pending timers =====

/// Makes one pending timer per deadline in `state` (`make`), keeping them
/// all, then cancels them in the order `order` gives (`cancel`).
fn insert_then_cancel<S, T>(
    imp: Imp,
    state: &mut S,
    deadlines: &[Duration],
    order: &[usize],
    mut make: impl FnMut(&mut S, Duration) -> T,
    mut cancel: impl FnMut(&mut S, T),
) -> InsertCancel {
    // The harness's own array is filled (its pages faulted in) before the
    // clock starts: only the timers' cost is measured.
    let mut held: Vec<Option<T>> = deadlines.iter().map(|_| None).collect();
    let m = Meter::start(imp);
    for (slot, &d) in held.iter_mut().zip(deadlines) {
        *slot = Some(make(state, d));
    }
    let insert = m.stop();
    let m = Meter::start(imp);
    for &i in order {
        let t = held[i].take().expect("each timer is cancelled once");
        cancel(state, t);
    }
    let cancel = m.stop();
    InsertCancel { insert, cancel }
}

/// Registers a pending timer future: polled once, as an awaited one is.
fn polled<F: Future + Unpin>(mut f: F) -> F {
    assert!(poll_noop(Pin::new(&mut f)).is_pending());
    f
}

/// Inserts one pending timer per deadline (10–60 s away in the callers),
/// then cancels them all in random order. A tokio `Sleep` is `!Unpin` and
/// must be pinned somewhere to be kept: it is boxed, as it would live in
/// its task's (boxed) future.
pub fn insert_cancel(env: &Env, imp: Imp, deadlines: &[Duration], order: &[usize]) -> InsertCancel {
    let _rt = env.rt.enter();
    fn dropped<T>(_: &mut (), t: T) {
        drop(t);
    }
    match imp {
        #[cfg(tokio_unstable)]
        Imp::TokioAlt => unsupported(imp),
        Imp::Hashwheel => {
            let make = |_: &mut (), d| polled(env.wheel.sleep(d));
            insert_then_cancel(imp, &mut (), deadlines, order, make, dropped)
        }
        Imp::Tokio => {
            let make = |_: &mut (), d| polled(Box::pin(tokio::time::sleep(d)));
            insert_then_cancel(imp, &mut (), deadlines, order, make, dropped)
        }
        Imp::FuturesTimer => {
            let make = |_: &mut (), d| polled(futures_timer::Delay::new(d));
            insert_then_cancel(imp, &mut (), deadlines, order, make, dropped)
        }
        Imp::TokioUtil => queue_insert_cancel(imp, &mut *lock(&env.dq), deadlines, order),
        Imp::HashwheelQueue => queue_insert_cancel(imp, &mut *lock(&env.hq), deadlines, order),
        Imp::Pingora | Imp::HashwheelFree | Imp::NoTimer | Imp::Floor => unsupported(imp),
    }
}

fn queue_insert_cancel<Q: Queue>(
    imp: Imp,
    q: &mut Q,
    deadlines: &[Duration],
    order: &[usize],
) -> InsertCancel {
    let make = |q: &mut Q, d| q.insert(0, d);
    let cancel = |q: &mut Q, k| {
        black_box(q.remove(&k));
    };
    insert_then_cancel(imp, q, deadlines, order, make, cancel)
}

// ===== memory =====

/// RSS bytes per pending timer: `n` timers (10–60 s away) made and kept in a
/// `Vec`, the `Vec` included. Run in a fresh process (see
/// [`bytes_per_timer`]) so that no freed memory is reused.
fn rss_per_timer(imp: Imp, n: usize) -> f64 {
    let env = Env::new();
    let deadlines = Rng::new(7).durations(n, Duration::from_secs(10), Duration::from_secs(60));
    let _rt = env.rt.enter();
    match imp {
        #[cfg(tokio_unstable)]
        Imp::TokioAlt => unsupported(imp),
        Imp::Hashwheel => rss_growth_per(&deadlines, |d| polled(env.wheel.sleep(d))),
        Imp::HashwheelFree | Imp::NoTimer | Imp::Floor => unsupported(imp),
        Imp::Tokio => rss_growth_per(&deadlines, |d| polled(Box::pin(tokio::time::sleep(d)))),
        Imp::FuturesTimer => rss_growth_per(&deadlines, |d| polled(futures_timer::Delay::new(d))),
        Imp::Pingora => rss_growth_per(&deadlines, |d| polled(Box::pin(fast_sleep(d)))),
        Imp::TokioUtil => {
            let mut dq = DelayQueue::new();
            rss_growth_per(&deadlines, |d| dq.insert(0u32, d))
        }
        Imp::HashwheelQueue => {
            let mut dq = env.wheel.delay_queue();
            rss_growth_per(&deadlines, |d| dq.insert(0u32, d))
        }
    }
}

/// Bytes per pending timer for `n` timers, measured in a child process
/// (this same binary, re-run with [`CHILD`] set).
pub fn bytes_per_timer(imp: Imp, n: usize) -> Option<f64> {
    child_job(&format!("memory {} {n}", imp.id()))
}

/// Call first in `main`: when this process is a measuring child, measures,
/// prints the result and exits.
pub fn child_main() {
    let Ok(job) = std::env::var(CHILD) else {
        return;
    };
    let words: Vec<&str> = job.split_whitespace().collect();
    match words.as_slice() {
        ["memory", imp, n] => {
            let imp = Imp::from_id(imp).expect("implementation id");
            println!("{}", rss_per_timer(imp, n.parse().expect("count")));
        }
        [job @ ("task_memory" | "task_memory_moved"), imp, n] => {
            let imp = Imp::from_id(imp).expect("implementation id");
            let n = n.parse().expect("count");
            let moved = *job == "task_memory_moved";
            println!("{}", super::tasks::rss_per_timer_in_task(imp, n, moved));
        }
        _ => panic!("{CHILD}: unknown job {job:?}"),
    }
    std::process::exit(0);
}

/// `size_of` of what a user holds for one pending timer.
pub fn size_of_timer(imp: Imp) -> usize {
    match imp {
        #[cfg(tokio_unstable)]
        Imp::TokioAlt => size_of::<tokio::time::Sleep>(),
        Imp::Hashwheel | Imp::HashwheelFree => size_of::<hashwheel::Sleep>(),
        Imp::Tokio => size_of::<tokio::time::Sleep>(),
        Imp::TokioUtil => size_of::<tokio_util::time::delay_queue::Key>(),
        Imp::HashwheelQueue => size_of::<hashwheel::delay_queue::Key>(),
        Imp::Pingora => size_of_val(&fast_sleep(FAR)),
        Imp::FuturesTimer => size_of::<futures_timer::Delay>(),
        Imp::NoTimer => 0,
        Imp::Floor => size_of::<tokio::time::Instant>() + size_of::<std::task::Waker>(),
    }
}

// ===== reset =====

/// `ops` times: move one pending timer's deadline later (30 s plus `i` ms:
/// a new tick each time, as a connection's idle timer moves per message),
/// and when `poll_each`, poll it after each move, as a `select!` loop does.
/// pingora-timeout has no reset: it makes a new sleep each time, and must
/// poll it to register it.
pub fn reset(env: &Env, imp: Imp, poll_each: bool, ops: u64) -> Span {
    let _rt = env.rt.enter();
    let base = Instant::now() + FAR;
    let at = |i: u64| base + Duration::from_millis(i);
    match imp {
        #[cfg(tokio_unstable)]
        Imp::TokioAlt => unsupported(imp),
        Imp::HashwheelFree | Imp::NoTimer | Imp::Floor => unsupported(imp),
        Imp::Hashwheel => {
            let mut s = polled(env.wheel.sleep_until(at(0)));
            let m = Meter::start(imp);
            for i in 1..=ops {
                s.reset(at(i));
                if poll_each {
                    assert!(poll_noop(Pin::new(&mut s)).is_pending());
                }
            }
            m.stop()
        }
        Imp::Tokio => {
            let mut s = pin!(tokio::time::sleep_until(at(0)));
            assert!(poll_noop(s.as_mut()).is_pending());
            let m = Meter::start(imp);
            for i in 1..=ops {
                s.as_mut().reset(at(i));
                if poll_each {
                    assert!(poll_noop(s.as_mut()).is_pending());
                }
            }
            m.stop()
        }
        Imp::TokioUtil => queue_reset(imp, &mut *lock(&env.dq), at, poll_each, ops),
        Imp::HashwheelQueue => queue_reset(imp, &mut *lock(&env.hq), at, poll_each, ops),
        Imp::FuturesTimer => {
            let mut s = polled(futures_timer::Delay::new(FAR));
            let m = Meter::start(imp);
            for i in 1..=ops {
                s.reset(FAR + Duration::from_millis(i));
                if poll_each {
                    assert!(poll_noop(Pin::new(&mut s)).is_pending());
                }
            }
            m.stop()
        }
        Imp::Pingora => {
            let mut s = pin!(fast_sleep(FAR));
            assert!(poll_noop(s.as_mut()).is_pending());
            let m = Meter::start(imp);
            for i in 1..=ops {
                s.set(fast_sleep(FAR + Duration::from_millis(i)));
                assert!(poll_noop(s.as_mut()).is_pending());
            }
            m.stop()
        }
    }
}

/// [`reset`] for a queue: its own reset, and `poll_expired` as the poll.
fn queue_reset<Q: Queue>(
    imp: Imp,
    q: &mut Q,
    at: impl Fn(u64) -> Instant,
    poll_each: bool,
    ops: u64,
) -> Span {
    let key = q.insert_at(0, at(0));
    let mut cx = Context::from_waker(Waker::noop());
    assert!(q.poll_next(&mut cx).is_pending());
    let m = Meter::start(imp);
    for i in 1..=ops {
        q.reset_at(&key, at(i));
        if poll_each {
            assert!(q.poll_next(&mut cx).is_pending());
        }
    }
    let span = m.stop();
    q.remove(&key);
    span
}

// ===== real-clock sleeps =====

type BoxSleep = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A sleep of `imp` that completes at or after `deadline`.
fn sleep_until(imp: Imp, wheel: &Wheel, deadline: StdInstant) -> BoxSleep {
    let left = || deadline.saturating_duration_since(StdInstant::now());
    match imp {
        #[cfg(tokio_unstable)]
        Imp::TokioAlt => unsupported(imp),
        Imp::Hashwheel => Box::pin(wheel.sleep_until(Instant::from_std(deadline))),
        Imp::Tokio => Box::pin(tokio::time::sleep_until(Instant::from_std(deadline))),
        Imp::Pingora => Box::pin(fast_sleep(left())),
        Imp::FuturesTimer => Box::pin(futures_timer::Delay::new(left())),
        Imp::TokioUtil | Imp::HashwheelQueue | Imp::HashwheelFree | Imp::NoTimer | Imp::Floor => {
            unsupported(imp)
        }
    }
}

/// Awaits `f`, counting `registered` up once its first poll is done.
async fn counted(mut f: BoxSleep, registered: &AtomicUsize) {
    let mut first = true;
    poll_fn(|cx| {
        let r = f.as_mut().poll(cx);
        if std::mem::take(&mut first) {
            registered.fetch_add(1, Ordering::Release);
        }
        r
    })
    .await
}

#[derive(Debug, Default)]
struct Burst {
    registered: AtomicUsize,
    done: AtomicUsize,
    early: AtomicUsize,
    /// Nanoseconds from the start to the latest completion.
    latest: AtomicU64,
}

/// What an expiry burst measured.
#[derive(Debug, Clone, Copy)]
pub struct BurstResult {
    /// From the deadline to the last task's wake-up (its code running).
    pub last_wake: Duration,
    /// Tasks that completed before the deadline.
    pub early: usize,
}

/// `n` tasks on a fresh two-worker runtime sleep until one deadline, set
/// far enough ahead for all of them to register first. `None` when they
/// could not register in time (the run would not measure a burst).
pub fn burst(imp: Imp, n: usize) -> Option<BurstResult> {
    let rt = runtime("burst-rt");
    let wheel = {
        let _rt = rt.enter();
        Wheel::new()
    };
    let st = Arc::new(Burst::default());
    let start = StdInstant::now();
    let margin = Duration::from_millis(200) + Duration::from_micros(3) * n as u32;
    let deadline = start + margin;
    for _ in 0..n {
        let st = st.clone();
        let wheel = wheel.clone();
        rt.spawn(async move {
            counted(sleep_until(imp, &wheel, deadline), &st.registered).await;
            let now = StdInstant::now();
            if now < deadline {
                st.early.fetch_add(1, Ordering::Relaxed);
            }
            let ns = now.duration_since(start).as_nanos() as u64;
            st.latest.fetch_max(ns, Ordering::AcqRel);
            st.done.fetch_add(1, Ordering::AcqRel);
        });
    }
    let registered = wait_until(deadline, || st.registered.load(Ordering::Acquire) == n);
    let limit = deadline + Duration::from_secs(60);
    let finished = wait_until(limit, || st.done.load(Ordering::Acquire) == n);
    rt.shutdown_background();
    if !registered || !finished {
        return None;
    }
    let latest = Duration::from_nanos(st.latest.load(Ordering::Acquire));
    Some(BurstResult {
        last_wake: latest.saturating_sub(margin),
        early: st.early.load(Ordering::Relaxed),
    })
}

/// Late or early fires of `n` random sleeps of 1–500 ms.
#[derive(Debug, Clone, Copy)]
pub struct Lateness {
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// Completions before the deadline.
    pub early: usize,
}

/// `n` tasks on a fresh two-worker runtime each sleep a random 1–500 ms
/// (the same durations for every implementation); each records how long
/// after its deadline it ran. For the `DelayQueue`, one task holds all `n`
/// entries and records each as it comes out.
pub fn lateness(imp: Imp, n: usize) -> Lateness {
    let rt = runtime("late-rt");
    let durations = Rng::new(11).durations(n, Duration::from_millis(1), Duration::from_millis(500));
    let late_ns: Vec<i64> = rt.block_on(async {
        let signed = |deadline: StdInstant| {
            let now = StdInstant::now();
            match now.checked_duration_since(deadline) {
                Some(d) => d.as_nanos() as i64,
                None => -(deadline.duration_since(now).as_nanos() as i64),
            }
        };
        let wheel = Wheel::new();
        match imp {
            Imp::TokioUtil => {
                let q = DelayQueue::with_capacity(n);
                return queue_lateness(q, &durations, signed).await;
            }
            Imp::HashwheelQueue => {
                let q = wheel.delay_queue_with_capacity(n);
                return queue_lateness(q, &durations, signed).await;
            }
            _ => {}
        }
        let tasks: Vec<_> = durations
            .iter()
            .map(|&d| {
                let wheel = wheel.clone();
                tokio::spawn(async move {
                    let deadline = StdInstant::now() + d;
                    sleep_until(imp, &wheel, deadline).await;
                    signed(deadline)
                })
            })
            .collect();
        let mut out = Vec::with_capacity(n);
        for t in tasks {
            out.push(t.await.expect("sleep task"));
        }
        out
    });
    rt.shutdown_background();
    let early = late_ns.iter().filter(|&&ns| ns < 0).count();
    let mut ms: Vec<f64> = late_ns.iter().map(|&ns| ns as f64 / 1e6).collect();
    ms.sort_by(f64::total_cmp);
    Lateness {
        p50_ms: quantile(&ms, 0.5),
        p99_ms: quantile(&ms, 0.99),
        max_ms: quantile(&ms, 1.0),
        early,
    }
}

/// [`lateness`] for a queue: one task inserts every entry, then records
/// each as it comes out.
async fn queue_lateness<Q: Queue>(
    mut q: Q,
    durations: &[Duration],
    signed: impl Fn(StdInstant) -> i64,
) -> Vec<i64> {
    let mut deadlines = Vec::with_capacity(durations.len());
    for (i, d) in durations.iter().enumerate() {
        let at = StdInstant::now() + *d;
        deadlines.push(at);
        q.insert_at(i as u32, Instant::from_std(at));
    }
    let mut out = Vec::with_capacity(durations.len());
    while let Some(i) = queue::next(&mut q).await {
        out.push(signed(deadlines[i as usize]));
    }
    out
}

// ===== expiry pass =====

/// A waker that only counts its wake-ups.
#[derive(Debug, Default)]
struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// On tokio's paused clock, on one thread: `n` timers polled once with a
/// counting waker, all due at one tick; the span runs from advancing the
/// clock past it until every waker has been woken: the timer's own expiry
/// pass (for hashwheel: its driver task's run; for tokio: its time
/// driver's), with nothing else to run.
pub fn expiry_pass(imp: Imp, n: usize) -> Span {
    paused_runtime().block_on(async {
        let count = Arc::new(Count::default());
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        let at = Instant::now() + Duration::from_secs(1);
        async fn fire(imp: Imp, count: &Count, n: usize) -> Span {
            for _ in 0..4 {
                tokio::task::yield_now().await;
            }
            let m = Meter::start(imp);
            tokio::time::advance(Duration::from_secs(1)).await;
            while count.0.load(Ordering::Relaxed) < n {
                tokio::task::yield_now().await;
            }
            m.stop()
        }
        match imp {
            Imp::Hashwheel => {
                let wheel = Wheel::new();
                let mut held: Vec<_> = (0..n).map(|_| wheel.sleep_until(at)).collect();
                for s in &mut held {
                    assert!(Pin::new(s).poll(&mut cx).is_pending());
                }
                fire(imp, &count, n).await
            }
            Imp::Tokio => {
                let mut held: Vec<_> = (0..n)
                    .map(|_| Box::pin(tokio::time::sleep_until(at)))
                    .collect();
                for s in &mut held {
                    assert!(s.as_mut().poll(&mut cx).is_pending());
                }
                fire(imp, &count, n).await
            }
            _ => unsupported(imp),
        }
    })
}

// ===== DelayQueue =====

/// The cost of each `DelayQueue` operation over `n` entries.
#[derive(Debug, Clone, Copy)]
pub struct QueueOps {
    pub insert: Span,
    pub reset: Span,
    pub remove: Span,
    pub drain: Span,
}

/// How far apart the first and the last deadline are when the queue is
/// filled again for the drain: the deadlines keep their order, squeezed into
/// a span the run can wait out on the real clock.
const DRAIN_SPAN: Duration = Duration::from_millis(200);

/// In a task on a fresh 1-worker runtime, on the real clock (where a
/// server's queue lives): insert one entry per deadline into a new queue,
/// reset each (in random order) one second later, remove each (in random
/// order); then insert them again with their deadlines squeezed into
/// [`DRAIN_SPAN`] from now, wait until the last has passed and drain the
/// queue through `poll_expired`.
///
/// Real clock, not the paused one: with tokio's `test-util` (which the
/// dev-dependencies enable), `Instant::now()` on a paused clock locks the
/// clock's mutex, and that lock was most of what `insert` and `reset`
/// measured.
pub fn delay_queue(imp: Imp, deadlines: &[Duration], order: &[usize]) -> QueueOps {
    let rt = multi_thread(1, "queue-rt");
    let (deadlines, order): (Arc<[Duration]>, Arc<[usize]>) = (deadlines.into(), order.into());
    let ops = rt.block_on(async move {
        tokio::spawn(async move {
            match imp {
                Imp::TokioUtil => queue_ops(imp, DelayQueue::new(), &deadlines, &order).await,
                Imp::HashwheelQueue => {
                    let wheel = Wheel::new();
                    queue_ops(imp, wheel.delay_queue(), &deadlines, &order).await
                }
                _ => unsupported(imp),
            }
        })
        .await
        .expect("queue task")
    });
    rt.shutdown_background();
    ops
}

/// `deadlines` squeezed into [`DRAIN_SPAN`] after `base`, in their order.
fn squeezed(deadlines: &[Duration], base: Instant) -> Vec<Instant> {
    let lo = deadlines.iter().min().copied().unwrap_or_default();
    let hi = deadlines.iter().max().copied().unwrap_or_default();
    let width = (hi - lo).as_nanos().max(1);
    let span = DRAIN_SPAN.as_nanos();
    deadlines
        .iter()
        .map(|&d| base + Duration::from_nanos(((d - lo).as_nanos() * span / width) as u64))
        .collect()
}

async fn queue_ops<Q: Queue>(
    imp: Imp,
    mut q: Q,
    deadlines: &[Duration],
    order: &[usize],
) -> QueueOps {
    let m = Meter::start(imp);
    let keys: Vec<_> = deadlines.iter().map(|&d| q.insert(0, d)).collect();
    let insert = m.stop();
    let m = Meter::start(imp);
    for &i in order {
        q.reset(&keys[i], deadlines[i] + Duration::from_secs(1));
    }
    let reset = m.stop();
    let m = Meter::start(imp);
    for &i in order {
        black_box(q.remove(&keys[i]));
    }
    let remove = m.stop();
    let ats = squeezed(deadlines, Instant::now() + Duration::from_millis(5));
    for &at in &ats {
        q.insert_at(0, at);
    }
    let last = ats.iter().max().copied().unwrap_or_else(Instant::now);
    tokio::time::sleep_until(last + Duration::from_millis(2)).await;
    let m = Meter::start(imp);
    let mut drained = 0;
    while let Some(v) = queue::next(&mut q).await {
        black_box(v);
        drained += 1;
    }
    let drain = m.stop();
    assert_eq!(drained, deadlines.len());
    QueueOps {
        insert,
        reset,
        remove,
        drain,
    }
}

// ===== idle CPU =====

/// CPU used over `window` by a fresh two-worker runtime (its workers and,
/// for pingora and futures-timer, their timer thread) holding `timers`
/// pending timers 60 s away, or none. For the `DelayQueue`, one task holds
/// them and waits on the queue.
pub fn idle_cpu(imp: Imp, timers: usize, window: Duration) -> Duration {
    const NAME: &str = "idle-rt";
    let rt = runtime(NAME);
    let _rt = rt.enter();
    let wheel = Wheel::new();
    let far = Duration::from_secs(60);
    let mut held: Vec<BoxSleep> = Vec::new();
    match imp {
        Imp::TokioUtil => idle_queue(&rt, DelayQueue::with_capacity(timers), timers, far),
        Imp::HashwheelQueue => {
            idle_queue(&rt, wheel.delay_queue_with_capacity(timers), timers, far)
        }
        _ => {
            let now = StdInstant::now();
            held = (0..timers)
                .map(|_| sleep_until(imp, &wheel, now + far))
                .collect();
            for s in &mut held {
                assert!(poll_noop(s.as_mut()).is_pending());
            }
        }
    }
    std::thread::sleep(Duration::from_millis(50));
    let ours = |name: &str| name == NAME || Some(name) == imp.helper_thread();
    let before = threads_cpu_ns(ours);
    std::thread::sleep(window);
    let used = threads_cpu_ns(ours) - before;
    drop(held);
    drop(wheel);
    drop(_rt);
    rt.shutdown_background();
    Duration::from_nanos(used)
}

/// Has a task on `rt` hold `timers` entries `far` away in `q` and wait on it.
fn idle_queue<Q: Queue>(rt: &Runtime, mut q: Q, timers: usize, far: Duration) {
    for i in 0..timers {
        q.insert(i as u32, far);
    }
    rt.spawn(async move { while queue::next(&mut q).await.is_some() {} });
}
