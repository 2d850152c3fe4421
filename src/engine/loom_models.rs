//! Loom models of the races that lose timers in other crates.
//!
//! Run exhaustively with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test --release --lib loom`;
//! without `--cfg loom` each model runs once on std threads, as a plain test.
//!
//! The code under test is the production code: the shard operations
//! (`Shard::register`, `poll`, `reschedule`, `expire`, `shutdown`), a
//! sleep's shared due word (`Chunk::move_later` against `Words::fire`), the
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
use crate::engine::clock::Deadline;
use crate::engine::core::Core;
use crate::engine::entry::owned::OwnedEntry;
use crate::engine::entry::shared::{Outcome, SharedEntry};
use crate::engine::shards::{wake_all, ShardRef, Shards};
use crate::engine::sync::{Arc, AtomicBool, Ordering};
use crate::engine::wheel::NEVER;

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

/// A wheel of `n` shards with a 1 ms tick and 8 slots, at tick 0. Its
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
        self.0.reset_to(deadline);
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

// ===== Sleep: reset and first registration against the driver =====

#[test]
fn reset_earlier_vs_fire() {
    model(|| {
        let shards = wheel(1);
        let (f, w) = flag();
        let sleep = registered(sleep(&shards, 0, 8), &w);
        let resetter = poll_on_thread(sleep, w, |s| s.reset_to(at(3)));
        let s = shards.clone();
        let driver = thread::spawn(move || driver_run(&s, 5));
        let (mut sleep, w, ready) = resetter.join().unwrap();
        driver.join().unwrap();
        if !ready {
            // The reset moved the entry to tick 3 before the run, which
            // fired it; after the run the reset finds tick 3 processed and
            // the sleep completes on that same poll.
            assert!(woken(&f), "a sleep reset to tick 3 is pending and unwoken");
            assert!(poll(&mut sleep, &w).is_ready());
        }
        drop(sleep);
        assert_empty(&shards);
    });
}

#[test]
fn reset_later_vs_fire() {
    model(|| {
        let shards = wheel(1);
        let (f, w) = flag();
        let sleep = registered(sleep(&shards, 0, 3), &w);
        let resetter = poll_on_thread(sleep, w, |s| s.reset_to(at(20)));
        let s = shards.clone();
        let driver = thread::spawn(move || driver_run(&s, 5));
        let (sleep, w, ready) = resetter.join().unwrap();
        driver.join().unwrap();
        assert!(!ready, "a sleep reset to tick 20 completed at tick 5");
        // Its old entry may have fired: the next poll re-arms it.
        woken(&f);
        fires_at_tick_20(&shards, sleep, &f, &w);
    });
}

/// `sleep`, moved to tick 20 and its task told of anything before,
/// is pending, fires at tick 20 and not before, and leaves nothing behind.
fn fires_at_tick_20(shards: &Shards, mut sleep: Sleep, f: &Flag, w: &Waker) {
    assert!(poll(&mut sleep, w).is_pending(), "early");
    assert_eq!(shards.counts().pending, 1, "not pending for tick 20");
    driver_run(shards, 19);
    assert!(!woken(f), "woken at tick 19");
    assert!(poll(&mut sleep, w).is_pending(), "early at tick 19");
    driver_run(shards, 20);
    assert!(woken(f), "not woken at tick 20");
    assert!(poll(&mut sleep, w).is_ready());
    drop(sleep);
    assert_empty(shards);
}

