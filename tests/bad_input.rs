//! Bad input and edge cases, one test each: every one ends in a clear error
//! or a documented panic with a message, never a hang, an overflow or a
//! misfire. README.md's Guarantees sum them up in one item ("Bad input
//! never hangs, overflows or fires early") that points here.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll};
use std::time::Duration;

use hashwheel::Wheel;
use tokio::time::Instant;
use tokio_test::{assert_pending, assert_ready, task};

const YEAR: Duration = Duration::from_secs(365 * 86_400);

fn build_err(b: hashwheel::Builder) -> String {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let _g = rt.enter();
    b.build().unwrap_err().to_string()
}

fn builds(b: hashwheel::Builder) -> Wheel {
    b.build().expect("a valid configuration")
}

// ===== Builder::tick =====

#[test]
fn tick_zero_is_an_error() {
    let e = build_err(Wheel::builder().tick(Duration::ZERO));
    assert_eq!(e, "tick must be at least 1 millisecond");
}

#[test]
fn tick_below_one_millisecond_is_an_error() {
    let e = build_err(Wheel::builder().tick(Duration::from_nanos(999_999)));
    assert_eq!(e, "tick must be at least 1 millisecond");
}

#[tokio::test(start_paused = true)]
async fn tick_of_one_millisecond_works() {
    let wheel = builds(Wheel::builder().tick(Duration::from_millis(1)));
    let start = Instant::now();
    wheel.sleep(Duration::from_nanos(1)).await;
    assert_eq!(start.elapsed(), Duration::from_millis(1));
}

#[tokio::test(start_paused = true)]
async fn tick_not_a_whole_millisecond_is_late_never_early() {
    // 1.5 ms ticks: a 1 ms sleep rounds up to the 1.5 ms tick, which tokio's
    // 1 ms timer can only reach at 2 ms.
    let wheel = builds(Wheel::builder().tick(Duration::from_micros(1500)));
    let start = Instant::now();
    wheel.sleep(Duration::from_millis(1)).await;
    assert_eq!(start.elapsed(), Duration::from_millis(2));
}

#[tokio::test(start_paused = true)]
async fn tick_at_its_maximum_works() {
    // One hour: a near deadline rounds up to the end of the first tick.
    let tick = Duration::from_secs(3600);
    let wheel = builds(Wheel::builder().tick(tick));
    let start = Instant::now();
    let mut s = task::spawn(wheel.sleep(Duration::from_millis(1)));
    assert_pending!(s.poll());
    tokio::time::advance(tick - Duration::from_millis(1)).await;
    assert_pending!(s.poll());
    assert_eq!(wheel.metrics().num_pending(), 1);
    tokio::time::advance(Duration::from_millis(1)).await;
    assert!(s.is_woken());
    assert_ready!(s.poll());
    assert_eq!(start.elapsed(), tick);
    assert_eq!(wheel.metrics().num_entries(), 0);
}

/// A tick over an hour is refused: on a tick of 2^62 ns a 1 ms sleep
/// would fire 146 years later.
#[test]
fn tick_beyond_its_maximum_is_an_error() {
    let msg = "tick must be at most 1 hour";
    for tick in [
        Duration::from_secs(3600) + Duration::from_nanos(1),
        Duration::from_secs(86_400),
        Duration::from_nanos(1 << 62),
        Duration::MAX,
    ] {
        assert_eq!(build_err(Wheel::builder().tick(tick)), msg, "{tick:?}");
    }
}

// ===== Builder::buckets =====

#[test]
fn slots_zero_is_an_error() {
    assert_eq!(
        build_err(Wheel::builder().buckets(0)),
        "buckets must be at least 1"
    );
}

#[tokio::test(start_paused = true)]
async fn slots_one_works_over_many_turns() {
    let wheel = builds(Wheel::builder().buckets(1));
    assert_eq!(wheel.buckets(), 1);
    let start = Instant::now();
    let (a, b) = tokio::join!(
        wheel.sleep(Duration::from_millis(7)),
        wheel.sleep(Duration::from_millis(3))
    );
    let _ = (a, b);
    assert_eq!(start.elapsed(), Duration::from_millis(7));
}

#[tokio::test(start_paused = true)]
async fn slots_are_rounded_up_to_a_power_of_two() {
    assert_eq!(builds(Wheel::builder().buckets(3)).buckets(), 4);
    assert_eq!(builds(Wheel::builder().buckets(1000)).buckets(), 1024);
    let wheel = builds(Wheel::builder().buckets((1 << 19) + 1).shards(1));
    assert_eq!(wheel.buckets(), 1 << 20);
}

