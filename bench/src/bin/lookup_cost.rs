//! What finding the default wheel costs: `hashwheel::sleep` (which looks
//! the current runtime's wheel up) against `Wheel::sleep` (which is handed
//! one) and `tokio::time::sleep`, per operation, on one thread and on two
//! worker threads at once.
//!
//! ```text
//! cargo run --release -p hashwheel-bench --bin lookup_cost [FILTER]
//! ```
//!
//! With a FILTER, only the workloads whose names contain it run; `ROUNDS=n`
//! in the environment sets the number of rounds (for running it under
//! `valgrind --tool=cachegrind`, which counts instructions whatever the
//! load on the machine).
//!
//! Two workloads: *create + drop* makes a sleep and drops it unpolled (no
//! wheel lock, so the lookup is most of the cost), and *register + cancel*
//! polls it once, then drops it (the crate's headline workload). Each
//! figure is the best of 30 rounds of 100,000 calls, the workloads taking
//! turns, so that it holds up on a busy machine.

use std::future::{pending, Future};
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use hashwheel::Wheel;

const N: u32 = 100_000;
const ROUNDS: usize = 30;

/// Polls `f` once with a no-op waker, then drops it.
fn poll_once<F: Future>(f: F) {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    let r = f.as_mut().poll(&mut cx);
    assert!(matches!(r, Poll::Pending));
}

type Op<'a> = (&'static str, Box<dyn FnMut() + 'a>);

/// Each workload, in `ns/op`, measured on the calling thread: the best of
/// [`ROUNDS`] runs of [`N`] calls, the workloads taking turns round by
/// round, so that a burst of load elsewhere on the machine hits them all
/// alike and the best round is a quiet one for each.
fn measure() -> Vec<(&'static str, f64)> {
    let d = Duration::from_secs(30);
    let wheel = Wheel::current();
    let wheel = &wheel;
    let mut ops: Vec<Op<'_>> = vec![
        (
            "Handle::try_current() alone",
            Box::new(|| drop(black_box(tokio::runtime::Handle::try_current()))),
        ),
        (
            "create + drop   tokio::time::sleep",
            Box::new(move || drop(black_box(tokio::time::sleep(black_box(d))))),
        ),
        (
            "create + drop   Wheel::sleep",
            Box::new(move || drop(black_box(wheel.sleep(black_box(d))))),
        ),
        (
            "create + drop   hashwheel::sleep",
            Box::new(move || drop(black_box(hashwheel::sleep(black_box(d))))),
        ),
        (
            "register+cancel tokio::time::sleep",
            Box::new(move || poll_once(tokio::time::sleep(black_box(d)))),
        ),
        (
            "register+cancel Wheel::sleep",
            Box::new(move || poll_once(wheel.sleep(black_box(d)))),
        ),
        (
            "register+cancel hashwheel::sleep",
            Box::new(move || poll_once(hashwheel::sleep(black_box(d)))),
        ),
        (
            "register+cancel tokio::time::timeout",
            Box::new(move || poll_once(tokio::time::timeout(black_box(d), pending::<()>()))),
        ),
        (
            "register+cancel Wheel::timeout",
            Box::new(move || poll_once(wheel.timeout(black_box(d), pending::<()>()))),
        ),
        (
            "register+cancel hashwheel::timeout",
            Box::new(move || poll_once(hashwheel::timeout(black_box(d), pending::<()>()))),
        ),
    ];
    if let Some(only) = std::env::args().nth(1) {
        ops.retain(|(name, _)| name.contains(&only));
    }
    let rounds = std::env::var("ROUNDS").map_or(ROUNDS, |r| r.parse().expect("ROUNDS: a number"));
    let mut best = vec![f64::MAX; ops.len()];
    for _ in 0..rounds {
        for (i, (_, op)) in ops.iter_mut().enumerate() {
            let t = Instant::now();
            for _ in 0..N {
                op();
            }
            best[i] = best[i].min(t.elapsed().as_nanos() as f64 / f64::from(N));
        }
    }
    ops.iter().map(|(name, _)| *name).zip(best).collect()
}

fn print(title: &str, rows: &[Vec<(&'static str, f64)>]) {
    println!("{title}");
    for (i, (name, _)) in rows[0].iter().enumerate() {
        let cols: Vec<String> = rows.iter().map(|r| format!("{:7.1}", r[i].1)).collect();
        println!("  {name:<38} {} ns/op", cols.join("  "));
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let one = rt.block_on(async { measure() });
    print("current_thread runtime, one thread:", &[one]);
    drop(rt);

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let two = rt.block_on(async {
        let a = tokio::spawn(async { measure() });
        let b = tokio::spawn(async { measure() });
        vec![a.await.unwrap(), b.await.unwrap()]
    });
    print(
        "multi_thread runtime, two workers measuring at once (one column each):",
        &two,
    );
}
