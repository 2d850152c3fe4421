//! What `Wheel::metrics` shows of a wheel's health, with no feature: the
//! timers registered and refused, and the driver's lag distribution.

use std::time::Duration;

use hashwheel::{Metrics, Wheel};
use tokio::time::Instant;
use tokio_test::{assert_pending, assert_ready, task};

mod common;
use common::{advance, late_by, ms, settle};

fn counts(m: &Metrics) -> (u64, usize, u64, u64) {
    (
        m.registered_count(),
        m.num_pending(),
        m.fired_count(),
        m.cancelled_count(),
    )
}

/// Every registration counts once, whatever becomes of the timer; a timer
/// that never reaches the wheel does not count.
#[tokio::test(start_paused = true)]
async fn registered_counts_each_timer_the_wheel_took() {
    let wheel = Wheel::builder().shards(2).build().unwrap();

    // Never polled, and a timeout whose future is ready at once: no entry.
    drop(wheel.sleep(ms(5)));
    assert_eq!(wheel.timeout(ms(5), async { 1 }).await, Ok(1));
    assert_eq!(counts(&wheel.metrics()), (0, 0, 0, 0));

    // Fired.
    wheel.sleep(ms(5)).await;
    // Cancelled: dropped while pending.
    let mut dropped = task::spawn(wheel.sleep(ms(50)));
    assert_pending!(dropped.poll());
    drop(dropped);
    // Moved later and earlier while pending: the same registration.
    let mut moved = task::spawn(wheel.sleep(ms(50)));
    assert_pending!(moved.poll());
    moved.reset(Instant::now() + ms(80));
    moved.reset(Instant::now() + ms(20));
    assert_pending!(moved.poll());
    assert_eq!(counts(&wheel.metrics()), (3, 1, 1, 1));

    // A delay cancelled through its handle.
    let delay = wheel.delay(ms(30));
    let handle = delay.handle();
    let mut delay = task::spawn(delay);
    assert_pending!(delay.poll());
    assert!(handle.cancel());
    assert!(assert_ready!(delay.poll()).unwrap_err().is_cancelled());
    assert_eq!(counts(&wheel.metrics()), (4, 1, 1, 2));

    // The moved sleep fires; one more is pending when the wheel shuts
    // down: still registered, neither fired nor cancelled.
    advance(ms(20)).await;
    assert_ready!(moved.poll());
    let mut left = task::spawn(wheel.sleep(ms(500)));
    assert_pending!(left.poll());
    assert_eq!(counts(&wheel.metrics()), (5, 1, 2, 2));
    assert_eq!(wheel.shutdown(), 1);
    assert_ready!(left.poll());
    let m = wheel.metrics();
    assert_eq!(counts(&m), (5, 0, 2, 2));
    assert_eq!(
        m.registered_count(),
        m.fired_count() + m.cancelled_count() + 1
    );
}

/// A sleep whose deadline moves back after its tick was processed
/// registers again.
#[tokio::test(start_paused = true)]
async fn a_reset_after_firing_registers_again() {
    let wheel = Wheel::new();
    let mut sleep = task::spawn(wheel.sleep(ms(5)));
    assert_pending!(sleep.poll());
    advance(ms(5)).await;
    assert_ready!(sleep.poll());
    sleep.reset(Instant::now() + ms(5));
    assert_pending!(sleep.poll());
    let m = wheel.metrics();
    assert_eq!(counts(&m), (2, 1, 1, 0));
}

