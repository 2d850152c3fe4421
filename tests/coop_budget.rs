//! Timers under tokio's cooperative scheduling, side by side with tokio's.
//!
//! tokio gives a task a budget of work each time it is polled; its timers
//! spend a unit each time they complete, and a timer polled with the budget
//! spent returns `Pending` and has the task scheduled again, so that a task
//! looping over ready timers lets the runtime's other tasks run. Each test
//! runs the same loop on tokio's timer (tokio-util's `DelayQueue`,
//! tokio-io-timeout's wrappers) and on hashwheel's, on a current-thread
//! runtime with the clock paused, and counts how many times the timer
//! completes before another task gets to run. The two counts must be equal;
//! `Delay` and `LazyTimeout`, which tokio lacks, are held to tokio's `Sleep`
//! (and `Timeout`).
//!
//! `cargo test --test coop_budget -- --nocapture --test-threads=1` prints
//! the counts as a table.

mod io_common;

use std::future::{pending, poll_fn, ready, Future};
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use io_common::{Imp, Never, Ours, Theirs};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::MissedTickBehavior;

/// The most completions a loop counts: far above tokio's budget, and above
/// the 10,001 ticks an interval catches up after 10 s of 1 ms ticks, so a
/// timer that never yields shows as a count at this cap (or at the end of
/// its work), not as a hang.
const CAP: usize = 20_000;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Prints a row of the table and holds hashwheel's count to tokio's.
fn row(what: &str, tokio: usize, hashwheel: usize) {
    println!("| {what} | {} | {} |", shown(tokio), shown(hashwheel));
    assert_eq!(
        hashwheel, tokio,
        "{what}: hashwheel (left) against tokio (right)"
    );
}

fn shown(n: usize) -> String {
    if n >= CAP {
        format!("never ({CAP} polls)")
    } else {
        n.to_string()
    }
}

