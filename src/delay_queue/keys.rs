//! A `DelayQueue`'s values by key (inserting one, and removing, moving or
//! reading the deadline of the value a key names), and its size and
//! memory: how many values it holds, the room it keeps for them, and
//! giving that room back.

use std::num::NonZeroU32;
use std::time::Duration;

use tokio::time::Instant;

use super::expired::{Expired, Key};
use super::DelayQueue;
use crate::engine::clock::Deadline;
use crate::engine::queue::{Due, QueueWheel};

impl<T> DelayQueue<T> {
    /// Inserts `value`, to expire `timeout` from now. `Duration::MAX` lands
    /// 30 years from now, as with tokio's timer.
    ///
    /// # Panics
    ///
    /// When the queue already holds 2^32 - 3 values; for the first insert
    /// into a queue made outside a runtime, as [`new`](DelayQueue::new)
    /// says.
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
    /// let before = tokio::time::Instant::now();
    /// let key = queue.insert("job", Duration::from_secs(5));
    /// assert!(queue.deadline(&key) >= before + Duration::from_secs(5));
    /// assert_eq!(queue.len(), 1);
    /// # }
    /// ```
    #[track_caller]
    pub fn insert(&mut self, value: T, timeout: Duration) -> Key {
        self.insert_with(value, |wheel| wheel.deadline_after(timeout))
    }

    /// Inserts `value`, to expire at `when`. Like every deadline it expires
    /// at the first tick boundary at or after it: one whose tick has already
    /// come (an earlier tick than the current one) expires at the next poll,
    /// one inside the current tick at the next tick boundary.
    ///
    /// # Panics
    ///
    /// When the queue already holds 2^32 - 3 values; for the first insert
    /// into a queue made outside a runtime, as [`new`](DelayQueue::new)
    /// says.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use futures::StreamExt;
    /// use hashwheel::Instant;
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let mut queue = wheel.delay_queue();
    /// let when = Instant::now() + Duration::from_secs(5);
    /// let key = queue.insert_at("job", when);
    /// assert!(queue.deadline(&key) >= when);
    ///
    /// let expired = queue.next().await.unwrap();
    /// assert!(Instant::now() >= when);
    /// assert_eq!(expired.into_inner(), "job");
    /// # }
    /// ```
    #[track_caller]
    pub fn insert_at(&mut self, value: T, when: Instant) -> Key {
        self.insert_with(value, |wheel| wheel.deadline_at(when))
    }

    /// Inserts `value` at the deadline `at` gives on the queue's wheel. A
    /// value's deadline rounds up to a tick, as tokio-util rounds; one from
    /// before the queue was made counts as the queue's first tick. The
    /// value's deadline then reads as the end of that tick, as tokio-util's
    /// does.
    #[track_caller]
    fn insert_with(&mut self, value: T, at: impl FnOnce(&QueueWheel<T>) -> Deadline) -> Key {
        let generation = self.generation;
        self.generation = self.generation.checked_add(1).unwrap_or(NonZeroU32::MIN);
        let wheel = self.bind();
        let Ok((index, due)) = wheel.insert(at(wheel), value, generation) else {
            panic!("DelayQueue is full: it holds 2^32 - 3 values");
        };
        self.wake_if_sooner(due);
        Key { index, generation }
    }

    /// Wakes the polling task if `due` comes before the armed moment.
    fn wake_if_sooner(&mut self, due: Due) {
        if self.armed.is_none_or(|armed| due < armed) {
            self.wake();
        }
    }

    /// The queue's wheel, if the value of `key` is in it.
    fn holding(&self, key: &Key) -> Option<&QueueWheel<T>> {
        let wheel = self.wheel()?;
        (wheel.get(key.index)?.generation == key.generation).then_some(wheel)
    }

    /// Removes the value of `key` and returns it.
    ///
    /// # Panics
    ///
    /// When `key` is not in the queue (removed, or expired and returned);
    /// [`try_remove`](DelayQueue::try_remove) returns `None` instead.
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
    /// let key = queue.insert("job", Duration::from_secs(5));
    /// assert_eq!(queue.remove(&key).into_inner(), "job");
    /// assert!(queue.try_remove(&key).is_none()); // the key is stale now
    /// # }
    /// ```
    #[track_caller]
    pub fn remove(&mut self, key: &Key) -> Expired<T> {
        found(self.try_remove(key), key)
    }

    /// Removes the value of `key` and returns it, or `None` when `key` is not
    /// in the queue.
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
    /// let key = queue.insert("job", Duration::from_secs(5));
    /// assert_eq!(queue.try_remove(&key).map(|e| e.into_inner()), Some("job"));
    /// assert!(queue.try_remove(&key).is_none()); // already gone
    /// # }
    /// ```
    pub fn try_remove(&mut self, key: &Key) -> Option<Expired<T>> {
        self.holding(key)?;
        let expired = self.take(key.index);
        if self.is_empty() {
            // Empty now: a task waiting in `poll_expired` gets `Ready(None)`.
            self.wake();
        }
        Some(expired)
    }

