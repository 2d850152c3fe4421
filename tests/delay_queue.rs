use std::task::Poll;
use std::time::Duration;

use futures::StreamExt;
use hashwheel::delay_queue::{DelayQueue, Expired, Key};
use hashwheel::Wheel;
use tokio::time::Instant;
use tokio_test::{assert_pending, assert_ready, task};

mod common;
use common::{advance, ms};

fn poll_next<T>(q: &mut task::Spawn<DelayQueue<T>>) -> Poll<Option<Expired<T>>> {
    q.enter(|cx, mut q| q.poll_expired(cx))
}

#[tokio::test(start_paused = true)]
async fn values_expire_in_order_at_their_tick_never_early() {
    let wheel = Wheel::builder().buckets(8).build().unwrap();
    let mut q = task::spawn(wheel.delay_queue());
    let start = Instant::now();
    for d in [30u64, 5, 17, 5, 100] {
        q.insert(d, ms(d));
    }
    let mut got = Vec::new();
    while got.len() < 5 {
        match poll_next(&mut q) {
            Poll::Ready(Some(e)) => {
                assert!(Instant::now() >= e.deadline(), "expired early");
                assert_eq!(start.elapsed(), ms(*e.get_ref()), "late");
                got.push(e.into_inner());
            }
            Poll::Ready(None) => panic!("queue ran dry"),
            Poll::Pending => advance(ms(1)).await,
        }
    }
    assert_eq!(got, [5, 5, 17, 30, 100]);
    assert!(assert_ready!(poll_next(&mut q)).is_none());
}

#[tokio::test(start_paused = true)]
async fn empty_queue_returns_none_then_wakes_on_insert() {
    let wheel = Wheel::new();
    let mut q = task::spawn(wheel.delay_queue::<u8>());
    assert!(assert_ready!(poll_next(&mut q)).is_none());
    q.insert(1, ms(10));
    assert!(q.is_woken(), "insert into an empty queue wakes the poller");
    assert_pending!(poll_next(&mut q));
    advance(ms(10)).await;
    assert!(q.is_woken());
    assert_eq!(assert_ready!(poll_next(&mut q)).unwrap().into_inner(), 1);
}

#[tokio::test(start_paused = true)]
async fn an_earlier_insert_or_reset_wakes_the_poller() {
    let wheel = Wheel::new();
    let mut q = task::spawn(wheel.delay_queue());
    let late = q.insert("late", ms(100));
    assert_pending!(poll_next(&mut q));
    q.insert("later", ms(200));
    assert!(!q.is_woken(), "a later insert need not wake");
    q.insert("soon", ms(10));
    assert!(q.is_woken());
    assert_pending!(poll_next(&mut q));
    q.reset(&late, ms(5));
    assert!(q.is_woken());
    assert_pending!(poll_next(&mut q));
    advance(ms(5)).await;
    assert_eq!(
        assert_ready!(poll_next(&mut q)).unwrap().into_inner(),
        "late"
    );
    assert_pending!(poll_next(&mut q));
    advance(ms(5)).await;
    assert_eq!(
        assert_ready!(poll_next(&mut q)).unwrap().into_inner(),
        "soon"
    );
}

#[tokio::test(start_paused = true)]
async fn reset_later_postpones_without_early_expiry() {
    let wheel = Wheel::new();
    let mut q = task::spawn(wheel.delay_queue());
    let start = Instant::now();
    let k = q.insert(7, ms(10));
    assert_pending!(poll_next(&mut q));
    q.reset_at(&k, start + ms(40));
    assert_eq!(q.deadline(&k), start + ms(40));
    advance(ms(39)).await;
    assert_pending!(poll_next(&mut q));
    advance(ms(1)).await;
    let e = assert_ready!(poll_next(&mut q)).unwrap();
    assert_eq!((e.deadline(), e.key()), (start + ms(40), k));
}

#[tokio::test(start_paused = true)]
async fn remove_returns_the_value_and_its_key_goes_stale() {
    let wheel = Wheel::new();
    let mut q = wheel.delay_queue();
    let a = q.insert(String::from("a"), ms(10));
    let mut e = q.remove(&a);
    e.get_mut().push('!');
    assert_eq!(e.get_ref(), "a!");
    assert!(q.try_remove(&a).is_none());
    assert!(q.try_reset(&a, ms(5)).is_none());
    assert!(q.try_deadline(&a).is_none());
    // The freed slot goes to a new value; the stale key never reaches it.
    let b = q.insert(String::from("b"), ms(10));
    assert_ne!(a, b);
    assert!(q.try_remove(&a).is_none());
    assert_eq!(q.len(), 1);
    assert_eq!(q.remove(&b).into_inner(), "b");
}

