//! Zero and past deadlines complete on their first poll, without a
//! registration: on the real clock, on a multi-thread runtime, with a coarse
//! tick, and on the paused clock off a millisecond boundary. Each check is
//! about readiness at the first poll, so it holds whatever the scheduling.

use std::future::{pending, Future};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use hashwheel::{Builder, Wheel};
use tokio::time::Instant;

const COARSE: Duration = Duration::from_millis(100);

/// One poll with a waker that does nothing.
fn poll<F: Future + Unpin>(f: &mut F) -> Poll<F::Output> {
    Pin::new(f).poll(&mut Context::from_waker(Waker::noop()))
}

fn ready<F: Future + Unpin>(what: &str, mut f: F) {
    assert!(poll(&mut f).is_ready(), "{what}: pending on its first poll");
}

/// Every timer made with a zero or past deadline on `wheel` (the current
/// runtime's default wheel when `default`) is ready at its first poll, and
/// none registers a timer.
fn zero_and_past_are_ready(wheel: &Wheel, default: bool) {
    let past = Instant::now() - Duration::from_millis(1);
    let registered_before = wheel.metrics().registered_count();
    let now = Instant::now();
    ready("sleep(ZERO)", wheel.sleep(Duration::ZERO));
    ready("sleep_until(now)", wheel.sleep_until(now));
    ready("sleep_until(past)", wheel.sleep_until(past));
    ready(
        "timeout(ZERO)",
        wheel.timeout(Duration::ZERO, pending::<()>()),
    );
    ready("timeout_at(past)", wheel.timeout_at(past, pending::<()>()));
    ready(
        "lazy_timeout(ZERO)",
        wheel.lazy_timeout(Duration::ZERO, pending::<()>()),
    );
    ready("delay(ZERO)", wheel.delay(Duration::ZERO));
    ready("delay_at(past)", wheel.delay_at(past));
    assert!(wheel.spawn_after(Duration::ZERO, async {}).is_expired());
    assert!(wheel.spawn_at(past, async {}).is_expired());
    let mut interval = wheel.interval(Duration::from_secs(3600));
    let mut cx = Context::from_waker(Waker::noop());
    assert!(interval.poll_tick(&mut cx).is_ready(), "first tick");
    assert!(interval.poll_tick(&mut cx).is_pending());
    interval.reset_immediately();
    assert!(
        interval.poll_tick(&mut cx).is_ready(),
        "after reset_immediately"
    );
    let mut interval = wheel.interval_at(past, Duration::from_secs(3600));
    assert!(interval.poll_tick(&mut cx).is_ready(), "interval_at(past)");
    if default {
        ready("free sleep(ZERO)", hashwheel::sleep(Duration::ZERO));
        ready("free sleep_until(past)", hashwheel::sleep_until(past));
        ready(
            "free timeout(ZERO)",
            hashwheel::timeout(Duration::ZERO, pending::<()>()),
        );
        ready(
            "free timeout_at(past)",
            hashwheel::timeout_at(past, pending::<()>()),
        );
        let lazy = hashwheel::lazy_timeout(Duration::ZERO, pending::<()>());
        ready("free lazy_timeout(ZERO)", lazy);
        ready("free delay(ZERO)", hashwheel::delay(Duration::ZERO));
        assert!(hashwheel::spawn_after(Duration::ZERO, async {}).is_expired());
        let mut interval = hashwheel::interval(Duration::from_secs(3600));
        assert!(interval.poll_tick(&mut cx).is_ready(), "free interval");
    }
    let registered = wheel.metrics().registered_count();
    // The interval's pending second tick alone.
    assert_eq!(registered, registered_before + 1, "a timer registered");
}

/// A deadline ahead of the clock is never ready early, whatever the tick.
fn ahead_is_pending(wheel: &Wheel) {
    let mut sleep = wheel.sleep(Duration::from_secs(3600));
    assert!(poll(&mut sleep).is_pending());
    let mut until = wheel.sleep_until(Instant::now() + Duration::from_secs(3600));
    assert!(poll(&mut until).is_pending());
    let mut delay = wheel.delay_at(Instant::now() + Duration::from_secs(3600));
    assert!(poll(&mut delay).is_pending());
}

/// The runtime's default wheel with a 100 ms tick, checked at several
/// points of its tick.
async fn coarse_rounds() {
    let wheel = Builder::new().tick(COARSE).build_default().unwrap();
    for _ in 0..5 {
        zero_and_past_are_ready(&wheel, true);
        ahead_is_pending(&wheel);
        tokio::time::sleep(Duration::from_millis(23)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_thread_real_clock_coarse_tick() {
    coarse_rounds().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_thread_real_clock_default_tick() {
    zero_and_past_are_ready(&Wheel::current(), true);
    ahead_is_pending(&Wheel::current());
}

#[tokio::test(flavor = "current_thread")]
async fn current_thread_real_clock_coarse_tick() {
    coarse_rounds().await;
}

/// The paused clock half a millisecond past a boundary: tokio's own
/// `sleep(ZERO)` would wait for the next one.
#[tokio::test(start_paused = true)]
async fn paused_clock_off_a_millisecond_boundary() {
    tokio::time::advance(Duration::from_micros(500)).await;
    zero_and_past_are_ready(&Wheel::current(), true);
    ahead_is_pending(&Wheel::current());
    let wheel = Builder::new().tick(COARSE).build().unwrap();
    tokio::time::advance(Duration::from_millis(30)).await;
    zero_and_past_are_ready(&wheel, false);
    ahead_is_pending(&wheel);
}

/// A deadline reached inside a coarse tick, by the paused clock: ready at
/// the first poll, not at the end of the tick, and not a nanosecond before
/// the deadline.
#[tokio::test(start_paused = true)]
async fn a_deadline_inside_a_coarse_tick_completes_when_reached() {
    let wheel = Builder::new().tick(COARSE).build().unwrap();
    let at = Instant::now() + Duration::from_millis(30);
    let mut sleep = wheel.sleep_until(at);
    let mut delay = wheel.delay_at(at);
    tokio::time::advance(Duration::from_millis(30) - Duration::from_nanos(1)).await;
    assert!(poll(&mut sleep).is_pending(), "early");
    assert!(poll(&mut delay).is_pending(), "early");
    drop((sleep, delay));
    tokio::time::advance(Duration::from_nanos(1)).await;
    ready("sleep_until(reached)", wheel.sleep_until(at));
    ready("delay_at(reached)", wheel.delay_at(at));
}
