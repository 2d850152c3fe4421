//! `More`: a wrapper's timeouts, deadlines and sleeps, each in a field of
//! its own, for what the box of [`super::State`] cannot hold (see the
//! invariants there).

use std::io;
use std::time::Duration;

use tokio::time::Instant;

use crate::engine::clock::later;
use crate::sleep::Sleep;
use crate::wheel_or_default::WheelOrDefault;

/// A wrapper's timeouts, deadlines and sleeps, each in a field of its own.
#[derive(Debug)]
pub(super) struct More<const N: usize> {
    /// The wheel the sleeps are made on: its own, or the default wheel of
    /// the runtime that polls the wrapper when a sleep is needed.
    pub(super) wheel: WheelOrDefault,
    pub(super) idle: Option<Duration>,
    /// The idle deadline, while `idle` is set.
    pub(super) idle_due: Option<Instant>,
    pub(super) dirs: [Dir; N],
}

/// A direction of a wrapper with `More`.
#[derive(Debug, Default)]
pub(super) struct Dir {
    pub(super) timeout: Option<Duration>,
    /// The end of its countdown while armed, if it has a timeout.
    pub(super) end: Option<Instant>,
    pub(super) sleep: Option<Sleep>,
}

impl<const N: usize> More<N> {
    /// No timeout, on the default wheel.
    pub(super) fn new() -> More<N> {
        More {
            wheel: WheelOrDefault::current(),
            idle: None,
            idle_due: None,
            dirs: std::array::from_fn(|_| Dir::default()),
        }
    }

    /// Arms `dir` (see [`State::arm`](super::State::arm)): its countdown ends its timeout
    /// from now.
    pub(super) fn arm(&mut self, dir: usize) -> io::Result<()> {
        let now = Instant::now();
        self.dirs[dir].end = self.dirs[dir].timeout.map(|t| later(now, t));
        match self.target(dir) {
            // Due at once: no timer, the poll fails.
            Some(at) if at <= now => {
                self.dirs[dir].sleep = None;
                Ok(())
            }
            _ => self.aim(dir, false),
        }
    }

    /// The earliest of armed `dir`'s countdown end and the idle deadline.
    fn target(&self, dir: usize) -> Option<Instant> {
        match (self.dirs[dir].end, self.idle_due) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Moves armed `dir`'s sleep to its target when it is due later (or,
    /// with `again`, in any case), or makes it there if it has none.
    pub(super) fn aim(&mut self, dir: usize, again: bool) -> io::Result<()> {
        let Some(at) = self.target(dir) else {
            return Ok(());
        };
        match &mut self.dirs[dir].sleep {
            Some(sleep) => {
                if again || sleep.deadline() > at {
                    sleep.reset(at);
                }
            }
            None => self.dirs[dir].sleep = Some(self.wheel.try_sleep_until(at)?),
        }
        Ok(())
    }
}
