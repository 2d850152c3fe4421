//! Time as the engine counts it: nanoseconds and ticks from an origin that
//! sits on tokio's own millisecond grid.
//!
//! # Invariants
//!
//! - A [`Deadline`] is `i64` nanoseconds from the origin. It is always finite: a
//!   deadline past [`HORIZON_NS`] (about 292 years after the origin) is
//!   clamped to it, so every timer fires eventually and tokio's paused clock
//!   can auto-advance to any of them.
//! - `origin` is an instant at which tokio's timer ticks, when one could be
//!   found (see `engine::tokio_reliance`). Tick `n` of a wheel then ends on
//!   tokio's own tick boundary, so a deadline is rounded up once, to the same
//!   millisecond at which tokio would fire it, and the driver's tokio sleep
//!   for a tick boundary is not rounded again.
//! - A deadline rounds **up** to its tick: [`Clock::tick_of`] never returns a
//!   tick that ends before the deadline.

use std::time::Duration;

use tokio::time::Instant;

use crate::engine::tokio_reliance::FAR_FUTURE;

/// The latest deadline the engine represents: a timer whose deadline lies
/// further away fires at this horizon instead.
pub(crate) const HORIZON_NS: i64 = i64::MAX;

/// The default tick, in nanoseconds.
const MS: u64 = 1_000_000;

/// The instant `d` after `from`, as tokio computes a deadline: a sum that
/// overflows an `Instant` lands 30 years after `from`. This is the crate's
/// one sum of an instant and a duration (every deadline, period, timeout
/// and setting goes through it), so none can overflow: should even the 30
/// years not fit, the result is the latest instant that does, found by
/// halving the step (never earlier than `from`).
#[inline]
pub(crate) fn later(from: Instant, d: Duration) -> Instant {
    match from.checked_add(d) {
        Some(t) => t,
        None => from
            .checked_add(FAR_FUTURE)
            .unwrap_or_else(|| saturating_later(from, FAR_FUTURE)),
    }
}

/// The latest instant an `Instant` holds within `d` after `from`, where
/// `from + d` overflows: each power of two of nanoseconds, largest first,
/// is added if it fits and the sum stays within `d`. Cold: only near the
/// end of what an `Instant` holds.
#[cold]
fn saturating_later(from: Instant, d: Duration) -> Instant {
    const NS: u128 = 1_000_000_000;
    let mut t = from;
    let mut left = d.as_nanos();
    for bit in (0..u128::BITS - left.leading_zeros()).rev() {
        let n = 1u128 << bit;
        if n > left {
            continue;
        }
        // `n` is at most `d`'s nanoseconds: its seconds fit a `u64`.
        let step = Duration::new((n / NS) as u64, (n % NS) as u32);
        if let Some(next) = t.checked_add(step) {
            t = next;
            left -= n;
        }
    }
    t
}

/// The instant `d` from now, as `tokio::time::sleep(d)` puts its deadline
/// (see [`later`]). Nothing is converted: [`Clock::deadline_of`] does that
/// when the deadline is needed, which for a timeout whose future completes
/// first is never.
#[inline]
pub(crate) fn instant_after(d: Duration) -> Instant {
    later(Instant::now(), d)
}

/// `d` in nanoseconds, if that fits an `i64`. This runs for every timer
/// made and every instant converted: one comparison, a multiplication and
/// an addition below 2^63 ns, which is what `d` nearly always is (checked
/// multiplications and additions cost several times that).
#[inline]
fn nanos(d: Duration) -> Option<i64> {
    /// The most whole seconds whose nanoseconds, plus any fraction of a
    /// second, still fit an `i64`.
    const MAX_SECS: u64 = (i64::MAX as u64 - 999_999_999) / 1_000_000_000;
    let secs = d.as_secs();
    if secs <= MAX_SECS {
        Some(secs as i64 * 1_000_000_000 + i64::from(d.subsec_nanos()))
    } else {
        i64::try_from(d.as_nanos()).ok()
    }
}

/// `ns / MS`, as the compiler computes a division by that constant: the
/// high half of a product with its reciprocal, shifted (exact for every
/// `u64`; a test checks it). Written out because `ns / MS` next to
/// `ns / tick_ns` under `if tick_ns == MS` is merged back into one `div`;
/// a multiplication is not.
fn millis_in(ns: u64) -> u64 {
    const RECIPROCAL: u128 = 4_835_703_278_458_516_699;
    ((u128::from(ns) * RECIPROCAL) >> 82) as u64
}

/// A timer's deadline: nanoseconds from its wheel's origin, always finite
/// (see the invariants). Timers hold deadlines; the ticks they stand for
/// are worked out by the engine alone (`engine::entry`, `engine::queue`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Deadline(i64);