/// A sleep moved within its tick (no lock: nothing in the shard changes)
/// while the driver fires that tick: it completes, or stays pending and is
/// woken; it never re-arms, and nothing stays behind.
#[test]
fn reset_within_the_tick_vs_fire() {
    model(|| {
        let shards = wheel(1);
        let (f, w) = flag();
        let sleep = registered(sleep(&shards, 0, 3), &w);
        let resetter = poll_on_thread(sleep, w, |s| {
            s.reset_to(Deadline::from_ns(5 * MS / 2)); // 2.5 ms: tick 3 still
        });
        let s = shards.clone();
        let driver = thread::spawn(move || driver_run(&s, 5));
        let (mut sleep, w, ready) = resetter.join().unwrap();
        driver.join().unwrap();
        if !ready {
            assert!(woken(&f), "a due sleep is pending and unwoken");
            assert!(poll(&mut sleep, &w).is_ready());
        }
        assert_eq!(shards.counts().pending, 0, "re-armed");
        drop(sleep);
        assert_empty(&shards);
    });
}

/// A sleep registered for tick 3 and moved to tick 4, a first move later,
/// which shares its due word; then, on another thread, moved to tick 20 by
/// that word (no lock) and polled.
fn moved_by_its_word(shards: &Shards, w: Waker) -> thread::JoinHandle<(Sleep, Waker, bool)> {
    let mut sleep = registered(sleep(shards, 0, 3), &w);
    sleep.reset_to(at(4));
    poll_on_thread(sleep, w, |s| s.reset_to(at(20)))
}

/// A sleep that shares its due word (by a first move later, to tick 4, the
/// entry staying at tick 3) moves later again, without the
/// lock, while the driver runs at tick 5: either the move wins and the
/// driver files the entry at tick 20, waking no one, or the driver fires
/// it first, and the sleep, its move refused, registers again. Either way
/// it fires at tick 20, not before, and nothing stays behind.
#[test]
fn reset_later_by_the_word_vs_fire() {
    model(|| {
        let shards = wheel(1);
        let (f, w) = flag();
        let resetter = moved_by_its_word(&shards, w);
        let s = shards.clone();
        let driver = thread::spawn(move || driver_run(&s, 5));
        let (sleep, w, ready) = resetter.join().unwrap();
        let next = driver.join().unwrap();
        assert!(!ready, "a sleep moved to tick 20 completed at tick 5");
        if !woken(&f) {
            // The move won: the driver filed the entry at 20 and plans
            // to wake for it (or was told to).
            assert!(
                next <= 20 || notified(&shards.core),
                "the driver sleeps past 20"
            );
        }
        fires_at_tick_20(&shards, sleep, &f, &w);
    });
}

/// The same move, without the lock, against a shutdown: the sleep
/// completes on a poll after the shutdown, and was woken if a poll before
/// it answered `Pending`; its entry and its word go.
#[test]
fn reset_later_by_the_word_vs_shutdown() {
    model(|| {
        let shards = wheel(1);
        let (f, w) = flag();
        let resetter = moved_by_its_word(&shards, w);
        let s = shards.clone();
        let stopper = thread::spawn(move || s.shutdown());
        let (mut sleep, w, ready) = resetter.join().unwrap();
        stopper.join().unwrap();
        if !ready {
            assert!(woken(&f), "pending across a shutdown and unwoken");
            assert!(poll(&mut sleep, &w).is_ready());
        }
        drop(sleep);
        assert_empty(&shards);
    });
}

/// A sleep dropped while the driver fires its tick. Unfiled, its entry goes
/// at once; filed (`swept`: a driver run at tick 1 filed it, with a later
/// sleep that keeps the shard from emptying), it waits in the shard for a
/// sweep, its waker already dropped. Either the driver fires it (and wakes
/// the task) or the drop cancels it (and nobody is woken); never both,
/// never neither, and nothing stays behind.
fn sleep_drop_vs_fire(swept: bool) {
    model(move || {
        let shards = wheel(1);
        let (f, w) = flag();
        let sleep = registered(sleep(&shards, 0, 5), &w);
        let (other_flag, other_waker) = flag();
        let other = swept.then(|| {
            let other = registered(self::sleep(&shards, 0, 100), &other_waker);
            driver_run(&shards, 1);
            other
        });
        let dropper = thread::spawn(move || drop(sleep));
        let s = shards.clone();
        let driver = thread::spawn(move || driver_run(&s, 10));
        dropper.join().unwrap();
        driver.join().unwrap();
        let c = shards.counts();
        assert_eq!(
            c.fired + c.cancelled,
            1,
            "fired {} cancelled {}",
            c.fired,
            c.cancelled
        );
        assert_eq!(
            woken(&f),
            c.fired == 1,
            "woken after a cancel, or fired unwoken"
        );
        // The next driver run sweeps what the drop left.
        driver_run(&shards, 11);
        assert!(!woken(&other_flag), "the other sleep is not due");
        drop(other);
        assert_empty(&shards);
    });
}

