//! The driver: one tokio task per wheel that advances every shard.
//!
//! It sleeps on one tokio `Sleep` until the end of the earliest tick that can
//! hold a due entry (never, when the wheel holds no timer), or until a
//! registration asks for an earlier one. Each run catches up on every tick
//! elapsed since the last, wakes the expired timers' wakers outside the
//! locks in batches, and yields to the runtime after every [`YIELD_SHARED`]
//! wake-ups on a multi-thread runtime ([`YIELD_EVERY`] on a current-thread
//! one).
//!
//! # The alarm
//!
//! The tokio `Sleep` lives in an [`Alarm`] and is polled with the alarm's
//! waker, not with the task's. When tokio's timer fires it, the alarm runs
//! the driver's pass itself, inside tokio's own timer processing: it
//! expires what is due, works out the next tick with work and re-arms the
//! tokio `Sleep` for it. The timers it wakes are therefore woken in the same
//! step as tokio's own timers for the same instant: when
//! `tokio::time::advance(d).await` returns, or the paused clock has
//! auto-advanced, every wheel timer due by then has been woken, as a
//! `tokio::time::Sleep` would have been; and the next tick is armed before
//! tokio's timer parks again, so a busy runtime does not delay it.
//!
//! The task is only needed when the alarm cannot finish: more than
//! [`INLINE`] timers due at once, the pass already running on another
//! thread, or a re-armed deadline that has already passed. The alarm then
//! "kicks" the task, which runs the same pass with a larger budget. The
//! task also runs it when a registration needs an earlier wake-up (through
//! `Core::signal`).
//!
//! # Panics
//!
//! A pass that panics (a bug, or a `metrics` recorder that panics) does
//! not stop the wheel: the task catches it, counts and reports it, and
//! starts the driver again, which finds every timer where it was. Only a
//! real stop (`shutdown`, the last handle gone, the runtime dropping the
//! task) shuts the wheel down and completes its timers.
//!
//! The pass runs under the alarm's `arm` lock: one runner at a time. Both
//! runners only `try_lock` it: the alarm, so that a pass that makes tokio
//! fire the alarm from within (a reset to a passed deadline) cannot
//! deadlock, and the task, so that a worker is never blocked while the
//! alarm wakes a batch on another thread (it yields and looks again).

use futures_util::task::AtomicWaker;
use futures_util::FutureExt;
use std::any::Any;
use std::future::{poll_fn, Future};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::AtomicBool;
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::task::{Context, Poll, Wake, Waker};
use tokio::time::Instant;

use crate::engine::hashed::NEVER;
use crate::engine::publish::{self, Telemetry};
use crate::engine::shard::Expiry;
use crate::engine::shards::{wake_all, Shards};
use crate::engine::sync::{Arc, Ordering};
use crate::engine::tokio_reliance::{self, Reset};

/// Wakers taken per lock hold.
const BATCH: usize = 1024;

/// Wake-ups after which a run yields to the runtime before going on, on a
/// current-thread runtime (Netty's per-tick cap).
pub(crate) const YIELD_EVERY: usize = 100_000;

/// The same on a multi-thread runtime: half of a tokio worker's local run
/// queue (256 tasks). The tasks one run wakes then fit in the driver's
/// worker's queue, which the other workers steal from, instead of spilling
/// to the shared injection queue, and they run while what they touch is
/// still in cache: a herd of tasks on one deadline finishes sooner than
/// with a budget that overflows the local queue.
const YIELD_SHARED: usize = 128;

/// The most timers the alarm wakes from inside tokio's timer processing.
const INLINE: usize = 4096;

/// How many times the alarm runs the pass again when the deadline it
/// re-armed has passed already, before it leaves the rest to the task.
const ALARM_RETRIES: usize = 3;

/// Shuts the wheel down when the driver stops, whether it exits or the
/// runtime drops it: no timer is left waiting on a dead driver. It also
/// drops the tokio `Sleep`, whose registered waker points back at the
/// alarm that holds it.
struct Guard {
    shards: Arc<Shards>,
    alarm: std::sync::Arc<Alarm>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.shards.shutdown();
        publish::stopped(&self.alarm.telemetry, &self.shards);
        let mut arm = self.alarm.arm.lock().unwrap_or_else(|e| e.into_inner());
        let sleep = arm.sleep.take();
        drop(arm);
        drop(sleep);
    }
}

