//! Errors where an error is documented: every `try_` form, `Wheel::try_current`
//! and the `io` wrappers return an `Error` (never panic) when no timer can be
//! had, and the plain forms panic with a message naming themselves. The
//! conditions: no runtime, a runtime built without its timer, a runtime
//! shutting down, a wheel at capacity, a wheel that has shut down.

use std::future::Future;
use std::pin::pin;
use std::sync::mpsc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use hashwheel::error::Error;
use hashwheel::io::TimeoutReader;
use hashwheel::{DelayQueue, Wheel};
use tokio::io::AsyncReadExt;
use tokio::time::Instant;

const D: Duration = Duration::from_millis(1);
const MINUTE: Duration = Duration::from_secs(60);

/// Every `try_` form that makes a timer on the current runtime's default
/// wheel, by name, with what it returned.
fn every_default_try_form() -> Vec<(&'static str, Result<(), Error>)> {
    let now = Instant::now();
    vec![
        ("try_sleep", hashwheel::try_sleep(D).map(drop)),
        ("try_sleep_until", hashwheel::try_sleep_until(now).map(drop)),
        ("try_timeout", hashwheel::try_timeout(D, async {}).map(drop)),
        (
            "try_timeout_at",
            hashwheel::try_timeout_at(now, async {}).map(drop),
        ),
        (
            "try_lazy_timeout",
            hashwheel::try_lazy_timeout(D, async {}).map(drop),
        ),
        ("try_delay", hashwheel::try_delay(D).map(drop)),
        ("try_delay_at", hashwheel::try_delay_at(now).map(drop)),
        ("try_interval", hashwheel::try_interval(D).map(drop)),
        (
            "try_interval_at",
            hashwheel::try_interval_at(now, D).map(drop),
        ),
        (
            "try_spawn_after",
            hashwheel::try_spawn_after(D, async {}).map(drop),
        ),
        (
            "try_spawn_at",
            hashwheel::try_spawn_at(now, async {}).map(drop),
        ),
        ("DelayQueue::try_new", DelayQueue::<u8>::try_new().map(drop)),
        (
            "DelayQueue::try_with_capacity",
            DelayQueue::<u8>::try_with_capacity(8).map(drop),
        ),
    ]
}

/// Every `try_` form of a held `wheel`, by name, with what it returned.
fn every_wheel_try_form(wheel: &Wheel) -> Vec<(&'static str, Result<(), Error>)> {
    let now = Instant::now();
    vec![
        ("Wheel::try_sleep", wheel.try_sleep(D).map(drop)),
        (
            "Wheel::try_sleep_until",
            wheel.try_sleep_until(now).map(drop),
        ),
        (
            "Wheel::try_timeout",
            wheel.try_timeout(D, async {}).map(drop),
        ),
        (
            "Wheel::try_timeout_at",
            wheel.try_timeout_at(now, async {}).map(drop),
        ),
        (
            "Wheel::try_lazy_timeout",
            wheel.try_lazy_timeout(D, async {}).map(drop),
        ),
        ("Wheel::try_delay", wheel.try_delay(D).map(drop)),
        ("Wheel::try_delay_at", wheel.try_delay_at(now).map(drop)),
        ("Wheel::try_interval", wheel.try_interval(D).map(drop)),
        (
            "Wheel::try_interval_at",
            wheel.try_interval_at(now, D).map(drop),
        ),
        (
            "Wheel::try_spawn_after",
            wheel.try_spawn_after(D, async {}).map(drop),
        ),
        (
            "Wheel::try_spawn_at",
            wheel.try_spawn_at(now, async {}).map(drop),
        ),
        (
            "Wheel::try_delay_queue",
            wheel.try_delay_queue::<u8>().map(drop),
        ),
        (
            "Wheel::try_delay_queue_with_capacity",
            wheel.try_delay_queue_with_capacity::<u8>(8).map(drop),
        ),
    ]
}

