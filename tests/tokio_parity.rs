//! tokio's timer and hashwheel side by side.
//!
//! Each scenario runs twice on a fresh paused-clock runtime: once on
//! `tokio::time` and tokio-util's `DelayQueue`, once on hashwheel's drop-in
//! free functions and `DelayQueue`, with the same steps. After every step
//! the test writes down what a program could observe: what a poll returned,
//! which tasks were woken, what `is_elapsed` says, what time it is. The two
//! logs must be equal, so a difference in behaviour shows up the day it
//! appears, with the step that shows it.
//!
//! Scenarios are generated (proptest) from the operations programs use:
//! sleeps, deadlines on and off the millisecond, resets earlier and later,
//! timeouts (and `lazy_timeout` against a tokio timeout made at its first
//! poll), intervals, queue inserts, removes, resets and drains, explicit
//! `advance` and awaiting a sleep under auto-advance.

mod common;

use std::fmt::Write as _;
use std::future::{pending, Future, Pending};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use proptest::prelude::*;
use tokio::time::Instant;
use tokio_test::task::{spawn, Spawn};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Imp {
    Tokio,
    Wheel,
}

/// A duration as scenarios pick them: whole milliseconds, and offsets just
/// around them, where rounding shows.
#[derive(Debug, Clone, Copy)]
struct Dur(u64);

impl Dur {
    fn get(self) -> Duration {
        Duration::from_nanos(self.0)
    }
}

fn dur() -> impl Strategy<Value = Dur> {
    prop_oneof![
        (0u64..12).prop_map(|ms| Dur(ms * 1_000_000)),
        (0u64..12, 1u64..4).prop_map(|(ms, q)| Dur(ms * 1_000_000 + q * 250_000)),
        (0u64..12, prop_oneof![Just(1u64), Just(999_999u64)])
            .prop_map(|(ms, ns)| Dur(ms * 1_000_000 + ns)),
        (1u64..5).prop_map(|s| Dur(s * 1_000_000_000)),
    ]
}

#[derive(Debug, Clone)]
enum Op {
    Sleep(Dur),
    /// `sleep_until(now - back + ahead)`.
    SleepUntil {
        ahead: Dur,
        back: Dur,
    },
    Timeout(Dur),
    /// `hashwheel::lazy_timeout`, against a tokio timeout made at its
    /// first poll.
    LazyTimeout(Dur),
    Interval(Dur),
    Poll(usize),
    /// `reset(now - back + ahead)`.
    Reset {
        i: usize,
        ahead: Dur,
        back: Dur,
    },
    Drop(usize),
    Advance(Dur),
    Yield,
    /// `sleep(d).await` on the paused clock: the runtime auto-advances.
    AwaitSleep(Dur),
    QInsert(Dur),
    QInsertAt {
        ahead: Dur,
        back: Dur,
    },
    QRemove(usize),
    QReset(usize, Dur),
    QPoll,
    QClear,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => dur().prop_map(Op::Sleep),
        2 => (dur(), dur()).prop_map(|(ahead, back)| Op::SleepUntil { ahead, back }),
        1 => dur().prop_map(Op::Timeout),
        1 => dur().prop_map(Op::LazyTimeout),
        1 => (1u64..8, prop_oneof![Just(0u64), Just(500_000u64)])
            .prop_map(|(ms, ns)| Op::Interval(Dur(ms * 1_000_000 + ns))),
        5 => (0usize..16).prop_map(Op::Poll),
        2 => (0usize..16, dur(), dur()).prop_map(|(i, ahead, back)| Op::Reset { i, ahead, back }),
        1 => (0usize..16).prop_map(Op::Drop),
        5 => dur().prop_map(Op::Advance),
        1 => Just(Op::Yield),
        1 => dur().prop_map(Op::AwaitSleep),
        2 => dur().prop_map(Op::QInsert),
        1 => (dur(), dur()).prop_map(|(ahead, back)| Op::QInsertAt { ahead, back }),
        1 => (0usize..16).prop_map(Op::QRemove),
        1 => (0usize..16, dur()).prop_map(|(i, d)| Op::QReset(i, d)),
        3 => Just(Op::QPoll),
        1 => Just(Op::QClear),
    ]
}

