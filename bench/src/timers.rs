//! The implementations under test, one type each, and the kinds of timer
//! they offer, one trait per kind. A workload is written once, against the
//! trait of the kind it measures, and runs for an implementation through
//! [`Imp::with_sleeps`] and its siblings. Which implementations a workload
//! can run follows from the traits each type implements ([`Imp::has_sleeps`]
//! and its siblings): no list of them is kept by hand.
//!
//! Adding an implementation: its type here, the traits it implements, and
//! one line in the table of `implementations!`. Adding a kind of timer: its
//! trait, one `kind!` line and one `implementations!` call.
//!
//! The `with_*` and `has_*` methods find a type's trait with autoref
//! dispatch: a call on `&Probe<T>` takes the impl for `Probe<T>` when `T`
//! implements the trait and falls back to the impl for `&Probe<T>`, which
//! answers `None` (or `false`). The type is made only when it is of the
//! kind.

use std::future::Future;
use std::hint::black_box;
use std::marker::PhantomData;
use std::pin::{pin, Pin};
use std::sync::{Arc, Mutex};
use std::task::{Context, Waker};
use std::time::Duration;

use hashwheel::Wheel;
use pingora_timeout::fast_timeout::{fast_sleep, fast_timeout, FastOrTokioTimeout};
use tokio::time::Instant;
use tokio_util::time::DelayQueue;

use super::queue::Queue;
use super::Imp;

// ===== the kinds =====

/// Timer futures: a sleep registers at its first poll and is cancelled (or,
/// for pingora, left to fire) when dropped.
pub trait Sleeps: Clone + Send + Sync + 'static {
    type Sleep: Future<Output = ()> + Send + 'static;
    fn sleep(&self, d: Duration) -> Self::Sleep;
    fn sleep_until(&self, at: Instant) -> Self::Sleep;
}

/// Timer futures whose deadline can move.
pub trait Resets: Sleeps {
    /// Whether a reset moves the sleep in place; when false it makes a new
    /// sleep, which registers only when polled.
    const IN_PLACE: bool = true;
    /// Moves `s` to `to`.
    fn reset(&self, s: Pin<&mut Self::Sleep>, to: Later);
}

/// A deadline `by` after a first one, which is given both ways: as an
/// instant for the timers that take one, as a duration from when it was
/// set for the others. Each timer computes only the form it takes.
#[derive(Debug, Clone, Copy)]
pub struct Later {
    pub first_at: Instant,
    pub first_after: Duration,
    pub by: Duration,
}

impl Later {
    // Inlined with `HeldWheel`'s reset (see there).
    #[inline(always)]
    pub fn at(self) -> Instant {
        self.first_at + self.by
    }

    pub fn after(self) -> Duration {
        self.first_after + self.by
    }
}

/// A timeout around a future.
pub trait Timeouts: Clone + Send + Sync + 'static {
    type Timeout<F: Future + Unpin + Send + 'static>: Future;
    fn timeout<F: Future + Unpin + Send + 'static>(&self, d: Duration, f: F) -> Self::Timeout<F>;
}

/// A timeout whose deadline counts from the first poll that finds the
/// future pending.
pub trait LazyTimeouts: Clone + Send + Sync + 'static {
    type Lazy<F: Future + Unpin + Send + 'static>: Future;
    fn lazy_timeout<F: Future + Unpin + Send + 'static>(&self, d: Duration, f: F) -> Self::Lazy<F>;
}