/// Buckets over 2^20 are refused: 2^30 in one shard would take 24 GiB.
#[test]
fn slots_beyond_their_maximum_are_an_error() {
    for slots in [(1 << 20) + 1, 1 << 30, usize::MAX] {
        let e = build_err(Wheel::builder().buckets(slots).shards(1));
        assert_eq!(e, "buckets must be at most 2^20 (1048576)", "{slots}");
    }
}

/// Every shard's buckets are built before `build` returns: 2^20 of them at
/// most, so that `build` returns within milliseconds (2^20 in each of
/// 1024 shards would take 24 GiB).
#[test]
fn slots_times_shards_beyond_2_pow_20_is_an_error_not_an_abort() {
    let msg =
        "buckets × shards must be at most 2^20 (1048576 buckets, 24 MiB, all allocated by build)";
    for (slots, shards) in [
        (1 << 20, 2),
        (1 << 20, 1024),
        (2048, 1024),
        ((1 << 19) + 1, 2),
    ] {
        let e = build_err(Wheel::builder().buckets(slots).shards(shards));
        assert_eq!(e, msg, "{slots} × {shards}");
    }
}

// ===== Builder::max_timers =====

#[test]
fn max_pending_zero_is_an_error() {
    let e = build_err(Wheel::builder().max_timers(0));
    assert_eq!(e, "max_timers must be at least 1");
}

#[tokio::test(start_paused = true)]
async fn max_pending_one_allows_exactly_one_timer() {
    let wheel = builds(Wheel::builder().max_timers(1));
    let s = wheel.try_sleep(Duration::from_secs(1)).unwrap();
    assert!(wheel
        .try_sleep(Duration::from_secs(1))
        .unwrap_err()
        .is_at_capacity());
    drop(s);
    wheel.try_sleep(Duration::from_millis(1)).unwrap().await;
}

#[tokio::test(start_paused = true)]
async fn max_pending_at_its_maximum_is_unbounded() {
    let wheel = builds(Wheel::builder().max_timers(usize::MAX));
    let timers: Vec<_> = (0..1000)
        .map(|_| wheel.try_delay(Duration::from_secs(1)).unwrap())
        .collect();
    drop(timers);
    wheel.try_sleep(Duration::from_millis(1)).unwrap().await;
}

#[tokio::test(start_paused = true)]
async fn try_constructors_at_capacity_return_an_error() {
    let wheel = builds(Wheel::builder().max_timers(2));
    let a = wheel.sleep(Duration::from_secs(1));
    let b = wheel.delay(Duration::from_secs(1));
    let at = Instant::now() + Duration::from_secs(1);
    let errs = [
        wheel.try_sleep(Duration::from_secs(1)).err(),
        wheel.try_sleep_until(at).err(),
        wheel.try_delay(Duration::from_secs(1)).err(),
        wheel.try_delay_at(at).err(),
        wheel.try_timeout(Duration::from_secs(1), async {}).err(),
        wheel.try_timeout_at(at, async {}).err(),
        wheel
            .try_lazy_timeout(Duration::from_secs(1), async {})
            .err(),
    ];
    for e in errs {
        let e = e.expect("at capacity");
        assert!(e.is_at_capacity() && !e.is_shutdown() && !e.is_cancelled());
        assert_eq!(
            e.to_string(),
            "the timer wheel is at capacity (max_timers timers are alive)"
        );
    }
    // Transient: it clears as timers go away.
    drop((a, b));
    assert!(wheel.try_sleep(Duration::from_secs(1)).is_ok());
}