/// A timer of either implementation, as the scenario drives it.
trait Timer {
    fn poll(&mut self, cx: &mut Context<'_>, start: Instant) -> Poll<String>;
    fn reset(&mut self, at: Instant);
    fn is_elapsed(&self) -> Option<bool>;
}

impl Timer for Pin<Box<tokio::time::Sleep>> {
    fn poll(&mut self, cx: &mut Context<'_>, _: Instant) -> Poll<String> {
        self.as_mut().poll(cx).map(|()| "done".into())
    }
    fn reset(&mut self, at: Instant) {
        self.as_mut().reset(at);
    }
    fn is_elapsed(&self) -> Option<bool> {
        Some(self.as_ref().is_elapsed())
    }
}

impl Timer for hashwheel::Sleep {
    fn poll(&mut self, cx: &mut Context<'_>, _: Instant) -> Poll<String> {
        Pin::new(self).poll(cx).map(|()| "done".into())
    }
    fn reset(&mut self, at: Instant) {
        hashwheel::Sleep::reset(self, at);
    }
    fn is_elapsed(&self) -> Option<bool> {
        Some(hashwheel::Sleep::is_elapsed(self))
    }
}

impl Timer for Pin<Box<tokio::time::Timeout<Pending<()>>>> {
    fn poll(&mut self, cx: &mut Context<'_>, _: Instant) -> Poll<String> {
        self.as_mut().poll(cx).map(|r| format!("{r:?}"))
    }
    fn reset(&mut self, _: Instant) {}
    fn is_elapsed(&self) -> Option<bool> {
        None
    }
}

impl Timer for hashwheel::Timeout<Pending<()>> {
    fn poll(&mut self, cx: &mut Context<'_>, _: Instant) -> Poll<String> {
        // Both `Elapsed`s print as `Elapsed(())`.
        Pin::new(self).poll(cx).map(|r| format!("{r:?}"))
    }
    fn reset(&mut self, _: Instant) {}
    fn is_elapsed(&self) -> Option<bool> {
        None
    }
}

/// tokio has no lazy timeout: this one makes `tokio::time::timeout` at its
/// first poll, which is what `hashwheel::lazy_timeout` must behave as once
/// its future is pending (here on every poll).
struct TokioLazy {
    limit: Duration,
    started: Option<Pin<Box<tokio::time::Timeout<Pending<()>>>>>,
}

impl Timer for TokioLazy {
    fn poll(&mut self, cx: &mut Context<'_>, _: Instant) -> Poll<String> {
        let limit = self.limit;
        let t = self
            .started
            .get_or_insert_with(|| Box::pin(tokio::time::timeout(limit, pending())));
        t.as_mut().poll(cx).map(|r| format!("{r:?}"))
    }
    fn reset(&mut self, _: Instant) {}
    fn is_elapsed(&self) -> Option<bool> {
        None
    }
}

impl Timer for hashwheel::LazyTimeout<Pending<()>> {
    fn poll(&mut self, cx: &mut Context<'_>, _: Instant) -> Poll<String> {
        Pin::new(self).poll(cx).map(|r| format!("{r:?}"))
    }
    fn reset(&mut self, _: Instant) {}
    fn is_elapsed(&self) -> Option<bool> {
        None
    }
}

impl Timer for tokio::time::Interval {
    fn poll(&mut self, cx: &mut Context<'_>, start: Instant) -> Poll<String> {
        self.poll_tick(cx).map(|t| format!("tick {:?}", t - start))
    }
    fn reset(&mut self, at: Instant) {
        self.reset_at(at);
    }
    fn is_elapsed(&self) -> Option<bool> {
        None
    }
}

impl Timer for hashwheel::Interval {
    fn poll(&mut self, cx: &mut Context<'_>, start: Instant) -> Poll<String> {
        self.poll_tick(cx).map(|t| format!("tick {:?}", t - start))
    }
    fn reset(&mut self, at: Instant) {
        self.reset_at(at);
    }
    fn is_elapsed(&self) -> Option<bool> {
        None
    }
}

/// A `DelayQueue` of either implementation.
enum Queue {
    Tokio(
        tokio_util::time::DelayQueue<usize>,
        Vec<tokio_util::time::delay_queue::Key>,
    ),
    Wheel(
        hashwheel::DelayQueue<usize>,
        Vec<hashwheel::delay_queue::Key>,
    ),
}

impl Queue {
    fn insert_at(&mut self, n: usize, at: Instant) {
        match self {
            Queue::Tokio(q, keys) => keys.push(q.insert_at(n, at)),
            Queue::Wheel(q, keys) => keys.push(q.insert_at(n, at)),
        }
    }
    fn insert(&mut self, n: usize, d: Duration) {
        match self {
            Queue::Tokio(q, keys) => keys.push(q.insert(n, d)),
            Queue::Wheel(q, keys) => keys.push(q.insert(n, d)),
        }
    }
    /// Removes a value still in the queue. (A key whose value is gone is a
    /// deliberate difference: tokio-util's may reach a newer value stored
    /// in the same slot, hashwheel's keys are generational and reach none.)
    fn remove(&mut self, i: usize, live: &[usize]) -> String {
        if live.is_empty() {
            return "empty".into();
        }
        let n = live[i % live.len()];
        match self {
            Queue::Tokio(q, keys) => {
                format!("{:?}", q.try_remove(&keys[n]).map(|e| e.into_inner()))
            }
            Queue::Wheel(q, keys) => {
                format!("{:?}", q.try_remove(&keys[n]).map(|e| e.into_inner()))
            }
        }
    }
    /// Resets a value still in the queue (tokio-util panics on others).
    fn reset(&mut self, i: usize, d: Duration, live: &[usize]) -> Option<usize> {
        if live.is_empty() {
            return None;
        }
        let n = live[i % live.len()];
        match self {
            Queue::Tokio(q, keys) => q.reset(&keys[n], d),
            Queue::Wheel(q, keys) => q.reset(&keys[n], d),
        }
        Some(n)
    }
    fn poll(&mut self, cx: &mut Context<'_>, start: Instant) -> Poll<Option<(usize, Duration)>> {
        match self {
            Queue::Tokio(q, _) => q
                .poll_expired(cx)
                .map(|e| e.map(|e| (*e.get_ref(), e.deadline() - start))),
            Queue::Wheel(q, _) => q
                .poll_expired(cx)
                .map(|e| e.map(|e| (*e.get_ref(), e.deadline() - start))),
        }
    }
    fn clear(&mut self) {
        match self {
            Queue::Tokio(q, _) => q.clear(),
            Queue::Wheel(q, _) => q.clear(),
        }
    }
    fn len(&self) -> usize {
        match self {
            Queue::Tokio(q, _) => q.len(),
            Queue::Wheel(q, _) => q.len(),
        }
    }
}

/// In `Run::fresh_polls`, the sleep of an `Op::AwaitSleep`.
const AWAITED: usize = usize::MAX;

struct Run {
    imp: Imp,
    start: Instant,
    items: Vec<Option<Spawn<Box<dyn Timer>>>>,
    /// Items whose last poll returned `Ready`.
    done: Vec<bool>,
    /// Items with no timer in the wheel: made, reset, or (an interval)
    /// ticked since their last poll.
    fresh: Vec<bool>,
    /// The steps (log lines) that polled a fresh item, and the item
    /// ([`AWAITED`]: an awaited sleep that completed on its first poll).
    fresh_polls: Vec<(usize, usize)>,
    queue: Queue,
    /// Wakes when the queue's task would be woken.
    qtask: Spawn<()>,
    /// Numbers of the values in the queue.
    qlive: Vec<usize>,
    /// Values set to a deadline that had passed. Their deadline is a
    /// deliberate difference: tokio-util reports where its hierarchical
    /// wheel had got to (any millisecond between the deadline and now),
    /// hashwheel the deadline rounded up to its tick.
    qpast: std::collections::HashSet<usize>,
    qnext: usize,
    log: String,
    steps: usize,
    /// Whether the queue's last poll returned `Pending`.
    qwaiting: bool,
    /// Polls that returned a value although the task had not been woken
    /// since an earlier poll returned `Pending`: lost wake-ups.
    ///
    /// The queue's wake-ups are checked this way, not compared with
    /// tokio-util's: its hierarchical wheel wakes the task when an entry
    /// moves down a level (at the start of a 64 ms slot, say), and on an
    /// insert before the deadline its own sleep is set for, where
    /// hashwheel's compares with a lower bound of that deadline. Extra
    /// wake-ups cost a poll; a missing one would strand a value.
    qlost: Vec<usize>,
}

impl Run {
    fn new(imp: Imp) -> Run {
        let queue = match imp {
            Imp::Tokio => Queue::Tokio(tokio_util::time::DelayQueue::new(), Vec::new()),
            Imp::Wheel => Queue::Wheel(hashwheel::DelayQueue::new(), Vec::new()),
        };
        Run {
            imp,
            start: Instant::now(),
            items: Vec::new(),
            done: Vec::new(),
            fresh: Vec::new(),
            fresh_polls: Vec::new(),
            queue,
            qtask: spawn(()),
            qlive: Vec::new(),
            qpast: Default::default(),
            qnext: 0,
            log: String::new(),
            steps: 0,
            qwaiting: false,
            qlost: Vec::new(),
        }
    }

