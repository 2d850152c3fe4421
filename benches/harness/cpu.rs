//! CPU time, wall time and resident memory of this process.
//!
//! `/proc/self/stat` and `/proc/*/schedstat` only advance a running thread's
//! time at the scheduler tick (4 ms here), too coarse for a 20 ms
//! measurement, so the process total comes from
//! `clock_gettime(CLOCK_PROCESS_CPUTIME_ID)` (through rustix, no `unsafe`).
//! Per-thread times of *sleeping* threads are exact in
//! `/proc/self/task/*/schedstat`, which is how helper threads are told apart.

use std::time::Instant;

use super::Imp;

/// CPU nanoseconds used by every thread of the process so far.
pub fn process_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// For each live thread of the process: its name and CPU nanoseconds.
pub fn threads() -> Vec<(String, u64)> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let p = e.ok()?.path();
        let comm = std::fs::read_to_string(p.join("comm")).ok()?;
        let stat = std::fs::read_to_string(p.join("schedstat")).ok()?;
        let ns = stat.split_whitespace().next()?.parse().ok()?;
        Some((comm.trim_end().to_string(), ns))
    })
    .collect()
}

/// CPU of the threads whose name `pick` accepts.
pub fn threads_cpu_ns(pick: impl Fn(&str) -> bool) -> u64 {
    threads()
        .iter()
        .filter(|(n, _)| pick(n))
        .map(|(_, ns)| ns)
        .sum()
}

/// CPU of the helper threads of every implementation but `imp`.
fn foreign_cpu_ns(imp: Imp) -> u64 {
    threads_cpu_ns(|name| {
        Imp::ALL
            .iter()
            .any(|&o| o != imp && o.helper_thread() == Some(name))
    })
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
/// helper threads) between `start` and `stop`.
#[derive(Debug)]
pub struct Meter {
    imp: Imp,
    foreign: u64,
    cpu: u64,
    wall: Instant,
}

impl Meter {
    pub fn start(imp: Imp) -> Meter {
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
        let wall = self.wall.elapsed();
        let cpu = process_cpu_ns() - self.cpu;
        let foreign = foreign_cpu_ns(self.imp).saturating_sub(self.foreign);
        Span {
            wall_ns: wall.as_nanos() as u64,
            cpu_ns: cpu.saturating_sub(foreign),
        }
    }
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
