//! The countdowns of a wrapper, written once for [`TimeoutReader`],
//! [`TimeoutWriter`] and [`TimeoutStream`].
//!
//! A wrapper times one direction (a reader, a writer) or two (a stream);
//! a stream also has an idle deadline. What a wrapper keeps lives in one
//! box, made when the first timeout is set (or with the wrapper, when it
//! is given a [`Wheel`]); a wrapper with no timeout holds a null pointer.
//! The box holds all that a wrapper with one timeout needs: the *word*
//! (the flags, and the *one timeout*: which, and its nanoseconds), `due`
//! (its deadline) and the *slot* (its sleep); or, in the slot, a second
//! box, `More`, which holds everything instead (a held wheel, several
//! timeouts, a timeout the word cannot hold, the sleep of a stream's
//! second direction), made when first needed and kept.
//!
//! # Invariants
//!
//! - A direction is *armed* from the poll that finds one of its operations
//!   pending, with a timeout to keep, until one of its operations
//!   completes. While armed, its *target* is the earliest of its
//!   countdown's end and the idle deadline. Its sleep, if it has one, is
//!   due at or before the target; it has none only when the target had
//!   passed when it was armed: then it fails on that poll, with no timer.
//! - A sleep is moved only to an earlier deadline when a direction is
//!   armed or a deadline moves (a timeout made shorter); one due before
//!   its target stays, fires there, and the poll it wakes finds nothing
//!   due and moves it on. So a connection whose reads wait once per
//!   message costs one move per countdown period, not one per message.
//! - Without `More`, `due` is a direction's countdown end while it is
//!   armed, or the idle deadline (kept armed or not). A stream's second
//!   direction that waits on an idle timeout makes `More`.
//! - A completed operation only disarms its direction (one store) and,
//!   with an idle timeout, records its success as activity. The idle
//!   deadline is the idle timeout after a clock read made after the last
//!   activity, never one before it, so it is never early: the clock is
//!   read at once when a direction is armed as the operation completes,
//!   and otherwise `ACTIVE` is set, and the next pending poll reads the
//!   clock for it (see `State::completed`). `ACTIVE` is thus set only
//!   while no direction is armed.
//! - Nothing is due before its deadline: when a sleep completes, the
//!   deadlines are checked against the clock, and a sleep that completes
//!   with nothing due is set again at its target, then replaced; a third
//!   completion with nothing due means the wheel has shut down, and says
//!   so.
//!
//! [`TimeoutReader`]: super::TimeoutReader
//! [`TimeoutWriter`]: super::TimeoutWriter
//! [`TimeoutStream`]: super::TimeoutStream

use std::io;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::Instant;

use crate::coop;
use crate::engine::clock::later;
use crate::error::Error;
use crate::sleep::Sleep;
use crate::wheel::Wheel;
use crate::wheel_or_default::WheelOrDefault;

mod more;

use more::More;

/// The error of an operation that ran out of time: kind `TimedOut`, no
/// payload (no allocation), as tokio-io-timeout returns it.
fn timed_out() -> io::Error {
    io::Error::from(io::ErrorKind::TimedOut)
}

/// Which timeout of a wrapper: that of a direction (its index), or the
/// idle timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Which {
    Dir(usize),
    Idle,
}

/// The timeouts of a wrapper with `N` directions (1 or 2).
#[derive(Debug)]
pub(crate) struct Timeouts<const N: usize> {
    state: Option<Box<State<N>>>,
}

// `State::word`: the flags in its low bits, the one timeout's nanoseconds
// above them.

/// Direction `d` is armed: `ARMED << d`.
const ARMED: u64 = 1;
/// Every direction's `ARMED` bit.
const ARMED_ANY: u64 = ARMED | ARMED << 1;
/// A stream's operation succeeded while no direction was armed, and the
/// idle deadline does not yet count from after it: the idle time counts
/// from the wrapper's next clock read (see `State::completed`).
const ACTIVE: u64 = 1 << 2;
/// The stream has an idle timeout (in the word or in `More`).
const IDLE: u64 = 1 << 3;
/// The word holds the one timeout: the idle one when `IDLE` is set, else
/// that of the direction in bit `ONE_DIR`.
const ONE: u64 = 1 << 4;
/// The bit of the one timeout's direction.
const ONE_DIR: u32 = 5;
/// Where the one timeout's nanoseconds start.
const NS_SHIFT: u32 = 6;
/// The longest timeout the word holds, in nanoseconds (9 years); a longer
/// one goes to `More`.
const NS_MAX: u64 = u64::MAX >> NS_SHIFT;
/// The bits of the one timeout.
const ONE_BITS: u64 = ONE | IDLE | 1 << ONE_DIR | NS_MAX << NS_SHIFT;

