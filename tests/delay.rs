use std::time::Duration;

use hashwheel::Wheel;
use tokio::time::Instant;
use tokio_test::{assert_pending, assert_ready, task};

mod common;
use common::{advance, ms, settle};

#[tokio::test(start_paused = true)]
async fn expires_with_ok() {
    let wheel = Wheel::new();
    let delay = wheel.delay(ms(20));
    let handle = delay.handle();
    let start = Instant::now();
    assert_eq!(delay.await, Ok(()));
    assert_eq!(start.elapsed(), ms(20));
    assert!(handle.is_expired());
    assert!(!handle.is_cancelled());
    assert!(!handle.cancel());
}

#[tokio::test(start_paused = true)]
async fn cancel_before_the_first_poll() {
    let wheel = Wheel::new();
    let mut delay = task::spawn(wheel.delay(ms(20)));
    let handle = delay.handle();
    assert!(handle.cancel());
    assert!(!handle.cancel(), "a second cancel cancels nothing");
    assert!(assert_ready!(delay.poll()).unwrap_err().is_cancelled());
    assert_eq!(wheel.metrics().num_entries(), 0);
}

#[tokio::test(start_paused = true)]
async fn cancel_from_another_task_removes_the_entry_and_wakes() {
    let wheel = Wheel::new();
    let mut delay = task::spawn(wheel.delay(ms(30_000)));
    let handle = delay.handle();
    assert_pending!(delay.poll());
    assert_eq!(wheel.metrics().num_pending(), 1);
    let h = handle.clone();
    assert!(tokio::spawn(async move { h.cancel() }).await.unwrap());
    assert!(delay.is_woken());
    assert_eq!(wheel.metrics().num_pending(), 0);
    assert_eq!(wheel.metrics().cancelled_count(), 1);
    assert!(assert_ready!(delay.poll()).unwrap_err().is_cancelled());
    assert!(handle.is_cancelled());
    drop(delay);
    assert_eq!(wheel.metrics().num_entries(), 0);
}

#[tokio::test(start_paused = true)]
async fn never_expires_early() {
    let wheel = Wheel::new();
    let mut delay = task::spawn(wheel.delay(ms(10)));
    let handle = delay.handle();
    assert_pending!(delay.poll());
    advance(ms(9)).await;
    assert!(!handle.is_expired());
    assert_pending!(delay.poll());
    advance(ms(1)).await;
    assert!(handle.is_expired());
    assert_eq!(assert_ready!(delay.poll()), Ok(()));
}

#[tokio::test(start_paused = true)]
async fn dropping_a_pending_delay_cancels_it() {
    let wheel = Wheel::new();
    let mut delay = task::spawn(wheel.delay(ms(10)));
    let handle = delay.handle();
    assert_pending!(delay.poll());
    drop(delay);
    assert!(handle.is_cancelled());
    assert!(!handle.cancel());
    assert_eq!(wheel.metrics().num_entries(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_stale_handle_never_touches_the_timer_that_reuses_its_slot() {
    let wheel = Wheel::builder().shards(1).build().unwrap();
    let mut first = task::spawn(wheel.delay(ms(10)));
    let stale = first.handle();
    assert_pending!(first.poll());
    drop(first);
    // The next timer takes the freed slab slot.
    let mut second = task::spawn(wheel.delay(ms(10)));
    let fresh = second.handle();
    assert_pending!(second.poll());
    assert_eq!(wheel.metrics().num_entries(), 1);
    assert!(!stale.cancel());
    assert!(stale.is_cancelled());
    assert!(!fresh.is_cancelled());
    advance(ms(10)).await;
    assert_eq!(assert_ready!(second.poll()), Ok(()));
    assert!(fresh.is_expired());
}

#[tokio::test(start_paused = true)]
async fn shutdown_resolves_pending_delays_with_an_error() {
    let wheel = Wheel::new();
    let delay = wheel.delay(ms(60_000));
    let handle = delay.handle();
    let waiter = tokio::spawn(delay);
    settle().await;
    assert_eq!(wheel.shutdown(), 1);
    assert!(waiter.await.unwrap().unwrap_err().is_shutdown());
    assert!(!handle.cancel());
    // A delay made after the shutdown fails on its first poll.
    assert!(wheel.delay(ms(5)).await.unwrap_err().is_shutdown());
}

#[tokio::test(start_paused = true)]
async fn zero_and_past_deadlines_expire_at_once() {
    let wheel = Wheel::new();
    let mut zero = task::spawn(wheel.delay(Duration::ZERO));
    assert_eq!(assert_ready!(zero.poll()), Ok(()));
    tokio::time::advance(ms(5)).await;
    let mut past = task::spawn(wheel.delay_at(Instant::now() - ms(1)));
    assert_eq!(assert_ready!(past.poll()), Ok(()));
    assert!(past.handle().is_expired());
    assert_eq!(wheel.metrics().num_entries(), 0);
}

#[tokio::test(start_paused = true)]
async fn handle_reports_the_deadline() {
    let wheel = Wheel::new();
    let at = Instant::now() + ms(42);
    let delay = wheel.delay_at(at);
    assert_eq!(delay.deadline(), at);
    assert_eq!(delay.handle().deadline(), at);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_races_with_expiry_without_losing_either() {
    let wheel = Wheel::new();
    let mut tasks = Vec::new();
    for i in 0..500u64 {
        let delay = wheel.delay(Duration::from_millis(1 + i % 3));
        let handle = delay.handle();
        let waiter = tokio::spawn(delay);
        let canceller = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(1 + i % 4)).await;
            handle.cancel()
        });
        tasks.push((waiter, canceller));
    }
    for (waiter, canceller) in tasks {
        let outcome = waiter.await.unwrap();
        let cancelled = canceller.await.unwrap();
        // Exactly one side wins.
        assert_eq!(
            outcome.is_err(),
            cancelled,
            "{outcome:?} vs cancel() = {cancelled}"
        );
    }
    assert_eq!(wheel.metrics().num_pending(), 0);
    assert_eq!(wheel.metrics().num_entries(), 0);
}
