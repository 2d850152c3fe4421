//! The behaviours a test suite written for `tokio::time` or tokio-util's
//! `DelayQueue` leans on, written as such a suite writes them: on the
//! paused clock, asserting right after `advance`, with no extra yields.
//! Only the `use` lines name hashwheel.

use std::time::Duration;

use hashwheel::{interval, sleep, sleep_until, timeout, DelayQueue};
use tokio::time::{advance, Instant};
use tokio_test::task;
use tokio_test::{assert_pending, assert_ready};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

// ===== 1. woken when `advance` returns =====

#[tokio::test(start_paused = true)]
async fn a_sleep_is_woken_when_advance_returns() {
    let mut s = task::spawn(sleep(ms(10)));
    assert_pending!(s.poll());
    tokio::task::yield_now().await;
    advance(ms(10)).await;
    assert!(s.is_woken());
    assert_ready!(s.poll());
}

#[tokio::test(start_paused = true)]
async fn a_timeout_is_woken_when_advance_returns() {
    let mut t = task::spawn(timeout(ms(10), std::future::pending::<()>()));
    assert_pending!(t.poll());
    advance(ms(10)).await;
    assert!(t.is_woken());
    assert!(assert_ready!(t.poll()).is_err());
}

#[tokio::test(start_paused = true)]
async fn an_interval_ticks_when_advance_returns() {
    let start = Instant::now();
    let mut i = task::spawn(interval(ms(10)));
    assert_eq!(assert_ready!(i.enter(|cx, mut i| i.poll_tick(cx))), start);
    assert_pending!(i.enter(|cx, mut i| i.poll_tick(cx)));
    for n in 1..=5 {
        advance(ms(10)).await;
        assert!(i.is_woken(), "tick {n}");
        let t = assert_ready!(i.enter(|cx, mut i| i.poll_tick(cx)));
        assert_eq!(t, start + ms(10) * n);
        assert_pending!(i.enter(|cx, mut i| i.poll_tick(cx)));
    }
}

#[tokio::test(start_paused = true)]
async fn a_queue_is_woken_when_advance_returns() {
    let mut q = task::spawn(DelayQueue::new());
    q.insert("a", ms(10));
    assert_pending!(q.enter(|cx, mut q| q.poll_expired(cx)));
    advance(ms(10)).await;
    assert!(q.is_woken());
    let e = assert_ready!(q.enter(|cx, mut q| q.poll_expired(cx))).unwrap();
    assert_eq!(e.into_inner(), "a");
}

// ===== 2. one rounding, to tokio's millisecond =====

/// The clock sits 0.4 ms off tokio's millisecond grid: a deadline 1 ms and
/// 1 ns away ends on tokio's next-but-one millisecond, 1.6 ms from now, as
/// `tokio::time::sleep_until` does; the sleep 1 ms later ends 1 ms later.
#[tokio::test(start_paused = true)]
async fn deadlines_round_once_off_the_grid() {
    advance(us(400)).await;
    let t0 = Instant::now();
    let mut a = task::spawn(sleep_until(t0 + ms(1) + Duration::from_nanos(1)));
    let mut b = task::spawn(sleep_until(t0 + ms(2) + Duration::from_nanos(1)));
    assert_pending!(a.poll());
    assert_pending!(b.poll());
    advance(us(1_599)).await;
    assert!(!a.is_woken());
    advance(us(1)).await;
    assert!(a.is_woken());
    assert!(!b.is_woken(), "timers 1 ms apart fired together");
    assert_ready!(a.poll());
    advance(ms(1)).await;
    assert!(b.is_woken());
    assert_ready!(b.poll());
}

/// `time::pause()` called inside a test leaves the clock off tokio's grid
/// by however long the runtime had run: whatever that offset, our sleep is
/// woken at the very `advance` step at which tokio's is.
#[tokio::test]
async fn pause_inside_a_test_keeps_tokios_rounding() {
    tokio::time::pause();
    for offset in [us(1_500), us(2_000), us(2_001), us(3_999)] {
        let t0 = Instant::now();
        let mut theirs = task::spawn(Box::pin(tokio::time::sleep_until(t0 + offset)));
        let mut ours = task::spawn(sleep_until(t0 + offset));
        assert_pending!(theirs.poll());
        assert_pending!(ours.poll());
        let mut steps = 0;
        while !theirs.is_woken() {
            assert!(!ours.is_woken(), "{offset:?}: woken before tokio's");
            advance(us(100)).await;
            steps += 1;
            assert!(steps < 100, "tokio's sleep never fired");
        }
        assert!(ours.is_woken(), "{offset:?}: tokio's fired, ours did not");
        assert_ready!(ours.poll());
    }
}

