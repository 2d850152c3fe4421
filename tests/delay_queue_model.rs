//! `DelayQueue` against a plain model, over random programs on a small
//! wheel (entries whole turns away, resets that move values later while
//! they sit in a bucket, and catch-ups over more than a turn).
//!
//! The model keeps each value's due millisecond. After every step the queue
//! must say what the model says: each value's deadline, which value comes
//! next (`peek`), and, after the clock moves, exactly the values whose
//! millisecond has come, in deadline order, with the task woken whenever
//! one came while it waited.

mod common;

use std::task::Poll;
use std::time::Duration;

use hashwheel::delay_queue::Key;
use hashwheel::Wheel;
use proptest::prelude::*;
use tokio::time::Instant;
use tokio_test::task;

#[derive(Debug, Clone)]
enum Op {
    /// A value due this many milliseconds from now.
    Insert(u64),
    /// Moves the `i`-th live value (modulo their number) to this many
    /// milliseconds from now.
    Reset(usize, u64),
    Remove(usize),
    /// Moves the clock this many milliseconds and drains what is due.
    Advance(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u64..40).prop_map(Op::Insert),
        4 => (0usize..64, 0u64..60).prop_map(|(i, d)| Op::Reset(i, d)),
        1 => (0usize..64).prop_map(Op::Remove),
        3 => (0u64..14).prop_map(Op::Advance),
    ]
}

struct Live {
    key: Key,
    value: u32,
    due: u64,
}

fn run(slots: usize, ops: Vec<Op>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    rt.block_on(async move {
        let wheel = Wheel::builder().buckets(slots).build().unwrap();
        let mut q = task::spawn(wheel.delay_queue::<u32>());
        let start = Instant::now();
        let now_ms = || (Instant::now() - start).as_millis() as u64;
        let mut live: Vec<Live> = Vec::new();
        let mut next_value = 0;
        // Whether the queue's last poll returned `Pending`.
        let mut waiting = false;
        for (step, op) in ops.into_iter().enumerate() {
            match op {
                Op::Insert(d) => {
                    let key = q.insert(next_value, common::ms(d));
                    live.push(Live {
                        key,
                        value: next_value,
                        due: now_ms() + d,
                    });
                    next_value += 1;
                }
                Op::Reset(i, d) if !live.is_empty() => {
                    let v = i % live.len();
                    q.reset(&live[v].key, common::ms(d));
                    live[v].due = now_ms() + d;
                }
                Op::Remove(i) if !live.is_empty() => {
                    let v = live.swap_remove(i % live.len());
                    assert_eq!(q.remove(&v.key).into_inner(), v.value, "step {step}");
                }
                Op::Advance(d) => {
                    tokio::time::advance(common::ms(d)).await;
                    let now = now_ms();
                    let came = live.iter().any(|v| v.due <= now);
                    if waiting && came {
                        assert!(q.is_woken(), "step {step}: a value came, no wake-up");
                    }
                    let mut got = Vec::new();
                    let last = loop {
                        match q.enter(|cx, mut q| q.poll_expired(cx)) {
                            Poll::Ready(Some(e)) => got.push((e.deadline(), e.into_inner())),
                            other => break other,
                        }
                    };
                    waiting = last.is_pending();
                    assert_eq!(last.is_ready(), live.iter().all(|v| v.due <= now));
                    let mut want: Vec<&Live> = live.iter().filter(|v| v.due <= now).collect();
                    want.sort_by_key(|v| v.due);
                    let want_dues: Vec<u64> = want.iter().map(|v| v.due).collect();
                    let got_dues: Vec<u64> = got
                        .iter()
                        .map(|(at, _)| (*at - start).as_millis() as u64)
                        .collect();
                    assert_eq!(got_dues, want_dues, "step {step}: deadlines, in order");
                    let mut got_values: Vec<u32> = got.iter().map(|&(_, v)| v).collect();
                    let mut want_values: Vec<u32> = want.iter().map(|v| v.value).collect();
                    got_values.sort_unstable();
                    want_values.sort_unstable();
                    assert_eq!(got_values, want_values, "step {step}: values out");
                    live.retain(|v| v.due > now);
                }
                _ => {}
            }
            for v in &live {
                assert_eq!(
                    q.deadline(&v.key),
                    start + Duration::from_millis(v.due),
                    "step {step}: the deadline of {}",
                    v.value
                );
            }
            let first = live.iter().map(|v| v.due).min();
            let peeked = q.peek().map(|k| {
                let v = live.iter().find(|v| v.key == k).expect("a live key");
                v.due
            });
            assert_eq!(peeked, first, "step {step}: peek names the first due");
            assert_eq!(q.len(), live.len());
        }
    });
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: common::proptest_cases(1_000),
        ..ProptestConfig::default()
    })]

    #[test]
    fn a_queue_on_a_small_wheel_behaves_as_the_model(
        slots in prop_oneof![Just(4usize), Just(16), Just(64)],
        ops in prop::collection::vec(op(), 1..120),
    ) {
        run(slots, ops);
    }
}

