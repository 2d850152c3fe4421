//! Model test: random programs of timer operations on tokio's paused clock,
//! checked step by step against a plain reference model.
//!
//! Every step is an operation (insert a sleep, delay or timeout; poll;
//! cancel through a handle; drop; reset earlier or later; complete a
//! timeout's inner future; insert, remove or reset a `DelayQueue` value;
//! advance the clock by a sub-tick amount, whole ticks, many turns of the
//! wheel, or exactly to a deadline ± 1 ns). After
//! each one the driver is allowed to settle, every woken future is polled,
//! and these invariants are checked:
//!
//! 1. Nothing completes before its deadline, nor before the first tick at or
//!    after it (unless it was armed with the deadline already past, which
//!    completes at once).
//! 2. Everything armed and not cancelled completes once the clock reaches
//!    that tick, and its task was woken for it (no lost wake-up).
//! 3. Nothing completes twice: a completed future's task is never woken again.
//! 4. A cancelled delay resolves to `is_cancelled()`; `cancel()` returns
//!    true exactly when the delay was pending; a handle whose delay is gone
//!    (its slab slot possibly reused) changes nothing and reports the truth.
//! 5. `metrics().num_pending()` equals the model's count of armed timers;
//!    `num_entries()` lies between that and that plus the completed delays
//!    still alive.
//! 6. The `DelayQueue` yields each value once, not before its tick, and by
//!    the time the clock reaches it (its task woken for it); `try_remove` and
//!    `try_reset` of a live key act on that value, of a stale key (removed
//!    or expired, its slot possibly reused) return `None`. The queue runs on
//!    a second wheel, so that its own sleep does not blur the count in 5.
//! 7. At the end, after dropping everything (or shutting down, which
//!    completes every pending timer and returns their number), the slabs are
//!    empty.
//!
//! Cases: `PROPTEST_CASES` (default 10,000). A failing case is saved in
//! `tests/model.proptest-regressions` and replayed first on every run.

mod common;

use std::task::Poll;
use std::time::Duration;

use hashwheel::delay_queue::Key;
use hashwheel::{Delay, DelayQueue, Sleep, Timeout, TimeoutHandle, Wheel};
use proptest::prelude::*;
use tokio::sync::oneshot;
use tokio::time::Instant;
use tokio_test::task::{spawn, Spawn};

// ===== the program =====

/// A duration, resolved against the wheel's tick and slots.
#[derive(Debug, Clone, Copy)]
enum Dur {
    Zero,
    /// `n`/1000 of a tick (at least 1 ns).
    SubTick(u32),
    /// `k` ticks plus `delta` nanoseconds.
    Ticks(u32, i8),
    /// `turns` whole turns of the wheel plus `k` ticks.
    Turns(u32, u32),
    /// `Duration::MAX`: never.
    Max,
}

#[derive(Debug, Clone)]
enum Op {
    /// `sleep(d)`, or `sleep_until(now ± d)` when `until`.
    Sleep {
        d: Dur,
        until: bool,
        past: bool,
        poll: bool,
    },
    /// `delay(d)`, or `delay_at(now ± d)` when `at`.
    Delay {
        d: Dur,
        at: bool,
        past: bool,
        poll: bool,
    },
    /// `timeout(d, rx)`, or `timeout_at(now ± d, rx)` when `at`.
    Timeout { d: Dur, at: bool, past: bool },
    /// Polls item `i` (a spurious poll for an armed one).
    Poll(usize),
    /// Cancels delay `i` through its handle (stale handles included).
    Cancel(usize),
    /// Drops item `i`.
    Drop(usize),
    /// Resets sleep `i` to `now ± d`, then maybe polls it.
    Reset {
        i: usize,
        d: Dur,
        past: bool,
        poll: bool,
    },
    /// Completes the inner future of timeout `i`.
    Complete(usize),
    /// `queue.insert(d)`, or `queue.insert_at(now ± d)` when `at`.
    QueueInsert { d: Dur, at: bool, past: bool },
    /// `try_remove` of value `i` (stale keys included).
    QueueRemove(usize),
    /// `try_reset_at(now ± d)` of value `i` (stale keys included).
    QueueReset { i: usize, d: Dur, past: bool },
    /// Advances the clock by `d`.
    Advance(Dur),
    /// Advances the clock to item `i`'s deadline, or the tick after it, ± 1 ns.
    AdvanceTo { i: usize, tick: bool, delta: i8 },
}

