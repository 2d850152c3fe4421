//! Counts per timer with many timers pending, for callgrind: a task on a
//! one-worker runtime holds an older timer due first (as a server does),
//! inserts N sleeps 10–60 s away (each polled once and kept), registers and
//! cancels N 30 s sleeps among them, then drops the N in insertion or
//! random order. Each phase is one function, so callgrind counts it alone
//! with `--toggle-collect`; divide its counts by N.
//!
//! ```text
//! cargo build --release -p hashwheel-bench --bin pending_cost
//! for imp in hashwheel tokio; do for phase in insert register_cancel cancel; do
//!   valgrind --tool=callgrind --cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64 \
//!     --toggle-collect="pending_cost::${phase}_$imp" --callgrind-out-file=target/pc.$imp.$phase \
//!     target/release/pending_cost $imp 10000 insertion
//!   grep '^summary:' target/pc.$imp.$phase
//! done; done
//! ```
//!
//! The summary's fields are Ir, Dr, Dw, I1mr, D1mr, D1mw, ILmr, DLmr, DLmw;
//! estimated cycles are Ir + 10 × (D1mr + D1mw) + 100 × (ILmr + DLmr + DLmw),
//! as in the replay. Every kept sleep is boxed, as in its task's future
//! (hashwheel's too, though it is `Unpin`): the two are held alike.

use std::future::Future;
use std::hint::black_box;
use std::pin::Pin;
use std::task::{Context, Waker};
use std::time::Duration;

use hashwheel::{Sleep, Wheel};

/// The deadline of the `i`th pending timer: 10 to 60 s away.
fn pending_delay(i: usize) -> Duration {
    Duration::from_millis(10_000 + (i % 50_000) as u64)
}

type HashwheelSleep = Pin<Box<Sleep>>;

#[inline(never)]
fn insert_hashwheel(w: &Wheel, v: &mut Vec<HashwheelSleep>, n: usize, cx: &mut Context<'_>) {
    for i in 0..n {
        let mut s = Box::pin(w.sleep(pending_delay(i)));
        let _ = s.as_mut().poll(cx);
        v.push(s);
    }
}

#[inline(never)]
fn register_cancel_hashwheel(w: &Wheel, n: usize, cx: &mut Context<'_>) {
    for _ in 0..n {
        let mut s = w.sleep(Duration::from_secs(30));
        let _ = Pin::new(&mut s).poll(cx);
        drop(black_box(s));
    }
}

#[inline(never)]
fn cancel_hashwheel(v: Vec<HashwheelSleep>) {
    for s in v {
        drop(black_box(s));
    }
}

type TokioSleep = Pin<Box<tokio::time::Sleep>>;

#[inline(never)]
fn insert_tokio(v: &mut Vec<TokioSleep>, n: usize, cx: &mut Context<'_>) {
    for i in 0..n {
        let mut s = Box::pin(tokio::time::sleep(pending_delay(i)));
        let _ = s.as_mut().poll(cx);
        v.push(s);
    }
}

#[inline(never)]
fn register_cancel_tokio(n: usize, cx: &mut Context<'_>) {
    for _ in 0..n {
        let mut s = std::pin::pin!(tokio::time::sleep(Duration::from_secs(30)));
        let _ = s.as_mut().poll(cx);
    }
}

#[inline(never)]
fn cancel_tokio(v: Vec<TokioSleep>) {
    for s in v {
        drop(black_box(s));
    }
}

/// A fixed xorshift shuffle: the same order on every run.
fn shuffle<T>(v: &mut [T]) {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in (1..v.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.swap(i, (x % (i as u64 + 1)) as usize);
    }
}

fn run(imp: &str, n: usize, random: bool) {
    let mut cx = Context::from_waker(Waker::noop());
    match imp {
        "hashwheel" => {
            let w = Wheel::new();
            let mut older = w.sleep(Duration::from_secs(1));
            let _ = Pin::new(&mut older).poll(&mut cx);
            let mut v = Vec::with_capacity(n);
            insert_hashwheel(&w, &mut v, n, &mut cx);
            register_cancel_hashwheel(&w, n, &mut cx);
            if random {
                shuffle(&mut v);
            }
            cancel_hashwheel(v);
        }
        "tokio" => {
            let mut older = Box::pin(tokio::time::sleep(Duration::from_secs(1)));
            let _ = older.as_mut().poll(&mut cx);
            let mut v = Vec::with_capacity(n);
            insert_tokio(&mut v, n, &mut cx);
            register_cancel_tokio(n, &mut cx);
            if random {
                shuffle(&mut v);
            }
            cancel_tokio(v);
        }
        other => panic!("unknown implementation {other:?}: hashwheel or tokio"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: pending_cost hashwheel|tokio N insertion|random";
    let imp = args.get(1).expect(usage).clone();
    let n: usize = args.get(2).and_then(|n| n.parse().ok()).expect(usage);
    let random = match args.get(3).map(String::as_str) {
        None | Some("insertion") => false,
        Some("random") => true,
        Some(_) => panic!("{usage}"),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("tokio runtime");
    rt.block_on(rt.spawn(async move {
        // Run on the worker, in a task, after its first poll.
        tokio::task::yield_now().await;
        run(&imp, n, random);
    }))
    .expect("the measured task");
}
