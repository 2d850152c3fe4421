//! The countdowns of a wrapper, written once for [`TimeoutReader`],
//! [`TimeoutWriter`] and [`TimeoutStream`].
//!
//! A wrapper times one direction (a reader, a writer) or two (a stream);
//! a stream also has an idle deadline. What a wrapper keeps lives in one
//! box, made when the first timeout is set (or with the wrapper, when it
//! is given a [`Wheel`]): a wrapper with no timeout set holds one null
//! pointer. The box is the size of an `Option<Sleep>` and one word, all
//! that the common case needs (a server's stream with an idle timeout, or
//! a reader or writer with its timeout):
//!
//! - the *slot*: direction 0's sleep; before it is made, the first
//!   deadline itself; or a pointer to a second box, `More`, which holds
//!   the rest (a held wheel, a stream's read and write timeouts, both
//!   directions' sleeps, and the first timeout and deadline whenever the
//!   word cannot). `More` is made when first needed, and kept.
//! - the *word*: the countdown flags, the *first timeout* (a stream's
//!   idle timeout, a reader's or writer's timeout) in whole milliseconds,
//!   and the *first deadline* (a stream's idle deadline, a reader's or
//!   writer's countdown end) as an offset from the slot sleep's deadline.
//!
//! # Invariants
//!
//! - A direction is *armed* from the poll that finds one of its operations
//!   pending, with a timeout to keep, until one of its operations
//!   completes: its sleep is then due no later than the earliest of its
//!   countdown's end and the idle deadline (its *target*).
//! - A completed operation only disarms its direction (one store) and,
//!   with an idle timeout, records its success as activity: it neither
//!   cancels nor moves the sleep. The idle deadline is the idle timeout
//!   after a clock read made after the last activity, never one before
//!   it, so it is never early: the clock is read at once when a direction
//!   is armed as the operation completes, and otherwise `ACTIVE` is set,
//!   and the next pending poll reads the clock for it. `ACTIVE` is thus
//!   set only while no direction is armed: an armed direction's idle
//!   deadline is the first deadline (see `State::completed`).
//! - The next arming moves the sleep only to an earlier deadline (a
//!   timeout made shorter); a sleep due at or before the new target stays
//!   where it is. A sleep due before its target fires there: the task it
//!   wakes polls, finds nothing due, and the sleep is moved on to the
//!   target. So a connection whose reads wait once per message costs one
//!   move per countdown period, not one per message, and its task one
//!   extra wake-up per period.
//! - Nothing is due before its deadline: when a sleep completes, the
//!   deadlines are checked against the clock, and a sleep that completes
//!   with nothing due (its deadline was moved later since, or its wheel
//!   shut down) is set again, then replaced; a third completion with
//!   nothing due means the wheel has shut down, and says so.
//! - Packing loses no timeout and makes none early. The word holds the
//!   first timeout only when it is a whole number of milliseconds up to
//!   `MS_MAX` (37 hours); any other goes to `More`, exactly. The first
//!   deadline is kept exactly while the slot has no sleep (`Slot::At`) and
//!   in `More`; beside the slot's sleep it is the offset from that sleep's
//!   deadline (an exact instant), in whole microseconds, or milliseconds
//!   past 35 minutes, rounded so that it reads back no earlier than it was
//!   written, and later by less than that unit (exact when the unit
//!   divides the distance, as on a paused clock moved in whole
//!   microseconds). Every write goes through
//!   `State::set_first_due`; an offset too large for an `i32` of
//!   milliseconds (24 days) moves the sleep to the deadline itself (offset
//!   0), and one that still does not fit (a deadline the wheel clamps)
//!   moves everything to `More`. Every move of the slot's sleep reads the
//!   first deadline before and writes it again after.
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

// ===== the boxes =====

/// The timeouts of a wrapper with `N` directions (1 or 2).
#[derive(Debug)]
pub(crate) struct Timeouts<const N: usize> {
    state: Option<Box<State<N>>>,
}

// `State::word`: flags in its low bits, the first timeout above them, the
// first deadline's offset in the high half.