/// What makes a pending timer with a task's context: every timer future (a
/// sleep polled once) and the floor.
pub trait Registers: Clone + Send + Sync + 'static {
    type Pending: Send + 'static;
    /// A pending timer `d` away, registered with `cx`, to hold: in a box
    /// of its own (`Box::pin`), as a timer lives in its task's boxed
    /// future, which a cancel touches first. Every implementation's is
    /// held so, an `Unpin` one too, and the floor's record.
    fn register(&self, d: Duration, cx: &mut Context<'_>) -> Self::Pending;
    /// A pending timer registered and dropped at once, kept on the stack
    /// (not boxed) as an awaited sleep is.
    fn register_and_drop(&self, d: Duration, cx: &mut Context<'_>);
    /// `size_of` of what a user holds for one pending timer.
    fn size_of_held(&self) -> usize;
}

impl<T: Sleeps> Registers for T {
    type Pending = Pin<Box<T::Sleep>>;

    fn register(&self, d: Duration, cx: &mut Context<'_>) -> Self::Pending {
        let mut k = Box::pin(self.sleep(d));
        assert!(k.as_mut().poll(cx).is_pending());
        k
    }

    fn register_and_drop(&self, d: Duration, cx: &mut Context<'_>) {
        assert!(pin!(self.sleep(d)).poll(cx).is_pending());
    }

    fn size_of_held(&self) -> usize {
        size_of::<T::Sleep>()
    }
}

/// Pending timers that dropping cancels (pingora's stays until it fires),
/// and the floor, held and dropped where they would be.
pub trait Cancels: Registers {}

/// Timers on tokio's clock, which a test can pause and advance.
pub trait FollowsTokioClock: Sleeps {}

/// The `DelayQueue`s.
pub trait Queues: Clone + Send + Sync + 'static {
    type Q: Queue;
    fn queue(&self) -> Self::Q;
    fn queue_with_capacity(&self, n: usize) -> Self::Q;
    /// This kind's queue of `shared`.
    fn shared<'a>(&self, shared: &'a SharedQueues) -> &'a Arc<Mutex<Self::Q>>;
}

/// A `DelayQueue` of each kind, kept across rounds as a long-running server
/// keeps its queue.
#[derive(Debug)]
pub struct SharedQueues {
    dq: Arc<Mutex<DelayQueue<u32>>>,
    hq: Arc<Mutex<hashwheel::DelayQueue<u32>>>,
}

impl SharedQueues {
    /// Both queues, tokio-util's on the current runtime, hashwheel's on
    /// `wheel`.
    pub fn new(wheel: &Wheel) -> SharedQueues {
        SharedQueues {
            dq: Arc::new(Mutex::new(DelayQueue::new())),
            hq: Arc::new(Mutex::new(wheel.delay_queue())),
        }
    }
}

// ===== the implementations =====

/// hashwheel's futures on a held [`Wheel`] ([`Imp::Hashwheel`]).
#[derive(Debug, Clone)]
pub struct HeldWheel(pub Wheel);

/// hashwheel's free functions on the runtime's default wheel
/// ([`Imp::HashwheelFree`]).
#[derive(Debug, Clone)]
pub struct FreeWheel;

/// `tokio::time`, on whichever timer its runtime has ([`Imp::Tokio`],
/// [`Imp::TokioAlt`]).
#[derive(Debug, Clone)]
pub struct TokioTime;

/// pingora-timeout ([`Imp::Pingora`]). `M` is `fast_sleep` itself: its
/// future's type has no name.
#[derive(Debug, Clone)]
pub struct Pingora<M>(pub M);

/// futures-timer ([`Imp::FuturesTimer`]).
#[derive(Debug, Clone)]
pub struct FuturesTimer;

/// No timer: the future alone ([`Imp::NoTimer`]).
#[derive(Debug, Clone)]
pub struct NoTimer;

/// The floor ([`Imp::Floor`]): a deadline and a waker, no timer.
#[derive(Debug, Clone)]
pub struct Floor;

/// hashwheel's `DelayQueue` on a held wheel ([`Imp::HashwheelQueue`]).
#[derive(Debug, Clone)]
pub struct HashwheelQueue(pub Wheel);

/// tokio-util's `DelayQueue` ([`Imp::TokioUtil`]).
#[derive(Debug, Clone)]
pub struct TokioUtilQueue;

impl Sleeps for HeldWheel {
    type Sleep = hashwheel::Sleep;
    fn sleep(&self, d: Duration) -> Self::Sleep {
        self.0.sleep(d)
    }
    fn sleep_until(&self, at: Instant) -> Self::Sleep {
        self.0.sleep_until(at)
    }
}

impl Resets for HeldWheel {
    // Inlined into the workloads' reset loops, so that they run the code of
    // a direct `Sleep::reset`; as a call, the in-task reset rows measured
    // hashwheel's column slower.
    #[inline(always)]
    fn reset(&self, s: Pin<&mut Self::Sleep>, to: Later) {
        s.get_mut().reset(to.at());
    }
}

