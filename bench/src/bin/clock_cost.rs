//! What the clocks an idle timeout could read cost, and whether the cheap
//! one bounds the precise one: `Instant::now()` (`CLOCK_MONOTONIC`, what
//! tokio's clock reads outside a paused test) against
//! `CLOCK_MONOTONIC_COARSE`, per call, and how far the coarse clock trails
//! the precise one. `hashwheel::io` reads `Instant::now()` after every
//! successful operation that waited, with an idle timeout; bench/ANALYSIS.md
//! cites this.
//!
//! ```text
//! cargo run --release -p hashwheel-bench --bin clock_cost
//! ```
//!
//! Each cost is the best of 7 rounds of 10M calls; the lag is the largest
//! of 1M paired reads (coarse first, then precise).

use std::hint::black_box;
use std::time::Instant;

use rustix::time::{clock_getres, clock_gettime, ClockId, Timespec};

const CALLS: u32 = 10_000_000;
const ROUNDS: usize = 7;
const PAIRS: usize = 1_000_000;

fn ns(t: Timespec) -> i128 {
    i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec)
}

/// The best ns per call of `f` over [`ROUNDS`] rounds of [`CALLS`] calls.
fn per_call(f: impl Fn()) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..ROUNDS {
        let t = Instant::now();
        for _ in 0..CALLS {
            f();
        }
        best = best.min(t.elapsed().as_nanos() as f64 / f64::from(CALLS));
    }
    best
}

fn main() {
    let res = ns(clock_getres(ClockId::MonotonicCoarse));
    println!("CLOCK_MONOTONIC_COARSE resolution: {res} ns");
    let rows: [(&str, f64); 3] = [
        (
            "Instant::now()",
            per_call(|| {
                black_box(Instant::now());
            }),
        ),
        (
            "clock_gettime(CLOCK_MONOTONIC)",
            per_call(|| {
                black_box(clock_gettime(ClockId::Monotonic));
            }),
        ),
        (
            "clock_gettime(CLOCK_MONOTONIC_COARSE)",
            per_call(|| {
                black_box(clock_gettime(ClockId::MonotonicCoarse));
            }),
        ),
    ];
    for (name, ns) in rows {
        println!("  {name:<40} {ns:6.2} ns/call");
    }
    let lag = (0..PAIRS)
        .map(|_| {
            let coarse = ns(clock_gettime(ClockId::MonotonicCoarse));
            ns(clock_gettime(ClockId::Monotonic)) - coarse
        })
        .max()
        .unwrap_or(0);
    println!("precise - coarse, largest of {PAIRS} paired reads: {lag} ns");
}
