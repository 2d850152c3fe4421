//! The countdowns of a wrapper, written once for [`TimeoutReader`],
//! [`TimeoutWriter`] and [`TimeoutStream`].
//!
//! A wrapper times one direction (a reader, a writer) or two (a stream);
//! a stream also has an idle deadline. What a wrapper keeps lives in one
//! box, made when the first timeout is set (or with the wrapper, when it
//! is given a [`Wheel`]): a wrapper with no timeout set holds one null
//! pointer. The box holds what the common case needs (a server's stream
//! with an idle timeout, or a reader or writer with its timeout): the
//! sleep of direction 0, one timeout and one instant. The rest (a held
//! wheel, a stream's read and write timeouts, the sleep of its direction 1)
//! goes in a second box, made when first needed, so that a connection
//! with an idle timeout alone pays for one small box.
//!
//! # Invariants
//!
//! - A direction is *armed* from the poll that finds one of its operations
//!   pending, with a timeout to keep, until one of its operations
//!   completes: its sleep is then due no later than the earliest of its
//!   countdown's end and the idle deadline (its *target*).
//! - A direction's `OWN` bit is set only while it is armed, and says that
//!   its countdown has an end of its own (a timeout was set when it was
//!   armed); armed without it, only the idle deadline times it.
//! - A completed operation only disarms its direction (one store) and,
//!   with an idle timeout, records its success as activity: it neither
//!   cancels nor moves the sleep. The idle start is a clock read made
//!   after the last activity, never one before it, so the idle deadline is
//!   never early: the clock is read at once when a direction is armed as
//!   the operation completes, and otherwise `ACTIVE` is set, and the next
//!   pending poll reads the clock for it. `ACTIVE` is thus set only while
//!   no direction is armed: an armed direction's idle deadline is
//!   `first_at` plus the idle timeout (see `State::completed`).
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

// `State::first`: a timeout in nanoseconds in its low bits, flags above.

/// The bits of `first` that hold its timeout, in nanoseconds (4.5 years).
const NS_MASK: u64 = (1 << 57) - 1;
/// Direction `d` is armed: `ARMED << d`.
const ARMED: u64 = 1 << 57;
/// Armed direction `d`'s countdown has an end of its own: `OWN << d`.
const OWN: u64 = 1 << 59;
/// The timeout is set, and is the nanoseconds below.
const SET: u64 = 1 << 61;
/// The timeout is set, and is too long for those bits: it is `more.long`.
const LONG: u64 = 1 << 62;
/// A stream's operation succeeded while no direction was armed, and
/// `first_at` is not yet past it: the idle start is the wrapper's next
/// clock read (see `State::completed`).
const ACTIVE: u64 = 1 << 63;
/// Every direction's `ARMED` bit.
const ARMED_ANY: u64 = ARMED | ARMED << 1;

/// What a wrapper with a timeout, or a wheel of its own, keeps: the box
/// every timed connection has.
#[derive(Debug)]
struct State<const N: usize> {
    /// Direction 0's sleep: made at its first arming; kept, and moved,
    /// from then on.
    sleep: Option<Sleep>,
    /// A stream's idle start: the setting of the idle timeout, its last
    /// firing, or an instant no earlier than the last successful operation
    /// (see `State::completed`), whichever came last; while `ACTIVE`, an
    /// instant before that operation, to be replaced at the next clock
    /// read. A reader's or writer's countdown end (while armed with `OWN`).
    first_at: Instant,
    /// A stream's idle timeout, or the timeout of a reader's or a
    /// writer's one direction, with the flags (see the constants above):
    /// packed in 8 bytes, so that a box with a sleep, an instant and this
    /// takes 72 bytes.
    first: u64,
    /// Made when first needed.
    more: Option<Box<More<N>>>,
}

/// What fewer wrappers need.
#[derive(Debug)]
struct More<const N: usize> {
    /// The wheel the sleeps are made on: its own, or the default wheel of
    /// the runtime that polls the wrapper when a sleep is needed.
    wheel: WheelOrDefault,
    /// A stream's directions: their timeouts and countdown ends.
    dirs: [Dir; N],
    /// A stream's direction 1's sleep.
    sleep: Option<Sleep>,
    /// `first`, when too long to pack (`LONG`).
    long: Duration,
}