    fn at(&self, ahead: Dur, back: Dur) -> Instant {
        Instant::now() + ahead.get() - back.get()
    }

    fn push(&mut self, t: Box<dyn Timer>) {
        self.items.push(Some(spawn(t)));
        self.done.push(false);
        self.fresh.push(true);
    }

    fn live(&self, i: usize) -> Option<usize> {
        let n = self.items.len();
        (n > 0).then(|| i % n)
    }

    async fn apply(&mut self, op: &Op) {
        let _ = write!(self.log, "{op:?}:");
        let start = self.start;
        match *op {
            Op::Sleep(d) => self.push(match self.imp {
                Imp::Tokio => Box::new(Box::pin(tokio::time::sleep(d.get()))),
                Imp::Wheel => Box::new(hashwheel::sleep(d.get())),
            }),
            Op::SleepUntil { ahead, back } => {
                let at = self.at(ahead, back);
                self.push(match self.imp {
                    Imp::Tokio => Box::new(Box::pin(tokio::time::sleep_until(at))),
                    Imp::Wheel => Box::new(hashwheel::sleep_until(at)),
                });
            }
            Op::Timeout(d) => self.push(match self.imp {
                Imp::Tokio => Box::new(Box::pin(tokio::time::timeout(d.get(), pending()))),
                Imp::Wheel => Box::new(hashwheel::timeout(d.get(), pending())),
            }),
            Op::LazyTimeout(d) => self.push(match self.imp {
                Imp::Tokio => Box::new(TokioLazy {
                    limit: d.get(),
                    started: None,
                }),
                Imp::Wheel => Box::new(hashwheel::lazy_timeout(d.get(), pending())),
            }),
            Op::Interval(p) => self.push(match self.imp {
                Imp::Tokio => Box::new(tokio::time::interval(p.get())),
                Imp::Wheel => Box::new(hashwheel::interval(p.get())),
            }),
            Op::Poll(i) => {
                if let Some(k) = self.live(i) {
                    if let Some(t) = &mut self.items[k] {
                        let r = t.enter(|cx, mut t| t.poll(cx, start));
                        self.done[k] = r.is_ready();
                        if std::mem::replace(&mut self.fresh[k], r.is_ready()) {
                            self.fresh_polls.push((self.steps, k));
                        }
                        let _ = write!(self.log, " #{k} {r:?}");
                    }
                }
            }
            Op::Reset { i, ahead, back } => {
                let at = self.at(ahead, back);
                if let Some(k) = self.live(i) {
                    // A deliberate difference (README, "What differs"):
                    // tokio wakes the task that last polled a completed
                    // sleep when a reset makes it due again; hashwheel
                    // lets go of that waker when the sleep completes.
                    if let (Some(t), false) = (&mut self.items[k], self.done[k]) {
                        t.enter(|_, mut t| t.reset(at));
                        self.fresh[k] = true;
                    }
                }
            }
            Op::Drop(i) => {
                if let Some(k) = self.live(i) {
                    self.items[k] = None;
                }
            }
            Op::Advance(d) => tokio::time::advance(d.get()).await,
            Op::Yield => tokio::task::yield_now().await,
            Op::AwaitSleep(d) => match self.imp {
                Imp::Tokio => tokio::time::sleep(d.get()).await,
                Imp::Wheel => {
                    let mut sleep = hashwheel::sleep(d.get());
                    let first =
                        std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut sleep).poll(cx)));
                    if first.await.is_ready() {
                        self.fresh_polls.push((self.steps, AWAITED));
                    } else {
                        sleep.await;
                    }
                }
            },
            Op::QInsert(d) => {
                let n = self.qnext;
                self.qnext += 1;
                self.queue.insert(n, d.get());
                self.qlive.push(n);
                if d.0 == 0 {
                    self.qpast.insert(n);
                }
            }
            Op::QInsertAt { ahead, back } => {
                let n = self.qnext;
                self.qnext += 1;
                let at = self.at(ahead, back);
                self.queue.insert_at(n, at);
                self.qlive.push(n);
                if back.0 >= ahead.0 {
                    self.qpast.insert(n);
                }
            }
            Op::QRemove(i) => {
                let r = self.queue.remove(i, &self.qlive);
                self.qlive.retain(|n| format!("{:?}", Some(*n)) != r);
                let _ = write!(self.log, " {r}");
            }
            Op::QReset(i, d) => {
                let r = self.queue.reset(i, d.get(), &self.qlive);
                if let Some(n) = r {
                    if d.0 == 0 {
                        self.qpast.insert(n);
                    } else {
                        self.qpast.remove(&n);
                    }
                }
                let _ = write!(self.log, " {r:?}");
            }
            Op::QPoll => {
                // Drains what is ready, as a consumer loop does, and logs it
                // sorted: values due in the same millisecond come out of
                // tokio-util's queue in an order that depends on how its
                // hierarchical wheel moved them down, which neither queue
                // documents.
                let woken = self.qtask.is_woken();
                let mut got = Vec::new();
                let last = loop {
                    let q = &mut self.queue;
                    let r = self.qtask.enter(|cx, _| q.poll(cx, start));
                    match r {
                        Poll::Ready(Some((n, deadline))) => {
                            if got.is_empty() && self.qwaiting && !woken {
                                self.qlost.push(self.steps);
                            }
                            self.qlive.retain(|&m| m != n);
                            if self.qpast.contains(&n) {
                                got.push(format!("{n} (set in the past)"));
                            } else {
                                got.push(format!("{n} at {deadline:?}"));
                            }
                        }
                        r => break r,
                    }
                };
                self.qwaiting = last.is_pending();
                got.sort();
                let _ = write!(self.log, " {got:?} then {last:?}");
            }
            Op::QClear => {
                self.queue.clear();
                self.qlive.clear();
            }
        }
        self.observe();
    }

    /// What a program could see now, short of polling.
    fn observe(&mut self) {
        let _ = write!(self.log, " | t={:?}", Instant::now() - self.start);
        for (k, t) in self.items.iter().enumerate() {
            if let Some(t) = t {
                let woken = if t.is_woken() { "w" } else { "-" };
                let elapsed = match t.is_elapsed() {
                    Some(true) => "e",
                    Some(false) => ".",
                    None => "",
                };
                let _ = write!(self.log, " {k}{woken}{elapsed}");
            }
        }
        let _ = writeln!(self.log, " q{}", self.queue.len());
        self.steps += 1;
    }
}