impl Timeouts for HeldWheel {
    type Timeout<F: Future + Unpin + Send + 'static> = hashwheel::Timeout<F>;
    fn timeout<F: Future + Unpin + Send + 'static>(&self, d: Duration, f: F) -> Self::Timeout<F> {
        self.0.timeout(d, f)
    }
}

impl LazyTimeouts for HeldWheel {
    type Lazy<F: Future + Unpin + Send + 'static> = hashwheel::LazyTimeout<F>;
    fn lazy_timeout<F: Future + Unpin + Send + 'static>(&self, d: Duration, f: F) -> Self::Lazy<F> {
        self.0.lazy_timeout(d, f)
    }
}

impl Cancels for HeldWheel {}
impl FollowsTokioClock for HeldWheel {}

impl Sleeps for FreeWheel {
    type Sleep = hashwheel::Sleep;
    fn sleep(&self, d: Duration) -> Self::Sleep {
        hashwheel::sleep(d)
    }
    fn sleep_until(&self, at: Instant) -> Self::Sleep {
        hashwheel::sleep_until(at)
    }
}

// No `Resets`: the free functions make the same `Sleep` as a held wheel,
// so its reset is measured once, there.

impl Timeouts for FreeWheel {
    type Timeout<F: Future + Unpin + Send + 'static> = hashwheel::Timeout<F>;
    fn timeout<F: Future + Unpin + Send + 'static>(&self, d: Duration, f: F) -> Self::Timeout<F> {
        hashwheel::timeout(d, f)
    }
}

impl LazyTimeouts for FreeWheel {
    type Lazy<F: Future + Unpin + Send + 'static> = hashwheel::LazyTimeout<F>;
    fn lazy_timeout<F: Future + Unpin + Send + 'static>(&self, d: Duration, f: F) -> Self::Lazy<F> {
        hashwheel::lazy_timeout(d, f)
    }
}

impl Cancels for FreeWheel {}
impl FollowsTokioClock for FreeWheel {}

impl Sleeps for TokioTime {
    type Sleep = tokio::time::Sleep;
    fn sleep(&self, d: Duration) -> Self::Sleep {
        tokio::time::sleep(d)
    }
    fn sleep_until(&self, at: Instant) -> Self::Sleep {
        tokio::time::sleep_until(at)
    }
}

impl Resets for TokioTime {
    fn reset(&self, s: Pin<&mut Self::Sleep>, to: Later) {
        s.reset(to.at());
    }
}

impl Timeouts for TokioTime {
    type Timeout<F: Future + Unpin + Send + 'static> = tokio::time::Timeout<F>;
    fn timeout<F: Future + Unpin + Send + 'static>(&self, d: Duration, f: F) -> Self::Timeout<F> {
        tokio::time::timeout(d, f)
    }
}

impl Cancels for TokioTime {}
impl FollowsTokioClock for TokioTime {}

impl<M, S> Sleeps for Pingora<M>
where
    M: Fn(Duration) -> S + Clone + Send + Sync + 'static,
    S: Future<Output = ()> + Send + 'static,
{
    type Sleep = S;
    fn sleep(&self, d: Duration) -> S {
        (self.0)(d)
    }
    fn sleep_until(&self, at: Instant) -> S {
        (self.0)(at.saturating_duration_since(Instant::now()))
    }
}

/// pingora-timeout has no reset: a new sleep replaces the old one, in
/// place.
impl<M, S> Resets for Pingora<M>
where
    M: Fn(Duration) -> S + Clone + Send + Sync + 'static,
    S: Future<Output = ()> + Send + 'static,
{
    const IN_PLACE: bool = false;
    fn reset(&self, mut s: Pin<&mut S>, to: Later) {
        s.set((self.0)(to.after()));
    }
}

impl<M: Clone + Send + Sync + 'static> Timeouts for Pingora<M> {
    type Timeout<F: Future + Unpin + Send + 'static> =
        pingora_timeout::Timeout<F, FastOrTokioTimeout>;
    fn timeout<F: Future + Unpin + Send + 'static>(&self, d: Duration, f: F) -> Self::Timeout<F> {
        fast_timeout(d, f)
    }
}

