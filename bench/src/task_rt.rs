//! The runtimes of the in-task rows, and how a measured body runs in their
//! tasks: in one poll of a task per worker ([`timed_tasks`]), or in two
//! polls of one task with the worker idle in between ([`two_polls`]). A
//! span ends when the runtime's workers are idle again ([`workers_idle`]),
//! so that work a timer leaves to its worker is counted.
//!
//! Every body runs in a task (asserted: `tokio::task::try_id()`), on the
//! runtime it was spawned on, on one of that runtime's own (named) threads,
//! under `tokio::task::unconstrained` (see the `in_task` module).

use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::thread::ThreadId;
use std::time::{Duration, Instant as StdInstant};

use hashwheel::Wheel;
use pingora_timeout::fast_timeout::fast_sleep;
use tokio::runtime::{Handle, Runtime};

use super::cpu::{threads, Meter, Span};
use super::support::{lock, runtime_for, wait_until, FAR};
use super::timers::SharedQueues;
use super::Imp;

/// Thread names of the runtimes, so that a body can check where it runs.
pub const RT1: &str = "task-rt1";
pub const RT2: &str = "task-rt2";
/// Thread names of the runtimes on tokio's alternative timer.
#[cfg(tokio_unstable)]
const RT1_ALT: &str = "task-rt1-alt";
#[cfg(tokio_unstable)]
const RT2_ALT: &str = "task-rt2-alt";

/// How long tasks may take to start (all of them at once, one per worker)
/// before the run is declared broken.
const START_LIMIT: Duration = Duration::from_secs(30);

/// What the in-task rows share across rounds, as a long-running server
/// would: a 1-worker and a 2-worker runtime, a wheel on each, and a
/// `DelayQueue` of each kind on the 1-worker runtime; with
/// `--cfg tokio_unstable`, the same two runtimes again on tokio's
/// alternative timer, for [`Imp::TokioAlt`].
#[derive(Debug)]
pub struct TaskEnv {
    runtimes: Vec<TaskRt>,
    pub(super) queues: SharedQueues,
}

/// A runtime of a [`TaskEnv`] and its wheel.
#[derive(Debug)]
struct TaskRt {
    rt: Runtime,
    wheel: Wheel,
    name: &'static str,
    workers: usize,
    alt_timer: bool,
}

impl TaskRt {
    fn new(imp: Imp, workers: usize, name: &'static str) -> TaskRt {
        let rt = runtime_for(imp, workers, name);
        let wheel = {
            let _g = rt.enter();
            Wheel::new()
        };
        TaskRt {
            rt,
            wheel,
            name,
            workers,
            alt_timer: imp.alt_timer(),
        }
    }
}

/// One runtime of a [`TaskEnv`], its wheel and its thread name.
#[derive(Debug, Clone, Copy)]
pub struct Rt<'a> {
    pub rt: &'a Runtime,
    pub wheel: &'a Wheel,
    pub name: &'static str,
    pub workers: usize,
    /// Whether the runtime runs tokio's alternative timer.
    pub alt_timer: bool,
}

impl Default for TaskEnv {
    fn default() -> Self {
        TaskEnv::new()
    }
}

impl TaskEnv {
    pub fn new() -> TaskEnv {
        #[allow(unused_mut)]
        let mut runtimes = vec![
            TaskRt::new(Imp::Tokio, 1, RT1),
            TaskRt::new(Imp::Tokio, 2, RT2),
        ];
        #[cfg(tokio_unstable)]
        runtimes.extend([
            TaskRt::new(Imp::TokioAlt, 1, RT1_ALT),
            TaskRt::new(Imp::TokioAlt, 2, RT2_ALT),
        ]);
        let queues = {
            let _g = runtimes[0].rt.enter();
            SharedQueues::new(&runtimes[0].wheel)
        };
        let env = TaskEnv { runtimes, queues };
        // Each runtime's default wheel (the free functions') is made on its
        // first use: make it now, not in the first measured round.
        for r in env.runtimes.iter().map(TaskRt::as_rt) {
            run_in_task(r, |cx| {
                drop(polled(hashwheel::sleep(FAR), cx));
            });
            r.rt.spawn(background(r.wheel.clone()));
        }
        env
    }