    pub(super) fn take(&mut self, index: u32) -> Expired<T> {
        let wheel = self.bind();
        let deadline = wheel.deadline_of(index);
        let slot = wheel.remove(index);
        let generation = slot.generation;
        Expired {
            deadline,
            key: Key { index, generation },
            value: slot.value,
        }
    }

    /// Moves the value of `key` to expire `timeout` from now.
    ///
    /// # Panics
    ///
    /// When `key` is not in the queue; see [`try_reset`](DelayQueue::try_reset).
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
    /// let key = queue.insert("conn", Duration::from_secs(30));
    /// let before = tokio::time::Instant::now();
    /// queue.reset(&key, Duration::from_secs(60)); // activity: postpone
    /// assert!(queue.deadline(&key) >= before + Duration::from_secs(60));
    /// # }
    /// ```
    #[track_caller]
    pub fn reset(&mut self, key: &Key, timeout: Duration) {
        found(self.try_reset(key, timeout), key)
    }

    /// Like [`reset`](DelayQueue::reset), but returns `None` when `key` is
    /// not in the queue.
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
    /// let key = queue.insert("conn", Duration::from_secs(30));
    /// assert_eq!(queue.try_reset(&key, Duration::from_secs(60)), Some(()));
    /// queue.remove(&key);
    /// assert_eq!(queue.try_reset(&key, Duration::from_secs(60)), None);
    /// # }
    /// ```
    pub fn try_reset(&mut self, key: &Key, timeout: Duration) -> Option<()> {
        self.reset_with(key, |wheel| wheel.deadline_after(timeout))
    }

    /// Moves the value of `key` to expire at `when`.
    ///
    /// # Panics
    ///
    /// When `key` is not in the queue; see
    /// [`try_reset_at`](DelayQueue::try_reset_at).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use hashwheel::Instant;
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let mut queue = wheel.delay_queue();
    /// let key = queue.insert("conn", Duration::from_secs(30));
    /// let when = Instant::now() + Duration::from_secs(5);
    /// queue.reset_at(&key, when); // sooner
    /// assert!(queue.deadline(&key) >= when);
    /// assert!(queue.deadline(&key) < Instant::now() + Duration::from_secs(30));
    /// # }
    /// ```
    #[track_caller]
    pub fn reset_at(&mut self, key: &Key, when: Instant) {
        found(self.try_reset_at(key, when), key)
    }

    /// Like [`reset_at`](DelayQueue::reset_at), but returns `None` when
    /// `key` is not in the queue.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use hashwheel::Instant;
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let mut queue = wheel.delay_queue();
    /// let key = queue.insert("conn", Duration::from_secs(30));
    /// let when = Instant::now() + Duration::from_secs(5);
    /// assert_eq!(queue.try_reset_at(&key, when), Some(()));
    /// queue.remove(&key);
    /// assert_eq!(queue.try_reset_at(&key, when), None);
    /// # }
    /// ```
    pub fn try_reset_at(&mut self, key: &Key, when: Instant) -> Option<()> {
        self.reset_with(key, |wheel| wheel.deadline_at(when))
    }

    /// Moves the value of `key` to the deadline `at` gives on the queue's
    /// wheel; `None` when `key` is not in the queue.
    fn reset_with(&mut self, key: &Key, at: impl FnOnce(&QueueWheel<T>) -> Deadline) -> Option<()> {
        let deadline = at(self.holding(key)?);
        let due = self.bind().reschedule(key.index, deadline);
        self.wake_if_sooner(due);
        Some(())
    }

    /// The deadline of the value of `key`.
    ///
    /// # Panics
    ///
    /// When `key` is not in the queue; see
    /// [`try_deadline`](DelayQueue::try_deadline).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use hashwheel::Instant;
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let mut queue = wheel.delay_queue();
    /// let start = Instant::now();
    /// let key = queue.insert("job", Duration::from_secs(5));
    /// // At or after the deadline asked for, rounded up to the wheel's tick.
    /// let deadline = queue.deadline(&key);
    /// assert!(deadline >= start + Duration::from_secs(5));
    /// assert!(deadline <= start + Duration::from_secs(5) + wheel.tick());
    /// # }
    /// ```
    #[track_caller]
    pub fn deadline(&self, key: &Key) -> Instant {
        found(self.try_deadline(key), key)
    }