/// Direction `d` is armed: `ARMED << d`.
const ARMED: u64 = 1;
/// Every direction's `ARMED` bit.
const ARMED_ANY: u64 = ARMED | ARMED << 1;
/// A stream's operation succeeded while no direction was armed, and the
/// first deadline does not yet count from after it: the idle time counts
/// from the wrapper's next clock read (see `State::completed`).
const ACTIVE: u64 = 1 << 2;
/// The first timeout is set: in the bits below, or in `More::first` when
/// the slot holds `More`.
const SET: u64 = 1 << 3;
/// The first deadline's offset is in milliseconds, not microseconds.
const OFF_MS: u64 = 1 << 4;
/// Where the first timeout's milliseconds start.
const MS_SHIFT: u32 = 5;
/// The longest first timeout the word holds, in milliseconds (37 hours).
const MS_MAX: u64 = (1 << (OFF_SHIFT - MS_SHIFT)) - 1;
/// The first timeout's bits.
const MS: u64 = MS_MAX << MS_SHIFT;
/// Where the first deadline's offset starts: an `i32`, the high half.
const OFF_SHIFT: u32 = 32;
/// The offset's bits, with its unit.
const OFF: u64 = (u32::MAX as u64) << OFF_SHIFT | OFF_MS;

/// What a wrapper with a timeout, or a wheel of its own, keeps: the box
/// every timed connection has, the size of an `Option<Sleep>` and a word.
#[derive(Debug)]
struct State<const N: usize> {
    slot: Slot<N>,
    /// The flags, the first timeout and the first deadline's offset (see
    /// the constants above).
    word: u64,
}

// The box that `State` is: the slot, which niche filling keeps at the size
// of an `Option<Sleep>`, and one word. With the 32-byte `Sleep` that is 40
// bytes, the allocator's 48-byte block, 32 bytes less per connection
// than the 80-byte block of a 72-byte box.
const _: () = assert!(size_of::<State<1>>() <= size_of::<Option<Sleep>>() + 8);
const _: () = assert!(size_of::<State<2>>() <= size_of::<Option<Sleep>>() + 8);

/// Direction 0's sleep, or what stands in for it.
#[derive(Debug)]
enum Slot<const N: usize> {
    /// No sleep, and no first deadline to keep.
    Empty,
    /// No sleep yet: the first deadline.
    At(Instant),
    /// Direction 0's sleep: made at its first arming; kept, and moved,
    /// from then on. The first deadline is its deadline plus the word's
    /// offset.
    Sleep(Sleep),
    /// Everything the word and the slot do not hold.
    More(Box<More<N>>),
}

/// What fewer wrappers need.
#[derive(Debug)]
struct More<const N: usize> {
    /// The wheel the sleeps are made on: its own, or the default wheel of
    /// the runtime that polls the wrapper when a sleep is needed.
    wheel: WheelOrDefault,
    /// A stream's directions: their timeouts and countdown ends.
    dirs: [Dir; N],
    /// Each direction's sleep.
    sleeps: [Option<Sleep>; N],
    /// The first timeout, while `SET`.
    first: Duration,
    /// The first deadline, when there is one to keep.
    due: Option<Instant>,
}

impl<const N: usize> Default for More<N> {
    fn default() -> More<N> {
        More {
            wheel: WheelOrDefault::current(),
            dirs: std::array::from_fn(|_| Dir::default()),
            sleeps: std::array::from_fn(|_| None),
            first: Duration::ZERO,
            due: None,
        }
    }
}

/// A stream's direction.
#[derive(Debug, Default)]
struct Dir {
    timeout: Option<Duration>,
    /// The end of its countdown while armed, if it has one of its own.
    end: Option<Instant>,
}

/// `t` in whole milliseconds, if it is one that the word holds.
fn packed_ms(t: Duration) -> Option<u64> {
    if t.subsec_nanos() % 1_000_000 != 0 {
        return None;
    }
    let ms = t.as_secs().checked_mul(1000)? + u64::from(t.subsec_millis());
    (ms <= MS_MAX).then_some(ms)
}

/// `d` in units of `unit_ns` nanoseconds (which divides a second), rounded
/// up when `up`, else down; `None` past an `i32`.
fn units(d: Duration, unit_ns: u32, up: bool) -> Option<i32> {
    let sub = d.subsec_nanos();
    let sub = if up {
        sub.div_ceil(unit_ns)
    } else {
        sub / unit_ns
    };
    let n = d
        .as_secs()
        .checked_mul(u64::from(1_000_000_000 / unit_ns))?
        .checked_add(u64::from(sub))?;
    i32::try_from(n).ok()
}

