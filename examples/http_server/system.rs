//! What the process costs and may use: its CPU time, and the open-file
//! limit that bounds the connections (rustix, no `unsafe`).

use std::time::Duration;

use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};

/// CPU time used so far by every thread of the process.
pub fn cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Raises the soft limit on open files to `needed` if the hard limit
/// allows; returns the soft limit in force afterwards.
pub fn ensure_open_files(needed: u64) -> u64 {
    let limit = getrlimit(Resource::Nofile);
    let current = limit.current.unwrap_or(u64::MAX);
    if current >= needed {
        return current;
    }
    let target = match limit.maximum {
        Some(max) => needed.min(max),
        None => needed,
    };
    let raised = Rlimit {
        current: Some(target),
        maximum: limit.maximum,
    };
    match setrlimit(Resource::Nofile, raised) {
        Ok(()) => target,
        Err(_) => current,
    }
}

/// The resident set size, from `/proc/self/statm` (Linux); `None`
/// elsewhere.
pub fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * page_size()?)
}

/// The page size, from the process's auxiliary vector (`AT_PAGESZ`).
fn page_size() -> Option<u64> {
    const AT_PAGESZ: u64 = 6;
    let auxv = std::fs::read("/proc/self/auxv").ok()?;
    let word = |c: &[u8]| u64::from_ne_bytes(c.try_into().expect("8 bytes"));
    auxv.chunks_exact(16)
        .find(|pair| word(&pair[..8]) == AT_PAGESZ)
        .map(|pair| word(&pair[8..]))
}

/// How long the process's threads have waited, runnable, for a CPU
/// (`/proc/self/task/*/schedstat`, Linux; threads that have exited are
/// left out): what other processes on the host took from this one.
pub fn runqueue_wait() -> Option<Duration> {
    let mut total = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let path = task.ok()?.path().join("schedstat");
        let Ok(stat) = std::fs::read_to_string(path) else {
            continue;
        };
        total += stat.split_whitespace().nth(1)?.parse::<u64>().ok()?;
    }
    Some(Duration::from_nanos(total))
}
