//! The countdowns of a wrapper, written once for [`TimeoutReader`],
//! [`TimeoutWriter`] and [`TimeoutStream`].
//!
//! A wrapper times one direction (a reader, a writer) or two (a stream);
//! a stream also has an idle deadline. Its timeouts are indexed: its
//! directions from 0, then [`IDLE`]. What a wrapper keeps lives in the
//! wrapper, in 56 bytes: all that a wrapper with one timeout needs, the
//! *word* (the flags, and the *one timeout*: which, and its nanoseconds),
//! `due` (its deadline) and the *slot* (its sleep, that of the direction
//! the word names: the idle timeout's is direction 0's); or, in the slot,
//! a box, `More`, which holds everything instead (a held wheel, several
//! timeouts, a timeout the word cannot hold, the sleep of a stream's
//! second direction), made when first needed (or with the wrapper, when
//! it is given a [`Wheel`]) and kept. A word of 0 means no timeout and
//! nothing to time: an operation then only checks it. The
//! accessors (`timeout`; `deadline` and `set_deadline`; `sleep_mut` and
//! `put_sleep`) hide which of the two holds what, so that the countdowns
//! are written once; only `State::arm` writes out its hot path on the
//! word and the slot.
//!
//! # Invariants
//!
//! - A direction is *armed* from the poll that finds one of its operations
//!   pending, with a timeout to keep, until one of its operations
//!   completes. While armed, its *target* is the earliest of its
//!   countdown's end and the idle deadline. Its sleep, if it has one, is
//!   due at or before the target; it has none only when the target had
//!   passed when it was aimed: then it fails on that poll, with no timer.
//! - A sleep is moved only to an earlier deadline when a direction is
//!   armed or a deadline moves (a timeout made shorter); one due before
//!   its target stays, fires there, and the poll it wakes finds nothing
//!   due and moves it on. So a connection whose reads wait once per
//!   message costs one move per countdown period, not one per message.
//!   Setting a timeout lets the sleep of every direction that is not
//!   waiting go (the next wait makes one where it belongs).
//! - Without `More`, the word's one timeout is the only one, and `due` is
//!   its deadline: its direction's countdown end (read only while that
//!   direction is armed), or the idle deadline. The slot holds a sleep
//!   only while the word holds a timeout, and an idle timeout's sleep is
//!   due by the idle deadline, armed or not: that deadline moves only
//!   later, but when the idle timeout is set, which aims the sleep of a
//!   waiting direction and lets the others go.
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
use crate::engine::registry::Kind;
use crate::error::Error;
use crate::sleep::Sleep;
use crate::wheel::Wheel;
use crate::wheel_or_default::WheelOrDefault;

/// The index of the idle timeout, after a stream's two directions.
pub(crate) const IDLE: usize = 2;

/// The timeouts of a wrapper with `N` directions (1 or 2).
#[derive(Debug)]
pub(crate) struct Timeouts<const N: usize> {
    state: State<N>,
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
const HAS_IDLE: u64 = 1 << 3;
/// Where the two bits start that say which timeout the word holds, plus
/// one: 0 when it holds none.
const OWNER: u32 = 4;
/// Where the one timeout's nanoseconds start.
const NS_SHIFT: u32 = 6;
/// The longest timeout the word holds, in nanoseconds (9 years); a longer
/// one goes to `More`.
const NS_MAX: u64 = u64::MAX >> NS_SHIFT;
/// The bits of the one timeout.
const ONE_BITS: u64 = HAS_IDLE | 3 << OWNER | NS_MAX << NS_SHIFT;
/// In place of the one timeout: `More` holds the timeouts. Set when it is
/// made, for good, so that a word of 0 means no timeout and nothing armed
/// or to time.
const MORE: u64 = 1 << NS_SHIFT;

/// What a wrapper keeps for its timeouts.
///
/// A sleep (niche filling keeps the slot at the size of an
/// `Option<Sleep>`), an instant and one word: 56 bytes, where the one
/// timeout as an `Option<Duration>` instead of in the word would take 72
/// (the module's tests check the sizes).
#[derive(Debug)]
struct State<const N: usize> {
    slot: Slot,
    /// The one timeout's deadline, without `More`.
    due: Option<Instant>,
    word: u64,
}

/// The one timeout's sleep, or `More`.
#[derive(Debug)]
enum Slot {
    /// No sleep.
    Empty,
    /// The sleep, made when first needed; kept, and moved, until a
    /// timeout is set while its direction is not waiting.
    Sleep(Sleep),
    /// Everything, when the word and the slot cannot hold it.
    More(Box<More>),
}

/// A wrapper's timeouts, deadlines and sleeps, each in a field of its own.
#[derive(Debug, Default)]
struct More {
    /// The wheel the sleeps are made on: its own, or the default wheel of
    /// the runtime that polls the wrapper when a sleep is needed.
    wheel: WheelOrDefault,
    /// Each direction's timeout, then the idle timeout.
    timeouts: [Option<Duration>; 3],
    /// Each direction's countdown end (read only while it is armed), then
    /// the idle deadline (while there is an idle timeout).
    deadlines: [Option<Instant>; 3],
    /// Each direction's sleep.
    sleeps: [Option<Sleep>; 2],
}

impl<const N: usize> Timeouts<N> {
    /// No timeout, on the default wheel.
    pub(crate) const fn new() -> Timeouts<N> {
        Timeouts {
            state: State {
                slot: Slot::Empty,
                due: None,
                word: 0,
            },
        }
    }

