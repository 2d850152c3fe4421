//! The per-timer workloads where a server's timers live: inside tasks on the
//! workers of a multi-thread tokio runtime with one worker or two.
//!
//! Every body asserts that it runs in a task (`tokio::task::try_id()`), on
//! the runtime it was spawned on, on one of that runtime's own (named)
//! threads: never on the thread that called `block_on`. Timers are polled
//! with the task's own `Context` (its real waker), as an `.await` does.
//!
//! A body makes thousands of timers in one poll of its task. tokio's
//! cooperative budget would run out after 128 tokio operations, after which
//! a tokio `Sleep` answers `Pending` *without registering*; so every body runs
//! under `tokio::task::unconstrained`, and each operation does its real work.
//! A server's task, polled once per request, does not hit the budget either.
//!
//! [`rows`], at the end, is `compare`'s sections of these workloads.

use std::future::{poll_fn, Future};
use std::hint::black_box;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::thread::ThreadId;
use std::time::{Duration, Instant as StdInstant};

use hashwheel::Wheel;
use tokio::time::Instant;

use super::cpu::{rss_growth_per, Meter, Span};
use super::queue::Queue;
use super::support::{child_job, lock, multi_thread, InsertCancel, FAR};
use super::task_rt::{assert_in_task, run_in_task, timed_tasks, two_polls, Gate, Rt, TaskEnv, RT1};
use super::timers::{
    expect_kind, Cancels, Later, LazyTimeouts, Queues, Registers, Resets, Timeouts, UseCancels,
    UseLazyTimeouts, UseQueues, UseRegisters, UseResets, UseTimeouts,
};
use super::{Imp, PendingOnce, Rng};

/// The implementations an in-task row runs: those whose type `has` the
/// row's kind, but for futures-timer, whose timers run on a thread of its
/// own rather than on the runtime's workers.
pub fn imps(has: impl Fn(Imp) -> bool) -> Vec<Imp> {
    Imp::which(|i| has(i) && i != Imp::FuturesTimer)
}

/// [`imps`] on tokio's own timer only: the rows that make a runtime of
/// their own (memory) or measure tokio's timer against hashwheel's
/// (cross-worker cancel).
pub fn imps_on_tokio_timer(has: impl Fn(Imp) -> bool) -> Vec<Imp> {
    imps(|i| has(i) && !i.alt_timer())
}

// ===== register + cancel =====

/// Who runs [`register_cancel`]: whatever [`Registers`] a timer.
pub fn register_cancel_imps() -> Vec<Imp> {
    imps(Imp::has_registers)
}

/// In each task (one per worker), `ops` times: make a 30 s sleep (or the
/// floor's record), poll it once with the task's context, drop it.
pub fn register_cancel(rt: Rt<'_>, imp: Imp, ops: u64) -> Span {
    struct W<'a>(Rt<'a>, Imp, u64);
    impl UseRegisters for W<'_> {
        type Out = Span;
        fn run<T: Registers>(self, t: T) -> Span {
            let W(rt, imp, ops) = self;
            timed_tasks(rt, imp, move |cx| {
                for _ in 0..ops {
                    t.register_and_drop(FAR, cx);
                }
            })
        }
    }
    expect_kind(
        imp,
        imp.with_registers(&|| rt.wheel.clone(), W(rt, imp, ops)),
    )
}

// ===== reset + poll =====

/// Who runs [`reset_poll`]: the [`Resets`].
pub fn reset_poll_imps() -> Vec<Imp> {
    imps(Imp::has_resets)
}