#[derive(Debug, Clone)]
struct Program {
    tick_ms: u64,
    slots: usize,
    shards: usize,
    ops: Vec<Op>,
    shutdown_at_end: bool,
}

fn dur() -> impl Strategy<Value = Dur> {
    prop_oneof![
        1 => Just(Dur::Zero),
        3 => (1u32..1000).prop_map(Dur::SubTick),
        6 => (1u32..200, -1i8..=1).prop_map(|(k, d)| Dur::Ticks(k, d)),
        3 => (1u32..20, 0u32..64).prop_map(|(t, k)| Dur::Turns(t, k)),
        1 => Just(Dur::Max),
    ]
}

fn advance_dur() -> impl Strategy<Value = Dur> {
    prop_oneof![
        4 => (1u32..1000).prop_map(Dur::SubTick),
        6 => (1u32..20, -1i8..=1).prop_map(|(k, d)| Dur::Ticks(k, d)),
        2 => (1u32..40, 0u32..64).prop_map(|(t, k)| Dur::Turns(t, k)),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let i = 0usize..64;
    prop_oneof![
        4 => (dur(), any::<bool>(), prop::bool::weighted(0.2), prop::bool::weighted(0.85))
            .prop_map(|(d, until, past, poll)| Op::Sleep { d, until, past, poll }),
        4 => (dur(), any::<bool>(), prop::bool::weighted(0.2), prop::bool::weighted(0.85))
            .prop_map(|(d, at, past, poll)| Op::Delay { d, at, past, poll }),
        2 => (dur(), any::<bool>(), prop::bool::weighted(0.2))
            .prop_map(|(d, at, past)| Op::Timeout { d, at, past }),
        1 => i.clone().prop_map(Op::Poll),
        2 => i.clone().prop_map(Op::Cancel),
        2 => i.clone().prop_map(Op::Drop),
        3 => (i.clone(), dur(), prop::bool::weighted(0.3), any::<bool>())
            .prop_map(|(i, d, past, poll)| Op::Reset { i, d, past, poll }),
        1 => i.clone().prop_map(Op::Complete),
        3 => (dur(), any::<bool>(), prop::bool::weighted(0.2))
            .prop_map(|(d, at, past)| Op::QueueInsert { d, at, past }),
        1 => i.clone().prop_map(Op::QueueRemove),
        2 => (i.clone(), dur(), prop::bool::weighted(0.3))
            .prop_map(|(i, d, past)| Op::QueueReset { i, d, past }),
        6 => advance_dur().prop_map(Op::Advance),
        3 => (i, any::<bool>(), -1i8..=1).prop_map(|(i, tick, delta)| Op::AdvanceTo { i, tick, delta }),
    ]
}

fn program() -> impl Strategy<Value = Program> {
    (
        prop::sample::select(vec![1u64, 2, 5]),
        prop::sample::select(vec![1usize, 2, 4, 8, 64]),
        prop::sample::select(vec![1usize, 3]),
        prop::collection::vec(op(), 1..48),
        prop::bool::weighted(0.3),
    )
        .prop_map(|(tick_ms, slots, shards, ops, shutdown_at_end)| Program {
            tick_ms,
            slots,
            shards,
            ops,
            shutdown_at_end,
        })
}

// ===== the reference model =====

/// Nanoseconds since the wheel's origin; `None` is never.
type Ns = Option<i128>;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// Made, never polled since it was made (or reset while not armed): its
    /// first poll completes at once if the tick of its deadline has ended.
    Unpolled,
    /// In the wheel: completes when the clock reaches `due`.
    Armed {
        due: Ns,
    },
    Done,
}

enum Fut {
    Sleep(Spawn<Sleep>),
    Delay(Spawn<Delay>, TimeoutHandle),
    Timeout(
        Spawn<Timeout<oneshot::Receiver<u32>>>,
        Option<oneshot::Sender<u32>>,
    ),
}

struct Item {
    id: usize,
    fut: Fut,
    deadline: Ns,
    phase: Phase,
    /// A delay cancelled through its handle.
    cancelled: bool,
    /// A timeout whose inner future was completed.
    completed_inner: bool,
}

