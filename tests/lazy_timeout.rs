//! `LazyTimeout`: no timer while the future is ready; once it is pending,
//! the same timing as a tokio timeout made at that first pending poll.

use std::future::{pending, ready, Future};
use std::time::Duration;

use hashwheel::{lazy_timeout, Wheel};
use tokio::time::Instant;
use tokio_test::{assert_pending, assert_ready, task};

mod common;
use common::{advance, ms};

#[test]
fn ready_at_once_needs_no_runtime() {
    // No runtime anywhere: the free function looks nothing up until the
    // future is pending.
    let mut t = task::spawn(lazy_timeout(ms(10), ready(3)));
    assert_eq!(assert_ready!(t.poll()), Ok(3));
}

#[test]
#[should_panic(
    expected = "hashwheel::lazy_timeout must be called from the context of a Tokio 1.x runtime"
)]
fn pending_outside_a_runtime_panics() {
    let mut t = task::spawn(lazy_timeout(ms(10), pending::<()>()));
    let _ = t.poll();
}

#[tokio::test(start_paused = true)]
async fn ready_at_once_touches_no_wheel() {
    let wheel = Wheel::new();
    for _ in 0..10 {
        assert_eq!(wheel.lazy_timeout(ms(10), ready(3)).await, Ok(3));
        assert_eq!(lazy_timeout(ms(10), ready(4)).await, Ok(4));
    }
    for m in [wheel.metrics(), Wheel::current().metrics()] {
        assert_eq!(
            (m.num_entries(), m.cancelled_count(), m.fired_count()),
            (0, 0, 0)
        );
    }
}

#[tokio::test(start_paused = true)]
async fn deadline_is_set_by_the_first_pending_poll() {
    let wheel = Wheel::new();
    let mut t = task::spawn(wheel.lazy_timeout(ms(10), pending::<()>()));
    assert_eq!(t.deadline(), None);
    advance(ms(3)).await;
    let polled = Instant::now();
    assert_pending!(t.poll());
    assert_eq!(t.deadline(), Some(polled + ms(10)));
    assert_eq!(wheel.metrics().num_pending(), 1);
    advance(ms(9)).await;
    assert_pending!(t.poll());
    advance(ms(1)).await;
    assert!(t.is_woken());
    assert!(assert_ready!(t.poll()).is_err());
}

#[tokio::test(start_paused = true)]
async fn free_function_uses_the_default_wheel() {
    let start = Instant::now();
    let err = lazy_timeout(ms(15), pending::<()>()).await.unwrap_err();
    assert_eq!(start.elapsed(), ms(15));
    assert_eq!(err.to_string(), "deadline has elapsed");
}

#[tokio::test(start_paused = true)]
async fn completes_with_the_inner_output_and_drops_its_entry() {
    let wheel = Wheel::new();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let mut t = task::spawn(wheel.lazy_timeout(ms(50), rx));
    assert_pending!(t.poll());
    assert_eq!(wheel.metrics().num_pending(), 1);
    tx.send(9).unwrap();
    assert_eq!(assert_ready!(t.poll()), Ok(Ok(9)));
    drop(t);
    let m = wheel.metrics();
    assert_eq!((m.num_pending(), m.cancelled_count()), (0, 1));
}

#[tokio::test(start_paused = true)]
async fn accessors_reach_the_inner_future() {
    let wheel = Wheel::new();
    let (tx, rx) = tokio::sync::oneshot::channel::<u32>();
    let mut t = wheel.lazy_timeout(ms(5), rx);
    tx.send(7).unwrap();
    assert!(!t.get_ref().is_terminated());
    assert_eq!(t.get_mut().try_recv(), Ok(7));
    assert!(t.into_inner().is_terminated());
}

#[tokio::test(start_paused = true)]
async fn capacity_is_held_from_creation_and_given_back() {
    let wheel = Wheel::builder().max_timers(1).build().unwrap();
    let t = wheel.lazy_timeout(ms(5), pending::<()>());
    let err = wheel.try_lazy_timeout(ms(5), pending::<()>()).unwrap_err();
    assert!(err.is_at_capacity());
    assert!(wheel.try_sleep(ms(5)).unwrap_err().is_at_capacity());
    drop(t);
    // Given back unstarted, then again after firing.
    assert!(wheel
        .try_lazy_timeout(ms(5), pending::<()>())
        .unwrap()
        .await
        .is_err());
    assert!(wheel.try_sleep(ms(5)).is_ok());
}

#[tokio::test(start_paused = true)]
#[should_panic(expected = "hashwheel::Wheel::lazy_timeout")]
async fn lazy_timeout_at_capacity_panics() {
    let wheel = Wheel::builder().max_timers(1).build().unwrap();
    let _held = wheel.sleep(ms(5));
    drop(wheel.lazy_timeout(ms(5), ready(())));
}