/// In each task (one per worker): one sleep 30 s away, polled once with the
/// task's context, then `ops` times moved `step` later and polled again
/// with the same context, as a connection's idle timer is on every message
/// (1 ms: a new tick each time, messages a tick or more apart; 1 µs: most
/// moves stay in the sleep's tick, messages in a burst). The free
/// functions make the same `Sleep` as a held wheel, so they have no row of
/// their own here; pingora's sleep cannot move, so it is made again (as
/// its `reset` row on a plain thread does).
pub fn reset_poll(rt: Rt<'_>, imp: Imp, step: Duration, ops: u64) -> Span {
    struct W<'a>(Rt<'a>, Imp, Duration, u64);
    impl UseResets for W<'_> {
        type Out = Span;
        fn run<T: Resets>(self, t: T) -> Span {
            let W(rt, imp, step, ops) = self;
            timed_tasks(rt, imp, move |cx| {
                let first_at = Instant::now() + FAR;
                let later = |i: u64| Later {
                    first_at,
                    first_after: FAR,
                    by: step * i as u32,
                };
                let mut s = pin!(t.sleep_until(first_at));
                assert!(s.as_mut().poll(cx).is_pending());
                for i in 1..=ops {
                    t.reset(s.as_mut(), later(i));
                    assert!(s.as_mut().poll(cx).is_pending());
                }
            })
        }
    }
    expect_kind(
        imp,
        imp.with_resets(&|| rt.wheel.clone(), W(rt, imp, step, ops)),
    )
}

// ===== timeout =====

/// Polls `f` to completion with `cx`: pending once first when
/// `pending_first`.
fn finish<F: Future>(mut f: Pin<&mut F>, pending_first: bool, cx: &mut Context<'_>) {
    if pending_first {
        assert!(f.as_mut().poll(cx).is_pending());
    }
    assert!(f.poll(cx).is_ready());
}

/// The timeout rows' workload, for [`timeout`] and [`lazy_timeout`].
struct Timeout<'a>(Rt<'a>, Imp, bool, u64);

impl UseTimeouts for Timeout<'_> {
    type Out = Span;
    fn run<T: Timeouts>(self, t: T) -> Span {
        let Timeout(rt, imp, pending_first, ops) = self;
        let f = move || PendingOnce::new(pending_first);
        timed_tasks(rt, imp, move |cx| {
            for _ in 0..ops {
                finish(pin!(t.timeout(FAR, f())), pending_first, cx);
            }
        })
    }
}

impl UseLazyTimeouts for Timeout<'_> {
    type Out = Span;
    fn run<T: LazyTimeouts>(self, t: T) -> Span {
        let Timeout(rt, imp, pending_first, ops) = self;
        let f = move || PendingOnce::new(pending_first);
        timed_tasks(rt, imp, move |cx| {
            for _ in 0..ops {
                finish(pin!(t.lazy_timeout(FAR, f())), pending_first, cx);
            }
        })
    }
}

/// Who runs [`timeout`]: the [`Timeouts`], the no-timer baseline included.
pub fn timeout_imps() -> Vec<Imp> {
    imps(Imp::has_timeouts)
}

/// In one task on `rt`, `ops` times: `timeout(30 s, f)` polled to
/// completion with the task's context, where `f` is pending once and then
/// ready, or ready at once; for [`Imp::NoTimer`], `f` alone.
pub fn timeout(rt: Rt<'_>, imp: Imp, pending_first: bool, ops: u64) -> Span {
    assert_eq!(rt.workers, 1, "the timeout rows run one task");
    let w = Timeout(rt, imp, pending_first, ops);
    expect_kind(imp, imp.with_timeouts(&|| rt.wheel.clone(), w))
}

/// Who runs [`lazy_timeout`]: the [`LazyTimeouts`].
pub fn lazy_timeout_imps() -> Vec<Imp> {
    imps(Imp::has_lazy_timeouts)
}

/// [`timeout`] for the timeouts that start their timer at the first poll
/// that finds `f` pending ([`LazyTimeouts`]): hashwheel's `lazy_timeout`
/// (held wheel and free function) and pingora's `fast_timeout`, which
/// starts its timer the same way (so it is in both rows). tokio has no
/// such timeout.
pub fn lazy_timeout(rt: Rt<'_>, imp: Imp, pending_first: bool, ops: u64) -> Span {
    assert_eq!(rt.workers, 1, "the timeout rows run one task");
    let w = Timeout(rt, imp, pending_first, ops);
    expect_kind(imp, imp.with_lazy_timeouts(&|| rt.wheel.clone(), w))
}

// ===== many pending timers =====

/// Who runs [`insert_cancel`]: the timers that dropping [`Cancels`] (the
/// floor under them included) and the [`Queues`].
pub fn insert_cancel_imps() -> Vec<Imp> {
    imps(|i| i.has_cancels() || i.has_queues())
}

