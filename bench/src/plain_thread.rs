//! The plain-thread workloads (`compare`'s `plain thread†` rows and the
//! real-clock, paused-clock and `DelayQueue` rows that run outside tasks).
//! Each runs one implementation once and returns what it measured; each is
//! written once, against the trait of the kind of timer it measures
//! ([`crate::timers`]). [`rows`], at the end, is `compare`'s sections of
//! these workloads.

use std::future::{poll_fn, Future};
use std::hint::black_box;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::task::{Context, Wake, Waker};
use std::time::{Duration, Instant as StdInstant};

use hashwheel::Wheel;
use tokio::runtime::Runtime;
use tokio::time::Instant;

use super::cpu::{rss_growth_per, threads_cpu_ns, Meter, Span};
use super::plain_rt::{runtime, Env};
use super::queue::{self, Queue};
use super::support::{child_job, lock, multi_thread, wait_until, InsertCancel, CHILD, FAR};
use super::timers::{
    expect_kind, FollowsTokioClock, Queues, Registers, Resets, SharedQueues, Sleeps, Timeouts,
    UseQueues, UseRegisters, UseResets, UseSleeps, UseTimeouts, UseTokioClock,
};
use super::{poll_noop, quantile, Imp, PendingOnce, Rng};

/// The implementations a plain-thread row runs: those whose type `has` the
/// row's kind, but for the baselines, tokio's alternative timer (which
/// needs a runtime of its own, and these rows share one) and hashwheel's
/// free functions, which only [`imps_with_free`]'s rows run.
pub fn imps(has: impl Fn(Imp) -> bool) -> Vec<Imp> {
    Imp::which(|i| has(i) && i != Imp::HashwheelFree && !i.is_baseline() && !i.alt_timer())
}

/// [`imps`] with hashwheel's free functions: the register + cancel and
/// timeout rows, where looking the default wheel up is the difference.
pub fn imps_with_free(has: impl Fn(Imp) -> bool) -> Vec<Imp> {
    Imp::which(|i| has(i) && !i.is_baseline() && !i.alt_timer())
}

/// A current-thread runtime on tokio's paused clock.
fn paused_runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("tokio runtime")
}

/// A context whose waker does nothing.
fn noop_cx() -> Context<'static> {
    Context::from_waker(Waker::noop())
}

// ===== register + cancel =====

/// Who runs [`register_cancel`]: whatever [`Registers`] a timer.
pub fn register_cancel_imps() -> Vec<Imp> {
    imps_with_free(Imp::has_registers)
}