type Plain = (&'static str, Box<dyn Fn()>);

/// Every plain form that finds the current runtime's default wheel, by the
/// name its panic message gives.
fn every_default_plain_form() -> Vec<Plain> {
    let now = Instant::now();
    vec![
        ("sleep", Box::new(|| drop(hashwheel::sleep(D)))),
        (
            "sleep_until",
            Box::new(move || drop(hashwheel::sleep_until(now))),
        ),
        (
            "timeout",
            Box::new(|| drop(hashwheel::timeout(D, async {}))),
        ),
        (
            "timeout_at",
            Box::new(move || drop(hashwheel::timeout_at(now, async {}))),
        ),
        ("delay", Box::new(|| drop(hashwheel::delay(D)))),
        ("delay_at", Box::new(move || drop(hashwheel::delay_at(now)))),
        ("interval", Box::new(|| drop(hashwheel::interval(D)))),
        (
            "interval_at",
            Box::new(move || drop(hashwheel::interval_at(now, D))),
        ),
        (
            "spawn_after",
            Box::new(|| drop(hashwheel::spawn_after(D, async {}))),
        ),
        (
            "spawn_at",
            Box::new(move || drop(hashwheel::spawn_at(now, async {}))),
        ),
        (
            "DelayQueue::new",
            Box::new(|| drop(DelayQueue::<u8>::new())),
        ),
        (
            "DelayQueue::with_capacity",
            Box::new(|| drop(DelayQueue::<u8>::with_capacity(8))),
        ),
        ("Wheel::current", Box::new(|| drop(Wheel::current()))),
    ]
}

/// Runs `f`, which must panic, and returns its message.
fn panic_message(f: impl FnOnce()) -> String {
    let err =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).expect_err("a documented panic");
    match err.downcast::<String>() {
        Ok(s) => *s,
        Err(e) => e.downcast::<&str>().map(|s| s.to_string()).unwrap(),
    }
}

/// Which predicates hold, in the order no_runtime, no_timer, at_capacity,
/// shutdown, cancelled: exactly one does for any error.
fn predicates(e: &Error) -> [bool; 5] {
    [
        e.is_no_runtime(),
        e.is_no_timer(),
        e.is_at_capacity(),
        e.is_shutdown(),
        e.is_cancelled(),
    ]
}

fn poll_once<F: Future>(f: F) -> Poll<F::Output> {
    pin!(f).poll(&mut Context::from_waker(Waker::noop()))
}

const NO_RUNTIME: [bool; 5] = [true, false, false, false, false];
const NO_TIMER: [bool; 5] = [false, true, false, false, false];
const AT_CAPACITY: [bool; 5] = [false, false, true, false, false];

/// Every one of `forms` failed with the error whose predicates are `want`
/// and which displays `message`.
fn assert_all_fail(forms: Vec<(&'static str, Result<(), Error>)>, want: [bool; 5], message: &str) {
    for (name, r) in forms {
        let e = r.expect_err(name);
        assert_eq!(predicates(&e), want, "{name}");
        assert_eq!(e.to_string(), message, "{name}");
    }
}

/// A runtime built without `enable_time`.
fn runtime_without_timer() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

// ===== no runtime =====

#[test]
fn outside_a_runtime_every_try_form_is_a_no_runtime_error() {
    assert_all_fail(
        every_default_try_form(),
        NO_RUNTIME,
        "there is no reactor running, must be called from the context of a Tokio 1.x runtime",
    );
    assert_eq!(predicates(&Wheel::try_current().unwrap_err()), NO_RUNTIME);
}

/// A held wheel needs no runtime to make timers; spawning does, and says so.
#[test]
fn outside_a_runtime_a_held_wheel_makes_timers_but_cannot_spawn() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let wheel = rt.block_on(async { Wheel::new() });
    for (name, r) in every_wheel_try_form(&wheel) {
        match name {
            "Wheel::try_spawn_after" | "Wheel::try_spawn_at" => {
                assert_eq!(predicates(&r.expect_err(name)), NO_RUNTIME, "{name}")
            }
            _ => r.expect(name),
        }
    }
    let msg = panic_message(|| drop(wheel.spawn_after(D, async {})));
    assert_eq!(
        msg,
        "hashwheel::Wheel::spawn_after must be called from the context of a Tokio 1.x runtime"
    );
}

/// The error converts into an `io::Error` of kind `Other` that carries it.
#[test]
fn an_error_converts_into_an_io_error_that_carries_it() {
    let e = hashwheel::try_sleep(D).unwrap_err();
    let io: std::io::Error = e.into();
    assert_eq!(io.kind(), std::io::ErrorKind::Other);
    let inner = io.get_ref().unwrap().downcast_ref::<Error>().unwrap();
    assert_eq!(*inner, e);
}

// ===== a runtime built without its timer =====

#[test]
fn without_a_timer_every_try_form_is_a_no_timer_error() {
    let rt = runtime_without_timer();
    let _entered = rt.enter();
    // Twice: the second time the runtime is known to have no timer.
    for _ in 0..2 {
        assert_all_fail(
            every_default_try_form(),
            NO_TIMER,
            "the Tokio runtime has no timer: build it with enable_time() or enable_all()",
        );
        assert_eq!(predicates(&Wheel::try_current().unwrap_err()), NO_TIMER);
    }
    // `Builder` keeps its own error type for the same condition.
    assert!(Wheel::builder().build().unwrap_err().is_no_timer());
    assert!(Wheel::builder().build_default().unwrap_err().is_no_timer());
}

