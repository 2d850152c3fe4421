//! Unit tests of `Sleep` that count the shard locks it takes, each step
//! checked against tokio's `Sleep`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Wake, Waker};

use super::*;
use crate::engine::sync::locks_taken;
use crate::wheel::Wheel;

#[derive(Default)]
struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn waker() -> (Arc<Count>, Waker) {
    let c = Arc::new(Count::default());
    (c.clone(), Waker::from(c))
}

fn poll(sleep: &mut Sleep, w: &Waker) -> Poll<()> {
    Pin::new(sleep).poll(&mut Context::from_waker(w))
}

/// Its shard, deadline, key and state, and the id of the waker its entry
/// holds (9 bytes, packed); its shared due word it finds by its key.
#[test]
fn a_sleep_is_32_bytes() {
    assert_eq!(std::mem::size_of::<Sleep>(), 32);
    assert_eq!(std::mem::size_of::<Option<Sleep>>(), 32);
}

/// `{:?}` of a sleep, or of its wheel, stays short however many timers
/// the wheel holds: neither prints its shards' slabs or word tables
/// (an empty wheel printed 2.5 MB, a sleep on it 317 KB).
#[tokio::test]
async fn debug_output_stays_short_with_many_timers() {
    let wheel = Wheel::new();
    let (_, w) = waker();
    let mut held: Vec<Sleep> = (0..10_000)
        .map(|_| wheel.sleep(Duration::from_secs(30)))
        .collect();
    for sleep in &mut held {
        assert!(poll(sleep, &w).is_pending());
    }
    let sleep = format!("{:?}", held[0]);
    assert!(sleep.starts_with("Sleep {"), "{sleep}");
    assert!(sleep.len() < 512, "{} bytes: {sleep}", sleep.len());
    let wheel = format!("{wheel:?}");
    assert!(wheel.len() < 16 * 1024, "{} bytes", wheel.len());
}

/// Polling a registered sleep with the waker its entry holds takes no
/// shard lock, nor does the poll that finds its tick elapsed; a new
/// waker takes one, once. Each step is checked against tokio's `Sleep`
/// polled the same way: the same answers, the same wake-ups.
#[tokio::test(start_paused = true)]
async fn a_poll_with_the_waker_the_entry_holds_takes_no_lock() {
    let wheel = Wheel::new();
    let mut sleep = wheel.sleep(Duration::from_millis(10));
    let mut theirs = Box::pin(tokio::time::sleep(Duration::from_millis(10)));
    let (a_woken, a) = waker();
    let (b_woken, b) = waker();
    let (ta_woken, ta) = waker();
    let (tb_woken, tb) = waker();
    let mut both = |w: &Waker, tw: &Waker| {
        let ours = poll(&mut sleep, w);
        let tokio = theirs.as_mut().poll(&mut Context::from_waker(tw));
        assert_eq!(ours, tokio);
        ours
    };

    assert!(both(&a, &ta).is_pending()); // registers
    let locks = locks_taken();
    assert!(both(&a, &ta).is_pending());
    assert!(both(&a.clone(), &ta.clone()).is_pending());
    assert_eq!(locks_taken(), locks, "same waker: no lock");

    assert!(both(&b, &tb).is_pending());
    assert_eq!(locks_taken(), locks + 1, "a new waker is stored once");
    assert!(both(&b, &tb).is_pending());
    assert_eq!(locks_taken(), locks + 1);

    tokio::time::advance(Duration::from_millis(9)).await;
    assert!(both(&b, &tb).is_pending(), "never early");
    tokio::time::advance(Duration::from_millis(1)).await;
    tokio::task::yield_now().await; // lets the wheel's driver run
    let counts = |c: &[&Arc<Count>]| {
        c.iter()
            .map(|c| c.0.load(Ordering::SeqCst))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        counts(&[&a_woken, &b_woken]),
        counts(&[&ta_woken, &tb_woken])
    );
    assert_eq!(
        counts(&[&a_woken, &b_woken]),
        [0, 1],
        "the stored waker is woken"
    );
    let locks = locks_taken();
    assert!(both(&b, &tb).is_ready());
    assert_eq!(locks_taken(), locks, "a elapsed tick: no lock");
}

