//! Loom models of the races that lose timers in other crates.
//!
//! Run exhaustively with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test --release --lib loom`;
//! without `--cfg loom` each model runs once on std threads, as a plain test.
//!
//! The code under test is the production code: the shard operations
//! (`Shard::register`, `poll`, `reschedule`, `expire`, `shutdown`), a
//! sleep's shared due word (`Directory::move_later` against `Words::fire`), the
//! driver's handshake (`Core::begin_run`, `end_run`, `wake_driver_for`),
//! the `Delay` state word with its `TimeoutHandle` and the `DelayQueue`'s
//! alarm (`QueueAlarm::set`, whose poll by the same task takes no lock), all on `crate::sync`'s
//! loom types. Only the driver task's `async` shell (tokio's timer and
//! `Notify`, which cannot run under loom) is replaced, by [`driver_run`]: one
//! run of the driver loop made of the same calls.
//!
//! Each model checks, over every interleaving: the timer completes exactly
//! one way (fired, cancelled or shut down, never two, never none); the task
//! is woken whenever the timer completed without the task seeing it (no lost
//! wake-up); nothing fires early; the driver plans to wake by the earliest
//! registered tick or has a pending notification; and once the futures are
//! dropped the shards hold no entry (and loom finds no leaked `Arc`).

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use tokio::time::Instant;

use super::queue::{Due, QueueAlarm, Ring};
use super::shard::Shard;
use crate::engine::clock::{Deadline, Reached};
use crate::engine::core::Core;
use crate::engine::entry::owned::OwnedEntry;
use crate::engine::entry::shared::{Outcome, SharedEntry};
use crate::engine::hashed::NEVER;
use crate::engine::shards::{wake_all, ShardRef, Shards};
use crate::engine::sync::{Arc, AtomicBool, Ordering};

#[cfg(loom)]
use loom::thread;
#[cfg(not(loom))]
use std::thread;

/// Runs `f` under loom's exhaustive scheduler, or once without loom.
fn model<F: Fn() + Sync + Send + 'static>(f: F) {
    #[cfg(loom)]
    loom::model(f);
    #[cfg(not(loom))]
    f();
}

const MS: i64 = 1_000_000;

/// The deadline `ms` milliseconds after the wheel's origin.
fn at(ms: i64) -> Deadline {
    Deadline::from_ns(ms * MS)
}

/// A wheel of `n` shards with a 1 ms tick and 8 buckets, at tick 0. Its
/// origin lies an hour ahead, so the clock never reaches a timer's tick:
/// only the models' explicit driver runs expire timers.
fn wheel(n: usize) -> Arc<Shards> {
    let origin = Instant::now() + Duration::from_secs(3600);
    let core = Arc::new(Core::new(origin, Duration::from_millis(1), 8, None));
    // As if a `Wheel` handle were alive: dropping a timer then does not
    // notify the driver, which would hide a missing notification.
    core.handles.fetch_add(1, Ordering::Relaxed);
    let shards = (0..n)
        .map(|_| Arc::new(Shard::new(core.clone(), 0)))
        .collect();
    Arc::new(Shards { core, shards })
}

/// One run of the driver loop at tick `now`; returns the tick it plans to
/// sleep until.
fn driver_run(shards: &Shards, now: u64) -> u64 {
    let core = &shards.core;
    core.begin_run();
    let mut next = NEVER;
    let mut wakers = Vec::new();
    for shard in shards.shards.iter() {
        loop {
            let found = shard.expire(now, &mut wakers, 1);
            wake_all(core, &mut wakers);
            if !found.more {
                next = next.min(found.next);
                break;
            }
        }
    }
    core.end_run(next)
}

/// Whether the driver has a notification waiting for it.
fn notified(core: &Core) -> bool {
    let n = pin!(core.signal.notified());
    n.poll(&mut Context::from_waker(Waker::noop())).is_ready()
}

/// A waker that records that it was woken.
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn flag() -> (std::sync::Arc<Flag>, Waker) {
    let f = std::sync::Arc::new(Flag(AtomicBool::new(false)));
    (f.clone(), Waker::from(f))
}

fn woken(f: &Flag) -> bool {
    f.0.swap(false, Ordering::SeqCst)
}

fn poll<F: Future + Unpin>(f: &mut F, w: &Waker) -> Poll<F::Output> {
    std::pin::Pin::new(f).poll(&mut Context::from_waker(w))
}

