//! The free functions (`hashwheel::sleep`, `timeout`, ...) and the default
//! wheel they find through the current runtime, under the situations that
//! break a naive global: many runtimes in one process (every
//! `#[tokio::test]` here is one, and they run in parallel), runtimes dropped
//! and rebuilt on one thread, current-thread and multi-thread flavours,
//! `block_on` and `spawn_blocking` threads, and futures moved between
//! runtimes.
//!
//! Where timing matters the tests run on tokio's paused clock; the
//! multi-thread ones (which cannot pause it) assert outcomes, never times,
//! and use timers that either complete at once or lie a minute away.

use std::future::{pending, Future};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use hashwheel::{
    delay, delay_at, interval, interval_at, sleep, sleep_until, spawn_after, timeout, timeout_at,
    Wheel,
};
use tokio::runtime::{Builder as RtBuilder, Runtime};
use tokio::time::Instant;
use tokio::time::MissedTickBehavior;

const MINUTE: Duration = Duration::from_secs(60);

/// Polls `f` once with a no-op waker; true when it is still pending.
fn pending_after_one_poll<F: Future + Unpin>(f: &mut F) -> bool {
    let mut cx = Context::from_waker(Waker::noop());
    Pin::new(f).poll(&mut cx).is_pending()
}

fn current_thread(paused: bool) -> Runtime {
    RtBuilder::new_current_thread()
        .enable_time()
        .start_paused(paused)
        .build()
        .unwrap()
}

fn multi_thread(workers: usize) -> Runtime {
    RtBuilder::new_multi_thread()
        .worker_threads(workers)
        .enable_time()
        .build()
        .unwrap()
}

/// The current runtime's default wheel has served no timer yet: it is this
/// runtime's own, not one shared with the other tests running in parallel.
fn assert_fresh_default_wheel() -> Wheel {
    let wheel = Wheel::current();
    let m = wheel.metrics();
    assert!(!wheel.is_shutdown());
    assert_eq!(
        (m.num_pending(), m.fired_count(), m.cancelled_count()),
        (0, 0, 0),
        "a new runtime starts with a new default wheel"
    );
    wheel
}

// ===== the same scenarios under many runtimes =====

/// tokio's kind of timer scenarios on the paused clock, exact to the tick.
async fn paused_scenario() {
    let wheel = assert_fresh_default_wheel();
    let start = Instant::now();

    sleep(Duration::from_millis(10)).await;
    assert_eq!(start.elapsed(), Duration::from_millis(10));

    sleep_until(start + Duration::from_millis(25)).await;
    assert_eq!(start.elapsed(), Duration::from_millis(25));

    sleep(Duration::ZERO).await;
    sleep_until(start).await; // in the past
    assert_eq!(start.elapsed(), Duration::from_millis(25));

    let err = timeout(Duration::from_millis(5), pending::<()>()).await;
    assert_eq!(err.unwrap_err().to_string(), "deadline has elapsed");
    assert_eq!(start.elapsed(), Duration::from_millis(30));

    assert_eq!(timeout(MINUTE, async { 7 }).await, Ok(7));
    let (tx, rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        sleep(Duration::from_millis(3)).await;
        tx.send(8).unwrap();
    });
    assert_eq!(timeout(MINUTE, rx).await.unwrap(), Ok(8));
    assert_eq!(start.elapsed(), Duration::from_millis(33));

    let slow = tokio::time::sleep(MINUTE);
    assert!(timeout_at(start + Duration::from_millis(40), slow)
        .await
        .is_err());
    assert_eq!(start.elapsed(), Duration::from_millis(40));

    assert!(delay(Duration::from_millis(5)).await.is_ok());
    assert!(delay_at(start + Duration::from_millis(50)).await.is_ok());
    assert_eq!(start.elapsed(), Duration::from_millis(50));

    let cancelled = delay(MINUTE);
    assert!(cancelled.handle().cancel());
    assert!(cancelled.await.unwrap_err().is_cancelled());

    // A one-day sleep completes at once under auto-advance.
    sleep(Duration::from_secs(86_400)).await;
    assert_eq!(
        start.elapsed(),
        Duration::from_secs(86_400) + Duration::from_millis(50)
    );

    // An interval: the first tick at once, then every 10 ms; a busy task
    // misses ticks, which `Skip` drops, as tokio's does.
    let t0 = Instant::now();
    let mut ticks = interval(Duration::from_millis(10));
    assert_eq!(ticks.tick().await, t0);
    assert_eq!(ticks.tick().await, t0 + Duration::from_millis(10));
    ticks.set_missed_tick_behavior(MissedTickBehavior::Skip);
    tokio::time::sleep(Duration::from_millis(35)).await; // busy: 20, 30, 40 pass
    assert_eq!(ticks.tick().await, t0 + Duration::from_millis(20)); // due, at once
    assert_eq!(ticks.tick().await, t0 + Duration::from_millis(50));

    let later = Instant::now() + Duration::from_millis(7);
    let mut ticks = interval_at(later, Duration::from_millis(3));
    assert_eq!(ticks.tick().await, later);
    assert_eq!(ticks.tick().await, later + Duration::from_millis(3));

    // A task spawned after 5 ms through the wheel, and one cancelled.
    let (tx, rx) = tokio::sync::oneshot::channel();
    let at = Instant::now();
    let spawned = spawn_after(Duration::from_millis(5), async move {
        tx.send(Instant::now()).unwrap();
    });
    assert_eq!(rx.await.unwrap(), at + Duration::from_millis(5));
    assert!(spawned.is_expired());
    let cancelled = spawn_after(MINUTE, async { unreachable!("cancelled") });
    assert!(cancelled.cancel());

    // Every timer above ran on this runtime's default wheel; these fired:
    // 10 ms, 25 ms, the two timeouts that elapsed, the spawned 3 ms sleep,
    // the two delays, the day, four interval ticks (two more were due at
    // once), the spawned task.
    let m = wheel.metrics();
    assert_eq!(m.fired_count(), 13);
    assert_eq!(m.num_pending(), 0);
    assert!(!wheel.is_shutdown());
}