/// What a wrapper with a timeout, or a wheel of its own, keeps.
#[derive(Debug)]
struct State<const N: usize> {
    slot: Slot<N>,
    /// The one timeout's deadline, without `More`: a direction's countdown
    /// end while it is armed, or the idle deadline.
    due: Option<Instant>,
    word: u64,
}

// The box that `State` is: a sleep (niche filling keeps the slot at the
// size of an `Option<Sleep>`), an instant and one word: 56 bytes, the
// allocator's 64-byte block, where the one timeout as an `Option<Duration>`
// instead of in the word would take its 80-byte block.
const _: () = assert!(size_of::<State<1>>() <= size_of::<Option<Sleep>>() + 24);
const _: () = assert!(size_of::<State<2>>() <= size_of::<Option<Sleep>>() + 24);

/// The one timeout's sleep, or `More`.
#[derive(Debug)]
enum Slot<const N: usize> {
    /// No sleep yet.
    Empty,
    /// The sleep, due at or before the deadline: made when first needed;
    /// kept, and moved, from then on.
    Sleep(Sleep),
    /// Everything, when the word and the slot cannot hold it.
    More(Box<More<N>>),
}

impl<const N: usize> Timeouts<N> {
    /// No timeout, on the default wheel.
    pub(crate) const fn new() -> Timeouts<N> {
        Timeouts { state: None }
    }

    /// No timeout yet, on `wheel`.
    pub(crate) fn with_wheel(wheel: &Wheel) -> Timeouts<N> {
        let mut t = Timeouts::new();
        t.state_mut().more_mut().wheel = WheelOrDefault::held(wheel.clone());
        t
    }

    fn state_mut(&mut self) -> &mut State<N> {
        self.state.get_or_insert_with(|| {
            Box::new(State {
                slot: Slot::Empty,
                due: None,
                word: 0,
            })
        })
    }

    /// The timeout `which`.
    pub(crate) fn get(&self, which: Which) -> Option<Duration> {
        self.state.as_ref()?.timeout(which)
    }

    /// Sets the timeout `which`. A direction's running countdown starts
    /// again now, with the new timeout (tokio-io-timeout's
    /// `set_timeout_pinned` disarms it and wakes the task, whose next poll
    /// starts it again); the idle time counts from now.
    pub(crate) fn set(&mut self, which: Which, timeout: Option<Duration>) {
        if timeout.is_none() && self.state.is_none() {
            return;
        }
        let s = self.state_mut();
        s.store(which, timeout);
        match which {
            Which::Dir(dir) => {
                if s.armed(dir) {
                    s.disarm(dir);
                    // A sleep that cannot be had fails the next poll.
                    let _ = s.arm(dir);
                }
                s.refresh(dir);
            }
            Which::Idle => {
                // Activity before now counts from now, as the rest does.
                s.word &= !ACTIVE;
                s.restart_idle(Instant::now());
                s.aim_one();
                for dir in 0..N {
                    s.refresh(dir);
                }
            }
        }
    }

    /// What a wrapper returns for an operation of direction `dir` that
    /// returned `r`: `r`, or a timeout error instead of `Pending`. An
    /// operation of no direction (`None`: one the wrapper does not time)
    /// returns `r`.
    #[inline]
    pub(crate) fn check<T>(
        &mut self,
        dir: Option<usize>,
        cx: &mut Context<'_>,
        r: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        let (Some(dir), Some(s)) = (dir, self.state.as_deref_mut()) else {
            return r;
        };
        match r {
            Poll::Pending => match s.poll_pending(dir, cx) {
                Ok(()) => Poll::Pending,
                Err(e) => Poll::Ready(Err(e)),
            },
            Poll::Ready(r) => {
                s.completed(dir, r.is_ok());
                Poll::Ready(r)
            }
        }
    }
}