/// `ops` times in all, spread over `threads` threads in parallel: make a
/// 30 s sleep, poll it once, drop it. The span runs from the moment every
/// thread is ready until the last has finished.
pub fn register_cancel(env: &Env, imp: Imp, threads: usize, ops: u64) -> Span {
    struct W<'a>(&'a Env, Imp, usize, u64);
    impl UseRegisters for W<'_> {
        type Out = Span;
        fn run<T: Registers>(self, t: T) -> Span {
            let W(env, imp, threads, ops) = self;
            let per = ops / threads as u64;
            let ready = Barrier::new(threads + 1);
            let go = Barrier::new(threads + 1);
            let m = std::thread::scope(|s| {
                for _ in 0..threads {
                    s.spawn(|| {
                        let _rt = env.rt.enter();
                        ready.wait();
                        go.wait();
                        for _ in 0..per {
                            t.register_and_drop(FAR, &mut noop_cx());
                        }
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
    }
    expect_kind(
        imp,
        imp.with_registers(&|| env.wheel.clone(), W(env, imp, threads, ops)),
    )
}

// ===== timeout =====

/// Polls `f` to completion: pending once first when `pending_first`.
fn finish<F: Future>(mut f: Pin<&mut F>, pending_first: bool) {
    if pending_first {
        assert!(poll_noop(f.as_mut()).is_pending());
    }
    assert!(poll_noop(f).is_ready());
}

/// Who runs [`timeout`]: the [`Timeouts`].
pub fn timeout_imps() -> Vec<Imp> {
    imps_with_free(Imp::has_timeouts)
}

/// `ops` times: `timeout(30 s, f)` polled to completion, where `f` is
/// pending once and then ready, or ready at once.
pub fn timeout(env: &Env, imp: Imp, pending_first: bool, ops: u64) -> Span {
    struct W(Imp, bool, u64);
    impl UseTimeouts for W {
        type Out = Span;
        fn run<T: Timeouts>(self, t: T) -> Span {
            let W(imp, pending_first, ops) = self;
            let f = || PendingOnce::new(pending_first);
            let m = Meter::start(imp);
            for _ in 0..ops {
                finish(pin!(t.timeout(FAR, f())), pending_first);
            }
            m.stop()
        }
    }
    let _rt = env.rt.enter();
    expect_kind(
        imp,
        imp.with_timeouts(&|| env.wheel.clone(), W(imp, pending_first, ops)),
    )
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

/// Who runs [`insert_cancel`]: the timers that dropping [`Cancels`](crate::timers::Cancels)
/// (pingora's stays until it fires) and the [`Queues`].
pub fn insert_cancel_imps() -> Vec<Imp> {
    imps(|i| i.has_cancels() || i.has_queues())
}

/// Inserts one pending timer per deadline (10–60 s away in the callers),
/// then cancels them all in random order: a timer future polled once and
/// dropped, or a `DelayQueue` entry inserted and removed. Every timer is
/// kept boxed, as it would live in its task's (boxed) future
/// ([`Registers::register`]).
pub fn insert_cancel(env: &Env, imp: Imp, deadlines: &[Duration], order: &[usize]) -> InsertCancel {
    struct W<'a>(Imp, &'a [Duration], &'a [usize], &'a SharedQueues);
    impl UseRegisters for W<'_> {
        type Out = InsertCancel;
        fn run<T: Registers>(self, t: T) -> InsertCancel {
            let W(imp, deadlines, order, _) = self;
            let make = |_: &mut (), d| t.register(d, &mut noop_cx());
            insert_then_cancel(imp, &mut (), deadlines, order, make, |_, t| drop(t))
        }
    }
    impl UseQueues for W<'_> {
        type Out = InsertCancel;
        fn run<T: Queues>(self, t: T) -> InsertCancel {
            let W(imp, deadlines, order, shared) = self;
            let make = |q: &mut T::Q, d| q.insert(0, d);
            let cancel = |q: &mut T::Q, k| {
                black_box(q.remove(&k));
            };
            let q = &mut *lock(t.shared(shared));
            insert_then_cancel(imp, q, deadlines, order, make, cancel)
        }
    }
    let _rt = env.rt.enter();
    let w = || W(imp, deadlines, order, &env.queues);
    let out = imp.with_registers(&|| env.wheel.clone(), w());
    expect_kind(
        imp,
        out.or_else(|| imp.with_queues(&|| env.wheel.clone(), w())),
    )
}

// ===== memory =====

/// Who runs [`bytes_per_timer`] and [`size_of_timer`]: what [`Registers`]
/// a timer, and the [`Queues`].
pub fn memory_imps() -> Vec<Imp> {
    imps(|i| i.has_registers() || i.has_queues())
}

/// RSS bytes per pending timer: `n` timers (10–60 s away) made and kept,
/// each boxed ([`Registers::register`]), in a `Vec`, the `Vec` included.
/// Run in a fresh process (see [`bytes_per_timer`]) so that no freed
/// memory is reused.
fn rss_per_timer(imp: Imp, n: usize) -> f64 {
    struct W<'a>(&'a [Duration]);
    impl UseRegisters for W<'_> {
        type Out = f64;
        fn run<T: Registers>(self, t: T) -> f64 {
            rss_growth_per(self.0, |d| t.register(d, &mut noop_cx()))
        }
    }
    impl UseQueues for W<'_> {
        type Out = f64;
        fn run<T: Queues>(self, t: T) -> f64 {
            let mut q = t.queue();
            rss_growth_per(self.0, |d| q.insert(0u32, d))
        }
    }
    let env = Env::new();
    let deadlines = Rng::new(7).durations(n, Duration::from_secs(10), Duration::from_secs(60));
    let _rt = env.rt.enter();
    let out = imp.with_registers(&|| env.wheel.clone(), W(&deadlines));
    expect_kind(
        imp,
        out.or_else(|| imp.with_queues(&|| env.wheel.clone(), W(&deadlines))),
    )
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
            println!("{}", super::in_task::rss_per_timer_in_task(imp, n, moved));
        }
        _ => panic!("{CHILD}: unknown job {job:?}"),
    }
    std::process::exit(0);
}

