use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::Instant;

use crate::engine::clock::Deadline;
use crate::engine::due_word::Chunk;
use crate::engine::registry;
use crate::engine::shard::Registration;
use crate::engine::sync::Arc;
use crate::engine::waker_id::WakerId;
use crate::engine::ShardRef;

/// A future that completes at a deadline, made by
/// [`Wheel::sleep`](crate::Wheel::sleep) or
/// [`Wheel::sleep_until`](crate::Wheel::sleep_until).
///
/// It completes at the first tick of its wheel at or after the deadline:
/// never before the deadline, at most one tick (plus scheduling) after it.
///
/// Unlike tokio's `Sleep`, it is [`Unpin`]: `tokio::select!` can poll
/// `&mut sleep` in a loop without `tokio::pin!`. It holds no wheel entry
/// until its first poll. Dropping it drops its waker at once and gives
/// its entry back with its shard's next batch of removals: amortised O(1).
///
/// Far deadlines behave as with tokio: a duration whose sum with now
/// overflows an `Instant` (`Duration::MAX`) lands 30 years from now, as
/// `tokio::time::sleep` puts it, and a deadline more than 2^63 ns (about 292
/// years) after the wheel's origin is clamped to that horizon. Either way
/// the sleep completes there, so a paused-clock test that awaits it
/// auto-advances to it instead of hanging; nothing overflows or panics. After the wheel shuts
/// down, or its runtime goes away, a pending `Sleep` completes as if its
/// deadline had passed, so that no task waits forever on a dead wheel.
///
/// # Cancel safety
///
/// Cancel safe: polling `&mut sleep` in a `select!` branch that loses
/// keeps its place in the wheel.
///
/// # Examples
///
/// Reset a sleep on every event, the idle-timeout pattern:
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use tokio::time::Instant;
///
/// let wheel = hashwheel::Wheel::new();
/// let (tx, mut rx) = tokio::sync::mpsc::channel::<u32>(8);
/// tokio::spawn(async move {
///     for i in 0..3 {
///         tokio::time::sleep(Duration::from_millis(50)).await;
///         tx.send(i).await.unwrap();
///     }
/// });
/// let idle = Duration::from_millis(100);
/// let mut sleep = wheel.sleep(idle);
/// let mut got = 0;
/// loop {
///     tokio::select! {
///         Some(_) = rx.recv() => {
///             got += 1;
///             sleep.reset(Instant::now() + idle);
///         }
///         _ = &mut sleep => break,
///     }
/// }
/// assert_eq!(got, 3);
/// # }
/// ```
#[must_use = "futures do nothing unless you `.await` or poll them"]
#[derive(Debug)]
pub struct Sleep {
    shard: ShardRef,
    /// Finite: far deadlines are clamped (see `crate::engine::clock`).
    deadline: Deadline,
    key: u32,
    /// The waker the entry holds, while `Registered`: a poll with that
    /// waker takes no lock.
    waker: WakerId,
    /// The chunk of the entry's due word, once a reset moved it to a later
    /// tick: later moves then take no lock.
    word: Option<Arc<Chunk>>,
    state: State,
    /// Polled or reset at least once: only then can it have fired, as in
    /// tokio, whose `Sleep` makes its timer on the first poll or reset.
    touched: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Not registered yet.
    Unchecked,
    /// Has an entry under `key`.
    Registered,
    /// Completed.
    Done,
}

impl Sleep {
    /// A sleep `duration` from now on the wheel of `shard`.
    #[inline]
    pub(crate) fn after(shard: ShardRef, duration: Duration) -> Sleep {
        let at = shard.core().clock.deadline_after(duration);
        Sleep::new(shard, at)
    }

    /// A sleep until `deadline` on the wheel of `shard`.
    pub(crate) fn until(shard: ShardRef, deadline: Instant) -> Sleep {
        let at = shard.core().clock.deadline_of(deadline);
        Sleep::new(shard, at)
    }

    /// A sleep on the wheel of `shard` whose deadline is set later, by
    /// [`start`](Sleep::start), before its first poll or reset (for a
    /// `LazyTimeout` made on a held wheel).
    pub(crate) fn unstarted(shard: ShardRef) -> Sleep {
        Sleep::new(shard, Deadline::ORIGIN)
    }