/// In one task on the 1-worker runtime: one pending timer per deadline,
/// polled once with the task's context and kept (the insert span); then,
/// in a later poll, every one cancelled in the order `order` gives (`0..n`
/// for insertion order; the cancel span). Each span lasts until the worker
/// is idle again ([`two_polls`]): tokio's alternative timer files what a
/// poll registered when its worker parks, so timers registered and
/// cancelled in one poll would never reach its wheel, as a server's
/// timers, held across polls, do. Every timer is held alike, boxed as in
/// its task's future ([`Registers::register`]); [`insert_cancel_inline`]
/// holds hashwheel's `Sleep` in the array itself. A `DelayQueue`'s entries
/// are inserted and removed.
pub fn insert_cancel(
    env: &TaskEnv,
    imp: Imp,
    deadlines: Arc<[Duration]>,
    order: Arc<[usize]>,
) -> InsertCancel {
    struct W<'a>(&'a TaskEnv, Rt<'a>, Imp, Arc<[Duration]>, Arc<[usize]>);
    impl UseRegisters for W<'_> {
        type Out = InsertCancel;
        fn run<T: Registers>(self, t: T) -> InsertCancel {
            let W(_, rt, imp, d, o) = self;
            let none = Arc::new(Mutex::new(()));
            let make = move |_: &mut (), d, cx: &mut Context<'_>| t.register(d, cx);
            held_in_task(rt, imp, d, o, none, make, |_, t| drop(t))
        }
    }
    impl UseQueues for W<'_> {
        type Out = InsertCancel;
        fn run<T: Queues>(self, t: T) -> InsertCancel {
            let W(env, rt, imp, d, o) = self;
            fn queued<Q: Queue>(q: &mut Q, d: Duration, _: &mut Context<'_>) -> Q::Key {
                q.insert(0, d)
            }
            fn removed<Q: Queue>(q: &mut Q, k: Q::Key) {
                black_box(q.remove(&k));
            }
            let q = t.shared(&env.queues).clone();
            held_in_task(rt, imp, d, o, q, queued, removed)
        }
    }
    let rt = env.rt(imp, 1);
    let w = || W(env, rt, imp, deadlines.clone(), order.clone());
    let out = imp.with_registers(&|| rt.wheel.clone(), w());
    expect_kind(
        imp,
        out.or_else(|| imp.with_queues(&|| rt.wheel.clone(), w())),
    )
}

/// [`insert_cancel`] for hashwheel's `Sleep`s on a held wheel, each kept in
/// the harness's array itself rather than boxed, as its `Unpin` allows:
/// hashwheel's extra, beside the rows where every timer is held alike.
pub fn insert_cancel_inline(
    env: &TaskEnv,
    deadlines: Arc<[Duration]>,
    order: Arc<[usize]>,
) -> InsertCancel {
    let rt = env.rt(Imp::Hashwheel, 1);
    let wheel = rt.wheel.clone();
    let make = move |_: &mut (), d, cx: &mut Context<'_>| {
        let mut s = wheel.sleep(d);
        assert!(Pin::new(&mut s).poll(cx).is_pending());
        s
    };
    let none = Arc::new(Mutex::new(()));
    held_in_task(rt, Imp::Hashwheel, deadlines, order, none, make, |_, s| {
        drop(s)
    })
}