/// A shared entry with its owner's claim, polled as a `Delay` polls it.
#[derive(Debug)]
struct Delay {
    entry: std::sync::Arc<SharedEntry>,
    _claim: ShardRef,
}

impl Delay {
    fn handle(&self) -> std::sync::Arc<SharedEntry> {
        self.entry.clone()
    }
}

impl Future for Delay {
    type Output = Result<(), Outcome>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.entry.poll(cx).map(|o| match o {
            Outcome::Expired => Ok(()),
            other => Err(other),
        })
    }
}

impl Drop for Delay {
    fn drop(&mut self) {
        self.entry.release();
    }
}

/// An owned entry, polled as a `Sleep` polls it.
#[derive(Debug)]
struct Sleep(OwnedEntry);

impl Sleep {
    fn reset_to(&mut self, deadline: Deadline) {
        self.0.reset_to(deadline, Reached::Unknown);
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.get_mut().0.poll(cx)
    }
}

/// A delay due at `ms` on the first shard.
fn delay(shards: &Shards, ms: i64) -> Delay {
    let claim = ShardRef::new(&shards.shards[0]);
    let entry = SharedEntry::delay(&claim, claim.deadline_at(instant(&claim, ms)));
    Delay {
        entry,
        _claim: claim,
    }
}

/// A sleep due at `ms` on shard `i`.
fn sleep(shards: &Shards, i: usize, ms: i64) -> Sleep {
    Sleep(OwnedEntry::new(ShardRef::new(&shards.shards[i]), at(ms)))
}

/// The instant of `ms` on the wheel of `shard`.
fn instant(shard: &ShardRef, ms: i64) -> Instant {
    shard.core().clock.instant_of(at(ms))
}

/// `f` after a first poll, which registers it.
fn registered<F: Future + Unpin>(mut f: F, w: &Waker) -> F {
    assert!(poll(&mut f, w).is_pending());
    f
}

/// Runs `before` on `f` then polls it, on another thread; hands back the
/// future, its waker and whether it was ready.
fn poll_on_thread<F>(
    mut f: F,
    w: Waker,
    before: impl FnOnce(&mut F) + Send + 'static,
) -> thread::JoinHandle<(F, Waker, bool)>
where
    F: Future + Unpin + Send + 'static,
{
    thread::spawn(move || {
        before(&mut f);
        let ready = poll(&mut f, &w).is_ready();
        (f, w, ready)
    })
}

fn assert_empty(shards: &Shards) {
    let c = shards.counts();
    assert_eq!((c.pending, c.entries), (0, 0), "entries left behind");
}

// ===== Delay: handle cancel, drop, shutdown against the driver =====

#[test]
fn cancel_through_handle_vs_fire() {
    model(|| {
        let shards = wheel(1);
        let (f, w) = flag();
        let mut delay = registered(delay(&shards, 5), &w);
        let handle = delay.handle();
        let canceller = thread::spawn(move || handle.cancel());
        let s = shards.clone();
        let driver = thread::spawn(move || driver_run(&s, 10));
        let cancelled = canceller.join().unwrap();
        driver.join().unwrap();
        assert!(woken(&f), "the delay's task was not woken");
        match poll(&mut delay, &w) {
            Poll::Ready(Ok(())) => assert!(!cancelled, "cancel() said true, the delay fired"),
            Poll::Ready(Err(e)) => assert!(cancelled && e == Outcome::Cancelled, "{e:?}"),
            Poll::Pending => panic!("the delay neither fired nor was cancelled"),
        }
        drop(delay);
        assert_empty(&shards);
    });
}

#[test]
fn drop_vs_fire() {
    model(|| {
        let shards = wheel(1);
        let (_f, w) = flag();
        let delay = registered(delay(&shards, 5), &w);
        let handle = delay.handle();
        let dropper = thread::spawn(move || drop(delay));
        let s = shards.clone();
        let driver = thread::spawn(move || driver_run(&s, 10));
        dropper.join().unwrap();
        driver.join().unwrap();
        assert!(
            handle.is_cancelled() != handle.is_expired(),
            "a dropped delay must end cancelled or expired, and only one"
        );
        assert!(!handle.cancel());
        assert_empty(&shards);
    });
}