/// No `Wheel` handle and no timer is left.
fn abandoned(shards: &Shards) -> bool {
    shards.core.handles.load(Ordering::Acquire) == 0
        && shards.shards.iter().all(|s| Arc::strong_count(s) == 1)
}

/// The driver's future. The guard is made here, not in the async body, so
/// that a runtime dropping the task before its first poll still shuts the
/// wheel down.
pub(crate) fn run(
    shards: Arc<Shards>,
    rearm_inline: bool,
    telemetry: Telemetry,
) -> impl Future<Output = ()> + Send {
    let alarm = std::sync::Arc::new(Alarm {
        shards: shards.clone(),
        rearm_inline,
        telemetry,
        task: AtomicWaker::new(),
        kicked: AtomicBool::new(false),
        arm: Mutex::new(Arm {
            sleep: Some(Box::pin(tokio::time::sleep_until(Instant::now()))),
            at: None,
            wakers: Vec::with_capacity(BATCH),
        }),
    });
    let guard = Guard { shards, alarm };
    async move {
        loop {
            let once = publish::alongside(&guard.alarm.telemetry, &guard.shards, drive(&guard));
            let Err(panic) = AssertUnwindSafe(once).catch_unwind().await else {
                return;
            };
            guard.alarm.panicked(&*panic);
            // The next pass runs after the runtime's other tasks: a bug
            // that panics on every pass cannot take the worker.
            tokio::task::yield_now().await;
        }
    }
}

/// Expires every shard up to `now`, waking at most about `budget` timers.
fn expire(shards: &Shards, now: u64, wakers: &mut Vec<Waker>, budget: usize) -> Expiry {
    let mut all = Expiry::NONE;
    for shard in shards.shards.iter() {
        loop {
            let found = shard.expire(now, wakers, BATCH.min(budget - all.fired));
            all.earliest = all.earliest.min(found.earliest);
            all.fired += found.fired;
            wake_all(&shards.core, wakers);
            if !found.more {
                all.next = all.next.min(found.next);
                break;
            }
            if all.fired >= budget {
                return Expiry {
                    next: now,
                    more: true,
                    ..all
                };
            }
        }
    }
    all
}

/// The driver's tokio `Sleep` and the instant it is armed for.
struct Arm {
    /// `None` once the driver has stopped.
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    at: Option<Instant>,
    /// Expired wakers on their way out, reused from pass to pass.
    wakers: Vec<Waker>,
}

/// How a pass ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// Everything due is woken and the sleep is armed for the next tick
    /// with work (or for nothing).
    Armed,
    /// Its budget ran out with timers still due, or the sleep needs a
    /// re-arm that the alarm leaves to the task.
    More,
    /// The deadline it armed for has passed already: run again.
    Again,
    /// tokio's timer has shut down: the sleep fired at once for a deadline
    /// still ahead. No timer of this wheel can fire any more.
    Dead,
}

/// The waker of the driver's tokio sleep, and the pass both the alarm and
/// the task run (see the module docs).
struct Alarm {
    shards: Arc<Shards>,
    /// Whether the alarm may re-arm the tokio sleep from within its own
    /// wake-up: not under tokio's alternative timer, which makes a new timer
    /// for a reset and panics doing so while its runtime shuts down (it
    /// wakes every timer then); the task re-arms instead (see
    /// `tokio_reliance::TokioTimer`).
    rearm_inline: bool,
    /// What the wheel reports outside it (`engine::publish`).
    telemetry: Telemetry,
    task: AtomicWaker,
    /// The alarm left work for the task.
    kicked: AtomicBool,
    arm: Mutex<Arm>,
}

