use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hashwheel::Wheel;
use tokio::time::Instant;

mod common;
use common::{advance, ms, settle};

#[tokio::test(start_paused = true)]
async fn runs_the_future_at_its_deadline_never_before() {
    let wheel = Wheel::new();
    let start = Instant::now();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let handle = wheel.spawn_after(ms(20), async move {
        tx.send(start.elapsed()).unwrap();
    });
    assert_eq!(handle.deadline(), start + ms(20));
    assert_eq!(rx.await.unwrap(), ms(20));
    assert!(handle.is_expired());
    assert!(!handle.cancel());
    settle().await;
    assert_eq!(wheel.metrics().num_entries(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_pending_task_costs_an_entry_not_a_tokio_task() {
    let wheel = Wheel::new();
    let metrics = tokio::runtime::Handle::current().metrics();
    settle().await;
    let tasks_before = metrics.num_alive_tasks();
    let ran = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..1000)
        .map(|_| {
            let ran = ran.clone();
            wheel.spawn_after(Duration::from_secs(60), async move {
                ran.fetch_add(1, Ordering::SeqCst);
            })
        })
        .collect();
    assert_eq!(metrics.num_alive_tasks(), tasks_before);
    assert_eq!(wheel.metrics().num_pending(), 1000);
    for h in &handles[..400] {
        assert!(h.cancel());
    }
    assert_eq!(wheel.metrics().num_pending(), 600);
    advance(Duration::from_secs(60)).await;
    // 600 spawned tasks need more than a few scheduler turns to all run.
    for _ in 0..10_000 {
        if ran.load(Ordering::SeqCst) == 600 {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert_eq!(ran.load(Ordering::SeqCst), 600);
    assert!(handles[..400].iter().all(|h| h.is_cancelled()));
    assert!(handles[400..].iter().all(|h| h.is_expired()));
    assert_eq!(wheel.metrics().num_entries(), 0);
}

#[tokio::test(start_paused = true)]
async fn cancel_drops_the_future_without_running_it() {
    struct Flag(Arc<AtomicUsize>);
    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let wheel = Wheel::new();
    let dropped = Arc::new(AtomicUsize::new(0));
    let ran = Arc::new(AtomicUsize::new(0));
    let flag = Flag(dropped.clone());
    let r = ran.clone();
    let handle = wheel.spawn_after(ms(10), async move {
        let _flag = flag;
        r.fetch_add(1, Ordering::SeqCst);
    });
    assert_eq!(dropped.load(Ordering::SeqCst), 0);
    assert!(handle.cancel());
    assert_eq!(dropped.load(Ordering::SeqCst), 1, "dropped at cancel");
    advance(ms(20)).await;
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert_eq!(wheel.metrics().num_entries(), 0);
}

#[tokio::test(start_paused = true)]
async fn zero_delay_spawns_at_once() {
    let wheel = Wheel::new();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let handle = wheel.spawn_after(Duration::ZERO, async move { tx.send(()).unwrap() });
    assert!(handle.is_expired());
    rx.await.unwrap();
    assert_eq!(wheel.metrics().num_entries(), 0);
}

#[tokio::test(start_paused = true)]
async fn spawn_at_uses_the_deadline() {
    let wheel = Wheel::new();
    let at = Instant::now() + ms(33);
    let (tx, rx) = tokio::sync::oneshot::channel();
    wheel.spawn_at(at, async move { tx.send(Instant::now()).unwrap() });
    assert_eq!(rx.await.unwrap(), at);
}

#[tokio::test(start_paused = true)]
async fn shutdown_drops_scheduled_tasks() {
    let wheel = Wheel::new();
    let ran = Arc::new(AtomicUsize::new(0));
    let r = ran.clone();
    let handle = wheel.spawn_after(ms(10), async move {
        r.fetch_add(1, Ordering::SeqCst);
    });
    assert_eq!(wheel.shutdown(), 1);
    advance(ms(20)).await;
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert!(!handle.is_expired() && !handle.is_cancelled());
    assert_eq!(wheel.metrics().num_entries(), 0);
}

#[tokio::test(start_paused = true)]
async fn capacity_is_released_when_the_task_runs_or_is_cancelled() {
    let wheel = Wheel::builder().max_timers(1).build().unwrap();
    let h = wheel.try_spawn_after(ms(5), async {}).unwrap();
    assert!(wheel
        .try_spawn_after(ms(5), async {})
        .unwrap_err()
        .is_at_capacity());
    assert!(h.cancel());
    let (tx, rx) = tokio::sync::oneshot::channel();
    wheel
        .try_spawn_after(ms(5), async move { tx.send(()).unwrap() })
        .unwrap();
    rx.await.unwrap();
    assert!(wheel.try_sleep(ms(1)).is_ok());
}

#[test]
#[should_panic(
    expected = "hashwheel::Wheel::spawn_after must be called from the context of a Tokio 1.x runtime"
)]
fn spawn_after_outside_a_runtime_panics() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let wheel = rt.block_on(async { Wheel::new() });
    wheel.spawn_after(ms(1), async {});
}