impl<const N: usize> Default for More<N> {
    fn default() -> More<N> {
        More {
            wheel: WheelOrDefault::current(),
            dirs: std::array::from_fn(|_| Dir::default()),
            sleep: None,
            long: Duration::ZERO,
        }
    }
}

/// A stream's direction.
#[derive(Debug, Default)]
struct Dir {
    timeout: Option<Duration>,
    /// The end of its countdown, when armed with `OWN`.
    end: Option<Instant>,
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
                sleep: None,
                first_at: Instant::now(),
                first: 0,
                more: None,
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
        s.first &= !ACTIVE;
        if timeout.is_some() {
            s.first_at = Instant::now();
        }
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
    /// Whether the timeouts of direction `dir` are in `more` (a stream's)
    /// rather than in `first` (a reader's or a writer's).
    const DIRS_IN_MORE: bool = N > 1;

    fn more_mut(&mut self) -> &mut More<N> {
        self.more.get_or_insert_with(Box::default)
    }

    fn timeout(&self, which: Which) -> Option<Duration> {
        match which {
            Which::Dir(dir) if Self::DIRS_IN_MORE => self.more.as_ref()?.dirs[dir].timeout,
            _ => self.first(),
        }
    }

    /// The timeout in `first`.
    #[inline]
    fn first(&self) -> Option<Duration> {
        if self.first & SET != 0 {
            Some(Duration::from_nanos(self.first & NS_MASK))
        } else if self.first & LONG != 0 {
            self.more.as_ref().map(|m| m.long)
        } else {
            None
        }
    }

    fn store(&mut self, which: Which, timeout: Option<Duration>) {
        match which {
            Which::Dir(dir) if Self::DIRS_IN_MORE => {
                if timeout.is_some() || self.more.is_some() {
                    self.more_mut().dirs[dir].timeout = timeout;
                }
            }
            _ => {
                let flags = self.first & !(NS_MASK | SET | LONG);
                self.first = match timeout {
                    None => flags,
                    Some(t) => match u64::try_from(t.as_nanos()) {
                        Ok(ns) if ns <= NS_MASK => flags | SET | ns,
                        _ => {
                            self.more_mut().long = t;
                            flags | LONG
                        }
                    },
                };
            }
        }
    }

    /// The idle timeout: a stream's `first`.
    fn idle(&self) -> Option<Duration> {
        if Self::DIRS_IN_MORE {
            self.first()
        } else {
            None
        }
    }

    /// Whether a stream has an idle timeout.
    #[inline]
    fn has_idle(&self) -> bool {
        Self::DIRS_IN_MORE && self.first & (SET | LONG) != 0
    }

    /// The idle deadline, when an idle timeout is set. Asked only while a
    /// direction is armed, when no activity is pending (the arming took it
    /// in): `first_at` is then the idle start.
    #[inline]
    fn idle_deadline(&self) -> Option<Instant> {
        debug_assert!(self.first & ACTIVE == 0, "activity not yet timed");
        self.idle().map(|t| later(self.first_at, t))
    }

    fn armed(&self, dir: usize) -> bool {
        self.first & (ARMED << dir) != 0
    }

    fn disarm(&mut self, dir: usize) {
        self.first &= !((ARMED | OWN) << dir);
    }

    /// The end of armed `dir`'s own countdown, if it has one.
    #[inline]
    fn end(&self, dir: usize) -> Option<Instant> {
        if self.first & (OWN << dir) == 0 {
            return None;
        }
        match &self.more {
            Some(more) if Self::DIRS_IN_MORE => more.dirs[dir].end,
            _ => Some(self.first_at),
        }
    }

    /// Arms `dir` now, with its timeout (or none) of its own.
    #[inline]
    fn start(&mut self, dir: usize) {
        self.first = (self.first | ARMED << dir) & !(OWN << dir);
        if Self::DIRS_IN_MORE {
            if let Some(d) = self.more.as_deref_mut().map(|m| &mut m.dirs[dir]) {
                if let Some(t) = d.timeout {
                    d.end = Some(later(Instant::now(), t));
                    self.first |= OWN << dir;
                }
            }
        } else if let Some(t) = self.first() {
            self.first_at = later(Instant::now(), t);
            self.first |= OWN << dir;
        }
    }