/// The offset bits of the word for the first deadline `due` beside a
/// sleep due at `base`, rounded so that [`offset_due`] reads back no
/// earlier than `due`; `None` when they cannot hold it.
fn offset_bits(due: Instant, base: Instant) -> Option<u64> {
    let (d, up, sign) = if due >= base {
        (due.duration_since(base), true, 1)
    } else {
        // Before `base`: a shorter offset back, rounded down, is later.
        (base.duration_since(due), false, -1)
    };
    let (n, unit) = match units(d, 1_000, up) {
        Some(us) => (us, 0),
        None => (units(d, 1_000_000, up)?, OFF_MS),
    };
    Some(u64::from((sign * n) as u32) << OFF_SHIFT | unit)
}

/// The first deadline that the word's offset bits give beside a sleep due
/// at `base`.
fn offset_due(base: Instant, word: u64) -> Instant {
    let n = (word >> OFF_SHIFT) as u32 as i32;
    let abs = u64::from(n.unsigned_abs());
    let d = if word & OFF_MS != 0 {
        Duration::from_millis(abs)
    } else {
        Duration::from_micros(abs)
    };
    if n >= 0 {
        later(base, d)
    } else {
        // `d` is at most `base` less an instant that exists: it fits.
        base.checked_sub(d).unwrap_or(base)
    }
}

/// `d` in whole microseconds, rounded up when `up`, else down; saturating
/// far beyond an offset's range.
#[inline]
fn micros(d: Duration, up: bool) -> i64 {
    let sub = d.subsec_nanos();
    let sub = if up { sub.div_ceil(1_000) } else { sub / 1_000 };
    d.as_secs().min(1 << 32) as i64 * 1_000_000 + i64::from(sub)
}

