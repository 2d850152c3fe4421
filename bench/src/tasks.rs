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

use std::future::{poll_fn, Future};
use std::hint::black_box;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::thread::ThreadId;
use std::time::{Duration, Instant as StdInstant};

use hashwheel::Wheel;
use pingora_timeout::fast_timeout::{fast_sleep, fast_timeout};
use tokio_util::time::DelayQueue;

use super::cpu::{rss_growth_per, Meter, Span};
use super::queue::Queue;
use super::support::{child_job, lock, multi_thread, unsupported, InsertCancel, FAR};
use super::task_rt::{
    assert_in_task, polled, run_in_task, timed_tasks, two_polls, Gate, Rt, TaskEnv, RT1,
};
use super::{Imp, PendingOnce, Rng};

/// [`Imp::Floor`]'s stand-in for a timer: its deadline, `d` from now (one
/// clock read, as a `tokio::time::sleep` makes it), and a clone of the
/// task's waker. 32 bytes, held and dropped where a timer would be.
struct FloorTimer {
    _deadline: tokio::time::Instant,
    _waker: Waker,
}

fn floor_timer(d: Duration, cx: &Context<'_>) -> FloorTimer {
    black_box(FloorTimer {
        _deadline: tokio::time::Instant::now() + d,
        _waker: cx.waker().clone(),
    })
}

// ===== register + cancel =====

/// In each task (one per worker), `ops` times: make a 30 s sleep, poll it
/// once with the task's context, drop it.
pub fn register_cancel(rt: Rt<'_>, imp: Imp, ops: u64) -> Span {
    let wheel = rt.wheel.clone();
    timed_tasks(rt, imp, move |cx| match imp.api() {
        Imp::Hashwheel => {
            for _ in 0..ops {
                drop(polled(wheel.sleep(FAR), cx));
            }
        }
        Imp::HashwheelFree => {
            for _ in 0..ops {
                drop(polled(hashwheel::sleep(FAR), cx));
            }
        }
        Imp::Tokio => {
            for _ in 0..ops {
                assert!(pin!(tokio::time::sleep(FAR)).poll(cx).is_pending());
            }
        }
        Imp::Pingora => {
            for _ in 0..ops {
                assert!(pin!(fast_sleep(FAR)).poll(cx).is_pending());
            }
        }
        Imp::Floor => {
            for _ in 0..ops {
                drop(floor_timer(FAR, cx));
            }
        }
        _ => unsupported(imp),
    })
}

// ===== reset + poll =====