/// `fast_timeout` starts its timer at the first poll that finds the future
/// pending, as `lazy_timeout` does: it is in both rows.
impl<M: Clone + Send + Sync + 'static> LazyTimeouts for Pingora<M> {
    type Lazy<F: Future + Unpin + Send + 'static> = pingora_timeout::Timeout<F, FastOrTokioTimeout>;
    fn lazy_timeout<F: Future + Unpin + Send + 'static>(&self, d: Duration, f: F) -> Self::Lazy<F> {
        fast_timeout(d, f)
    }
}

impl Sleeps for FuturesTimer {
    type Sleep = futures_timer::Delay;
    fn sleep(&self, d: Duration) -> Self::Sleep {
        futures_timer::Delay::new(d)
    }
    fn sleep_until(&self, at: Instant) -> Self::Sleep {
        futures_timer::Delay::new(at.saturating_duration_since(Instant::now()))
    }
}

impl Resets for FuturesTimer {
    fn reset(&self, s: Pin<&mut Self::Sleep>, to: Later) {
        s.get_mut().reset(to.after());
    }
}

/// futures-timer has no timeout: the future races a `Delay`, as its users
/// do.
impl Timeouts for FuturesTimer {
    type Timeout<F: Future + Unpin + Send + 'static> =
        futures::future::Select<F, futures_timer::Delay>;
    fn timeout<F: Future + Unpin + Send + 'static>(&self, d: Duration, f: F) -> Self::Timeout<F> {
        futures::future::select(f, futures_timer::Delay::new(d))
    }
}

impl Cancels for FuturesTimer {}

/// The future alone, with no timeout around it: the harness's own cost.
impl Timeouts for NoTimer {
    type Timeout<F: Future + Unpin + Send + 'static> = F;
    fn timeout<F: Future + Unpin + Send + 'static>(&self, _: Duration, f: F) -> F {
        f
    }
}

impl LazyTimeouts for NoTimer {
    type Lazy<F: Future + Unpin + Send + 'static> = F;
    fn lazy_timeout<F: Future + Unpin + Send + 'static>(&self, _: Duration, f: F) -> F {
        f
    }
}

/// The floor's stand-in for a timer: its deadline, `d` from now (one clock
/// read, as a `tokio::time::sleep` makes it), and a clone of the task's
/// waker. 32 bytes, held (boxed, as a timer is) and dropped where a timer
/// would be.
pub struct FloorTimer {
    _deadline: Instant,
    _waker: Waker,
}

impl FloorTimer {
    fn new(d: Duration, cx: &Context<'_>) -> FloorTimer {
        black_box(FloorTimer {
            _deadline: Instant::now() + d,
            _waker: cx.waker().clone(),
        })
    }
}

impl Registers for Floor {
    type Pending = Box<FloorTimer>;
    fn register(&self, d: Duration, cx: &mut Context<'_>) -> Box<FloorTimer> {
        black_box(Box::new(FloorTimer::new(d, cx)))
    }
    fn register_and_drop(&self, d: Duration, cx: &mut Context<'_>) {
        drop(FloorTimer::new(d, cx));
    }
    fn size_of_held(&self) -> usize {
        size_of::<Instant>() + size_of::<Waker>()
    }
}

impl Cancels for Floor {}

impl Queues for HashwheelQueue {
    type Q = hashwheel::DelayQueue<u32>;
    fn queue(&self) -> Self::Q {
        self.0.delay_queue()
    }
    fn queue_with_capacity(&self, n: usize) -> Self::Q {
        self.0.delay_queue_with_capacity(n)
    }
    fn shared<'a>(&self, shared: &'a SharedQueues) -> &'a Arc<Mutex<Self::Q>> {
        &shared.hq
    }
}

impl Queues for TokioUtilQueue {
    type Q = DelayQueue<u32>;
    fn queue(&self) -> Self::Q {
        DelayQueue::new()
    }
    fn queue_with_capacity(&self, n: usize) -> Self::Q {
        DelayQueue::with_capacity(n)
    }
    fn shared<'a>(&self, shared: &'a SharedQueues) -> &'a Arc<Mutex<Self::Q>> {
        &shared.dq
    }
}

// ===== from an `Imp` to its type =====

