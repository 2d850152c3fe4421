use std::time::Duration;

use hashwheel::Wheel;
use tokio::time::Instant;
use tokio_test::{assert_pending, assert_ready, task};

mod common;
use common::{advance, ms, settle};

fn build_err(b: hashwheel::Builder) -> String {
    b.build().unwrap_err().to_string()
}

#[tokio::test(start_paused = true)]
async fn builder_rejects_bad_settings_with_a_message() {
    let b = Wheel::builder;
    assert_eq!(
        build_err(b().tick(Duration::ZERO)),
        "tick must be at least 1 millisecond"
    );
    assert_eq!(
        build_err(b().tick(Duration::from_micros(999))),
        "tick must be at least 1 millisecond"
    );
    assert_eq!(
        build_err(b().tick(Duration::MAX)),
        "tick must be at most 1 hour"
    );
    assert_eq!(build_err(b().buckets(0)), "buckets must be at least 1");
    assert_eq!(
        build_err(b().buckets((1 << 20) + 1)),
        "buckets must be at most 2^20 (1048576)"
    );
    assert_eq!(
        build_err(b().max_timers(0)),
        "max_timers must be at least 1"
    );
    assert_eq!(
        build_err(b().shards(0)),
        "shards must be between 1 and 1024"
    );
    assert_eq!(
        build_err(b().shards(1025)),
        "shards must be between 1 and 1024"
    );
}

#[tokio::test(start_paused = true)]
async fn slots_round_up_to_a_power_of_two() {
    for (asked, got) in [(1, 1), (3, 4), (1000, 1024), (4096, 4096)] {
        assert_eq!(
            Wheel::builder().buckets(asked).build().unwrap().buckets(),
            got
        );
    }
    let w = Wheel::builder()
        .tick(ms(1))
        .buckets(1)
        .shards(1)
        .max_timers(1)
        .build()
        .unwrap();
    // One slot, one timer at a time: still exact.
    let start = Instant::now();
    w.sleep(ms(3)).await;
    assert_eq!(start.elapsed(), ms(3));
}

#[test]
fn build_outside_a_runtime_is_an_error() {
    let err = Wheel::builder().build().unwrap_err();
    assert!(err.is_no_runtime());
    assert!(err.to_string().contains("Tokio 1.x runtime"), "{err}");
}

#[test]
#[should_panic(expected = "hashwheel::Wheel::new: there is no reactor running")]
fn new_outside_a_runtime_panics() {
    let _ = Wheel::new();
}

#[tokio::test(start_paused = true)]
async fn try_forms_fail_at_capacity_and_plain_forms_panic() {
    let wheel = Wheel::builder().max_timers(2).build().unwrap();
    let a = wheel.sleep(ms(10));
    let b = wheel.try_delay(ms(10)).unwrap();
    assert!(wheel.try_sleep(ms(10)).unwrap_err().is_at_capacity());
    assert!(wheel
        .try_sleep_until(Instant::now())
        .unwrap_err()
        .is_at_capacity());
    assert!(wheel
        .try_timeout(ms(10), std::future::ready(()))
        .unwrap_err()
        .is_at_capacity());
    assert!(wheel.try_delay(ms(10)).unwrap_err().is_at_capacity());
    let w = wheel.clone();
    let panicked = std::panic::catch_unwind(move || drop(w.sleep(ms(1)))).unwrap_err();
    let msg = panicked.downcast_ref::<String>().unwrap();
    assert_eq!(
        msg,
        "hashwheel::Wheel::sleep: the timer wheel is at capacity (max_timers timers are alive)"
    );
    drop(a);
    let c = wheel.try_timeout(ms(10), async {}).unwrap();
    assert!(wheel.try_sleep(ms(1)).is_err());
    drop((b, c));
    assert!(wheel.try_sleep(ms(1)).is_ok());
}

