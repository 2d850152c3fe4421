use std::task::Poll;
use std::time::Duration;

use futures::StreamExt;
use hashwheel::Wheel;
use tokio::time::{Instant, MissedTickBehavior};
use tokio_test::{assert_pending, assert_ready, task};

mod common;
use common::{advance, ms};

#[tokio::test(start_paused = true)]
async fn first_tick_is_immediate_then_every_period() {
    let wheel = Wheel::new();
    let start = Instant::now();
    let mut i = wheel.interval(ms(10));
    assert_eq!(i.period(), ms(10));
    assert_eq!(i.missed_tick_behavior(), MissedTickBehavior::Burst);
    for n in 0..5u64 {
        assert_eq!(i.tick().await, start + ms(10 * n));
        assert_eq!(Instant::now(), start + ms(10 * n));
    }
}

#[tokio::test(start_paused = true)]
async fn interval_at_starts_at_start() {
    let wheel = Wheel::new();
    let start = Instant::now() + ms(25);
    let mut i = wheel.interval_at(start, ms(10));
    assert_eq!(i.tick().await, start);
    assert_eq!(i.tick().await, start + ms(10));
}

#[tokio::test(start_paused = true)]
async fn never_ticks_early() {
    let wheel = Wheel::new();
    let mut i = task::spawn(wheel.interval(ms(10)));
    assert_ready!(i.enter(|cx, mut i| i.poll_tick(cx)));
    assert_pending!(i.enter(|cx, mut i| i.poll_tick(cx)));
    advance(ms(9)).await;
    assert_pending!(i.enter(|cx, mut i| i.poll_tick(cx)));
    advance(ms(1)).await;
    assert_ready!(i.enter(|cx, mut i| i.poll_tick(cx)));
}

/// Ticks of an interval with period 10 ms after a 35 ms stall, as offsets
/// from the start, for one missed-tick behaviour.
async fn after_stall(behavior: MissedTickBehavior) -> Vec<Duration> {
    let wheel = Wheel::new();
    let start = Instant::now();
    let mut i = wheel.interval(ms(10));
    i.set_missed_tick_behavior(behavior);
    i.tick().await;
    tokio::time::advance(ms(35)).await; // the task was busy
    let mut seen = Vec::new();
    for _ in 0..5 {
        i.tick().await;
        seen.push(start.elapsed());
    }
    seen
}

#[tokio::test(start_paused = true)]
async fn missed_ticks_follow_tokio_semantics() {
    // Burst: catch up at once, then on the original schedule.
    assert_eq!(
        after_stall(MissedTickBehavior::Burst).await,
        [ms(35), ms(35), ms(35), ms(40), ms(50)]
    );
    // Delay: from the late tick on, a full period apart.
    assert_eq!(
        after_stall(MissedTickBehavior::Delay).await,
        [ms(35), ms(45), ms(55), ms(65), ms(75)]
    );
    // Skip: the next tick on the original grid.
    assert_eq!(
        after_stall(MissedTickBehavior::Skip).await,
        [ms(35), ms(40), ms(50), ms(60), ms(70)]
    );
}

#[tokio::test(start_paused = true)]
async fn resets_move_the_next_tick() {
    let wheel = Wheel::new();
    let start = Instant::now();
    let mut i = wheel.interval(ms(10));
    i.tick().await;
    i.reset();
    i.tick().await;
    assert_eq!(start.elapsed(), ms(10));
    i.reset_after(ms(3));
    i.tick().await;
    assert_eq!(start.elapsed(), ms(13));
    i.reset_at(start + ms(30));
    i.tick().await;
    assert_eq!(start.elapsed(), ms(30));
    i.reset_immediately();
    i.tick().await;
    assert_eq!(start.elapsed(), ms(30));
    i.tick().await;
    assert_eq!(start.elapsed(), ms(40));
}

#[tokio::test(start_paused = true)]
async fn tick_is_cancel_safe_in_select() {
    let wheel = Wheel::new();
    let start = Instant::now();
    let mut i = wheel.interval(ms(10));
    let mut ticks = Vec::new();
    while ticks.len() < 4 {
        tokio::select! {
            t = i.tick() => ticks.push(t - start),
            _ = tokio::time::sleep(ms(3)) => {}
        }
    }
    assert_eq!(ticks, [ms(0), ms(10), ms(20), ms(30)]);
}

#[tokio::test(start_paused = true)]
async fn is_a_stream_of_instants() {
    let wheel = Wheel::new();
    let start = Instant::now();
    let got: Vec<_> = wheel
        .interval(ms(5))
        .take(3)
        .map(|t| t - start)
        .collect()
        .await;
    assert_eq!(got, [ms(0), ms(5), ms(10)]);
}

#[tokio::test(start_paused = true)]
#[should_panic(expected = "`period` must be non-zero.")]
async fn zero_period_panics() {
    let wheel = Wheel::new();
    let _ = wheel.interval(Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn a_huge_period_never_overflows() {
    let wheel = Wheel::new();
    let mut i = task::spawn(wheel.interval(Duration::MAX));
    assert_ready!(i.enter(|cx, mut i| i.poll_tick(cx)));
    assert_pending!(i.enter(|cx, mut i| i.poll_tick(cx)));
}

/// Catching up on the real clock, after the task blocked its worker for
/// 300 ms (about 300 missed ticks of 1 ms): ours hands out ticks until the
/// task's cooperative budget is spent (128 units: tokio's), then yields,
/// and so on until it has caught up. tokio's `Interval` yields at the same
/// budget, and once sooner: its first catch-up ticks past the last pass of
/// tokio's driver (before the stall) wait for that driver, though their
/// deadlines have passed; the wheel completes a passed deadline at once.
#[test]
fn catching_up_on_the_real_clock_yields_at_the_budget() {
    for multi in [false, true] {
        let rt = if multi {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
        } else {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
        }
        .unwrap();
        let runs = rt.block_on(async {
            tokio::spawn(async {
                let mut interval = hashwheel::interval(Duration::from_millis(1));
                interval.tick().await;
                std::thread::sleep(Duration::from_millis(300));
                // Ticks per poll of the task, until one finds none due.
                let mut runs = Vec::new();
                loop {
                    let n = std::future::poll_fn(|cx| {
                        let mut n = 0;
                        while interval.poll_tick(cx).is_ready() {
                            n += 1;
                        }
                        Poll::Ready(n)
                    })
                    .await;
                    if n == 0 {
                        return runs;
                    }
                    runs.push(n);
                    tokio::task::yield_now().await;
                }
            })
            .await
            .unwrap()
        });
        let total: usize = runs.iter().sum();
        assert!(runs.iter().all(|&n| n <= 128), "{runs:?}");
        assert!(runs[0] >= 100, "yielded before the budget: {runs:?}");
        assert!(total >= 290, "did not catch up: {runs:?}");
    }
}
