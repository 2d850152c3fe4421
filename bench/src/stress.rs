//! The stress workload, shared by the `stress` binary (long runs on
//! demand) and `tests/stress.rs` (bounded): many tasks on a multi-thread runtime
//! doing a random mix of sleep, timeout, delay cancelled from another task,
//! reset, drop before firing and `DelayQueue` use, then a burst of a million
//! timers. It checks what is exact on a real clock: nothing fires early,
//! every future completes (a lost wake-up would hang, caught by a watchdog),
//! every `cancel()` that returned true matches a cancelled delay, the wheel
//! ends with nothing pending and no entry, and the memory of the burst is
//! given back, but for what a wheel keeps by design ([`heap_bound`]).

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use futures::StreamExt;
use hashwheel::Wheel;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// What to run.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    pub tasks: u64,
    pub ops_per_task: u64,
    pub burst: usize,
    /// Heap bytes allocated and not yet freed, process-wide: what the
    /// burst's check reads, what the wheel (and everything else) gave back
    /// to the allocator. Resident memory says what the allocator kept,
    /// which glibc decides (see [`rss`]). The caller counts them with its
    /// global allocator, [`Heap`]: a library cannot declare one without
    /// imposing it on every binary that links it (the benchmarks too).
    pub heap: fn() -> u64,
}

/// The counting allocator a stress binary declares as its
/// `#[global_allocator]`: `Heap::new(System, usize::MAX)`, no limit.
pub type Heap = cap::Cap<std::alloc::System>;

/// What happened.
#[derive(Debug, Default)]
pub struct Report {
    pub ops: u64,
    pub timers_fired: u64,
    pub early: u64,
    pub max_late: Duration,
    pub cancels: u64,
    pub cancelled_delays: u64,
    pub heap_before_burst: u64,
    pub heap_at_burst: u64,
    pub heap_after_burst: u64,
    pub rss_before_burst: u64,
    pub rss_at_burst: u64,
    pub rss_after_burst: u64,
}

#[derive(Default)]
struct Tally {
    ops: AtomicU64,
    fired: AtomicU64,
    early: AtomicU64,
    max_late_ns: AtomicU64,
    cancels: AtomicU64,
    cancelled: AtomicU64,
}

impl Tally {
    /// Records a timer that completed at `now` for `deadline`.
    fn fired(&self, deadline: Instant) {
        let now = Instant::now();
        self.fired.fetch_add(1, Ordering::Relaxed);
        if now < deadline {
            self.early.fetch_add(1, Ordering::Relaxed);
        } else {
            let late = (now - deadline).as_nanos() as u64;
            self.max_late_ns.fetch_max(late, Ordering::Relaxed);
        }
    }
}

/// xorshift64*: a small deterministic generator per task.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Up to `max_us` microseconds.
    fn dur(&mut self, max_us: u64) -> Duration {
        Duration::from_micros(self.next() % (max_us + 1))
    }
}

/// Resident memory of this process, in bytes. Reported, not checked:
/// glibc serves a large block from a free arena top when it has one, and
/// once freed it stays resident unless it is at that top, so the same run
/// can keep 0, 16 or 31 MiB of a burst resident (a shard's slab each).
pub fn rss() -> u64 {
    super::cpu::rss_bytes()
}

/// Polls a sleep made far enough ahead that it must be pending.
async fn first_poll_pending(wheel: &Wheel, s: &mut hashwheel::Sleep) {
    if futures::poll!(&mut *s).is_ready() {
        panic!(
            "a sleep due in {:?} was ready on its first poll; shut down: {}, metrics: {:?}",
            s.deadline().saturating_duration_since(Instant::now()),
            wheel.is_shutdown(),
            wheel.metrics()
        );
    }
}