/// Every refusal at `max_timers` counts, through a `try_` constructor, a
/// plain one that panics, or a free function on a bounded default wheel.
#[tokio::test(start_paused = true)]
async fn rejected_counts_each_refusal_at_max_pending() {
    let wheel = Wheel::builder().max_timers(2).build().unwrap();
    let a = wheel.sleep(ms(5));
    let b = wheel.delay(ms(5));
    assert_eq!(wheel.metrics().refused_count(), 0);
    assert!(wheel.try_sleep(ms(5)).unwrap_err().is_at_capacity());
    assert!(matches!(wheel.try_timeout(ms(5), async {}), Err(e) if e.is_at_capacity()));
    let w = wheel.clone();
    let panicked = std::panic::catch_unwind(move || drop(w.delay(ms(5))));
    assert!(panicked.is_err());
    let m = wheel.metrics();
    assert_eq!(m.refused_count(), 3);
    // Refused timers were never registered.
    assert_eq!(m.registered_count(), 0);
    drop((a, b));
    assert!(wheel.try_sleep(ms(5)).is_ok());
    assert_eq!(wheel.metrics().refused_count(), 3);

    let default = Wheel::builder().max_timers(1).build_default().unwrap();
    let held = hashwheel::sleep(ms(5));
    let refused = std::panic::catch_unwind(|| drop(hashwheel::sleep(ms(5))));
    assert!(refused.is_err());
    assert_eq!(default.metrics().refused_count(), 1);
    drop(held);
}

fn bucket_of(m: &Metrics, lag: Duration) -> usize {
    (0..m.driver_lag_histogram_num_buckets())
        .find(|&i| m.driver_lag_histogram_bucket_range(i).contains(&lag))
        .unwrap()
}

/// Each pass the driver runs for a tick with work adds its lag to the
/// histogram: on a paused clock, no lag when the clock stops at each tick,
/// and the overshoot when `advance` jumps past one.
#[tokio::test(start_paused = true)]
async fn the_lag_histogram_counts_each_pass_by_its_lag() {
    let wheel = Wheel::new();
    let m = wheel.metrics();
    assert_eq!(m.driver_lag_histogram_num_buckets(), 32);
    assert!((0..32).all(|i| m.driver_lag_histogram_bucket_count(i) == 0));
    assert_eq!(m.driver_lag_quantile(0.5), None);

    // Auto-advance stops at each tick: three passes on time.
    for d in [5, 7, 9] {
        wheel.sleep(ms(d)).await;
    }
    let m = wheel.metrics();
    assert_eq!(m.driver_lag_histogram_bucket_count(0), 3);
    assert_eq!(m.driver_lag_quantile(1.0), Some(Duration::ZERO));

    // Two passes late: by 3 ms and by 250 ms. (Once the driver has armed
    // tokio's timer for the sleep: the lag is measured from that plan.)
    late_by(&wheel, ms(2), ms(5)).await;
    late_by(&wheel, ms(10), ms(260)).await;
    settle().await;
    let m = wheel.metrics();
    assert_eq!(m.max_driver_lag(), ms(250));
    let total: u64 = (0..32)
        .map(|i| m.driver_lag_histogram_bucket_count(i))
        .sum();
    assert_eq!(total, 5);
    assert_eq!(m.driver_lag_histogram_bucket_count(bucket_of(&m, ms(3))), 1);
    assert_eq!(
        m.driver_lag_histogram_bucket_count(bucket_of(&m, ms(250))),
        1
    );
    // 3 ms is in [2.048, 4.096) ms; the median pass was on time.
    assert_eq!(
        m.driver_lag_quantile(0.8),
        Some(Duration::from_micros(4096))
    );
    assert_eq!(m.driver_lag_quantile(0.5), Some(Duration::from_micros(1)));
    assert_eq!(m.driver_lag_quantile(1.0), Some(ms(250)));
}

#[test]
#[should_panic(expected = "lag histogram bucket 32 out of range")]
fn a_bucket_past_the_last_panics() {
    Metrics::default().driver_lag_histogram_bucket_count(32);
}

#[test]
#[should_panic(expected = "quantile 1.5 is not within 0..=1")]
fn a_quantile_past_one_panics() {
    Metrics::default().driver_lag_quantile(1.5);
}

