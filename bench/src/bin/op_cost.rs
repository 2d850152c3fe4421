//! Instructions per timer operation, counted under callgrind: the rows of
//! the timeout and sleep workloads on a paused current-thread runtime, in
//! the future `block_on` runs (`op_cost task`: in a spawned task), with
//! older timers pending in each wheel (as in a server, so that a new timer
//! does not wake the driver).
//!
//! ```text
//! cargo build --release -p hashwheel-bench --bin op_cost
//! valgrind --tool=callgrind --callgrind-out-file=target/op_cost.callgrind \
//!     --toggle-collect='*op_cost::op_*' target/release/op_cost
//! callgrind_annotate --inclusive=yes target/op_cost.callgrind | grep 'op_cost::op_'
//! ```
//!
//! Each row is one `#[inline(never)]` function `op_<row>` that does its
//! operation [`N`] (20,000) times; its inclusive instructions over `N` are
//! the operation's cost. `target/release/op_cost` alone runs every row once
//! natively (a check that each completes as it should).

use std::future::{poll_fn, ready, Future};
use std::hint::black_box;
use std::pin::{pin, Pin};
use std::task::{Context, Poll};
use std::time::Duration;

use hashwheel::Wheel;
use tokio::time::Instant;

/// Operations per row.
const N: u32 = 20_000;
/// A request timeout's length, as in the server row.
const D: Duration = Duration::from_secs(5);

/// Pending on its first poll (waking its task), ready on the second: a
/// request served after one wait.
struct Once(bool);