/// In each task (one per worker): one sleep 30 s away, polled once with the
/// task's context, then `ops` times moved `step` later and polled again
/// with the same context, as a connection's idle timer is on every message
/// (1 ms: a new tick each time, messages a tick or more apart; 1 µs: most
/// moves stay in the sleep's tick, messages in a burst). The free
/// functions make the same `Sleep` as a held wheel, so they have no row of
/// their own here; pingora's sleep cannot move, so it is made again (as
/// its `reset` row on a plain thread does).
pub fn reset_poll(rt: Rt<'_>, imp: Imp, step: Duration, ops: u64) -> Span {
    let wheel = rt.wheel.clone();
    timed_tasks(rt, imp, move |cx| {
        let base = tokio::time::Instant::now() + FAR;
        let at = |i: u64| base + step * i as u32;
        match imp.api() {
            Imp::Hashwheel => {
                let mut s = polled(wheel.sleep_until(at(0)), cx);
                for i in 1..=ops {
                    s.reset(at(i));
                    assert!(Pin::new(&mut s).poll(cx).is_pending());
                }
            }
            Imp::Tokio => {
                let mut s = pin!(tokio::time::sleep_until(at(0)));
                assert!(s.as_mut().poll(cx).is_pending());
                for i in 1..=ops {
                    s.as_mut().reset(at(i));
                    assert!(s.as_mut().poll(cx).is_pending());
                }
            }
            Imp::Pingora => {
                let mut s = pin!(fast_sleep(FAR));
                assert!(s.as_mut().poll(cx).is_pending());
                for i in 1..=ops {
                    s.set(fast_sleep(FAR + step * i as u32));
                    assert!(s.as_mut().poll(cx).is_pending());
                }
            }
            _ => unsupported(imp),
        }
    })
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

/// In one task on `rt`, `ops` times: `timeout(30 s, f)` polled to
/// completion with the task's context, where `f` is pending once and then
/// ready, or ready at once; for [`Imp::NoTimer`], `f` alone.
pub fn timeout(rt: Rt<'_>, imp: Imp, pending_first: bool, ops: u64) -> Span {
    timeouts(rt, imp, pending_first, false, ops)
}

/// [`timeout`] for the timeouts that start their timer at the first poll
/// that finds `f` pending ([`Imp::TASK_LAZY_TIMEOUT`]): hashwheel's
/// `lazy_timeout` (held wheel and free function) and pingora's
/// `fast_timeout`, which starts its timer the same way (so it is in both
/// rows). tokio has no such timeout.
pub fn lazy_timeout(rt: Rt<'_>, imp: Imp, pending_first: bool, ops: u64) -> Span {
    timeouts(rt, imp, pending_first, true, ops)
}

fn timeouts(rt: Rt<'_>, imp: Imp, pending_first: bool, lazy: bool, ops: u64) -> Span {
    assert_eq!(rt.workers, 1, "the timeout rows run one task");
    let wheel = rt.wheel.clone();
    let f = move || PendingOnce::new(pending_first);
    timed_tasks(rt, imp, move |cx| match (imp.api(), lazy) {
        (Imp::Hashwheel, false) => {
            for _ in 0..ops {
                finish(pin!(wheel.timeout(FAR, f())), pending_first, cx);
            }
        }
        (Imp::Hashwheel, true) => {
            for _ in 0..ops {
                finish(pin!(wheel.lazy_timeout(FAR, f())), pending_first, cx);
            }
        }
        (Imp::HashwheelFree, false) => {
            for _ in 0..ops {
                finish(pin!(hashwheel::timeout(FAR, f())), pending_first, cx);
            }
        }
        (Imp::HashwheelFree, true) => {
            for _ in 0..ops {
                finish(pin!(hashwheel::lazy_timeout(FAR, f())), pending_first, cx);
            }
        }
        (Imp::Tokio, false) => {
            for _ in 0..ops {
                finish(pin!(tokio::time::timeout(FAR, f())), pending_first, cx);
            }
        }
        (Imp::Pingora, _) => {
            for _ in 0..ops {
                finish(pin!(fast_timeout(FAR, f())), pending_first, cx);
            }
        }
        (Imp::NoTimer, _) => {
            for _ in 0..ops {
                finish(pin!(f()), pending_first, cx);
            }
        }
        _ => unsupported(imp),
    })
}

// ===== many pending timers =====

/// In one task on the 1-worker runtime: one pending timer per deadline,
/// polled once with the task's context and kept (the insert span); then,
/// in a later poll, every one cancelled in the order `order` gives (`0..n`
/// for insertion order; the cancel span). Each span lasts until the worker
/// is idle again ([`two_polls`]): tokio's alternative timer files what a
/// poll registered when its worker parks, so timers registered and
/// cancelled in one poll would never reach its wheel, as a server's
/// timers, held across polls, do. A tokio `Sleep` is boxed, as it would
/// live in its task's (boxed) future.
pub fn insert_cancel(
    env: &TaskEnv,
    imp: Imp,
    deadlines: Arc<[Duration]>,
    order: Arc<[usize]>,
) -> InsertCancel {
    let rt = env.rt(imp, 1);
    let wheel = rt.wheel.clone();
    let none = Arc::new(Mutex::new(()));
    let (d, o) = (deadlines, order);
    fn dropped<T>(_: &mut (), t: T) {
        drop(t);
    }
    fn queued<Q: Queue>(q: &mut Q, d: Duration, _: &mut Context<'_>) -> Q::Key {
        q.insert(0, d)
    }
    fn removed<Q: Queue>(q: &mut Q, k: Q::Key) {
        black_box(q.remove(&k));
    }
    match imp.api() {
        Imp::Hashwheel => {
            let make = move |_: &mut (), d, cx: &mut Context<'_>| polled(wheel.sleep(d), cx);
            held_in_task(rt, imp, d, o, none, make, dropped)
        }
        Imp::HashwheelFree => {
            let make = |_: &mut (), d, cx: &mut Context<'_>| polled(hashwheel::sleep(d), cx);
            held_in_task(rt, imp, d, o, none, make, dropped)
        }
        Imp::Tokio => {
            let make =
                |_: &mut (), d, cx: &mut Context<'_>| polled(Box::pin(tokio::time::sleep(d)), cx);
            held_in_task(rt, imp, d, o, none, make, dropped)
        }
        Imp::TokioUtil => held_in_task(rt, imp, d, o, env.dq.clone(), queued, removed),
        Imp::HashwheelQueue => held_in_task(rt, imp, d, o, env.hq.clone(), queued, removed),
        Imp::Floor => {
            let make = |_: &mut (), d, cx: &mut Context<'_>| floor_timer(d, cx);
            held_in_task(rt, imp, d, o, none, make, dropped)
        }
        _ => unsupported(imp),
    }
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

/// Timers registered by one task and kept: never read, only dropped (the
/// drop is what is measured).
#[allow(dead_code)]
enum Held {
    Wheel(Vec<hashwheel::Sleep>),
    Tokio(Vec<Pin<Box<tokio::time::Sleep>>>),
}

/// Two tasks on the 2-worker runtime, each on a worker of its own (checked
/// by thread id). Task A registers `n` 30 s sleeps (polled once with its
/// context). Then, when `cross`, A hands them to task B, which drops them
/// (cancels them) on the other worker; otherwise A drops them itself.
/// The span covers the drops only, when the other task has finished and
/// its worker has had 5 ms to go idle; it counts the whole process's CPU.
pub fn cancel_from(env: &TaskEnv, imp: Imp, n: usize, cross: bool) -> Span {
    #[derive(Default)]
    struct Hand {
        gate: Gate,
        held: Mutex<Option<Held>>,
        a: Mutex<Option<ThreadId>>,
        a_done: AtomicBool,
        b_done: AtomicBool,
    }
    let rt = env.rt(imp, 2);
    let hand = Arc::new(Hand::default());
    let (name, id) = (rt.name, rt.rt.handle().id());
    let wheel = rt.wheel.clone();
    let settle = || std::thread::sleep(Duration::from_millis(5));
    let measure = move |held: Held| {
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
                Poll::Ready(match imp {
                    Imp::Hashwheel => {
                        Held::Wheel((0..n).map(|_| polled(wheel.sleep(FAR), cx)).collect())
                    }
                    Imp::HashwheelFree => {
                        Held::Wheel((0..n).map(|_| polled(hashwheel::sleep(FAR), cx)).collect())
                    }
                    Imp::Tokio => Held::Tokio(
                        (0..n)
                            .map(|_| polled(Box::pin(tokio::time::sleep(FAR)), cx))
                            .collect(),
                    ),
                    _ => unsupported(imp),
                })
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

// ===== memory =====

/// RSS bytes per pending timer: `n` timers (10–60 s away) made by a task on
/// a fresh 1-worker runtime, polled once with its context and kept in a
/// `Vec` (included); with `moved`, each is then moved 1 s later, as an idle
/// timer is (a timer's first move to a later tick may allocate). Run in a
/// fresh child process ([`bytes_per_timer`]).
pub fn rss_per_timer_in_task(imp: Imp, n: usize, moved: bool) -> f64 {
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
    let w = wheel.clone();
    let deadlines = Rng::new(7).durations(n, Duration::from_secs(10), Duration::from_secs(60));
    const LATER: Duration = Duration::from_secs(1);
    let per = run_in_task(r, move |cx| {
        let d = &deadlines[..];
        match imp {
            Imp::Hashwheel if moved => rss_growth_per(d, |d| {
                let mut s = polled(w.sleep(d), cx);
                s.reset(s.deadline() + LATER);
                s
            }),
            Imp::Tokio if moved => rss_growth_per(d, |d| {
                let mut s = polled(Box::pin(tokio::time::sleep(d)), cx);
                let at = s.deadline() + LATER;
                s.as_mut().reset(at);
                s
            }),
            Imp::TokioUtil if moved => {
                let mut dq = DelayQueue::new();
                rss_growth_per(d, |d| {
                    let k = dq.insert(0u32, d);
                    dq.reset(&k, d + LATER);
                    k
                })
            }
            Imp::HashwheelQueue if moved => {
                let mut dq = w.delay_queue();
                rss_growth_per(d, |d| {
                    let k = dq.insert(0u32, d);
                    dq.reset(&k, d + LATER);
                    k
                })
            }
            _ if moved => unsupported(imp),
            Imp::Hashwheel => rss_growth_per(d, |d| polled(w.sleep(d), cx)),
            Imp::HashwheelFree => rss_growth_per(d, |d| polled(hashwheel::sleep(d), cx)),
            Imp::Tokio => rss_growth_per(d, |d| polled(Box::pin(tokio::time::sleep(d)), cx)),
            Imp::Pingora => rss_growth_per(d, |d| polled(Box::pin(fast_sleep(d)), cx)),
            Imp::TokioUtil => {
                let mut dq = DelayQueue::new();
                rss_growth_per(d, |d| dq.insert(0u32, d))
            }
            Imp::HashwheelQueue => {
                let mut dq = w.delay_queue();
                rss_growth_per(d, |d| dq.insert(0u32, d))
            }
            _ => unsupported(imp),
        }
    });
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
