use std::future::{pending, ready};
use std::time::Duration;

use hashwheel::Wheel;
use tokio::time::Instant;
use tokio_test::{assert_pending, assert_ready, task};

mod common;
use common::{advance, ms, settle};

#[tokio::test(start_paused = true)]
async fn ready_future_needs_no_timer() {
    let wheel = Wheel::new();
    for _ in 0..10 {
        assert_eq!(wheel.timeout(ms(10), ready(3)).await, Ok(3));
    }
    let m = wheel.metrics();
    assert_eq!(
        (m.num_entries(), m.cancelled_count(), m.fired_count()),
        (0, 0, 0)
    );
}

#[tokio::test(start_paused = true)]
async fn elapses_at_the_deadline() {
    let wheel = Wheel::new();
    let start = Instant::now();
    let err = wheel.timeout(ms(15), pending::<()>()).await.unwrap_err();
    assert_eq!(start.elapsed(), ms(15));
    assert_eq!(err.to_string(), "deadline has elapsed");
    let io: std::io::Error = err.into();
    assert_eq!(io.kind(), std::io::ErrorKind::TimedOut);
}

#[tokio::test(start_paused = true)]
async fn inner_future_is_polled_first() {
    let wheel = Wheel::new();
    // Both come due at 10 ms: the inner future wins.
    let inner = tokio::time::sleep(ms(10));
    assert_eq!(wheel.timeout(ms(10), inner).await, Ok(()));
}

#[tokio::test(start_paused = true)]
async fn completes_with_the_inner_output_and_drops_its_entry() {
    let wheel = Wheel::new();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let mut t = task::spawn(wheel.timeout(ms(50), rx));
    assert_pending!(t.poll());
    assert_eq!(wheel.metrics().num_pending(), 1);
    tx.send(9).unwrap();
    assert_eq!(assert_ready!(t.poll()), Ok(Ok(9)));
    drop(t);
    assert_eq!(wheel.metrics().num_entries(), 0);
}

#[tokio::test(start_paused = true)]
async fn zero_duration_elapses_on_first_poll() {
    let wheel = Wheel::new();
    let mut t = task::spawn(wheel.timeout(Duration::ZERO, pending::<()>()));
    assert!(assert_ready!(t.poll()).is_err());
    assert_eq!(wheel.metrics().num_entries(), 0);
}

#[tokio::test(start_paused = true)]
async fn timeout_at_uses_the_given_deadline() {
    let wheel = Wheel::new();
    let at = Instant::now() + ms(7);
    let t = wheel.timeout_at(at, pending::<()>());
    assert_eq!(t.deadline(), at);
    assert!(t.await.is_err());
    assert_eq!(Instant::now(), at);
}

#[tokio::test(start_paused = true)]
async fn accessors_reach_the_inner_future() {
    let wheel = Wheel::new();
    let mut t = wheel.timeout(ms(5), ready(1u8));
    let by_ref: *const std::future::Ready<u8> = t.get_ref();
    let by_mut: *const std::future::Ready<u8> = t.get_mut();
    assert_eq!(by_ref, by_mut);
    assert_eq!(t.into_inner().await, 1);
}

#[tokio::test(start_paused = true)]
async fn never_elapses_early() {
    let wheel = Wheel::builder().tick(ms(5)).build().unwrap();
    let mut t = task::spawn(wheel.timeout(ms(12), pending::<()>()));
    assert_pending!(t.poll());
    advance(ms(14)).await;
    assert_pending!(t.poll());
    advance(ms(1)).await;
    assert!(assert_ready!(t.poll()).is_err());
}

/// The deadline is read when the timeout is made, as tokio reads it, even
/// though the wheel takes it in only at the first pending poll: a timeout
/// made, left unpolled while the clock moves on, then awaited, fires when
/// tokio's timeout made at the same moment fires, not later.
#[tokio::test(start_paused = true)]
async fn the_deadline_is_read_when_the_timeout_is_made() {
    let wheel = Wheel::new();
    let made = Instant::now();
    let mut ours = task::spawn(wheel.timeout(ms(10), pending::<()>()));
    let mut theirs = task::spawn(tokio::time::timeout(ms(10), pending::<()>()));
    assert_eq!(ours.deadline(), made + ms(10));
    advance(ms(6)).await;
    assert_eq!(ours.deadline(), made + ms(10), "not moved by the wait");
    assert_pending!(ours.poll());
    assert_pending!(theirs.poll());
    assert_eq!(ours.deadline(), made + ms(10), "the same once it is filed");
    advance(ms(3)).await;
    assert_pending!(ours.poll());
    assert_pending!(theirs.poll());
    advance(ms(1)).await;
    assert!(ours.is_woken() && theirs.is_woken());
    assert!(assert_ready!(ours.poll()).is_err());
    assert!(assert_ready!(theirs.poll()).is_err());
    assert_eq!(Instant::now(), made + ms(10));
}

/// A timer first polled after `advance` went past its deadline is ready on
/// that poll, as tokio's is, wherever the wheel's other timers lie: one due
/// earlier (whose firing on the way told the wheel the clock moved), one
/// due later (nothing fired on the way), or none; and with one registered
/// just before the `advance`, before the driver planned for it.
#[tokio::test(start_paused = true)]
async fn first_polled_after_advance_past_the_deadline_is_ready_at_once() {
    for other in [None, Some(ms(5)), Some(ms(15)), Some(ms(40))] {
        let wheel = Wheel::new();
        let mut held = other.map(|d| task::spawn(wheel.sleep(d)));
        let mut free = other.map(|d| task::spawn(hashwheel::sleep(d)));
        for s in held.iter_mut().chain(free.iter_mut()) {
            assert_pending!(s.poll());
        }
        // The drivers have run and planned their wake-ups.
        settle().await;
        // One more, earlier than the others, not yet planned for.
        let mut just = task::spawn(wheel.sleep(ms(12)));
        assert_pending!(just.poll());
        let mut ours = task::spawn(wheel.timeout(ms(20), pending::<()>()));
        let mut free_t = task::spawn(hashwheel::timeout(ms(20), pending::<()>()));
        let mut theirs = task::spawn(tokio::time::timeout(ms(20), pending::<()>()));
        let mut sleep = task::spawn(wheel.sleep(ms(20)));
        let mut tokio_sleep = task::spawn(tokio::time::sleep(ms(20)));
        advance(ms(30)).await;
        let case = format!("other timer at {other:?}");
        assert!(assert_ready!(theirs.poll()).is_err(), "{case}");
        assert!(assert_ready!(ours.poll()).is_err(), "{case}");
        assert!(assert_ready!(free_t.poll()).is_err(), "{case}");
        assert_ready!(tokio_sleep.poll());
        assert_ready!(sleep.poll());
        // And one made now, first polled within its tick, is pending.
        let mut next = task::spawn(wheel.timeout(ms(1), pending::<()>()));
        assert_pending!(next.poll(), "{case}");
    }
}

/// Until its timer starts a timeout keeps only its deadline and its place
/// on the wheel, in the room its timer takes later: a timeout is its future
/// and a `Sleep`, no larger.
#[test]
fn a_timeout_is_no_larger_than_its_future_and_a_sleep() {
    use std::mem::size_of;
    type Inner = std::future::Ready<u64>;
    assert_eq!(
        size_of::<hashwheel::Timeout<Inner>>(),
        size_of::<Inner>() + size_of::<hashwheel::Sleep>()
    );
}
