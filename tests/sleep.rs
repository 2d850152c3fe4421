use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Wake, Waker};
use std::time::Duration;

use hashwheel::Wheel;
use tokio::time::Instant;
use tokio_test::{assert_pending, assert_ready, task};

mod common;
use common::{advance, ms, settle};

#[tokio::test(start_paused = true)]
async fn completes_at_the_first_tick_at_or_after_its_deadline() {
    let wheel = Wheel::builder().tick(ms(10)).build().unwrap();
    for (asked, fires) in [
        (ms(10), ms(10)),
        (ms(11), ms(20)),
        (Duration::from_nanos(1), ms(10)),
        (ms(25), ms(30)),
    ] {
        // Start each case on a tick boundary.
        let start = Instant::now();
        wheel.sleep(asked).await;
        assert_eq!(start.elapsed(), fires, "sleep({asked:?})");
    }
}

#[tokio::test(start_paused = true)]
async fn never_fires_before_its_deadline() {
    let wheel = Wheel::new();
    let mut sleep = task::spawn(wheel.sleep(ms(10)));
    assert_pending!(sleep.poll());
    advance(Duration::from_micros(9_999)).await;
    assert!(!sleep.is_woken());
    assert_pending!(sleep.poll());
    advance(Duration::from_micros(1)).await;
    assert!(sleep.is_woken());
    assert_ready!(sleep.poll());
}

#[tokio::test(start_paused = true)]
async fn zero_duration_completes_on_first_poll_without_the_wheel() {
    let wheel = Wheel::new();
    let mut sleep = task::spawn(wheel.sleep(Duration::ZERO));
    assert_ready!(sleep.poll());
    assert_eq!(wheel.metrics().num_entries(), 0);
    assert_eq!(wheel.metrics().fired_count(), 0);
}

#[tokio::test(start_paused = true)]
async fn past_deadline_completes_on_first_poll_without_the_wheel() {
    let wheel = Wheel::new();
    tokio::time::advance(ms(50)).await;
    let mut sleep = task::spawn(wheel.sleep_until(Instant::now() - ms(20)));
    assert_ready!(sleep.poll());
    let mut now = task::spawn(wheel.sleep_until(Instant::now()));
    assert_ready!(now.poll());
    assert_eq!(wheel.metrics().num_entries(), 0);
}

#[tokio::test(start_paused = true)]
async fn duration_max_lands_thirty_years_ahead_as_in_tokio() {
    let wheel = Wheel::new();
    let start = Instant::now();
    let mut sleep = task::spawn(wheel.sleep(Duration::MAX));
    let theirs = tokio::time::sleep(Duration::MAX);
    assert_eq!(sleep.deadline(), theirs.deadline());
    let mut theirs = task::spawn(Box::pin(theirs));
    assert_eq!(
        sleep.deadline() - start,
        30 * 365 * Duration::from_secs(86_400)
    );
    assert_pending!(sleep.poll());
    assert_pending!(theirs.poll());
    advance(Duration::from_secs(29 * 365 * 86_400)).await;
    assert_pending!(sleep.poll());
    assert!(!sleep.is_elapsed());
    advance(Duration::from_secs(365 * 86_400)).await;
    assert!(sleep.is_woken());
    assert_ready!(sleep.poll());
    assert_ready!(theirs.poll());
    assert_eq!(wheel.metrics().num_entries(), 0);
}

#[tokio::test(start_paused = true)]
async fn centuries_ahead_deadline_is_clamped_to_the_horizon() {
    let wheel = Wheel::new();
    let far = Instant::now() + Duration::from_secs(400 * 365 * 86_400);
    let mut sleep = task::spawn(wheel.sleep_until(far));
    assert_pending!(sleep.poll());
    advance(Duration::from_secs(86_400)).await;
    assert_pending!(sleep.poll());
    assert_eq!(wheel.metrics().num_pending(), 1);
    // The horizon is 2^63 ns (about 292 years) after the wheel's origin.
    advance(Duration::from_secs(293 * 365 * 86_400)).await;
    assert_ready!(sleep.poll());
}

