//! The loom models of a `Sleep` (reset, first registration, drop and poll)
//! and of the `DelayQueue`'s alarm, each against the driver.

#![cfg(test)]

use super::*;

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