#[tokio::test(start_paused = true)]
#[should_panic(expected = "hashwheel::Wheel::sleep: the timer wheel is at capacity")]
async fn plain_constructor_at_capacity_panics() {
    let wheel = builds(Wheel::builder().max_timers(1));
    let _a = wheel.sleep(Duration::from_secs(1));
    let _b = wheel.sleep(Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
#[should_panic(expected = "hashwheel::Wheel::delay: the timer wheel is at capacity")]
async fn plain_delay_at_capacity_panics() {
    let wheel = builds(Wheel::builder().max_timers(1));
    let _a = wheel.delay(Duration::from_secs(1));
    let _b = wheel.delay(Duration::from_secs(1));
}

// ===== Builder::shards =====

#[test]
fn shards_zero_is_an_error() {
    assert_eq!(
        build_err(Wheel::builder().shards(0)),
        "shards must be between 1 and 1024"
    );
}

#[tokio::test(start_paused = true)]
async fn shards_one_and_the_maximum_work() {
    // The most buckets, 2^20, in one shard and in the most shards.
    for (slots, n) in [(4096, 1), (1 << 20, 1), (1024, 1024)] {
        let wheel = builds(Wheel::builder().buckets(slots).shards(n));
        assert_eq!(wheel.metrics().num_shards(), n);
        wheel.sleep(Duration::from_millis(2)).await;
        assert_eq!(wheel.metrics().fired_count(), 1);
    }
}

#[test]
fn shards_beyond_the_maximum_are_an_error() {
    assert_eq!(
        build_err(Wheel::builder().shards(1025)),
        "shards must be between 1 and 1024"
    );
}

// ===== durations and deadlines =====

#[tokio::test(start_paused = true)]
async fn duration_zero_completes_on_first_poll_without_the_wheel() {
    let wheel = Wheel::new();
    assert_ready!(task::spawn(wheel.sleep(Duration::ZERO)).poll());
    assert_ready!(task::spawn(wheel.delay(Duration::ZERO)).poll()).unwrap();
    let t = task::spawn(wheel.timeout(Duration::ZERO, std::future::pending::<()>())).poll();
    assert!(assert_ready!(t).is_err());
    assert_eq!(wheel.metrics().num_entries(), 0);
}

#[tokio::test(start_paused = true)]
async fn duration_max_lands_thirty_years_ahead_and_never_overflows() {
    let wheel = Wheel::new();
    let mut s = task::spawn(wheel.sleep(Duration::MAX));
    let mut d = task::spawn(wheel.delay(Duration::MAX));
    let mut t = task::spawn(wheel.timeout(Duration::MAX, std::future::pending::<()>()));
    assert_pending!(s.poll());
    assert_pending!(d.poll());
    assert_pending!(t.poll());
    assert_eq!(wheel.metrics().num_pending(), 3);
    tokio::time::advance(29 * YEAR).await;
    assert_pending!(s.poll());
    assert_pending!(d.poll());
    assert_pending!(t.poll());
    // tokio's `Instant::far_future`: 30 years of 365 days.
    tokio::time::advance(YEAR).await;
    assert_ready!(s.poll());
    assert_ready!(d.poll()).unwrap();
    assert!(assert_ready!(t.poll()).is_err());
    drop((s, d, t));
    assert_eq!(wheel.metrics().num_entries(), 0);
}

#[tokio::test(start_paused = true)]
async fn deadline_in_the_past_completes_on_first_poll() {
    let wheel = Wheel::new();
    let past = Instant::now() - Duration::from_secs(1);
    assert_ready!(task::spawn(wheel.sleep_until(past)).poll());
    assert_ready!(task::spawn(wheel.delay_at(past)).poll()).unwrap();
    let t = task::spawn(wheel.timeout_at(past, std::future::pending::<()>())).poll();
    assert!(assert_ready!(t).is_err());
    assert_eq!(wheel.metrics().num_entries(), 0);
}

#[tokio::test(start_paused = true)]
async fn deadline_two_centuries_ahead_fires_then_and_not_before() {
    let wheel = Wheel::new();
    let at = Instant::now() + 200 * YEAR;
    let mut s = task::spawn(wheel.sleep_until(at));
    assert_pending!(s.poll());
    tokio::time::advance(200 * YEAR - Duration::from_millis(1)).await;
    assert_pending!(s.poll());
    tokio::time::advance(Duration::from_millis(1)).await;
    for _ in 0..8 {
        tokio::task::yield_now().await;
    }
    assert!(s.is_woken());
    assert_ready!(s.poll());
}

#[tokio::test(start_paused = true)]
async fn deadline_three_centuries_ahead_is_clamped_to_the_horizon() {
    let wheel = Wheel::new();
    let mut s = task::spawn(wheel.sleep_until(Instant::now() + 300 * YEAR));
    assert_pending!(s.poll());
    // The horizon: 2^63 ns (about 292.3 years) after the wheel's origin.
    tokio::time::advance(292 * YEAR).await;
    assert_pending!(s.poll());
    assert_eq!(wheel.metrics().num_pending(), 1);
    tokio::time::advance(YEAR).await;
    assert!(s.is_woken());
    assert_ready!(s.poll());
}

#[tokio::test(start_paused = true)]
async fn reset_to_the_past_and_to_never() {
    let wheel = Wheel::new();
    let mut s = task::spawn(wheel.sleep(Duration::from_secs(1)));
    assert_pending!(s.poll());
    s.reset(Instant::now() - Duration::from_secs(1));
    assert!(s.is_woken());
    assert_ready!(s.poll());
    s.reset(Instant::now() + 300 * YEAR);
    assert_pending!(s.poll());
    tokio::time::advance(10 * YEAR).await;
    assert_pending!(s.poll());
    drop(s);
    assert_eq!(wheel.metrics().num_entries(), 0);
}

// ===== stale handles =====

#[tokio::test(start_paused = true)]
async fn stale_handle_after_its_slot_was_reused_does_nothing() {
    let wheel = Wheel::builder().shards(1).build().unwrap();
    // Cancelled by drop, then its slab slot goes to another delay.
    let mut first = task::spawn(wheel.delay(Duration::from_millis(10)));
    assert_pending!(first.poll());
    let stale = first.handle();
    drop(first);
    let mut second = task::spawn(wheel.delay(Duration::from_millis(20)));
    assert_pending!(second.poll());
    assert_eq!(wheel.metrics().num_entries(), 1);
    assert!(!stale.cancel());
    assert!(stale.is_cancelled() && !stale.is_expired());
    // Fired, then reused.
    tokio::time::advance(Duration::from_millis(20)).await;
    assert_ready!(second.poll()).unwrap();
    let fired = second.handle();
    drop(second);
    let mut third = task::spawn(wheel.delay(Duration::from_millis(20)));
    assert_pending!(third.poll());
    assert!(!fired.cancel() && !stale.cancel());
    assert!(fired.is_expired() && !fired.is_cancelled());
    tokio::time::advance(Duration::from_millis(20)).await;
    assert_ready!(third.poll()).unwrap();
}

#[tokio::test(start_paused = true)]
async fn cancel_twice_returns_false_the_second_time() {
    let wheel = Wheel::new();
    let mut d = task::spawn(wheel.delay(Duration::from_millis(10)));
    assert_pending!(d.poll());
    let h = d.handle();
    assert!(h.cancel());
    assert!(!h.cancel());
    assert!(!h.clone().cancel());
    assert!(assert_ready!(d.poll()).unwrap_err().is_cancelled());
}

// ===== outside a runtime =====

#[test]
#[should_panic(expected = "hashwheel::Wheel::new: there is no reactor running")]
fn wheel_new_outside_a_runtime_panics() {
    let _ = Wheel::new();
}

#[test]
fn build_outside_a_runtime_is_an_error() {
    let e = Wheel::builder().build().unwrap_err();
    assert!(e.is_no_runtime());
    assert!(e
        .to_string()
        .contains("must be called from the context of a Tokio 1.x runtime"));
}

#[test]
fn timers_of_a_wheel_whose_runtime_is_gone_complete_at_once() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let wheel = rt.block_on(async { Wheel::new() });
    drop(rt);
    // No runtime at all on this thread now.
    assert!(wheel.is_shutdown());
    futures::executor::block_on(wheel.sleep(Duration::from_secs(3600)));
    let e = futures::executor::block_on(wheel.delay(Duration::from_secs(3600))).unwrap_err();
    assert!(e.is_shutdown());
    assert_eq!(e.to_string(), "the timer wheel has shut down");
    let t = futures::executor::block_on(
        wheel.timeout(Duration::from_secs(3600), std::future::pending::<()>()),
    );
    assert!(t.is_err());
    assert_eq!(wheel.metrics().num_entries(), 0);
}

#[test]
fn timers_polled_outside_a_runtime_are_driven_by_the_wheel_s_runtime() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_time()
        .build()
        .unwrap();
    let wheel = rt.block_on(async { Wheel::new() });
    // A plain executor on this thread; the driver runs on the runtime's worker.
    let start = Instant::now();
    futures::executor::block_on(wheel.sleep(Duration::from_millis(5)));
    assert!(start.elapsed() >= Duration::from_millis(5), "early");
    let d = wheel.delay(Duration::from_millis(5));
    assert!(futures::executor::block_on(d).is_ok());
    assert_eq!(wheel.metrics().num_entries(), 0);
}