impl Deadline {
    /// The wheel's origin; stands in for a deadline set later.
    pub(crate) const ORIGIN: Deadline = Deadline(0);

    /// `ns` nanoseconds from the origin (tests).
    #[cfg(test)]
    pub(crate) fn from_ns(ns: i64) -> Deadline {
        Deadline(ns)
    }
}

/// Whether a timer's deadline had been reached when it was set, as the
/// code that set it knows without another clock read (an `Interval`, which
/// reads the clock for its next tick anyway).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reached {
    Yes,
    Unknown,
}

impl Reached {
    /// `deadline`, with `now` read by the caller anyway.
    #[inline]
    pub(crate) fn by(deadline: Instant, now: Instant) -> Reached {
        if deadline <= now {
            Reached::Yes
        } else {
            Reached::Unknown
        }
    }
}

/// A wheel's clock: its origin and the length of its tick.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    origin: Instant,
    tick: Duration,
    tick_ns: u64,
    /// The last tick that ends at or before the horizon.
    max_tick: u64,
    /// Whether tokio's clock can be paused where the wheel runs: on a
    /// current-thread runtime, the only kind `tokio::time::pause` accepts.
    pausable: bool,
}

impl Clock {
    /// A clock with ticks of `tick` (at least 1 ns) counted from `origin`.
    /// Ticks longer than 2^62 ns are refused by the builder: at least two
    /// must end before the horizon.
    pub(crate) fn new(origin: Instant, tick: Duration) -> Clock {
        let tick_ns = u64::try_from(tick.as_nanos()).unwrap_or(u64::MAX).max(1);
        Clock {
            origin,
            tick,
            tick_ns,
            max_tick: HORIZON_NS as u64 / tick_ns,
            pausable: true,
        }
    }

    /// Notes the kind of runtime the wheel's driver runs on (see
    /// [`Clock::pausable`]). A clock is pausable until told otherwise.
    pub(crate) fn runs_on(&mut self, flavor: tokio::runtime::RuntimeFlavor) {
        self.pausable = flavor == tokio::runtime::RuntimeFlavor::CurrentThread;
    }

    /// Whether tokio's clock can be paused where the wheel runs. Only there
    /// does `is_elapsed` need the clock to agree with tokio: tokio's driver
    /// processes its timers whenever the runtime parks, and
    /// `tokio::time::advance` parks it, so a sleep's tick may have ended by
    /// tokio's timer before the wheel's driver has run. On a multi-thread
    /// runtime tokio answers from its driver's last pass, which the shard's
    /// processed tick stands in for: no clock read.
    pub(crate) fn pausable(&self) -> bool {
        self.pausable
    }

    pub(crate) fn tick(&self) -> Duration {
        self.tick
    }

    /// The deadline `t`: nanoseconds from the origin, clamped to
    /// [`HORIZON_NS`].
    #[inline]
    pub(crate) fn deadline_of(&self, t: Instant) -> Deadline {
        Deadline(self.ns_of(t))
    }

    #[inline]
    fn ns_of(&self, t: Instant) -> i64 {
        // One comparison and one subtraction of std's instants (tokio's
        // `>=` and `-` would compare twice).
        match t.into_std().checked_duration_since(self.origin.into_std()) {
            Some(d) => nanos(d).unwrap_or(HORIZON_NS),
            None => nanos(self.origin - t).map_or(i64::MIN + 1, |n| -n),
        }
    }

    /// The deadline `d` from now, as tokio computes it: a sum that overflows
    /// an `Instant` lands 30 years from now, as in `tokio::time::sleep`.
    #[inline]
    pub(crate) fn deadline_after(&self, d: Duration) -> Deadline {
        self.deadline_from(Instant::now(), d)
    }

    /// The deadline `d` after `now`: `deadline_of(later(now, d))`, with one
    /// conversion fewer in the usual case.
    #[inline]
    fn deadline_from(&self, now: Instant, d: Duration) -> Deadline {
        match nanos(d) {
            // The same sum in nanoseconds, with one `Instant` subtraction
            // instead of an addition and a subtraction. It saturates where
            // `deadline_of` clamps: at the horizon.
            Some(n) => Deadline(self.ns_of(now).saturating_add(n)),
            // Beyond 2^63 ns: past the horizon, or past what an `Instant`
            // holds; the rare case keeps tokio's exact rule.
            None => self.deadline_of(later(now, d)),
        }
    }

    /// The instant `ns` nanoseconds after the origin (saturating).
    pub(crate) fn instant_of_ns(&self, ns: u64) -> Instant {
        self.instant_of(Deadline(i64::try_from(ns).unwrap_or(HORIZON_NS)))
    }