/// [`offset_bits`] for the deadline `ms` milliseconds after `now`, beside
/// a sleep due at `base`, when it fits in microseconds: the same bits,
/// with one subtraction of instants and no sum (a whole number of
/// microseconds added to a distance rounds as the distance does).
#[inline]
fn offset_after(now: Instant, ms: u64, base: Instant) -> Option<u64> {
    let x = if now >= base {
        micros(now.duration_since(base), true)
    } else {
        -micros(base.duration_since(now), false)
    };
    // `ms` is at most `MS_MAX`: no overflow.
    let us = i32::try_from(ms as i64 * 1_000 + x).ok()?;
    Some(u64::from(us as u32) << OFF_SHIFT)
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
                word: 0,
            })
        })
    }

    /// The timeout `which`.
    pub(crate) fn get(&self, which: Which) -> Option<Duration> {
        self.state.as_ref()?.timeout(which)
    }

    /// Sets the timeout `which`.
    pub(crate) fn set(&mut self, which: Which, timeout: Option<Duration>) {
        match which {
            Which::Dir(dir) => self.set_timeout(dir, timeout),
            Which::Idle => self.set_idle_timeout(timeout),
        }
    }

    /// Sets the timeout of direction `dir`. A running countdown starts
    /// again now, with the new timeout (tokio-io-timeout's
    /// `set_timeout_pinned` disarms it and wakes the task, whose next poll
    /// starts it again).
    fn set_timeout(&mut self, dir: usize, timeout: Option<Duration>) {
        if timeout.is_none() && self.state.is_none() {
            return;
        }
        let s = self.state_mut();
        s.store(Which::Dir(dir), timeout);
        if s.armed(dir) {
            s.start(dir);
        }
        s.refresh(dir);
    }

    /// Sets the idle timeout; the idle time counts from now.
    fn set_idle_timeout(&mut self, timeout: Option<Duration>) {
        if timeout.is_none() && self.state.is_none() {
            return;
        }
        let s = self.state_mut();
        s.store(Which::Idle, timeout);
        // Activity before now counts from now, as the rest does.
        s.word &= !ACTIVE;
        s.restart_idle(Instant::now());
        for dir in 0..N {
            s.refresh(dir);
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
    /// Whether the timeouts of direction `dir` are in `More` (a stream's)
    /// rather than the first timeout (a reader's or a writer's).
    const DIRS_IN_MORE: bool = N > 1;

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

    /// Moves what the slot and the word hold into a new `More`.
    #[cold]
    #[inline(never)]
    fn make_more(&mut self) {
        let mut more = Box::<More<N>>::default();
        more.first = self.first().unwrap_or_default();
        more.due = self.first_due();
        if let Slot::Sleep(sleep) = std::mem::replace(&mut self.slot, Slot::Empty) {
            more.sleeps[0] = Some(sleep);
        }
        self.slot = Slot::More(more);
        self.word &= !(MS | OFF);
    }

    fn timeout(&self, which: Which) -> Option<Duration> {
        match which {
            Which::Dir(dir) if Self::DIRS_IN_MORE => self.more()?.dirs[dir].timeout,
            _ => self.first(),
        }
    }

    /// The first timeout.
    #[inline]
    fn first(&self) -> Option<Duration> {
        if self.word & SET == 0 {
            return None;
        }
        Some(match &self.slot {
            Slot::More(more) => more.first,
            _ => Duration::from_millis((self.word & MS) >> MS_SHIFT),
        })
    }

    fn store(&mut self, which: Which, timeout: Option<Duration>) {
        match which {
            Which::Dir(dir) if Self::DIRS_IN_MORE => {
                if timeout.is_some() || self.more().is_some() {
                    self.more_mut().dirs[dir].timeout = timeout;
                }
            }
            _ => {
                self.word &= !(SET | MS);
                let Some(t) = timeout else { return };
                self.word |= SET;
                match packed_ms(t) {
                    Some(ms) if self.more().is_none() => self.word |= ms << MS_SHIFT,
                    _ => self.more_mut().first = t,
                }
            }
        }
    }

    /// The first deadline, if one is kept.
    #[inline]
    fn first_due(&self) -> Option<Instant> {
        match &self.slot {
            Slot::Empty => None,
            Slot::At(at) => Some(*at),
            Slot::Sleep(sleep) => Some(offset_due(sleep.deadline(), self.word)),
            Slot::More(more) => more.due,
        }
    }

    /// Sets the first deadline to `due`, or to an instant less than a unit
    /// of the offset after it (see the invariants).
    #[inline]
    fn set_first_due(&mut self, due: Instant) {
        match &mut self.slot {
            Slot::Empty | Slot::At(_) => self.slot = Slot::At(due),
            Slot::Sleep(sleep) => match offset_bits(due, sleep.deadline()) {
                Some(bits) => self.word = self.word & !OFF | bits,
                None => self.set_far_due(due),
            },
            Slot::More(more) => more.due = Some(due),
        }
    }

    /// Sets a first deadline too far from the slot's sleep for the offset:
    /// the sleep moves to it, or, should even that not fit, it goes to
    /// `More`. Moving the sleep keeps the invariants: the deadline is its
    /// direction's target when armed (the slot has no `More`, so no
    /// countdown end of a stream's direction), and an idle sleep may be
    /// due anywhere.
    #[cold]
    #[inline(never)]
    fn set_far_due(&mut self, due: Instant) {
        if let Slot::Sleep(sleep) = &mut self.slot {
            sleep.reset(due);
            if let Some(bits) = offset_bits(due, sleep.deadline()) {
                self.word = self.word & !OFF | bits;
                return;
            }
        }
        self.more_mut().due = Some(due);
    }

    /// Whether a stream has an idle timeout.
    #[inline]
    fn has_idle(&self) -> bool {
        Self::DIRS_IN_MORE && self.word & SET != 0
    }

    /// The idle deadline, when an idle timeout is set. Asked only while a
    /// direction is armed, when no activity is pending (the arming took it
    /// in): the first deadline is then the idle deadline.
    #[inline]
    fn idle_deadline(&self) -> Option<Instant> {
        debug_assert!(self.word & ACTIVE == 0, "activity not yet timed");
        if self.has_idle() {
            self.first_due()
        } else {
            None
        }
    }

    /// The idle time counts from `now`: the idle deadline is the idle
    /// timeout after it. Out of line: a completion that waited needs it,
    /// not a ready one.
    #[inline(never)]
    fn restart_idle(&mut self, now: Instant) {
        if Self::DIRS_IN_MORE {
            self.restart_first(now);
        }
    }

    /// The first deadline is the first timeout after `now`: without a sum
    /// of instants when the word holds both (see [`offset_after`]).
    #[inline]
    fn restart_first(&mut self, now: Instant) {
        if self.word & SET == 0 {
            return;
        }
        if let Slot::Sleep(sleep) = &self.slot {
            let ms = (self.word & MS) >> MS_SHIFT;
            if let Some(bits) = offset_after(now, ms, sleep.deadline()) {
                self.word = self.word & !OFF | bits;
                return;
            }
        }
        if let Some(t) = self.first() {
            self.set_first_due(later(now, t));
        }
    }

    fn armed(&self, dir: usize) -> bool {
        self.word & (ARMED << dir) != 0
    }

    fn disarm(&mut self, dir: usize) {
        self.word &= !(ARMED << dir);
    }

    /// The end of armed `dir`'s own countdown, if it has one: a reader's
    /// or writer's first deadline (it is armed only with its timeout), a
    /// stream's direction's end.
    #[inline]
    fn end(&self, dir: usize) -> Option<Instant> {
        if Self::DIRS_IN_MORE {
            self.more()?.dirs[dir].end
        } else {
            self.first_due()
        }
    }

    /// Arms `dir` now, with its timeout (or none) of its own.
    #[inline]
    fn start(&mut self, dir: usize) {
        self.word |= ARMED << dir;
        if Self::DIRS_IN_MORE {
            if let Slot::More(more) = &mut self.slot {
                let d = &mut more.dirs[dir];
                d.end = d.timeout.map(|t| later(Instant::now(), t));
            }
        } else {
            self.restart_first(Instant::now());
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

    /// Whether `dir` has anything to time: a timeout of its own, or the
    /// idle timeout.
    fn timed(&self, dir: usize) -> bool {
        self.has_idle() || self.timeout(Which::Dir(dir)).is_some()
    }

    fn sleep_mut(&mut self, dir: usize) -> Option<&mut Sleep> {
        match &mut self.slot {
            Slot::Sleep(sleep) if dir == 0 => Some(sleep),
            Slot::More(more) => more.sleeps[dir].as_mut(),
            _ => None,
        }
    }

    /// Moves `dir`'s sleep, if it has one, to `at`; the first deadline
    /// stays where it was.
    fn reset_sleep(&mut self, dir: usize, at: Instant) {
        match &mut self.slot {
            Slot::Sleep(sleep) if dir == 0 => {
                let due = offset_due(sleep.deadline(), self.word);
                sleep.reset(at);
                self.set_first_due(due);
            }
            Slot::More(more) => {
                if let Some(sleep) = &mut more.sleeps[dir] {
                    sleep.reset(at);
                }
            }
            _ => {}
        }
    }

    /// Gives `dir` the sleep `sleep`, in place of the one it had, if any;
    /// the first deadline stays where it was.
    fn put_sleep(&mut self, dir: usize, sleep: Sleep) {
        if dir == 0 && self.more().is_none() {
            let due = self.first_due();
            self.slot = Slot::Sleep(sleep);
            match due {
                Some(due) => self.set_first_due(due),
                // Nothing to keep: any offset will do.
                None => self.word &= !OFF,
            }
        } else {
            self.more_mut().sleeps[dir] = Some(sleep);
        }
    }

    /// Lets `dir`'s sleep go: `dir` has nothing left to time (and, when
    /// it is direction 0, the first deadline nothing left to mean).
    fn drop_sleep(&mut self, dir: usize) {
        match &mut self.slot {
            Slot::Sleep(_) if dir == 0 => self.slot = Slot::Empty,
            Slot::More(more) => more.sleeps[dir] = None,
            _ => {}
        }
    }

    /// An operation of `dir` completed (successfully when `ok`).
    ///
    /// With an idle timeout, a success is activity: the idle time must
    /// count from an instant no earlier than the operation's (never
    /// early), and not much later. Only a clock read after the operation
    /// gives one (the cheap clocks trail the precise one by more than
    /// their resolution, and do not follow tokio's paused clock), so the
    /// question is which read:
    ///
    /// - While a direction is armed, this one here. Armed `dir` means the
    ///   operation waited: the task was woken for it, and will often work
    ///   on what it got before it waits again; timing it at that wait
    ///   would add the work to the idle time, where a `Sleep` reset after
    ///   the read adds nothing. The other direction armed is a stream
    ///   split between two tasks, one waiting while the other works: that
    ///   waiting direction's sleep would learn of the activity only when
    ///   it fires, up to an idle period late.
    /// - Otherwise (a ready operation, nothing waiting) one store records
    ///   the activity (`ACTIVE`), and the next pending poll, through which
    ///   alone a timeout can end, reads the clock for it
    ///   (`time_activity`). A task that waits on the stream right after a
    ///   ready operation thus times it to within that wait's clock read;
    ///   one that works in between has that work added, as
    ///   tokio-io-timeout's countdowns start at the first poll that is
    ///   pending. A server reading a burst of ready messages pays no clock
    ///   read for them.
    ///
    /// tests/io_idle.rs checks both against a `Sleep` kept by hand to the
    /// same rule.
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

    /// The deadline `dir`'s sleep is for: the earliest of its countdown's
    /// end and the idle deadline.
    #[inline]
    fn target(&self, dir: usize) -> Option<Instant> {
        match (self.end(dir), self.idle_deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// After a timeout of `dir` changed: moves its sleep to its new
    /// target when armed, and lets the sleep go when `dir` has nothing left
    /// to time.
    fn refresh(&mut self, dir: usize) {
        if !self.timed(dir) {
            self.disarm(dir);
            self.drop_sleep(dir);
        } else if self.armed(dir) {
            // Asked only when armed: no activity is pending then.
            if let Some(at) = self.target(dir) {
                self.reset_sleep(dir, at);
            }
        }
    }

    /// A sleep until `at` on the wrapper's wheel.
    fn new_sleep(&self, at: Instant) -> io::Result<Sleep> {
        match self.more() {
            Some(more) => new_sleep(&more.wheel, at),
            None => new_sleep(&WheelOrDefault::current(), at),
        }
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
            if self.word & ACTIVE != 0 {
                self.time_activity();
            }
            self.start(dir);
            if dir == 0 && matches!(self.slot, Slot::Sleep(_)) {
                // No `More`: the target is the first deadline, and the
                // sleep is due after it when the offset (the word's high
                // half) is negative. Otherwise, as below, it stays.
                if (self.word as i64) < 0 {
                    let at = self.first_due().expect("beside a sleep");
                    self.reset_sleep(0, at);
                }
                return self.poll_sleep(dir, cx);
            }
            let at = self.target(dir).expect("a timeout is set");
            match self.sleep_mut(dir).map(|sleep| sleep.deadline()) {
                // A sleep due no later than the new target is left where
                // it is: when it fires, the poll finds nothing due and
                // moves it on (see the invariants). One wake-up per
                // countdown instead of a move per wait.
                Some(deadline) => {
                    if deadline > at {
                        self.reset_sleep(dir, at);
                    }
                }
                None => match self.new_sleep(at) {
                    Ok(sleep) => self.put_sleep(dir, sleep),
                    Err(e) => {
                        // Armed only with a sleep to poll.
                        self.disarm(dir);
                        return Err(e);
                    }
                },
            }
        }
        self.poll_sleep(dir, cx)
    }

    /// Polls armed `dir`'s sleep; when it completes, returns the timeout
    /// that is due, or sets the sleep again (see the invariants).
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
            let sleep = self.sleep_mut(dir).expect("armed");
            if sleep.poll_unbudgeted(cx).is_pending() {
                return Ok(());
            }
            let now = Instant::now();
            let ends_due = self.end(dir).is_some_and(|e| e <= now);
            let idle_due = self.idle_deadline().is_some_and(|d| d <= now);
            if ends_due || idle_due {
                if idle_due {
                    // The idle time counts again from here: a caller that
                    // keeps the stream gets its next idle timeout a whole
                    // idle period later, not at once on every operation.
                    self.restart_idle(now);
                }
                self.disarm(dir);
                coop::spend(cx);
                return Err(timed_out());
            }
            let at = self.target(dir).expect("armed with a timeout");
            match attempt {
                0 => self.reset_sleep(dir, at),
                1 => {
                    let sleep = self.new_sleep(at)?;
                    self.put_sleep(dir, sleep);
                }
                _ => break,
            }
        }
        // Completed with nothing due three times, the last time a sleep
        // made anew: its wheel has shut down.
        self.disarm(dir);
        coop::spend(cx);
        Err(Error::shutdown().into())
    }
}

/// A sleep until `at` on `wheel`; an error (kind `Other`, holding an
/// [`Error`]) when no timer can be had, or when the wheel has shut down.
fn new_sleep(wheel: &WheelOrDefault, at: Instant) -> io::Result<Sleep> {
    let wheel = wheel.try_get()?;
    if wheel.is_shutdown() {
        return Err(Error::shutdown().into());
    }
    Ok(wheel.try_sleep_until(at)?)
}

#[cfg(test)]
mod tests {
    use std::task::Waker;

    use super::*;

    /// The slot is no larger than an `Option<Sleep>`: niche filling finds
    /// room for its other variants. With a 32-byte `Sleep`, a stream with
    /// an idle timeout alone, or a reader or writer with its timeout, has
    /// one box of 40 bytes: a 48-byte block from the allocator.
    #[test]
    fn the_slot_is_the_size_of_an_optional_sleep() {
        assert_eq!(size_of::<Slot<1>>(), size_of::<Option<Sleep>>());
        assert_eq!(size_of::<Slot<2>>(), size_of::<Option<Sleep>>());
        assert_eq!(size_of::<Option<Sleep>>(), 32);
        assert_eq!(size_of::<State<1>>(), 40);
        assert_eq!(size_of::<State<2>>(), 40);
    }

    /// Every timeout reads back as it was set, packed or not; the word
    /// packs the whole milliseconds up to `MS_MAX`, and only those.
    #[test]
    fn the_first_timeout_holds_any_timeout() {
        let ms = Duration::from_millis;
        for (t, packed) in [
            (Duration::ZERO, true),
            (ms(1), true),
            (ms(60_000), true),
            (ms(MS_MAX), true),
            (ms(MS_MAX + 1), false),
            (Duration::from_nanos(1), false),
            (Duration::new(5, 7), false),
            (Duration::from_micros(1500), false),
            (Duration::MAX, false),
        ] {
            let mut s = Timeouts::<2>::new();
            s.set(Which::Idle, Some(t));
            assert_eq!(s.get(Which::Idle), Some(t));
            let more = s.state.as_ref().unwrap().more().is_some();
            assert_eq!(more, !packed, "{t:?} in More");
            s.set(Which::Dir(1), Some(t));
            assert_eq!(s.get(Which::Dir(1)), Some(t));
            assert_eq!(s.get(Which::Idle), Some(t), "{t:?} kept in More");
            s.set(Which::Idle, None);
            assert_eq!(s.get(Which::Idle), None);

            let mut r = Timeouts::<1>::new();
            r.set(Which::Dir(0), Some(t));
            assert_eq!(r.get(Which::Dir(0)), Some(t));
            r.set(Which::Dir(0), None);
            assert_eq!(r.get(Which::Dir(0)), None);
        }
    }

    /// An offset reads back no earlier than the deadline it was made for,
    /// and later by less than its unit: exactly when the distance is whole
    /// units. Out of its range, none.
    #[test]
    fn an_offset_reads_back_never_early() {
        let base = Instant::now() + Duration::from_secs(100 * 86_400);
        let us = Duration::from_micros;
        let ns = Duration::from_nanos;
        let cases = [
            ns(0),
            ns(1),
            ns(999),
            us(1),
            us(1) + ns(1),
            us(300),
            Duration::from_millis(100),
            Duration::from_millis(100) + us(300) + ns(7),
            us(i32::MAX as u64),
            us(i32::MAX as u64) + ns(1),
            Duration::from_secs(3_600) + ns(1),
            Duration::from_millis(i32::MAX as u64),
        ];
        for d in cases {
            for (due, back) in [(base + d, false), (base - d, true)] {
                let bits = offset_bits(due, base).unwrap_or_else(|| panic!("{d:?} fits"));
                assert_eq!(bits & !OFF, 0, "only offset bits");
                let read = offset_due(base, bits);
                let unit: u64 = if bits & OFF_MS != 0 { 1_000_000 } else { 1_000 };
                let late = read.duration_since(due);
                assert!(
                    read >= due,
                    "{d:?} back {back}: read {read:?} before {due:?}"
                );
                assert!(late < ns(unit), "{d:?} back {back}: late by {late:?}");
                if d.as_nanos() % u128::from(unit) == 0 {
                    assert_eq!(read, due, "{d:?} back {back}: whole units are exact");
                }
            }
        }
        // The shortcut gives the same bits, where it gives any.
        for d in cases {
            for now in [base + d, base - d] {
                for ms in [0, 1, 999, 30_000, 2_147_483, MS_MAX] {
                    let due = now + Duration::from_millis(ms);
                    match offset_after(now, ms, base) {
                        Some(bits) => assert_eq!(Some(bits), offset_bits(due, base)),
                        None => {
                            let bits = offset_bits(due, base);
                            assert!(bits.is_none_or(|b| b & OFF_MS != 0), "{d:?} {ms}");
                        }
                    }
                }
            }
        }
        for d in [
            Duration::from_millis(i32::MAX as u64) + ns(1),
            Duration::from_secs(30 * 86_400),
        ] {
            assert_eq!(offset_bits(base + d, base), None, "{d:?} after");
            assert_eq!(offset_bits(base - d - us(1000), base), None, "{d:?} before");
        }
    }

    /// A stream with an idle timeout of `idle` whose read has waited once:
    /// the slot holds its sleep.
    fn armed_stream(idle: Duration) -> Timeouts<2> {
        let mut t = Timeouts::<2>::new();
        t.set(Which::Idle, Some(idle));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(t.check::<()>(Some(0), &mut cx, Poll::Pending).is_pending());
        assert!(matches!(t.state.as_ref().unwrap().slot, Slot::Sleep(_)));
        t
    }

    fn state(t: &mut Timeouts<2>) -> &mut State<2> {
        t.state.as_deref_mut().unwrap()
    }

    /// The first deadline beside the slot's sleep: near it, an offset, the
    /// sleep left where it is; 24 days off, the sleep moved to it; and
    /// kept, exactly, when the slot's sleep moves or goes to `More`.
    #[tokio::test(start_paused = true)]
    async fn the_first_deadline_survives_every_move() {
        let idle = Duration::from_secs(60);
        let mut t = armed_stream(idle);
        let s = state(&mut t);
        let start = Instant::now();
        let sleep_at = |s: &mut State<2>| s.sleep_mut(0).unwrap().deadline();
        assert_eq!(sleep_at(s), start + idle);
        assert_eq!(s.first_due(), Some(start + idle));

        // Near: µs, then ms, offsets; the sleep stays.
        let near = start + Duration::from_secs(100) + Duration::from_nanos(1_500);
        s.set_first_due(near);
        assert_eq!(s.first_due(), Some(near + Duration::from_nanos(500)));
        assert_eq!(sleep_at(s), start + idle);
        let far = start + Duration::from_secs(7_200) + Duration::from_nanos(1_500);
        s.set_first_due(far);
        assert_eq!(s.first_due(), Some(far + Duration::from_nanos(998_500)));
        assert_eq!(sleep_at(s), start + idle);

        // Too far for the offset: the sleep moves to it.
        let farther = start + Duration::from_secs(30 * 86_400) + Duration::from_nanos(3);
        s.set_first_due(farther);
        assert_eq!(s.first_due(), Some(farther));
        assert_eq!(sleep_at(s), farther);

        // A move of the sleep keeps the first deadline.
        let due = start + Duration::from_secs(90);
        s.set_first_due(due);
        s.reset_sleep(0, start + Duration::from_secs(10));
        assert_eq!(sleep_at(s), start + Duration::from_secs(10));
        assert_eq!(s.first_due(), Some(due));

        // So does the move to `More`, with the sleep and the timeout.
        t.set(Which::Dir(1), Some(Duration::from_secs(5)));
        let s = state(&mut t);
        assert!(s.more().is_some());
        assert_eq!(s.first_due(), Some(due));
        assert_eq!(s.first(), Some(idle));
        assert_eq!(sleep_at(s), start + Duration::from_secs(10));
    }
}
