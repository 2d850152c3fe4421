//! What the engine relies on in tokio beyond its documented API: every such
//! behaviour is written here, or, where it shapes code that cannot move,
//! listed here with a pointer to that code. Each item names the test that
//! fails if a tokio release changes it. CI runs the whole suite against the
//! newest tokio the lockfile has and against the oldest the manifest allows
//! (`.ci/run`, "minimum tokio").
//!
//! 1. **The millisecond grid.** tokio's timer counts whole milliseconds from
//!    its runtime's start and rounds each deadline up to one; a sleep whose
//!    rounded deadline its driver has processed completes on its first poll,
//!    one after it does not. [`timer_of`] binary-searches that answer for
//!    the last processed boundary, which becomes a wheel's origin, so that a
//!    wheel's 1 ms ticks end where tokio's do and a deadline is rounded once,
//!    as tokio rounds it. Test: `the_boundary_found_is_a_tick_of_tokio`
//!    (here); `deadlines_round_once_off_the_grid` (tests/tokio_behaviour.rs).
//! 2. **A reset to a passed deadline completes at once** (the alt-timer
//!    probe). Under tokio's classic timer a `Sleep` reset to a processed
//!    deadline is ready on its next poll. tokio's alternative timer
//!    (`enable_alt_timer`, `tokio_unstable`) files its timers only when a
//!    worker parks, and panics when a reset makes a timer on a runtime that
//!    is shutting down; [`timer_of`] tells the two apart by that answer, and
//!    the driver then re-arms from its task only, not from inside tokio's
//!    timer (`engine::driver`'s `rearm_inline`). Tests:
//!    `the_classic_timer_fires_a_passed_deadline_at_once` (here);
//!    bench/tests/alt_timer.rs (run by CI under `--cfg tokio_unstable`).
//! 3. **A runtime that has shut down drops a spawned task without polling
//!    it**, and a live one polls a task before it drops it: [`is_closed`]
//!    learns from a probe task whether a wheel can still get a driver.
//!    Tests: `a_probe_task_tells_a_closed_runtime` (here);
//!    `built_on_a_runtime_that_has_shut_down` (tests/driver_guard.rs).
//! 4. **No timer is a panic.** Making a tokio `Sleep` on a runtime built
//!    without `enable_time` panics; [`timer_of`] catches it and reports no
//!    timer (`engine::registry` remembers the answer per runtime, since the
//!    panic hook prints every such panic). Tests:
//!    `a_runtime_without_a_timer_is_told_not_a_panic` (here);
//!    `a_runtime_without_its_timer_is_an_error_not_a_silent_wheel`
//!    (tests/bad_input.rs).
//! 5. **A sleep whose timer has shut down.** A reset then completes the
//!    sleep at once, whatever its deadline, and polling it panics; under
//!    the alternative timer the reset itself panics. [`reset`] turns all
//!    three into [`Reset::Dead`], for the driver's and the publisher's
//!    sleeps. Test: `a_reset_after_the_timer_shut_down_is_dead` (here).
//! 6. **A deadline that overflows an `Instant` lands 30 years out**, as
//!    `tokio::time::sleep(Duration::MAX)` puts it ([`FAR_FUTURE`]; the sum
//!    itself is `engine::clock::later`). Test:
//!    `an_overflowing_sleep_lands_where_tokio_puts_it` (here). tokio's
//!    `sleep` and `interval` go further and cap every duration there, an
//!    overflow or not ([`sleep_duration`]); its `timeout` does not. Test:
//!    `long_durations_are_capped_where_tokio_caps_them` in
//!    tests/tokio_behaviour.rs.
//! 7. **`advance` runs the timer's wakers before it returns.** tokio's driver
//!    processes its timers whenever the runtime parks and wakes their
//!    wakers there; the paused clock's `advance` parks it. The driver's
//!    alarm runs its pass from that wake-up (`engine::driver`), so a wheel's
//!    timers are woken in the same step as tokio's, and a sleep first
//!    polled after an `advance` past its deadline is ready at once, which
//!    is why a timer's first poll reads the clock where the clock can pause
//!    (`Clock::pausable`), unless its tick is at or after the one the
//!    driver's alarm is set for: tokio has not passed that one, or the
//!    alarm would have fired and its pass moved the plan on
//!    (`Core::wakes_by`). Tests: `advance_fires_a_sleep_first_polled_after_it`
//!    (here); `a_sleep_is_woken_when_advance_returns` and the rest of section
//!    1 of tests/tokio_behaviour.rs;
//!    `first_polled_after_advance_past_the_deadline_is_ready_at_once`
//!    (tests/timeout.rs). Running inside tokio's timer, the
//!    alarm catches its own panics rather than unwind into tokio, and a
//!    reset there may wake the alarm from inside the reset (the pass only
//!    `try_lock`s): the driver tolerates that rather than relies on it.
//! 8. **tokio's timers spend the cooperative budget** before they look at
//!    their deadline, keep the unit when they complete and give it back when
//!    they stay pending; `crate::coop` spends it alike. Tests: the
//!    `*_spends_the_budget_as_tokios_does` tests of tests/coop_budget.rs.
//! 9. **tokio before 1.54.0 corrupts its wheel** when a deadline lands in a
//!    wrapped top-level slot (tokio#8334): a reset to the past and then to
//!    the far future trips `Level::remove_entry` and aborts the process. The
//!    manifest's minimum is 1.54 for it (see Cargo.toml). Test:
//!    `reset_to_the_past_and_to_never` (tests/bad_input.rs), which CI's
//!    minimum-tokio step runs.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::{pin, Pin};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::time::{Instant, Sleep};

