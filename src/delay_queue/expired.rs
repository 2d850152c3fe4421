//! What a `DelayQueue` hands out: the keys to its values, and a value that
//! has left it.

use std::num::NonZeroU32;

use tokio::time::Instant;

/// A key to a value in a [`DelayQueue`](super::DelayQueue), returned by
/// [`insert`](super::DelayQueue::insert).
///
/// Keys are generational: once its value has been removed or has expired, a
/// key never reaches another value, even one stored in its place; the
/// `try_` methods return `None` for it and the others panic. (A queue
/// counts generations in 32 bits: only a key kept across 2^32 - 1 later
/// inserts, whose place then holds the value of exactly the insert that
/// brought the count round, could match again.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub(super) index: u32,
    pub(super) generation: NonZeroU32,
}

/// A value that has left a [`DelayQueue`](super::DelayQueue), by expiring or by
/// [`remove`](super::DelayQueue::remove).
#[derive(Debug)]
pub struct Expired<T> {
    pub(super) value: T,
    pub(super) deadline: Instant,
    pub(super) key: Key,
}

impl<T> Expired<T> {
    /// The value.
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
    /// let key = queue.insert(7, Duration::from_secs(1));
    /// let expired = queue.remove(&key);
    /// assert_eq!(*expired.get_ref(), 7);
    /// # }
    /// ```
    pub fn get_ref(&self) -> &T {
        &self.value
    }

    /// The value, mutably.
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
    /// let key = queue.insert(vec![1], Duration::from_secs(1));
    /// let mut expired = queue.remove(&key);
    /// expired.get_mut().push(2);
    /// assert_eq!(expired.into_inner(), [1, 2]);
    /// # }
    /// ```
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.value
    }

    /// Takes the value.
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
    /// let key = queue.insert(String::from("job"), Duration::from_secs(1));
    /// let value: String = queue.remove(&key).into_inner();
    /// assert_eq!(value, "job");
    /// # }
    /// ```
    pub fn into_inner(self) -> T {
        self.value
    }

    /// The deadline the value had.
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
    /// let key = queue.insert("job", Duration::from_secs(1));
    /// let deadline = queue.deadline(&key);
    /// assert_eq!(queue.remove(&key).deadline(), deadline);
    /// # }
    /// ```
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// The key the value had. It is no longer valid.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use futures::StreamExt;
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let mut queue = wheel.delay_queue();
    /// let key = queue.insert("job", Duration::from_secs(1));
    /// let expired = queue.next().await.unwrap();
    /// assert_eq!(expired.key(), key); // tells which value this was
    /// assert!(queue.try_remove(&key).is_none()); // and it is gone
    /// # }
    /// ```
    pub fn key(&self) -> Key {
        self.key
    }
}