/// Timers from several workers and the `block_on` thread all land in the
/// one default wheel of the runtime. Real clock: outcomes only.
async fn multi_thread_scenario() {
    let wheel = assert_fresh_default_wheel();

    sleep(Duration::from_millis(1)).await;
    assert!(timeout(Duration::from_millis(1), pending::<()>())
        .await
        .is_err());
    assert_eq!(timeout(MINUTE, async { 1 }).await, Ok(1));
    assert!(delay(Duration::from_millis(1)).await.is_ok());

    // Four tasks, spread over the workers, each register a one-minute
    // sleep and hold it until told to let go.
    let go = Arc::new(tokio::sync::Notify::new());
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel(4);
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let go = go.clone();
        let ready_tx = ready_tx.clone();
        tasks.push(tokio::spawn(async move {
            let mut far = sleep(MINUTE);
            assert!(futures::poll!(&mut far).is_pending());
            let released = go.notified();
            ready_tx.send(()).await.unwrap();
            released.await;
            drop(far);
        }));
    }
    for _ in 0..4 {
        ready_rx.recv().await.unwrap();
    }
    assert_eq!(wheel.metrics().num_pending(), 4);
    go.notify_waiters();
    for t in tasks {
        t.await.unwrap();
    }
    let m = wheel.metrics();
    assert_eq!((m.num_pending(), m.cancelled_count()), (0, 4));
}

macro_rules! paused_runtimes {
    ($($name:ident)*) => {$(
        #[tokio::test(start_paused = true)]
        async fn $name() {
            paused_scenario().await;
        }
    )*};
}

macro_rules! multi_thread_runtimes {
    ($($name:ident)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            multi_thread_scenario().await;
        }
    )*};
}

paused_runtimes! {
    paused_01 paused_02 paused_03 paused_04 paused_05 paused_06
    paused_07 paused_08 paused_09 paused_10 paused_11 paused_12
    paused_13 paused_14 paused_15 paused_16 paused_17 paused_18
    paused_19 paused_20 paused_21 paused_22 paused_23 paused_24
}

multi_thread_runtimes! {
    multi_thread_01 multi_thread_02 multi_thread_03 multi_thread_04
    multi_thread_05 multi_thread_06 multi_thread_07 multi_thread_08
    multi_thread_09 multi_thread_10 multi_thread_11 multi_thread_12
}

/// A current-thread runtime on the real clock (the `#[tokio::test]`
/// default): the same isolation, outcomes only.
#[tokio::test]
async fn current_thread_real_clock() {
    let wheel = assert_fresh_default_wheel();
    sleep(Duration::from_millis(1)).await;
    assert!(timeout(Duration::from_millis(1), pending::<()>())
        .await
        .is_err());
    let mut far = sleep(MINUTE);
    assert!(futures::poll!(&mut far).is_pending());
    assert_eq!(wheel.metrics().num_pending(), 1);
    drop(far);
    assert_eq!(wheel.metrics().num_pending(), 0);
}