/// Many resets of one value to later deadlines, across several turns of a
/// small wheel, then one to an earlier deadline: it comes out once, at the
/// last deadline, never at one it had before.
#[tokio::test(start_paused = true)]
async fn a_value_moved_later_many_times_comes_out_at_its_last_deadline() {
    let wheel = Wheel::builder().buckets(4).build().unwrap();
    let mut q = task::spawn(wheel.delay_queue());
    let start = Instant::now();
    let key = q.insert("v", common::ms(3));
    assert!(q.enter(|cx, mut q| q.poll_expired(cx)).is_pending());
    for step in 1..=10u64 {
        common::advance(common::ms(2)).await;
        q.reset(&key, common::ms(3));
        assert_eq!(q.deadline(&key), start + common::ms(2 * step + 3));
        assert!(
            q.enter(|cx, mut q| q.poll_expired(cx)).is_pending(),
            "step {step}"
        );
    }
    q.reset(&key, common::ms(1));
    common::advance(common::ms(1)).await;
    let e = match q.enter(|cx, mut q| q.poll_expired(cx)) {
        Poll::Ready(Some(e)) => e,
        other => panic!("not out at its deadline: {other:?}"),
    };
    assert_eq!(e.deadline(), start + common::ms(21));
    assert!(q.enter(|cx, mut q| q.poll_expired(cx)).is_ready());
}

/// A move later by more ticks than a value records (2^32 ms, about 50 days)
/// moves the value at once instead; it still comes out at its new deadline,
/// not before.
#[tokio::test(start_paused = true)]
async fn a_move_later_by_more_than_2_pow_32_ticks_moves_the_value_at_once() {
    let wheel = Wheel::new();
    let mut q = task::spawn(wheel.delay_queue());
    let start = Instant::now();
    let far = Duration::from_secs(60 * 86_400);
    let key = q.insert("v", common::ms(5));
    // A poll after a tick files the value in its bucket.
    common::advance(common::ms(1)).await;
    assert!(q.enter(|cx, mut q| q.poll_expired(cx)).is_pending());
    q.reset(&key, far);
    assert_eq!(q.deadline(&key), start + common::ms(1) + far);
    common::advance(far - common::ms(1)).await;
    assert!(q.enter(|cx, mut q| q.poll_expired(cx)).is_pending());
    common::advance(common::ms(1)).await;
    assert!(q.is_woken());
    match q.enter(|cx, mut q| q.poll_expired(cx)) {
        Poll::Ready(Some(e)) => assert_eq!(e.into_inner(), "v"),
        other => panic!("not out at its deadline: {other:?}"),
    }
}

/// Values moved later while filed, then the wheel shuts down: everything
/// comes out at once, in the order of the deadlines they were moved to,
/// each with that deadline.
#[tokio::test(start_paused = true)]
async fn values_moved_later_come_out_in_their_new_order_at_shutdown() {
    let wheel = Wheel::new();
    let mut q = task::spawn(wheel.delay_queue());
    let start = Instant::now();
    let a = q.insert("a", common::ms(10));
    let b = q.insert("b", common::ms(20));
    q.insert("c", common::ms(30));
    // A poll after a tick files the values in their buckets.
    common::advance(common::ms(1)).await;
    assert!(q.enter(|cx, mut q| q.poll_expired(cx)).is_pending());
    q.reset(&a, common::ms(49)); // due at 50
    q.reset(&b, common::ms(39)); // due at 40
    wheel.shutdown();
    let mut got = Vec::new();
    while let Poll::Ready(Some(e)) = q.enter(|cx, mut q| q.poll_expired(cx)) {
        let at = (e.deadline() - start).as_millis();
        got.push((e.into_inner(), at));
    }
    assert_eq!(got, [("c", 30), ("b", 40), ("a", 50)]);
}