/// Capacity is given back when the timer goes, by whatever path: a delay
/// whose handle lives on, a fired delay, a sleep that fired, a queue.
#[tokio::test(start_paused = true)]
async fn every_timer_gives_its_capacity_back_when_it_goes() {
    let wheel = Wheel::builder().max_timers(1).build().unwrap();
    let full = |w: &Wheel| w.try_sleep(ms(1)).is_err_and(|e| e.is_at_capacity());

    // A pending delay dropped while its handle is kept.
    let delay = wheel.delay(ms(10));
    let handle = delay.handle();
    assert!(full(&wheel));
    drop(delay);
    assert!(handle.is_cancelled());
    assert!(!full(&wheel), "the handle holds no capacity");

    // A delay that fired and was awaited, its handle kept.
    let delay = wheel.delay(ms(10));
    let handle = delay.handle();
    delay.await.unwrap();
    assert!(handle.is_expired());
    assert!(!full(&wheel));
    drop(handle);

    // A sleep that fired and is kept.
    let mut sleep = task::spawn(wheel.sleep(ms(5)));
    assert_pending!(sleep.poll());
    advance(ms(5)).await;
    assert_ready!(sleep.poll());
    assert!(full(&wheel), "a sleep counts until it is dropped");
    drop(sleep);
    assert!(!full(&wheel));

    // A queue holds one place while it lives, however many values it has.
    let mut queue = wheel.delay_queue::<u32>();
    queue.insert(1, ms(5));
    queue.insert(2, ms(6));
    assert!(full(&wheel));
    drop(queue);
    assert!(!full(&wheel));
}

#[tokio::test(start_paused = true)]
async fn an_idle_wheel_never_wakes() {
    let wheel = Wheel::new();
    settle().await;
    let before = wheel.metrics().driver_wakeups_count();
    for _ in 0..100 {
        advance(Duration::from_secs(36)).await;
    }
    assert_eq!(wheel.metrics().driver_wakeups_count(), before);
}

