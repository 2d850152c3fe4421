//! The countdowns of a wrapper, written once for [`TimeoutReader`],
//! [`TimeoutWriter`] and [`TimeoutStream`].
//!
//! A wrapper times one direction (a reader, a writer) or two (a stream);
//! a stream also has an idle deadline. Everything lives in one box, made
//! when the first timeout is set (or with the wrapper, when it is given a
//! [`Wheel`]): a wrapper with no timeout set holds one null pointer.
//!
//! # Invariants
//!
//! - A direction is *armed* from the poll that finds one of its operations
//!   pending, with a timeout to keep, until one of its operations
//!   completes: its sleep is then set to the earliest of its countdown's
//!   end and the idle deadline, as they were when it was last set.
//! - `countdown` is `Off` while not armed; armed, it is `Until` the end of
//!   the countdown started at the arming poll when a timeout is set, and
//!   `Idle` (the idle deadline alone) otherwise.
//! - A completed operation only disarms its direction (one store) and,
//!   with an idle timeout, reads the clock for the idle deadline: it
//!   neither cancels nor moves the sleep. The next arming moves that sleep
//!   to its new deadline, which is later than the old one unless a timeout
//!   was made shorter: a [`Sleep::reset`] to a later deadline, which takes
//!   no lock. A sleep left behind may still fire at its old deadline: the
//!   task it wakes polls, finds nothing due, and the sleep is moved on.
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

/// The earlier of two optional deadlines.
fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

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

/// What a wrapper with a timeout, or a wheel of its own, keeps.
#[derive(Debug)]
struct State<const N: usize> {
    /// The wheel the sleeps are made on: its own, or the default wheel of
    /// the runtime that polls the wrapper when a sleep is needed.
    wheel: WheelOrDefault,
    idle: Option<Idle>,
    dirs: [Direction; N],
}

/// An idle timeout: no operation completed successfully for `timeout`
/// since `since`.
#[derive(Debug, Clone, Copy)]
struct Idle {
    timeout: Duration,
    /// The last successful operation, the setting of the timeout, or the
    /// last time it fired, whichever came last.
    since: Instant,
}

impl Idle {
    fn deadline(&self) -> Instant {
        later(self.since, self.timeout)
    }
}

/// One timed direction.
#[derive(Debug, Default)]
struct Direction {
    timeout: Option<Duration>,
    /// Armed or not, and the end of the running countdown (see the
    /// invariants). Folding the flag into the deadline keeps the box that
    /// holds the directions 16 bytes smaller.
    countdown: Countdown,
    /// Made at the first arming; kept, and moved, from then on.
    sleep: Option<Sleep>,
}

/// Where a direction's countdown stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Countdown {
    /// Not armed.
    #[default]
    Off,
    /// Armed, with no timeout of its own: only the idle deadline.
    Idle,
    /// Armed, its countdown ending at this instant.
    Until(Instant),
}

impl Countdown {
    /// Armed now, with `timeout` (or none) of its own.
    fn start(timeout: Option<Duration>) -> Countdown {
        match timeout {
            Some(t) => Countdown::Until(later(Instant::now(), t)),
            None => Countdown::Idle,
        }
    }

    fn ends(self) -> Option<Instant> {
        match self {
            Countdown::Until(at) => Some(at),
            _ => None,
        }
    }
}

impl Direction {
    fn armed(&self) -> bool {
        self.countdown != Countdown::Off
    }

    fn disarm(&mut self) {
        self.countdown = Countdown::Off;
    }
}

impl<const N: usize> Timeouts<N> {
    /// No timeout, on the default wheel.
    pub(crate) const fn new() -> Timeouts<N> {
        Timeouts { state: None }
    }

    /// No timeout yet, on `wheel`.
    pub(crate) fn with_wheel(wheel: &Wheel) -> Timeouts<N> {
        let mut t = Timeouts::new();
        t.state_mut().wheel = WheelOrDefault::held(wheel.clone());
        t
    }

    fn state_mut(&mut self) -> &mut State<N> {
        self.state.get_or_insert_with(|| {
            Box::new(State {
                wheel: WheelOrDefault::current(),
                idle: None,
                dirs: std::array::from_fn(|_| Direction::default()),
            })
        })
    }

    /// The timeout `which`.
    pub(crate) fn get(&self, which: Which) -> Option<Duration> {
        let s = self.state.as_ref()?;
        match which {
            Which::Dir(dir) => s.dirs[dir].timeout,
            Which::Idle => s.idle.map(|i| i.timeout),
        }
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
        let d = &mut s.dirs[dir];
        d.timeout = timeout;
        if d.armed() {
            d.countdown = Countdown::start(timeout);
        }
        s.refresh(dir);
    }