/// [`insert_cancel`] for one kind of timer: `make` makes one in `state`
/// (locked once per poll), `cancel` cancels it. The harness's own array is
/// filled (its pages faulted in) before the clock starts.
fn held_in_task<S, T, M, C>(
    rt: Rt<'_>,
    imp: Imp,
    deadlines: Arc<[Duration]>,
    order: Arc<[usize]>,
    state: Arc<Mutex<S>>,
    mut make: M,
    mut cancel: C,
) -> InsertCancel
where
    S: Send + 'static,
    T: Send + 'static,
    M: FnMut(&mut S, Duration, &mut Context<'_>) -> T + Send + 'static,
    C: FnMut(&mut S, T) + Send + 'static,
{
    let n = deadlines.len();
    let state2 = state.clone();
    let (insert, cancel) = two_polls(
        rt,
        imp,
        move || -> Vec<Option<T>> { (0..n).map(|_| None).collect() },
        move |held, cx| {
            let mut s = lock(&state);
            for (slot, &d) in held.iter_mut().zip(&deadlines[..]) {
                *slot = Some(make(&mut s, d, cx));
            }
        },
        move |held, _| {
            let mut s = lock(&state2);
            for &i in &order[..] {
                let t = held[i].take().expect("each timer is cancelled once");
                cancel(&mut s, t);
            }
        },
    );
    InsertCancel { insert, cancel }
}

// ===== cross-worker cancel =====

/// Who runs [`cancel_from`]: the timer futures that dropping [`Cancels`],
/// on tokio's own timer.
pub fn cancel_from_imps() -> Vec<Imp> {
    imps_on_tokio_timer(|i| i.has_sleeps() && i.has_cancels())
}

/// Two tasks on the 2-worker runtime, each on a worker of its own (checked
/// by thread id). Task A registers `n` 30 s sleeps (polled once with its
/// context, each boxed: [`Registers::register`]). Then, when `cross`, A
/// hands them to task B, which drops them (cancels them) on the other
/// worker; otherwise A drops them itself.
/// The span covers the drops only, when the other task has finished and
/// its worker has had 5 ms to go idle; it counts the whole process's CPU.
pub fn cancel_from(env: &TaskEnv, imp: Imp, n: usize, cross: bool) -> Span {
    /// What the two tasks share. `held`: the timers registered by task A
    /// and kept: never read, only dropped (the drop is what is measured).
    struct Hand<P> {
        gate: Gate,
        held: Mutex<Option<Vec<P>>>,
        a: Mutex<Option<ThreadId>>,
        a_done: AtomicBool,
        b_done: AtomicBool,
    }
    struct W<'a>(Rt<'a>, Imp, usize, bool);
    impl UseCancels for W<'_> {
        type Out = Span;
        fn run<T: Cancels>(self, t: T) -> Span {
            let W(rt, imp, n, cross) = self;
            let hand = Arc::new(Hand::<T::Pending> {
                gate: Gate::default(),
                held: Mutex::new(None),
                a: Mutex::new(None),
                a_done: AtomicBool::new(false),
                b_done: AtomicBool::new(false),
            });
            let (name, id) = (rt.name, rt.rt.handle().id());
            let settle = || std::thread::sleep(Duration::from_millis(5));
            let measure = move |held: Vec<T::Pending>| {
                let m = Meter::start(imp);
                drop(held);
                m.stop()
            };
            let a = {
                let hand = hand.clone();
                rt.rt.spawn(tokio::task::unconstrained(async move {
                    let me = assert_in_task(name, id);
                    *lock(&hand.a) = Some(me);
                    hand.gate.arrive(me);
                    let both = || hand.gate.ready.load(Ordering::Acquire) == 2;
                    hand.gate.spin_until("task B", both);
                    let held = poll_fn(|cx| {
                        Poll::Ready((0..n).map(|_| t.register(FAR, cx)).collect::<Vec<_>>())
                    })
                    .await;
                    if cross {
                        *lock(&hand.held) = Some(held);
                        hand.a_done.store(true, Ordering::Release);
                        return None;
                    }
                    hand.gate
                        .spin_until("task B's end", || hand.b_done.load(Ordering::Acquire));
                    settle();
                    assert_eq!(std::thread::current().id(), me, "task A moved");
                    Some(measure(held))
                }))
            };
            let b = {
                let hand = hand.clone();
                rt.rt.spawn(tokio::task::unconstrained(async move {
                    let me = assert_in_task(name, id);
                    hand.gate.arrive(me);
                    let both = || hand.gate.ready.load(Ordering::Acquire) == 2;
                    hand.gate.spin_until("task A", both);
                    if !cross {
                        hand.b_done.store(true, Ordering::Release);
                        return None;
                    }
                    let limit = StdInstant::now() + Duration::from_secs(600);
                    while !hand.a_done.load(Ordering::Acquire) {
                        assert!(StdInstant::now() < limit, "task A never handed over");
                        std::hint::spin_loop();
                    }
                    settle();
                    let held = lock(&hand.held).take().expect("A's timers");
                    let a = lock(&hand.a).expect("A's thread");
                    assert_ne!(std::thread::current().id(), a, "B runs on A's worker");
                    assert_eq!(std::thread::current().id(), me, "task B moved");
                    Some(measure(held))
                }))
            };
            let (a, b) = rt.rt.block_on(async { (a.await, b.await) });
            assert_eq!(hand.gate.distinct_threads(), 2, "A and B shared a worker");
            let span = a.expect("task A").or(b.expect("task B"));
            span.expect("one task measured the drops")
        }
    }
    let rt = env.rt(imp, 2);
    expect_kind(
        imp,
        imp.with_cancels(&|| rt.wheel.clone(), W(rt, imp, n, cross)),
    )
}