/// A handle whose delay has been dropped, and what it must keep saying.
struct Ghost {
    id: usize,
    handle: TimeoutHandle,
    expired: bool,
}

/// A value in the `DelayQueue`.
struct QVal {
    id: usize,
    key: Key,
    deadline: Ns,
}

struct Model {
    wheel: Wheel,
    /// The wheel the queue's own sleep runs on.
    qwheel: Wheel,
    queue: Spawn<DelayQueue<usize>>,
    qvals: Vec<QVal>,
    /// Keys of values that have left the queue.
    qgone: Vec<Key>,
    origin: Instant,
    tick: i128,
    slots: i128,
    now: i128,
    items: Vec<Item>,
    ghosts: Vec<Ghost>,
    next_id: usize,
    log: Vec<String>,
}

/// How many times `settle` yields to the driver before giving up.
const MAX_SETTLE_ROUNDS: usize = 64;

impl Model {
    fn resolve(&self, d: Dur) -> Ns {
        let t = self.tick;
        Some(match d {
            Dur::Zero => 0,
            Dur::SubTick(n) => (t * i128::from(n) / 1000).max(1),
            Dur::Ticks(k, delta) => (i128::from(k) * t + i128::from(delta)).max(0),
            Dur::Turns(turns, k) => (i128::from(turns) * self.slots + i128::from(k)) * t,
            Dur::Max => return None,
        })
    }

    fn ns_since_origin(&self, t: Instant) -> i128 {
        if t >= self.origin {
            (t - self.origin).as_nanos() as i128
        } else {
            -((self.origin - t).as_nanos() as i128)
        }
    }

    fn instant(&self, ns: i128) -> Instant {
        if ns >= 0 {
            self.origin + Duration::from_nanos(ns as u64)
        } else {
            self.origin - Duration::from_nanos((-ns) as u64)
        }
    }

    /// `now ± d` as a deadline; `Duration::MAX` gives the far future.
    fn target(&self, d: Dur, past: bool) -> (Instant, Ns) {
        match self.resolve(d) {
            None => {
                // Centuries ahead, beyond what the wheel can represent.
                let far = Duration::from_secs(400 * 365 * 86_400);
                (self.origin + far, None)
            }
            Some(ns) => {
                let at = if past { self.now - ns } else { self.now + ns };
                (self.instant(at), Some(at))
            }
        }
    }

    /// The first tick boundary at or after `deadline`.
    fn boundary(&self, deadline: Ns) -> Ns {
        deadline.map(|d| {
            if d <= 0 {
                0
            } else {
                (d + self.tick - 1) / self.tick * self.tick
            }
        })
    }

    /// When an item armed now completes: at the end of the tick that holds
    /// its deadline, as tokio's timer would; at once if the deadline has
    /// been reached, even inside its tick.
    fn due_when_armed(&self, deadline: Ns) -> Ns {
        match deadline {
            Some(d) if d <= self.now => Some(self.now),
            _ => self.boundary(deadline),
        }
    }

    fn is_due(&self, due: Ns) -> bool {
        due.is_some_and(|d| d <= self.now)
    }

    fn push(&mut self, fut: Fut, deadline: Ns) -> usize {
        let id = self.next_id;
        self.next_id += 1;
        self.items.push(Item {
            id,
            fut,
            deadline,
            phase: Phase::Unpolled,
            cancelled: false,
            completed_inner: false,
        });
        self.items.len() - 1
    }

    fn fail(&self, msg: String) -> ! {
        let m = self.wheel.metrics();
        panic!(
            "{msg}\n  now = {} ns since origin, tick = {} ns, slots = {}\n  metrics: {m:?}\n  log:\n    {}",
            self.now,
            self.tick,
            self.slots,
            self.log.join("\n    ")
        );
    }

    // ===== polling and checking one item =====