/// A hashwheel sleep and a tokio sleep with the same deadline, each
/// with a waker of its own that counts its wake-ups.
struct Pair {
    ours: Sleep,
    theirs: Pin<Box<tokio::time::Sleep>>,
    woken: (Arc<Count>, Waker),
    twoken: (Arc<Count>, Waker),
}

impl Pair {
    /// Both made and polled once (registered).
    fn new(ours: Sleep, deadline: Instant) -> Pair {
        let mut pair = Pair {
            ours,
            theirs: Box::pin(tokio::time::sleep_until(deadline)),
            woken: waker(),
            twoken: waker(),
        };
        assert!(pair.poll().is_pending());
        pair
    }

    /// Polls both with their wakers: they must agree.
    fn poll(&mut self) -> Poll<()> {
        let theirs = self
            .theirs
            .as_mut()
            .poll(&mut Context::from_waker(&self.twoken.1));
        let ours = poll(&mut self.ours, &self.woken.1);
        assert_eq!(ours, theirs, "ready when tokio's is");
        ours
    }

    fn reset(&mut self, deadline: Instant) {
        self.ours.reset(deadline);
        self.theirs.as_mut().reset(deadline);
    }

    /// Advances the paused clock by `ms`, lets the wheel's driver run,
    /// and checks that both were woken alike, then polls both.
    async fn advance(&mut self, ms: u64) -> Poll<()> {
        tokio::time::advance(Duration::from_millis(ms)).await;
        tokio::task::yield_now().await;
        let count = |c: &Arc<Count>| c.0.load(Ordering::SeqCst);
        assert_eq!(
            count(&self.woken.0),
            count(&self.twoken.0),
            "woken like tokio's after {ms} ms more"
        );
        self.poll()
    }
}

/// A reset within the tick the entry is filed for takes no lock; one
/// to a later tick takes one. Each fires when tokio's sleep, reset the
/// same way, fires.
#[tokio::test(start_paused = true)]
async fn a_reset_within_the_same_tick_takes_no_lock() {
    let wheel = Wheel::new();
    let start = Instant::now();
    let at = |us: u64| start + Duration::from_micros(us);
    let mut pair = Pair::new(wheel.sleep_until(at(9_100)), at(9_100));
    let locks = locks_taken();
    for us in [9_200, 9_900, 9_001, 10_000] {
        // All in the tick that ends at 10 ms.
        pair.reset(at(us));
        assert!(pair.poll().is_pending());
    }
    assert_eq!(locks_taken(), locks, "the same tick: no lock");
    pair.reset(at(10_001));
    assert_eq!(locks_taken(), locks + 1, "a later tick: one lock");
    assert!(pair.advance(10).await.is_pending());
    assert!(pair.advance(1).await.is_ready());
    assert!(pair.ours.is_elapsed());
    assert_eq!(start.elapsed(), Duration::from_millis(11));
}