fn run(imp: Imp, ops: &[Op]) -> (String, Vec<usize>, Vec<(usize, usize)>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    rt.block_on(async {
        let mut r = Run::new(imp);
        for op in ops {
            r.apply(op).await;
        }
        (r.log, r.qlost, r.fresh_polls)
    })
}

/// Runs `ops` on both and fails with both logs, side by side from the first
/// line that differs, when they disagree.
///
/// One difference is deliberate (README, "What differs"): a timer with no
/// timer in the wheel (made, reset, or an interval that has ticked) whose
/// deadline has been reached completes on its next poll; tokio's completes
/// when its driver has processed the deadline's millisecond, which off a
/// millisecond boundary is the next one. Our timer is never early (its
/// `Ready` comes at or after its deadline: `tests/model.rs`), so a first
/// difference where ours is `Ready` and tokio's `Pending` on a poll of a
/// fresh timer ends the comparison: what follows depends on it. So does an
/// awaited sleep that completes on its first poll, where tokio's paused
/// clock moves on to its next millisecond.
fn compare(ops: &[Op]) {
    let (theirs, their_lost, _) = run(Imp::Tokio, ops);
    let (ours, our_lost, fresh_polls) = run(Imp::Wheel, ops);
    assert!(
        their_lost.is_empty(),
        "the checker itself is wrong: {their_lost:?}"
    );
    assert!(
        our_lost.is_empty(),
        "hashwheel's queue gave a value at steps {our_lost:?} without waking its task\n{ours}"
    );
    let first_difference = theirs.lines().zip(ours.lines()).position(|(a, b)| a != b);
    if let Some(step) = first_difference {
        let (a, b) = (theirs.lines().nth(step), ours.lines().nth(step));
        let sooner = fresh_polls.iter().any(|&(s, k)| {
            s == step
                && (k == AWAITED
                    || a.is_some_and(|a| a.contains(&format!(" #{k} Pending ")))
                        && b.is_some_and(|b| b.contains(&format!(" #{k} Ready("))))
        });
        if sooner {
            return;
        }
    }
    if theirs != ours {
        let mut msg = String::from("tokio and hashwheel disagree\n");
        for (a, b) in theirs.lines().zip(ours.lines()) {
            if a == b {
                let _ = writeln!(msg, "   both: {a}");
            } else {
                let _ = writeln!(msg, "!! tokio: {a}\n!! wheel: {b}");
                break;
            }
        }
        panic!("{msg}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: common::proptest_cases(2_000),
        ..ProptestConfig::default()
    })]

    #[test]
    fn generated_scenarios_behave_as_on_tokio(ops in prop::collection::vec(op(), 1..40)) {
        compare(&ops);
    }
}