    /// Polls item `k` and checks what it returns against the model. Returns
    /// whether the item is done and should be dropped (a timeout whose
    /// inner future completed).
    fn poll(&mut self, k: usize) -> bool {
        let now = self.now;
        // Arm on the first poll.
        if self.items[k].phase == Phase::Unpolled {
            let due = if self.items[k].cancelled {
                Some(now)
            } else {
                self.due_when_armed(self.items[k].deadline)
            };
            self.items[k].phase = Phase::Armed { due };
        }
        let item = &mut self.items[k];
        let Phase::Armed { due } = item.phase else {
            let id = item.id;
            self.fail(format!("item {id} polled after it completed"));
        };
        let due_now = due.is_some_and(|d| d <= now);
        let on_time = |deadline: Ns| due_now && deadline.is_some_and(|d| d <= now);
        let id = item.id;
        let deadline = item.deadline;
        let res: Result<bool, String> = match &mut item.fut {
            Fut::Sleep(t) => match t.poll() {
                Poll::Pending => Ok(false),
                Poll::Ready(()) if on_time(deadline) => Ok(true),
                Poll::Ready(()) => Err(format!(
                    "sleep {id} completed early: deadline {deadline:?}, due {due:?}"
                )),
            },
            Fut::Delay(t, _) => match t.poll() {
                Poll::Pending => Ok(false),
                Poll::Ready(Ok(())) if !item.cancelled && on_time(deadline) => Ok(true),
                Poll::Ready(Err(e)) if item.cancelled && e.is_cancelled() => Ok(true),
                Poll::Ready(r) => Err(format!(
                    "delay {id} resolved to {r:?} (cancelled: {}), deadline {deadline:?}, due {due:?}",
                    item.cancelled
                )),
            },
            Fut::Timeout(t, _) => match t.poll() {
                Poll::Pending => Ok(false),
                Poll::Ready(Ok(Ok(7))) if item.completed_inner => Ok(true),
                Poll::Ready(Err(_)) if !item.completed_inner && on_time(deadline) => Ok(true),
                Poll::Ready(r) => Err(format!(
                    "timeout {id} resolved to {r:?} (inner completed: {}), deadline {deadline:?}, due {due:?}",
                    item.completed_inner
                )),
            },
        };
        match res {
            Err(msg) => self.fail(msg),
            Ok(false) => false,
            Ok(true) => {
                self.items[k].phase = Phase::Done;
                // A timeout whose inner future won still holds its timer:
                // the caller drops it, as any caller would.
                self.items[k].completed_inner
            }
        }
    }

    fn is_woken(item: &Item) -> bool {
        match &item.fut {
            Fut::Sleep(t) => t.is_woken(),
            Fut::Delay(t, _) => t.is_woken(),
            Fut::Timeout(t, _) => t.is_woken(),
        }
    }

    /// Whether item `k` must have completed by now.
    fn must_be_done(&self, item: &Item) -> bool {
        match item.phase {
            Phase::Armed { due } => {
                item.cancelled
                    || item.completed_inner
                    || (self.is_due(due) && item.deadline.is_some_and(|d| d <= self.now))
            }
            _ => false,
        }
    }

    /// Polls every woken item; drops the timeouts that completed.
    fn poll_woken(&mut self) {
        let mut k = 0;
        while k < self.items.len() {
            let woken = Self::is_woken(&self.items[k]);
            if woken && self.items[k].phase == Phase::Done {
                let id = self.items[k].id;
                self.fail(format!("item {id} was woken again after it completed"));
            }
            if woken && self.poll(k) {
                self.items.remove(k);
                continue;
            }
            k += 1;
        }
    }

    fn armed(&self) -> usize {
        self.items
            .iter()
            .filter(|it| matches!(it.phase, Phase::Armed { .. }))
            .count()
    }

    fn converged(&self) -> bool {
        self.items.iter().all(|it| !self.must_be_done(it))
            && self.wheel.metrics().num_pending() == self.armed()
            && self
                .qvals
                .iter()
                .all(|v| !self.is_due(self.boundary(v.deadline)))
    }

