//! A queue of values that expire at their deadlines, with the surface of
//! tokio-util's `DelayQueue`: see [`DelayQueue`], its [`Key`]s and the
//! [`Expired`] values it hands out.

// Invariants kept by this module:
//
// - Every value in the queue is one entry of the wheel in `bound`; its slot
//   carries the value and the generation its `Key` was given. A queue made
//   outside a runtime has no wheel (`bound` is `None`) until its first
//   insert, and so no values: `reserved` is the room asked for meanwhile.
// - A key is valid while the entry at its index carries its generation.
// - `armed` is the moment the alarm is set for, if any; every insert or
//   reset to an earlier one wakes the task last seen in `poll_expired`.

use std::fmt;
use std::num::NonZeroU32;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use futures_core::Stream;

use crate::coop;
use crate::engine::queue::{Due, Look, QueueAlarm, QueueWheel, Ring};
use crate::engine::shards::ShardRef;
use crate::error::Error;
use crate::wheel::{claim_default, try_claim_default};

mod expired;
mod keys;

pub use expired::{Expired, Key};

/// A queue of values that each expire at a deadline: the surface of
/// `tokio_util::time::DelayQueue`, so that switching is a change of import,
/// on a hashed timing wheel. Made by
/// [`Wheel::delay_queue`](crate::Wheel::delay_queue).
///
/// Values come out of [`poll_expired`](DelayQueue::poll_expired) (or the
/// [`Stream`] impl) at the first tick of the wheel at or after their
/// deadline, never before. Taking them out takes part in tokio's
/// [cooperative scheduling](tokio::task::coop) as with tokio-util's queue:
/// each value spends a unit of the task's budget, so a task draining a
/// large batch lets the runtime's other tasks run. Three differences from
/// tokio-util's, by design:
///
/// - [`Key`]s are generational: a key whose value is gone never reaches a
///   newer value.
/// - [`shrink_to_fit`](DelayQueue::shrink_to_fit) gives memory back once a
///   burst has drained.
/// - A value inserted already due spends budget when taken, as any value
///   does; tokio-util's hands such values out for nothing, so that a task
///   which keeps inserting and taking them never lets another task run.
///
/// Insert, reset and remove cost O(1) whatever the queue holds; handing
/// out an expired value costs O(1) more. [`Wheel`'s implementation notes](crate::Wheel#implementation)
/// tell how the wheel behind it works.
///
/// A value reset to a later deadline may wake the polling task once at its
/// old deadline, to find nothing due; no value ever comes out early or late.
///
/// After the wheel shuts down (see [`Wheel::shutdown`](crate::Wheel::shutdown))
/// nothing will wake the queue again, so it hands out every value it holds
/// at once, in deadline order, as a [`Sleep`](crate::Sleep) completes then;
/// values inserted afterwards come out at once too.
///
/// # Cancel safety
///
/// `poll_expired` and `next()` on the stream are cancel safe: a value is only
/// taken out of the queue when it is returned.
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
/// let idle = queue.insert("conn-1", Duration::from_secs(30));
/// queue.insert("conn-2", Duration::from_secs(10));
/// queue.reset(&idle, Duration::from_secs(60)); // conn-1 was active
/// assert_eq!(queue.next().await.unwrap().into_inner(), "conn-2");
/// assert_eq!(queue.next().await.unwrap().into_inner(), "conn-1");
/// assert!(queue.next().await.is_none());
/// # }
/// ```
pub struct DelayQueue<T> {
    /// The queue's own wheel and its alarm on a shared wheel.
    bound: Option<(QueueWheel<T>, QueueAlarm)>,
    /// Room for values, while `bound` is `None`.
    reserved: usize,
    armed: Option<Due>,
    waker: Option<Waker>,
    /// The generation the next key gets.
    generation: NonZeroU32,
}

impl<T> fmt::Debug for DelayQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DelayQueue")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .field("armed", &self.armed)
            .finish()
    }
}

impl<T> DelayQueue<T> {
    /// A queue on the wheel of `shard`, with room for `capacity` values.
    pub(crate) fn on(shard: ShardRef, capacity: usize) -> DelayQueue<T> {
        let alarm = QueueAlarm::new(shard);
        DelayQueue::unbound(Some((QueueWheel::new(&alarm, capacity), alarm)), 0)
    }

    fn unbound(bound: Option<(QueueWheel<T>, QueueAlarm)>, reserved: usize) -> DelayQueue<T> {
        DelayQueue {
            bound,
            reserved,
            armed: None,
            waker: None,
            generation: NonZeroU32::MIN,
        }
    }