    /// Now, as nanoseconds from the origin.
    #[inline]
    pub(crate) fn now_ns(&self) -> i64 {
        self.ns_of(Instant::now())
    }

    /// Whether `deadline` has been reached: a clock read.
    pub(crate) fn reached(&self, deadline: Deadline) -> bool {
        deadline.0 <= self.now_ns()
    }

    /// The instant of `deadline` (saturating).
    pub(crate) fn instant_of(&self, deadline: Deadline) -> Instant {
        let ns = deadline.0;
        let d = Duration::from_nanos(ns.unsigned_abs());
        let t = if ns >= 0 {
            self.origin.checked_add(d)
        } else {
            self.origin.checked_sub(d)
        };
        t.unwrap_or(self.origin)
    }

    /// The first tick whose end is at or after `deadline`: deadlines round
    /// up, never down.
    #[inline]
    pub(crate) fn tick_of(&self, deadline: Deadline) -> u64 {
        let ns = deadline.0;
        if ns <= 0 {
            0
        } else {
            // The clock stops at the horizon (`now_ns` saturates there): a
            // deadline in the last, partial tick before it is due at the
            // last tick the clock reaches.
            self.ticks_in(ns as u64 + (self.tick_ns - 1))
                .min(self.max_tick)
        }
    }
    /// Whole ticks in `ns`. This runs once or twice for every timer, and a
    /// 64-bit `div` is among the slowest integer instructions: the default
    /// 1 ms tick multiplies by the reciprocal instead (see [`millis_in`]).
    fn ticks_in(&self, ns: u64) -> u64 {
        if self.tick_ns == MS {
            millis_in(ns)
        } else {
            ns / self.tick_ns
        }
    }

    /// The last tick that has ended by now.
    #[inline]
    pub(crate) fn now_tick(&self) -> u64 {
        self.tick_at(Instant::now())
    }

    /// The last tick that has ended by `t`.
    #[inline]
    pub(crate) fn tick_at(&self, t: Instant) -> u64 {
        match self.ns_of(t) {
            n if n <= 0 => 0,
            n => self.ticks_in(n as u64),
        }
    }

    /// The end of `tick`, as a deadline (saturating at the horizon).
    pub(crate) fn deadline_of_tick(&self, tick: u64) -> Deadline {
        Deadline(i64::try_from(u128::from(tick) * u128::from(self.tick_ns)).unwrap_or(HORIZON_NS))
    }