/// With tokio's timer, a paused-clock test awaiting a far sleep completes:
/// the runtime auto-advances to it. It must here too.
#[tokio::test(start_paused = true)]
async fn far_sleeps_complete_under_auto_advance() {
    let wheel = Wheel::new();
    let start = Instant::now();
    wheel.sleep(Duration::MAX).await;
    assert_eq!(start.elapsed(), 30 * 365 * Duration::from_secs(86_400));
    wheel
        .sleep_until(Instant::now() + Duration::from_secs(1000 * 365 * 86_400))
        .await;
    hashwheel::sleep(Duration::MAX).await;
}

#[tokio::test(start_paused = true)]
async fn a_day_and_five_years_complete_at_once_with_few_wakeups() {
    let wheel = Wheel::new();
    let start = Instant::now();
    wheel.sleep(Duration::from_secs(86_400)).await;
    assert_eq!(start.elapsed(), Duration::from_secs(86_400));
    let start = Instant::now();
    wheel.sleep(Duration::from_secs(5 * 365 * 86_400)).await;
    assert_eq!(start.elapsed(), Duration::from_secs(5 * 365 * 86_400));
    assert!(
        wheel.metrics().driver_wakeups_count() <= 6,
        "{:?}",
        wheel.metrics()
    );
}

#[tokio::test(start_paused = true)]
async fn reset_later_rearms_without_firing_early() {
    let wheel = Wheel::new();
    let start = Instant::now();
    let mut sleep = task::spawn(wheel.sleep(ms(10)));
    assert_pending!(sleep.poll());
    sleep.reset(start + ms(30));
    advance(ms(10)).await;
    // The entry came due at 10 ms, but the deadline is now 30 ms.
    assert_pending!(sleep.poll());
    advance(ms(19)).await;
    assert_pending!(sleep.poll());
    advance(ms(1)).await;
    assert!(sleep.is_woken());
    assert_ready!(sleep.poll());
    assert_eq!(sleep.deadline(), start + ms(30));
}

#[tokio::test(start_paused = true)]
async fn reset_earlier_moves_the_entry() {
    let wheel = Wheel::new();
    let start = Instant::now();
    let mut sleep = task::spawn(wheel.sleep(ms(30)));
    assert_pending!(sleep.poll());
    sleep.reset(start + ms(10));
    advance(ms(10)).await;
    assert!(sleep.is_woken());
    assert_ready!(sleep.poll());
}

#[tokio::test(start_paused = true)]
async fn reset_to_the_past_completes_on_next_poll() {
    let wheel = Wheel::new();
    let mut sleep = task::spawn(wheel.sleep(ms(30)));
    assert_pending!(sleep.poll());
    sleep.reset(Instant::now());
    assert_ready!(sleep.poll());
    assert_eq!(wheel.metrics().num_entries(), 0);
}

#[tokio::test(start_paused = true)]
async fn reset_after_completion_makes_it_pending_again() {
    let wheel = Wheel::new();
    let mut sleep = wheel.sleep(ms(5));
    (&mut sleep).await;
    let start = Instant::now();
    sleep.reset(start + ms(7));
    assert!(!sleep.is_elapsed());
    (&mut sleep).await;
    assert_eq!(start.elapsed(), ms(7));
}

#[tokio::test(start_paused = true)]
async fn drop_removes_the_entry() {
    let wheel = Wheel::new();
    let mut sleep = task::spawn(wheel.sleep(ms(30)));
    assert_pending!(sleep.poll());
    assert_eq!(wheel.metrics().num_pending(), 1);
    drop(sleep);
    let m = wheel.metrics();
    assert_eq!(
        (m.num_pending(), m.num_entries(), m.cancelled_count()),
        (0, 0, 1)
    );
    // Nothing fires later.
    advance(ms(100)).await;
    assert_eq!(wheel.metrics().fired_count(), 0);
}

