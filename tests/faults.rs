//! Faults: panicking wakers, panicking and aborted tasks, runtime shutdown
//! with a million timers pending, a wheel moved to another runtime, and a
//! stalled driver. Each must leave no timer lost, early, stuck or leaked.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use hashwheel::Wheel;
use tokio::time::Instant;
use tokio_test::{assert_pending, assert_ready, task};

const MS: Duration = Duration::from_millis(1);

/// A waker that panics when woken.
struct Bomb;

impl Wake for Bomb {
    fn wake(self: Arc<Self>) {
        panic!("this waker panics (on purpose)");
    }
}

fn poll_with<F: Future + Unpin>(f: &mut F, w: &Waker) -> Poll<F::Output> {
    Pin::new(f).poll(&mut Context::from_waker(w))
}

/// Yields until `f` holds, at most 64 times.
async fn until(what: &str, mut f: impl FnMut() -> bool) {
    for _ in 0..64 {
        if f() {
            return;
        }
        tokio::task::yield_now().await;
    }
    panic!("never happened: {what}");
}

// ===== panicking wakers =====

#[tokio::test(start_paused = true)]
async fn a_waker_that_panics_stops_neither_the_driver_nor_other_timers() {
    let wheel = Wheel::builder().shards(1).build().unwrap();
    let bomb = Waker::from(Arc::new(Bomb));
    let mut bombed = wheel.sleep(10 * MS);
    assert!(poll_with(&mut bombed, &bomb).is_pending());
    let mut bombed_delay = wheel.delay(30 * MS);
    assert!(poll_with(&mut bombed_delay, &bomb).is_pending());

    let w = wheel.clone();
    let other = tokio::spawn(async move {
        let start = Instant::now();
        w.sleep(10 * MS).await; // fires in the same batch as the bomb
        w.sleep(10 * MS).await; // and after it
        assert!(w.delay(20 * MS).await.is_ok());
        start.elapsed()
    });
    tokio::time::sleep(100 * MS).await;
    assert_eq!(other.await.unwrap(), 40 * MS);
    // Both bombs went off in the driver (the delay's through its own waker,
    // which wakes the task's), were caught and counted.
    assert_eq!(wheel.metrics().waker_panic_count(), 2);
    let noop = Waker::noop();
    assert!(poll_with(&mut bombed, noop).is_ready());
    assert!(matches!(
        poll_with(&mut bombed_delay, noop),
        Poll::Ready(Ok(()))
    ));

    // Shutdown wakes through the same guard.
    let mut late = wheel.sleep(Duration::from_secs(60));
    assert!(poll_with(&mut late, &bomb).is_pending());
    assert_eq!(wheel.shutdown(), 1);
    assert_eq!(wheel.metrics().waker_panic_count(), 3);
    assert!(poll_with(&mut late, noop).is_ready());
}

// ===== tasks that panic or are aborted =====

#[tokio::test(start_paused = true)]
async fn a_task_that_panics_holding_timers_leaves_no_entry() {
    let wheel = Wheel::new();
    let w = wheel.clone();
    let task = tokio::spawn(async move {
        let mut s = w.sleep(Duration::from_secs(3600));
        let mut d = w.delay(Duration::from_secs(3600));
        let mut t = w.timeout(Duration::from_secs(3600), std::future::pending::<()>());
        assert!(futures::poll!(&mut s).is_pending());
        assert!(futures::poll!(&mut d).is_pending());
        assert!(futures::poll!(&mut t).is_pending());
        assert_eq!(w.metrics().num_pending(), 3);
        panic!("the task panics (on purpose)");
    });
    assert!(task.await.unwrap_err().is_panic());
    let m = wheel.metrics();
    assert_eq!((m.num_pending(), m.num_entries()), (0, 0));
    assert_eq!(m.cancelled_count(), 3);
}

#[tokio::test(start_paused = true)]
async fn an_aborted_task_leaves_no_entry() {
    let wheel = Wheel::new();
    let w = wheel.clone();
    let task = tokio::spawn(async move {
        let delay = w.delay(Duration::from_secs(7200));
        w.timeout(Duration::from_secs(3600), delay).await
    });
    let m = wheel.clone();
    until("the task registered both timers", || {
        m.metrics().num_pending() == 2
    })
    .await;
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    let m = wheel.metrics();
    assert_eq!((m.num_pending(), m.num_entries()), (0, 0));
}