    /// An empty queue on the current runtime's default wheel (see
    /// [`Wheel::current`](crate::Wheel::current)): tokio-util's constructor,
    /// so that switching is a change of import.
    ///
    /// Made outside a tokio runtime it does not panic, as tokio-util's does
    /// not: it finds its wheel at its first insert, on the runtime that
    /// insert runs in (tokio-util's starts its timer there too).
    ///
    /// # Panics
    ///
    /// In a runtime built without its timer, and when the default wheel is
    /// at its [`max_timers`](crate::Builder::max_timers) bound (the queue
    /// keeps one timer on it); [`try_new`](DelayQueue::try_new) returns an
    /// error instead (and outside a runtime too). Made outside a runtime,
    /// the first insert panics in those cases, and outside a runtime.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use futures::StreamExt;
    /// use hashwheel::DelayQueue; // was: use tokio_util::time::DelayQueue;
    /// use std::time::Duration;
    ///
    /// let mut queue = DelayQueue::new();
    /// queue.insert("hello", Duration::from_millis(10));
    /// assert_eq!(queue.next().await.unwrap().into_inner(), "hello");
    /// # }
    /// ```
    #[track_caller]
    pub fn new() -> DelayQueue<T> {
        DelayQueue::made(0, "DelayQueue::new")
    }

    /// Like [`new`](DelayQueue::new), but returns an error where it would
    /// panic.
    ///
    /// # Errors
    ///
    /// [`Error::is_no_runtime`] outside a tokio runtime,
    /// [`Error::is_no_timer`] in one built without its timer, and
    /// [`Error::is_at_capacity`] when the default wheel is at its
    /// [`max_timers`](crate::Builder::max_timers) bound.
    ///
    /// # Examples
    ///
    /// ```
    /// use hashwheel::DelayQueue;
    ///
    /// // No runtime here.
    /// assert!(DelayQueue::<u32>::try_new().unwrap_err().is_no_runtime());
    /// ```
    pub fn try_new() -> Result<DelayQueue<T>, Error> {
        DelayQueue::try_with_capacity(0)
    }

    /// An empty queue with room for `capacity` values, on the current
    /// runtime's default wheel.
    ///
    /// # Panics
    ///
    /// As [`new`](DelayQueue::new);
    /// [`try_with_capacity`](DelayQueue::try_with_capacity) returns an
    /// error instead.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let queue = hashwheel::DelayQueue::<u32>::with_capacity(100);
    /// assert!(queue.capacity() >= 100);
    /// # }
    /// ```
    #[track_caller]
    pub fn with_capacity(capacity: usize) -> DelayQueue<T> {
        DelayQueue::made(capacity, "DelayQueue::with_capacity")
    }

    /// A queue on the current runtime's default wheel, or outside a
    /// runtime one that finds its wheel at its first insert; `what` names
    /// the constructor in a panic.
    #[track_caller]
    fn made(capacity: usize, what: &str) -> DelayQueue<T> {
        if tokio::runtime::Handle::try_current().is_err() {
            return DelayQueue::unbound(None, capacity);
        }
        DelayQueue::on(claim_default(what), capacity)
    }

    /// The queue's wheel; a queue made outside a runtime finds it, and its
    /// alarm, here at its first insert.
    #[track_caller]
    fn bind(&mut self) -> &mut QueueWheel<T> {
        // Not `get_or_insert_with`: a claim's panic in a closure would point
        // here, not at the caller.
        if self.bound.is_none() {
            let shard = claim_default("DelayQueue::insert");
            self.bound = DelayQueue::on(shard, self.reserved).bound;
        }
        &mut self.bound.as_mut().expect("bound above").0
    }

    /// Wakes the task last seen in `poll_expired`, for which the alarm
    /// no longer stands.
    fn wake(&mut self) {
        self.armed = None;
        if let Some(w) = self.waker.take() {
            w.wake();
        }
    }

    /// The queue's wheel, if it has one.
    fn wheel(&self) -> Option<&QueueWheel<T>> {
        self.bound.as_ref().map(|(wheel, _)| wheel)
    }