    /// Takes every expired value out of the queue, checking each.
    fn poll_queue(&mut self) {
        loop {
            match self.queue.poll_next() {
                Poll::Pending => return,
                Poll::Ready(None) => {
                    if !self.qvals.is_empty() {
                        self.fail(format!(
                            "the queue says empty, holding {}",
                            self.qvals.len()
                        ));
                    }
                    return;
                }
                Poll::Ready(Some(e)) => {
                    let Some(k) = self.qvals.iter().position(|v| v.key == e.key()) else {
                        self.fail(format!("the queue yielded {e:?}, which it does not hold"));
                    };
                    let v = self.qvals.remove(k);
                    let due = self.boundary(v.deadline);
                    if *e.get_ref() != v.id || !self.is_due(due) {
                        self.fail(format!(
                            "the queue yielded value {} (deadline {:?}, due {due:?}) as {e:?}",
                            v.id, v.deadline
                        ));
                    }
                    // tokio-util's rule: the deadline reads as the end of
                    // its tick, or the queue's start (the origin here).
                    let due = due.expect("due").max(0);
                    let got = self.ns_since_origin(e.deadline());
                    if got != due {
                        self.fail(format!(
                            "value {} came out with deadline {got} ns, due {due}",
                            v.id
                        ));
                    }
                    self.qgone.push(v.key);
                }
            }
        }
    }

    /// Lets the driver run until the wheel agrees with the model, polling
    /// every woken future on the way, then checks the invariants.
    async fn settle(&mut self) {
        let mut quiet = 0;
        let mut wakeups = self.driver_wakeups();
        for _ in 0..MAX_SETTLE_ROUNDS {
            self.poll_woken();
            if self.queue.is_woken() {
                self.poll_queue();
            }
            if self.converged() {
                // Converged: wait until the drivers have not run for a few
                // rounds, so that a late, wrong firing is caught now.
                let w = self.driver_wakeups();
                quiet = if w == wakeups { quiet + 1 } else { 0 };
                wakeups = w;
                if quiet >= 3 {
                    break;
                }
            }
            let before = Instant::now();
            tokio::task::yield_now().await;
            assert_eq!(Instant::now(), before, "the paused clock moved by itself");
        }
        if !self.converged() {
            let stuck: Vec<String> = self
                .items
                .iter()
                .filter(|it| self.must_be_done(it))
                .map(|it| {
                    format!(
                        "item {} ({:?}, deadline {:?}, woken: {})",
                        it.id,
                        it.phase,
                        it.deadline,
                        Self::is_woken(it)
                    )
                })
                .collect();
            self.fail(format!(
                "the wheel did not settle after {MAX_SETTLE_ROUNDS} rounds: {} armed in the model, \
                 {} pending in the wheel; due but not complete: {stuck:?}",
                self.armed(),
                self.wheel.metrics().num_pending()
            ));
        }
        self.check();
    }

    fn driver_wakeups(&self) -> u64 {
        self.wheel.metrics().driver_wakeups_count() + self.qwheel.metrics().driver_wakeups_count()
    }

    /// The invariants that hold between steps.
    fn check(&mut self) {
        // The queue has nothing ready that it was not woken for.
        if self.queue.poll_next().is_ready() && !self.qvals.is_empty() {
            self.fail("the queue had a value ready without being woken".into());
        }
        if self.qwheel.metrics().num_pending() > 1 {
            self.fail("the queue holds more than its one sleep on its wheel".into());
        }
        // Nothing that is not woken is ready: a ready future that was not
        // woken is a lost wake-up; one that is not due is early.
        for k in 0..self.items.len() {
            if matches!(self.items[k].phase, Phase::Armed { .. }) && self.poll(k) {
                let id = self.items[k].id;
                self.fail(format!("item {id} was ready without being woken"));
            }
        }
        let m = self.wheel.metrics();
        let done_delays = self
            .items
            .iter()
            .filter(|it| it.phase == Phase::Done && matches!(it.fut, Fut::Delay(..)))
            .count();
        if m.num_entries() < m.num_pending() || m.num_entries() > m.num_pending() + done_delays {
            self.fail(format!(
                "{} entries for {} pending timers and {done_delays} completed delays",
                m.num_entries(),
                m.num_pending()
            ));
        }
        if m.waker_panic_count() != 0 {
            self.fail("a waker panicked".into());
        }
        for it in &self.items {
            if let Fut::Delay(_, h) = &it.fut {
                let expired = it.phase == Phase::Done && !it.cancelled;
                if h.is_expired() != expired || h.is_cancelled() != it.cancelled {
                    self.fail(format!(
                        "handle of delay {} says expired {} cancelled {}; model says {expired} {}",
                        it.id,
                        h.is_expired(),
                        h.is_cancelled(),
                        it.cancelled
                    ));
                }
            }
        }
        for g in &self.ghosts {
            if g.handle.is_expired() != g.expired || g.handle.is_cancelled() == g.expired {
                self.fail(format!(
                    "the handle of dropped delay {} changed its story",
                    g.id
                ));
            }
        }
    }