// ===== runtime shutdown =====

#[test]
fn runtime_shutdown_with_a_million_timers_pending_leaks_nothing() {
    const N: usize = 1_000_000;
    const OUTSIDE: usize = 1000;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let wheel = rt.block_on(async { Wheel::new() });
    let w = wheel.clone();
    // A million timers held by a task that never finishes.
    rt.block_on(async {
        tokio::spawn(async move {
            let mut timers = Vec::with_capacity(N);
            for i in 0..N {
                let mut s = w.sleep(Duration::from_secs(3600 + i as u64));
                assert!(futures::poll!(&mut s).is_pending());
                timers.push(s);
            }
            std::future::pending::<()>().await;
            drop(timers);
        });
        let m = wheel.clone();
        until("a million timers pending", || {
            m.metrics().num_pending() == N
        })
        .await;
    });
    // And some held outside the runtime, which must not hang.
    let outside: Vec<_> = rt.block_on(async {
        let mut v = Vec::new();
        for _ in 0..OUTSIDE {
            let mut d = wheel.delay(Duration::from_secs(3600));
            assert!(futures::poll!(&mut d).is_pending());
            v.push(d);
        }
        v
    });
    assert_eq!(wheel.metrics().num_pending(), N + OUTSIDE);
    let start = std::time::Instant::now();
    drop(rt);
    // Printed, not asserted: a timing is not a test.
    println!(
        "runtime shutdown with {} timers pending took {:?}",
        N + OUTSIDE,
        start.elapsed()
    );
    assert!(wheel.is_shutdown());
    let m = wheel.metrics();
    assert_eq!(m.num_pending(), 0);
    // The task's timers went with the task; the outside ones remain, shut down.
    assert_eq!(m.num_entries(), OUTSIDE);
    for d in outside {
        let e = futures::executor::block_on(d).unwrap_err();
        assert!(e.is_shutdown());
    }
    assert_eq!(wheel.metrics().num_entries(), 0);
}

// ===== a wheel moved into another runtime =====

#[test]
fn a_wheel_moved_into_another_runtime_keeps_working_while_its_own_runs() {
    let home = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_time()
        .build()
        .unwrap();
    let wheel = home.block_on(async { Wheel::new() });
    let away = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    away.block_on(async {
        let start = Instant::now();
        wheel.sleep(5 * MS).await;
        assert!(start.elapsed() >= 5 * MS, "early");
        assert!(wheel.delay(5 * MS).await.is_ok());
        let h = wheel.delay(Duration::from_secs(60));
        let handle = h.handle();
        let waiter = tokio::spawn(h);
        tokio::task::yield_now().await;
        assert!(handle.cancel());
        assert!(waiter.await.unwrap().unwrap_err().is_cancelled());
    });
    assert_eq!(wheel.metrics().num_entries(), 0);
}

#[test]
fn a_wheel_moved_into_another_runtime_after_its_own_is_gone_fails_clearly() {
    let home = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let wheel = home.block_on(async { Wheel::new() });
    drop(home);
    let away = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    away.block_on(async {
        assert!(wheel.is_shutdown());
        let e = wheel.delay(Duration::from_secs(60)).await.unwrap_err();
        assert!(e.is_shutdown());
        assert_eq!(e.to_string(), "the timer wheel has shut down");
        // Documented: a sleep or timeout on a dead wheel completes.
        wheel.sleep(Duration::from_secs(60)).await;
        assert!(wheel
            .timeout(Duration::from_secs(60), std::future::pending::<()>())
            .await
            .is_err());
        assert_eq!(Instant::now().elapsed(), Duration::ZERO);
    });
    assert_eq!(wheel.metrics().num_entries(), 0);
}

// ===== a stalled driver =====