    /// Sets the deadline of an [`unstarted`](Sleep::unstarted) sleep to
    /// `duration` from now.
    pub(crate) fn start(&mut self, duration: Duration) {
        debug_assert!(self.state == State::Unchecked && !self.touched);
        self.deadline = self.shard.core().clock.deadline_after(duration);
    }

    /// Sets the deadline of an [`unstarted`](Sleep::unstarted) sleep to
    /// `deadline`.
    pub(crate) fn start_at(&mut self, deadline: Instant) {
        debug_assert!(self.state == State::Unchecked && !self.touched);
        self.deadline = self.shard.core().clock.deadline_of(deadline);
    }

    /// A sleep until `deadline`.
    pub(crate) fn new(shard: ShardRef, deadline: Deadline) -> Sleep {
        Sleep {
            shard,
            deadline,
            key: 0,
            waker: WakerId::NONE,
            word: None,
            touched: false,
            state: State::Unchecked,
        }
    }

    /// The instant at which this sleep completes.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    /// use tokio::time::Instant;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let at = Instant::now() + Duration::from_secs(3);
    /// assert_eq!(wheel.sleep_until(at).deadline(), at);
    /// # }
    /// ```
    pub fn deadline(&self) -> Instant {
        self.shard.core().clock.instant_of(self.deadline)
    }

    /// Whether this sleep's timer has fired: it has been polled or reset,
    /// and the tick of its deadline has come (on a multi-thread runtime:
    /// has been processed by the wheel's driver, as tokio's answer comes
    /// from its driver; see "First poll after the deadline" in the README).
    /// As with tokio's `Sleep`, a sleep that was never polled nor reset is
    /// not elapsed, even when its deadline has passed.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let mut sleep = wheel.sleep(Duration::from_millis(10));
    /// assert!(!sleep.is_elapsed());
    /// (&mut sleep).await;
    /// assert!(sleep.is_elapsed());
    /// # }
    /// ```
    pub fn is_elapsed(&self) -> bool {
        self.state == State::Done || (self.touched && self.shard.has_ended(self.deadline))
    }

    /// Moves the deadline to `deadline`, whether or not the sleep has
    /// completed: a completed sleep becomes pending again.
    ///
    /// O(1). As with tokio's timer, a deadline moved later never wakes the
    /// task at the old one: the entry keeps its place and the driver files
    /// it again when it gets there. A deadline that stays in the wheel tick
    /// it was due at changes nothing in the wheel and takes no lock. The
    /// first move to a later tick takes the shard's lock once, to share the
    /// entry's due word with the sleep (once per registration); every later
    /// move writes that word and takes no lock, as an idle timer reset on
    /// every message wants. Nothing is allocated. A deadline moved earlier moves the entry;
    /// one whose tick has ended completes the sleep and wakes the task that
    /// last polled it.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    /// use tokio::time::Instant;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let start = Instant::now();
    /// let mut sleep = wheel.sleep(Duration::from_millis(10));
    /// sleep.reset(start + Duration::from_millis(30));
    /// (&mut sleep).await;
    /// assert_eq!(start.elapsed(), Duration::from_millis(30));
    /// # }
    /// ```
    pub fn reset(&mut self, deadline: Instant) {
        let at = self.shard.core().clock.deadline_of(deadline);
        self.reset_to(at);
    }

    /// Moves the deadline to `deadline` (see [`reset`](Sleep::reset)).
    pub(crate) fn reset_to(&mut self, deadline: Deadline) {
        let old = std::mem::replace(&mut self.deadline, deadline);
        self.touched = true;
        match self.state {
            State::Registered => {
                if !self
                    .shard
                    .reset_owned(self.key, old, deadline, &mut self.word)
                {
                    self.leave_entry(State::Unchecked);
                }
            }
            _ => self.state = State::Unchecked,
        }
    }

    /// The entry is gone (fired, or removed): so is its word's chunk, which
    /// would otherwise stay allocated for this sleep.
    fn leave_entry(&mut self, state: State) {
        self.state = state;
        self.word = None;
    }