// ===== runtimes that come and go =====

/// Runtimes built and dropped in a loop on one thread, both flavours: each
/// gets a new default wheel, which shuts down when its runtime is dropped;
/// timers made in a dead runtime complete instead of hanging.
#[test]
fn runtimes_built_and_dropped_in_a_loop_on_one_thread() {
    let mut previous: Option<Wheel> = None;
    for i in 0..40 {
        let rt = if i % 2 == 0 {
            current_thread(true)
        } else {
            multi_thread(1)
        };
        let (wheel, mut left_sleep, mut left_delay) = rt.block_on(async {
            let wheel = assert_fresh_default_wheel();
            if i % 2 == 0 {
                let start = Instant::now();
                sleep(Duration::from_millis(10)).await;
                assert_eq!(start.elapsed(), Duration::from_millis(10));
                assert_eq!(wheel.metrics().fired_count(), 1);
            }
            let mut s = sleep(MINUTE);
            let mut d = delay(MINUTE);
            assert!(futures::poll!(&mut s).is_pending());
            assert!(futures::poll!(&mut d).is_pending());
            assert_eq!(wheel.metrics().num_pending(), 2);
            (wheel, s, d)
        });
        if let Some(p) = &previous {
            assert!(p.is_shutdown());
        }
        assert!(!wheel.is_shutdown());
        drop(rt);
        assert!(wheel.is_shutdown(), "the runtime took its wheel down");
        assert!(!pending_after_one_poll(&mut left_sleep));
        let mut cx = Context::from_waker(Waker::noop());
        match Pin::new(&mut left_delay).poll(&mut cx) {
            Poll::Ready(Err(e)) => assert!(e.is_shutdown()),
            other => panic!("a delay on a dead runtime's wheel gave {other:?}"),
        }
        previous = Some(wheel);
    }
}

/// A runtime shut down and a new one started on the same thread, where the
/// thread's cache still points at the old runtime's wheel.
#[test]
fn new_runtime_on_the_same_thread_after_shutdown() {
    let first = current_thread(true);
    let old = first.block_on(async {
        sleep(Duration::from_millis(1)).await;
        Wheel::current()
    });
    first.shutdown_background();
    assert!(old.is_shutdown());

    let second = current_thread(true);
    second.block_on(async {
        let wheel = assert_fresh_default_wheel();
        let start = Instant::now();
        sleep(Duration::from_millis(20)).await;
        assert_eq!(start.elapsed(), Duration::from_millis(20));
        assert_eq!(wheel.metrics().fired_count(), 1);
    });
}

/// Futures made in a runtime that is then dropped, polled in another one:
/// they complete (a `Delay` with the shutdown error) and leave the other
/// runtime's default wheel alone.
#[test]
fn futures_from_a_dead_runtime_polled_in_another() {
    let a = current_thread(true);
    let (s, d, t) = a.block_on(async {
        let mut s = sleep(MINUTE);
        let mut d = delay(MINUTE);
        let mut t = timeout(MINUTE, pending::<()>());
        assert!(futures::poll!(&mut s).is_pending());
        assert!(futures::poll!(&mut d).is_pending());
        assert!(futures::poll!(&mut t).is_pending());
        (s, d, t)
    });
    drop(a);

    let b = current_thread(true);
    b.block_on(async {
        let wheel = assert_fresh_default_wheel();
        let start = Instant::now();
        s.await;
        assert!(d.await.unwrap_err().is_shutdown());
        assert!(t.await.is_err());
        assert_eq!(start.elapsed(), Duration::ZERO);
        assert_eq!(wheel.metrics().fired_count(), 0);
        assert!(!wheel.is_shutdown());
    });
}

/// A future made in a live multi-thread runtime works when polled in
/// another runtime: its wheel's driver runs on the first one's workers.
#[test]
fn future_from_a_live_runtime_polled_in_another() {
    let a = multi_thread(1);
    let s = {
        let _in_a = a.enter();
        sleep(Duration::from_millis(2))
    };
    let b = current_thread(false);
    b.block_on(async {
        let own = assert_fresh_default_wheel();
        s.await;
        assert_eq!(own.metrics().fired_count(), 0);
    });
    let fired = a.block_on(async { Wheel::current().metrics().fired_count() });
    assert!(fired <= 1, "at most the one timer, on a's wheel");
    assert_eq!(
        a.block_on(async { Wheel::current().metrics().num_pending() }),
        0
    );
}