    // ===== the operations =====

    fn nth(&self, i: usize, f: impl Fn(&Item) -> bool) -> Option<usize> {
        let c: Vec<usize> = (0..self.items.len())
            .filter(|&k| f(&self.items[k]))
            .collect();
        (!c.is_empty()).then(|| c[i % c.len()])
    }

    async fn apply(&mut self, op: &Op) {
        self.log.push(format!("{op:?}"));
        match *op {
            Op::Sleep {
                d,
                until,
                past,
                poll,
            } => {
                let (fut, deadline) = if until {
                    let (at, ns) = self.target(d, past);
                    (self.wheel.sleep_until(at), ns)
                } else {
                    let ns = self.resolve(d);
                    let dd = ns.map_or(Duration::MAX, |n| Duration::from_nanos(n as u64));
                    (self.wheel.sleep(dd), ns.map(|n| self.now + n))
                };
                let k = self.push(Fut::Sleep(spawn(fut)), deadline);
                if poll {
                    self.poll(k);
                }
            }
            Op::Delay { d, at, past, poll } => {
                let (fut, deadline) = if at {
                    let (when, ns) = self.target(d, past);
                    (self.wheel.delay_at(when), ns)
                } else {
                    let ns = self.resolve(d);
                    let dd = ns.map_or(Duration::MAX, |n| Duration::from_nanos(n as u64));
                    (self.wheel.delay(dd), ns.map(|n| self.now + n))
                };
                let h = fut.handle();
                let k = self.push(Fut::Delay(spawn(fut), h), deadline);
                if poll {
                    self.poll(k);
                }
            }
            Op::Timeout { d, at, past } => {
                let (tx, rx) = oneshot::channel();
                let (fut, deadline) = if at {
                    let (when, ns) = self.target(d, past);
                    (self.wheel.timeout_at(when, rx), ns)
                } else {
                    let ns = self.resolve(d);
                    let dd = ns.map_or(Duration::MAX, |n| Duration::from_nanos(n as u64));
                    (self.wheel.timeout(dd, rx), ns.map(|n| self.now + n))
                };
                let k = self.push(Fut::Timeout(spawn(fut), Some(tx)), deadline);
                if self.poll(k) {
                    self.items.remove(k);
                }
            }
            Op::Poll(i) => {
                if let Some(k) = self.nth(i, |it| it.phase != Phase::Done) {
                    if self.poll(k) {
                        self.items.remove(k);
                    }
                }
            }
            Op::Cancel(i) => {
                let n = self.items.len() + self.ghosts.len();
                if n == 0 {
                    return;
                }
                let i = i % n;
                if i >= self.items.len() {
                    let g = &self.ghosts[i - self.items.len()];
                    if g.handle.cancel() {
                        self.fail(format!(
                            "the handle of dropped delay {} cancelled something",
                            g.id
                        ));
                    }
                    return;
                }
                let Some(k) = self.nth(i, |it| matches!(it.fut, Fut::Delay(..))) else {
                    return;
                };
                let item = &mut self.items[k];
                let Fut::Delay(_, h) = &item.fut else {
                    unreachable!()
                };
                let expect = item.phase != Phase::Done && !item.cancelled;
                let got = h.cancel();
                if got != expect {
                    let id = item.id;
                    self.fail(format!(
                        "cancel() of delay {id} returned {got}, expected {expect}"
                    ));
                }
                if got {
                    item.cancelled = true;
                }
            }
            Op::Drop(i) => {
                if self.items.is_empty() {
                    return;
                }
                let item = self.items.remove(i % self.items.len());
                if let Fut::Delay(_, h) = item.fut {
                    let expired = item.phase == Phase::Done && !item.cancelled;
                    self.ghosts.push(Ghost {
                        id: item.id,
                        handle: h,
                        expired,
                    });
                }
            }
            Op::Reset { i, d, past, poll } => {
                let Some(k) = self.nth(i, |it| matches!(it.fut, Fut::Sleep(_))) else {
                    return;
                };
                let (at, ns) = self.target(d, past);
                let Fut::Sleep(t) = &mut self.items[k].fut else {
                    unreachable!()
                };
                t.reset(at);
                self.items[k].deadline = ns;
                self.items[k].phase = match self.items[k].phase {
                    // Still in the wheel: the entry moves (or is re-armed
                    // when it comes due); it completes at the new tick.
                    Phase::Armed { .. } => Phase::Armed {
                        due: self.boundary(ns),
                    },
                    _ => Phase::Unpolled,
                };
                if poll {
                    self.poll(k);
                }
            }
            Op::Complete(i) => {
                // Only a pending one: a completed timeout's task would be woken by
                // its own inner future, not by the wheel.
                let Some(k) = self.nth(i, |it| {
                    matches!(it.fut, Fut::Timeout(..)) && it.phase != Phase::Done
                }) else {
                    return;
                };
                let item = &mut self.items[k];
                let Fut::Timeout(_, tx) = &mut item.fut else {
                    unreachable!()
                };
                if let Some(tx) = tx.take() {
                    let _ = tx.send(7);
                    if item.phase != Phase::Done {
                        item.completed_inner = true;
                    }
                }
            }
            Op::QueueInsert { d, at, past } => {
                let id = self.next_id;
                self.next_id += 1;
                let (key, deadline) = if at {
                    let (when, ns) = self.target(d, past);
                    (self.queue.insert_at(id, when), ns)
                } else {
                    let ns = self.resolve(d);
                    let dd = ns.map_or(Duration::MAX, |n| Duration::from_nanos(n as u64));
                    (self.queue.insert(id, dd), ns.map(|n| self.now + n))
                };
                if self.qgone.contains(&key) {
                    self.fail(format!("insert returned {key:?}, a key already used"));
                }
                self.qvals.push(QVal { id, key, deadline });
            }
            Op::QueueRemove(i) => {
                let n = self.qvals.len() + self.qgone.len();
                if n == 0 {
                    return;
                }
                let i = i % n;
                if i < self.qvals.len() {
                    let v = self.qvals.remove(i);
                    match self.queue.try_remove(&v.key) {
                        Some(e) if *e.get_ref() == v.id && e.key() == v.key => {}
                        r => self.fail(format!("try_remove of value {} gave {r:?}", v.id)),
                    }
                    self.qgone.push(v.key);
                } else {
                    let key = self.qgone[i - self.qvals.len()];
                    if let Some(e) = self.queue.try_remove(&key) {
                        self.fail(format!("a stale key {key:?} removed {e:?}"));
                    }
                }
            }
            Op::QueueReset { i, d, past } => {
                let n = self.qvals.len() + self.qgone.len();
                if n == 0 {
                    return;
                }
                let i = i % n;
                let (when, ns) = self.target(d, past);
                if i < self.qvals.len() {
                    let key = self.qvals[i].key;
                    if self.queue.try_reset_at(&key, when).is_none() {
                        self.fail(format!("try_reset_at of live key {key:?} failed"));
                    }
                    self.qvals[i].deadline = ns;
                } else {
                    let key = self.qgone[i - self.qvals.len()];
                    if self.queue.try_reset_at(&key, when).is_some() {
                        self.fail(format!("a stale key {key:?} reset something"));
                    }
                }
            }
            Op::Advance(d) => {
                let ns = self.resolve(d).expect("advances are finite");
                self.advance(ns).await;
            }
            Op::AdvanceTo { i, tick, delta } => {
                let Some(k) = self.nth(i, |it| it.deadline.is_some()) else {
                    return;
                };
                let d = self.items[k].deadline;
                let target =
                    if tick { self.boundary(d) } else { d }.expect("finite") + i128::from(delta);
                if target > self.now {
                    self.advance(target - self.now).await;
                }
            }
        }
        self.settle().await;
    }