/// A pass the driver's task runs, not tokio's timer, measures its lag too:
/// its first pass (the runtime did not run it before the clock moved), one
/// after an idle period, and one for a new earliest timer. On the paused
/// clock each is exactly how far the clock jumped past the timer's tick.
#[tokio::test(start_paused = true)]
async fn a_late_pass_of_the_drivers_task_counts_its_lag() {
    // Before the driver has ever run.
    let wheel = Wheel::new();
    let mut first = task::spawn(wheel.sleep(ms(10)));
    assert_pending!(first.poll());
    advance(ms(300)).await;
    assert_ready!(first.poll());
    assert_eq!(wheel.metrics().max_driver_lag(), ms(290));

    // After an idle period: nothing pending for five seconds.
    advance(Duration::from_secs(5)).await;
    settle().await;
    let mut idle = task::spawn(wheel.sleep(ms(10)));
    assert_pending!(idle.poll());
    advance(ms(400)).await;
    assert_ready!(idle.poll());
    assert_eq!(wheel.metrics().max_driver_lag(), ms(390));

    // A new earliest timer, while the driver waits for a later one.
    let mut far = task::spawn(wheel.sleep(Duration::from_secs(60)));
    assert_pending!(far.poll());
    settle().await;
    let mut near = task::spawn(wheel.sleep(ms(10)));
    assert_pending!(near.poll());
    advance(ms(500)).await;
    assert_ready!(near.poll());
    assert_pending!(far.poll());

    let m = wheel.metrics();
    assert_eq!(m.max_driver_lag(), ms(490));
    // 290, 390 and 490 ms all fall in [262.144, 524.288) ms.
    assert_eq!(
        m.driver_lag_histogram_bucket_count(bucket_of(&m, ms(290))),
        3
    );
    let total: u64 = (0..32)
        .map(|i| m.driver_lag_histogram_bucket_count(i))
        .sum();
    assert_eq!(total, 3, "one sample per pass that fired a timer");
}

/// The same three kinds of pass, run on time, report no lag at all: the
/// lag is measured from the end of the tick each timer was due at, not
/// from whenever the pass was planned.
#[tokio::test(start_paused = true)]
async fn passes_on_time_report_no_lag() {
    // Registered before the driver's first run; auto-advance stops at the
    // tick.
    let wheel = Wheel::new();
    wheel.sleep(ms(10)).await;
    // After an idle period.
    tokio::time::sleep(Duration::from_secs(5)).await;
    wheel.sleep(ms(10)).await;
    // A new earliest timer.
    let mut far = task::spawn(wheel.sleep(Duration::from_secs(60)));
    assert_pending!(far.poll());
    settle().await;
    wheel.sleep(ms(3)).await;

    let m = wheel.metrics();
    assert_eq!(m.fired_count(), 3);
    assert_eq!(m.max_driver_lag(), Duration::ZERO);
    assert_eq!(m.driver_lag_histogram_bucket_count(0), 3);
    assert_eq!(m.driver_lag_quantile(1.0), Some(Duration::ZERO));
}

/// A timer made after its deadline has passed, on a wheel whose driver has
/// been idle since before that deadline, is not counted as late from its
/// deadline: the driver could not have fired it before it existed. It
/// completes on its first poll, without the driver, on a multi-thread
/// runtime too. (Real time, wide margins: the lag counted from the
/// deadline would be 290 ms.)
#[test]
fn a_timer_made_after_its_deadline_is_not_counted_late() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let wheel = Wheel::new();
        // The driver has run (it fired this), and has nothing to do since.
        wheel.sleep(ms(1)).await;
        let start = Instant::now();
        tokio::time::sleep(ms(300)).await;
        wheel.sleep_until(start + ms(10)).await;
        let m = wheel.metrics();
        assert_eq!(m.fired_count(), 1, "the driver fired the first sleep only");
        assert!(m.max_driver_lag() < ms(200), "{:?}", m.max_driver_lag());
    });
}