    /// The deadline of the value of `key`, or `None` when `key` is not in
    /// the queue.
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
    /// let key = queue.insert("job", Duration::from_secs(5));
    /// assert!(queue.try_deadline(&key).is_some());
    /// queue.remove(&key);
    /// assert!(queue.try_deadline(&key).is_none());
    /// # }
    /// ```
    pub fn try_deadline(&self, key: &Key) -> Option<Instant> {
        Some(self.holding(key)?.deadline_of(key.index))
    }

    /// The key of the value that expires next, if any.
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
    /// queue.insert("later", Duration::from_secs(9));
    /// let soon = queue.insert("soon", Duration::from_secs(1));
    /// assert_eq!(queue.peek(), Some(soon));
    /// # }
    /// ```
    pub fn peek(&self) -> Option<Key> {
        let wheel = self.wheel()?;
        let index = wheel.peek_earliest()?;
        let generation = wheel.get(index)?.generation;
        Some(Key { index, generation })
    }

    /// The number of values in the queue, expired ones not yet returned
    /// included.
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
    /// queue.insert("a", Duration::from_secs(1));
    /// queue.insert("b", Duration::from_secs(2));
    /// assert_eq!(queue.len(), 2);
    /// tokio::time::advance(Duration::from_secs(3)).await;
    /// assert_eq!(queue.len(), 2); // expired, but not yet taken out
    /// # }
    /// ```
    pub fn len(&self) -> usize {
        self.wheel().map_or(0, QueueWheel::len)
    }

    /// Whether the queue holds no value.
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
    /// assert!(queue.is_empty());
    /// let key = queue.insert("a", Duration::from_secs(1));
    /// assert!(!queue.is_empty());
    /// queue.remove(&key);
    /// assert!(queue.is_empty());
    /// # }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many values the queue can hold without allocating.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let wheel = hashwheel::Wheel::new();
    /// let queue = wheel.delay_queue_with_capacity::<u32>(100);
    /// assert!(queue.capacity() >= 100);
    /// # }
    /// ```
    pub fn capacity(&self) -> usize {
        self.wheel().map_or(self.reserved, QueueWheel::capacity)
    }

    /// Makes room for at least `additional` more values.
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
    /// queue.insert(0, Duration::from_secs(1));
    /// queue.reserve(500);
    /// assert!(queue.capacity() >= 501);
    /// # }
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        match &mut self.bound {
            Some((wheel, _)) => wheel.reserve(additional),
            None => self.reserved = self.reserved.max(additional),
        }
    }

    /// Gives back as much memory as possible without moving any value: after
    /// a burst has drained, all of it.
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
    /// let keys: Vec<_> = (0..10_000).map(|i| queue.insert(i, Duration::from_secs(1))).collect();
    /// for key in &keys {
    ///     queue.remove(key);
    /// }
    /// queue.shrink_to_fit();
    /// assert_eq!(queue.capacity(), 0);
    /// # }
    /// ```
    pub fn shrink_to_fit(&mut self) {
        match &mut self.bound {
            Some((wheel, _)) => wheel.shrink_to_fit(),
            None => self.reserved = 0,
        }
    }

    /// Removes every value. A task waiting in
    /// [`poll_expired`](DelayQueue::poll_expired) is woken, to see
    /// `Ready(None)`.
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
    /// queue.insert("a", Duration::from_secs(5));
    /// queue.clear();
    /// assert!(queue.is_empty());
    /// # }
    /// ```
    pub fn clear(&mut self) {
        if !self.is_empty() {
            self.wake();
        }
        if let Some((wheel, _)) = &mut self.bound {
            wheel.clear();
        }
        self.armed = None;
    }

    /// Gives back the memory of removed values, keeping every [`Key`]
    /// valid: tokio-util's `compact`.
    ///
    /// tokio-util moves values to the front of its storage and keeps a map
    /// from old keys to new places. Keys here name a value's place, which
    /// must not move, so compaction gives back the room after the last
    /// value held, as [`shrink_to_fit`](DelayQueue::shrink_to_fit) does:
    /// all of it once the queue has drained.
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
    /// let keys: Vec<_> = (0..1000).map(|i| queue.insert(i, Duration::from_secs(1))).collect();
    /// for key in &keys[1..] {
    ///     queue.remove(key);
    /// }
    /// queue.compact();
    /// assert!(queue.capacity() < 1000);
    /// assert_eq!(*queue.remove(&keys[0]).get_ref(), 0); // the key still works
    /// # }
    /// ```
    pub fn compact(&mut self) {
        self.shrink_to_fit();
    }
}

/// What a method found for `key`, or its panic when `key` is not in the
/// queue (its `try_` twin returns `None`).
#[track_caller]
fn found<R>(found: Option<R>, key: &Key) -> R {
    match found {
        Some(r) => r,
        None => panic!("invalid key: {key:?} is not in this DelayQueue"),
    }
}