#[test]
fn sleep_drop_vs_fire_unfiled() {
    sleep_drop_vs_fire(false);
}

#[test]
fn sleep_drop_vs_fire_swept() {
    sleep_drop_vs_fire(true);
}

/// A sleep's entry is the driver's once its tick has elapsed: the driver
/// removes it, and a sleep dropped at the same time must not remove it
/// again, nor the entry a new sleep then takes in the same slot.
#[test]
fn sleep_drop_vs_fire_and_slot_reuse() {
    model(|| {
        let shards = wheel(1);
        let (_f, w) = flag();
        let first = registered(sleep(&shards, 0, 5), &w);
        let dropper = thread::spawn(move || drop(first));
        let s = shards.clone();
        let w2 = w.clone();
        let driver = thread::spawn(move || {
            driver_run(&s, 10);
            registered(sleep(&s, 0, 20), &w2)
        });
        dropper.join().unwrap();
        let second = driver.join().unwrap();
        assert_eq!(shards.counts().pending, 1, "the new sleep lost its entry");
        drop(second);
        assert_empty(&shards);
    });
}

/// A sleep polled while the driver expires it, with the waker it registered
/// with (a poll that takes no lock) or with a new one (which takes the lock
/// to store it): it completes, or stays pending and the waker it was last
/// polled with is woken.
fn sleep_poll_vs_fire(new_waker: bool) {
    model(move || {
        let shards = wheel(1);
        let (f, w) = flag();
        let (_first_flag, first_waker) = flag();
        let first = registered(
            sleep(&shards, 0, 5),
            if new_waker { &first_waker } else { &w },
        );
        let poller = poll_on_thread(first, w, |_| {});
        let s = shards.clone();
        let driver = thread::spawn(move || driver_run(&s, 10));
        let (mut first, w, ready) = poller.join().unwrap();
        driver.join().unwrap();
        if !ready {
            assert!(woken(&f), "a due sleep is pending and unwoken");
            assert!(poll(&mut first, &w).is_ready());
        }
        drop(first);
        assert_empty(&shards);
    });
}

#[test]
fn sleep_poll_same_waker_vs_fire() {
    sleep_poll_vs_fire(false);
}

#[test]
fn sleep_poll_new_waker_vs_fire() {
    sleep_poll_vs_fire(true);
}

/// A first poll registering at `tick` while the driver runs at tick 5.
fn register_vs_advance(tick: u64) {
    model(move || {
        let shards = wheel(1);
        let sleep = sleep(&shards, 0, tick as i64);
        let (f, w) = flag();
        let poller = poll_on_thread(sleep, w, |_| {});
        let s = shards.clone();
        let driver = thread::spawn(move || driver_run(&s, 5));
        let (mut sleep, w, ready) = poller.join().unwrap();
        let planned = driver.join().unwrap();
        if tick <= 5 {
            assert!(
                ready || woken(&f),
                "due at {tick}, the driver ran at 5: lost"
            );
            assert!(poll(&mut sleep, &w).is_ready());
        } else {
            assert!(!ready, "due at {tick}, ready at 5");
            assert!(
                planned <= tick || notified(&shards.core),
                "registered at {tick}, the driver sleeps until {planned} unnotified"
            );
            assert!(poll(&mut sleep, &w).is_pending());
        }
        drop(sleep);
        assert_empty(&shards);
    });
}