    /// Times the activity pending since the last clock read at this one:
    /// its instant, after the activity's, is the idle start. Out of line:
    /// a wait after a ready operation needs it, not a wait after a wait.
    #[cold]
    #[inline(never)]
    fn time_activity(&mut self) {
        self.first_at = Instant::now();
        self.first &= !ACTIVE;
    }

    /// Whether `dir` has anything to time: a timeout of its own, or the
    /// idle timeout.
    fn timed(&self, dir: usize) -> bool {
        self.has_idle() || self.timeout(Which::Dir(dir)).is_some()
    }

    fn sleep_mut(&mut self, dir: usize) -> &mut Option<Sleep> {
        match dir {
            0 => &mut self.sleep,
            _ => &mut self.more_mut().sleep,
        }
    }

    /// An operation of `dir` completed (successfully when `ok`).
    ///
    /// With an idle timeout, a success is activity: the idle start must
    /// be an instant no earlier than the operation's (never early), and
    /// not much later. Only a clock read after the operation gives one
    /// (the cheap clocks trail the precise one by more than their
    /// resolution, and do not follow tokio's paused clock), so the
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
        let armed = self.first & ARMED_ANY;
        self.disarm(dir);
        if ok && self.has_idle() {
            if armed != 0 {
                self.first_at = Instant::now();
            } else {
                self.first |= ACTIVE;
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
            if dir == 0 || self.more.is_some() {
                *self.sleep_mut(dir) = None;
            }
        } else if self.armed(dir) {
            // Asked only when armed: no activity is pending then.
            if let Some(at) = self.target(dir) {
                if let Some(sleep) = self.sleep_mut(dir) {
                    sleep.reset(at);
                }
            }
        }
    }

    /// A sleep until `at` on the wrapper's wheel.
    fn new_sleep(&self, at: Instant) -> io::Result<Sleep> {
        match &self.more {
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
            if self.first & ACTIVE != 0 {
                self.time_activity();
            }
            self.start(dir);
            let at = self.target(dir).expect("a timeout is set");
            if let Some(sleep) = self.sleep_mut(dir) {
                // A sleep due no later than the new target is left where
                // it is: when it fires, the poll finds nothing due and
                // moves it on (see the invariants). One wake-up per
                // countdown instead of a move per wait.
                if sleep.deadline() > at {
                    sleep.reset(at);
                }
            } else {
                match self.new_sleep(at) {
                    Ok(sleep) => *self.sleep_mut(dir) = Some(sleep),
                    Err(e) => {
                        // Armed only with a sleep to poll.
                        self.disarm(dir);
                        return Err(e);
                    }
                }
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
            let sleep = self.sleep_mut(dir).as_mut().expect("armed");
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
                    self.first_at = now;
                }
                self.disarm(dir);
                coop::spend(cx);
                return Err(timed_out());
            }
            let at = self.target(dir).expect("armed with a timeout");
            match attempt {
                0 => self.sleep_mut(dir).as_mut().expect("armed").reset(at),
                1 => *self.sleep_mut(dir) = Some(self.new_sleep(at)?),
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
    use super::*;

    /// A stream with an idle timeout alone, or a reader or writer with its
    /// timeout, has one box of 64 bytes (an 80-byte block from the
    /// allocator), a `Sleep` of 32 included.
    #[test]
    fn the_common_box_is_small() {
        assert_eq!(size_of::<Option<Sleep>>(), 32);
        assert_eq!(size_of::<State<2>>(), 64);
        assert_eq!(size_of::<State<1>>(), 64);
    }

    /// Every timeout reads back as it was set, packed or too long for it.
    #[test]
    fn first_holds_any_timeout() {
        let mut s = Timeouts::<2>::new();
        for t in [
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::new(5, 7),
            Duration::from_nanos(NS_MASK),
            Duration::from_nanos(NS_MASK + 1),
            Duration::MAX,
        ] {
            s.set(Which::Idle, Some(t));
            assert_eq!(s.get(Which::Idle), Some(t));
            s.set(Which::Dir(1), Some(t));
            assert_eq!(s.get(Which::Dir(1)), Some(t));
        }
        s.set(Which::Idle, None);
        assert_eq!(s.get(Which::Idle), None);
    }
}
