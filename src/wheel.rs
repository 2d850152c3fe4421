use std::future::{Future, IntoFuture};
use std::time::Duration;

use tokio::time::Instant;

use crate::builder::Builder;
use crate::delay::schedule;
use crate::delay::{Delay, TimeoutHandle};
use crate::delay_queue::DelayQueue;
use crate::engine::clock::instant_after;
use crate::engine::queue::QueueAlarm;
use crate::engine::shard::Shard;
use crate::engine::sync::{Arc, Ordering};
use crate::engine::{ShardRef, Shards};
use crate::error::Error;
use crate::interval::Interval;
use crate::lazy_timeout::LazyTimeout;
use crate::metrics::Metrics;
use crate::sleep::Sleep;
use crate::timeout::Timeout;

/// A hashed timing wheel and the handle to its driver task.
///
/// A `Wheel` makes timers: [`sleep`](Wheel::sleep), [`timeout`](Wheel::timeout)
/// and the cancellable [`delay`](Wheel::delay). It is cheap to clone (every
/// clone is the same wheel) and `Send + Sync`. Its driver is a tokio task
/// spawned on the runtime the wheel was built in; it runs until
/// [`shutdown`](Wheel::shutdown), until its runtime shuts down, or until the
/// last `Wheel` handle and the last timer are dropped.
///
/// # Implementation
///
/// A hashed timing wheel (Varghese & Lauck, *Hashed and Hierarchical Timing
/// Wheels*, 1996, scheme 6), the scheme of Netty's `HashedWheelTimer` and
/// the Linux timer wheel:
///
/// - Time is cut into ticks ([`Builder::tick`], 1 ms by default), counted
///   from one of tokio's own tick boundaries: when a wheel is built it asks
///   tokio's timer for the last millisecond boundary it processed (a binary
///   search on whether a tokio `Sleep` completes on its first poll, about
///   forty polls, once). A deadline rounds **up** to the end of its tick, so
///   with 1 ms ticks a timer fires at the very millisecond tokio's own timer
///   would, never early, and the driver's tokio sleep for a tick boundary
///   is not rounded a second time.
/// - A ring of `slots` buckets (a power of two, 4096 by default); a timer
///   due at tick `t` goes into bucket `t & (slots - 1)`. Each entry keeps its
///   absolute tick, so one that is whole turns away stays in its bucket until
///   its turn comes.
/// - Entries live in a slab; each bucket is a doubly linked list of slab
///   keys. The slab hands out the lowest free key, not the one freed last:
///   after a million timers were cancelled in random order, the next
///   million fill the freed memory front to back instead of jumping to a
///   random address each (a cache miss per insert; in a task at 1M pending,
///   while a server's other timers keep the shard from emptying, an insert
///   took about 240 ns that way and takes about 120 now).
///   Insert and cancel are O(1); expiry costs O(1) per expired timer
///   plus a look at the entries of each bucket the driver visits. An entry
///   is 32 bytes (the tick it is filed at, two links and the waker), its
///   due tick a word of 8 more in the shard's word table (below), and a
///   `Sleep` 40: 80 bytes per pending sleep.
/// - The wheel is split into shards, each with its own lock; a thread makes
///   its timers in its own shard, so threads do not contend. Registering
///   and cancelling cost one uncontended lock each. The lock is a spin lock
///   (`spin`'s `SpinMutex`, whose waiters yield their thread): its release
///   is a plain store, where std's `Mutex` releases with a second atomic
///   instruction that waits for the critical section's stores; that made
///   register + cancel in a task about 10 ns cheaper, and a `timeout` whose
///   future is pending once about 20 ns.
/// - A timer registered for a future tick is not linked into its bucket at
///   once: it waits, unfiled, in a list of up to 1024 entries per shard,
///   which is filed in order when it is full or before the driver advances
///   the shard. Most timers are cancelled long before they are due, and
///   one cancelled while unfiled is removed at once, with no bucket and no
///   list neighbour written; its slot is the next one handed out. In the
///   server simulation of `examples/compare` 93 % of the request timeouts'
///   cancels found their entry unfiled (32 % with a list of 64). Counted
///   with callgrind in a task on one worker, register + cancel went from
///   about 786 to 737 instructions; with the slab's insert inlined and one
///   comparison less per deadline conversion, 665 (tokio's: 626).
/// - Cancelling a sleep whose entry has been filed drops its waker at once
///   but leaves its entry in the wheel; the shard removes such entries 32
///   at a time (and all of them before the driver looks at it). With millions of timers an entry's
///   list neighbours are random in memory: removed one per lock hold, each
///   cancel waited for those cache misses at the lock's release, while a
///   batch lets them overlap. Measured in a task (two runs of each build,
///   alternating), cancelling in random order went from about 220 to 190
///   ns at 1M pending timers and from 390 to 270 ns at 4M; in insertion
///   order from 170 to 110 ns at 1M and from 130 to 85 ns at 4M. The sweep
///   then reads the list neighbours of its whole batch before it writes
///   any (`HashedWheel::remove_many`): those loads depend on nothing but
///   their own entry, so their misses overlap, and the removals find the
///   lines in the cache. Two alternating runs of the builds before and
///   after (`compare --only task_register,task_timeout,task_insert --imps
///   hashwheel,tokio`, a slow phase of the host): random order at 1M 592 /
///   548 → 376 / 316 ns (tokio 808 / 595 and 548 / 466), at 4M 767 / 381
///   → 611 / 364 (tokio 1089 / 638 and 1073 / 626); insertion order at 1M
///   121 / 110 → 59 / 54, at 4M 104 / 64 → 75 / 49; register + cancel and
///   a `timeout` pending once unchanged. Not reading the entry at the
///   cancel at all, and dropping its waker with the sweep, was tried
///   (`c6f4ee6`, reverted): the random-order rows, whose sleeps all hold
///   one task's waker, read a third less, but in a server every swept
///   waker is another connection task's, and the sweep's 32 reference
///   counts on cold task headers cost more than the entry's read (run 9
///   in BENCHMARKS.md).
/// - A deadline moved later only records the new tick; the driver files
///   the entry again when it meets it, and wakes no one at the old
///   deadline. Each entry's due tick is an atomic word in its shard's word
///   table, one word per slab slot in chunks of 512 (a 4 KiB page). The
///   first move later takes the lock once and shares the word: the sleep
///   keeps its chunk (an `Arc` clone). Every later move is one
///   compare-and-swap on that word, with no lock; the driver fires a shared
///   word's entry with a compare-and-swap of its own, so a move and a
///   firing of the same tick cannot both win (the loser learns it and
///   registers again, or files the entry at the new tick). An idle timer
///   reset on every message pays the lock once, and allocates nothing. It
///   costs the `Sleep` 8 bytes (the chunk it may hold; the word itself
///   replaces the due tick the entry kept). A table of chunks that sleeps
///   reach through their shard saves those 8 bytes (built in `05d2d44`:
///   72.4 instead of 80.4 bytes per pending sleep at 1M), but with no
///   count of its readers none of its chunks can be freed before its
///   shard; after a burst `tests/stress.rs` then found up to 23 MiB still
///   resident (bound 16) in 2 of 19 runs. Reverted. Measured in a task on one
///   worker, a reset 1 ms later and a poll went from 24–35 to 22–27 ns
///   (three alternating runs of `compare --only task_reset,reset`), and the
///   same on a plain thread from 24–25 to 21–24 ns (tokio 49–50);
///   register + cancel moved by 0–4 ns, within the noise of those runs. A deadline moved within
///   the tick the entry is due at changes nothing in the shard and takes no
///   lock at all (a burst of messages on one connection). A deadline moved
///   earlier moves the entry, under the lock.
/// - Once a sleep's tick has been processed its entry belongs to the
///   driver, which removes it while it expires it, under the lock it holds
///   anyway. Each shard publishes how far it has been processed in an
///   atomic, so a sleep polled after its tick completes without a lock.
/// - A sleep remembers which waker its entry holds: the waker's data
///   pointer and a number for its vtable, from a small process-wide table
///   that only grows, so that equal ids mean what
///   [`Waker::will_wake`](std::task::Waker::will_wake)
///   means. A poll with that waker before the sleep's tick (an idle timer
///   in a `select!` loop, polled on every message) returns `Pending` with
///   no lock and no atomic write: it reads the shard's processed tick and
///   the wheel's shutdown flag, which is all a pending answer depends on,
///   since only the driver (after publishing the tick) and a shutdown
///   (after raising the flag) take the waker away. It costs another 8 bytes
///   per `Sleep`; a reset to a later deadline followed by a poll, in a task on
///   one worker, went from 39 / 33 ns to 24 / 24 (two alternating runs of
///   `compare --only task_reset`; tokio 61–68).
/// - The driver sleeps, on one tokio `Sleep`, until the earliest tick that
///   can hold a due timer: an idle wheel never wakes, and timers far away
///   cost no wake-ups until they come near. That tokio sleep is polled with
///   a waker of the driver's own, its alarm, which runs the driver's pass
///   right inside tokio's timer processing: it expires the due timers (up
///   to 4,096), so they are woken in the same step as tokio's own timers
///   would be (when `tokio::time::advance` returns, every timer due by then
///   has been woken), and re-arms the tokio sleep for the next tick with
///   work before tokio's timer parks again. The driver task runs only when
///   a registration needs an earlier tick or a batch is bigger than the
///   alarm takes; it catches up on every tick missed (with more missed
///   ticks than slots it visits each bucket once), takes the expired wakers
///   under the lock in batches, wakes them after releasing it, in the
///   order the timers were registered, and yields to the runtime after
///   every 128 wake-ups on a multi-thread runtime (half of a tokio worker's
///   local run queue, so the woken tasks neither spill to the shared
///   injection queue nor go cold before they run) or 100,000 on a
///   current-thread one.
/// - Each shard keeps one bit per bucket saying whether it holds an entry,
///   so finding the next tick with work skips 64 empty buckets at a time:
///   a pass over an empty shard costs a few dozen word reads, not a walk
///   over its 4,096 buckets.
/// - Costs, measured in a task on one worker of a multi-thread runtime
///   (BENCHMARKS.md): registering and cancelling a 30 s sleep is about
///   90–130 ns, of which a clock read when the sleep is made (as tokio's)
///   takes 20–40, depending on the machine, and the two uncontended shard
///   locks about 15. What any timer that wakes a task pays, a clock read
///   and a clone of its waker, read 33 ns in run 11, where registering and
///   cancelling read 89 (tokio's 95). Each timer holds its shard through an `Arc`; a
///   scratch build that held a bare pointer instead read 4 % less, too
///   little for the `unsafe` it needs and a shard that outlives its wheel.
///   Its first poll reads the clock only on a
///   current-thread runtime, where
///   tokio's clock can be paused and a sleep first polled after an
///   `advance` past its deadline must complete at once, as tokio's does;
///   on a multi-thread runtime the shard's processed tick decides, as
///   tokio's driver's does.
///   The free functions find the runtime's default wheel through tokio's
///   current task id and a thread-local cache, which also keeps the
///   thread's shard of that wheel: a few nanoseconds over a held `Wheel`
///   for a task that calls again (4–6 ns for register + cancel in the last
///   full runs). Counted with callgrind in a task on one worker, register +
///   cancel is 715 instructions against a held `Wheel`'s 659, and a free
///   `lazy_timeout` pending once, which makes that lookup in its first
///   pending poll, 732 against the `Wheel` method's 714.
/// - Timers register lazily, on their first poll: a timer dropped before it
///   is polled, or a [`timeout`](Wheel::timeout) whose future is ready at
///   once, never takes a lock.
/// - All time comes from [`tokio::time::Instant`], so tokio's paused clock
///   (`start_paused`, `tokio::time::advance`, auto-advance) drives the wheel
///   exactly as it drives tokio's timer.
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
/// wheel.sleep(Duration::from_millis(100)).await;
/// assert_eq!(start.elapsed(), Duration::from_millis(100));
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Wheel {
    handle: Arc<Handle>,
}