// ===== 3 and 4. the queue says when it is empty; compact =====

#[tokio::test(start_paused = true)]
async fn a_queue_whose_last_value_is_removed_is_empty_and_woken() {
    let mut q = task::spawn(DelayQueue::new());
    let k = q.insert(1, ms(100));
    assert_pending!(q.enter(|cx, mut q| q.poll_expired(cx)));
    q.remove(&k);
    assert!(q.is_woken());
    assert!(assert_ready!(q.enter(|cx, mut q| q.poll_expired(cx))).is_none());
}

#[tokio::test(start_paused = true)]
async fn a_never_polled_queue_is_empty_after_its_last_value_goes() {
    let mut q = task::spawn(DelayQueue::new());
    let k = q.insert(1, ms(100));
    q.remove(&k);
    assert!(assert_ready!(q.enter(|cx, mut q| q.poll_expired(cx))).is_none());
}

#[tokio::test(start_paused = true)]
async fn clear_wakes_the_queue_and_it_is_empty() {
    let mut q = task::spawn(DelayQueue::new());
    q.insert(1, ms(100));
    q.insert(2, ms(200));
    assert_pending!(q.enter(|cx, mut q| q.poll_expired(cx)));
    q.clear();
    assert!(q.is_woken());
    assert!(assert_ready!(q.enter(|cx, mut q| q.poll_expired(cx))).is_none());
}

#[tokio::test(start_paused = true)]
async fn a_value_reset_to_the_past_then_drained_leaves_an_empty_queue() {
    let mut q = task::spawn(DelayQueue::new());
    let k = q.insert(1, ms(100));
    q.reset_at(&k, Instant::now() - ms(5));
    assert_eq!(
        assert_ready!(q.enter(|cx, mut q| q.poll_expired(cx)))
            .unwrap()
            .into_inner(),
        1
    );
    assert!(assert_ready!(q.enter(|cx, mut q| q.poll_expired(cx))).is_none());
}

#[tokio::test(start_paused = true)]
async fn compact_keeps_every_key() {
    let mut q = DelayQueue::new();
    let keys: Vec<_> = (0..100).map(|i| q.insert(i, ms(10 + i))).collect();
    for k in keys.iter().skip(1).step_by(2) {
        q.remove(k);
    }
    q.compact();
    for (i, k) in keys.iter().enumerate().step_by(2) {
        assert_eq!(q.deadline(k), Instant::now() + ms(10 + i as u64));
    }
    assert_eq!(q.len(), 50);
}

// ===== 5. is_elapsed =====

#[tokio::test(start_paused = true)]
async fn is_elapsed_only_once_the_timer_has_fired() {
    let s = sleep(ms(1));
    advance(ms(5)).await;
    // Never polled: tokio's is not elapsed either.
    assert!(!s.is_elapsed());
    let mut s = task::spawn(s);
    assert_ready!(s.poll());
    assert!(s.is_elapsed());

    let mut p = task::spawn(sleep(ms(10)));
    assert_pending!(p.poll());
    assert!(!p.is_elapsed());
    advance(ms(10)).await;
    assert!(p.is_elapsed());
}

// ===== 6. far deadlines =====

#[tokio::test(start_paused = true)]
async fn a_duration_max_sleep_completes_under_auto_advance() {
    let start = Instant::now();
    sleep(Duration::MAX).await;
    assert_eq!(start.elapsed(), Duration::from_secs(86_400 * 365 * 30));
}

/// tokio caps a sleep's duration and an interval's period at 30 years
/// (`tokio::time::sleep(100 years)` is due 30 years from now), not only a
/// sum that overflows; a timeout's duration it does not cap. The same
/// calls on hashwheel give the same deadlines and periods.
#[tokio::test(start_paused = true)]
async fn long_durations_are_capped_where_tokio_caps_them() {
    const YEAR: u64 = 86_400 * 365;
    for d in [
        Duration::from_secs(29 * YEAR),
        Duration::from_secs(30 * YEAR),
        Duration::from_secs(100 * YEAR),
        Duration::from_secs(u64::MAX / 4),
        Duration::MAX,
    ] {
        assert_eq!(
            sleep(d).deadline(),
            tokio::time::sleep(d).deadline(),
            "sleep({d:?})"
        );
        assert_eq!(
            interval(d).period(),
            tokio::time::interval(d).period(),
            "interval({d:?})"
        );
    }
}