    /// Like [`with_capacity`](DelayQueue::with_capacity), but returns an
    /// error where it would panic.
    ///
    /// # Errors
    ///
    /// As [`try_new`](DelayQueue::try_new): [`Error::is_no_runtime`],
    /// [`Error::is_no_timer`] or [`Error::is_at_capacity`].
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), hashwheel::error::Error> {
    /// let queue = hashwheel::DelayQueue::<u32>::try_with_capacity(100)?;
    /// assert!(queue.capacity() >= 100);
    /// # Ok(())
    /// # }
    /// ```
    pub fn try_with_capacity(capacity: usize) -> Result<DelayQueue<T>, Error> {
        Ok(DelayQueue::on(try_claim_default()?, capacity))
    }

    /// Returns the next expired value, `Pending` until one expires, or
    /// `Ready(None)` when the queue is empty.
    ///
    /// After `Ready(None)` or `Pending`, the task is woken when a value
    /// inserted (or reset) later can expire sooner than what the queue was
    /// waiting for.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::future::poll_fn;
    /// use std::time::Duration;
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let mut queue = wheel.delay_queue();
    /// queue.insert('a', Duration::from_millis(10));
    /// let expired = poll_fn(|cx| queue.poll_expired(cx)).await.unwrap();
    /// assert_eq!(*expired.get_ref(), 'a');
    /// assert!(poll_fn(|cx| queue.poll_expired(cx)).await.is_none());
    /// # }
    /// ```
    pub fn poll_expired(&mut self, cx: &mut Context<'_>) -> Poll<Option<Expired<T>>> {
        if !self.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            self.waker = Some(cx.waker().clone());
        }
        let Some((_, alarm)) = self.bound.as_mut().filter(|(w, _)| w.len() != 0) else {
            self.armed = None;
            return Poll::Ready(None);
        };
        // The task's budget, spent as tokio-util's queue spends it through
        // its `Sleep`: out of budget, `Pending` before looking for a due
        // value; a unit spent when one comes out. A poll that follows the
        // ringing of the alarm spends nothing, as tokio-util's does not poll
        // a `Sleep` that has fired.
        if alarm.take_rung() {
            return self.poll_due(cx);
        }
        coop::budgeted(cx, |cx| self.poll_due(cx))
    }

    /// The next due value, or `Pending` with the alarm set for the next
    /// deadline; `Ready` only with a value.
    fn poll_due(&mut self, cx: &mut Context<'_>) -> Poll<Option<Expired<T>>> {
        let (wheel, alarm) = self.bound.as_mut().expect("a bound queue");
        loop {
            let (due, ring) = match wheel.look() {
                Look::Ready(index) => return Poll::Ready(Some(self.take(index))),
                Look::Wait(due) => (Some(due), alarm.set(due, cx.waker())),
                // Only values that never expire: pending, no alarm set.
                Look::Never => (None, Ring::Set),
            };
            self.armed = due.filter(|_| ring == Ring::Set);
            match ring {
                Ring::Set => return Poll::Pending,
                // The next turn of the loop advances to it.
                Ring::Elapsed => {}
                // Nothing will wake the queue again: what it holds comes
                // out now, in deadline order.
                Ring::Shutdown => wheel.expire_all(),
            }
        }
    }
}

impl<T> Stream for DelayQueue<T> {
    type Item = Expired<T>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Expired<T>>> {
        self.get_mut().poll_expired(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.len()))
    }
}

impl<T> Default for DelayQueue<T> {
    /// [`DelayQueue::new`].
    #[track_caller]
    fn default() -> Self {
        DelayQueue::new()
    }
}

/// Values are never pinned: the queue moves them freely.
impl<T> Unpin for DelayQueue<T> {}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// The generation wraps from its largest value to one, never zero,
    /// and a key from before the wrap still reaches its own value only.
    #[test]
    fn generations_wrap_past_zero() {
        crate::engine::tokio_reliance::paused_runtime().block_on(async {
            let wheel = crate::Wheel::new();
            let mut q = wheel.delay_queue();
            q.generation = NonZeroU32::MAX;
            let last = q.insert("last", Duration::from_secs(1));
            let first = q.insert("first", Duration::from_secs(2));
            assert_eq!(last.generation, NonZeroU32::MAX);
            assert_eq!(first.generation, NonZeroU32::MIN);
            assert_eq!(q.remove(&last).into_inner(), "last");
            assert!(q.try_remove(&last).is_none());
            // The freed slot goes to the next value, under a new generation.
            let again = q.insert("again", Duration::from_secs(3));
            assert_eq!(again.index, last.index);
            assert!(q.try_deadline(&last).is_none());
            assert_eq!(q.remove(&first).into_inner(), "first");
            assert_eq!(q.remove(&again).into_inner(), "again");
        });
    }
}
