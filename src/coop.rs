//! The task's cooperative budget ([`tokio::task::coop`]), spent as tokio's
//! timers spend it; the only module that talks to `tokio::task::coop`.
//!
//! tokio's timers take a unit of the budget before they look at their
//! deadline: a task out of budget gets `Pending` and is scheduled again.
//! They keep the unit when they complete and give it back when they stay
//! pending. The timers here do the same in two steps, so that a pending
//! poll, the common one, costs a single read of the budget:
//! [`poll_budget`] before the deadline is looked at, [`spend`] once the
//! timer has completed. Between the two nothing touches the budget, so
//! what the task sees (the budget left, `Pending`, the task scheduled
//! again) is what tokio's timers give it. [`budgeted`] is that sequence
//! around one poll.

use std::task::{ready, Context, Poll};

use tokio::task::coop;

/// Whether the task has budget left (a timeout reads it before polling its
/// inner future, for [`budgeted_after`]).
#[inline]
pub(crate) fn has_budget() -> bool {
    coop::has_budget_remaining()
}

/// Polls a timer with `poll` within the task's budget: out of budget,
/// `Pending` without polling (the task is scheduled again); a unit spent
/// when `poll` is ready, none while it is pending.
#[inline]
pub(crate) fn budgeted<T>(
    cx: &mut Context<'_>,
    poll: impl FnOnce(&mut Context<'_>) -> Poll<T>,
) -> Poll<T> {
    budgeted_after(false, cx, poll)
}

/// [`budgeted`], for the timer of a timeout whose inner future has just
/// returned `Pending`; `had_budget` is [`has_budget`] from before that
/// future was polled. As with tokio's `Timeout`, when it was the inner
/// future that spent the last of the budget the timer is still polled,
/// without budget: a future that always uses up the budget cannot keep its
/// timeout from firing.
#[inline]
pub(crate) fn budgeted_after<T>(
    had_budget: bool,
    cx: &mut Context<'_>,
    poll: impl FnOnce(&mut Context<'_>) -> Poll<T>,
) -> Poll<T> {
    // One read of the budget, and one call of `poll` (so that it is
    // inlined once).
    let budget = has_budget();
    if !budget && !had_budget {
        ready!(poll_budget(cx));
    }
    let out = ready!(poll(cx));
    if budget {
        spend(cx);
    }
    Poll::Ready(out)
}

/// `Ready` when the task has budget left; otherwise `Pending`, with the
/// task scheduled to run again after the runtime's other tasks.
#[inline]
pub(crate) fn poll_budget(cx: &mut Context<'_>) -> Poll<()> {
    if has_budget() {
        Poll::Ready(())
    } else {
        // Takes nothing: with no budget left it only schedules the task.
        coop::poll_proceed(cx).map(drop)
    }
}

/// Spends a unit of the task's budget, for a timer that has completed
/// after [`poll_budget`] found budget left.
pub(crate) fn spend(cx: &mut Context<'_>) {
    if let Poll::Ready(unit) = coop::poll_proceed(cx) {
        unit.made_progress();
    }
}