impl<const N: usize> State<N> {
    fn more(&self) -> Option<&More<N>> {
        match &self.slot {
            Slot::More(more) => Some(more),
            _ => None,
        }
    }

    fn more_mut(&mut self) -> &mut More<N> {
        if !matches!(self.slot, Slot::More(_)) {
            self.make_more();
        }
        match &mut self.slot {
            Slot::More(more) => more,
            _ => unreachable!("made above"),
        }
    }

    /// Moves what the word and the slot hold into a new `More`.
    #[cold]
    #[inline(never)]
    fn make_more(&mut self) {
        let mut more = Box::new(More::new());
        let due = self.due.take();
        let slot = std::mem::replace(&mut self.slot, Slot::Empty);
        if let Some((which, t)) = self.one() {
            let dir = match which {
                Which::Idle => {
                    (more.idle, more.idle_due) = (Some(t), due);
                    0
                }
                Which::Dir(dir) => {
                    more.dirs[dir].timeout = Some(t);
                    more.dirs[dir].end = due.filter(|_| self.armed(dir));
                    dir
                }
            };
            if let Slot::Sleep(sleep) = slot {
                more.dirs[dir].sleep = Some(sleep);
            }
        }
        self.slot = Slot::More(more);
        self.word &= !(ONE_BITS & !IDLE);
    }

    /// The one timeout the word holds, if it holds one.
    #[inline]
    fn one(&self) -> Option<(Which, Duration)> {
        if self.word & ONE == 0 {
            return None;
        }
        let which = if self.word & IDLE != 0 {
            Which::Idle
        } else {
            Which::Dir((self.word >> ONE_DIR & 1) as usize)
        };
        Some((which, Duration::from_nanos(self.word >> NS_SHIFT)))
    }

    /// Moves the slot's sleep to the deadline when it is due after it
    /// (the timeout was made shorter).
    fn aim_one(&mut self) {
        if let (Slot::Sleep(sleep), Some(due)) = (&mut self.slot, self.due) {
            if sleep.deadline() > due {
                sleep.reset(due);
            }
        }
    }

    fn timeout(&self, which: Which) -> Option<Duration> {
        match (self.more(), which) {
            (Some(more), Which::Dir(dir)) => more.dirs[dir].timeout,
            (Some(more), Which::Idle) => more.idle,
            (None, _) => self.one().filter(|(w, _)| *w == which).map(|(_, t)| t),
        }
    }

    /// Stores the timeout `which`: in the word when it can hold it (no
    /// `More`, no other timeout, at most `NS_MAX`), else in `More`.
    fn store(&mut self, which: Which, timeout: Option<Duration>) {
        if self.more().is_none() {
            let mine = self.one().is_none_or(|(w, _)| w == which);
            let ns = timeout.map(|t| u64::try_from(t.as_nanos()).unwrap_or(u64::MAX));
            match ns {
                None if !mine => return,
                None => {
                    self.word &= !ONE_BITS;
                    return;
                }
                Some(ns) if mine && ns <= NS_MAX => {
                    let kind = match which {
                        Which::Idle => IDLE,
                        Which::Dir(dir) => (dir as u64) << ONE_DIR,
                    };
                    self.word = self.word & !ONE_BITS | ONE | kind | ns << NS_SHIFT;
                    return;
                }
                Some(_) => {}
            }
        }
        let more = self.more_mut();
        match which {
            Which::Dir(dir) => more.dirs[dir].timeout = timeout,
            Which::Idle => more.idle = timeout,
        }
        let idle = more.idle.is_some();
        if !idle {
            more.idle_due = None;
        }
        self.word = self.word & !IDLE | if idle { IDLE } else { 0 };
    }

    /// Whether a stream has an idle timeout.
    #[inline]
    fn has_idle(&self) -> bool {
        self.word & IDLE != 0
    }

    fn armed(&self, dir: usize) -> bool {
        self.word & (ARMED << dir) != 0
    }

    fn disarm(&mut self, dir: usize) {
        self.word &= !(ARMED << dir);
    }

    /// Whether `dir` has anything to time: a timeout of its own, or the
    /// idle timeout.
    fn timed(&self, dir: usize) -> bool {
        self.has_idle() || self.timeout(Which::Dir(dir)).is_some()
    }