// ===== memory =====

/// Who runs [`bytes_per_timer`]: the timers (not the baselines) and the
/// [`Queues`]; with `moved`, those that move in place: the [`Resets`]
/// that dropping [`Cancels`] (pingora's new sleep leaves the old one
/// pending until it fires) and the [`Queues`].
pub fn memory_imps(moved: bool) -> Vec<Imp> {
    if moved {
        imps_on_tokio_timer(|i| (i.has_resets() && i.has_cancels()) || i.has_queues())
    } else {
        imps_on_tokio_timer(|i| !i.is_baseline() && (i.has_registers() || i.has_queues()))
    }
}

/// RSS bytes per pending timer: `n` timers (10–60 s away) made by a task on
/// a fresh 1-worker runtime, polled once with its context and kept, each
/// boxed ([`Registers::register`]), in a `Vec` (included); with `moved`,
/// each is then moved 1 s later, as an idle timer is (a timer's first move
/// to a later tick may allocate). Run in a fresh child process
/// ([`bytes_per_timer`]).
pub fn rss_per_timer_in_task(imp: Imp, n: usize, moved: bool) -> f64 {
    const LATER: Duration = Duration::from_secs(1);
    struct W<'a>(Rt<'a>, Vec<Duration>);
    impl UseRegisters for W<'_> {
        type Out = f64;
        fn run<T: Registers>(self, t: T) -> f64 {
            let W(r, deadlines) = self;
            run_in_task(r, move |cx| {
                rss_growth_per(&deadlines, |d| t.register(d, cx))
            })
        }
    }
    impl UseResets for W<'_> {
        type Out = f64;
        fn run<T: Resets>(self, t: T) -> f64 {
            let W(r, deadlines) = self;
            run_in_task(r, move |cx| {
                rss_growth_per(&deadlines, |d| {
                    let first_at = Instant::now() + d;
                    let mut k = Box::pin(t.sleep_until(first_at));
                    assert!(k.as_mut().poll(cx).is_pending());
                    let later = Later {
                        first_at,
                        first_after: d,
                        by: LATER,
                    };
                    t.reset(k.as_mut(), later);
                    k
                })
            })
        }
    }
    /// A `DelayQueue`'s entries, each moved later once with `.1`.
    struct Q<'a>(Rt<'a>, Vec<Duration>, bool);
    impl UseQueues for Q<'_> {
        type Out = f64;
        fn run<T: Queues>(self, t: T) -> f64 {
            let Q(r, deadlines, moved) = self;
            run_in_task(r, move |_| {
                let mut q = t.queue();
                rss_growth_per(&deadlines, |d| {
                    let k = q.insert(0u32, d);
                    if moved {
                        q.reset(&k, d + LATER);
                    }
                    k
                })
            })
        }
    }
    let rt = multi_thread(1, RT1);
    let wheel = {
        let _g = rt.enter();
        Wheel::new()
    };
    let r = Rt {
        rt: &rt,
        wheel: &wheel,
        name: RT1,
        workers: 1,
        alt_timer: false,
    };
    let deadlines = Rng::new(7).durations(n, Duration::from_secs(10), Duration::from_secs(60));
    // The deadlines are not copied: a freed copy of that size would raise
    // glibc's mmap threshold, and the timers' large allocations would then
    // come from the heap, which keeps more resident.
    let make = || wheel.clone();
    let per = if imp.has_queues() {
        imp.with_queues(&make, Q(r, deadlines, moved))
    } else if moved {
        imp.with_resets(&make, W(r, deadlines))
    } else {
        imp.with_registers(&make, W(r, deadlines))
    };
    let per = expect_kind(imp, per);
    rt.shutdown_background();
    per
}
/// Bytes per pending timer for `n` timers held in a task (each moved
/// later once, with `moved`), measured in a child process.
pub fn bytes_per_timer(imp: Imp, n: usize, moved: bool) -> Option<f64> {
    let job = if moved {
        "task_memory_moved"
    } else {
        "task_memory"
    };
    child_job(&format!("{job} {} {n}", imp.id()))
}