#[test]
fn cancel_through_handle_vs_drop() {
    model(|| {
        let shards = wheel(1);
        let (_f, w) = flag();
        let delay = registered(delay(&shards, 5), &w);
        let handle = delay.handle();
        let h = handle.clone();
        let canceller = thread::spawn(move || h.cancel());
        let dropper = thread::spawn(move || drop(delay));
        canceller.join().unwrap();
        dropper.join().unwrap();
        assert!(handle.is_cancelled() && !handle.is_expired());
        assert_empty(&shards);
    });
}

#[test]
fn cancel_through_handle_vs_first_poll() {
    model(|| {
        let shards = wheel(1);
        let delay = delay(&shards, 5);
        let handle = delay.handle();
        let (f, w) = flag();
        let poller = poll_on_thread(delay, w, |_| {});
        let cancelled = handle.cancel();
        let (mut delay, w, ready) = poller.join().unwrap();
        assert!(cancelled, "nothing else can complete the delay");
        if !ready {
            assert!(woken(&f), "cancelled after registering, but not woken");
        }
        let s = shards.counts();
        assert_eq!(s.entries, 0, "a cancelled delay kept its entry");
        match poll(&mut delay, &w) {
            Poll::Ready(Err(e)) => assert_eq!(e, Outcome::Cancelled),
            r => panic!("{r:?}"),
        }
        drop(delay);
        assert_empty(&shards);
    });
}

#[test]
fn shutdown_vs_register() {
    model(|| {
        let shards = wheel(1);
        let delay = delay(&shards, 5);
        let (f, w) = flag();
        let poller = poll_on_thread(delay, w, |_| {});
        let s = shards.clone();
        let stopper = thread::spawn(move || s.shutdown());
        let (mut delay, w, ready) = poller.join().unwrap();
        let n = stopper.join().unwrap();
        assert!(n <= 1);
        if !ready {
            assert_eq!(n, 1, "registered, pending, yet shutdown found nothing");
            assert!(woken(&f), "shutdown did not wake a pending delay");
        }
        match poll(&mut delay, &w) {
            Poll::Ready(Err(e)) => assert_eq!(e, Outcome::Shutdown),
            r => panic!("a delay on a shut-down wheel resolved to {r:?}"),
        }
        drop(delay);
        assert_empty(&shards);
    });
}

#[test]
fn shutdown_vs_fire() {
    model(|| {
        let shards = wheel(1);
        let (f, w) = flag();
        let mut delay = registered(delay(&shards, 5), &w);
        let s = shards.clone();
        let driver = thread::spawn(move || driver_run(&s, 10));
        let s = shards.clone();
        let stopper = thread::spawn(move || s.shutdown());
        driver.join().unwrap();
        stopper.join().unwrap();
        assert!(woken(&f), "the delay's task was not woken");
        match poll(&mut delay, &w) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(e)) => assert_eq!(e, Outcome::Shutdown),
            Poll::Pending => panic!("a delay due on a shut-down wheel is still pending"),
        }
        drop(delay);
        assert_empty(&shards);
    });
}

/// Shutdown racing the driver over sleeps: one whose entry the driver
/// takes and whose slot a new sleep then reuses, one that shutdown finds
/// due but not yet popped. Every sleep completes, no entry is left behind
/// and none is removed twice.
#[test]
fn sleep_shutdown_vs_fire() {
    model(|| {
        let shards = wheel(1);
        let (_f, w) = flag();
        let first = registered(sleep(&shards, 0, 5), &w);
        let second = registered(sleep(&shards, 0, 6), &w);
        let s = shards.clone();
        let w2 = w.clone();
        let driver = thread::spawn(move || {
            // Advances to 10 and pops one: the other stays due, unpopped.
            s.shards[0].expire(10, &mut Vec::new(), 1);
            // May take the slot the driver just freed; pending unless the
            // wheel has shut down already.
            let mut third = sleep(&s, 0, 20);
            let _ = poll(&mut third, &w2);
            third
        });
        let s = shards.clone();
        let poller = poll_on_thread(first, w.clone(), move |_| {
            s.shutdown();
        });
        let third = driver.join().unwrap();
        let (mut first, w, _) = poller.join().unwrap();
        let mut second = second;
        assert!(poll(&mut first, &w).is_ready());
        assert!(poll(&mut second, &w).is_ready());
        drop((first, second, third));
        assert_empty(&shards);
    });
}

mod sleep;