/// Dropped sleeps leave their entries for a sweep (a batch of removals
/// under one lock): they count as gone at once and their wakers are never
/// woken, while the sleeps kept fire on time.
#[tokio::test(start_paused = true)]
async fn many_dropped_sleeps_wake_nobody_and_leave_nothing() {
    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let wheel = Wheel::new();
    let count = Arc::new(Count(AtomicUsize::new(0)));
    let waker = Waker::from(count.clone());
    let mut cx = Context::from_waker(&waker);
    let mut sleeps: Vec<_> = (0..100u64).map(|i| wheel.sleep(ms(10 + i % 7))).collect();
    for s in &mut sleeps {
        assert!(Pin::new(s).poll(&mut cx).is_pending());
    }
    // More than two sweeps' worth, in an order unlike their insertion.
    let (mut kept, dropped): (Vec<_>, Vec<_>) = sleeps
        .into_iter()
        .enumerate()
        .partition(|(i, _)| i % 10 < 3);
    drop(dropped);
    let m = wheel.metrics();
    assert_eq!(
        (m.num_pending(), m.num_entries(), m.cancelled_count()),
        (30, 30, 70)
    );
    advance(ms(20)).await;
    let m = wheel.metrics();
    assert_eq!((m.fired_count(), m.num_pending()), (30, 0));
    assert_eq!(
        count.0.load(Ordering::SeqCst),
        30,
        "a dropped sleep was woken"
    );
    for (_, s) in &mut kept {
        assert!(Pin::new(s).poll(&mut cx).is_ready());
    }
}

#[tokio::test(start_paused = true)]
async fn unpolled_sleep_holds_no_entry() {
    let wheel = Wheel::new();
    let sleeps: Vec<_> = (0..100).map(|_| wheel.sleep(ms(10))).collect();
    assert_eq!(wheel.metrics().num_entries(), 0);
    drop(sleeps);
    assert_eq!(wheel.metrics().cancelled_count(), 0);
}

#[tokio::test(start_paused = true)]
async fn select_in_a_loop_needs_no_pin() {
    let wheel = Wheel::new();
    let mut sleep = wheel.sleep(ms(100));
    let mut ticks = 0;
    let start = Instant::now();
    loop {
        tokio::select! {
            _ = &mut sleep => break,
            _ = tokio::time::sleep(ms(30)) => ticks += 1,
        }
    }
    assert_eq!(ticks, 3);
    assert_eq!(start.elapsed(), ms(100));
}