#[tokio::test(start_paused = true)]
async fn a_stalled_driver_fires_everything_due_once_late_never_early() {
    const N: u32 = 2000;
    let wheel = Wheel::builder().buckets(64).shards(1).build().unwrap();
    let start = Instant::now();
    // Deadlines every 3 ms up to 6 s: the 5 s stall covers 78 turns of a
    // 64-slot wheel.
    let mut timers: Vec<_> = (1..=N)
        .map(|i| {
            let d = task::spawn(wheel.delay(3 * i * MS));
            let h = d.handle();
            (d, h, start + 3 * i * MS)
        })
        .collect();
    for (d, _, _) in &mut timers {
        assert_pending!(d.poll());
    }
    // Let the driver plan its first wake (3 ms), then stall it for 5 s.
    for _ in 0..8 {
        tokio::task::yield_now().await;
    }
    tokio::time::advance(Duration::from_secs(5)).await;
    let m = wheel.clone();
    let due = timers
        .iter()
        .filter(|(_, _, at)| *at <= start + Duration::from_secs(5))
        .count();
    until("the stalled driver caught up", || {
        m.metrics().fired_count() == due as u64
    })
    .await;
    for _ in 0..8 {
        tokio::task::yield_now().await;
    }
    let now = Instant::now();
    // 1,666 delays complete in one poll of this task, far more than
    // tokio's cooperative budget lets through (as with tokio's timers).
    tokio::task::coop::unconstrained(async {
        for (d, h, at) in &mut timers {
            if *at <= now {
                assert!(d.is_woken());
                assert_ready!(d.poll()).unwrap();
                assert!(h.is_expired());
            } else {
                assert!(!d.is_woken(), "woken early");
                assert_pending!(d.poll());
            }
        }
    })
    .await;
    let m = wheel.metrics();
    // Each fired once: no more, no fewer.
    assert_eq!(m.fired_count(), due as u64);
    assert_eq!(m.num_pending(), N as usize - due);
    // It planned to wake at 3 ms and woke at 5 s.
    assert_eq!(m.max_driver_lag(), Duration::from_secs(5) - 3 * MS);
    tokio::time::advance(Duration::from_secs(2)).await;
    let m = wheel.clone();
    until("the rest fired", || {
        m.metrics().fired_count() == u64::from(N)
    })
    .await;
    tokio::task::coop::unconstrained(async {
        for (d, _, _) in &mut timers {
            if !d.is_woken() {
                continue;
            }
            assert_ready!(d.poll()).unwrap();
        }
    })
    .await;
}

#[test]
fn a_blocked_worker_delays_timers_but_never_fires_them_early() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        let wheel = Wheel::new();
        // Deadlines far enough ahead that every sleep registers before its
        // own: one first polled after its deadline would complete at once,
        // without the wheel (and without counting as fired).
        let start = Instant::now() + Duration::from_millis(300);
        let waiters: Vec<_> = (1..=50u32)
            .map(|i| {
                let w = wheel.clone();
                tokio::spawn(async move {
                    let deadline = start + i * MS;
                    w.sleep_until(deadline).await;
                    assert!(Instant::now() >= deadline, "early");
                })
            })
            .collect();
        let mut turns = 0;
        while wheel.metrics().num_pending() < 50 {
            tokio::task::yield_now().await;
            turns += 1;
            assert!(turns < 100_000, "the sleeps never registered");
        }
        // Block the only worker past every deadline: the driver cannot run.
        std::thread::sleep((start + 100 * MS).duration_since(Instant::now()));
        for w in waiters {
            w.await.unwrap();
        }
        let m = wheel.metrics();
        assert_eq!(m.fired_count(), 50);
        assert_eq!(m.num_entries(), 0);
        assert!(m.max_driver_lag() > Duration::ZERO);
    });
}

// ===== building on a multi-thread runtime =====

/// The driver, spawned on a worker, may run before `build` returns: it
/// must not mistake the wheel for abandoned (no handle yet) and shut it
/// down at birth. Seen in the stress example after 52 million operations.
#[test]
fn a_wheel_built_on_a_multi_thread_runtime_is_never_born_shut_down() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    let mut dead = 0;
    for _ in 0..5_000 {
        let wheel = rt.block_on(async { Wheel::new() });
        rt.block_on(async {
            for _ in 0..4 {
                tokio::task::yield_now().await;
            }
        });
        if wheel.is_shutdown() {
            dead += 1;
        }
    }
    assert_eq!(dead, 0, "{dead} of 5000 wheels were shut down at birth");
}