/// The one handle behind every clone of a `Wheel`.
#[derive(Debug)]
struct Handle {
    shards: Arc<Shards>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        let core = &self.shards.core;
        if core.handles.fetch_sub(1, Ordering::AcqRel) == 1 {
            core.signal.notify_one();
        }
    }
}

/// The runtime to spawn on, or a panic naming the caller.
#[track_caller]
fn current_runtime(what: &str) -> tokio::runtime::Handle {
    match tokio::runtime::Handle::try_current() {
        Ok(h) => h,
        Err(_) => panic!(
            "hashwheel::Wheel::{what} must be called from the context of a Tokio 1.x runtime"
        ),
    }
}

impl Wheel {
    /// A wheel with the default settings (1 ms tick, 4096 slots, unbounded)
    /// whose driver runs on the current tokio runtime.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime. [`Builder::build`] returns an error instead.
    ///
    /// ```should_panic
    /// let _wheel = hashwheel::Wheel::new(); // no runtime here
    /// ```
    #[track_caller]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Wheel {
        match Builder::new().build() {
            Ok(w) => w,
            Err(e) => panic!("hashwheel::Wheel::new: {e}"),
        }
    }

    /// The current runtime's default wheel: the one the free functions
    /// ([`hashwheel::sleep`](crate::sleep), [`timeout`](crate::timeout), ...)
    /// use. It is built with the default settings on first use, unless
    /// [`Builder::build_default`] configured it.
    ///
    /// Each runtime has its own. Its driver runs on that runtime and dies
    /// with it: when the runtime shuts down, the wheel shuts down and its
    /// pending timers complete (see [`shutdown`](Wheel::shutdown)).
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime; [`try_current`](Wheel::try_current) returns
    /// an error instead.
    ///
    /// ```should_panic
    /// let _wheel = hashwheel::Wheel::current(); // no runtime here
    /// ```
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// hashwheel::sleep(Duration::from_millis(5)).await;
    /// assert_eq!(hashwheel::Wheel::current().metrics().fired_count(), 1);
    /// # }
    /// ```
    #[track_caller]
    pub fn current() -> Wheel {
        crate::engine::registry::current()
    }

    /// Like [`current`](Wheel::current), but returns an error outside a
    /// tokio runtime.
    ///
    /// # Errors
    ///
    /// [`BuildError::is_no_runtime`](crate::error::BuildError::is_no_runtime)
    /// outside a tokio runtime.
    pub fn try_current() -> Result<Wheel, crate::error::BuildError> {
        crate::engine::registry::try_current()
    }

    /// A [`Builder`] to configure a wheel.
    pub fn builder() -> Builder {
        Builder::new()
    }

    pub(crate) fn from_shards(shards: Arc<Shards>) -> Wheel {
        shards.core.handles.fetch_add(1, Ordering::AcqRel);
        Wheel {
            handle: Arc::new(Handle { shards }),
        }
    }

    fn shards(&self) -> &Shards {
        &self.handle.shards
    }

    /// The shard this thread uses, with a reservation if the wheel is bounded.
    #[inline]
    pub(crate) fn claim(&self) -> Result<ShardRef, Error> {
        // Not `ShardRef::claim(shards.current())`: counting on the core
        // the wheel holds before picking the shard is 4 instructions fewer
        // per timer (callgrind), on the path every held wheel's timer takes.
        let shards = self.shards();
        if !shards.core.acquire() {
            return Err(Error::at_capacity());
        }
        Ok(ShardRef::new(shards.current()))
    }

    /// The shard this thread uses: what [`claim`](Wheel::claim) would
    /// claim on, for a cache of this thread's own.
    pub(crate) fn thread_shard(&self) -> Arc<Shard> {
        self.shards().current().clone()
    }

    #[track_caller]
    fn claim_or_panic(&self, what: &str) -> ShardRef {
        match self.claim() {
            Ok(s) => s,
            Err(e) => panic!("hashwheel::Wheel::{what}: {e}"),
        }
    }

    // ===== Sleep =====

    /// A [`Sleep`] that completes `duration` from now.
    ///
    /// `Duration::ZERO` completes on the first poll without touching the
    /// wheel; `Duration::MAX` lands 30 years from now, as with tokio (see
    /// [`Sleep`] on far deadlines).
    ///
    /// # Panics
    ///
    /// When the wheel is at its [`max_pending`](Builder::max_pending) bound;
    /// [`try_sleep`](Wheel::try_sleep) returns an error instead.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// wheel.sleep(Duration::from_millis(10)).await;
    /// # }
    /// ```
    #[track_caller]
    pub fn sleep(&self, duration: Duration) -> Sleep {
        let shard = self.claim_or_panic("sleep");
        Sleep::after(shard, duration)
    }

    /// Like [`sleep`](Wheel::sleep), but returns an error when the wheel is
    /// at capacity.
    ///
    /// # Errors
    ///
    /// [`Error::is_at_capacity`] when `max_pending` timers are alive.
    pub fn try_sleep(&self, duration: Duration) -> Result<Sleep, Error> {
        let shard = self.claim()?;
        Ok(Sleep::after(shard, duration))
    }

    /// A [`Sleep`] that completes at `deadline`. A deadline in the past
    /// completes on the first poll without touching the wheel.
    ///
    /// # Panics
    ///
    /// When the wheel is at capacity; see [`try_sleep_until`](Wheel::try_sleep_until).
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
    /// let deadline = Instant::now() + Duration::from_millis(10);
    /// wheel.sleep_until(deadline).await;
    /// assert!(Instant::now() >= deadline);
    /// # }
    /// ```
    #[track_caller]
    pub fn sleep_until(&self, deadline: Instant) -> Sleep {
        let shard = self.claim_or_panic("sleep_until");
        Sleep::until(shard, deadline)
    }

    /// Like [`sleep_until`](Wheel::sleep_until), but returns an error when
    /// the wheel is at capacity.
    ///
    /// # Errors
    ///
    /// [`Error::is_at_capacity`] when `max_pending` timers are alive.
    pub fn try_sleep_until(&self, deadline: Instant) -> Result<Sleep, Error> {
        let shard = self.claim()?;
        Ok(Sleep::until(shard, deadline))
    }

    // ===== Timeout =====

    /// Requires `future` to complete within `duration`: a [`Timeout`] that
    /// resolves to `Err(Elapsed)` if it does not.
    ///
    /// # Panics
    ///
    /// When the wheel is at capacity; see [`try_timeout`](Wheel::try_timeout).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let slow = tokio::time::sleep(Duration::from_secs(5));
    /// assert!(wheel.timeout(Duration::from_secs(1), slow).await.is_err());
    /// # }
    /// ```
    #[track_caller]
    pub fn timeout<F: IntoFuture>(&self, duration: Duration, future: F) -> Timeout<F::IntoFuture> {
        let shard = self.claim_or_panic("timeout");
        Timeout::new(future.into_future(), shard, instant_after(duration))
    }

    /// Like [`timeout`](Wheel::timeout), but returns an error when the wheel
    /// is at capacity.
    ///
    /// # Errors
    ///
    /// [`Error::is_at_capacity`] when `max_pending` timers are alive.
    pub fn try_timeout<F: IntoFuture>(
        &self,
        duration: Duration,
        future: F,
    ) -> Result<Timeout<F::IntoFuture>, Error> {
        let shard = self.claim()?;
        Ok(Timeout::new(
            future.into_future(),
            shard,
            instant_after(duration),
        ))
    }

    /// Requires `future` to complete by `deadline`.
    ///
    /// # Panics
    ///
    /// When the wheel is at capacity; see [`try_timeout_at`](Wheel::try_timeout_at).
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
    /// let deadline = Instant::now() + Duration::from_millis(10);
    /// assert_eq!(wheel.timeout_at(deadline, async { 5 }).await, Ok(5));
    /// # }
    /// ```
    #[track_caller]
    pub fn timeout_at<F: IntoFuture>(
        &self,
        deadline: Instant,
        future: F,
    ) -> Timeout<F::IntoFuture> {
        let shard = self.claim_or_panic("timeout_at");
        Timeout::new(future.into_future(), shard, deadline)
    }

    /// Like [`timeout_at`](Wheel::timeout_at), but returns an error when the
    /// wheel is at capacity.
    ///
    /// # Errors
    ///
    /// [`Error::is_at_capacity`] when `max_pending` timers are alive.
    pub fn try_timeout_at<F: IntoFuture>(
        &self,
        deadline: Instant,
        future: F,
    ) -> Result<Timeout<F::IntoFuture>, Error> {
        Ok(Timeout::new(future.into_future(), self.claim()?, deadline))
    }

    /// Requires `future` to complete within `duration` of the first poll
    /// at which it is pending: a [`LazyTimeout`]. A future that is ready
    /// on its first poll costs no clock read and no wheel entry; otherwise
    /// the deadline counts from that poll, not from this call as with
    /// [`timeout`](Wheel::timeout), so it can only be later.
    ///
    /// # Panics
    ///
    /// When the wheel is at capacity (a lazy timeout counts from when it is
    /// made); see [`try_lazy_timeout`](Wheel::try_lazy_timeout).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let cached = async { "hit" };
    /// assert_eq!(wheel.lazy_timeout(Duration::from_secs(1), cached).await, Ok("hit"));
    /// assert_eq!(wheel.metrics().num_pending(), 0);
    /// # }
    /// ```
    #[track_caller]
    pub fn lazy_timeout<F: IntoFuture>(
        &self,
        duration: Duration,
        future: F,
    ) -> LazyTimeout<F::IntoFuture> {
        let sleep = Sleep::unstarted(self.claim_or_panic("lazy_timeout"));
        LazyTimeout::new(future.into_future(), duration, Some(sleep))
    }

    /// Like [`lazy_timeout`](Wheel::lazy_timeout), but returns an error when
    /// the wheel is at capacity.
    ///
    /// # Errors
    ///
    /// [`Error::is_at_capacity`] when `max_pending` timers are alive.
    pub fn try_lazy_timeout<F: IntoFuture>(
        &self,
        duration: Duration,
        future: F,
    ) -> Result<LazyTimeout<F::IntoFuture>, Error> {
        let sleep = Sleep::unstarted(self.claim()?);
        Ok(LazyTimeout::new(
            future.into_future(),
            duration,
            Some(sleep),
        ))
    }

    // ===== Delay =====

    /// A cancellable [`Delay`] that expires `duration` from now; see
    /// [`Delay::handle`].
    ///
    /// # Panics
    ///
    /// When the wheel is at capacity; see [`try_delay`](Wheel::try_delay).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// assert!(wheel.delay(Duration::from_millis(10)).await.is_ok());
    /// # }
    /// ```
    #[track_caller]
    pub fn delay(&self, duration: Duration) -> Delay {
        let shard = self.claim_or_panic("delay");
        Delay::after(shard, duration)
    }

    /// Like [`delay`](Wheel::delay), but returns an error when the wheel is
    /// at capacity.
    ///
    /// # Errors
    ///
    /// [`Error::is_at_capacity`] when `max_pending` timers are alive.
    pub fn try_delay(&self, duration: Duration) -> Result<Delay, Error> {
        let shard = self.claim()?;
        Ok(Delay::after(shard, duration))
    }

    /// A cancellable [`Delay`] that expires at `deadline`.
    ///
    /// # Panics
    ///
    /// When the wheel is at capacity; see [`try_delay_at`](Wheel::try_delay_at).
    #[track_caller]
    pub fn delay_at(&self, deadline: Instant) -> Delay {
        let shard = self.claim_or_panic("delay_at");
        Delay::until(shard, deadline)
    }

    /// Like [`delay_at`](Wheel::delay_at), but returns an error when the
    /// wheel is at capacity.
    ///
    /// # Errors
    ///
    /// [`Error::is_at_capacity`] when `max_pending` timers are alive.
    pub fn try_delay_at(&self, deadline: Instant) -> Result<Delay, Error> {
        let shard = self.claim()?;
        Ok(Delay::until(shard, deadline))
    }

    // ===== scheduled tasks =====

    /// Spawns `future` on the current runtime `duration` from now: Netty's
    /// `newTimeout(task, delay)` for async code.
    ///
    /// Until then the future waits in the wheel, costing one wheel entry and
    /// no tokio task; cancelling the returned handle first drops it without
    /// running it. Its output is discarded. If the wheel shuts down first, the
    /// future is dropped and the handle reports neither expired nor cancelled.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime, or when the wheel is at capacity (see
    /// [`try_spawn_after`](Wheel::try_spawn_after)).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let (tx, rx) = tokio::sync::oneshot::channel();
    /// let retry = wheel.spawn_after(Duration::from_secs(1), async move {
    ///     tx.send("retried").unwrap();
    /// });
    /// assert_eq!(rx.await.unwrap(), "retried");
    /// assert!(retry.is_expired());
    /// # }
    /// ```
    #[track_caller]
    pub fn spawn_after<F>(&self, duration: Duration, future: F) -> TimeoutHandle
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match self.try_spawn_after(duration, future) {
            Ok(h) => h,
            Err(e) => panic!("hashwheel::Wheel::spawn_after: {e}"),
        }
    }

    /// Like [`spawn_after`](Wheel::spawn_after), but returns an error when
    /// the wheel is at capacity.
    ///
    /// # Errors
    ///
    /// [`Error::is_at_capacity`] when `max_pending` timers are alive.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime.
    #[track_caller]
    pub fn try_spawn_after<F>(&self, duration: Duration, future: F) -> Result<TimeoutHandle, Error>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let runtime = current_runtime("spawn_after");
        let shard = self.claim()?;
        let deadline = shard.core().clock.deadline_after(duration);
        Ok(schedule(shard, deadline, runtime, future))
    }

    /// Spawns `future` on the current runtime at `deadline`; see
    /// [`spawn_after`](Wheel::spawn_after).
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime, or when the wheel is at capacity.
    #[track_caller]
    pub fn spawn_at<F>(&self, deadline: Instant, future: F) -> TimeoutHandle
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match self.try_spawn_at(deadline, future) {
            Ok(h) => h,
            Err(e) => panic!("hashwheel::Wheel::spawn_at: {e}"),
        }
    }

    /// Like [`spawn_at`](Wheel::spawn_at), but returns an error when the
    /// wheel is at capacity.
    ///
    /// # Errors
    ///
    /// [`Error::is_at_capacity`] when `max_pending` timers are alive.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime.
    #[track_caller]
    pub fn try_spawn_at<F>(&self, deadline: Instant, future: F) -> Result<TimeoutHandle, Error>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let runtime = current_runtime("spawn_at");
        let shard = self.claim()?;
        let at = shard.core().clock.deadline_of(deadline);
        Ok(schedule(shard, at, runtime, future))
    }

    // ===== Interval =====

    /// An [`Interval`] whose first tick completes at once and then every
    /// `period`.
    ///
    /// # Panics
    ///
    /// When `period` is zero, or the wheel is at capacity.
    ///
    /// ```should_panic
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let wheel = hashwheel::Wheel::new();
    /// let _ = wheel.interval(std::time::Duration::ZERO); // `period` must be non-zero.
    /// # }
    /// ```
    #[track_caller]
    pub fn interval(&self, period: Duration) -> Interval {
        self.interval_at(Instant::now(), period)
    }

    /// An [`Interval`] whose first tick completes at `start` and then every
    /// `period`.
    ///
    /// # Panics
    ///
    /// When `period` is zero, or the wheel is at capacity.
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
    /// let start = Instant::now() + Duration::from_millis(50);
    /// let mut interval = wheel.interval_at(start, Duration::from_millis(10));
    /// assert_eq!(interval.tick().await, start);
    /// # }
    /// ```
    #[track_caller]
    pub fn interval_at(&self, start: Instant, period: Duration) -> Interval {
        assert!(period > Duration::ZERO, "`period` must be non-zero.");
        Interval::new(self.sleep_until(start), period)
    }

    // ===== DelayQueue =====

    /// An empty [`DelayQueue`] whose values expire on this wheel's ticks.
    ///
    /// # Panics
    ///
    /// When the wheel is at its [`max_pending`](Builder::max_pending) bound:
    /// the queue keeps one timer on the wheel.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let mut queue = wheel.delay_queue();
    /// queue.insert(1u32, Duration::from_millis(5));
    /// let expired = std::future::poll_fn(|cx| queue.poll_expired(cx)).await;
    /// assert_eq!(expired.unwrap().into_inner(), 1);
    /// # }
    /// ```
    #[track_caller]
    pub fn delay_queue<T>(&self) -> DelayQueue<T> {
        self.delay_queue_with_capacity(0)
    }

    /// An empty [`DelayQueue`] with room for `capacity` values.
    ///
    /// # Panics
    ///
    /// As [`delay_queue`](Wheel::delay_queue).
    #[track_caller]
    pub fn delay_queue_with_capacity<T>(&self, capacity: usize) -> DelayQueue<T> {
        let shard = self.claim_or_panic("delay_queue");
        DelayQueue::on(QueueAlarm::new(shard), capacity)
    }

    // ===== the wheel itself =====

    /// The tick: the wheel's resolution.
    pub fn tick(&self) -> Duration {
        self.shards().core.clock.tick()
    }

    /// The number of buckets (a power of two).
    pub fn slots(&self) -> usize {
        self.shards().core.slots
    }

    /// A snapshot of the wheel's counters.
    pub fn metrics(&self) -> Metrics {
        let shards = self.shards();
        let c = shards.counts();
        let stats = &shards.core.stats;
        Metrics {
            num_pending: c.pending,
            num_entries: c.entries,
            num_shards: shards.shards.len(),
            fired_count: c.fired,
            cancelled_count: c.cancelled,
            driver_wakeups_count: stats.wakeups.load(Ordering::Relaxed),
            waker_panic_count: stats.waker_panics.load(Ordering::Relaxed),
            max_driver_lag: Duration::from_nanos(stats.max_lag_ns.load(Ordering::Relaxed)),
            registered_count: c.registered,
            rejected_count: stats.rejected.load(Ordering::Relaxed),
            driver_lag_buckets: stats.lag.counts(),
        }
    }

    /// Stops the driver and wakes every pending timer: a [`Delay`] resolves
    /// to an error for which [`Error::is_shutdown`] holds; a [`Sleep`] and a
    /// [`Timeout`] complete as if their deadline had passed; a
    /// [`DelayQueue`] hands out every value it holds at once, in deadline
    /// order. Timers made afterwards (and values inserted afterwards) do the
    /// same on their first poll.
    ///
    /// Returns how many timers were pending. Calling it again returns 0.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let delay = wheel.delay(Duration::from_secs(60));
    /// let waiter = tokio::spawn(delay);
    /// tokio::task::yield_now().await; // let it register
    /// assert_eq!(wheel.shutdown(), 1);
    /// assert!(waiter.await.unwrap().unwrap_err().is_shutdown());
    /// # }
    /// ```
    pub fn shutdown(&self) -> usize {
        self.shards().shutdown()
    }

    /// Whether the wheel has shut down.
    #[inline]
    pub fn is_shutdown(&self) -> bool {
        self.shards().core.is_shutdown()
    }
}