    /// Sets the idle timeout; the idle time counts from now.
    fn set_idle_timeout(&mut self, timeout: Option<Duration>) {
        if timeout.is_none() && self.state.is_none() {
            return;
        }
        let s = self.state_mut();
        s.idle = timeout.map(|timeout| Idle {
            timeout,
            since: Instant::now(),
        });
        for dir in 0..N {
            s.refresh(dir);
        }
    }

    /// What a wrapper returns for an operation of direction `dir` that
    /// returned `r`: `r`, or a timeout error instead of `Pending`. An
    /// operation of no direction (`None`: one the wrapper does not time)
    /// returns `r`.
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
    /// An operation of `dir` completed (successfully when `ok`).
    ///
    /// With an idle timeout the clock is read here, for each success: the
    /// idle time must count from this operation's own instant. A count of
    /// operations, timed at the wrapper's next clock read (its next wait,
    /// or its sleep's firing), would never be early but would be late by
    /// however long the task ran in between: up to a whole idle period for
    /// a stream whose other half waits on another task. tests/io_idle.rs
    /// pins the exact instants, those of a `Sleep` reset after every read.
    #[inline]
    fn completed(&mut self, dir: usize, ok: bool) {
        let d = &mut self.dirs[dir];
        d.disarm();
        if ok {
            if let Some(idle) = &mut self.idle {
                idle.since = Instant::now();
            }
        }
    }

    /// The deadline `dir`'s sleep is for: the earliest of its countdown's
    /// end and the idle deadline.
    fn target(&self, dir: usize) -> Option<Instant> {
        earliest(
            self.dirs[dir].countdown.ends(),
            self.idle.map(|i| i.deadline()),
        )
    }

    /// After a timeout of `dir` changed: moves its sleep to its new
    /// target when armed, and lets the sleep go when `dir` has nothing left
    /// to time.
    fn refresh(&mut self, dir: usize) {
        let target = self.target(dir);
        let d = &mut self.dirs[dir];
        if d.timeout.is_none() && self.idle.is_none() {
            d.disarm();
            d.sleep = None;
        } else if let (true, Some(at), Some(sleep)) = (d.armed(), target, &mut d.sleep) {
            sleep.reset(at);
        }
    }

    /// An operation of `dir` is pending: arm `dir` if it is not, and poll
    /// its sleep. An error when a deadline has passed, or when no sleep
    /// can be had.
    #[inline(never)]
    fn poll_pending(&mut self, dir: usize, cx: &mut Context<'_>) -> io::Result<()> {
        if !self.dirs[dir].armed() {
            let d = &mut self.dirs[dir];
            if d.timeout.is_none() && self.idle.is_none() {
                return Ok(());
            }
            d.countdown = Countdown::start(d.timeout);
            let at = self.target(dir).expect("a timeout is set");
            let d = &mut self.dirs[dir];
            match &mut d.sleep {
                Some(sleep) => sleep.reset(at),
                None => match new_sleep(&self.wheel, at) {
                    Ok(sleep) => d.sleep = Some(sleep),
                    Err(e) => {
                        // Armed only with a sleep to poll.
                        d.disarm();
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
            let sleep = self.dirs[dir].sleep.as_mut().expect("armed");
            if sleep.poll_unbudgeted(cx).is_pending() {
                return Ok(());
            }
            let now = Instant::now();
            let ends_due = self.dirs[dir].countdown.ends().is_some_and(|e| e <= now);
            let idle_due = self.idle.is_some_and(|i| i.deadline() <= now);
            if ends_due || idle_due {
                if let Some(idle) = self.idle.as_mut().filter(|_| idle_due) {
                    // The idle time counts again from here: a caller that
                    // keeps the stream gets its next idle timeout a whole
                    // idle period later, not at once on every operation.
                    idle.since = now;
                }
                self.dirs[dir].disarm();
                coop::spend(cx);
                return Err(timed_out());
            }
            let at = self.target(dir).expect("armed with a timeout");
            let d = &mut self.dirs[dir];
            match attempt {
                0 => d.sleep.as_mut().expect("armed").reset(at),
                1 => d.sleep = Some(new_sleep(&self.wheel, at)?),
                _ => break,
            }
        }
        // Completed with nothing due three times, the last time a sleep
        // made anew: its wheel has shut down.
        self.dirs[dir].disarm();
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
