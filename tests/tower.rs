//! `hashwheel::tower::{Timeout, TimeoutLayer}`: tower's timeout semantics
//! on the wheel, on tokio's paused clock.
#![cfg(feature = "tower")]

mod common;

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use common::{advance, ms, settle};
use hashwheel::error::Elapsed;
use hashwheel::tower::{BoxError, Timeout, TimeoutLayer};
use hashwheel::Wheel;
use tokio::time::Instant;
use tokio_test::{assert_pending, assert_ready, assert_ready_ok, task};
use tower::{service_fn, Layer, Service, ServiceExt};

/// A service that answers after `d` (tokio's own sleep, so that the wheel
/// only holds the timeout).
fn answers_after(
    d: Duration,
) -> impl Service<
    u32,
    Response = u32,
    Error = Infallible,
    Future = impl Future<Output = Result<u32, Infallible>> + Send,
> + Clone {
    service_fn(move |req: u32| async move {
        tokio::time::sleep(d).await;
        Ok::<_, Infallible>(req * 2)
    })
}

#[tokio::test(start_paused = true)]
async fn response_first_cancels_the_timer() {
    let wheel = Wheel::new();
    let svc = TimeoutLayer::with_wheel(wheel.clone(), ms(100)).layer(answers_after(ms(40)));
    let start = Instant::now();
    assert_eq!(svc.oneshot(21).await.unwrap(), 42);
    assert_eq!(start.elapsed(), ms(40));
    settle().await;
    let m = wheel.metrics();
    assert_eq!(m.num_pending(), 0);
    assert_eq!(m.fired_count(), 0);
    assert_eq!(m.cancelled_count(), 1, "the response dropped its timer");
}

#[tokio::test(start_paused = true)]
async fn ready_response_never_touches_the_wheel() {
    let wheel = Wheel::new();
    let svc = TimeoutLayer::with_wheel(wheel.clone(), ms(100))
        .layer(service_fn(|r: u32| async move { Ok::<_, Infallible>(r) }));
    assert_eq!(svc.oneshot(7).await.unwrap(), 7);
    let m = wheel.metrics();
    assert_eq!((m.fired_count(), m.cancelled_count()), (0, 0));
}

#[tokio::test(start_paused = true)]
async fn deadline_wins_with_a_boxed_elapsed() {
    let wheel = Wheel::new();
    let svc = TimeoutLayer::with_wheel(wheel.clone(), ms(100)).layer(answers_after(ms(500)));
    let start = Instant::now();
    let err: BoxError = svc.oneshot(1).await.unwrap_err();
    assert_eq!(start.elapsed(), ms(100));
    assert!(err.is::<Elapsed>());
    assert_eq!(err.to_string(), "deadline has elapsed");
    assert!(err.downcast::<Elapsed>().is_ok());
    assert_eq!(wheel.metrics().fired_count(), 1);
}

#[tokio::test(start_paused = true)]
async fn inner_error_is_boxed_not_elapsed() {
    let svc = TimeoutLayer::new(ms(100)).layer(service_fn(|_: ()| async {
        Err::<(), _>(io::Error::other("backend down"))
    }));
    let err = svc.oneshot(()).await.unwrap_err();
    assert!(!err.is::<Elapsed>());
    assert_eq!(
        err.downcast::<io::Error>().unwrap().to_string(),
        "backend down"
    );
}

#[tokio::test(start_paused = true)]
async fn the_clock_starts_at_call_not_at_first_poll() {
    let wheel = Wheel::new();
    let mut svc = Timeout::with_wheel(answers_after(ms(400)), wheel, ms(500));
    let fut = svc.ready().await.unwrap().call(1);
    // Nobody polls the response for 300 ms: only 200 ms are left.
    advance(ms(300)).await;
    let start = Instant::now();
    let err = fut.await.unwrap_err();
    assert!(err.is::<Elapsed>());
    assert_eq!(start.elapsed(), ms(200));
}

#[tokio::test(start_paused = true)]
async fn default_wheel_times_the_request() {
    let svc = TimeoutLayer::new(ms(100)).layer(answers_after(ms(300)));
    let before = Wheel::current().metrics().fired_count();
    assert!(svc.oneshot(1).await.unwrap_err().is::<Elapsed>());
    assert_eq!(Wheel::current().metrics().fired_count(), before + 1);
}

#[tokio::test(start_paused = true)]
async fn many_requests_through_one_service() {
    let wheel = Wheel::new();
    let mut svc =
        TimeoutLayer::with_wheel(wheel.clone(), ms(100)).layer(service_fn(|d: u64| async move {
            tokio::time::sleep(ms(d)).await;
            Ok::<_, Infallible>(d)
        }));
    let mut ok = 0;
    let mut timed_out = 0;
    for d in [10, 250, 99, 100, 101, 0, 1000] {
        match svc.ready().await.unwrap().call(d).await {
            Ok(got) => {
                assert_eq!(got, d);
                ok += 1;
            }
            Err(e) => {
                assert!(e.is::<Elapsed>());
                assert!(d >= 100, "{d} ms timed out");
                timed_out += 1;
            }
        }
    }
    // The inner future is polled first: one ready at the deadline wins.
    assert_eq!((ok, timed_out), (4, 3));
    settle().await;
    assert_eq!(wheel.metrics().num_pending(), 0);
}

// ===== poll_ready =====

/// A service whose readiness a test controls.
#[derive(Clone, Default, Debug)]
struct Gate {
    state: Arc<Mutex<GateState>>,
}

#[derive(Default, Debug)]
struct GateState {
    open: bool,
    fail: bool,
    waker: Option<Waker>,
}

