//! What an uncontended atomic read-modify-write costs on this host, against
//! the plain instructions around it: the replay's estimated cycles price
//! every instruction alike (`replay_breakdown.py --atomics` counts the
//! atomic ones per message), and a design that trades locked work for
//! lock-free work trades instructions for these.
//!
//! ```text
//! cargo run --release -p hashwheel-bench --bin atomic_cost
//! ```
//!
//! Each row is the best of 7 rounds of 10M operations on one word that no
//! other thread touches, each operation depending on the one before (as a
//! timer's lock, then its waker's count, then its shard's count follow one
//! another), less the loop's own cost (the `plain add` row).

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

const OPS: u64 = 10_000_000;
const ROUNDS: usize = 7;

/// The best ns per operation of `f` over [`ROUNDS`] rounds of [`OPS`].
fn per_op(mut f: impl FnMut(u64) -> u64) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..ROUNDS {
        let t = Instant::now();
        let mut v = 0;
        for i in 0..OPS {
            v = f(v ^ i);
        }
        black_box(v);
        best = best.min(t.elapsed().as_nanos() as f64 / OPS as f64);
    }
    best
}

fn main() {
    let word = AtomicU64::new(0);
    let word = black_box(&word);
    let plain = per_op(|v| {
        let x = word.load(Ordering::Relaxed).wrapping_add(v & 1);
        word.store(x, Ordering::Relaxed);
        x
    });
    let rows: [(&str, f64); 4] = [
        (
            "fetch_add (lock xadd: Arc clone, waker clone)",
            per_op(|v| word.fetch_add(v & 1, Ordering::Relaxed)),
        ),
        (
            "fetch_sub (lock xadd: Arc drop, waker drop)",
            per_op(|v| word.fetch_sub(v & 1, Ordering::Release)),
        ),
        (
            "compare_exchange (lock cmpxchg: a spin lock taken)",
            per_op(|v| {
                let cur = word.load(Ordering::Relaxed);
                match word.compare_exchange(
                    cur,
                    cur ^ (v & 1),
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ) {
                    Ok(x) | Err(x) => x,
                }
            }),
        ),
        (
            "swap (xchg: a futex mutex released)",
            per_op(|v| word.swap(v & 1, Ordering::Release)),
        ),
    ];
    println!("plain add (load, add, store; the loop): {plain:.2} ns/op");
    for (name, ns) in rows {
        println!("  {name:<52} {:6.2} ns/op more", ns - plain);
    }
}