impl Alarm {
    /// One pass of the driver: expires what is due (at most `budget`
    /// timers), then plans the next tick with work and arms the tokio
    /// sleep for it, polled with `alarm`.
    /// `rearm: false` leaves the re-arming to the task (`Pass::More`).
    fn pass(&self, arm: &mut Arm, budget: usize, alarm: &Waker, rearm: bool) -> Pass {
        let core = &*self.shards.core;
        publish::pass(&self.telemetry);
        #[cfg(test)]
        fault::maybe_panic();
        core.begin_run();
        let next = match self.expire(&mut arm.wakers, budget) {
            Expiry { more: true, .. } => return Pass::More,
            Expiry { next, .. } => next,
        };
        let planned = core.end_run(next);
        arm.at = (planned != NEVER).then(|| core.clock.instant_of_tick(planned));
        let (Some(at), Some(sleep)) = (arm.at, arm.sleep.as_mut()) else {
            return Pass::Armed;
        };
        if !rearm {
            return Pass::More;
        }
        // Polling a sleep whose timer has shut down panics: a dead one is
        // not polled here.
        match tokio_reliance::reset(sleep.as_mut(), at) {
            Reset::Armed => {}
            Reset::Passed => return Pass::Again,
            Reset::Dead => return Pass::Dead,
        }
        match sleep.as_mut().poll(&mut Context::from_waker(alarm)) {
            Poll::Pending => Pass::Armed,
            Poll::Ready(()) => Pass::Again,
        }
    }

    /// Expires what is due now (at most about `budget` timers) and, when
    /// that fired timers, records how late it ran, whichever runner runs it: from the end of the
    /// earliest due tick it fired to the instant it read the clock. A
    /// timer can be registered after that tick has ended (an idle driver
    /// has not processed it): the lag then counts from the registration
    /// that asked for this pass, not from before the timer existed. (Such a
    /// registration that races a pass already running, filed before the
    /// pass looks at its shard but signalling after the pass took the
    /// signal, is still counted from its tick.)
    fn expire(&self, wakers: &mut Vec<Waker>, budget: usize) -> Expiry {
        let core = &*self.shards.core;
        let signalled = core.take_signalled();
        let start = Instant::now();
        let found = expire(&self.shards, core.clock.tick_at(start), wakers, budget);
        if found.earliest != NEVER {
            let tick_end = core.clock.instant_of_tick(found.earliest);
            let due = signalled.map_or(tick_end, |s| s.max(tick_end));
            let lag = start.saturating_duration_since(due);
            core.count(|c| c.record_lag(lag));
            publish::lag(&self.telemetry, &self.shards, lag, found.fired);
        }
        found
    }

    /// A pass panicked: counted, reported, and the driver goes on.
    fn panicked(&self, panic: &(dyn Any + Send)) {
        let core = &*self.shards.core;
        core.count(|c| c.driver_panics += 1);
        let message = panic
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("a panic without a message");
        publish::panicked(&self.telemetry, &self.shards, message);
    }

    /// The `arm` lock, unless the other runner holds it (see the module
    /// docs). A pass that panicked leaves nothing half done in `Arm`.
    fn try_arm(&self) -> Option<MutexGuard<'_, Arm>> {
        match self.arm.try_lock() {
            Ok(arm) => Some(arm),
            Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// Leaves the rest to the task.
    fn kick(&self) {
        self.kicked.store(true, Ordering::Release);
        self.task.wake();
    }

    /// The alarm's part of a wake-up (see the module docs).
    fn alarm_pass(self: &std::sync::Arc<Self>) {
        let Some(mut arm) = self.try_arm() else {
            // The task is running a pass, or this wake-up comes from
            // within one: wake what is due now, and let the task finish.
            self.expire(&mut Vec::new(), INLINE);
            return self.kick();
        };
        // Before its deadline, it is not the tokio timer firing: a spurious
        // wake-up, or that timer's own shutdown (tokio's alternative timer
        // wakes every timer when its worker stops, and a re-arm then would
        // make a timer on a runtime that is shutting down). The task then
        // looks, in its own context.
        if arm.at.is_none_or(|at| Instant::now() >= at) {
            self.shards.core.count(|c| c.wakeups += 1);
            let waker = Waker::from(self.clone());
            for _ in 0..ALARM_RETRIES {
                match self.pass(&mut arm, INLINE, &waker, self.rearm_inline) {
                    Pass::Armed => return,
                    Pass::More | Pass::Dead => break,
                    Pass::Again => {}
                }
            }
        }
        drop(arm);
        self.kick();
    }
}

impl Wake for Alarm {
    fn wake(self: std::sync::Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        if self.shards.core.is_shutdown() {
            self.kick();
            return;
        }
        // This runs inside tokio's timer: a panic must not unwind into it.
        // The task runs the pass again.
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| self.alarm_pass())) {
            self.panicked(&*panic);
            self.kick();
        }
    }
}