/// Side by side with tokio, on the paused clock: the lazy timeout is made,
/// the clock moves by `gap`, its first poll finds the future pending and a
/// tokio timeout is made right then; after each step of 250 µs both must be
/// ready together, and a tokio timeout made with the lazy one (at the call)
/// must never be ready later than it. A zero limit is the exception: it
/// has been reached at the first poll, which it completes, where tokio's
/// timeout made then waits for the end of tokio's millisecond.
#[tokio::test(start_paused = true)]
async fn once_pending_it_times_as_a_tokio_timeout_made_then() {
    let wheel = Wheel::new();
    let us = Duration::from_micros;
    let gaps = [us(0), us(300), ms(1), us(7_500)];
    let limits = [us(0), us(1), ms(1), us(2_500), ms(10)];
    for gap in gaps {
        for limit in limits {
            for free in [false, true] {
                let made = if free {
                    lazy_timeout(limit, pending::<()>())
                } else {
                    wheel.lazy_timeout(limit, pending::<()>())
                };
                let mut lazy = task::spawn(made);
                let mut at_call = task::spawn(tokio::time::timeout(limit, pending::<()>()));
                advance(gap).await;
                let mut at_poll = task::spawn(tokio::time::timeout(limit, pending::<()>()));
                for step in 0..80 {
                    let want = at_poll.poll().is_ready() || limit.is_zero();
                    let got = lazy.poll().is_ready();
                    let earlier = at_call.poll().is_ready();
                    let what = format!("gap {gap:?}, limit {limit:?}, free {free}, step {step}");
                    assert_eq!(got, want, "{what}");
                    assert!(
                        earlier || !got || limit.is_zero(),
                        "before a timeout made at the call: {what}"
                    );
                    if got {
                        break;
                    }
                    advance(us(250)).await;
                    assert_eq!(lazy.is_woken(), at_poll.is_woken(), "woken: {what}");
                }
                assert!(
                    lazy.poll().is_ready(),
                    "never fired: gap {gap:?}, limit {limit:?}"
                );
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn never_fires_before_its_time_on_a_multi_thread_runtime() {
    let wheel = Wheel::new();
    let mut tasks = Vec::new();
    for i in 0..64u64 {
        let wheel = wheel.clone();
        tasks.push(tokio::spawn(async move {
            let limit = Duration::from_micros(500 + i * 97);
            let made = Instant::now();
            let free = i % 2 == 0;
            let t = if free {
                lazy_timeout(limit, pending::<()>())
            } else {
                wheel.lazy_timeout(limit, pending::<()>())
            };
            tokio::task::yield_now().await;
            let mut t = std::pin::pin!(t);
            let (polled, first, after) = std::future::poll_fn(|cx| {
                let polled = Instant::now();
                let r = t.as_mut().poll(cx);
                std::task::Poll::Ready((polled, r, Instant::now()))
            })
            .await;
            // Ready at its first poll only if the limit had run out by the
            // time that poll returned: a thread descheduled for longer than
            // the limit between the start's clock read and the shard lock
            // finds the deadline's tick processed already, as tokio's timer
            // would.
            let done = match first {
                std::task::Poll::Ready(out) => {
                    assert!(out.is_err());
                    after
                }
                std::task::Poll::Pending => {
                    assert!(t.as_mut().await.is_err());
                    Instant::now()
                }
            };
            assert!(done >= polled + limit, "fired early: {limit:?}");
            assert!(polled >= made);
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
}

#[tokio::test(start_paused = true)]
async fn started_on_a_shut_down_wheel_elapses_at_once() {
    let wheel = Wheel::new();
    let made = wheel.lazy_timeout(ms(50), pending::<()>());
    wheel.shutdown();
    let mut t = task::spawn(made);
    assert!(assert_ready!(t.poll()).is_err());
    assert_eq!(wheel.metrics().num_entries(), 0);
}

#[tokio::test(start_paused = true)]
async fn started_then_shut_down_completes_instead_of_hanging() {
    let wheel = Wheel::new();
    let mut t = task::spawn(wheel.lazy_timeout(ms(50), pending::<()>()));
    assert_pending!(t.poll());
    wheel.shutdown();
    assert!(t.is_woken());
    assert!(assert_ready!(t.poll()).is_err());
}

#[test]
fn a_start_that_panics_leaves_it_unstarted() {
    let mut t = task::spawn(lazy_timeout(ms(10), pending::<()>()));
    let outside = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| t.poll()));
    assert!(outside.is_err());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    rt.block_on(async {
        assert_eq!(t.deadline(), None);
        let polled = Instant::now();
        assert_pending!(t.poll());
        assert_eq!(t.deadline(), Some(polled + ms(10)));
        advance(ms(10)).await;
        assert!(assert_ready!(t.poll()).is_err());
    });
}

/// Made by a wheel that is dropped at once (a temporary `Wheel`): until it
/// starts, the timeout holds that wheel, as every timer does, and it still
/// fires on time.
#[tokio::test(start_paused = true)]
async fn an_unstarted_lazy_timeout_keeps_its_wheel() {
    let t = Wheel::new().lazy_timeout(ms(10), pending::<()>());
    advance(ms(4)).await;
    let start = Instant::now();
    assert!(t.await.is_err());
    assert_eq!(start.elapsed(), ms(10));
}

/// Made on the test's thread, started in a task on a worker of a
/// multi-thread runtime, on a wheel with and without a capacity bound: it
/// elapses, never before its limit from that start, and leaves no entry
/// behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn made_on_one_thread_and_started_on_another() {
    for bound in [None, Some(1_000)] {
        let wheel = match bound {
            None => Wheel::new(),
            Some(n) => Wheel::builder().max_timers(n).build().unwrap(),
        };
        let t = wheel.lazy_timeout(ms(5), pending::<()>());
        let (elapsed, waited) = tokio::spawn(async move {
            let start = Instant::now();
            (t.await.is_err(), start.elapsed())
        })
        .await
        .unwrap();
        assert!(elapsed && waited >= ms(5), "{bound:?}: {waited:?}");
        assert_eq!(wheel.metrics().num_entries(), 0);
    }
}
