//! One shard under contention, in a test binary of its own: the burst of
//! `tests/stress.rs` counts the heap of its whole process, which another
//! test running beside it would add to.

use std::time::Duration;

/// Every thread on one shard: the shard's lock (a spin lock whose waiters
/// yield) under contention from four plain threads and the tasks of a
/// 2-worker runtime, while its driver expires timers. Each thread makes
/// sleeps, polls them with its own waker, moves some later and some
/// earlier, and drops most of them; a quarter are awaited to the end. The
/// checks are exact: no sleep completes before its deadline, every awaited
/// one completes (a lost wake-up or a deadlock trips a watchdog), and the
/// wheel ends empty with no timer counted twice.
#[test]
fn one_shard_under_contention_from_threads_tasks_and_the_driver() {
    use std::future::Future;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake};

    const THREADS: u64 = 4;
    const TASKS: u64 = 8;
    const OPS: u64 = 2_000;

    struct Flag(std::sync::atomic::AtomicBool);
    impl Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.0.store(true, Ordering::Release);
        }
    }

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    let wheel = rt.block_on(async {
        hashwheel::Wheel::builder()
            .shards(1)
            .buckets(64)
            .build()
            .unwrap()
    });
    let early = Arc::new(AtomicU64::new(0));

    // One op: a sleep 1–8 ms away, polled, reset later or earlier, then
    // dropped or (one in four) awaited.
    async fn op(wheel: &hashwheel::Wheel, i: u64, early: &AtomicU64) {
        let ms = Duration::from_millis;
        let mut s = wheel.sleep(ms(1 + i % 8));
        let _ = futures::poll!(&mut s);
        match i % 3 {
            0 => s.reset(s.deadline() + ms(2)),
            1 => s.reset(s.deadline() - ms(1)),
            _ => {}
        }
        if i % 4 == 0 {
            let at = s.deadline();
            (&mut s).await;
            if tokio::time::Instant::now() < at {
                early.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let (wheel, early) = (wheel.clone(), early.clone());
            let handle = rt.handle().clone();
            std::thread::spawn(move || {
                let _guard = handle.enter();
                let flag = Arc::new(Flag(false.into()));
                let waker = std::task::Waker::from(flag.clone());
                let mut cx = Context::from_waker(&waker);
                for i in 0..OPS {
                    let mut f = std::pin::pin!(op(&wheel, t * OPS + i, &early));
                    // Block on it: poll, and on `Pending` wait for the flag.
                    loop {
                        flag.0.store(false, Ordering::Release);
                        if let Poll::Ready(()) = f.as_mut().poll(&mut cx) {
                            break;
                        }
                        let waiting = std::time::Instant::now();
                        while !flag.0.load(Ordering::Acquire) {
                            assert!(
                                waiting.elapsed() < Duration::from_secs(60),
                                "a wake-up was lost (watchdog)"
                            );
                            std::thread::yield_now();
                        }
                    }
                }
            })
        })
        .collect();
    let tasks: Vec<_> = (0..TASKS)
        .map(|t| {
            let (wheel, early) = (wheel.clone(), early.clone());
            rt.spawn(async move {
                for i in 0..OPS {
                    op(&wheel, (THREADS + t) * OPS + i, &early).await;
                }
            })
        })
        .collect();

    for t in threads {
        t.join().expect("a thread's timers");
    }
    rt.block_on(async {
        for t in tasks {
            tokio::time::timeout(Duration::from_secs(120), t)
                .await
                .expect("the tasks' timers completed (watchdog)")
                .unwrap();
        }
    });

    let total = (THREADS + TASKS) * OPS;
    assert_eq!(early.load(Ordering::Relaxed), 0, "sleeps completed early");
    let m = wheel.metrics();
    assert_eq!(m.num_pending(), 0);
    assert_eq!(m.num_entries(), 0);
    // Every registered sleep ended once, fired or cancelled (by its drop,
    // or by a reset to a deadline that had passed); one whose tick had
    // ended by its first poll never registered.
    assert!(m.fired_count() + m.cancelled_count() <= total);
    assert!(m.fired_count() > 0 && m.cancelled_count() > 0);
}