    /// The runtime with `workers` workers (1 or 2) that `imp` runs on: one
    /// on tokio's alternative timer for [`Imp::TokioAlt`], one on tokio's
    /// own timer for the others.
    pub fn rt(&self, imp: Imp, workers: usize) -> Rt<'_> {
        let r = self
            .runtimes
            .iter()
            .find(|r| r.workers == workers && r.alt_timer == imp.alt_timer())
            .unwrap_or_else(|| panic!("no runtime of {workers} workers for {}", imp.name()));
        assert_eq!(r.rt.metrics().num_workers(), workers);
        r.as_rt()
    }
}

/// Each wheel shuts down before its runtime: hashwheel's driver answers
/// the wake-up that tokio's timer gives its sleep at the runtime's shutdown
/// by re-arming that sleep, and tokio's alternative timer panics on a timer
/// made while its runtime shuts down ("A Tokio 1.x context was found, but
/// it is being shutdown"). A shut-down wheel does not re-arm.
impl Drop for TaskEnv {
    fn drop(&mut self) {
        for r in &self.runtimes {
            r.wheel.shutdown();
            let _g = r.rt.enter();
            Wheel::current().shutdown();
        }
    }
}

impl TaskRt {
    fn as_rt(&self) -> Rt<'_> {
        Rt {
            rt: &self.rt,
            wheel: &self.wheel,
            name: self.name,
            workers: self.workers,
            alt_timer: self.alt_timer,
        }
    }
}

/// How far away the background timers are: sooner than every deadline
/// the in-task rows register (30 s, 10–60 s).
const BACKGROUND: Duration = Duration::from_secs(5);

/// What a server's runtime always has: an earlier timer pending, for every
/// implementation, re-armed as it fires (every 5 s). Without one, tokio's
/// time driver, which last parked with nothing pending, is woken by every
/// registration (it unparks when a new timer is earlier than what it last
/// saw as the next expiry, and no expiry counts as infinitely far): one
/// `write(2)` to its eventfd per timer, a state a server that holds timers
/// is not in. The other implementations get the same background, so that
/// none of them is measured with an empty timer.
async fn background(wheel: Wheel) {
    loop {
        tokio::join!(
            tokio::time::sleep(BACKGROUND),
            wheel.sleep(BACKGROUND),
            hashwheel::sleep(BACKGROUND),
            fast_sleep(BACKGROUND),
        );
    }
}

/// Panics unless the caller is a task of the runtime `id`, on one of its
/// threads (named `name`); returns the thread's id. Nothing here uses
/// `spawn_blocking`, so a thread of the runtime running a task is a worker.
pub fn assert_in_task(name: &str, id: tokio::runtime::Id) -> ThreadId {
    assert!(tokio::task::try_id().is_some(), "not inside a tokio task");
    let rt = Handle::try_current().expect("not inside a tokio runtime");
    assert_eq!(rt.id(), id, "inside a task of another runtime");
    let t = std::thread::current();
    assert_eq!(t.name(), Some(name), "not on a worker of {name}");
    t.id()
}