// ===== named scenarios: the behaviours a user's test suite leans on =====

fn ms(n: u64) -> Dur {
    Dur(n * 1_000_000)
}

#[test]
fn woken_right_after_advance() {
    compare(&[
        Op::Sleep(ms(10)),
        Op::Poll(0),
        Op::Yield,
        Op::Advance(ms(10)),
        Op::Poll(0),
    ]);
}

#[test]
fn woken_right_after_advance_without_a_yield() {
    compare(&[
        Op::Sleep(ms(10)),
        Op::Poll(0),
        Op::Advance(ms(10)),
        Op::Poll(0),
    ]);
}

#[test]
fn one_rounding_off_the_millisecond() {
    compare(&[
        Op::Advance(Dur(400_000)),
        Op::SleepUntil {
            ahead: Dur(1_000_001),
            back: Dur(0),
        },
        Op::Sleep(ms(1)),
        Op::Sleep(ms(2)),
        Op::Poll(0),
        Op::Poll(1),
        Op::Poll(2),
        Op::AwaitSleep(ms(5)),
        Op::Poll(0),
        Op::Poll(1),
        Op::Poll(2),
    ]);
}

#[test]
fn is_elapsed_before_the_first_poll() {
    compare(&[
        Op::Sleep(ms(1)),
        Op::Advance(ms(5)),
        Op::Poll(0),
        Op::SleepUntil {
            ahead: Dur(0),
            back: ms(1),
        },
        Op::Reset {
            i: 1,
            ahead: Dur(0),
            back: ms(2),
        },
    ]);
}

#[test]
fn intervals_tick_with_tokio() {
    compare(&[
        Op::Interval(Dur(3_500_000)),
        Op::Poll(0),
        Op::Poll(0),
        Op::Advance(ms(3)),
        Op::Advance(Dur(500_000)),
        Op::Poll(0),
        Op::Poll(0),
        Op::Advance(ms(10)),
        Op::Poll(0),
        Op::Poll(0),
        Op::Poll(0),
    ]);
}

#[test]
fn the_queue_says_when_it_is_empty() {
    compare(&[
        Op::QInsert(ms(5)),
        Op::QPoll,
        Op::QRemove(0),
        Op::QPoll,
        Op::QInsert(ms(5)),
        Op::QInsert(ms(7)),
        Op::QPoll,
        Op::QClear,
        Op::QPoll,
        Op::QInsertAt {
            ahead: Dur(0),
            back: ms(3),
        },
        Op::QPoll,
        Op::QPoll,
    ]);
}