/// The table: each [`Imp`] and how its type is made, given `w`, which
/// makes (or clones) the wheel the workload runs on; the types that need no
/// wheel never call it. Calls `$then!` with the table after `$args`.
macro_rules! implementations {
    ($then:ident ! $args:tt) => {
        $then! { $args
            Imp::Hashwheel => |w| HeldWheel(w()),
            Imp::HashwheelFree => |w| FreeWheel,
            Imp::HashwheelQueue => |w| HashwheelQueue(w()),
            Imp::Tokio => |w| TokioTime,
            #[cfg(tokio_unstable)]
            Imp::TokioAlt => |w| TokioTime,
            Imp::TokioUtil => |w| TokioUtilQueue,
            Imp::Pingora => |w| Pingora(fast_sleep),
            Imp::FuturesTimer => |w| FuturesTimer,
            Imp::NoTimer => |w| NoTimer,
            Imp::Floor => |w| Floor,
        }
    };
}

/// An implementation's type, for autoref dispatch, before one is made.
pub struct Probe<T>(PhantomData<T>);

fn probe<T>(_: &impl Fn(&dyn Fn() -> Wheel) -> T) -> Probe<T> {
    Probe(PhantomData)
}

/// For one kind: the trait a workload implements to run on any type of the
/// kind (`$Use`), and `Imp::$with` (make the implementation's type and run
/// the workload on it; `None`, making nothing, when the type is not of the
/// kind) and `Imp::$has`.
macro_rules! kind {
    ($Kind:ident, $Use:ident, $with:ident, $has:ident, $Some:ident, $None:ident) => {
        #[doc = concat!("A workload written against [`", stringify!($Kind), "`].")]
        pub trait $Use {
            type Out;
            fn run<T: $Kind>(self, t: T) -> Self::Out;
        }

        pub trait $Some {
            type T;
            fn $with<V: $Use>(&self, make: impl FnOnce() -> Self::T, v: V) -> Option<V::Out>;
            fn $has(&self) -> bool;
        }

        impl<T: $Kind> $Some for Probe<T> {
            type T = T;
            fn $with<V: $Use>(&self, make: impl FnOnce() -> T, v: V) -> Option<V::Out> {
                Some(v.run(make()))
            }
            fn $has(&self) -> bool {
                true
            }
        }

        pub trait $None {
            fn $with<V: $Use, M>(&self, _: M, _: V) -> Option<V::Out> {
                None
            }
            fn $has(&self) -> bool {
                false
            }
        }

        impl<T> $None for &Probe<T> {}

        implementations!(dispatch!($Use, $with, $has));
    };
}