/// Moves to later ticks: the first takes the lock once (it shares the
/// entry's due word), the ones after it none, also after the driver has
/// filed the entry again at the word's tick. A move earlier takes the
/// lock. Every step is compared with tokio's sleep moved the same way:
/// it fires when tokio's does, and neither is woken before.
#[tokio::test(start_paused = true)]
async fn moves_to_later_ticks_after_the_first_take_no_lock() {
    let wheel = Wheel::new();
    let start = Instant::now();
    let at = |ms: u64| start + Duration::from_millis(ms);
    let mut pair = Pair::new(wheel.sleep_until(at(10)), at(10));
    let locks = locks_taken();
    pair.reset(at(12));
    assert_eq!(
        locks_taken(),
        locks + 1,
        "the first move later shares the word"
    );
    assert!(pair.ours.entry.shares_word());
    for ms in [15, 20, 26] {
        pair.reset(at(ms));
        assert!(pair.poll().is_pending());
    }
    assert_eq!(
        locks_taken(),
        locks + 1,
        "later moves with the word: no lock"
    );
    // The driver meets the entry at 10 ms and files it at 26, waking
    // no one.
    assert!(pair.advance(10).await.is_pending());
    let locks = locks_taken();
    pair.reset(at(30));
    assert!(pair.poll().is_pending());
    assert_eq!(locks_taken(), locks, "after the driver filed it again");
    assert!(pair.advance(16).await.is_pending());
    let locks = locks_taken(); // the driver ran on this thread
    pair.reset(at(28));
    assert_eq!(locks_taken(), locks + 1, "a move earlier takes the lock");
    assert!(pair.poll().is_pending());
    assert!(pair.advance(1).await.is_pending());
    assert!(pair.advance(1).await.is_ready());
    assert_eq!(start.elapsed(), Duration::from_millis(28));
    assert_eq!(wheel.metrics().fired_count(), 1);
}

/// A sleep that fired through its shared word and is reset registers a
/// new entry, whose word it does not share yet: its first move later
/// takes the lock again, and
/// it fires at its new deadline, as tokio's does.
#[tokio::test(start_paused = true)]
async fn a_sleep_registered_again_shares_its_new_word_again() {
    let wheel = Wheel::new();
    let start = Instant::now();
    let at = |ms: u64| start + Duration::from_millis(ms);
    let mut pair = Pair::new(wheel.sleep_until(at(5)), at(5));
    pair.reset(at(6));
    pair.reset(at(7));
    assert!(pair.advance(7).await.is_ready());
    pair.reset(at(20));
    assert!(pair.poll().is_pending(), "registered again");
    assert!(!pair.ours.entry.shares_word(), "the old word is let go");
    let locks = locks_taken();
    pair.reset(at(25));
    pair.reset(at(30));
    assert_eq!(locks_taken(), locks + 1);
    assert!(pair.advance(22).await.is_pending());
    assert!(pair.advance(1).await.is_ready());
    assert_eq!(start.elapsed(), Duration::from_millis(30));
    drop(pair);
    let m = wheel.metrics();
    assert_eq!((m.fired_count(), m.num_entries()), (2, 0));
}

/// A shutdown wakes a registered sleep, whose next poll with the same
/// waker completes: the poll that takes no lock sees the shutdown.
#[tokio::test(start_paused = true)]
async fn a_poll_with_the_same_waker_sees_a_shutdown() {
    let wheel = Wheel::new();
    let mut sleep = wheel.sleep(Duration::from_secs(10));
    let (woken, w) = waker();
    assert!(poll(&mut sleep, &w).is_pending());
    assert!(poll(&mut sleep, &w).is_pending());
    assert_eq!(wheel.shutdown(), 1);
    assert_eq!(woken.0.load(Ordering::SeqCst), 1);
    assert!(poll(&mut sleep, &w).is_ready());
}

/// A sleep moved later keeps the waker its entry holds: the poll after
/// the reset takes no lock and the sleep fires at the new deadline, as
/// tokio's does.
#[tokio::test(start_paused = true)]
async fn a_reset_later_keeps_the_lock_free_poll() {
    let wheel = Wheel::new();
    let start = Instant::now();
    let at = |ms: u64| start + Duration::from_millis(ms);
    let mut pair = Pair::new(wheel.sleep_until(at(10)), at(10));
    pair.reset(at(30));
    let locks = locks_taken();
    assert!(pair.poll().is_pending());
    assert_eq!(locks_taken(), locks);
    assert!(pair.advance(10).await.is_pending());
    assert!(pair.advance(19).await.is_pending());
    assert!(pair.advance(1).await.is_ready());
    assert_eq!(start.elapsed(), Duration::from_millis(30));
    assert!(pair.ours.is_elapsed());
}