#[test]
fn without_a_timer_the_try_forms_fail_inside_a_task_too() {
    let rt = runtime_without_timer();
    let errs = rt.block_on(async {
        tokio::spawn(async {
            every_default_try_form()
                .into_iter()
                .map(|(name, r)| (name, r.err().map(|e| predicates(&e))))
                .collect::<Vec<_>>()
        })
        .await
        .unwrap()
    });
    for (name, e) in errs {
        assert_eq!(e, Some(NO_TIMER), "{name}");
    }
}

#[test]
fn without_a_timer_every_plain_form_panics_naming_itself() {
    let rt = runtime_without_timer();
    let _entered = rt.enter();
    for (name, f) in every_default_plain_form() {
        assert_eq!(
            panic_message(f),
            format!(
                "hashwheel::{name}: the Tokio runtime has no timer: \
                 build it with enable_time() or enable_all()"
            )
        );
    }
}

/// The reported bug: `hashwheel::io` promises an error, never a panic, for
/// a read that needs a timer it cannot have.
#[test]
fn without_a_timer_a_timed_read_fails_with_an_error_not_a_panic() {
    let rt = runtime_without_timer();
    rt.block_on(async {
        let (_peer, socket) = tokio::io::duplex(64);
        let mut reader = TimeoutReader::new(socket);
        reader.set_timeout(Some(Duration::from_secs(1)));
        let mut buf = [0; 8];
        let e = reader.read(&mut buf).await.unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::Other);
        let inner = e.get_ref().unwrap().downcast_ref::<Error>().unwrap();
        assert_eq!(predicates(inner), NO_TIMER);
        // With no timeout, the same reader reads as the stream does.
        reader.set_timeout(None);
        let (mut peer, socket) = tokio::io::duplex(64);
        let mut reader = TimeoutReader::new(socket);
        tokio::io::AsyncWriteExt::write_all(&mut peer, b"hi")
            .await
            .unwrap();
        assert_eq!(reader.read(&mut buf).await.unwrap(), 2);
    });
}

/// A lazy timeout made by the free function finds its wheel when first
/// pending: without a timer that is a panic naming it; its `try_` form
/// fails when made instead.
#[test]
fn without_a_timer_a_lazy_timeout_fails_when_made_or_panics_when_pending() {
    let rt = runtime_without_timer();
    let _entered = rt.enter();
    let ready = hashwheel::lazy_timeout(MINUTE, async { 5 });
    assert_eq!(poll_once(ready), Poll::Ready(Ok(5)));
    let msg = panic_message(|| {
        let _ = poll_once(hashwheel::lazy_timeout(
            MINUTE,
            std::future::pending::<()>(),
        ));
    });
    assert_eq!(
        msg,
        "hashwheel::lazy_timeout: the Tokio runtime has no timer: \
         build it with enable_time() or enable_all()"
    );
    let made = hashwheel::try_lazy_timeout(MINUTE, async {});
    assert!(made.err().is_some_and(|e| e.is_no_timer()));
}

// ===== a runtime shutting down =====

/// Runs `f` when dropped.
struct OnDrop<F: FnOnce()>(Option<F>);

impl<F: FnOnce()> Drop for OnDrop<F> {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f();
        }
    }
}

/// What `f` returns when run from the destructor of a task that a runtime
/// drops as it shuts down (after the runtime's default wheel was made).
fn during_shutdown<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    rt.block_on(async {
        hashwheel::sleep(D).await; // the default wheel exists
        tokio::spawn(async move {
            let _guard = OnDrop(Some(move || tx.send(f()).unwrap()));
            std::future::pending::<()>().await
        });
        tokio::task::yield_now().await;
    });
    drop(rt);
    rx.recv().unwrap()
}

/// While a runtime drops its tasks, the `try_` forms called from a task's
/// destructor return timers of a shut-down wheel, not errors and not
/// panics.
#[test]
fn while_a_runtime_shuts_down_the_try_forms_hand_out_timers() {
    for (name, r) in during_shutdown(every_default_try_form) {
        r.expect(name);
    }
}

/// Those timers, and the plain forms', never hang: once the shutdown is
/// over (whether the default wheel's driver was dropped before or after
/// the task that made them), they are finished.
#[test]
fn while_a_runtime_shuts_down_timers_made_then_finish_with_it() {
    let (sleep, delay, plain) = during_shutdown(|| {
        (
            hashwheel::try_sleep(MINUTE).unwrap(),
            hashwheel::try_delay(MINUTE).unwrap(),
            hashwheel::sleep(MINUTE),
        )
    });
    assert!(poll_once(sleep).is_ready() && poll_once(plain).is_ready());
    let delay = poll_once(delay);
    assert!(matches!(delay, Poll::Ready(Err(e)) if e.is_shutdown()));
}

