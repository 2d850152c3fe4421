//! What the soak records: every timeout the server enforced, with how
//! late it fired, how each connection ended, what the clients saw, and the
//! windows of the faults (the blocked worker, the wheel held at its bound).
//!
//! Lateness goes into fixed histograms allocated at the start, so that
//! the soak's own bookkeeping does not grow the RSS it checks; only the
//! timeouts whose deadline falls in a blocked worker's window are kept one
//! by one (a few per block), to be checked against that block's length.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// The bound on a timeout's lateness, past its deadline.
pub const SLACK: Duration = Duration::from_millis(5);

/// The server's listeners: one per kind of client, so that the server
/// knows what each connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listener {
    /// Chatty, slow and idle clients: the demo's load.
    Ordinary,
    Slowloris,
    HalfClosed,
    Reset,
    NeverRead,
}

impl Listener {
    pub const ALL: [Listener; 5] = [
        Listener::Ordinary,
        Listener::Slowloris,
        Listener::HalfClosed,
        Listener::Reset,
        Listener::NeverRead,
    ];

    pub fn name(self) -> &'static str {
        [
            "ordinary",
            "slowloris",
            "half-closed",
            "reset",
            "never-read",
        ][self as usize]
    }
}

/// The server's timers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timer {
    Header,
    Request,
    Write,
}

/// How the server saw a connection end.
#[derive(Debug)]
pub enum End {
    /// The client closed it, between requests.
    Closed,
    /// A header-read or write timeout.
    TimedOut,
    /// The client's fault ended it: an EOF in a request, a reset, a broken pipe.
    Fault,
    /// A timer was refused at the wheel's bound.
    Shed,
    Other(String),
}

pub const END_NAMES: [&str; 5] = ["closed", "timed out", "fault", "shed", "other"];

/// Lateness histogram buckets: 10 µs wide up to 50 ms, then one for the rest.
const BUCKET_NS: u64 = 10_000;
const BUCKETS: usize = 5_000;

/// How late the timeouts of one kind fired.
#[derive(Debug, Clone)]
pub struct Lateness {
    buckets: Vec<u64>,
    pub count: u64,
    /// Timeouts observed before their deadline.
    pub early: u64,
    pub max: Duration,
    /// When the latest of them was seen.
    pub max_at: Option<Instant>,
}

impl Lateness {
    fn new() -> Lateness {
        Lateness {
            buckets: vec![0; BUCKETS + 1],
            count: 0,
            early: 0,
            max: Duration::ZERO,
            max_at: None,
        }
    }

    fn add(&mut self, deadline: Instant, at: Instant) {
        self.count += 1;
        if at < deadline {
            self.early += 1;
            return;
        }
        let late = at - deadline;
        if late >= self.max {
            (self.max, self.max_at) = (late, Some(at));
        }
        let i = (late.as_nanos() / BUCKET_NS as u128).min(BUCKETS as u128) as usize;
        self.buckets[i] += 1;
    }

    /// How many fired at most `bound` after their deadline (`bound` a
    /// multiple of 10 µs).
    pub fn within(&self, bound: Duration) -> u64 {
        let n = (bound.as_nanos() / BUCKET_NS as u128) as usize;
        self.buckets[..n.min(BUCKETS)].iter().sum()
    }

    /// The upper end of the bucket holding the `q` quantile of the
    /// on-time timeouts (the exact maximum for the last).
    pub fn quantile(&self, q: f64) -> Duration {
        let total = self.count - self.early;
        let rank = ((total as f64 * q).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let end = Duration::from_nanos((i as u64 + 1) * BUCKET_NS);
                return end.min(self.max);
            }
        }
        self.max
    }
}

/// A timeout whose deadline fell in a blocked worker's window.
#[derive(Debug, Clone, Copy)]
pub struct Blocked {
    pub row: (Listener, Timer),
    pub deadline: Instant,
    pub at: Instant,
    /// The block's index.
    pub block: usize,
}

#[derive(Debug)]
pub struct Stats {
    pub open: AtomicU64,
    pub requests: AtomicU64,
    /// Requests answered 503: a timer refused at the wheel's bound.
    pub shed_requests: AtomicU64,
    ends: [[AtomicU64; 5]; 5],
    first_other: Mutex<Option<String>>,
    rows: Mutex<Vec<Lateness>>,
    blocked: Mutex<Vec<Blocked>>,
    /// The blocked worker's windows; the end is `None` while it blocks.
    pub blocks: Mutex<Vec<(Instant, Option<Instant>)>>,
    /// The stretch at the wheel's bound; the end is `None` while it lasts.
    pub stretch: Mutex<Option<(Instant, Option<Instant>)>>,
}

impl Default for Stats {
    fn default() -> Stats {
        Stats {
            open: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            shed_requests: AtomicU64::new(0),
            ends: Default::default(),
            first_other: Mutex::new(None),
            rows: Mutex::new(vec![Lateness::new(); 15]),
            blocked: Mutex::new(Vec::with_capacity(4096)),
            blocks: Mutex::new(Vec::new()),
            stretch: Mutex::new(None),
        }
    }
}

fn row_index(l: Listener, t: Timer) -> usize {
    l as usize * 3 + t as usize
}

impl Stats {
    /// A timeout of `l`'s connection fired by `t`, due at `deadline`,
    /// seen by the server at `at`.
    pub fn timed_out(&self, l: Listener, t: Timer, deadline: Instant, at: Instant) {
        let block = self
            .blocks
            .lock()
            .unwrap()
            .iter()
            .position(|&(start, end)| {
                start.checked_sub(SLACK).is_none_or(|s| s <= deadline)
                    && end.is_none_or(|e| deadline <= e)
            });
        match block {
            Some(block) => self.blocked.lock().unwrap().push(Blocked {
                row: (l, t),
                deadline,
                at,
                block,
            }),
            None => self.rows.lock().unwrap()[row_index(l, t)].add(deadline, at),
        }
    }

    pub fn ended(&self, l: Listener, end: End) {
        let i = match end {
            End::Closed => 0,
            End::TimedOut => 1,
            End::Fault => 2,
            End::Shed => 3,
            End::Other(e) => {
                self.first_other.lock().unwrap().get_or_insert(e);
                4
            }
        };
        self.ends[l as usize][i].fetch_add(1, Relaxed);
    }

    /// How `l`'s connections ended, in the order of [`END_NAMES`].
    pub fn ends(&self, l: Listener) -> [u64; 5] {
        std::array::from_fn(|i| self.ends[l as usize][i].load(Relaxed))
    }

    pub fn first_other(&self) -> Option<String> {
        self.first_other.lock().unwrap().clone()
    }

    pub fn lateness(&self, l: Listener, t: Timer) -> Lateness {
        self.rows.lock().unwrap()[row_index(l, t)].clone()
    }

    pub fn blocked(&self) -> Vec<Blocked> {
        self.blocked.lock().unwrap().clone()
    }

    /// Whether `at` is in the stretch at the wheel's bound, or within
    /// `grace` after it.
    pub fn in_stretch(&self, at: Instant, grace: Duration) -> bool {
        match *self.stretch.lock().unwrap() {
            Some((start, end)) => start <= at && end.is_none_or(|e| at <= e + grace),
            None => false,
        }
    }
}