/// Polls `f` once with a no-op waker.
fn poll_once<F: Future>(f: F) -> Poll<F::Output> {
    let f = pin!(f);
    f.poll(&mut Context::from_waker(std::task::Waker::noop()))
}

#[tokio::test(start_paused = true)]
async fn unpolled_timers_touch_nothing() {
    let wheel = Wheel::new();
    for _ in 0..100 {
        drop(wheel.sleep(Duration::from_secs(1)));
        drop(wheel.delay(Duration::from_secs(1)));
    }
    assert_eq!(wheel.metrics().num_entries(), 0);
    assert!(poll_once(wheel.timeout(Duration::from_secs(1), async { 1 })).is_ready());
    assert_eq!(wheel.metrics().num_entries(), 0);
}

// ===== DelayQueue keys =====

#[tokio::test(start_paused = true)]
async fn stale_delay_queue_key_after_its_slot_was_reused_does_nothing() {
    use futures::StreamExt;
    let wheel = Wheel::new();
    let mut queue = wheel.delay_queue();
    let removed = queue.insert("a", Duration::from_millis(10));
    queue.remove(&removed);
    let expired = queue.insert("b", Duration::from_millis(10));
    assert_eq!(queue.next().await.unwrap().into_inner(), "b");
    // Both old slots are reused by new values.
    let c = queue.insert("c", Duration::from_millis(30));
    let d = queue.insert("d", Duration::from_millis(30));
    for stale in [removed, expired] {
        assert!(stale != c && stale != d);
        assert!(queue.try_remove(&stale).is_none());
        assert!(queue.try_reset(&stale, Duration::ZERO).is_none());
        assert!(queue.try_reset_at(&stale, Instant::now()).is_none());
        assert!(queue.try_deadline(&stale).is_none());
    }
    assert_eq!(queue.len(), 2);
    let mut got = vec![
        queue.next().await.unwrap().into_inner(),
        queue.next().await.unwrap().into_inner(),
    ];
    got.sort_unstable();
    assert_eq!(got, ["c", "d"]);
}