// ===== a wheel at capacity =====

#[tokio::test(start_paused = true)]
async fn at_capacity_every_try_form_is_an_at_capacity_error_until_there_is_room() {
    let wheel = Wheel::builder().max_timers(1).build_default().unwrap();
    let held = Wheel::builder().max_timers(1).build().unwrap();
    let a = hashwheel::sleep(MINUTE);
    let b = held.sleep(MINUTE);
    let forms = every_default_try_form()
        .into_iter()
        .chain(every_wheel_try_form(&held))
        .collect();
    assert_all_fail(
        forms,
        AT_CAPACITY,
        "the timer wheel is at capacity (max_timers timers are alive)",
    );
    // Each refusal is counted once.
    assert_eq!(wheel.metrics().refused_count(), 13);
    // Transient: room again once a timer goes.
    drop((a, b));
    hashwheel::try_sleep(D).unwrap().await;
    held.try_delay(D).unwrap().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn at_capacity_every_plain_form_panics_naming_itself() {
    Wheel::builder().max_timers(1).build_default().unwrap();
    let _a = hashwheel::sleep(MINUTE);
    for (name, f) in every_default_plain_form() {
        if name == "Wheel::current" {
            continue; // It makes no timer.
        }
        assert_eq!(
            panic_message(f),
            format!(
                "hashwheel::{name}: the timer wheel is at capacity (max_timers timers are alive)"
            )
        );
    }
    let held = Wheel::builder().max_timers(1).build().unwrap();
    let _b = held.sleep(MINUTE);
    let msg = panic_message(|| drop(held.delay_queue_with_capacity::<u8>(8)));
    assert_eq!(
        msg,
        "hashwheel::Wheel::delay_queue_with_capacity: the timer wheel is at capacity \
         (max_timers timers are alive)"
    );
    let msg = panic_message(|| drop(held.interval(D)));
    assert!(msg.starts_with("hashwheel::Wheel::interval: "), "{msg}");
}

/// A full wheel fails a timed read with an error it can retry.
#[tokio::test(start_paused = true)]
async fn at_capacity_a_timed_read_fails_with_a_transient_error() {
    let wheel = Wheel::builder().max_timers(1).build().unwrap();
    let hog = wheel.sleep(MINUTE);
    let (_peer, socket) = tokio::io::duplex(64);
    let mut reader = TimeoutReader::with_wheel(&wheel, socket);
    reader.set_timeout(Some(Duration::from_secs(1)));
    let mut buf = [0; 8];
    let e = reader.read(&mut buf).await.unwrap_err();
    let inner = e.get_ref().unwrap().downcast_ref::<Error>().unwrap();
    assert_eq!(predicates(inner), AT_CAPACITY);
    drop(hog);
    let start = Instant::now();
    let e = reader.read(&mut buf).await.unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
    assert!(start.elapsed() >= Duration::from_secs(1));
}

// ===== a wheel that has shut down =====

/// A shut-down wheel still hands out timers (they complete at once, a
/// `Delay` with `is_shutdown`), so its `try_` forms succeed; a timed read on
/// it fails with `is_shutdown`.
#[tokio::test(start_paused = true)]
async fn a_shut_down_wheel_hands_out_finished_timers_and_fails_timed_reads() {
    let wheel = Wheel::new();
    wheel.shutdown();
    for (name, r) in every_wheel_try_form(&wheel) {
        r.expect(name);
    }
    wheel.try_sleep(MINUTE).unwrap().await;
    let e = wheel.try_delay(MINUTE).unwrap().await.unwrap_err();
    assert_eq!(predicates(&e), [false, false, false, true, false]);
    assert!(wheel
        .try_timeout(MINUTE, std::future::pending::<()>())
        .unwrap()
        .await
        .is_err());
    let (_peer, socket) = tokio::io::duplex(64);
    let mut reader = TimeoutReader::with_wheel(&wheel, socket);
    reader.set_timeout(Some(Duration::from_secs(1)));
    let e = reader.read(&mut [0; 8]).await.unwrap_err();
    let inner = e.get_ref().unwrap().downcast_ref::<Error>().unwrap();
    assert!(inner.is_shutdown());
}

/// The default wheel shut down is replaced on the next use: the `try_`
/// forms then work on the new one.
#[tokio::test(start_paused = true)]
async fn a_shut_down_default_wheel_is_replaced_for_the_try_forms() {
    let old = Wheel::try_current().unwrap();
    old.shutdown();
    let start = Instant::now();
    hashwheel::try_sleep(Duration::from_millis(10))
        .unwrap()
        .await;
    assert!(start.elapsed() >= Duration::from_millis(10), "a live wheel");
    assert!(!Wheel::try_current().unwrap().is_shutdown());
}