/// How far tokio puts a deadline that overflows an `Instant`
/// (`tokio::time::sleep(Duration::MAX)`): 30 years from now (item 6).
pub(crate) const FAR_FUTURE: Duration = Duration::from_secs(86_400 * 365 * 30);

/// The duration a sleep of `d`, or an interval of period `d`, takes, as
/// tokio's `sleep`, `interval` and `Interval::reset_after` take it: capped
/// at [`FAR_FUTURE`] whether or not the sum would overflow (a timeout's
/// duration tokio does not cap). Test:
/// `tests/tokio_behaviour.rs::long_durations_are_capped_where_tokio_caps_them`.
pub(crate) fn sleep_duration(d: Duration) -> Duration {
    d.min(FAR_FUTURE)
}

/// What a wheel learns of its runtime's tokio timer when it is built.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TokioTimer {
    /// An instant at which tokio's timer ticks: the latest millisecond
    /// boundary its driver has processed, or `None` when the search cannot
    /// tell (tokio's clock was advanced from another thread meanwhile, the
    /// timer files its timers later, or the runtime has shut down).
    pub(crate) boundary: Option<Instant>,
    /// Whether a sleep reset to a deadline its driver has processed
    /// completes on its next poll, as with tokio's classic timer (item 2).
    pub(crate) fires_at_once: bool,
}

/// What the current runtime's tokio timer is like (items 1 to 4); `None`
/// when the runtime was built without its timer. `runtime` is the current
/// runtime's handle.
pub(crate) fn timer_of(runtime: &tokio::runtime::Handle) -> Option<TokioTimer> {
    // A runtime that has shut down has no timer to ask (and its driver
    // refuses the wheel's task: the wheel is born shut down).
    if is_closed(runtime) {
        return Some(classic(None));
    }
    catch_unwind(probe).ok()
}

/// A timer that completes a reset to a passed deadline at once (item 2),
/// whose ticks end at `boundary`, when known.
fn classic(boundary: Option<Instant>) -> TokioTimer {
    TokioTimer {
        boundary,
        fires_at_once: true,
    }
}

