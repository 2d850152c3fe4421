//! A `DelayQueue`'s values by key: inserting one, and removing, moving or
//! reading the deadline of the value a key names.

use std::num::NonZeroU32;
use std::time::Duration;

use tokio::time::Instant;

use super::expired::{Expired, Key};
use super::DelayQueue;
use crate::engine::clock::Deadline;
use crate::engine::queue::Due;

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
        let at = self.bind().0.deadline_after(timeout);
        self.insert_deadline(value, at)
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
        let at = self.bind().0.deadline_at(when);
        self.insert_deadline(value, at)
    }

    #[track_caller]
    /// A value's deadline rounds up to a tick, as tokio-util rounds; one
    /// from before the queue was made counts as the queue's first tick. The
    /// value's deadline then reads as the end of that tick, as tokio-util's
    /// does.
    fn insert_deadline(&mut self, value: T, deadline: Deadline) -> Key {
        let generation = self.generation;
        self.generation = self.generation.checked_add(1).unwrap_or(NonZeroU32::MIN);
        let Ok((index, due)) = self.bind().0.insert(deadline, value, generation) else {
            panic!("DelayQueue is full: it holds 2^32 - 3 values");
        };
        self.wake_if_sooner(due);
        Key { index, generation }
    }

    /// Wakes the polling task if `due` comes before the armed moment.
    fn wake_if_sooner(&mut self, due: Due) {
        if self.armed.is_none_or(|armed| due < armed) {
            self.armed = None;
            if let Some(w) = self.waker.take() {
                w.wake();
            }
        }
    }

    fn valid(&self, key: &Key) -> bool {
        self.wheel()
            .and_then(|wheel| wheel.get(key.index))
            .is_some_and(|s| s.generation == key.generation)
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
        match self.try_remove(key) {
            Some(e) => e,
            None => panic!("invalid key: {key:?} is not in this DelayQueue"),
        }
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
        if !self.valid(key) {
            return None;
        }
        let expired = self.take(key.index);
        if self.is_empty() {
            // Empty now: a task waiting in `poll_expired` gets `Ready(None)`.
            self.armed = None;
            if let Some(w) = self.waker.take() {
                w.wake();
            }
        }
        Some(expired)
    }

    pub(super) fn take(&mut self, index: u32) -> Expired<T> {
        let wheel = self.bind().0;
        let deadline = wheel.deadline_of(index);
        let slot = wheel.remove(index);
        Expired {
            deadline,
            key: Key {
                index,
                generation: slot.generation,
            },
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
        if self.try_reset(key, timeout).is_none() {
            panic!("invalid key: {key:?} is not in this DelayQueue");
        }
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
        let at = self.wheel()?.deadline_after(timeout);
        self.reset_to(key, at)
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
        if self.try_reset_at(key, when).is_none() {
            panic!("invalid key: {key:?} is not in this DelayQueue");
        }
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
        let at = self.wheel()?.deadline_at(when);
        self.reset_to(key, at)
    }

    fn reset_to(&mut self, key: &Key, deadline: Deadline) -> Option<()> {
        if !self.valid(key) {
            return None;
        }
        let due = self.bind().0.reschedule(key.index, deadline);
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
        match self.try_deadline(key) {
            Some(d) => d,
            None => panic!("invalid key: {key:?} is not in this DelayQueue"),
        }
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
        let wheel = self.wheel()?;
        let slot = wheel.get(key.index)?;
        (slot.generation == key.generation).then(|| wheel.deadline_of(key.index))
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
}