#[tokio::test(start_paused = true)]
#[should_panic(expected = "is not in this DelayQueue")]
async fn removing_a_key_twice_panics() {
    let wheel = Wheel::new();
    let mut q = wheel.delay_queue();
    let k: Key = q.insert((), ms(1));
    q.remove(&k);
    q.remove(&k);
}

#[tokio::test(start_paused = true)]
async fn a_key_goes_stale_when_its_value_expires() {
    let wheel = Wheel::new();
    let mut q = wheel.delay_queue();
    let k = q.insert(1, ms(1));
    assert_eq!(q.next().await.unwrap().key(), k);
    let fresh = q.insert(2, ms(50));
    assert!(q.try_reset(&k, ms(1)).is_none());
    assert!(q.try_remove(&k).is_none());
    assert_eq!(q.deadline(&fresh), Instant::now() + ms(50));
}

#[tokio::test(start_paused = true)]
async fn past_deadlines_expire_on_the_next_poll() {
    let wheel = Wheel::new();
    tokio::time::advance(ms(100)).await;
    let mut q = task::spawn(wheel.delay_queue());
    q.insert_at(1, Instant::now() - ms(50));
    q.insert(2, Duration::ZERO);
    // Last in, first out, as from tokio-util's stack of expired values.
    assert_eq!(assert_ready!(poll_next(&mut q)).unwrap().into_inner(), 2);
    assert_eq!(assert_ready!(poll_next(&mut q)).unwrap().into_inner(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_value_thirty_years_ahead_keeps_the_queue_pending() {
    let wheel = Wheel::new();
    let mut q = task::spawn(wheel.delay_queue());
    let k = q.insert(1, Duration::MAX);
    assert_pending!(poll_next(&mut q));
    advance(Duration::from_secs(1_000_000)).await;
    assert_pending!(poll_next(&mut q));
    assert_eq!(q.len(), 1);
    assert_eq!(q.remove(&k).into_inner(), 1);
    assert!(assert_ready!(poll_next(&mut q)).is_none());
}

#[tokio::test(start_paused = true)]
async fn peek_names_the_next_value() {
    let wheel = Wheel::builder().buckets(8).build().unwrap();
    let mut q = wheel.delay_queue();
    assert_eq!(q.peek(), None);
    let far = q.insert(1, ms(20));
    let near = q.insert(2, ms(12));
    assert_eq!(q.peek(), Some(near));
    q.remove(&near);
    assert_eq!(q.peek(), Some(far));
}

#[tokio::test(start_paused = true)]
async fn memory_comes_back_after_a_burst() {
    let wheel = Wheel::new();
    let mut q = wheel.delay_queue_with_capacity(16);
    assert!(q.capacity() >= 16);
    let keys: Vec<_> = (0..100_000u32)
        .map(|i| q.insert(i, ms(1 + u64::from(i % 50))))
        .collect();
    assert_eq!(q.len(), 100_000);
    assert!(q.capacity() >= 100_000);
    for k in &keys[..50_000] {
        q.remove(k);
    }
    let mut drained = 0;
    while let Some(e) = q.next().await {
        assert!(*e.get_ref() >= 50_000);
        drained += 1;
    }
    assert_eq!(drained, 50_000);
    assert!(q.is_empty());
    q.shrink_to_fit();
    assert_eq!(q.capacity(), 0);
    q.reserve(10);
    assert!(q.capacity() >= 10);
}

#[tokio::test(start_paused = true)]
async fn clear_empties_the_queue() {
    let wheel = Wheel::new();
    let mut q = wheel.delay_queue();
    let k = q.insert(1, ms(10));
    q.insert(2, ms(20));
    q.clear();
    assert!(q.is_empty());
    assert!(q.try_remove(&k).is_none());
    assert!(q.next().await.is_none());
}

#[tokio::test(start_paused = true)]
async fn works_as_a_stream_with_select() {
    let wheel = Wheel::new();
    let mut q = wheel.delay_queue();
    let start = Instant::now();
    q.insert("a", ms(3));
    q.insert("b", ms(6));
    let mut out = Vec::new();
    let mut tick = tokio::time::interval(ms(2));
    while out.len() < 2 {
        tokio::select! {
            Some(e) = q.next() => out.push((e.into_inner(), start.elapsed())),
            _ = tick.tick() => {}
        }
    }
    assert_eq!(out, [("a", ms(3)), ("b", ms(6))]);
}

/// Once its wheel has shut down nothing will wake the queue again: what it
/// holds comes out at once, in deadline order, as a `Sleep` completes then,
/// and nothing is lost.
#[tokio::test(start_paused = true)]
async fn hands_everything_out_once_the_wheel_shuts_down() {
    let wheel = Wheel::new();
    let mut q = task::spawn(wheel.delay_queue());
    let start = Instant::now();
    q.insert(2, ms(60));
    q.insert(1, ms(30));
    assert_pending!(poll_next(&mut q));
    assert_eq!(wheel.shutdown(), 1, "the queue's one entry on the wheel");
    assert!(q.is_woken(), "the shutdown wakes the waiting task");
    let mut got = Vec::new();
    while let Poll::Ready(Some(e)) = poll_next(&mut q) {
        got.push(e.into_inner());
        if got.len() == 1 {
            // Inserted after the shutdown: due at once, and first out, as a
            // value inserted with a passed deadline is in tokio-util's.
            q.insert(3, ms(90));
        }
    }
    assert_eq!(got, [1, 3, 2]);
    assert!(assert_ready!(poll_next(&mut q)).is_none());
    assert_eq!(start.elapsed(), ms(0));
}

/// The queue's task moves: the new task is the one woken when the value
/// comes due, and the old one is not.
#[tokio::test(start_paused = true)]
async fn a_queue_polled_from_another_task_wakes_that_task() {
    let wheel = Wheel::new();
    let mut queue = wheel.delay_queue();
    queue.insert('a', ms(10));
    let mut first = task::spawn(());
    let mut second = task::spawn(());
    assert_pending!(first.enter(|cx, _| queue.poll_expired(cx)));
    assert_pending!(first.enter(|cx, _| queue.poll_expired(cx)));
    assert_pending!(second.enter(|cx, _| queue.poll_expired(cx)));
    advance(ms(10)).await;
    assert!(second.is_woken());
    assert!(!first.is_woken());
    let e = assert_ready!(second.enter(|cx, _| queue.poll_expired(cx)));
    assert_eq!(e.unwrap().into_inner(), 'a');
}

#[tokio::test(start_paused = true)]
async fn new_and_default_use_the_runtimes_default_wheel() {
    let mut q: DelayQueue<u8> = DelayQueue::new();
    let mut d: DelayQueue<u8> = DelayQueue::default();
    let c: DelayQueue<u8> = DelayQueue::with_capacity(64);
    assert!(c.capacity() >= 64);
    let start = Instant::now();
    q.insert(1, ms(7));
    d.insert(2, ms(3));
    assert_eq!(d.next().await.unwrap().into_inner(), 2);
    assert_eq!(q.next().await.unwrap().into_inner(), 1);
    assert_eq!(start.elapsed(), ms(7));
    // One default wheel serves them all.
    assert_eq!(Wheel::current().metrics().fired_count(), 2);
}

/// As tokio-util's: made outside a runtime, a queue is empty and usable
/// there, and finds its wheel at its first insert, on that insert's
/// runtime.
#[test]
fn a_queue_made_outside_a_runtime_binds_at_its_first_insert() {
    let mut q: DelayQueue<u8> = DelayQueue::new();
    let mut sized: DelayQueue<u8> = DelayQueue::with_capacity(64);
    assert!(q.is_empty() && sized.capacity() >= 64 && q.peek().is_none());
    sized.shrink_to_fit();
    q.clear();
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    assert!(matches!(q.poll_expired(&mut cx), Poll::Ready(None)));
    common::paused_runtime().block_on(async move {
        let start = Instant::now();
        let key = q.insert(1, ms(7));
        assert!(q.deadline(&key) >= start + ms(7));
        sized.reserve(10);
        assert!(sized.capacity() >= 10);
        sized.insert(2, ms(3));
        assert_eq!(sized.next().await.unwrap().into_inner(), 2);
        assert_eq!(q.next().await.unwrap().into_inner(), 1);
        assert_eq!(start.elapsed(), ms(7));
        assert_eq!(Wheel::current().metrics().fired_count(), 2);
    });
}

#[test]
#[should_panic(
    expected = "hashwheel::DelayQueue::insert must be called from the context of a Tokio 1.x runtime"
)]
fn a_first_insert_outside_a_runtime_panics() {
    let mut q: DelayQueue<()> = DelayQueue::new();
    q.insert((), ms(1));
}