impl Gate {
    fn open(&self, fail: bool) {
        let mut s = self.state.lock().unwrap();
        s.open = true;
        s.fail = fail;
        if let Some(w) = s.waker.take() {
            w.wake();
        }
    }
}

impl Service<()> for Gate {
    type Response = &'static str;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = Result<&'static str, io::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), io::Error>> {
        let mut s = self.state.lock().unwrap();
        if !s.open {
            s.waker = Some(cx.waker().clone());
            return Poll::Pending;
        }
        if s.fail {
            return Poll::Ready(Err(io::Error::other("overloaded")));
        }
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: ()) -> Self::Future {
        Box::pin(async { Ok("through") })
    }
}

#[tokio::test(start_paused = true)]
async fn poll_ready_passes_through() {
    let gate = Gate::default();
    let mut svc = TimeoutLayer::new(ms(10)).layer(gate.clone());
    {
        let mut ready = task::spawn(svc.ready());
        assert_pending!(ready.poll());
        // poll_ready has no deadline: time passing changes nothing.
        advance(ms(1000)).await;
        assert_pending!(ready.poll());
        gate.open(false);
        assert!(ready.is_woken());
        assert_ready_ok!(ready.poll());
    }
    assert_eq!(svc.call(()).await.unwrap(), "through");
}

#[tokio::test(start_paused = true)]
async fn poll_ready_error_is_boxed() {
    let gate = Gate::default();
    gate.open(true);
    let mut svc = TimeoutLayer::new(ms(10)).layer(gate);
    let err = svc.ready().await.expect_err("poll_ready fails");
    assert!(!err.is::<Elapsed>());
    assert_eq!(err.to_string(), "overloaded");
}

// ===== bad input =====

#[tokio::test(start_paused = true)]
async fn zero_timeout_expires_a_pending_service_at_once() {
    let wheel = Wheel::new();
    let layer = TimeoutLayer::with_wheel(wheel.clone(), Duration::ZERO);
    let start = Instant::now();
    let mut fut = task::spawn(layer.layer(answers_after(ms(1))).oneshot(1));
    let err = assert_ready!(fut.poll()).unwrap_err();
    assert!(err.is::<Elapsed>());
    assert_eq!(start.elapsed(), Duration::ZERO);
    // A zero deadline never reaches the wheel.
    assert_eq!(wheel.metrics().fired_count(), 0);
    // A response ready at once still wins, as with `timeout`.
    let instant = layer.layer(service_fn(|r: u32| async move { Ok::<_, Infallible>(r) }));
    assert_eq!(instant.oneshot(3).await.unwrap(), 3);
}

#[tokio::test(start_paused = true)]
async fn max_timeout_outlasts_a_year_long_request() {
    let wheel = Wheel::new();
    let a_year = Duration::from_secs(365 * 24 * 3600);
    let svc = TimeoutLayer::with_wheel(wheel.clone(), Duration::MAX).layer(answers_after(a_year));
    let start = Instant::now();
    assert_eq!(svc.oneshot(4).await.unwrap(), 8, "no Elapsed");
    assert_eq!(start.elapsed(), a_year);
    settle().await;
    let m = wheel.metrics();
    assert_eq!((m.fired_count(), m.num_pending()), (0, 0));

    // The default wheel too.
    let svc = TimeoutLayer::new(Duration::MAX).layer(answers_after(a_year));
    assert_eq!(svc.oneshot(5).await.unwrap(), 10);
}

// ===== load shedding =====

/// At `max_timers`, `call` sheds the request as tower's `LoadShed` does:
/// an error, no panic, and the inner service is not called; the refusal
/// is counted, and once the wheel has room the service times requests
/// again.
#[tokio::test(start_paused = true)]
async fn a_full_wheel_sheds_the_request_with_the_capacity_error() {
    let wheel = Wheel::builder().max_timers(1).build().unwrap();
    let calls = Arc::new(Mutex::new(0));
    let counted = calls.clone();
    let inner = service_fn(move |req: u32| {
        *counted.lock().unwrap() += 1;
        async move { Ok::<_, Infallible>(req) }
    });
    let mut svc = TimeoutLayer::with_wheel(wheel.clone(), ms(100)).layer(inner);
    let held = wheel.sleep(ms(10));
    let start = Instant::now();
    let err = svc.ready().await.unwrap().call(1).await.unwrap_err();
    let err = err.downcast::<hashwheel::error::Error>().unwrap();
    assert!(err.is_at_capacity(), "{err}");
    assert_eq!(start.elapsed(), Duration::ZERO);
    assert_eq!(*calls.lock().unwrap(), 0, "the request was shed");
    assert_eq!(wheel.metrics().refused_count(), 1);

    drop(held);
    assert_eq!(svc.ready().await.unwrap().call(2).await.unwrap(), 2);
    assert_eq!(*calls.lock().unwrap(), 1);
    assert_eq!(wheel.metrics().refused_count(), 1);
}

// ===== types =====

#[test]
fn types_are_send_sync_clone_debug() {
    fn check<T: Send + Sync + Clone + std::fmt::Debug>() {}
    check::<TimeoutLayer>();
    check::<Timeout<()>>();
    fn unpin<T: Unpin + Send + Sync>() {}
    unpin::<hashwheel::tower::ResponseFuture<std::future::Ready<Result<(), Infallible>>>>();
    assert_eq!(
        format!("{:?}", TimeoutLayer::new(ms(5))),
        "TimeoutLayer { timeout: 5ms, wheel: the current runtime's default wheel }"
    );
}
