//! The engine: everything that runs the timers, below the public types.
//!
//! The public layer (`Sleep`, `Timeout`, `Delay`, `Wheel`, ...) holds
//! deadlines and entry handles and calls the engine; the engine never names
//! a public type.
//!
//! - [`config`]: a wheel's settings and what makes them invalid.
//! - [`handle`]: starting a wheel, and the handle that keeps it alive.
//! - [`registry`]: each tokio runtime's default wheel.
//! - [`core`] and [`shards`]: what a wheel's shards share, the shards, and
//!   a timer's hold on its shard.
//! - [`entry`]: the entry protocol, written once: how a timer's entry is
//!   filed, polled, moved, cancelled and fired, in its two variants (a
//!   sleep's owned entry and a delay's shared one).
//! - [`shard`], [`due_word`], [`waker_id`]: one shard's locked state, its
//!   lock-free due words, and the ids that let a poll skip the lock.
//! - [`driver`]: the tokio task that advances the shards.
//! - [`queue`]: the single-owner wheel behind `DelayQueue`.
//! - [`hashed`]: the hashed timing wheel itself, plain data with no tokio.
//! - [`clock`]: the only place where an `Instant` becomes a tick.
//! - [`sync`]: the locks and atomics, swapped for loom's under `cfg(loom)`.
//! - [`tokio_reliance`]: every behaviour of tokio the engine relies on
//!   beyond its documented API, each with the test that checks it.
//!
//! # How it works
//!
//! A `Wheel` is a hashed timing wheel (Varghese & Lauck 1996, scheme 6, as in
//! Netty's `HashedWheelTimer`) in shards, driven by one tokio task.
//!
//! ## Ticks, buckets and rounds
//!
//! Time is counted in ticks (`Builder::tick`, 1 ms by default) from an origin
//! on tokio's own millisecond grid: a wheel, when built, asks tokio's timer for
//! a millisecond boundary it has processed. A deadline rounds up to the end of
//! its tick, so with 1 ms ticks a timer fires at the millisecond tokio's timer
//! would, never early. Deadlines are nanoseconds from the origin, clamped to a
//! horizon of 2^63 ns, so every timer fires eventually.
//!
//! A ring of `buckets` buckets (a power of two) holds the timers: one due at tick
//! `t` goes into bucket `t & (buckets - 1)` and keeps its absolute tick, so a
//! timer whole turns away waits in its bucket for the turn in which it is due.
//! A bit per bucket says whether it holds an entry, so the search for the next
//! tick with work skips empty buckets a word at a time; bounds on each bucket's
//! ticks let a bucket due as a whole move to the due list in one splice.
//!
//! ## A slab and lists of keys
//!
//! Entries live in a slab; each bucket is a doubly linked list of slab keys in
//! filing order, so timers due at one tick expire in the order they were
//! filed. Insert and cancel are O(1); expiry is O(1) per expired timer plus a
//! look at each bucket the driver visits. The slab hands out its lowest free
//! key, not the one freed last: after a burst of timers is cancelled in random
//! order, the next ones fill memory front to back instead of landing at random
//! addresses. An entry holds the tick it is filed at, its two links and the
//! waker; its due tick lives in the shard's word table. A timer refers to its
//! entry by key, so every timer future is `Unpin`, and nothing needs `unsafe`.
//!
//! ## Shards
//!
//! Each shard is a hashed wheel behind its own lock (a spin lock whose release
//! is a plain store), and a thread makes its timers in its own shard, so
//! workers do not contend. No waker is woken or dropped under a shard lock:
//! the driver takes them out in batches and wakes them after releasing it. A
//! timer holds its shard through an `Arc`; an emptied shard gives its slab back.
//!
//! ## The unfiled batch and the sweep
//!
//! A timer registered for a future tick is not linked into its bucket at once:
//! it waits, unfiled, in a short list per shard, filed in order when the list
//! is full or before the driver advances the shard. Most timers are cancelled
//! long before they are due (a request's timeout, dropped when the response
//! comes), and one cancelled while unfiled is removed at once, touching no
//! bucket and no list neighbour; its slot is the next one handed out.
//!
//! Cancelling a filed sleep drops its waker at once and leaves its entry on
//! the shard's swept list. The shard removes those in batches (and all of them
//! before the driver looks at the shard, or as soon as they are all it holds),
//! reading the list neighbours of the whole batch before writing any, so that
//! with millions of timers the cache misses on those neighbours overlap.
//!
//! ## Polls and later resets without the lock
//!
//! - **The processed tick.** Each shard publishes the last tick it has
//!   processed in an atomic. Once a sleep's tick has elapsed its entry is the
//!   driver's, which removes it as it expires it; a sleep polled after that
//!   completes without the lock.
//! - **The waker id.** A sleep remembers which waker its entry holds (data
//!   pointer and a number for its vtable, equal exactly when
//!   `Waker::will_wake` would say so). A poll with that waker before the tick
//!   reads the processed tick and the shutdown flag and returns `Pending`:
//!   only the driver, after publishing the tick, and a shutdown, after raising
//!   the flag, take the waker away.
//! - **Due words.** A deadline moved later only records the new tick; the
//!   driver files the entry again when it meets it, and wakes no one. Each
//!   entry's due tick is an atomic word in its shard's word table, whose
//!   chunks never move. The first move to a later tick takes the lock once
//!   and shares the word with the sleep; every later move is one
//!   compare-and-swap on the word, which the sleep finds by its key. The
//!   driver fires a shared word's entry with a compare-and-swap of its own, so
//!   a move and a firing of the same tick cannot both win: the loser learns it
//!   and registers again or files the entry at its new tick. A deadline moved
//!   within its tick changes nothing; one moved earlier moves the entry.
//! - **Lazy registration.** A timer takes an entry on its first poll: one
//!   dropped unpolled, or a `timeout` whose future is ready at once, takes no
//!   lock.
//!
//! ## The driver and its alarm
//!
//! One tokio task per wheel, the driver, sleeps on one tokio `Sleep` until the
//! end of the earliest tick that can hold a due timer, and not at all while the
//! wheel is empty. That sleep is polled with the driver's own waker, its
//! alarm: when tokio's timer fires it, the alarm runs the driver's pass right
//! there, inside tokio's timer processing. The pass expires the due timers, up
//! to a bound, and re-arms the tokio sleep for the next tick with work before
//! tokio's timer parks again, so the wheel's timers wake in the same step as
//! tokio's own timers for the same instant (when `tokio::time::advance`
//! returns, every wheel timer due by then has been woken).
//!
//! The task runs the pass only when the alarm cannot finish (more due timers
//! than its bound, a pass running on another thread) or a registration needs
//! an earlier tick. A pass catches up on every missed tick (each bucket once
//! when it missed more than a turn), wakes in registration order, and on a
//! multi-thread runtime yields after a batch that fits in half a worker's local
//! run queue, so the woken tasks stay stealable and run while still warm.
//!
//! Each firing of the alarm and each wake of the task counts one wake-up
//! (`Metrics::driver_wakeups_count`), and each pass that fires timers
//! measures the driver's lag (`Metrics::max_driver_lag`, the lag histogram,
//! the stall `WARN`): the first after the wheel is built, one after an idle
//! period and one for a new earliest timer alike.
//!
//! ## The default wheel
//!
//! Each tokio runtime gets a default wheel on first use, its driver a task on
//! that runtime; a registry maps the runtime's id to it. The free functions
//! find it through tokio's current task id and a thread-local cache that also
//! keeps the thread's shard, and ask the registry (one `Handle::try_current()`)
//! when the task or runtime differs. When the runtime drops the driver, its
//! guard shuts the wheel down; the runtime's next timer gets a new one.
//!
//! ## `DelayQueue` and shutdown
//!
//! A `DelayQueue` keeps a private wheel of the same kind, with no lock (it has
//! one owner), and one entry on the shared wheel at its next due tick, which
//! wakes its task. A value moved later stays in its bucket and notes how much
//! later it is due; when its old tick comes the queue moves it on, so a reset
//! writes one entry and no list neighbour.
//!
//! A wheel that shuts down (`Wheel::shutdown`, or its runtime gone) wakes
//! every pending timer: a `Sleep` or `Timeout` completes as elapsed, a `Delay`
//! fails with `is_shutdown()`, a `DelayQueue` hands out what it holds.

pub(crate) mod clock;
pub(crate) mod config;
pub(crate) mod core;
pub(crate) mod counts;
pub(crate) mod driver;
pub(crate) mod due_word;
pub(crate) mod entry;
pub(crate) mod handle;
pub(crate) mod hashed;
pub(crate) mod lag;
#[cfg(test)]
mod loom_models;
pub(crate) mod publish;
pub(crate) mod queue;
pub(crate) mod registry;
pub(crate) mod shard;
pub(crate) mod shards;
pub(crate) mod sync;
pub(crate) mod tokio_reliance;
pub(crate) mod waker_id;