macro_rules! dispatch {
    (($Use:ident, $with:ident, $has:ident)
     $($(#[$a:meta])* $imp:path => |$w:ident| $make:expr,)*) => {
        impl Imp {
            #[doc = concat!("Runs `v` with this implementation's type when it implements the trait `v` is written against (see [`", stringify!($Use), "`]). `wheel` makes the wheel hashwheel's types run on, when they are made.")]
            #[allow(unused_variables)]
            pub fn $with<V: $Use>(self, wheel: &dyn Fn() -> Wheel, v: V) -> Option<V::Out> {
                match self {
                    $($(#[$a])* $imp => {
                        let make = |$w: &dyn Fn() -> Wheel| $make;
                        (&probe(&make)).$with(|| make(wheel), v)
                    })*
                }
            }

            #[doc = concat!("Whether this implementation's type implements the trait of [`", stringify!($Use), "`].")]
            #[allow(unused_variables)]
            pub fn $has(self) -> bool {
                match self {
                    $($(#[$a])* $imp => {
                        let make = |$w: &dyn Fn() -> Wheel| $make;
                        (&probe(&make)).$has()
                    })*
                }
            }
        }
    };
}

kind!(
    Sleeps,
    UseSleeps,
    with_sleeps,
    has_sleeps,
    SleepsSome,
    SleepsNone
);
kind!(
    Resets,
    UseResets,
    with_resets,
    has_resets,
    ResetsSome,
    ResetsNone
);
kind!(
    Timeouts,
    UseTimeouts,
    with_timeouts,
    has_timeouts,
    TimeoutsSome,
    TimeoutsNone
);
kind!(
    LazyTimeouts,
    UseLazyTimeouts,
    with_lazy_timeouts,
    has_lazy_timeouts,
    LazySome,
    LazyNone
);
kind!(
    Registers,
    UseRegisters,
    with_registers,
    has_registers,
    RegistersSome,
    RegistersNone
);
kind!(
    Cancels,
    UseCancels,
    with_cancels,
    has_cancels,
    CancelsSome,
    CancelsNone
);
kind!(
    FollowsTokioClock,
    UseTokioClock,
    with_tokio_clock,
    has_tokio_clock,
    ClockSome,
    ClockNone
);
kind!(
    Queues,
    UseQueues,
    with_queues,
    has_queues,
    QueuesSome,
    QueuesNone
);

impl Imp {
    /// Every implementation for which `has` holds, in [`Imp::ALL`]'s order.
    pub fn which(has: impl Fn(Imp) -> bool) -> Vec<Imp> {
        Imp::ALL.iter().copied().filter(|&i| has(i)).collect()
    }

    /// Whether this is a baseline ([`Imp::NoTimer`], [`Imp::Floor`]), not a
    /// timer.
    pub fn is_baseline(self) -> bool {
        matches!(self, Imp::NoTimer | Imp::Floor)
    }
}

/// The output of a `with_*` call, or a panic naming the implementation
/// that cannot run the workload.
pub fn expect_kind<O>(imp: Imp, out: Option<O>) -> O {
    out.unwrap_or_else(|| super::support::unsupported(imp))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kinds each implementation's type offers, as the autoref
    /// dispatch finds them: a probe that answered `false` for a type that
    /// implements the trait would drop a column without a word.
    #[test]
    fn kinds_follow_the_impls() {
        let kinds = |i: Imp| {
            let has = [
                (i.has_sleeps(), "sleeps"),
                (i.has_resets(), "resets"),
                (i.has_timeouts(), "timeouts"),
                (i.has_lazy_timeouts(), "lazy"),
                (i.has_registers(), "registers"),
                (i.has_cancels(), "cancels"),
                (i.has_tokio_clock(), "tokio_clock"),
                (i.has_queues(), "queues"),
            ];
            let names: Vec<&str> = has.iter().filter(|h| h.0).map(|h| h.1).collect();
            names.join(" ")
        };
        let all = "sleeps resets timeouts lazy registers cancels tokio_clock";
        assert_eq!(kinds(Imp::Hashwheel), all);
        let free = "sleeps timeouts lazy registers cancels tokio_clock";
        assert_eq!(kinds(Imp::HashwheelFree), free);
        let tokio = "sleeps resets timeouts registers cancels tokio_clock";
        assert_eq!(kinds(Imp::Tokio), tokio);
        #[cfg(tokio_unstable)]
        assert_eq!(kinds(Imp::TokioAlt), tokio);
        let pingora = "sleeps resets timeouts lazy registers";
        assert_eq!(kinds(Imp::Pingora), pingora);
        let futures_timer = "sleeps resets timeouts registers cancels";
        assert_eq!(kinds(Imp::FuturesTimer), futures_timer);
        assert_eq!(kinds(Imp::HashwheelQueue), "queues");
        assert_eq!(kinds(Imp::TokioUtil), "queues");
        assert_eq!(kinds(Imp::NoTimer), "timeouts lazy");
        assert_eq!(kinds(Imp::Floor), "registers cancels");
    }

    /// `with_*` runs a workload exactly for the implementations `has_*`
    /// names, on the type the table makes.
    #[test]
    fn with_runs_where_has_says() {
        struct SizeOf;
        impl UseRegisters for SizeOf {
            type Out = usize;
            fn run<T: Registers>(self, t: T) -> usize {
                t.size_of_held()
            }
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio runtime");
        let _g = rt.enter();
        // Only a held wheel's type is made from a wheel, and only a type of
        // the kind is made at all.
        let none = || -> Wheel { unreachable!("only hashwheel's futures need a wheel here") };
        let made = Wheel::new;
        for &imp in Imp::ALL {
            let wheel: &dyn Fn() -> Wheel = if imp == Imp::Hashwheel { &made } else { &none };
            let out = imp.with_registers(wheel, SizeOf);
            assert_eq!(out.is_some(), imp.has_registers(), "{}", imp.name());
        }
        let sleep = Imp::Hashwheel.with_registers(&made, SizeOf);
        assert_eq!(sleep, Some(size_of::<hashwheel::Sleep>()));
        assert_eq!(Imp::Floor.with_registers(&none, SizeOf), Some(32));
    }
}
