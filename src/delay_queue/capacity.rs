//! A `DelayQueue`'s size and memory: how many values it holds, the room
//! it keeps for them, and giving that room back.

use super::DelayQueue;
use crate::engine::queue::QueueWheel;

impl<T> DelayQueue<T> {
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

    /// Gives back the memory of removed values, keeping every [`Key`](super::Key)
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