/// Two runtimes alive at once, entered in turn on one plain thread: each
/// call goes to the wheel of the runtime entered at the time, although the
/// thread's cache keeps flipping.
#[test]
fn alternating_runtimes_on_one_thread() {
    let a = multi_thread(1);
    let b = current_thread(false);
    let mut held = Vec::new();
    for i in 0..10 {
        let rt = if i % 2 == 0 { &a } else { &b };
        let _entered = rt.enter();
        let mut s = sleep(MINUTE);
        assert!(pending_after_one_poll(&mut s));
        held.push(s);
    }
    let pending_in = |rt: &Runtime| rt.block_on(async { Wheel::current().metrics().num_pending() });
    assert_eq!((pending_in(&a), pending_in(&b)), (5, 5));

    // Shutting one runtime's default wheel down leaves the other's alone.
    let shut = b.block_on(async { Wheel::current().shutdown() });
    assert_eq!(shut, 5);
    assert_eq!(pending_in(&a), 5);
    drop(held);
    assert_eq!(pending_in(&a), 0);
}

/// `block_on` from plain threads, through the runtime and through a
/// `Handle`, serves the runtime's own default wheel.
#[test]
fn block_on_from_plain_threads() {
    let rt = multi_thread(2);
    let handle = rt.handle().clone();
    let wheel = rt.block_on(async { assert_fresh_default_wheel() });

    let (tx, rx) = std::sync::mpsc::channel();
    let release = Arc::new(std::sync::Barrier::new(4));
    let threads: Vec<_> = (0..3)
        .map(|_| {
            let handle = handle.clone();
            let tx = tx.clone();
            let release = release.clone();
            std::thread::spawn(move || {
                let mut far = None;
                handle.block_on(async {
                    sleep(Duration::from_millis(1)).await;
                    assert!(delay(Duration::from_millis(1)).await.is_ok());
                    let mut s = sleep(MINUTE);
                    assert!(futures::poll!(&mut s).is_pending());
                    far = Some(s);
                });
                tx.send(()).unwrap();
                // Hold the registered sleep until the main thread has looked.
                release.wait();
                drop(far);
            })
        })
        .collect();
    for _ in 0..3 {
        rx.recv().unwrap();
    }
    assert_eq!(wheel.metrics().num_pending(), 3);
    release.wait();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(wheel.metrics().num_pending(), 0);
    assert_eq!(wheel.metrics().cancelled_count(), 3);
}

/// `spawn_blocking` threads find their runtime's default wheel, on both
/// flavours.
async fn spawn_blocking_scenario() {
    let wheel = assert_fresh_default_wheel();
    let far = tokio::task::spawn_blocking(|| {
        let handle = tokio::runtime::Handle::current();
        let mut far = None;
        handle.block_on(async {
            assert!(timeout(MINUTE, async { 1 }).await.is_ok());
            let mut s = sleep(MINUTE);
            assert!(futures::poll!(&mut s).is_pending());
            far = Some(s);
        });
        far
    })
    .await
    .unwrap();
    assert_eq!(wheel.metrics().num_pending(), 1);
    drop(far);
    assert_eq!(wheel.metrics().num_pending(), 0);
}