    async fn advance(&mut self, ns: i128) {
        self.now += ns;
        tokio::time::advance(Duration::from_nanos(ns as u64)).await;
        assert_eq!(
            Instant::now(),
            self.instant(self.now),
            "the model's clock drifted"
        );
    }

    /// Ends the program: shuts the wheel down (every pending timer
    /// completes) or drops everything; either way the slabs end up empty.
    async fn finish(&mut self, shutdown: bool) {
        if shutdown {
            self.log.push("shutdown".into());
            let pending = self.wheel.metrics().num_pending();
            let n = self.wheel.shutdown();
            if n != pending || n != self.armed() {
                self.fail(format!("shutdown() returned {n}; {pending} were pending"));
            }
            for _ in 0..4 {
                tokio::task::yield_now().await;
            }
            let now = self.now;
            for it in &mut self.items {
                let id = it.id;
                if matches!(it.phase, Phase::Armed { .. }) && !Self::is_woken(it) {
                    panic!("item {id} was not woken by shutdown");
                }
                let ok = match &mut it.fut {
                    _ if it.phase == Phase::Done => true,
                    Fut::Sleep(t) => t.poll().is_ready(),
                    Fut::Timeout(t, _) => t.poll().is_ready(),
                    Fut::Delay(t, _) => match t.poll() {
                        Poll::Ready(Err(e)) => {
                            e.is_shutdown() || (it.cancelled && e.is_cancelled())
                        }
                        // An unpolled delay whose deadline has passed
                        // expires on its first poll without the wheel.
                        Poll::Ready(Ok(())) => {
                            it.phase == Phase::Unpolled
                                && !it.cancelled
                                && it.deadline.is_some_and(|d| d <= now)
                        }
                        Poll::Pending => false,
                    },
                };
                assert!(ok, "item {id} did not complete correctly after shutdown");
            }
            assert_eq!(self.wheel.metrics().num_pending(), 0);
        }
        self.items.clear();
        self.ghosts.clear();
        let left = self.qvals.len();
        let queue = std::mem::replace(&mut self.queue, spawn(self.qwheel.delay_queue()));
        if queue.into_inner().len() != left {
            self.fail("the queue's length disagrees with the model".into());
        }
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        let m = self.wheel.metrics();
        // Only the fresh, never polled queue is left on the second wheel.
        let q = self.qwheel.metrics();
        if m.num_pending() != 0 || m.num_entries() != 0 || q.num_entries() != 0 {
            self.fail(format!(
                "after dropping everything: {} pending, {} entries, {} on the queue's wheel",
                m.num_pending(),
                m.num_entries(),
                q.num_entries()
            ));
        }
    }
}