    /// The instant at which `tick` ends (saturating at the horizon).
    pub(crate) fn instant_of_tick(&self, tick: u64) -> Instant {
        self.instant_of(self.deadline_of_tick(tick))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::tokio_reliance::paused_runtime;

    /// A timeout reads the clock when it is made and converts its deadline
    /// at its first pending poll (`deadline_of(later(now, d))`); a sleep
    /// converts at once (`deadline_from`). Both give the same deadline, the
    /// horizon's clamp and tokio's 30 years for an overflowing sum included.
    #[test]
    fn a_deadline_converted_later_is_the_same_deadline() {
        let origin = Instant::now();
        let clock = Clock::new(origin, Duration::from_millis(1));
        let durations = [
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::from_nanos(999_999),
            Duration::from_millis(1),
            Duration::from_secs(30),
            Duration::from_nanos(i64::MAX as u64 - 1),
            Duration::from_nanos(i64::MAX as u64),
            Duration::from_nanos(u64::MAX),
            FAR_FUTURE,
            Duration::from_secs(u64::MAX / 4),
            Duration::MAX,
        ];
        let offsets = [0, 1, 999_999, 1_000_000, 123_456_789_012];
        for ns in offsets {
            let step = Duration::from_nanos(ns);
            for now in [origin + step, origin.checked_sub(step).unwrap_or(origin)] {
                for d in durations {
                    assert_eq!(
                        clock.deadline_from(now, d),
                        clock.deadline_of(later(now, d)),
                        "now {ns} ns from the origin, d {d:?}"
                    );
                }
            }
        }
    }

    /// The fast sum in `nanos` is the exact count, up to and past the last
    /// duration an `i64` of nanoseconds holds.
    #[test]
    fn nanos_is_the_exact_count_while_it_fits() {
        let max = i64::MAX as u64;
        let mut ds = vec![Duration::ZERO, Duration::MAX, Duration::from_nanos(max)];
        for secs in [
            0,
            1,
            max / 1_000_000_000 - 1,
            max / 1_000_000_000,
            max / 1_000_000_000 + 1,
        ] {
            for sub in [0, 1, 854_775_807, 854_775_808, 999_999_999] {
                ds.push(Duration::new(secs, sub));
            }
        }
        for d in ds {
            assert_eq!(nanos(d), i64::try_from(d.as_nanos()).ok(), "{d:?}");
        }
    }

    #[test]
    fn millis_in_is_a_division_by_a_million() {
        let mut edges = vec![0, 1, MS - 1, MS, MS + 1, u64::MAX, u64::MAX - 1];
        for k in [1, 2, 3, 1_000, 1 << 20, u64::MAX / MS] {
            edges.extend([k * MS - 1, k * MS, k * MS + 1]);
        }
        for ns in edges {
            assert_eq!(millis_in(ns), ns / MS, "{ns}");
        }
        // xorshift64: a million values spread over the whole range.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..1_000_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            for ns in [x, x >> 20, x >> 40] {
                assert_eq!(millis_in(ns), ns / MS, "{ns}");
            }
        }
    }

    #[test]
    fn deadlines_round_up_to_their_tick() {
        let c = Clock::new(Instant::now(), Duration::from_millis(1));
        let at = Deadline::from_ns;
        assert_eq!(c.tick_of(at(-5)), 0);
        assert_eq!(c.tick_of(at(0)), 0);
        assert_eq!(c.tick_of(at(1)), 1);
        assert_eq!(c.tick_of(at(1_000_000)), 1);
        assert_eq!(c.tick_of(at(1_000_001)), 2);
        // The clock stops at the horizon: the last partial tick before it
        // is due at the last whole one.
        let last = HORIZON_NS as u64 / 1_000_000;
        assert_eq!(c.tick_of(at(HORIZON_NS - 1)), last);
        assert_eq!(c.tick_of(at(HORIZON_NS)), last);
        assert_eq!(c.tick_of(at(last as i64 * 1_000_000)), last);
    }

    /// The nanosecond sum in `deadline_after` is the `Instant` sum it
    /// stands for, on both sides of the origin and up to the horizon.
    #[test]
    fn a_deadline_after_is_now_plus_the_duration() {
        paused_runtime().block_on(async {
            let now = Instant::now();
            let secs = |s: u64| Duration::from_secs(s);
            for origin in [now - secs(3600), now, now + secs(7)] {
                let c = Clock::new(origin, Duration::from_millis(1));
                for d in [
                    Duration::ZERO,
                    Duration::from_nanos(1),
                    Duration::from_micros(1500),
                    secs(30),
                    secs(200 * 365 * 86_400),
                    Duration::from_nanos(i64::MAX as u64),
                ] {
                    assert_eq!(c.deadline_after(d), c.deadline_of(now + d), "{d:?}");
                }
                // Past 2^63 ns: the `Instant` sum, clamped at the horizon
                // when the origin is not after now.
                let beyond = Duration::from_nanos(i64::MAX as u64) + secs(1);
                assert_eq!(c.deadline_after(beyond), c.deadline_of(now + beyond));
                if origin <= now {
                    assert_eq!(c.deadline_after(beyond), Deadline(HORIZON_NS));
                }
            }
        });
    }

    /// Every sum of an instant and a duration lands where tokio's would,
    /// 30 years on when it overflows, and never panics nor goes backwards,
    /// even from the last instant there is.
    #[test]
    fn a_sum_that_overflows_lands_30_years_out() {
        let now = Instant::now();
        assert_eq!(later(now, Duration::MAX), now + FAR_FUTURE);
        assert_eq!(later(now, Duration::ZERO), now);
        assert_eq!(
            later(now, Duration::from_secs(7)),
            now + Duration::from_secs(7)
        );
        // An interval's deadline pushed on by 30 years at a time reaches
        // the end of what an `Instant` holds, and stays there.
        let mut t = now;
        for _ in 0..64 {
            let next = later(t, Duration::MAX);
            assert!(next >= t);
            t = later(next, Duration::MAX / 2);
        }
        let last = saturating_later(now, Duration::MAX);
        assert!(last > now + FAR_FUTURE);
        assert!(last.checked_add(Duration::from_nanos(1)).is_none());
        assert_eq!(later(last, Duration::MAX), last);
        assert_eq!(later(last, Duration::from_nanos(1)), last);
    }

    #[test]
    fn far_deadlines_are_clamped_not_lost() {
        let c = Clock::new(Instant::now(), Duration::from_millis(1));
        let far = c.deadline_after(Duration::MAX).0;
        let expect = c.deadline_after(FAR_FUTURE).0;
        assert!((far - expect).abs() < 1_000_000_000, "{far} vs {expect}");
        let t = Instant::now() + Duration::from_secs(400 * 365 * 86_400);
        assert_eq!(c.deadline_of(t), Deadline(HORIZON_NS));
        assert!(c.tick_of(Deadline(HORIZON_NS)) < u64::MAX);
    }
}