#[test]
fn first_poll_due_now_vs_advance() {
    register_vs_advance(3);
}

#[test]
fn first_poll_due_later_vs_advance() {
    register_vs_advance(7);
}

#[test]
fn two_shards_in_one_driver_run() {
    model(|| {
        let shards = wheel(2);
        let mut polls = Vec::new();
        for (i, tick) in [(0usize, 3i64), (1, 7)] {
            let sleep = sleep(&shards, i, tick);
            let (f, w) = flag();
            polls.push((poll_on_thread(sleep, w, |_| {}), f, tick));
        }
        let planned = driver_run(&shards, 5);
        let joined: Vec<_> = polls
            .into_iter()
            .map(|(t, f, tick)| (t.join().unwrap(), f, tick))
            .collect();
        let notified = notified(&shards.core);
        for ((mut sleep, w, ready), f, tick) in joined {
            if tick <= 5 {
                assert!(ready || woken(&f), "lost on shard 0");
                assert!(poll(&mut sleep, &w).is_ready());
            } else {
                assert!(!ready);
                assert!(
                    planned <= 7 || notified,
                    "shard 1 registered 7, the driver sleeps until {planned} unnotified"
                );
            }
        }
        assert_empty(&shards);
    });
}

// ===== the DelayQueue's alarm against the driver =====

/// An alarm on the first shard set for tick 5; then, on two threads, the
/// queue's task sets it for `due` with the same waker while the driver runs
/// at tick `now`. Hands back the alarm, its flag and waker, what the set
/// found and the tick the driver plans to sleep until.
fn alarm_vs_driver(
    shards: &Arc<Shards>,
    due: u64,
    now: u64,
) -> (QueueAlarm, std::sync::Arc<Flag>, Waker, Ring, u64) {
    let (f, w) = flag();
    let mut alarm = QueueAlarm::new(ShardRef::new(&shards.shards[0]));
    assert_eq!(alarm.set(Due::at(5), &w), Ring::Set);
    let poller = thread::spawn(move || {
        let ring = alarm.set(Due::at(due), &w);
        (alarm, w, ring)
    });
    let s = shards.clone();
    let driver = thread::spawn(move || driver_run(&s, now));
    let (alarm, w, ring) = poller.join().unwrap();
    let planned = driver.join().unwrap();
    (alarm, f, w, ring, planned)
}

/// The queue's task polls again, with the same waker, while the driver
/// processes the alarm's tick: without the lock, it sees the tick come or
/// stays set and is woken.
#[test]
fn queue_alarm_same_task_vs_fire() {
    model(|| {
        let shards = wheel(1);
        let (mut alarm, f, w, ring, _) = alarm_vs_driver(&shards, 5, 10);
        if ring == Ring::Set {
            assert!(woken(&f), "the alarm's tick came and the queue is unwoken");
        }
        assert_eq!(alarm.set(Due::at(5), &w), Ring::Elapsed);
        drop(alarm);
        assert_empty(&shards);
    });
}

/// The queue moves its alarm later while the driver processes the old
/// tick: the task is woken at the old tick only if the driver got there
/// first, and the alarm then waits for the new one.
#[test]
fn queue_alarm_moved_later_vs_fire() {
    model(|| {
        let shards = wheel(1);
        let (mut alarm, f, w, ring, planned) = alarm_vs_driver(&shards, 8, 6);
        assert_eq!(ring, Ring::Set, "tick 8 has not come at 6");
        assert!(
            planned <= 8 || notified(&shards.core),
            "the alarm waits for 8, the driver sleeps until {planned} unnotified"
        );
        woken(&f);
        driver_run(&shards, 8);
        assert!(woken(&f), "tick 8 came and the queue is unwoken");
        assert_eq!(alarm.set(Due::at(8), &w), Ring::Elapsed);
        drop(alarm);
        assert_empty(&shards);
    });
}