/// `compare`'s rows of these workloads: one section a `--only` name, each
/// running its workload round by round, implementations alternating.
pub mod rows {
    use std::sync::Arc;
    use std::time::Duration;

    use crate::config::Config;
    use crate::in_task as tasks;
    use crate::section::{Envs, Section};
    use crate::table::{count, rounds, Table, NS};
    use crate::{pending_inputs, Imp};

    /// These workloads' sections, in the order `compare` runs them.
    pub const SECTIONS: &[Section] = &[
        Section::new("task_register", register_cancel),
        Section::new("task_reset", reset_poll),
        Section::new("task_timeout", timeout),
        Section::new("task_insert", insert_cancel),
        Section::new("cross", cross_worker_cancel),
        Section::new("task_memory", memory),
    ];

    /// The name of the in-task insert row for `n` pending timers.
    pub fn insert_row(n: usize) -> String {
        format!(
            "task, 1 worker: insert {} pending timers (10–60 s), CPU",
            count(n)
        )
    }

    /// The name of the in-task cancel row for `n` pending timers, cancelled in
    /// insertion order (`random` false) or in random order.
    pub fn cancel_row(n: usize, random: bool) -> String {
        let order = if random { "random" } else { "insertion" };
        format!(
            "task, 1 worker: cancel those {} ({order} order), CPU",
            count(n)
        )
    }

    /// The name of `row`'s twin with hashwheel's `Sleep`s held inline
    /// ([`tasks::insert_cancel_inline`]).
    fn inline(row: &str) -> String {
        format!("{row}, hashwheel's Sleep inline (not boxed)")
    }

    /// The head of a row run in a task on each of `workers` workers.
    fn workers_head(workers: usize) -> String {
        match workers {
            1 => "task, 1 worker".to_string(),
            n => format!("task, {n} workers (a task on each)"),
        }
    }

    pub fn register_cancel(cfg: &Config, e: &Envs, t: &mut Table) {
        let ops = cfg.task_ops;
        for workers in [1, 2] {
            let head = workers_head(workers);
            let cpu = format!("{head}: register + cancel a 30 s sleep, CPU");
            let wall = match workers {
                1 => format!("{head}: register + cancel a 30 s sleep, wall"),
                _ => format!(
                    "{head}: register + cancel a 30 s sleep, wall (combined: all ops ÷ elapsed)"
                ),
            };
            rounds(cfg.rounds, &tasks::register_cancel_imps(), |imp| {
                let all = ops * workers as u64;
                let (c, w) = tasks::register_cancel(e.task.rt(imp, workers), imp, ops).per_op(all);
                t.add(&cpu, NS, imp, c);
                t.add(&wall, NS, imp, w);
            });
        }
    }

    pub fn reset_poll(cfg: &Config, e: &Envs, t: &mut Table) {
        let ops = cfg.task_ops;
        let steps = [
            (
                Duration::from_millis(1),
                "1 ms later (a new tick each time)",
            ),
            (
                Duration::from_micros(1),
                "1 µs later (mostly within its tick)",
            ),
        ];
        for (workers, (step, what)) in [1, 2].into_iter().flat_map(|w| steps.map(|s| (w, s))) {
            let head = workers_head(workers);
            let cpu = format!("{head}: reset a pending sleep {what} and poll it, CPU");
            rounds(cfg.rounds, &tasks::reset_poll_imps(), |imp| {
                let all = ops * workers as u64;
                let c = tasks::reset_poll(e.task.rt(imp, workers), imp, step, ops)
                    .per_op(all)
                    .0;
                t.add(&cpu, NS, imp, c);
            });
        }
    }