#[tokio::test(start_paused = true)]
#[should_panic(expected = "is not in this DelayQueue")]
async fn delay_queue_remove_twice_panics() {
    let wheel = Wheel::new();
    let mut queue = wheel.delay_queue();
    let key = queue.insert(1, Duration::from_millis(10));
    assert_eq!(queue.remove(&key).into_inner(), 1);
    queue.remove(&key);
}

#[tokio::test(start_paused = true)]
async fn delay_queue_try_remove_twice_returns_none() {
    let wheel = Wheel::new();
    let mut queue = wheel.delay_queue();
    let key = queue.insert(1, Duration::from_millis(10));
    assert!(queue.try_remove(&key).is_some());
    assert!(queue.try_remove(&key).is_none());
    assert!(queue.is_empty());
}

#[tokio::test(start_paused = true)]
#[should_panic(expected = "is not in this DelayQueue")]
async fn delay_queue_reset_of_a_stale_key_panics() {
    let wheel = Wheel::new();
    let mut queue = wheel.delay_queue();
    let key = queue.insert(1, Duration::from_millis(10));
    queue.remove(&key);
    queue.reset(&key, Duration::from_millis(10));
}

#[tokio::test(start_paused = true)]
async fn delay_queue_duration_max_and_zero() {
    use futures::StreamExt;
    let wheel = Wheel::new();
    let mut queue = wheel.delay_queue();
    queue.insert("far", Duration::MAX);
    queue.insert("now", Duration::ZERO);
    assert_eq!(queue.next().await.unwrap().into_inner(), "now");
    let mut q = task::spawn(queue);
    tokio::time::advance(29 * YEAR).await;
    assert_pending!(q.poll_next());
    assert_eq!(q.len(), 1);
    tokio::time::advance(YEAR).await;
    assert_eq!(assert_ready!(q.poll_next()).unwrap().into_inner(), "far");
    assert!(assert_ready!(q.poll_next()).is_none());
}

// ===== Interval =====

#[tokio::test(start_paused = true)]
#[should_panic(expected = "`period` must be non-zero.")]
async fn interval_of_zero_period_panics() {
    let wheel = Wheel::new();
    let _ = wheel.interval(Duration::ZERO);
}

#[tokio::test(start_paused = true)]
#[should_panic(expected = "`period` must be non-zero.")]
async fn interval_at_of_zero_period_panics() {
    let wheel = Wheel::new();
    let _ = wheel.interval_at(Instant::now(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn interval_of_the_smallest_period_ticks_once_per_wheel_tick() {
    let wheel = Wheel::new();
    let start = Instant::now();
    let mut i = wheel.interval(Duration::from_nanos(1));
    assert_eq!(i.tick().await, start);
    // A 1 ns period cannot tick faster than the wheel: never early, and
    // each tick is at or after the one it stands for.
    let mut last = start;
    for _ in 0..5 {
        let t = i.tick().await;
        assert!(t > last && Instant::now() >= t);
        last = t;
    }
}

// ===== a runtime without its timer =====

#[test]
fn a_runtime_without_its_timer_is_an_error_not_a_silent_wheel() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let _entered = rt.enter();
    let e = Wheel::builder().build().unwrap_err();
    assert!(e.is_no_timer());
    assert_eq!(
        e.to_string(),
        "the Tokio runtime has no timer: build it with enable_time() or enable_all()"
    );
}