async fn one_task(wheel: Wheel, id: u64, ops: u64, tally: Arc<Tally>) {
    let mut rng = Rng(id.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut queue = wheel.delay_queue::<u64>();
    for _ in 0..ops {
        match rng.next() % 9 {
            0 | 1 => {
                let d = rng.dur(3000);
                let deadline = Instant::now() + d;
                wheel.sleep(d).await;
                tally.fired(deadline);
            }
            2 => {
                let r = wheel.timeout(rng.dur(3000), async { 1 }).await;
                assert_eq!(r, Ok(1));
            }
            3 => {
                let _ = wheel.timeout(rng.dur(3000), tokio::task::yield_now()).await;
            }
            4 => {
                let d = rng.dur(2000);
                let deadline = Instant::now() + d;
                let r = wheel.timeout(d, std::future::pending::<()>()).await;
                assert!(r.is_err());
                tally.fired(deadline);
            }
            5 => {
                // Cancelled from another task, racing the driver.
                let d = rng.dur(4000);
                let deadline = Instant::now() + d;
                let delay = wheel.delay(d);
                let handle = delay.handle();
                let wait = rng.next() % 3;
                let t = tally.clone();
                let canceller = tokio::spawn(async move {
                    for _ in 0..wait {
                        tokio::task::yield_now().await;
                    }
                    if handle.cancel() {
                        t.cancels.fetch_add(1, Ordering::Relaxed);
                    }
                });
                match delay.await {
                    Ok(()) => tally.fired(deadline),
                    Err(e) => {
                        assert!(e.is_cancelled(), "{e}");
                        tally.cancelled.fetch_add(1, Ordering::Relaxed);
                    }
                }
                canceller.await.unwrap();
            }
            6 => {
                let mut s = wheel.sleep(Duration::from_millis(50));
                first_poll_pending(&wheel, &mut s).await;
                let d = rng.dur(3000);
                let deadline = Instant::now() + d;
                s.reset(deadline);
                s.await;
                tally.fired(deadline);
            }
            7 => {
                let mut s = wheel.sleep(Duration::from_millis(100));
                let mut d = wheel.delay(Duration::from_millis(100));
                first_poll_pending(&wheel, &mut s).await;
                if let Poll::Ready(r) = futures::poll!(&mut d) {
                    panic!(
                        "a 100 ms delay was ready on its first poll: {r:?}, shut down: {}",
                        wheel.is_shutdown()
                    );
                }
            }
            _ => {
                let keys: Vec<_> = (0..4).map(|v| queue.insert(v, rng.dur(3000))).collect();
                let removed = queue.remove(&keys[(rng.next() % 4) as usize]);
                let mut left = 3;
                if rng.next() % 2 == 0 {
                    // A poll after a tick files the values in their
                    // buckets, so the resets below move filed values (one
                    // moved later stays put until its old deadline).
                    tokio::time::sleep(Duration::from_millis(2)).await;
                    if let Poll::Ready(Some(e)) = futures::poll!(queue.next()) {
                        tally.fired(e.deadline());
                        left -= 1;
                    }
                }
                for k in &keys {
                    if *k != removed.key() {
                        // `None` for a value that came out above.
                        let _ = queue.try_reset(k, rng.dur(3000));
                    }
                }
                while let Some(e) = queue.next().await {
                    tally.fired(e.deadline());
                    left -= 1;
                }
                assert_eq!(left, 0, "the queue lost a value");
            }
        }
        tally.ops.fetch_add(1, Ordering::Relaxed);
    }
}

/// Makes `per` timers with `make` (each polled once, so registered), says
/// so on `held`, and drops them all when `release` is notified.
async fn hold<F: Future + Unpin>(
    per: usize,
    make: impl Fn(u64) -> F,
    held: mpsc::Sender<()>,
    release: Arc<tokio::sync::Notify>,
) {
    let mut timers = Vec::with_capacity(per);
    for i in 0..per as u64 {
        let mut t = make(i);
        assert!(futures::poll!(&mut t).is_pending());
        timers.push(t);
    }
    let released = release.notified();
    held.send(()).await.unwrap();
    released.await;
    drop(timers);
}

/// Runs the workload on `rt`, a multi-thread runtime; panics if any check
/// fails. `watchdog` bounds the whole run, so a lost wake-up fails instead
/// of hanging.
pub fn run(rt: &tokio::runtime::Runtime, cfg: Config, watchdog: Duration) -> Report {
    rt.block_on(async move {
        let wheel = Wheel::new();
        let tally = Arc::new(Tally::default());
        let tasks: Vec<_> = (0..cfg.tasks)
            .map(|id| tokio::spawn(one_task(wheel.clone(), id, cfg.ops_per_task, tally.clone())))
            .collect();
        let all = async {
            for t in tasks {
                t.await.expect("a stress task panicked");
            }
        };
        if tokio::time::timeout(watchdog, all).await.is_err() {
            panic!(
                "the stress run did not finish within {watchdog:?}: a lost wake-up? {} ops done, metrics {:?}",
                tally.ops.load(Ordering::Relaxed),
                wheel.metrics()
            );
        }
        let m = wheel.metrics();
        assert_eq!(m.num_pending(), 0, "timers left pending: {m:?}");
        assert_eq!(m.num_entries(), 0, "entries left: {m:?}");
        assert_eq!(m.waker_panic_count(), 0);

        // A burst of timers, held at once across the workers, then dropped:
        // half of them sleeps, a quarter delays, a quarter timeouts, so that
        // each kind's removal has to give the memory back.
        let (heap_before_burst, rss_before_burst) = ((cfg.heap)(), rss());
        let per = cfg.burst / 4;
        let (held_tx, mut held_rx) = mpsc::channel::<()>(4);
        let release = Arc::new(tokio::sync::Notify::new());
        let far = |i: u64| Duration::from_secs(3600 + i % 1000);
        let holders: Vec<_> = (0..4)
            .map(|k| {
                let (w, tx, rel) = (wheel.clone(), held_tx.clone(), release.clone());
                match k {
                    0 | 1 => tokio::spawn(hold(per, move |i| w.sleep(far(i)), tx, rel)),
                    2 => tokio::spawn(hold(per, move |i| w.delay(far(i)), tx, rel)),
                    _ => tokio::spawn(hold(
                        per,
                        move |i| w.timeout(far(i), std::future::pending::<()>()),
                        tx,
                        rel,
                    )),
                }
            })
            .collect();
        for _ in 0..4 {
            held_rx.recv().await.unwrap();
        }
        assert_eq!(wheel.metrics().num_pending(), per * 4);
        let (heap_at_burst, rss_at_burst) = ((cfg.heap)(), rss());
        release.notify_waiters();
        for h in holders {
            h.await.unwrap();
        }
        let m = wheel.metrics();
        assert_eq!((m.num_pending(), m.num_entries()), (0, 0));
        let (heap_after_burst, rss_after_burst) = ((cfg.heap)(), rss());
        // With the last handle gone, the driver task exits: nothing of the
        // wheel is left running.
        drop(wheel);
        let rt = tokio::runtime::Handle::current().metrics();
        for _ in 0..1000 {
            if rt.num_alive_tasks() == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(rt.num_alive_tasks(), 0, "the driver outlived its wheel");
        Report {
            ops: tally.ops.load(Ordering::Relaxed),
            timers_fired: tally.fired.load(Ordering::Relaxed),
            early: tally.early.load(Ordering::Relaxed),
            max_late: Duration::from_nanos(tally.max_late_ns.load(Ordering::Relaxed)),
            cancels: tally.cancels.load(Ordering::Relaxed),
            cancelled_delays: tally.cancelled.load(Ordering::Relaxed),
            heap_before_burst,
            heap_at_burst,
            heap_after_burst,
            rss_before_burst,
            rss_at_burst,
            rss_after_burst,
        }
    })
}

/// The most heap a run of `cfg` may keep after its burst: 4 MiB of
/// slack, and the burst's due words, which a shard keeps once made (8
/// bytes a slot: a sleep finds its word by its key without the lock, so
/// the word's chunk may not go before the shard). The slab, every waker
/// and everything else of the burst must be given back.
pub fn heap_bound(cfg: &Config) -> u64 {
    (4 << 20) + 8 * cfg.burst as u64
}

/// The checks on a finished run.
pub fn check(r: &Report, max_heap_growth: u64) {
    assert_eq!(r.early, 0, "timers fired early: {r:?}");
    assert_eq!(
        r.cancels, r.cancelled_delays,
        "cancel() returned true {} times, {} delays resolved cancelled",
        r.cancels, r.cancelled_delays
    );
    let grown = r.heap_after_burst.saturating_sub(r.heap_before_burst);
    assert!(
        grown <= max_heap_growth,
        "the burst kept {} KiB of heap of {} KiB (bound {} KiB): {r:?}",
        grown / 1024,
        r.heap_at_burst.saturating_sub(r.heap_before_burst) / 1024,
        max_heap_growth / 1024
    );
}
