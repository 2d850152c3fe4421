//! What the workload modules share (the plain-thread ones in `workloads`,
//! the in-task ones in `tasks`, the server in `server`): the far deadline,
//! the runtimes, the shape of the insert + cancel rows, waiting, and the
//! child processes that measure memory.

use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant as StdInstant};

use tokio::runtime::Runtime;

use super::cpu::{Meter, Span};
use super::queue::Queue;
use super::Imp;

/// The deadline of a timer that is cancelled long before it fires.
pub const FAR: Duration = Duration::from_secs(30);

/// A multi-thread runtime with `workers` workers, its threads named `name`.
pub fn multi_thread(workers: usize, name: &str) -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name(name)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

pub(super) fn unsupported(imp: Imp) -> ! {
    panic!("{} cannot run this workload", imp.name())
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().expect("queue lock")
}

/// Waits, polling every millisecond, until `done()` or `limit` passes.
pub(super) fn wait_until(limit: StdInstant, done: impl Fn() -> bool) -> bool {
    while !done() {
        if StdInstant::now() >= limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

// ===== insert + cancel =====

/// The cost of making pending timers and of cancelling them.
#[derive(Debug, Clone, Copy)]
pub struct InsertCancel {
    pub insert: Span,
    pub cancel: Span,
}

/// Makes one pending timer per deadline in `state` (`make`), keeping them
/// all, then cancels them in the order `order` gives (`cancel`).
pub(super) fn insert_then_cancel<S, T>(
    imp: Imp,
    state: &mut S,
    deadlines: &[Duration],
    order: &[usize],
    mut make: impl FnMut(&mut S, Duration) -> T,
    mut cancel: impl FnMut(&mut S, T),
) -> InsertCancel {
    // The harness's own array is filled (its pages faulted in) before the
    // clock starts: only the timers' cost is measured.
    let mut held: Vec<Option<T>> = deadlines.iter().map(|_| None).collect();
    let m = Meter::start(imp);
    for (slot, &d) in held.iter_mut().zip(deadlines) {
        *slot = Some(make(state, d));
    }
    let insert = m.stop();
    let m = Meter::start(imp);
    for &i in order {
        let t = held[i].take().expect("each timer is cancelled once");
        cancel(state, t);
    }
    let cancel = m.stop();
    InsertCancel { insert, cancel }
}

pub(super) fn queue_insert_cancel<Q: Queue>(
    imp: Imp,
    q: &mut Q,
    deadlines: &[Duration],
    order: &[usize],
) -> InsertCancel {
    let make = |q: &mut Q, d| q.insert(0, d);
    let cancel = |q: &mut Q, k| {
        black_box(q.remove(&k));
    };
    insert_then_cancel(imp, q, deadlines, order, make, cancel)
}

// ===== child processes =====

/// The environment variable that turns a bench or example binary into a
/// child that measures one thing and prints it.
pub(super) const CHILD: &str = "HASHWHEEL_BENCH_CHILD";

/// Runs `job` in a child process (this same binary, re-run with [`CHILD`]
/// set) and parses the number it prints last.
pub(super) fn child_job(job: &str) -> Option<f64> {
    let exe = std::env::current_exe().ok()?;
    let out = std::process::Command::new(exe)
        .env(CHILD, job)
        .stderr(std::process::Stdio::inherit())
        .output()
        .ok()?;
    String::from_utf8(out.stdout)
        .ok()?
        .lines()
        .last()?
        .trim()
        .parse()
        .ok()
}