/// Runs `body` once, in one poll of a task on `rt`, with the task's
/// context; returns what it returns.
pub fn run_in_task<T, F>(rt: Rt<'_>, body: F) -> T
where
    T: Send + 'static,
    F: FnOnce(&mut Context<'_>) -> T + Send + 'static,
{
    let (name, id) = (rt.name, rt.rt.handle().id());
    let task = rt.rt.spawn(tokio::task::unconstrained(async move {
        assert_in_task(name, id);
        one_poll(body).await
    }));
    rt.rt.block_on(task).expect("benchmark task")
}

/// Runs `f` in one poll of the task that awaits this, with its context.
async fn one_poll<T>(f: impl FnOnce(&mut Context<'_>) -> T) -> T {
    let mut f = Some(f);
    poll_fn(|cx| Poll::Ready(f.take().expect("polled once")(cx))).await
}

/// Tasks that start together: each says where it runs, then spins (never
/// yielding, so it stays on its worker) until every one has arrived.
#[derive(Debug, Default)]
pub(super) struct Gate {
    pub(super) ready: AtomicUsize,
    pub(super) go: AtomicBool,
    threads: Mutex<Vec<ThreadId>>,
}

impl Gate {
    pub(super) fn arrive(&self, thread: ThreadId) {
        lock(&self.threads).push(thread);
        self.ready.fetch_add(1, Ordering::AcqRel);
    }

    /// Waits on this worker until `done`. It yields the thread rather than
    /// spin in place: the kernel adds a running thread's CPU time to the
    /// process total only at a context switch or a scheduler tick (4 ms
    /// here), so a worker that spun until the start had up to a tick of
    /// its waiting left uncounted when the meter read the process CPU, and
    /// counted into the measured span later. That was up to 10 ns per
    /// operation in a round of 200k (the no-timer column read 5–9 ns for a
    /// loop that costs 0.1). Each yield enters the scheduler, which brings
    /// the thread's time up to date.
    pub(super) fn spin_until(&self, what: &str, done: impl Fn() -> bool) {
        let limit = StdInstant::now() + START_LIMIT;
        while !done() {
            assert!(StdInstant::now() < limit, "gave up waiting for {what}");
            std::thread::yield_now();
        }
    }

    /// The distinct threads the tasks arrived on.
    pub(super) fn distinct_threads(&self) -> usize {
        let mut t = lock(&self.threads).clone();
        t.sort_by_key(|id| format!("{id:?}"));
        t.dedup();
        t.len()
    }
}

/// One task per worker of `rt`, each running `body` once in one poll with
/// its own context; they start together, once every one is spinning on a
/// worker of its own (asserted). The span (the whole process's CPU, wall
/// time) runs from the start until the last has finished.
pub fn timed_tasks<F>(rt: Rt<'_>, imp: Imp, body: F) -> Span
where
    F: Fn(&mut Context<'_>) + Send + Sync + 'static,
{
    assert_runs_on(rt, imp);
    let tasks = rt.workers;
    let gate = Arc::new(Gate::default());
    let body = Arc::new(body);
    let (name, id) = (rt.name, rt.rt.handle().id());
    let handles: Vec<_> = (0..tasks)
        .map(|_| {
            let (gate, body) = (gate.clone(), body.clone());
            rt.rt.spawn(tokio::task::unconstrained(async move {
                let me = assert_in_task(name, id);
                gate.arrive(me);
                gate.spin_until("the start", || gate.go.load(Ordering::Acquire));
                poll_fn(|cx| {
                    assert_eq!(std::thread::current().id(), me);
                    body(cx);
                    Poll::Ready(())
                })
                .await
            }))
        })
        .collect();
    let started = wait_until(StdInstant::now() + START_LIMIT, || {
        gate.ready.load(Ordering::Acquire) == tasks
    });
    assert!(started, "{tasks} tasks did not all start on {name}");
    assert_eq!(
        gate.distinct_threads(),
        tasks,
        "the tasks did not each get a worker of their own"
    );
    let m = Meter::start(imp);
    gate.go.store(true, Ordering::Release);
    rt.rt.block_on(async {
        for h in handles {
            h.await.expect("benchmark task");
        }
    });
    m.stop_after(|| workers_idle(rt))
}

/// Panics unless `rt` is the runtime `imp` is measured on: one on tokio's
/// alternative timer for [`Imp::TokioAlt`] and for no other.
fn assert_runs_on(rt: Rt<'_>, imp: Imp) {
    assert_eq!(
        rt.alt_timer,
        imp.alt_timer(),
        "{} measured on {}",
        imp.name(),
        rt.name
    );
}

/// Waits until every worker of `rt` is parked with nothing left to run:
/// its park count odd (parked) and no thread of the runtime running, the
/// same on two looks a millisecond apart. A worker does the work it put
/// off before it sleeps: tokio's alternative timer files the timers a poll
/// registered (and frees the ones already cancelled) when its worker
/// parks, and hashwheel's driver is a task on a worker. A span that ends
/// here counts that work, for every implementation alike.
fn workers_idle(rt: Rt<'_>) {
    let metrics = rt.rt.metrics();
    let look = || {
        let parks: Vec<u64> = (0..rt.workers)
            .map(|i| metrics.worker_park_unpark_count(i))
            .collect();
        let parked = parks.iter().all(|p| p % 2 == 1);
        let asleep = !threads().iter().any(|t| t.name == rt.name && t.running);
        (parked && asleep).then_some(parks)
    };
    let limit = StdInstant::now() + START_LIMIT;
    let mut last = None;
    loop {
        let now = look();
        if now.is_some() && now == last {
            return;
        }
        assert!(
            StdInstant::now() < limit,
            "the workers of {} never went idle",
            rt.name
        );
        last = now;
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Runs, in one task on `rt` (one worker): `prepare`, then, in the same
/// poll, `first` on what it made, and in a later poll, once the worker has
/// gone idle, `second`. Returns the span of `first` and of `second`, each
/// from its start until the worker is idle again (see [`workers_idle`]).
/// `first` starts as [`timed_tasks`] starts its bodies (the task spinning
/// on its worker); `second` starts with a wake from this thread, the same
/// for every implementation. What `prepare` made is dropped after both.
pub(super) fn two_polls<S, P, A, B>(
    rt: Rt<'_>,
    imp: Imp,
    prepare: P,
    first: A,
    second: B,
) -> (Span, Span)
where
    S: Send + 'static,
    P: FnOnce() -> S + Send + 'static,
    A: FnOnce(&mut S, &mut Context<'_>) + Send + 'static,
    B: FnOnce(&mut S, &mut Context<'_>) + Send + 'static,
{
    assert_runs_on(rt, imp);
    assert_eq!(rt.workers, 1, "two_polls runs one task");
    let gate = Arc::new(Gate::default());
    let (first_done, first_done_rx) = tokio::sync::oneshot::channel::<()>();
    let (go_second, go_second_rx) = tokio::sync::oneshot::channel::<()>();
    let (name, id) = (rt.name, rt.rt.handle().id());
    let g = gate.clone();
    let task = rt.rt.spawn(tokio::task::unconstrained(async move {
        let me = assert_in_task(name, id);
        let mut state = prepare();
        g.arrive(me);
        g.spin_until("the start", || g.go.load(Ordering::Acquire));
        one_poll(|cx| first(&mut state, cx)).await;
        first_done.send(()).expect("the harness waits");
        go_second_rx.await.expect("the harness's go");
        one_poll(|cx| second(&mut state, cx)).await;
        assert_eq!(std::thread::current().id(), me);
        state
    }));
    let started = wait_until(StdInstant::now() + START_LIMIT, || {
        gate.ready.load(Ordering::Acquire) == 1
    });
    assert!(started, "the task did not start on {name}");
    let m = Meter::start(imp);
    gate.go.store(true, Ordering::Release);
    rt.rt.block_on(first_done_rx).expect("the first poll");
    let first = m.stop_after(|| workers_idle(rt));
    let m = Meter::start(imp);
    go_second.send(()).expect("the task waits");
    let state = rt.rt.block_on(task).expect("benchmark task");
    let second = m.stop_after(|| workers_idle(rt));
    drop(state);
    (first, second)
}

/// Polls `f` once with `cx`: it must be pending (registered).
pub(super) fn polled<F: Future + Unpin>(mut f: F, cx: &mut Context<'_>) -> F {
    assert!(Pin::new(&mut f).poll(cx).is_pending());
    f
}