#[tokio::test(start_paused = true)]
async fn far_timers_cost_no_wakeups_until_they_come_due() {
    let wheel = Wheel::new();
    let mut sleeps: Vec<_> = (0..1000u64)
        .map(|i| task::spawn(wheel.sleep(Duration::from_secs(60) + ms(i % 10))))
        .collect();
    for s in &mut sleeps {
        assert_pending!(s.poll());
    }
    settle().await;
    let before = wheel.metrics().driver_wakeups_count();
    for _ in 0..59 {
        advance(Duration::from_secs(1)).await;
    }
    assert_eq!(wheel.metrics().driver_wakeups_count(), before);
    advance(Duration::from_secs(1) + ms(10)).await;
    // A thousand sleeps complete in one poll of this task, far more than
    // tokio's cooperative budget lets through (as with tokio's timers).
    tokio::task::coop::unconstrained(async {
        for s in &mut sleeps {
            assert_ready!(s.poll());
        }
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn shutdown_wakes_everything_and_counts_it() {
    let wheel = Wheel::new();
    let mut sleep = task::spawn(wheel.sleep(ms(100)));
    let mut timeout = task::spawn(wheel.timeout(ms(100), std::future::pending::<()>()));
    let mut delay = task::spawn(wheel.delay(ms(100)));
    assert_pending!(sleep.poll());
    assert_pending!(timeout.poll());
    assert_pending!(delay.poll());
    assert_eq!(wheel.shutdown(), 3);
    assert_eq!(wheel.shutdown(), 0);
    assert!(wheel.is_shutdown());
    assert!(sleep.is_woken() && timeout.is_woken() && delay.is_woken());
    assert_ready!(sleep.poll());
    assert!(assert_ready!(timeout.poll()).is_err());
    assert!(assert_ready!(delay.poll()).unwrap_err().is_shutdown());
    // Timers made afterwards complete at once rather than hang.
    let mut late = task::spawn(wheel.sleep(ms(100)));
    assert_ready!(late.poll());
    drop((sleep, timeout, delay, late));
    assert_eq!(wheel.metrics().num_entries(), 0);
}

#[test]
fn timers_complete_when_their_runtime_goes_away() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let (wheel, mut sleep, mut delay) = rt.block_on(async {
        let wheel = Wheel::new();
        let mut sleep = task::spawn(wheel.sleep(Duration::from_secs(60)));
        let mut delay = task::spawn(wheel.delay(Duration::from_secs(60)));
        assert_pending!(sleep.poll());
        assert_pending!(delay.poll());
        (wheel, sleep, delay)
    });
    drop(rt);
    assert!(wheel.is_shutdown());
    assert!(sleep.is_woken() && delay.is_woken());
    assert_ready!(sleep.poll());
    assert!(assert_ready!(delay.poll()).unwrap_err().is_shutdown());
}

#[tokio::test(start_paused = true)]
async fn driver_exits_after_the_last_handle_and_timer() {
    let metrics = tokio::runtime::Handle::current().metrics();
    let wheel = Wheel::new();
    settle().await;
    assert_eq!(metrics.num_alive_tasks(), 1);
    let mut sleep = task::spawn(wheel.sleep(ms(500)));
    assert_pending!(sleep.poll());
    drop(wheel);
    settle().await;
    assert_eq!(
        metrics.num_alive_tasks(),
        1,
        "a timer still needs the driver"
    );
    advance(ms(500)).await;
    assert_ready!(sleep.poll());
    drop(sleep);
    settle().await;
    assert_eq!(metrics.num_alive_tasks(), 0);

    // And with no timer at all.
    let wheel = Wheel::new();
    settle().await;
    assert_eq!(metrics.num_alive_tasks(), 1);
    drop(wheel.clone());
    settle().await;
    assert_eq!(metrics.num_alive_tasks(), 1);
    drop(wheel);
    settle().await;
    assert_eq!(metrics.num_alive_tasks(), 0);
}

#[tokio::test(start_paused = true)]
async fn metrics_count_what_happened() {
    let wheel = Wheel::builder().shards(2).build().unwrap();
    let mut fired = task::spawn(wheel.sleep(ms(5)));
    let mut dropped = task::spawn(wheel.sleep(ms(5)));
    assert_pending!(fired.poll());
    assert_pending!(dropped.poll());
    drop(dropped);
    advance(ms(5)).await;
    assert_ready!(fired.poll());
    let m = wheel.metrics();
    assert_eq!(m.num_shards(), 2);
    assert_eq!(
        (m.num_pending(), m.fired_count(), m.cancelled_count()),
        (0, 1, 1)
    );
    assert_eq!(m.max_driver_lag(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn a_wheel_works_from_another_runtime() {
    let wheel = Wheel::new();
    let w = wheel.clone();
    // Poll a timer of this wheel from a second runtime on another thread.
    let other = std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async move { w.timeout(ms(10), std::future::ready(5)).await })
    });
    assert_eq!(other.join().unwrap(), Ok(5));
}

#[test]
fn futures_and_handles_are_send_sync_unpin() {
    fn check<T: Send + Sync + Unpin>() {}
    check::<hashwheel::Wheel>();
    check::<hashwheel::Sleep>();
    check::<hashwheel::Delay>();
    check::<hashwheel::TimeoutHandle>();
    check::<hashwheel::Timeout<std::future::Ready<()>>>();
    check::<hashwheel::Metrics>();
    fn clone<T: Clone>() {}
    clone::<hashwheel::TimeoutHandle>();
    clone::<hashwheel::Wheel>();
}

/// The handles and timers that hold only the wheel's shards are
/// unwind-safe, as they were with std's `Mutex` behind the shards (a user
/// may hold one across `catch_unwind`). `Delay` and `TimeoutHandle` share
/// an `AtomicWaker`, which is not.
#[test]
fn handles_and_timers_are_unwind_safe() {
    use std::panic::{RefUnwindSafe, UnwindSafe};
    fn check<T: UnwindSafe + RefUnwindSafe>() {}
    check::<Wheel>();
    check::<hashwheel::Sleep>();
    check::<hashwheel::Interval>();
    check::<hashwheel::Timeout<std::future::Ready<()>>>();
    check::<hashwheel::LazyTimeout<std::future::Ready<()>>>();
    check::<hashwheel::DelayQueue<u32>>();
}