async fn drive(guard: &Guard) {
    let shards = &guard.shards;
    let alarm = &guard.alarm;
    let core = &*shards.core;
    let alarm_waker = Waker::from(alarm.clone());
    // The runtime's flavour, as the wheel noted it when it was built: a
    // clock that can pause runs on a current-thread runtime.
    let budget = if core.clock.pausable() {
        YIELD_EVERY
    } else {
        YIELD_SHARED
    };
    loop {
        if core.is_shutdown() || abandoned(shards) {
            return;
        }
        let mut notified = std::pin::pin!(core.signal.notified());
        alarm.kicked.store(false, Ordering::Release);
        // `None`: the alarm is running a pass (up to `INLINE` wake-ups).
        // Let the worker run other tasks meanwhile rather than block it,
        // then look again: a registration may need an earlier tick than the
        // one that pass arms.
        let pass = alarm
            .try_arm()
            .map(|mut arm| alarm.pass(&mut arm, budget, &alarm_waker, true));
        match pass {
            Some(Pass::Armed) => {}
            None | Some(Pass::More) => {
                tokio::task::yield_now().await;
                continue;
            }
            Some(Pass::Again) => continue,
            Some(Pass::Dead) => return,
        }
        poll_fn(|cx| {
            alarm.task.register(cx.waker());
            if alarm.kicked.load(Ordering::Acquire) || notified.as_mut().poll(cx).is_ready() {
                return Poll::Ready(());
            }
            Poll::Pending
        })
        .await;
        core.count(|c| c.wakeups += 1);
    }
}

/// Fault injection for the tests: makes the next passes on this thread
/// panic, as a bug in a pass would.
#[cfg(test)]
pub(crate) mod fault {
    use std::cell::Cell;

    thread_local! {
        static PANICS: Cell<usize> = const { Cell::new(0) };
    }

    /// The next `n` passes run on this thread panic.
    pub(crate) fn panic_next_passes(n: usize) {
        PANICS.with(|p| p.set(n));
    }

