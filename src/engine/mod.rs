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
//! - [`wheel`]: the hashed timing wheel itself, plain data with no tokio.
//! - [`clock`]: the only place where an `Instant` becomes a tick.
//! - [`sync`]: the locks and atomics, swapped for loom's under `cfg(loom)`.

pub(crate) mod clock;
pub(crate) mod config;
pub(crate) mod core;
pub(crate) mod driver;
pub(crate) mod due_word;
pub(crate) mod entry;
pub(crate) mod handle;
#[cfg(test)]
mod loom_models;
pub(crate) mod queue;
pub(crate) mod registry;
pub(crate) mod shard;
pub(crate) mod shards;
pub(crate) mod sync;
pub(crate) mod waker_id;
pub(crate) mod wheel;
