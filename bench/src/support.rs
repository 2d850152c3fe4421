//! What the workload modules share (the plain-thread ones in `plain_thread`,
//! the in-task ones in `in_task`, the server in `server`): the far deadline,
//! the runtimes, waiting, what the insert + cancel rows measure, and the
//! child processes that measure memory.

use std::sync::Mutex;
use std::time::{Duration, Instant as StdInstant};

use tokio::runtime::Runtime;

use super::cpu::Span;
use super::Imp;

/// The deadline of a timer that is cancelled long before it fires.
pub const FAR: Duration = Duration::from_secs(30);

/// A multi-thread runtime with `workers` workers, its threads named `name`.
pub fn multi_thread(workers: usize, name: &str) -> Runtime {
    runtime_for(Imp::Tokio, workers, name)
}

/// [`multi_thread`] for `imp`: with tokio's alternative timer
/// (`Builder::enable_alt_timer`) for [`Imp::TokioAlt`], tokio's own timer
/// for every other implementation.
pub fn runtime_for(imp: Imp, workers: usize, name: &str) -> Runtime {
    let mut b = tokio::runtime::Builder::new_multi_thread();
    b.worker_threads(workers).thread_name(name).enable_all();
    #[cfg(tokio_unstable)]
    if imp.alt_timer() {
        b.enable_alt_timer();
    }
    // Without `--cfg tokio_unstable` there is no `Imp::TokioAlt` to ask.
    debug_assert!(!imp.alt_timer() || cfg!(tokio_unstable));
    b.build().expect("tokio runtime")
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

/// The cost of making pending timers and of cancelling them.
#[derive(Debug, Clone, Copy)]
pub struct InsertCancel {
    pub insert: Span,
    pub cancel: Span,
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