    pub(super) fn maybe_panic() {
        let left = PANICS.with(|p| p.get());
        if left > 0 {
            PANICS.with(|p| p.set(left - 1));
            panic!("injected driver fault");
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::engine::core::Core;

    fn shards() -> Arc<Shards> {
        let core = Arc::new(Core::new(
            Instant::now(),
            Duration::from_millis(1),
            64,
            None,
        ));
        Arc::new(Shards::new(core, 1))
    }

    /// The tokio sleep's registered waker points at the alarm that holds the
    /// sleep: a driver that stops while its runtime goes on must break that
    /// cycle, or the wheel would live until the sleep's deadline (here a
    /// day away).
    #[test]
    fn a_stopped_driver_frees_its_shards() {
        crate::engine::tokio_reliance::paused_runtime().block_on(async {
            let shards = shards();
            let weak = Arc::downgrade(&shards);
            let day = shards.core.clock.now_tick() + 86_400_000;
            let timer = crate::engine::shards::ShardRef::new(&shards.shards[0]);
            tokio::spawn(run(shards, true, Telemetry::new(&Default::default())));
            let waker = futures_util::task::noop_waker();
            assert!(matches!(
                timer.get().register(day, &waker),
                crate::engine::shard::Registration::Key(_)
            ));
            // The driver arms its tokio sleep for the entry's tick.
            tokio::task::yield_now().await;
            // The last timer lets go: no handle is left, the driver stops.
            drop(timer);
            tokio::task::yield_now().await;
            assert!(weak.upgrade().is_none(), "the shards outlive their driver");
        });
    }

    /// A wheel's sleep beside tokio's, both of `d` from now: the wheel's
    /// completes in the same step as tokio's, not before.
    async fn side_by_side(wheel: &crate::Wheel, d: Duration) {
        let start = Instant::now();
        let mut ours = std::pin::pin!(wheel.sleep(d));
        let mut theirs = std::pin::pin!(tokio::time::sleep(d));
        poll_fn(|cx| {
            let a = ours.as_mut().poll(cx).is_ready();
            let b = theirs.as_mut().poll(cx).is_ready();
            assert_eq!(
                a,
                b,
                "the wheel's sleep and tokio's part at {:?}",
                start.elapsed()
            );
            if a {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
        assert_eq!(start.elapsed(), d);
    }

    /// A pass that panics, in the task (the driver's first passes) or in
    /// the alarm (inside tokio's timer), does not shut the wheel down nor
    /// fire a timer early: the driver starts again, and the timers fire at
    /// their deadlines, beside tokio's. Each panic is counted and, with the
    /// `tracing` feature, is an ERROR event that names the
    /// wheel and the panic. (One test: the event's callsite is hit by no
    /// other test, so no thread without the subscriber can race it.)
    #[test]
    fn a_pass_that_panics_restarts_the_driver_and_keeps_every_deadline() {
        #[cfg(feature = "tracing")]
        let (errors, _guard) = catch_errors();
        crate::engine::tokio_reliance::paused_runtime().block_on(async {
            let wheel = crate::Wheel::new();
            // The task's first two passes panic.
            fault::panic_next_passes(2);
            side_by_side(&wheel, Duration::from_millis(50)).await;
            assert!(!wheel.is_shutdown());
            assert_eq!(wheel.metrics().driver_panic_count(), 2);

            // The alarm's pass at the timer's tick panics: the task runs it.
            let start = Instant::now();
            let mut sleep = std::pin::pin!(wheel.sleep(Duration::from_millis(30)));
            assert!(futures_util::poll!(sleep.as_mut()).is_pending());
            tokio::task::yield_now().await;
            fault::panic_next_passes(1);
            sleep.await;
            assert_eq!(start.elapsed(), Duration::from_millis(30));
            assert!(!wheel.is_shutdown());
            assert_eq!(wheel.metrics().driver_panic_count(), 3);

            // A wheel that went through all that still keeps time.
            side_by_side(&wheel, Duration::from_millis(7)).await;
            assert_eq!(wheel.metrics().fired_count(), 3);
            // A real shutdown still completes its timers.
            let mut late = std::pin::pin!(wheel.sleep(Duration::from_secs(5)));
            assert!(futures_util::poll!(late.as_mut()).is_pending());
            wheel.shutdown();
            assert!(futures_util::poll!(late.as_mut()).is_ready());
        });
        #[cfg(feature = "tracing")]
        {
            let caught = errors.lock().unwrap().clone();
            assert_eq!(caught.len(), 3, "{caught:?}");
            for e in &caught {
                assert!(e.contains("wheel=\"unnamed\""), "{caught:?}");
                assert!(e.contains("injected driver fault"), "{caught:?}");
            }
        }
    }

    /// Catches this thread's ERROR events (feature `tracing`) until the
    /// guard drops.
    #[cfg(feature = "tracing")]
    fn catch_errors() -> (
        std::sync::Arc<std::sync::Mutex<Vec<String>>>,
        tracing::subscriber::DefaultGuard,
    ) {
        use std::sync::Mutex as StdMutex;
        use tracing::{field, span, Event, Level, Metadata, Subscriber};

        #[derive(Default, Clone)]
        struct Errors(std::sync::Arc<StdMutex<Vec<String>>>);
        struct Fields(String);
        impl field::Visit for Fields {
            fn record_debug(&mut self, f: &field::Field, v: &dyn std::fmt::Debug) {
                self.0.push_str(&format!("{}={v:?} ", f.name()));
            }
        }
        impl Subscriber for Errors {
            fn enabled(&self, _: &Metadata<'_>) -> bool {
                true
            }
            fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
                span::Id::from_u64(1)
            }
            fn record(&self, _: &span::Id, _: &span::Record<'_>) {}
            fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}
            fn event(&self, event: &Event<'_>) {
                if *event.metadata().level() == Level::ERROR {
                    let mut f = Fields(String::new());
                    event.record(&mut f);
                    self.0.lock().unwrap().push(f.0);
                }
            }
            fn enter(&self, _: &span::Id) {}
            fn exit(&self, _: &span::Id) {}
        }

        let errors = Errors::default();
        let guard = tracing::subscriber::set_default(errors.clone());
        tracing::callsite::rebuild_interest_cache();
        (errors.0, guard)
    }
}