/// Asks tokio's timer where its ticks fall, and how it takes a reset.
///
/// Every deadline at or before the last processed boundary completes at
/// once and none after it does, so a binary search on "completes at once"
/// finds that boundary to the nanosecond. It costs about forty polls of one
/// tokio `Sleep`, once per wheel. A timer under which no deadline completes
/// at once, not even one from before the runtime started, files its timers
/// later.
///
/// # Panics
///
/// Outside a tokio runtime, or in one built without `enable_time`.
fn probe() -> TokioTimer {
    let mut probe = pin!(tokio::time::sleep_until(Instant::now()));
    // The searches poll one sleep many times in a row: without this,
    // tokio's cooperative budget would answer `Pending` for it.
    let search = pin!(tokio::task::unconstrained(std::future::poll_fn(
        move |_| Poll::Ready(search_boundary(probe.as_mut()))
    )));
    match search.poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(found) => found,
        Poll::Pending => classic(None),
    }
}

fn search_boundary(mut probe: Pin<&mut Sleep>) -> TokioTimer {
    let mut cx = Context::from_waker(Waker::noop());
    let mut fires = |t: Instant| {
        probe.as_mut().reset(t);
        probe.as_mut().poll(&mut cx).is_ready()
    };
    let now = Instant::now();
    // Nothing after now has elapsed.
    let mut hi = now.checked_add(Duration::from_nanos(1)).unwrap_or(now);
    if fires(hi) {
        return classic(None);
    }
    // Something before now has been: tokio's start at the latest.
    let mut back = Duration::from_millis(1);
    let mut lo = loop {
        let Some(t) = now.checked_sub(back) else {
            // Not even the earliest instant there is completes at once.
            return TokioTimer {
                boundary: None,
                fires_at_once: false,
            };
        };
        if fires(t) {
            break t;
        }
        hi = t;
        let Some(b) = back.checked_mul(2) else {
            return classic(None);
        };
        back = b;
    };
    while hi - lo > Duration::from_nanos(1) {
        let mid = lo + (hi - lo) / 2;
        if fires(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // `lo` completes and one nanosecond later does not, in two polls in a
    // row: a boundary lies between them, so `lo` is one.
    classic((fires(lo) && !fires(hi)).then_some(lo))
}

/// Whether `handle`'s runtime has shut down: it drops a task spawned on it
/// without ever polling it. A live runtime polls a task before it drops it
/// (item 3).
fn is_closed(handle: &tokio::runtime::Handle) -> bool {
    use std::sync::atomic::{AtomicU8, Ordering};
    const POLLED: u8 = 1;
    const DROPPED: u8 = 2;
    struct OnDrop(std::sync::Arc<AtomicU8>);
    impl Drop for OnDrop {
        fn drop(&mut self) {
            self.0.fetch_or(DROPPED, Ordering::AcqRel);
        }
    }
    let seen = std::sync::Arc::new(AtomicU8::new(0));
    let guard = OnDrop(seen.clone());
    drop(handle.spawn(async move {
        guard.0.fetch_or(POLLED, Ordering::AcqRel);
    }));
    seen.load(Ordering::Acquire) == DROPPED
}

/// Where a tokio `Sleep` stands after [`reset`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reset {
    /// Waiting for its deadline: poll it to register a waker.
    Armed,
    /// Its deadline has passed already: it completed at once.
    Passed,
    /// tokio's timer has shut down: no deadline will ever fire, and the
    /// sleep must not be polled (item 5).
    Dead,
}

/// Resets `sleep` to `at`, and says where that left it (item 5). Never
/// panics, and never polls the sleep.
pub(crate) fn reset(mut sleep: Pin<&mut Sleep>, at: Instant) -> Reset {
    // tokio's classic timer never panics on a reset; its alternative
    // timer makes a new timer for it, and panics when the runtime is
    // shutting down.
    if catch_unwind(AssertUnwindSafe(|| sleep.as_mut().reset(at))).is_err() {
        return Reset::Dead;
    }
    // A reset completes the sleep at once when its deadline has passed,
    // and also when its timer has shut down, whatever the deadline.
    if !sleep.is_elapsed() {
        Reset::Armed
    } else if Instant::now() >= at {
        Reset::Passed
    } else {
        Reset::Dead
    }
}

/// A current-thread runtime on tokio's paused clock, for the engine's tests.
#[cfg(test)]
pub(crate) fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn noop() -> Context<'static> {
        Context::from_waker(Waker::noop())
    }

    /// Item 1.
    #[test]
    fn the_boundary_found_is_a_tick_of_tokio() {
        paused_runtime().block_on(async {
            let start = Instant::now();
            // Move the clock off tokio's millisecond grid and let tokio's
            // driver process: its last tick is then the 2 ms boundary.
            tokio::time::advance(Duration::from_micros(2_400)).await;
            let timer = timer_of(&tokio::runtime::Handle::current()).expect("a timer");
            assert_eq!(
                timer.boundary.expect("a boundary") - start,
                Duration::from_millis(2)
            );
        });
    }

    /// Item 2: the classic timer, paused or not, on either kind of runtime.
    #[test]
    fn the_classic_timer_fires_a_passed_deadline_at_once() {
        let multi = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_time()
            .build()
            .unwrap();
        let current = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        for rt in [paused_runtime(), current, multi] {
            rt.block_on(async {
                let timer = timer_of(&tokio::runtime::Handle::current()).expect("a timer");
                assert!(timer.fires_at_once);
                let mut sleep = pin!(tokio::time::sleep(Duration::from_secs(60)));
                assert!(sleep.as_mut().poll(&mut noop()).is_pending());
                let passed = Instant::now() - Duration::from_millis(5);
                assert_eq!(reset(sleep.as_mut(), passed), Reset::Passed);
                assert!(sleep.as_mut().poll(&mut noop()).is_ready());
                let ahead = Instant::now() + Duration::from_secs(60);
                assert_eq!(reset(sleep.as_mut(), ahead), Reset::Armed);
                assert!(sleep.as_mut().poll(&mut noop()).is_pending());
            });
        }
    }

    /// Item 3.
    #[test]
    fn a_probe_task_tells_a_closed_runtime() {
        let rt = paused_runtime();
        let handle = rt.handle().clone();
        assert!(!is_closed(&handle));
        rt.block_on(async { assert!(!is_closed(&tokio::runtime::Handle::current())) });
        drop(rt);
        assert!(is_closed(&handle));
        // Told without asking the timer, which is gone.
        let timer = timer_of(&handle).expect("a closed runtime is not one without a timer");
        assert!(timer.boundary.is_none() && timer.fires_at_once);
    }

    /// Item 4.
    #[test]
    fn a_runtime_without_a_timer_is_told_not_a_panic() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async { assert!(timer_of(&tokio::runtime::Handle::current()).is_none()) });
    }

    /// Item 5: the sleep outlives its runtime, whose timer shuts down.
    #[test]
    fn a_reset_after_the_timer_shut_down_is_dead() {
        let rt = paused_runtime();
        let mut sleep = {
            let _in = rt.enter();
            Box::pin(tokio::time::sleep(Duration::from_secs(60)))
        };
        rt.block_on(async { assert!(sleep.as_mut().poll(&mut noop()).is_pending()) });
        drop(rt);
        let ahead = Instant::now() + Duration::from_secs(60);
        assert_eq!(reset(sleep.as_mut(), ahead), Reset::Dead);
        // Why the sleep must not be polled then.
        let polled = catch_unwind(AssertUnwindSafe(|| sleep.as_mut().poll(&mut noop())));
        assert!(polled.is_err(), "tokio polls a sleep of a dead timer");
    }

    /// Item 6.
    #[test]
    fn an_overflowing_sleep_lands_where_tokio_puts_it() {
        paused_runtime().block_on(async {
            let now = Instant::now();
            assert_eq!(
                tokio::time::sleep(Duration::MAX).deadline(),
                now + FAR_FUTURE
            );
        });
    }

    /// Item 7: tokio's sleep, never polled before the clock passed its
    /// deadline, is ready on its first poll.
    #[test]
    fn advance_fires_a_sleep_first_polled_after_it() {
        paused_runtime().block_on(async {
            let mut sleep = pin!(tokio::time::sleep(Duration::from_micros(1_500)));
            tokio::time::advance(Duration::from_millis(2)).await;
            assert!(sleep.as_mut().poll(&mut noop()).is_ready());
        });
    }
}