    /// No timeout yet, on `wheel`.
    pub(crate) fn with_wheel(wheel: &Wheel) -> Timeouts<N> {
        let mut timeouts = Timeouts::new();
        timeouts.state.more_mut().wheel = WheelOrDefault(Some(wheel.clone()));
        timeouts
    }

    /// The timeout `which`.
    pub(crate) fn get(&self, which: usize) -> Option<Duration> {
        self.state.timeout(which)
    }

    /// Sets the timeout `which`. A direction's running countdown starts
    /// again now, with the new timeout (tokio-io-timeout's
    /// `set_timeout_pinned` disarms it and wakes the task, whose next poll
    /// starts it again); the idle time counts from now.
    pub(crate) fn set(&mut self, which: usize, timeout: Option<Duration>) {
        let s = &mut self.state;
        if timeout.is_none() && s.is_blank() {
            return;
        }
        s.store(which, timeout);
        if which == IDLE {
            // Activity before now counts from now, as the rest does.
            s.word &= !ACTIVE;
            s.restart_idle(Instant::now());
        }
        // Only a direction that waits keeps its sleep, aimed at its new
        // target: so a sleep without `More` is due by the idle deadline
        // (see `arm`).
        for dir in 0..N {
            if !s.armed(dir) || !s.timed(dir) {
                s.disarm(dir);
                s.put_sleep(dir, None);
            } else if dir == which {
                // A sleep that cannot be had fails the next poll.
                let _ = s.arm(dir);
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
        let s = &mut self.state;
        let Some(dir) = dir.filter(|_| !s.is_blank()) else {
            return r;
        };
        match &r {
            Poll::Pending => s.poll_pending(dir, cx)?,
            Poll::Ready(r) => s.completed(dir, r.is_ok()),
        }
        r
    }
}

impl<const N: usize> State<N> {
    /// No timeout, no wheel of its own, nothing armed: what a wrapper has
    /// before its first timeout is set.
    #[inline]
    fn is_blank(&self) -> bool {
        self.word == 0
    }

    fn more(&self) -> Option<&More> {
        match &self.slot {
            Slot::More(more) => Some(more),
            _ => None,
        }
    }

    /// `More`, made when first needed from what the word and the slot
    /// hold.
    fn more_mut(&mut self) -> &mut More {
        if self.more().is_none() {
            let mut more = Box::<More>::default();
            if let Some(which) = self.owner() {
                more.timeouts[which] = Some(Duration::from_nanos(self.word >> NS_SHIFT));
                more.deadlines[which] = self.due;
            }
            if let Slot::Sleep(sleep) = std::mem::replace(&mut self.slot, Slot::Empty) {
                more.sleeps[self.slot_dir()] = Some(sleep);
            }
            self.slot = Slot::More(more);
            self.word = self.word & !(ONE_BITS & !HAS_IDLE) | MORE;
        }
        match &mut self.slot {
            Slot::More(more) => more,
            _ => unreachable!("made above"),
        }
    }

    /// The direction whose sleep the slot holds, without `More`: 1 when
    /// the word holds direction 1's timeout, else 0.
    fn slot_dir(&self) -> usize {
        usize::from(self.word >> OWNER & 3 == 2)
    }

    /// Which timeout the word holds, if it holds one.
    #[inline]
    fn owner(&self) -> Option<usize> {
        (self.word >> OWNER & 3).checked_sub(1).map(|w| w as usize)
    }

    fn timeout(&self, which: usize) -> Option<Duration> {
        match self.more() {
            Some(more) => more.timeouts[which],
            None => {
                (self.owner() == Some(which)).then(|| Duration::from_nanos(self.word >> NS_SHIFT))
            }
        }
    }

    /// The deadline of `which`: a direction's countdown end, or the idle
    /// deadline.
    #[inline]
    fn deadline(&self, which: usize) -> Option<Instant> {
        match self.more() {
            Some(more) => more.deadlines[which],
            None => self.due.filter(|_| self.owner() == Some(which)),
        }
    }

    /// Sets the deadline of `which`, which has a timeout if `at` is one.
    fn set_deadline(&mut self, which: usize, at: Option<Instant>) {
        let mine = self.owner() == Some(which);
        match &mut self.slot {
            Slot::More(more) => more.deadlines[which] = at,
            _ if mine => self.due = at,
            _ => {}
        }
    }

    #[inline]
    fn sleep_mut(&mut self, dir: usize) -> Option<&mut Sleep> {
        let mine = self.slot_dir() == dir;
        match &mut self.slot {
            Slot::More(more) => more.sleeps[dir].as_mut(),
            Slot::Sleep(sleep) if mine => Some(sleep),
            _ => None,
        }
    }

    /// Sets the sleep of `dir`; a second direction's sleep makes `More`.
    fn put_sleep(&mut self, dir: usize, sleep: Option<Sleep>) {
        let mine = self.slot_dir() == dir;
        match &mut self.slot {
            Slot::More(more) => more.sleeps[dir] = sleep,
            slot if mine => *slot = sleep.map_or(Slot::Empty, Slot::Sleep),
            _ if sleep.is_some() => self.more_mut().sleeps[dir] = sleep,
            _ => {}
        }
    }

    /// Stores the timeout `which`: in the word when it can hold it (no
    /// `More`, no other timeout, at most `NS_MAX`), else in `More`; the
    /// removal of a timeout that is not set changes nothing.
    fn store(&mut self, which: usize, timeout: Option<Duration>) {
        let ns = timeout.map(|t| u64::try_from(t.as_nanos()).unwrap_or(u64::MAX));
        let free = self.more().is_none() && self.owner().is_none_or(|w| w == which);
        if free && ns.is_none_or(|ns| ns <= NS_MAX) {
            let idle = if which == IDLE { HAS_IDLE } else { 0 };
            let kind = ns.map_or(0, |ns| (which as u64 + 1) << OWNER | idle | ns << NS_SHIFT);
            self.word = self.word & !ONE_BITS | kind;
            if ns.is_none() {
                (self.slot, self.due) = (Slot::Empty, None);
            }
        } else if timeout.is_some() || self.more().is_some() {
            let more = self.more_mut();
            more.timeouts[which] = timeout;
            // `set` restarts the idle time: no idle timeout, no idle
            // deadline.
            let idle = more.timeouts[IDLE].is_some();
            self.word = self.word & !HAS_IDLE | if idle { HAS_IDLE } else { 0 };
        }
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
        self.word & HAS_IDLE != 0 || self.timeout(dir).is_some()
    }

    /// The idle time counts from `now`: the idle deadline is the idle
    /// timeout after it. Out of line: a completion that waited needs it,
    /// not a ready one.
    #[inline(never)]
    fn restart_idle(&mut self, now: Instant) {
        let due = self.timeout(IDLE).map(|t| later(now, t));
        self.set_deadline(IDLE, due);
        for dir in 0..N {
            if self.armed(dir) {
                // A sleep that cannot be had fails the next poll.
                let _ = self.aim(dir, false);
            }
        }
    }

    /// Arms `dir`, which has a timeout to keep: its countdown starts now,
    /// and its sleep is aimed at its target. An error when a sleep is
    /// needed and none can be had (`dir` stays disarmed).
    #[inline]
    fn arm(&mut self, dir: usize) -> io::Result<()> {
        if self.word & ACTIVE != 0 {
            // The activity pending since the last clock read is timed at
            // this one: the idle time counts from it, after the activity.
            self.word &= !ACTIVE;
            self.restart_idle(Instant::now());
        }
        self.word |= ARMED << dir;
        // Without `More`, with `dir`'s sleep (that of the word's one
        // timeout): the hot path, written out. The idle timeout's sleep is
        // due by its deadline (see the invariants).
        if let (true, Slot::Sleep(sleep)) = (self.slot_dir() == dir, &mut self.slot) {
            if self.word & HAS_IDLE == 0 {
                let end = later(Instant::now(), Duration::from_nanos(self.word >> NS_SHIFT));
                self.due = Some(end);
                if sleep.deadline() > end {
                    sleep.reset(end);
                }
            }
            return Ok(());
        }
        self.start(dir)
    }

    /// Starts armed `dir`'s countdown now, and aims its sleep; disarms it
    /// when no sleep can be had.
    #[inline(never)]
    fn start(&mut self, dir: usize) -> io::Result<()> {
        let end = self.timeout(dir).map(|t| later(Instant::now(), t));
        self.set_deadline(dir, end);
        self.aim(dir, false).inspect_err(|_| self.disarm(dir))
    }

    /// Puts armed `dir`'s sleep at its target: a sleep due by then stays
    /// (unless `again`); one due later is moved there; none is made there,
    /// unless the target has passed: then the sleep goes, and the poll
    /// fails with no timer. An error when no sleep can be had.
    fn aim(&mut self, dir: usize, again: bool) -> io::Result<()> {
        let targets = [self.deadline(dir), self.deadline(IDLE)];
        let Some(at) = targets.into_iter().flatten().min() else {
            return Ok(());
        };
        if !again && self.sleep_mut(dir).is_some_and(|s| s.deadline() <= at) {
            return Ok(());
        }
        if at <= Instant::now() {
            self.put_sleep(dir, None);
        } else if let Some(sleep) = self.sleep_mut(dir) {
            sleep.reset(at);
        } else {
            let default = WheelOrDefault(None);
            let wheel = self.more().map_or(&default, |more| &more.wheel);
            let sleep = wheel.try_sleep_until(at)?;
            self.put_sleep(dir, Some(sleep));
        }
        Ok(())
    }

    /// An operation of `dir` is pending: arm `dir` if it is not, and poll
    /// its sleep; when it completes (or `dir` has none: its target had
    /// passed), returns the timeout that is due, or sets the sleep again
    /// (see the invariants). An error when a deadline has passed, or when
    /// no sleep can be had.
    ///
    /// It spends the task's budget as tokio-io-timeout's one `Sleep` poll
    /// does: out of budget, the operation stays pending before the deadline
    /// is looked at (the task is scheduled again); a unit is spent when the
    /// poll ends in an error. The sleeps set again in between spend
    /// nothing more.
    #[inline(never)]
    fn poll_pending(&mut self, dir: usize, cx: &mut Context<'_>) -> io::Result<()> {
        if !self.armed(dir) {
            if !self.timed(dir) {
                return Ok(());
            }
            self.arm(dir)?;
        }
        if coop::poll_budget(cx).is_pending() {
            return Ok(());
        }
        let mut attempt = 0;
        let e: io::Error = loop {
            if let Some(sleep) = self.sleep_mut(dir) {
                if sleep.poll_unbudgeted(cx).is_pending() {
                    return Ok(());
                }
            }
            let now = Instant::now();
            let passed = |which| self.deadline(which).is_some_and(|at| at <= now);
            let idle = passed(IDLE);
            if idle || passed(dir) {
                if idle {
                    // The idle time counts again from here: a caller that
                    // keeps the stream gets its next idle timeout a whole
                    // idle period later, not at once on every operation.
                    self.restart_idle(now);
                }
                // No payload (no allocation), as tokio-io-timeout's.
                break io::ErrorKind::TimedOut.into();
            } else if attempt == 2 {
                // Completed with nothing due three times, the last time a
                // sleep made anew: its wheel has shut down.
                break Error(Kind::Shutdown).into();
            }
            // Nothing due: the sleep is set again, then made anew.
            if attempt == 1 {
                self.put_sleep(dir, None);
            }
            self.aim(dir, true)?;
            attempt += 1;
        };
        self.disarm(dir);
        coop::spend(cx);
        Err(e)
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
        if ok && self.word & HAS_IDLE != 0 {
            if armed != 0 {
                self.restart_idle(Instant::now());
            } else {
                self.word |= ACTIVE;
            }
        }
    }
}

#[cfg(test)]
mod tests;