/// `size_of` of what a user holds for one pending timer: the timer future,
/// or a `DelayQueue`'s key. Makes no timer: `wheel` is only there to make
/// hashwheel's types from.
pub fn size_of_timer(wheel: &Wheel, imp: Imp) -> usize {
    struct W;
    impl UseRegisters for W {
        type Out = usize;
        fn run<T: Registers>(self, t: T) -> usize {
            t.size_of_held()
        }
    }
    impl UseQueues for W {
        type Out = usize;
        fn run<T: Queues>(self, _: T) -> usize {
            size_of::<<T::Q as Queue>::Key>()
        }
    }
    let out = imp.with_registers(&|| wheel.clone(), W);
    expect_kind(imp, out.or_else(|| imp.with_queues(&|| wheel.clone(), W)))
}

// ===== reset =====

/// Who runs [`reset`]: the [`Resets`] and the [`Queues`].
pub fn reset_imps() -> Vec<Imp> {
    imps(|i| i.has_resets() || i.has_queues())
}

/// `ops` times: move one pending timer's deadline later (30 s plus `i` ms:
/// a new tick each time, as a connection's idle timer moves per message),
/// and when `poll_each`, poll it after each move, as a `select!` loop does.
/// pingora-timeout has no reset: it makes a new sleep each time, and must
/// poll it to register it. A `DelayQueue` moves an entry with its own
/// reset, and polls with `poll_expired`.
pub fn reset(env: &Env, imp: Imp, poll_each: bool, ops: u64) -> Span {
    struct W<'a>(Imp, bool, u64, &'a SharedQueues);
    impl UseResets for W<'_> {
        type Out = Span;
        fn run<T: Resets>(self, t: T) -> Span {
            let W(imp, poll_each, ops, _) = self;
            let first_at = Instant::now() + FAR;
            let later = |i: u64| super::timers::Later {
                first_at,
                first_after: FAR,
                by: Duration::from_millis(i),
            };
            let mut s = pin!(t.sleep_until(first_at));
            assert!(poll_noop(s.as_mut()).is_pending());
            let m = Meter::start(imp);
            for i in 1..=ops {
                t.reset(s.as_mut(), later(i));
                if poll_each || !T::IN_PLACE {
                    assert!(poll_noop(s.as_mut()).is_pending());
                }
            }
            m.stop()
        }
    }
    impl UseQueues for W<'_> {
        type Out = Span;
        fn run<T: Queues>(self, t: T) -> Span {
            let W(imp, poll_each, ops, shared) = self;
            let base = Instant::now() + FAR;
            let at = |i: u64| base + Duration::from_millis(i);
            let q = &mut *lock(t.shared(shared));
            let key = q.insert_at(0, at(0));
            let mut cx = noop_cx();
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
    }
    let _rt = env.rt.enter();
    let w = || W(imp, poll_each, ops, &env.queues);
    let out = imp.with_resets(&|| env.wheel.clone(), w());
    expect_kind(
        imp,
        out.or_else(|| imp.with_queues(&|| env.wheel.clone(), w())),
    )
}

// ===== real-clock sleeps =====