impl Future for Once {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if std::mem::replace(&mut self.0, true) {
            Poll::Ready(())
        } else {
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

/// Polls `f` with the task's own context until it is ready; its output and
/// the number of polls it took.
fn drive<F: Future>(f: F, cx: &mut Context<'_>) -> (F::Output, u32) {
    let mut f = pin!(f);
    let mut polls = 0;
    loop {
        polls += 1;
        if let Poll::Ready(v) = f.as_mut().poll(cx) {
            return (v, polls);
        }
    }
}

macro_rules! rows {
    ($($name:ident($cx:ident, $w:ident) $body:block)*) => {
        $(
            #[inline(never)]
            fn $name($cx: &mut Context<'_>, $w: &Wheel) -> u32 {
                let mut polls = 0;
                for _ in 0..N {
                    polls += $body;
                }
                polls
            }
        )*
        type Row = (&'static str, fn(&mut Context<'_>, &Wheel) -> u32);
        const ROWS: &[Row] = &[$((stringify!($name), $name)),*];
    };
}

rows! {
    op_timeout_ready_wheel(cx, w) {
        let (r, p) = drive(w.timeout(black_box(D), ready(1u8)), cx);
        assert_eq!(r, Ok(1));
        p
    }
    op_timeout_ready_free(cx, _w) {
        let (r, p) = drive(hashwheel::timeout(black_box(D), ready(1u8)), cx);
        assert_eq!(r, Ok(1));
        p
    }
    op_timeout_ready_tokio(cx, _w) {
        let (r, p) = drive(tokio::time::timeout(black_box(D), ready(1u8)), cx);
        assert!(r.is_ok());
        p
    }
    op_timeout_pending_once_wheel(cx, w) {
        let (r, p) = drive(w.timeout(black_box(D), Once(false)), cx);
        assert!(r.is_ok());
        p
    }
    op_timeout_pending_once_free(cx, _w) {
        let (r, p) = drive(hashwheel::timeout(black_box(D), Once(false)), cx);
        assert!(r.is_ok());
        p
    }
    op_timeout_pending_once_tokio(cx, _w) {
        let (r, p) = drive(tokio::time::timeout(black_box(D), Once(false)), cx);
        assert!(r.is_ok());
        p
    }
    op_lazy_timeout_ready_wheel(cx, w) {
        let (r, p) = drive(w.lazy_timeout(black_box(D), ready(1u8)), cx);
        assert_eq!(r, Ok(1));
        p
    }
    op_lazy_timeout_ready_free(cx, _w) {
        let (r, p) = drive(hashwheel::lazy_timeout(black_box(D), ready(1u8)), cx);
        assert_eq!(r, Ok(1));
        p
    }
    op_lazy_timeout_pending_once_wheel(cx, w) {
        let (r, p) = drive(w.lazy_timeout(black_box(D), Once(false)), cx);
        assert!(r.is_ok());
        p
    }
    op_lazy_timeout_pending_once_free(cx, _w) {
        let (r, p) = drive(hashwheel::lazy_timeout(black_box(D), Once(false)), cx);
        assert!(r.is_ok());
        p
    }
    op_sleep_register_cancel_wheel(cx, w) {
        let mut s = w.sleep(black_box(D));
        assert!(Pin::new(&mut s).poll(cx).is_pending());
        1
    }
    op_sleep_register_cancel_free(cx, _w) {
        let mut s = hashwheel::sleep(black_box(D));
        assert!(Pin::new(&mut s).poll(cx).is_pending());
        1
    }
    op_sleep_register_cancel_tokio(cx, _w) {
        let mut s = pin!(tokio::time::sleep(black_box(D)));
        assert!(s.as_mut().poll(cx).is_pending());
        1
    }
}

/// Resets of a held, registered sleep to now plus 10 s, as an idle timeout
/// is reset on every message; `Instant::now()` included, as there.
#[inline(never)]
fn op_reset_hashwheel(s: &mut hashwheel::Sleep) {
    for _ in 0..N {
        s.reset(Instant::now() + black_box(Duration::from_secs(10)));
    }
}

#[inline(never)]
fn op_reset_tokio(s: Pin<&mut tokio::time::Sleep>) {
    let mut s = s;
    for _ in 0..N {
        s.as_mut()
            .reset(Instant::now() + black_box(Duration::from_secs(10)));
    }
}

fn main() {
    // `op_cost real`: tokio's clock not paused (a clock read is then a vDSO
    // call, where the paused clock's is a lock). `op_cost task`: the rows in
    // a spawned task, where the free functions find their wheel in the
    // thread's cache, as a server's tasks do; by default they run in
    // `block_on`'s future, which is no task, so that a free function asks
    // tokio for its runtime at every call.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let paused = !args.iter().any(|a| a == "real");
    let in_task = args.iter().any(|a| a == "task");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(paused)
        .build()
        .unwrap();
    rt.block_on(async move {
        if in_task {
            tokio::spawn(rows()).await.expect("the rows' task");
        } else {
            rows().await;
        }
    });
}

/// Every row, in order, in the task (or future) that awaits this.
async fn rows() {
    let wheel = Wheel::new();
    // Older timers pending in each wheel, due before every timer the
    // rows make: a new one neither is the earliest nor wakes a driver.
    let mut older_wheel = wheel.sleep(Duration::from_secs(1));
    let mut older_free = hashwheel::sleep(Duration::from_secs(1));
    let mut older_tokio = Box::pin(tokio::time::sleep(Duration::from_secs(1)));
    let mut idle_wheel = wheel.sleep(Duration::from_secs(10));
    let mut idle_tokio = Box::pin(tokio::time::sleep(Duration::from_secs(10)));
    poll_fn(|cx| {
        assert!(Pin::new(&mut older_wheel).poll(cx).is_pending());
        assert!(Pin::new(&mut older_free).poll(cx).is_pending());
        assert!(older_tokio.as_mut().poll(cx).is_pending());
        assert!(Pin::new(&mut idle_wheel).poll(cx).is_pending());
        assert!(idle_tokio.as_mut().poll(cx).is_pending());
        Poll::Ready(())
    })
    .await;
    // Let the drivers see them, then count each row.
    tokio::task::yield_now().await;
    for &(name, row) in ROWS {
        let polls = poll_fn(|cx| Poll::Ready(row(cx, &wheel))).await;
        println!("{name}: {N} operations, {polls} polls");
        tokio::task::yield_now().await;
    }
    poll_fn(|cx| {
        op_reset_hashwheel(&mut idle_wheel);
        op_reset_tokio(idle_tokio.as_mut());
        assert!(Pin::new(&mut idle_wheel).poll(cx).is_pending());
        assert!(idle_tokio.as_mut().poll(cx).is_pending());
        Poll::Ready(())
    })
    .await;
    println!("op_reset_hashwheel, op_reset_tokio: {N} resets each");
}