    /// The idle time counts from `now`: the idle deadline is the idle
    /// timeout after it. Out of line: a completion that waited needs it,
    /// not a ready one.
    #[inline(never)]
    fn restart_idle(&mut self, now: Instant) {
        let one = self.one();
        match (&mut self.slot, one) {
            (Slot::More(more), _) => {
                more.idle_due = more.idle.map(|t| later(now, t));
                for dir in 0..N {
                    if self.word & (ARMED << dir) != 0 {
                        // A sleep that cannot be had fails the next poll.
                        let _ = more.aim(dir, false);
                    }
                }
            }
            (slot, Some((Which::Idle, t))) => {
                if t.is_zero() {
                    // Due at once: no timer (see `arm`).
                    *slot = Slot::Empty;
                }
                self.due = Some(later(now, t));
            }
            _ => {}
        }
    }

    /// Times the activity pending since the last clock read at this one:
    /// the idle time counts from it, after the activity. Out of line: a
    /// wait after a ready operation needs it, not a wait after a wait.
    #[cold]
    #[inline(never)]
    fn time_activity(&mut self) {
        self.word &= !ACTIVE;
        self.restart_idle(Instant::now());
    }

    /// After a timeout of `dir` changed: lets its sleep go when `dir` has
    /// nothing left to time.
    fn refresh(&mut self, dir: usize) {
        if self.timed(dir) {
            return;
        }
        self.disarm(dir);
        let one = self.one();
        match &mut self.slot {
            Slot::More(more) => (more.dirs[dir].end, more.dirs[dir].sleep) = (None, None),
            slot if one.is_none() => (*slot, self.due) = (Slot::Empty, None),
            _ => {}
        }
    }

    /// Arms `dir`, which has a timeout to keep: its countdown starts now,
    /// and its sleep is put at its target, or made there, unless the
    /// target has passed. An error when a sleep is needed and none can be
    /// had (`dir` stays disarmed).
    #[inline]
    fn arm(&mut self, dir: usize) -> io::Result<()> {
        if self.word & ACTIVE != 0 {
            self.time_activity();
        }
        self.word |= ARMED << dir;
        if self.word & (IDLE | ONE) == IDLE | ONE && dir == 0 && matches!(self.slot, Slot::Sleep(_))
        {
            // The idle timeout alone, and its sleep due by its deadline.
            return Ok(());
        }
        let one = self.one();
        let r = match (&mut self.slot, one) {
            (Slot::More(more), _) => more.arm(dir),
            (slot, Some((Which::Dir(_), t))) => {
                let due = later(Instant::now(), t);
                self.due = Some(due);
                match slot {
                    // Due at once: no timer, the poll fails.
                    _ if t.is_zero() => *slot = Slot::Empty,
                    // A sleep due before the end stays there (see the
                    // invariants).
                    Slot::Sleep(sleep) => {
                        if sleep.deadline() > due {
                            sleep.reset(due);
                        }
                    }
                    _ => *slot = Slot::Sleep(new_sleep(due)?),
                }
                Ok(())
            }
            // The idle deadline: a sleep is made there unless it has
            // passed.
            (slot, _) if dir == 0 => {
                if let Some(due) = self.due.filter(|&due| due > Instant::now()) {
                    *slot = Slot::Sleep(new_sleep(due)?);
                }
                Ok(())
            }
            // A second direction's sleep: `More` holds it.
            _ => self.more_mut().arm(dir),
        };
        if r.is_err() {
            self.disarm(dir);
        }
        r
    }

    /// An operation of `dir` is pending: arm `dir` if it is not, and poll
    /// its sleep. An error when a deadline has passed, or when no sleep
    /// can be had.
    #[inline(never)]
    fn poll_pending(&mut self, dir: usize, cx: &mut Context<'_>) -> io::Result<()> {
        if !self.armed(dir) {
            if !self.timed(dir) {
                return Ok(());
            }
            self.arm(dir)?;
        }
        self.poll_sleep(dir, cx)
    }

    fn sleep_mut(&mut self, dir: usize) -> Option<&mut Sleep> {
        match &mut self.slot {
            Slot::More(more) => more.dirs[dir].sleep.as_mut(),
            Slot::Sleep(sleep) => Some(sleep),
            _ => None,
        }
    }