#[tokio::test]
async fn spawn_blocking_current_thread() {
    spawn_blocking_scenario().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawn_blocking_multi_thread() {
    spawn_blocking_scenario().await;
}

// ===== configuration and shutdown =====

#[tokio::test(start_paused = true)]
async fn build_default_configures_the_runtime_once() {
    let wheel = Wheel::builder()
        .tick(Duration::from_millis(10))
        .max_timers(2)
        .build_default()
        .unwrap();
    assert_eq!(Wheel::current().tick(), Duration::from_millis(10));
    assert_eq!(wheel.tick(), Duration::from_millis(10));

    let err = Wheel::builder().build_default().unwrap_err();
    assert!(err.is_default_exists());
    assert!(err.to_string().contains("already has a default wheel"));

    let start = Instant::now();
    sleep(Duration::from_millis(25)).await;
    assert_eq!(start.elapsed(), Duration::from_millis(30));

    // The bound applies to the free functions, which panic at it.
    let _a = sleep(MINUTE);
    let _b = sleep(MINUTE);
    let msg = panic_message(|| drop(timeout(MINUTE, async {})));
    assert_eq!(
        msg,
        "hashwheel::timeout: the timer wheel is at capacity (max_timers timers are alive)"
    );
}

#[tokio::test(start_paused = true)]
async fn build_default_after_first_use_is_refused() {
    sleep(Duration::from_millis(1)).await;
    let err = Wheel::builder()
        .tick(Duration::from_millis(5))
        .build_default()
        .unwrap_err();
    assert!(err.is_default_exists());
    assert_eq!(Wheel::current().tick(), Duration::from_millis(1));
}

#[tokio::test(start_paused = true)]
async fn build_default_reports_a_bad_configuration() {
    let err = Wheel::builder().buckets(0).build_default().unwrap_err();
    assert_eq!(err.to_string(), "buckets must be at least 1");
    // Nothing was installed: the first use still builds the default.
    assert_eq!(assert_fresh_default_wheel().buckets(), 4096);
}

/// Shutting the default wheel down completes its timers; the runtime's next
/// timer gets a new default wheel, and `build_default` may configure it.
#[tokio::test(start_paused = true)]
async fn shut_down_default_wheel_is_replaced_on_next_use() {
    let old = Wheel::current();
    let waiter = tokio::spawn(delay(MINUTE));
    tokio::task::yield_now().await;
    assert_eq!(old.shutdown(), 1);
    assert!(waiter.await.unwrap().unwrap_err().is_shutdown());

    let start = Instant::now();
    sleep(Duration::from_millis(10)).await;
    assert_eq!(start.elapsed(), Duration::from_millis(10));
    let new = Wheel::current();
    assert!(!new.is_shutdown());
    assert_eq!(new.metrics().fired_count(), 1);

    new.shutdown();
    let configured = Wheel::builder()
        .tick(Duration::from_millis(4))
        .build_default()
        .unwrap();
    assert_eq!(Wheel::current().tick(), Duration::from_millis(4));
    assert!(!configured.is_shutdown());
}

/// Entered into a runtime that has shut down, the free functions hand out
/// timers of a shut-down wheel: they complete at once and never hang.
#[test]
fn runtime_that_has_shut_down() {
    let rt = current_thread(false);
    let handle = rt.handle().clone();
    drop(rt);
    let _entered = handle.enter();
    assert!(Wheel::current().is_shutdown());
    futures::executor::block_on(async {
        sleep(MINUTE).await;
        assert!(timeout(MINUTE, pending::<()>()).await.is_err());
        assert!(delay(MINUTE).await.unwrap_err().is_shutdown());
    });
    assert!(Wheel::current().is_shutdown());
}

// ===== outside any runtime =====

/// Runs `f`, which must panic, and returns its message; the panic is kept
/// out of the test output.
fn panic_message(f: impl FnOnce()) -> String {
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_err();
    match err.downcast::<String>() {
        Ok(s) => *s,
        Err(e) => e.downcast::<&str>().map(|s| s.to_string()).unwrap(),
    }
}

/// Where the last panic on this thread was raised (file, line).
fn panic_location(f: impl FnOnce()) -> (String, u32) {
    type Seen = Arc<Mutex<Vec<(std::thread::ThreadId, String, u32)>>>;
    let seen: Seen = Arc::default();
    let prev = std::panic::take_hook();
    {
        let seen = seen.clone();
        std::panic::set_hook(Box::new(move |info| {
            if let Some(l) = info.location() {
                let me = std::thread::current().id();
                seen.lock()
                    .unwrap()
                    .push((me, l.file().to_string(), l.line()));
            }
        }));
    }
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    std::panic::set_hook(prev);
    let me = std::thread::current().id();
    let seen = seen.lock().unwrap();
    let (_, file, line) = seen.iter().rev().find(|(t, ..)| *t == me).unwrap();
    (file.clone(), *line)
}

#[test]
fn outside_a_runtime_every_function_panics_naming_itself() {
    let now = Instant::now();
    let d = Duration::from_millis(1);
    type Case = (&'static str, Box<dyn Fn()>);
    let cases: Vec<Case> = vec![
        ("sleep", Box::new(move || drop(sleep(d)))),
        ("sleep_until", Box::new(move || drop(sleep_until(now)))),
        ("timeout", Box::new(move || drop(timeout(d, async {})))),
        (
            "timeout_at",
            Box::new(move || drop(timeout_at(now, async {}))),
        ),
        ("delay", Box::new(move || drop(delay(d)))),
        ("delay_at", Box::new(move || drop(delay_at(now)))),
        ("interval", Box::new(move || drop(interval(d)))),
        ("interval_at", Box::new(move || drop(interval_at(now, d)))),
        (
            "spawn_after",
            Box::new(move || drop(spawn_after(d, async {}))),
        ),
        ("Wheel::current", Box::new(|| drop(Wheel::current()))),
    ];
    for (name, f) in &cases {
        assert_eq!(
            panic_message(f),
            format!("hashwheel::{name} must be called from the context of a Tokio 1.x runtime")
        );
    }
    assert!(Wheel::try_current().unwrap_err().is_no_runtime());
    assert!(Wheel::builder()
        .build_default()
        .unwrap_err()
        .is_no_runtime());
}

#[test]
fn the_panic_points_at_the_caller() {
    let (file, line) = panic_location(|| drop(sleep(Duration::from_millis(1))));
    assert_eq!((file.as_str(), line), (file!(), line!() - 1));
    let (file, _) = panic_location(|| drop(timeout(Duration::from_millis(1), async {})));
    assert_eq!(file, file!());
}

/// A panic raised by a helper that several functions share (a plain spawn
/// function over its `try_` twin, a `DelayQueue`'s key check, the claim of
/// a queue made outside a runtime) points at the caller too.
#[test]
fn a_shared_panic_points_at_the_caller() {
    // The panic of `$call` is raised on the line that calls it.
    macro_rules! panics_here {
        ($call:expr) => {{
            let (file, line) = panic_location(|| {
                let _ = $call;
            });
            let call = stringify!($call);
            assert_eq!((file.as_str(), line), (file!(), line!()), "{call}");
        }};
    }
    let now = Instant::now();
    panics_here!(spawn_after(MINUTE, async {}));
    panics_here!(hashwheel::spawn_at(now, async {}));
    // A queue made outside a runtime panics at its first insert.
    panics_here!(hashwheel::DelayQueue::new().insert((), MINUTE));
    let rt = current_thread(true);
    let wheel = rt.block_on(async { Wheel::new() });
    panics_here!(wheel.spawn_after(MINUTE, async {}));
    panics_here!(wheel.spawn_at(now, async {}));
    rt.block_on(async {
        let mut q = hashwheel::DelayQueue::new();
        let key = q.insert((), MINUTE);
        q.remove(&key);
        panics_here!(q.remove(&key));
        panics_here!(q.reset(&key, MINUTE));
        panics_here!(q.reset_at(&key, now));
        panics_here!(q.deadline(&key));
    });
}

#[test]
fn the_futures_are_send_sync_unpin() {
    fn check<T: Send + Sync + Unpin>(_: &T) {}
    let rt = current_thread(true);
    rt.block_on(async {
        check(&sleep(MINUTE));
        check(&timeout(MINUTE, std::future::ready(())));
        check(&delay(MINUTE));
        check(&Wheel::current());
    });
}

#[tokio::test(start_paused = true)]
async fn a_zero_period_panics_as_in_tokio() {
    let msg = panic_message(|| drop(interval(Duration::ZERO)));
    assert_eq!(msg, "`period` must be non-zero.");
    let msg = panic_message(|| drop(interval_at(Instant::now(), Duration::ZERO)));
    assert_eq!(msg, "`period` must be non-zero.");
}

/// `spawn_after` from a plain thread that entered a runtime spawns on that
/// runtime, timed by its default wheel.
#[test]
fn spawn_after_from_a_plain_thread() {
    let rt = multi_thread(1);
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = {
        let _entered = rt.enter();
        spawn_after(Duration::from_millis(1), async move {
            tx.send(tokio::runtime::Handle::current().id()).unwrap();
        })
    };
    assert_eq!(rx.recv().unwrap(), rt.handle().id());
    assert!(handle.is_expired());
}

/// Threads racing to make a fresh runtime's first timer all end up on the
/// one default wheel: the losers of the race get the winner's.
#[test]
fn first_use_raced_from_many_threads() {
    for _ in 0..20 {
        let rt = multi_thread(2);
        let start = Arc::new(std::sync::Barrier::new(8));
        let done = Arc::new(std::sync::Barrier::new(9));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let handle = rt.handle().clone();
                let (start, done) = (start.clone(), done.clone());
                std::thread::spawn(move || {
                    let _entered = handle.enter();
                    start.wait();
                    let mut far = sleep(MINUTE);
                    assert!(pending_after_one_poll(&mut far));
                    done.wait(); // registered
                    done.wait(); // counted
                })
            })
            .collect();
        done.wait();
        let pending = rt.block_on(async { Wheel::current().metrics().num_pending() });
        assert_eq!(pending, 8);
        done.wait();
        for t in threads {
            t.join().unwrap();
        }
    }
}