    pub(crate) fn poll_sleep(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.touched = true;
        match self.state {
            State::Done => Poll::Ready(()),
            State::Registered => {
                if self
                    .shard
                    .poll_owned(self.key, self.deadline, cx.waker(), &mut self.waker)
                    .is_ready()
                {
                    self.leave_entry(State::Done);
                    Poll::Ready(())
                } else {
                    Poll::Pending
                }
            }
            State::Unchecked => match self.shard.file_owned(self.deadline, cx.waker()) {
                Registration::Key(key) => {
                    self.key = key;
                    self.waker = WakerId::of(cx.waker());
                    debug_assert!(self.word.is_none(), "a word is its entry's");
                    self.state = State::Registered;
                    Poll::Pending
                }
                Registration::Elapsed | Registration::Shutdown => {
                    self.state = State::Done;
                    Poll::Ready(())
                }
            },
        }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.get_mut().poll_sleep(cx)
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if self.state == State::Registered {
            self.shard.cancel_owned(self.key, self.deadline);
        }
    }
}

// ===== on the default wheel =====

/// Waits until `duration` has elapsed, on the current runtime's default
/// wheel: a drop-in for [`tokio::time::sleep`].
///
/// The same as [`Wheel::current()`](crate::Wheel::current)`.sleep(duration)`,
/// without the clone. The [`Sleep`] completes at the first tick (1 ms by
/// default) at or after the deadline, never before it, and is [`Unpin`].
/// `Duration::ZERO` completes on the first poll; `Duration::MAX` lands 30
/// years from now, as `tokio::time::sleep` puts it.
///
/// # Cancel safety
///
/// Cancel safe, as [`Sleep`] is.
///
/// # Panics
///
/// Outside a tokio runtime, and when the default wheel is at its
/// [`max_pending`](crate::Builder::max_pending) bound (see
/// [`Builder::build_default`](crate::Builder::build_default)).
///
/// ```should_panic
/// use std::time::Duration;
///
/// // No runtime here: "hashwheel::sleep must be called from the context
/// // of a Tokio 1.x runtime".
/// let _sleep = hashwheel::sleep(Duration::from_millis(10));
/// ```
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use hashwheel::sleep;
/// use tokio::time::Instant;
///
/// let start = Instant::now();
/// sleep(Duration::from_millis(100)).await;
/// assert_eq!(start.elapsed(), Duration::from_millis(100));
/// # }
/// ```
#[track_caller]
pub fn sleep(duration: Duration) -> Sleep {
    Sleep::after(registry::claim("sleep"), duration)
}

/// Waits until `deadline`, on the current runtime's default wheel: a
/// drop-in for [`tokio::time::sleep_until`].
///
/// A deadline in the past completes on the first poll.
///
/// # Cancel safety
///
/// Cancel safe, as [`Sleep`] is.
///
/// # Panics
///
/// Outside a tokio runtime, and when the default wheel is at capacity.
///
/// ```should_panic
/// // No runtime here.
/// let _sleep = hashwheel::sleep_until(tokio::time::Instant::now());
/// ```
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use hashwheel::sleep_until;
/// use tokio::time::Instant;
///
/// let deadline = Instant::now() + Duration::from_millis(10);
/// sleep_until(deadline).await;
/// assert_eq!(Instant::now(), deadline);
/// # }
/// ```
#[track_caller]
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep::until(registry::claim("sleep_until"), deadline)
}

#[cfg(all(test, not(loom)))]
mod tests {
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

    /// Its shard, deadline, key and state, the id of the waker its entry
    /// holds (9 bytes, packed) and the chunk of its shared due word.
    #[test]
    fn a_sleep_is_40_bytes() {
        assert_eq!(std::mem::size_of::<Sleep>(), 40);
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
    /// shard lock, nor does the poll that finds its tick processed; a new
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
        assert_eq!(locks_taken(), locks, "a processed tick: no lock");
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
        assert!(pair.ours.word.is_some());
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
        assert!(pair.ours.word.is_none(), "the old chunk is let go");
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
}