/// Awaits `f`, counting `registered` up once its first poll is done.
async fn counted<F: Future<Output = ()>>(f: F, registered: &AtomicUsize) {
    let mut f = pin!(f);
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

/// Who runs [`burst`]: the timer futures ([`Sleeps`]).
pub fn burst_imps() -> Vec<Imp> {
    imps(Imp::has_sleeps)
}

/// `n` tasks on a fresh two-worker runtime sleep until one deadline, set
/// far enough ahead for all of them to register first. `None` when they
/// could not register in time (the run would not measure a burst).
pub fn burst(imp: Imp, n: usize) -> Option<BurstResult> {
    struct W<'a>(&'a Runtime, usize);
    impl UseSleeps for W<'_> {
        type Out = Option<BurstResult>;
        fn run<T: Sleeps>(self, t: T) -> Option<BurstResult> {
            let W(rt, n) = self;
            let st = Arc::new(Burst::default());
            let start = StdInstant::now();
            let margin = Duration::from_millis(200) + Duration::from_micros(3) * n as u32;
            let deadline = start + margin;
            for _ in 0..n {
                let st = st.clone();
                let t = t.clone();
                rt.spawn(async move {
                    let sleep = t.sleep_until(Instant::from_std(deadline));
                    counted(Box::pin(sleep), &st.registered).await;
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
            if !registered || !finished {
                return None;
            }
            let latest = Duration::from_nanos(st.latest.load(Ordering::Acquire));
            Some(BurstResult {
                last_wake: latest.saturating_sub(margin),
                early: st.early.load(Ordering::Relaxed),
            })
        }
    }
    let rt = runtime("burst-rt");
    let wheel = {
        let _rt = rt.enter();
        Wheel::new()
    };
    let out = expect_kind(imp, imp.with_sleeps(&|| wheel.clone(), W(&rt, n)));
    rt.shutdown_background();
    out
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

/// How long after `deadline` it is now, in nanoseconds (negative: before).
fn signed(deadline: StdInstant) -> i64 {
    let now = StdInstant::now();
    match now.checked_duration_since(deadline) {
        Some(d) => d.as_nanos() as i64,
        None => -(deadline.duration_since(now).as_nanos() as i64),
    }
}

/// Who runs [`lateness`]: the timer futures ([`Sleeps`]) and the
/// [`Queues`].
pub fn lateness_imps() -> Vec<Imp> {
    imps(|i| i.has_sleeps() || i.has_queues())
}

/// `n` tasks on a fresh two-worker runtime each sleep a random 1–500 ms
/// (the same durations for every implementation); each records how long
/// after its deadline it ran. For the `DelayQueue`, one task holds all `n`
/// entries and records each as it comes out.
pub fn lateness(imp: Imp, n: usize) -> Lateness {
    /// The tasks' lateness, once they are all done.
    type Late<'a> = Pin<Box<dyn Future<Output = Vec<i64>> + 'a>>;
    struct W<'a>(&'a [Duration]);
    impl<'a> UseSleeps for W<'a> {
        type Out = Late<'a>;
        fn run<T: Sleeps>(self, t: T) -> Late<'a> {
            let tasks: Vec<_> = self
                .0
                .iter()
                .map(|&d| {
                    let t = t.clone();
                    tokio::spawn(async move {
                        let deadline = StdInstant::now() + d;
                        Box::pin(t.sleep_until(Instant::from_std(deadline))).await;
                        signed(deadline)
                    })
                })
                .collect();
            Box::pin(async move {
                let mut out = Vec::with_capacity(tasks.len());
                for t in tasks {
                    out.push(t.await.expect("sleep task"));
                }
                out
            })
        }
    }
    impl<'a> UseQueues for W<'a> {
        type Out = Late<'a>;
        fn run<T: Queues>(self, t: T) -> Late<'a> {
            let q = t.queue_with_capacity(self.0.len());
            Box::pin(queue_lateness(q, self.0))
        }
    }
    let rt = runtime("late-rt");
    let durations = Rng::new(11).durations(n, Duration::from_millis(1), Duration::from_millis(500));
    let late_ns: Vec<i64> = rt.block_on(async {
        let wheel = Wheel::new();
        let out = imp.with_queues(&|| wheel.clone(), W(&durations));
        let out = out.or_else(|| imp.with_sleeps(&|| wheel.clone(), W(&durations)));
        expect_kind(imp, out).await
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
async fn queue_lateness<Q: Queue>(mut q: Q, durations: &[Duration]) -> Vec<i64> {
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

/// Who runs [`expiry_pass`]: the timers that [`FollowsTokioClock`], which
/// the pass advances.
pub fn expiry_pass_imps() -> Vec<Imp> {
    imps(Imp::has_tokio_clock)
}

/// On tokio's paused clock, on one thread: `n` timers, each boxed (as
/// [`Registers::register`] holds them), polled once with a counting waker,
/// all due at one tick; the span runs from advancing the clock past it
/// until every waker has been woken: the timer's own expiry pass (for
/// hashwheel: its driver task's run; for tokio: its time driver's), with
/// nothing else to run.
pub fn expiry_pass(imp: Imp, n: usize) -> Span {
    /// The timers, held and polled once; then the pass.
    type Pass = Pin<Box<dyn Future<Output = Span>>>;
    struct W(Imp, usize);
    impl UseTokioClock for W {
        type Out = Pass;
        fn run<T: FollowsTokioClock>(self, t: T) -> Pass {
            let W(imp, n) = self;
            Box::pin(async move {
                let count = Arc::new(Count::default());
                let waker = Waker::from(count.clone());
                let mut cx = Context::from_waker(&waker);
                let at = Instant::now() + Duration::from_secs(1);
                let mut held: Vec<_> = (0..n).map(|_| Box::pin(t.sleep_until(at))).collect();
                for s in &mut held {
                    assert!(s.as_mut().poll(&mut cx).is_pending());
                }
                for _ in 0..4 {
                    tokio::task::yield_now().await;
                }
                let m = Meter::start(imp);
                tokio::time::advance(Duration::from_secs(1)).await;
                while count.0.load(Ordering::Relaxed) < n {
                    tokio::task::yield_now().await;
                }
                m.stop()
            })
        }
    }
    paused_runtime()
        .block_on(async { expect_kind(imp, imp.with_tokio_clock(&Wheel::new, W(imp, n))).await })
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

/// Who runs [`delay_queue`]: the [`Queues`].
pub fn delay_queue_imps() -> Vec<Imp> {
    imps(Imp::has_queues)
}

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
    /// The queue's task.
    type Ops = Pin<Box<dyn Future<Output = QueueOps> + Send>>;
    struct W(Imp, Arc<[Duration]>, Arc<[usize]>);
    impl UseQueues for W {
        type Out = Ops;
        fn run<T: Queues>(self, t: T) -> Ops {
            let W(imp, deadlines, order) = self;
            Box::pin(async move { queue_ops(imp, t.queue(), &deadlines, &order).await })
        }
    }
    let rt = multi_thread(1, "queue-rt");
    let (deadlines, order): (Arc<[Duration]>, Arc<[usize]>) = (deadlines.into(), order.into());
    let ops = rt.block_on(async move {
        tokio::spawn(async move {
            expect_kind(imp, imp.with_queues(&Wheel::new, W(imp, deadlines, order))).await
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

/// Who runs [`idle_cpu`] with `timers` pending: the timer futures
/// ([`Sleeps`]), and with timers pending the [`Queues`] too.
pub fn idle_imps(timers: usize) -> Vec<Imp> {
    imps(|i| i.has_sleeps() || (timers > 0 && i.has_queues()))
}

/// CPU used over `window` by a fresh two-worker runtime (its workers and,
/// for pingora and futures-timer, their timer thread) holding `timers`
/// pending timers 60 s away, or none. For the `DelayQueue`, one task holds
/// them and waits on the queue.
pub fn idle_cpu(imp: Imp, timers: usize, window: Duration) -> Duration {
    /// What is held for the window.
    type Held = Box<dyn std::any::Any>;
    struct W<'a>(&'a Runtime, usize, Duration);
    impl UseSleeps for W<'_> {
        type Out = Held;
        fn run<T: Sleeps>(self, t: T) -> Held {
            let W(_, timers, far) = self;
            let now = StdInstant::now();
            let mut held: Vec<_> = (0..timers)
                .map(|_| Box::pin(t.sleep_until(Instant::from_std(now + far))))
                .collect();
            for s in &mut held {
                assert!(poll_noop(s.as_mut()).is_pending());
            }
            Box::new(held)
        }
    }
    impl UseQueues for W<'_> {
        type Out = Held;
        fn run<T: Queues>(self, t: T) -> Held {
            let W(rt, timers, far) = self;
            let mut q = t.queue_with_capacity(timers);
            for i in 0..timers {
                q.insert(i as u32, far);
            }
            rt.spawn(async move { while queue::next(&mut q).await.is_some() {} });
            Box::new(())
        }
    }
    const NAME: &str = "idle-rt";
    let rt = runtime(NAME);
    let _rt = rt.enter();
    let wheel = Wheel::new();
    let far = Duration::from_secs(60);
    let w = || W(&rt, timers, far);
    let held = imp.with_queues(&|| wheel.clone(), w());
    let held = expect_kind(
        imp,
        held.or_else(|| imp.with_sleeps(&|| wheel.clone(), w())),
    );
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

/// `compare`'s rows of these workloads: one section a `--only` name, each
/// running its workload round by round, implementations alternating.
pub mod rows {
    use crate::config::Config;
    use crate::pending_inputs;
    use crate::plain_thread as w;
    use crate::section::{Envs, Section};
    use crate::table::{count, rounds, Table, NS};

    /// These workloads' sections, in the order `compare` runs them. The
    /// expiry pass runs on tokio's paused clock, so it comes last: once a
    /// clock has been paused, every `tokio::time::Instant::now()` in the
    /// process (with tokio's `test-util`, which this package enables) takes
    /// a slower path.
    pub const SECTIONS: &[Section] = &[
        Section::new("register", register_cancel),
        Section::new("timeout", timeout),
        Section::new("insert", insert_cancel),
        Section::new("memory", memory),
        Section::new("reset", reset),
        Section::new("burst", burst),
        Section::new("lateness", lateness),
        Section::new("idle", idle),
        Section::new("queue", delay_queue),
        Section::new("pass", expiry_pass),
    ];

    /// The mark of a secondary row: timers registered from a plain thread
    /// inside `rt.enter()`, not from a task (see [`PLAIN_NOTE`]).
    const PLAIN: &str = "plain thread†";

    pub const PLAIN_NOTE: &str =
        "† plain thread: timers registered from a thread that is not one of the \
runtime's workers, inside `rt.enter()`. That takes other paths than a server's timers: \
tokio's timer picks its shard at random for each timer registered off a worker (on a worker, \
the worker's own shard) and applies no cooperative budget, and hashwheel's shard is \
per thread too. Secondary rows, for a timer made off the workers; the `task, …` and \
`server, …` rows measure timers inside tasks on the runtime's workers.";

    pub fn register_cancel(cfg: &Config, e: &Envs, t: &mut Table) {
        let env = &e.plain;
        for threads in [1, 2] {
            let name =
                |m| format!("{PLAIN}: register + cancel a 30 s sleep, {threads} thread(s), {m}");
            let ops = cfg.register_ops;
            rounds(cfg.rounds, &w::register_cancel_imps(), |imp| {
                let (cpu, wall) = w::register_cancel(env, imp, threads, ops).per_op(ops);
                t.add(&name("CPU"), NS, imp, cpu);
                t.add(&name("wall"), NS, imp, wall);
            });
        }
    }

    pub fn timeout(cfg: &Config, e: &Envs, t: &mut Table) {
        let env = &e.plain;
        for (pending, what) in [(true, "pending once, then ready"), (false, "ready at once")] {
            let name = format!("{PLAIN}: timeout(30 s, f), f {what}, CPU");
            let ops = cfg.register_ops;
            rounds(cfg.rounds, &w::timeout_imps(), |imp| {
                let cpu = w::timeout(env, imp, pending, ops).per_op(ops).0;
                t.add(&name, NS, imp, cpu);
            });
        }
    }

    pub fn insert_cancel(cfg: &Config, e: &Envs, t: &mut Table) {
        let env = &e.plain;
        for &n in &cfg.sizes {
            let (deadlines, order) = pending_inputs(n, n as u64);
            let r = if n >= cfg.slow_size {
                cfg.slow_rounds
            } else {
                cfg.rounds
            };
            let insert = format!("{PLAIN}: insert {} pending timers (10–60 s), CPU", count(n));
            let cancel = format!("{PLAIN}: cancel those {} (random order), CPU", count(n));
            rounds(r, &w::insert_cancel_imps(), |imp| {
                let ic = w::insert_cancel(env, imp, &deadlines, &order);
                t.add(&insert, NS, imp, ic.insert.per_op(n as u64).0);
                t.add(&cancel, NS, imp, ic.cancel.per_op(n as u64).0);
            });
        }
    }

    pub fn memory(cfg: &Config, e: &Envs, t: &mut Table) {
        let name = format!(
            "{PLAIN}: memory per pending timer, RSS of {}",
            count(cfg.memory_n)
        );
        for imp in w::memory_imps() {
            if let Some(b) = w::bytes_per_timer(imp, cfg.memory_n) {
                t.add(&name, "B", imp, b);
            }
            t.add(
                "size_of the timer a user holds",
                "B",
                imp,
                w::size_of_timer(&e.plain.wheel, imp) as f64,
            );
        }
    }

    pub fn reset(cfg: &Config, e: &Envs, t: &mut Table) {
        let env = &e.plain;
        for (poll, what) in [(false, ""), (true, " and poll")] {
            let name =
                format!("{PLAIN}: reset a pending timer to a deadline 1 ms later{what}, CPU");
            let ops = cfg.reset_ops;
            rounds(cfg.rounds, &w::reset_imps(), |imp| {
                t.add(&name, NS, imp, w::reset(env, imp, poll, ops).per_op(ops).0);
            });
        }
    }

    pub fn burst(cfg: &Config, _: &Envs, t: &mut Table) {
        for &n in &cfg.bursts {
            let name = format!(
                "{} tasks on one deadline: deadline → last wake-up",
                count(n)
            );
            let early = format!("{} tasks on one deadline: early wake-ups", count(n));
            // All rounds, even at 1M tasks: the herd is noisy (it is mostly
            // tokio's scheduler and the allocator), and three rounds were not
            // enough to tell two runs of the same code apart.
            rounds(cfg.rounds, &w::burst_imps(), |imp| match w::burst(imp, n) {
                Some(b) => {
                    t.add(&name, "ms", imp, b.last_wake.as_secs_f64() * 1e3);
                    t.add(&early, "tasks", imp, b.early as f64);
                }
                None => eprintln!(
                    "{}: {n} tasks could not register before the deadline",
                    imp.name()
                ),
            });
        }
    }

    pub fn lateness(cfg: &Config, _: &Envs, t: &mut Table) {
        let head = format!("{} random sleeps 1–500 ms (real clock)", count(cfg.late_n));
        // All rounds: a p99 over 10k timers moves by tens of microseconds when
        // the machine stalls for a moment, whichever timer is running then.
        rounds(cfg.rounds, &w::lateness_imps(), |imp| {
            let l = w::lateness(imp, cfg.late_n);
            t.add(&format!("{head}: lateness p50"), "ms", imp, l.p50_ms);
            t.add(&format!("{head}: lateness p99"), "ms", imp, l.p99_ms);
            t.add(&format!("{head}: lateness max"), "ms", imp, l.max_ms);
            t.add(
                &format!("{head}: early fires"),
                "timers",
                imp,
                l.early as f64,
            );
        });
    }

    pub fn idle(cfg: &Config, _: &Envs, t: &mut Table) {
        let window = cfg.idle_window;
        for (timers, what) in [(0, "nothing pending"), (100_000, "100k timers 60 s away")] {
            let name = format!("CPU over {window:?} with {what}");
            rounds(cfg.slow_rounds, &w::idle_imps(timers), |imp| {
                let used = w::idle_cpu(imp, timers, window);
                t.add(&name, "ms", imp, used.as_secs_f64() * 1e3);
            });
        }
    }

    pub fn expiry_pass(cfg: &Config, _: &Envs, t: &mut Table) {
        let n = cfg.pass_n;
        let name = format!(
            "expiry pass: {} due timers, counting wakers, paused clock",
            count(n)
        );
        rounds(cfg.rounds, &w::expiry_pass_imps(), |imp| {
            t.add(
                &name,
                "ms",
                imp,
                w::expiry_pass(imp, n).wall_ns as f64 / 1e6,
            );
        });
    }

    pub fn delay_queue(cfg: &Config, _: &Envs, t: &mut Table) {
        let n = cfg.queue_n;
        let (deadlines, order) = pending_inputs(n, 3);
        rounds(cfg.rounds, &w::delay_queue_imps(), |imp| {
            let q = w::delay_queue(imp, &deadlines, &order);
            let ops = [
                ("insert", q.insert),
                ("reset", q.reset),
                ("remove", q.remove),
                ("drain", q.drain),
            ];
            for (op, s) in ops {
                let name = format!("DelayQueue {op}, {} entries, CPU", count(n));
                t.add(&name, NS, imp, s.per_op(n as u64).0);
            }
        });
    }
}