fn model(wheel: Wheel, qwheel: Wheel, tick: i128, slots: i128) -> Model {
    let mut queue = spawn(qwheel.delay_queue());
    // Polled once so that it has a task to wake.
    assert!(queue.poll_next().is_ready());
    Model {
        wheel,
        qwheel,
        queue,
        qvals: Vec::new(),
        qgone: Vec::new(),
        origin: Instant::now(),
        tick,
        slots,
        now: 0,
        items: Vec::new(),
        ghosts: Vec::new(),
        next_id: 0,
        log: Vec::new(),
    }
}

async fn run(p: Program) {
    let build = || {
        Wheel::builder()
            .tick(Duration::from_millis(p.tick_ms))
            .buckets(p.slots)
            .shards(p.shards)
            .build()
            .expect("valid configuration")
    };
    let mut m = model(
        build(),
        build(),
        i128::from(p.tick_ms) * 1_000_000,
        p.slots as i128,
    );
    for op in &p.ops {
        m.apply(op).await;
    }
    m.finish(p.shutdown_at_end).await;
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: common::proptest_cases(10_000),
        ..ProptestConfig::default()
    })]

    #[test]
    fn wheel_matches_the_model(p in program()) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        rt.block_on(run(p));
    }
}

/// Keeps the test honest: the checker must fail when the wheel and the model
/// disagree. Here the model is told a sleep is due a tick before it is, as
/// it would see a wheel that lost or delayed a timer.
#[test]
#[should_panic(expected = "did not settle")]
fn model_catches_a_lost_timer() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    rt.block_on(async {
        let mut m = model(Wheel::new(), Wheel::new(), 1_000_000, 4096);
        // Tell the model a sleep is due one tick before it really is.
        let fut = m.wheel.sleep(Duration::from_millis(2));
        let k = m.push(Fut::Sleep(spawn(fut)), Some(1_000_000));
        m.poll(k);
        m.advance(1_000_000).await;
        m.settle().await;
    });
}