/// How many times in a row `step` completes (`Ready(true)`) in this task
/// before another task gets to run; `Ready(false)` ends the count early
/// (nothing left to take). Each completion is `.await`ed, as a task's code
/// awaits a timer in a loop.
async fn completions_before_yield(mut step: impl FnMut(&mut Context<'_>) -> Poll<bool>) -> usize {
    let other_ran = Arc::new(AtomicBool::new(false));
    let flag = other_ran.clone();
    tokio::spawn(async move { flag.store(true, Ordering::SeqCst) });
    let mut n = 0;
    while n < CAP {
        let more = poll_fn(&mut step).await;
        if other_ran.load(Ordering::SeqCst) || !more {
            break;
        }
        n += 1;
    }
    n
}

/// The same, from the start of a poll of this task: with a whole budget.
async fn from_a_fresh_budget(step: impl FnMut(&mut Context<'_>) -> Poll<bool>) -> usize {
    // The scheduler refills a task's budget each time it polls the task.
    tokio::task::yield_now().await;
    completions_before_yield(step).await
}

/// How many times this task is polled until `fut` resolves (at most
/// [`CAP`]), and what it resolved to.
async fn polls_to_resolve<F: Future>(fut: F) -> (usize, Option<F::Output>) {
    tokio::task::yield_now().await;
    let mut fut = pin!(fut);
    let mut polls = 0;
    let out = poll_fn(|cx| {
        polls += 1;
        if polls > CAP {
            return Poll::Ready(None);
        }
        fut.as_mut().poll(cx).map(Some)
    })
    .await;
    (polls, out)
}

/// A future that spends the task's whole budget on every poll and never
/// completes: a busy stream consumer, as tokio's own futures account it.
async fn spend_budget_forever() {
    loop {
        tokio::task::coop::consume_budget().await;
    }
}

/// The same, spent by awaiting tokio's own elapsed `Sleep`.
async fn await_tokio_sleep_forever() {
    let mut sleep = Box::pin(tokio::time::sleep(Duration::ZERO));
    loop {
        sleep.as_mut().await;
    }
}

/// Completions of `timer`, elapsed, awaited again and again.
async fn elapsed_again<F: Future<Output = ()> + Unpin>(mut timer: F) -> usize {
    (&mut timer).await;
    from_a_fresh_budget(|cx| Pin::new(&mut timer).poll(cx).map(|()| true)).await
}

/// Polls of `timer`, pending far ahead, that pass before the task yields:
/// a pending timer spends nothing, so the loop runs to the cap.
async fn pending_polls<F: Future + Unpin>(mut timer: F) -> usize {
    from_a_fresh_budget(|cx| {
        assert!(Pin::new(&mut timer).poll(cx).is_pending());
        Poll::Ready(true)
    })
    .await
}

// ===== Sleep =====

#[tokio::test(start_paused = true)]
async fn sleep_spends_the_budget_as_tokios_does() {
    row(
        "Sleep, elapsed, awaited in a loop",
        elapsed_again(Box::pin(tokio::time::sleep(ms(1)))).await,
        elapsed_again(hashwheel::sleep(ms(1))).await,
    );
    row(
        "Sleep, a new zero sleep each time",
        zero_sleeps_tokio().await,
        from_a_fresh_budget(|cx| {
            pin!(hashwheel::sleep(Duration::ZERO))
                .poll(cx)
                .map(|()| true)
        })
        .await,
    );
    row(
        "Sleep, pending, polled (spends nothing)",
        pending_polls(Box::pin(tokio::time::sleep(ms(1000)))).await,
        pending_polls(hashwheel::sleep(ms(1000))).await,
    );
}

/// tokio's count for a new `sleep(Duration::ZERO)` awaited in a loop: the
/// peer of the timers that tokio lacks.
async fn zero_sleeps_tokio() -> usize {
    from_a_fresh_budget(|cx| {
        pin!(tokio::time::sleep(Duration::ZERO))
            .poll(cx)
            .map(|()| true)
    })
    .await
}

// ===== Timeout =====

#[tokio::test(start_paused = true)]
async fn timeout_spends_the_budget_as_tokios_does() {
    row(
        "Timeout, inner future ready",
        from_a_fresh_budget(|cx| {
            let t = pin!(tokio::time::timeout(ms(1000), ready(())));
            t.poll(cx).map(|r| r.is_ok())
        })
        .await,
        from_a_fresh_budget(|cx| {
            let t = pin!(hashwheel::timeout(ms(1000), ready(())));
            t.poll(cx).map(|r| r.is_ok())
        })
        .await,
    );
    row(
        "Timeout, inner pending, deadline passed",
        from_a_fresh_budget(|cx| {
            let t = pin!(tokio::time::timeout(Duration::ZERO, pending::<()>()));
            t.poll(cx).map(|r| r.is_err())
        })
        .await,
        from_a_fresh_budget(|cx| {
            let t = pin!(hashwheel::timeout(Duration::ZERO, pending::<()>()));
            t.poll(cx).map(|r| r.is_err())
        })
        .await,
    );
    row(
        "Timeout, inner pending, deadline ahead (spends nothing)",
        pending_polls(Box::pin(tokio::time::timeout(ms(1000), pending::<()>()))).await,
        pending_polls(hashwheel::timeout(ms(1000), pending::<()>())).await,
    );
}

#[tokio::test(start_paused = true)]
async fn a_timeout_fires_when_its_inner_future_spends_the_whole_budget() {
    let theirs =
        polls_to_resolve(tokio::time::timeout(Duration::ZERO, spend_budget_forever())).await;
    let ours = polls_to_resolve(hashwheel::timeout(Duration::ZERO, spend_budget_forever())).await;
    assert!(matches!(theirs.1, Some(Err(_))), "tokio's timeout fires");
    assert!(matches!(ours.1, Some(Err(_))), "hashwheel's timeout fires");
    row(
        "Timeout, inner spends the budget (consume_budget): polls to fire",
        theirs.0,
        ours.0,
    );

    let theirs = polls_to_resolve(tokio::time::timeout(
        Duration::ZERO,
        await_tokio_sleep_forever(),
    ))
    .await;
    let ours = polls_to_resolve(hashwheel::timeout(
        Duration::ZERO,
        await_tokio_sleep_forever(),
    ))
    .await;
    assert!(matches!(theirs.1, Some(Err(_))), "tokio's timeout fires");
    assert!(matches!(ours.1, Some(Err(_))), "hashwheel's timeout fires");
    row(
        "Timeout, inner spends the budget (tokio's Sleep): polls to fire",
        theirs.0,
        ours.0,
    );
}

// ===== Interval =====

#[tokio::test(start_paused = true)]
async fn an_interval_catching_up_yields_as_tokios_does() {
    async fn catch_up<I>(
        mut interval: I,
        poll_tick: fn(&mut I, &mut Context<'_>) -> Poll<()>,
    ) -> usize {
        poll_fn(|cx| poll_tick(&mut interval, cx)).await; // the first tick, at once
        tokio::time::advance(ms(10_000)).await; // 10,000 ticks missed
        from_a_fresh_budget(|cx| poll_tick(&mut interval, cx).map(|()| true)).await
    }
    let mut theirs = tokio::time::interval(ms(1));
    theirs.set_missed_tick_behavior(MissedTickBehavior::Burst);
    let mut ours = hashwheel::interval(ms(1));
    ours.set_missed_tick_behavior(MissedTickBehavior::Burst);
    row(
        "Interval, Burst, catching up 10,000 missed ticks",
        catch_up(theirs, |i, cx| i.poll_tick(cx).map(drop)).await,
        catch_up(ours, |i, cx| i.poll_tick(cx).map(drop)).await,
    );
}

// ===== LazyTimeout: held to tokio's Timeout and Sleep =====

#[tokio::test(start_paused = true)]
async fn a_lazy_timeout_spends_the_budget_as_tokios_timeout_does() {
    row(
        "LazyTimeout, inner ready (tokio: Timeout)",
        from_a_fresh_budget(|cx| {
            let t = pin!(tokio::time::timeout(ms(1000), ready(())));
            t.poll(cx).map(|r| r.is_ok())
        })
        .await,
        from_a_fresh_budget(|cx| {
            let t = pin!(hashwheel::lazy_timeout(ms(1000), ready(())));
            t.poll(cx).map(|r| r.is_ok())
        })
        .await,
    );
    row(
        "LazyTimeout, inner pending, zero limit (tokio: Sleep)",
        zero_sleeps_tokio().await,
        from_a_fresh_budget(|cx| {
            let t = pin!(hashwheel::lazy_timeout(Duration::ZERO, pending::<()>()));
            t.poll(cx).map(|r| r.is_err())
        })
        .await,
    );
    let theirs =
        polls_to_resolve(tokio::time::timeout(Duration::ZERO, spend_budget_forever())).await;
    let ours = polls_to_resolve(hashwheel::lazy_timeout(
        Duration::ZERO,
        spend_budget_forever(),
    ))
    .await;
    assert!(
        matches!(ours.1, Some(Err(_))),
        "hashwheel's lazy timeout fires"
    );
    row(
        "LazyTimeout, inner spends the budget: polls to fire (tokio: Timeout)",
        theirs.0,
        ours.0,
    );
}

// ===== Delay: held to tokio's Sleep =====

#[tokio::test(start_paused = true)]
async fn a_delay_spends_the_budget_as_tokios_sleep_does() {
    row(
        "Delay, a new zero delay each time (tokio: Sleep)",
        zero_sleeps_tokio().await,
        from_a_fresh_budget(|cx| {
            let d = pin!(hashwheel::delay(Duration::ZERO));
            d.poll(cx).map(|r| r.is_ok())
        })
        .await,
    );
    row(
        "Delay, pending, polled (tokio: Sleep; spends nothing)",
        pending_polls(Box::pin(tokio::time::sleep(ms(1000)))).await,
        pending_polls(hashwheel::delay(ms(1000))).await,
    );
}

// ===== DelayQueue, against tokio-util's =====

/// A queue of `n` values all due at 10 ms.
trait Queue: Unpin {
    fn with(n: u32) -> Self;
    fn poll_one(&mut self, cx: &mut Context<'_>) -> Poll<bool>;
}

impl Queue for tokio_util::time::DelayQueue<u32> {
    fn with(n: u32) -> Self {
        let mut q = Self::new();
        for i in 0..n {
            q.insert(i, ms(10));
        }
        q
    }
    fn poll_one(&mut self, cx: &mut Context<'_>) -> Poll<bool> {
        self.poll_expired(cx).map(|e| e.is_some())
    }
}

impl Queue for hashwheel::DelayQueue<u32> {
    fn with(n: u32) -> Self {
        let mut q = Self::new();
        for i in 0..n {
            q.insert(i, ms(10));
        }
        q
    }
    fn poll_one(&mut self, cx: &mut Context<'_>) -> Poll<bool> {
        self.poll_expired(cx).map(|e| e.is_some())
    }
}

/// Values drained in a row from a queue whose values came due while the
/// task did something else.
async fn drain_after_advance<Q: Queue>() -> usize {
    let mut q = Q::with(1000);
    tokio::time::advance(ms(10)).await;
    from_a_fresh_budget(|cx| q.poll_one(cx)).await
}

/// Values drained in a row by a task that waited on the queue and was
/// woken when they came due (the first of them taken in that same poll).
async fn drain_after_waiting<Q: Queue>() -> usize {
    let mut q = Q::with(1000);
    assert!(poll_fn(|cx| q.poll_one(cx)).await);
    1 + completions_before_yield(|cx| q.poll_one(cx)).await
}

#[tokio::test(start_paused = true)]
async fn a_delay_queue_spends_the_budget_as_tokio_utils_does() {
    type TokioUtil = tokio_util::time::DelayQueue<u32>;
    type Hashwheel = hashwheel::DelayQueue<u32>;
    row(
        "DelayQueue, 1,000 values due, drained",
        drain_after_advance::<TokioUtil>().await,
        drain_after_advance::<Hashwheel>().await,
    );
    row(
        "DelayQueue, 1,000 values due, drained by the task they woke",
        drain_after_waiting::<TokioUtil>().await,
        drain_after_waiting::<Hashwheel>().await,
    );
}

/// A value inserted due at once and taken, again and again: tokio-util's
/// queue hands such values out without spending any budget (they skip its
/// timer), so that loop never yields there. hashwheel's spends a unit on
/// each, as for any value (a difference its docs state), and is held to
/// tokio's `Sleep`.
#[tokio::test(start_paused = true)]
async fn a_delay_queue_fed_values_due_at_once_still_yields() {
    let mut theirs = tokio_util::time::DelayQueue::new();
    let tokio_util = from_a_fresh_budget(|cx| {
        theirs.insert(1u32, Duration::ZERO);
        theirs.poll_expired(cx).map(|e| e.is_some())
    })
    .await;
    println!(
        "| DelayQueue, a value inserted due and taken, in a loop (tokio-util) | {} | |",
        shown(tokio_util)
    );
    assert_eq!(tokio_util, CAP, "tokio-util's queue never yields here");
    let mut q = hashwheel::DelayQueue::new();
    row(
        "DelayQueue, a value inserted due and taken, in a loop (tokio: Sleep)",
        zero_sleeps_tokio().await,
        from_a_fresh_budget(|cx| {
            q.insert(1u32, Duration::ZERO);
            q.poll_expired(cx).map(|e| e.is_some())
        })
        .await,
    );
}

// ===== hashwheel::io, against tokio-io-timeout =====

/// Polls a read of `r`: `Ready(true)` when it fails (times out).
fn poll_read<R: AsyncRead + Unpin>(r: &mut R, cx: &mut Context<'_>) -> Poll<bool> {
    let mut buf = [0u8; 8];
    Pin::new(r)
        .poll_read(cx, &mut ReadBuf::new(&mut buf))
        .map(|r| r.is_err())
}

/// Polls a write to `w`: `Ready(true)` when it fails (times out).
fn poll_write<W: AsyncWrite + Unpin>(w: &mut W, cx: &mut Context<'_>) -> Poll<bool> {
    Pin::new(w).poll_write(cx, b"x").map(|r| r.is_err())
}

#[tokio::test(start_paused = true)]
async fn the_io_wrappers_spend_the_budget_as_tokio_io_timeouts_do() {
    // A zero read timeout: every read of a silent reader times out at once.
    let mut theirs = Box::pin(tokio_io_timeout::TimeoutReader::new(Never));
    theirs.as_mut().set_timeout_pinned(Some(Duration::ZERO));
    let mut ours = hashwheel::io::TimeoutReader::new(Never);
    ours.set_timeout(Some(Duration::ZERO));
    row(
        "TimeoutReader, reads timing out at once",
        from_a_fresh_budget(|cx| poll_read(&mut theirs, cx)).await,
        from_a_fresh_budget(|cx| poll_read(&mut ours, cx)).await,
    );

    // A stream whose peer is there but silent.
    let (_their_peer, socket) = tokio::io::duplex(8);
    let mut theirs = <Theirs as Imp>::wrap(socket);
    <Theirs as Imp>::set_read(&mut theirs, Some(Duration::ZERO));
    let (_our_peer, socket) = tokio::io::duplex(8);
    let mut ours = <Ours as Imp>::wrap(socket);
    <Ours as Imp>::set_read(&mut ours, Some(Duration::ZERO));
    row(
        "TimeoutStream, reads timing out at once",
        from_a_fresh_budget(|cx| poll_read(&mut theirs, cx)).await,
        from_a_fresh_budget(|cx| poll_read(&mut ours, cx)).await,
    );

    let mut theirs = Box::pin(tokio_io_timeout::TimeoutWriter::new(Never));
    theirs.as_mut().set_timeout_pinned(Some(Duration::ZERO));
    let mut ours = hashwheel::io::TimeoutWriter::new(Never);
    ours.set_timeout(Some(Duration::ZERO));
    row(
        "TimeoutWriter, writes timing out at once",
        from_a_fresh_budget(|cx| poll_write(&mut theirs, cx)).await,
        from_a_fresh_budget(|cx| poll_write(&mut ours, cx)).await,
    );

    let mut theirs = Box::pin(tokio_io_timeout::TimeoutReader::new(Never));
    theirs.as_mut().set_timeout_pinned(Some(ms(1000)));
    let mut ours = hashwheel::io::TimeoutReader::new(Never);
    ours.set_timeout(Some(ms(1000)));
    row(
        "TimeoutReader, read pending, polled (spends nothing)",
        from_a_fresh_budget(|cx| {
            assert!(poll_read(&mut theirs, cx).is_pending());
            Poll::Ready(true)
        })
        .await,
        from_a_fresh_budget(|cx| {
            assert!(poll_read(&mut ours, cx).is_pending());
            Poll::Ready(true)
        })
        .await,
    );
}
