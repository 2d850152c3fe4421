//! CPU time, wall time and resident memory of this process.
//!
//! `/proc/self/stat` and `/proc/*/schedstat` only advance a running thread's
//! time at the scheduler tick (4 ms here), too coarse for a 20 ms
//! measurement, so the process total comes from
//! `clock_gettime(CLOCK_PROCESS_CPUTIME_ID)` (through rustix, no `unsafe`).
//! Per-thread times of *sleeping* threads are exact in
//! `/proc/self/task/*/schedstat`, which is how helper threads are told apart.

use std::time::{Duration, Instant};

use super::Imp;

/// CPU nanoseconds used by every thread of the process so far.
pub fn process_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// A live thread of the process.
#[derive(Debug, Clone)]
pub struct Thread {
    pub name: String,
    /// CPU nanoseconds so far: exact while the thread sleeps, up to a
    /// scheduler tick behind while it runs.
    pub cpu_ns: u64,
    pub running: bool,
}

/// Every live thread of the process.
pub fn threads() -> Vec<Thread> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let p = e.ok()?.path();
        let comm = std::fs::read_to_string(p.join("comm")).ok()?;
        let sched = std::fs::read_to_string(p.join("schedstat")).ok()?;
        let stat = std::fs::read_to_string(p.join("stat")).ok()?;
        let state = stat.rsplit(')').next()?.split_whitespace().next()?;
        Some(Thread {
            name: comm.trim_end().to_string(),
            cpu_ns: sched.split_whitespace().next()?.parse().ok()?,
            running: state == "R",
        })
    })
    .collect()
}

/// CPU of the threads whose name `pick` accepts.
pub fn threads_cpu_ns(pick: impl Fn(&str) -> bool) -> u64 {
    threads()
        .iter()
        .filter(|t| pick(&t.name))
        .map(|t| t.cpu_ns)
        .sum()
}

/// Whether `name` is a helper thread of an implementation other than `imp`.
fn foreign(imp: Imp, name: &str) -> bool {
    Imp::ALL
        .iter()
        .any(|&o| o != imp && o.helper_thread() == Some(name))
}

/// CPU of the helper threads of every implementation but `imp`.
fn foreign_cpu_ns(imp: Imp) -> u64 {
    threads_cpu_ns(|name| foreign(imp, name))
}

/// CPU nanoseconds used by the calling thread so far.
fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Waits, for at most a second, until no implementation's helper thread is
/// running: their work for earlier operations is done (and, for the
/// measured one's own, counted) and their CPU times are exact. Returns the
/// CPU the calling thread spent watching them, which is nobody's cost.
fn settle_helpers() -> u64 {
    let start = thread_cpu_ns();
    let helper = |name: &str| Imp::ALL.iter().any(|i| i.helper_thread() == Some(name));
    let limit = Instant::now() + std::time::Duration::from_secs(1);
    while Instant::now() < limit && threads().iter().any(|t| t.running && helper(&t.name)) {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    thread_cpu_ns() - start
}

/// What a [`Meter`] measured.
#[derive(Debug, Clone, Copy, Default)]
pub struct Span {
    pub wall_ns: u64,
    pub cpu_ns: u64,
}

impl Span {
    pub fn per_op(self, ops: u64) -> (f64, f64) {
        let ops = ops.max(1) as f64;
        (self.cpu_ns as f64 / ops, self.wall_ns as f64 / ops)
    }
}

/// Wall time and CPU time of the process (less the other implementations'
/// helper threads) between `start` and `stop`. Both first wait for the
/// helper threads to go idle, so that work an implementation defers to its
/// own thread (futures-timer's, pingora's) is counted for it and for no one
/// else; the wall time stops before that wait.
#[derive(Debug)]
pub struct Meter {
    imp: Imp,
    foreign: u64,
    cpu: u64,
    wall: Instant,
}

impl Meter {
    pub fn start(imp: Imp) -> Meter {
        settle_helpers();
        let foreign = foreign_cpu_ns(imp);
        let cpu = process_cpu_ns();
        Meter {
            imp,
            foreign,
            cpu,
            wall: Instant::now(),
        }
    }

    pub fn stop(self) -> Span {
        self.stop_after(|| ())
    }

    /// [`Meter::stop`] once `settle` has returned: the wall time stops
    /// before it, the CPU after it, less what the calling thread spent in it
    /// (watching is nobody's cost). For work that an implementation leaves
    /// to a runtime's workers, which `settle` waits out.
    pub fn stop_after(self, settle: impl FnOnce()) -> Span {
        let wall = self.wall.elapsed();
        let start = thread_cpu_ns();
        settle();
        let watching = thread_cpu_ns() - start + settle_helpers();
        let cpu = (process_cpu_ns() - self.cpu).saturating_sub(watching);
        let foreign = foreign_cpu_ns(self.imp).saturating_sub(self.foreign);
        Span {
            wall_ns: wall.as_nanos() as u64,
            cpu_ns: cpu.saturating_sub(foreign),
        }
    }
}

/// RSS growth per timer while one timer per deadline is made (by `make`)
/// and held.
pub fn rss_growth_per<T>(deadlines: &[Duration], mut make: impl FnMut(Duration) -> T) -> f64 {
    let before = rss_bytes();
    let held: Vec<T> = deadlines.iter().map(|&d| make(d)).collect();
    let after = rss_bytes();
    std::hint::black_box(&held);
    (after - before) as f64 / deadlines.len() as f64
}

/// Resident memory of the process in bytes (`/proc/self/statm`).
pub fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    pages * rustix::param::page_size() as u64
}