    pub fn timeout(cfg: &Config, e: &Envs, t: &mut Table) {
        let ops = cfg.task_ops;
        for (pending, what) in [(true, "pending once, then ready"), (false, "ready at once")] {
            let name = format!("task, 1 worker: timeout(30 s, f), f {what}, CPU");
            rounds(cfg.rounds, &tasks::timeout_imps(), |imp| {
                let cpu = tasks::timeout(e.task.rt(imp, 1), imp, pending, ops)
                    .per_op(ops)
                    .0;
                t.add(&name, NS, imp, cpu);
            });
            let name = format!(
            "task, 1 worker: timeout counted from the first pending poll (lazy_timeout; pingora's fast_timeout), f {what}, CPU"
        );
            rounds(cfg.rounds, &tasks::lazy_timeout_imps(), |imp| {
                let cpu = tasks::lazy_timeout(e.task.rt(imp, 1), imp, pending, ops)
                    .per_op(ops)
                    .0;
                t.add(&name, NS, imp, cpu);
            });
        }
    }

    /// Each round runs every implementation twice: insert then cancel in
    /// insertion order, and insert then cancel in random order; a held
    /// wheel runs each twice more with its `Sleep`s inline, into rows of
    /// their own. The insert row has both inserts (two values per round).
    pub fn insert_cancel(cfg: &Config, e: &Envs, t: &mut Table) {
        for &n in &cfg.sizes {
            let (deadlines, random) = pending_inputs(n, n as u64);
            let (deadlines, random): (Arc<[Duration]>, Arc<[usize]>) =
                (deadlines.into(), random.into());
            let in_order: Arc<[usize]> = (0..n).collect();
            let r = if n >= cfg.slow_size {
                cfg.slow_rounds
            } else {
                cfg.rounds
            };
            // Every timer's rows first, hashwheel's inline twins after.
            let insert = insert_row(n);
            t.reserve(&insert, NS);
            t.reserve(&cancel_row(n, false), NS);
            t.reserve(&cancel_row(n, true), NS);
            rounds(r, &tasks::insert_cancel_imps(), |imp| {
                for (is_random, order) in [(false, &in_order), (true, &random)] {
                    let ic = tasks::insert_cancel(&e.task, imp, deadlines.clone(), order.clone());
                    t.add(&insert, NS, imp, ic.insert.per_op(n as u64).0);
                    let cancel = cancel_row(n, is_random);
                    t.add(&cancel, NS, imp, ic.cancel.per_op(n as u64).0);
                    if imp == Imp::Hashwheel {
                        let (d, o) = (deadlines.clone(), order.clone());
                        let ic = tasks::insert_cancel_inline(&e.task, d, o);
                        t.add(&inline(&insert), NS, imp, ic.insert.per_op(n as u64).0);
                        t.add(&inline(&cancel), NS, imp, ic.cancel.per_op(n as u64).0);
                    }
                }
            });
        }
    }

    pub fn cross_worker_cancel(cfg: &Config, e: &Envs, t: &mut Table) {
        let n = cfg.cross_n;
        let same = format!(
            "task, 2 workers: cancel {} timers on the worker that registered them, CPU",
            count(n)
        );
        let cross = format!(
        "task, 2 workers: cancel {} timers on the other worker (registered on A, dropped on B), CPU",
        count(n)
    );
        rounds(cfg.rounds, &tasks::cancel_from_imps(), |imp| {
            for (is_cross, name) in [(false, &same), (true, &cross)] {
                let s = tasks::cancel_from(&e.task, imp, n, is_cross);
                t.add(name, NS, imp, s.per_op(n as u64).0);
            }
        });
    }

    pub fn memory(cfg: &Config, _: &Envs, t: &mut Table) {
        let rows = [(false, ""), (true, " moved 1 s later once (an idle timer)")];
        for (moved, what) in rows {
            let name = format!(
                "task, 1 worker: memory per pending timer{what}, RSS of {}",
                count(cfg.memory_n)
            );
            rounds(
                1,
                &tasks::memory_imps(moved),
                |imp| match tasks::bytes_per_timer(imp, cfg.memory_n, moved) {
                    Some(b) => t.add(&name, "B", imp, b),
                    None => eprintln!("{}: the memory child failed", imp.name()),
                },
            );
        }
    }
}