    /// Whether armed `dir`'s countdown, and whether the idle deadline, has
    /// passed at `now`.
    fn due(&self, dir: usize, now: Instant) -> (bool, bool) {
        let passed = |at: Option<Instant>| at.is_some_and(|at| at <= now);
        match self.more() {
            Some(more) => (passed(more.dirs[dir].end), passed(more.idle_due)),
            None => {
                let due = passed(self.due);
                (due && !self.has_idle(), due && self.has_idle())
            }
        }
    }

    /// Polls armed `dir`'s sleep; when it completes (or `dir` has none:
    /// its target had passed), returns the timeout that is due, or sets
    /// the sleep again (see the invariants).
    ///
    /// It spends the task's budget as tokio-io-timeout's one `Sleep` poll
    /// does: out of budget, the operation stays pending before the deadline
    /// is looked at (the task is scheduled again); a unit is spent when the
    /// poll ends in an error. The sleeps set again in between spend
    /// nothing more.
    fn poll_sleep(&mut self, dir: usize, cx: &mut Context<'_>) -> io::Result<()> {
        if coop::poll_budget(cx).is_pending() {
            return Ok(());
        }
        for attempt in 0.. {
            if let Some(sleep) = self.sleep_mut(dir) {
                if sleep.poll_unbudgeted(cx).is_pending() {
                    return Ok(());
                }
            }
            let now = Instant::now();
            let (ends, idle) = self.due(dir, now);
            if ends || idle {
                if idle {
                    // The idle time counts again from here: a caller that
                    // keeps the stream gets its next idle timeout a whole
                    // idle period later, not at once on every operation.
                    self.restart_idle(now);
                }
                self.disarm(dir);
                coop::spend(cx);
                return Err(timed_out());
            }
            if attempt == 2 {
                break;
            }
            // Nothing due: the sleep is set again, then made anew.
            self.make_sleep(dir, attempt == 1)?;
        }
        // Completed with nothing due three times, the last time a sleep
        // made anew: its wheel has shut down.
        self.disarm(dir);
        coop::spend(cx);
        Err(Error::shutdown().into())
    }

    /// Puts armed `dir`'s sleep at its target again; or, `anew`, makes a
    /// new one there.
    fn make_sleep(&mut self, dir: usize, anew: bool) -> io::Result<()> {
        match &mut self.slot {
            Slot::More(more) => {
                if anew {
                    more.dirs[dir].sleep = None;
                }
                return more.aim(dir, true);
            }
            slot => {
                // Not reached without a deadline: an armed direction has one.
                let Some(due) = self.due else { return Ok(()) };
                match slot {
                    Slot::Sleep(sleep) if !anew => sleep.reset(due),
                    _ => *slot = Slot::Sleep(new_sleep(due)?),
                }
            }
        }
        Ok(())
    }

    /// An operation of `dir` completed (successfully when `ok`).
    ///
    /// With an idle timeout a success is activity, and the idle time must
    /// count from a clock read after it (never early; the cheap clocks
    /// trail the precise one, and do not follow tokio's paused clock).
    /// While a direction is armed (this operation waited, and its task
    /// will often work before it waits again; or the other half of a split
    /// stream waits) that read is made here. Otherwise one store records
    /// the activity (`ACTIVE`), and the next pending poll, through which
    /// alone a timeout can end, reads the clock for it, as
    /// tokio-io-timeout's countdowns start at the first pending poll: a
    /// burst of ready messages pays no clock read. tests/io_idle.rs checks
    /// both against a `Sleep` kept by hand to the same rule.
    #[inline]
    fn completed(&mut self, dir: usize, ok: bool) {
        let armed = self.word & ARMED_ANY;
        self.disarm(dir);
        if ok && self.has_idle() {
            if armed != 0 {
                self.restart_idle(Instant::now());
            } else {
                self.word |= ACTIVE;
            }
        }
    }
}

/// A sleep until `at` on the default wheel (a wrapper without `More` has
/// no wheel of its own).
fn new_sleep(at: Instant) -> io::Result<Sleep> {
    Ok(WheelOrDefault::current().try_sleep_until(at)?)
}

#[cfg(test)]
mod tests;