#[tokio::test(start_paused = true)]
async fn timers_several_turns_away_fire_on_their_own_tick() {
    // 8 slots of 1 ms: deadlines up to 100 ms wrap the wheel a dozen times.
    let wheel = Wheel::builder().buckets(8).build().unwrap();
    let start = Instant::now();
    let mut tasks = Vec::new();
    for i in 1..=100u64 {
        let sleep = wheel.sleep(ms(i));
        tasks.push(tokio::spawn(async move {
            sleep.await;
            start.elapsed()
        }));
    }
    for (i, t) in tasks.into_iter().enumerate() {
        assert_eq!(t.await.unwrap(), ms(i as u64 + 1));
    }
    assert_eq!(wheel.metrics().fired_count(), 100);
    assert_eq!(wheel.metrics().num_entries(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_stalled_driver_catches_up_once_never_early() {
    let wheel = Wheel::builder().buckets(8).build().unwrap();
    let mut sleeps: Vec<_> = (1..=100u64)
        .map(|i| task::spawn(wheel.sleep(ms(i))))
        .collect();
    for s in &mut sleeps {
        assert_pending!(s.poll());
    }
    // 50 ms at once: more than six turns of the wheel.
    advance(ms(50)).await;
    for (i, s) in sleeps.iter_mut().enumerate() {
        if i < 50 {
            assert!(s.is_woken(), "timer {} not woken", i + 1);
            assert_ready!(s.poll());
        } else {
            assert_pending!(s.poll());
        }
    }
    assert_eq!(wheel.metrics().fired_count(), 50);
    advance(ms(50)).await;
    for s in sleeps.iter_mut().skip(50) {
        assert_ready!(s.poll());
    }
    assert_eq!(wheel.metrics().fired_count(), 100);
}

#[tokio::test(start_paused = true)]
async fn deadline_and_is_elapsed() {
    let wheel = Wheel::new();
    let at = Instant::now() + ms(20);
    let mut sleep = task::spawn(wheel.sleep_until(at));
    assert_eq!(sleep.deadline(), at);
    assert!(!sleep.is_elapsed());
    assert_pending!(sleep.poll());
    advance(ms(20)).await;
    assert!(sleep.is_elapsed());
    assert_ready!(sleep.poll());
    assert!(sleep.is_elapsed());
    settle().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sleeps_complete_across_worker_threads() {
    let wheel = Wheel::new();
    let mut tasks = Vec::new();
    for i in 0..200u64 {
        let wheel = wheel.clone();
        tasks.push(tokio::spawn(async move {
            let deadline = Instant::now() + Duration::from_millis(i % 7 + 1);
            let mut s = wheel.sleep_until(deadline);
            tokio::task::yield_now().await;
            (&mut s).await;
            assert!(Instant::now() >= deadline, "fired early");
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(wheel.metrics().num_pending(), 0);
}

/// On a multi-thread runtime a first poll, like a reset, asks the wheel and
/// not the clock whether a deadline has passed, as tokio's timer asks its
/// driver. A sleep whose deadline passed while the wheel's driver had
/// nothing to do is filed for its ended tick, and the driver pass the
/// filing asks for completes it: not lost, not early.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_polled_or_reset_after_its_deadline_completes_on_a_multi_thread_runtime() {
    let wheel = Wheel::new();
    let deadline = Instant::now() + ms(2);
    let mut first = wheel.sleep_until(deadline);
    let mut moved = wheel.sleep(Duration::from_secs(60));
    // Registered, far away.
    assert!(futures::poll!(&mut moved).is_pending());
    // Both deadlines' ticks end by the clock; nothing wakes the driver.
    while Instant::now() < deadline + ms(2) {
        std::hint::spin_loop();
    }
    let guard = Duration::from_secs(10);
    tokio::time::timeout(guard, &mut first)
        .await
        .expect("first-poll sleep lost");
    let deadline = Instant::now();
    while Instant::now() < deadline + ms(2) {
        std::hint::spin_loop();
    }
    moved.reset(deadline);
    tokio::time::timeout(guard, &mut moved)
        .await
        .expect("reset sleep lost");
    assert!(first.is_elapsed() && moved.is_elapsed());
    assert!(Instant::now() >= deadline);
    assert_eq!(wheel.metrics().num_pending(), 0);
}

/// Many tasks on two workers, each first polling (or resetting) a sleep
/// some way past its deadline, while the others register and the driver
/// runs passes: every sleep completes, none before its deadline, and the
/// wheel is left empty.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn late_first_polls_and_resets_race_the_driver_without_loss() {
    let wheel = Wheel::new();
    let mut tasks = Vec::new();
    for i in 0..400u64 {
        let wheel = wheel.clone();
        tasks.push(tokio::spawn(async move {
            let deadline = Instant::now() + Duration::from_micros(i * 37 % 1_000);
            let late = Duration::from_micros(i * 53 % 700);
            let mut sleep = if i % 3 == 0 {
                // Registered far away first, then moved to `deadline`.
                let mut s = wheel.sleep(Duration::from_secs(60));
                assert!(futures::poll!(&mut s).is_pending());
                s
            } else {
                wheel.sleep_until(deadline)
            };
            while Instant::now() < deadline + late {
                std::hint::spin_loop();
            }
            if i % 3 == 0 {
                sleep.reset(deadline);
            }
            tokio::time::timeout(Duration::from_secs(10), &mut sleep)
                .await
                .expect("sleep lost");
            assert!(Instant::now() >= deadline, "fired early");
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(wheel.metrics().num_pending(), 0);
}
