//! The task's cooperative budget ([`tokio::task::coop`]), spent as tokio's
//! timers spend it.
//!
//! tokio's timers take a unit of the budget before they look at their
//! deadline: a task out of budget gets `Pending` and is scheduled again.
//! They keep the unit when they complete and give it back when they stay
//! pending. The timers here do the same in two steps, so that a pending
//! poll, the common one, costs a single read of the budget:
//! [`poll_budget`] before the deadline is looked at, [`spend`] once the
//! timer has completed. Between the two nothing touches the budget, so
//! what the task sees (the budget left, `Pending`, the task scheduled
//! again) is what tokio's timers give it.

use std::task::{Context, Poll};

use tokio::task::coop;

/// `Ready` when the task has budget left; otherwise `Pending`, with the
/// task scheduled to run again after the runtime's other tasks.
#[inline]
pub(crate) fn poll_budget(cx: &mut Context<'_>) -> Poll<()> {
    if coop::has_budget_remaining() {
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
