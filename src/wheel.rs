use std::time::Duration;

use crate::engine::handle::WheelHandle;
use crate::engine::registry;
use crate::engine::shards::ShardRef;
use crate::error::{BuildError, Error};
use crate::metrics::Metrics;

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
    handle: WheelHandle,
}

impl Wheel {
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
        Wheel::from_handle(registry::current())
    }

    /// Like [`current`](Wheel::current), but returns an error outside a
    /// tokio runtime.
    ///
    /// # Errors
    ///
    /// [`BuildError::is_no_runtime`](crate::error::BuildError::is_no_runtime)
    /// outside a tokio runtime.
    pub fn try_current() -> Result<Wheel, BuildError> {
        registry::try_current()
            .map(Wheel::from_handle)
            .map_err(BuildError::new)
    }

    pub(crate) fn from_handle(handle: WheelHandle) -> Wheel {
        Wheel { handle }
    }

    /// A place on this wheel for one more timer, on the shard this thread
    /// uses; an error when `max_pending` timers are alive.
    #[inline]
    pub(crate) fn claim(&self) -> Result<ShardRef, Error> {
        self.handle.claim().ok_or(Error::at_capacity())
    }

    #[track_caller]
    pub(crate) fn claim_or_panic(&self, what: &str) -> ShardRef {
        match self.claim() {
            Ok(s) => s,
            Err(e) => panic!("hashwheel::Wheel::{what}: {e}"),
        }
    }

    /// The tick: the wheel's resolution.
    pub fn tick(&self) -> Duration {
        self.handle.tick()
    }

    /// The number of buckets (a power of two).
    pub fn slots(&self) -> usize {
        self.handle.slots()
    }

    /// A snapshot of the wheel's counters.
    pub fn metrics(&self) -> Metrics {
        let s = self.handle.snapshot();
        Metrics {
            num_pending: s.counts.pending,
            num_entries: s.counts.entries,
            num_shards: s.shards,
            fired_count: s.counts.fired,
            cancelled_count: s.counts.cancelled,
            driver_wakeups_count: s.wakeups,
            waker_panic_count: s.waker_panics,
            max_driver_lag: s.max_lag,
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
        self.handle.shutdown()
    }

    /// Whether the wheel has shut down.
    #[inline]
    pub fn is_shutdown(&self) -> bool {
        self.handle.is_shutdown()
    }
}
