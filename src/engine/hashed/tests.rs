//! Unit tests of the hashed wheel on small, hand-checked cases.

use super::*;

fn drain(w: &mut HashedWheel<u32>) -> Vec<u32> {
    let mut out = Vec::new();
    while let Some((_, v)) = w.pop_due() {
        out.push(*v);
    }
    out.sort_unstable();
    out
}

#[test]
fn entries_fire_at_their_tick_not_before() {
    let mut w = HashedWheel::new(8, 0);
    w.insert(3, 3).unwrap();
    w.insert(5, 5).unwrap();
    w.advance(2);
    assert!(drain(&mut w).is_empty());
    w.advance(3);
    assert_eq!(drain(&mut w), [3]);
    w.advance(4);
    assert!(drain(&mut w).is_empty());
    w.advance(5);
    assert_eq!(drain(&mut w), [5]);
    assert_eq!(w.pending(), 0);
}

#[test]
fn a_wholly_due_bucket_moves_in_one_splice_in_walk_order() {
    let mut w = HashedWheel::new(4, 0);
    let a = w.insert(1, 10).unwrap();
    let b = w.insert(1, 11).unwrap();
    let c = w.insert(1, 12).unwrap();
    w.insert(2, 20).unwrap();
    w.insert(5, 50).unwrap(); // bucket 1, one turn away
                              // Leaving the bucket keeps its tail right: remove the tail (the last
                              // filed) and the middle.
    w.remove(c);
    w.remove(b);
    w.advance(2);
    let mut order = Vec::new();
    while let Some((_, v)) = w.pop_due() {
        order.push(*v);
    }
    assert_eq!(order, [10, 20]);
    w.remove(a);
    // Bucket 1 still holds tick 5 after its due entries left it; a new
    // entry there links behind nothing stale.
    w.insert(9, 90).unwrap();
    w.advance(5);
    assert_eq!(drain(&mut w), [50]);
    w.advance(9);
    assert_eq!(drain(&mut w), [90]);
    assert_eq!(w.pending(), 0);
}

/// Entries of one tick expire in the order they were filed, whether
/// their bucket moves whole or is walked: a herd of tasks is woken in
/// the order it registered, which is the order its memory was touched.
#[test]
fn entries_of_one_tick_expire_in_filing_order() {
    let popped = |w: &mut HashedWheel<u32>| {
        let mut out = Vec::new();
        while let Some((_, v)) = w.pop_due() {
            out.push(*v);
        }
        out
    };
    let mut w = HashedWheel::new(4, 0);
    for v in 0..5 {
        w.insert(2, v).unwrap();
    }
    w.advance(2);
    assert_eq!(popped(&mut w), [0, 1, 2, 3, 4]);
    // The same bucket with an entry a turn away: walked, not spliced.
    w.insert(10, 99).unwrap();
    for v in 0..5 {
        w.insert(6, v).unwrap();
    }
    w.advance(6);
    assert_eq!(popped(&mut w), [0, 1, 2, 3, 4]);
    w.advance(10);
    assert_eq!(drain(&mut w), [99]);
}

#[test]
fn entries_turns_away_wait_for_their_round() {
    let mut w = HashedWheel::new(4, 0);
    // Same bucket (1), three different turns.
    for t in [1, 5, 9] {
        w.insert(t, t as u32).unwrap();
    }
    let mut fired = Vec::new();
    for now in 1..=9 {
        w.advance(now);
        for v in drain(&mut w) {
            fired.push((now, v));
        }
    }
    assert_eq!(fired, [(1, 1), (5, 5), (9, 9)]);
}

#[test]
fn catching_up_more_than_a_turn_fires_everything_due_once() {
    let mut w = HashedWheel::new(8, 0);
    for t in 1..=40u64 {
        w.insert(t, t as u32).unwrap();
    }
    w.advance(30);
    assert_eq!(drain(&mut w), (1..=30).collect::<Vec<_>>());
    assert_eq!(w.pending(), 10);
    assert_eq!(w.next_expiration(), Some(31));
    w.advance(1000);
    assert_eq!(drain(&mut w), (31..=40).collect::<Vec<_>>());
    assert_eq!(w.next_expiration(), None);
}

#[test]
fn remove_and_reschedule_are_exact() {
    let mut w = HashedWheel::new(16, 0);
    let a = w.insert(10, 1).unwrap();
    let b = w.insert(10, 2).unwrap();
    let c = w.insert(26, 3).unwrap();
    assert_eq!(w.remove(b), 2);
    w.reschedule(c, 4);
    w.advance(4);
    assert_eq!(drain(&mut w), [3]);
    assert_eq!(w.scheduled_at(c), None);
    w.reschedule(c, 12);
    assert_eq!(w.scheduled_at(c), Some(12));
    assert_eq!(w.pending(), 2);
    w.advance(11);
    assert_eq!(drain(&mut w), [1]);
    w.advance(12);
    assert_eq!(drain(&mut w), [3]);
    assert_eq!(w.remove(a), 1);
    assert_eq!(w.remove(c), 3);
    assert_eq!(w.len(), 0);
}

#[test]
fn past_ticks_go_to_the_due_list() {
    let mut w = HashedWheel::new(4, 100);
    let k = w.insert(50, 1).unwrap();
    assert_eq!(w.scheduled_at(k), None);
    assert_eq!(w.next_expiration(), Some(100));
    assert_eq!(drain(&mut w), [1]);
    w.advance(u64::MAX - 1);
    assert!(drain(&mut w).is_empty());
    assert_eq!(w.pending(), 0);
    assert_eq!(w.pending(), 0);
}

#[test]
fn next_expiration_finds_the_earliest_tick() {
    let mut w = HashedWheel::new(8, 0);
    assert_eq!(w.next_expiration(), None);
    w.insert(20, 0).unwrap(); // bucket 4, turn 2
    w.insert(13, 0).unwrap(); // bucket 5, turn 1
    w.advance(1);
    assert_eq!(w.next_expiration(), Some(13));
    let k = w.insert(3, 0).unwrap();
    assert_eq!(w.next_expiration(), Some(3));
    w.remove(k);
    w.advance(3);
    assert_eq!(w.next_expiration(), Some(13));
}

#[test]
fn peek_earliest_finds_the_smallest_tick() {
    let mut w = HashedWheel::new(8, 0);
    assert_eq!(w.peek_earliest(|t, _| t), None);
    let far = w.insert(17, 0).unwrap(); // bucket 1, turn 3
    let near = w.insert(10, 0).unwrap(); // bucket 2, turn 2
    assert_eq!(w.peek_earliest(|t, _| t), Some(near));
    w.remove(near);
    assert_eq!(w.peek_earliest(|t, _| t), Some(far));
    let due = w.insert(0, 0).unwrap();
    assert_eq!(w.peek_earliest(|t, _| t), Some(due));
}

/// An owner that keeps a later tick in the value (here: the value is
/// how many ticks later): `peek_earliest` counts it, and `recheck_due`
/// files an entry whose later tick is ahead again and keeps one whose
/// later tick has come too, at that tick.
#[test]
fn an_owners_later_tick_counts_in_peek_and_recheck() {
    let mut w = HashedWheel::new(8, 0);
    let later = |t: u64, &v: &u32| t + u64::from(v);
    let pop = |w: &mut HashedWheel<u32>| {
        std::iter::from_fn(|| w.pop_due().map(|(k, _)| k)).collect::<Vec<_>>()
    };
    let pushed = w.insert(2, 0).unwrap();
    let plain = w.insert(5, 0).unwrap();
    let caught = w.insert(3, 0).unwrap();
    w.advance(1); // files them all
    assert!(w.filed_at(pushed).is_some() && w.filed_at(plain).is_some());
    *w.get_mut(pushed).unwrap() = 7; // due at 9
    *w.get_mut(caught).unwrap() = 1; // due at 4
    assert_eq!(w.peek_earliest(later), Some(caught));
    assert_eq!(w.get_with_tick(pushed), Some((2, &7)));
    w.advance(4);
    let retick = w.recheck_due(|t, v| (*v != 0).then(|| t + u64::from(std::mem::take(v))));
    assert!(retick, "`caught` stays due at 4");
    assert_eq!(w.entries[caught as usize].tick, 4);
    assert_eq!(w.entries[pushed as usize].tick, 9);
    assert_eq!(w.scheduled_at(pushed), Some(9));
    assert_eq!(pop(&mut w), [caught]);
    assert_eq!(w.peek_earliest(later), Some(plain));
    w.advance(9);
    assert!(!w.recheck_due(|_, _| None));
    assert_eq!(pop(&mut w), [plain, pushed]);
}

#[test]
fn a_timer_entry_is_32_bytes_in_the_slab() {
    // The shards store a waker (the tick it is due at is in the shard's
    // word table, 8 bytes more); with the future (32 bytes) a pending
    // timer stays within 72 bytes. A vacant slot is `None`: the waker's
    // pointer leaves a niche for it, so the `Option` costs no word.
    type Waker = std::task::Waker;
    assert_eq!(std::mem::size_of::<Entry<Waker>>(), 32);
    assert_eq!(std::mem::size_of::<Option<Entry<Waker>>>(), 32);
}

#[test]
fn sort_due_orders_a_catch_up_over_turns_by_tick() {
    for spread in [1u64, 1000] {
        let mut w = HashedWheel::new(4, 0);
        // Ticks over five turns, inserted out of order; two share tick 6.
        let ticks = [13u64, 2, 6, 17, 9, 6, 20, 1];
        for (i, &t) in ticks.iter().enumerate() {
            w.insert(t * spread, i as u32).unwrap();
        }
        w.advance(20 * spread);
        w.sort_due();
        let mut out = Vec::new();
        while let Some((k, v)) = w.pop_due() {
            let v = *v;
            out.push((w.entries[k as usize].tick / spread, v));
        }
        let mut want: Vec<(u64, u32)> = ticks
            .iter()
            .enumerate()
            .map(|(i, &t)| (t, i as u32))
            .collect();
        want.sort_by_key(|&(t, _)| t);
        let got: Vec<u64> = out.iter().map(|&(t, _)| t).collect();
        let expect: Vec<u64> = want.iter().map(|&(t, _)| t).collect();
        assert_eq!(got, expect, "spread {spread}");
    }
}

/// In pop order.
fn popped(w: &mut HashedWheel<u32>) -> Vec<u32> {
    let mut out = Vec::new();
    while let Some((_, v)) = w.pop_due() {
        out.push(*v);
    }
    out
}

/// An entry removed before it is filed leaves a hole, not a link: the
/// others are filed in the order they came, and a rescheduled one goes
/// behind them, as a bucket's tail would take it.
#[test]
fn unfiled_entries_leave_holes_and_keep_their_order() {
    let mut w = HashedWheel::new(8, 0);
    let keys: Vec<u32> = (0..5).map(|v| w.insert(4, v).unwrap()).collect();
    assert!(keys.iter().all(|&k| w.is_unfiled(k)));
    assert_eq!(w.scheduled_at(keys[1]), Some(4));
    assert_eq!(w.remove(keys[1]), 1);
    w.reschedule(keys[0], 4);
    assert_eq!(w.next_expiration(), Some(4), "unfiled ticks count");
    assert_eq!(w.pending(), 4);
    w.advance(3);
    assert!(keys.iter().all(|&k| k == keys[1] || !w.is_unfiled(k)));
    assert!(w.pop_due().is_none(), "never early");
    w.advance(4);
    assert_eq!(popped(&mut w), [2, 3, 4, 0]);
    assert_eq!(w.pending(), 0);
}

/// Past [`FILE_AT`] the waiting entries are filed in one batch, in the
/// order they came; a removed slot is handed out again at once.
#[test]
fn a_full_unfiled_list_is_filed_in_order() {
    let mut w = HashedWheel::new(64, 0);
    let n = FILE_AT as u32 + 5;
    let keys: Vec<u32> = (0..n).map(|v| w.insert(7, v).unwrap()).collect();
    assert!(!w.is_unfiled(keys[0]), "filed with the first batch");
    assert!(w.is_unfiled(keys[n as usize - 1]));
    assert_eq!(w.remove(keys[n as usize - 1]), n - 1);
    assert_eq!(w.insert(7, n).unwrap(), keys[n as usize - 1]);
    w.advance(7);
    let mut want: Vec<u32> = (0..n - 1).collect();
    want.push(n);
    assert_eq!(popped(&mut w), want);
}

/// A removal or a move of an unfiled entry writes no bucket: bucket
/// lists and bounds stay as they were.
#[test]
fn removing_an_unfiled_entry_touches_no_bucket() {
    let mut w = HashedWheel::new(8, 0);
    let a = w.insert(3, 1).unwrap();
    w.advance(1); // files `a`
    let b = w.insert(3, 2).unwrap();
    let c = w.insert(11, 3).unwrap();
    let bucket = w.buckets[3];
    w.remove(b);
    w.reschedule(c, 19);
    assert_eq!(
        (w.buckets[3].head, w.buckets[3].tail),
        (bucket.head, bucket.tail)
    );
    assert_eq!(w.buckets[3].head, a);
    assert!(w.is_unfiled(c));
    w.advance(3);
    assert_eq!(popped(&mut w), [1]);
    w.advance(18);
    assert!(w.pop_due().is_none());
    w.advance(19);
    assert_eq!(popped(&mut w), [3]);
}

/// `peek_earliest` sees unfiled entries; on a tick they share, a filed
/// entry came first.
#[test]
fn peek_earliest_sees_unfiled_entries() {
    let mut w = HashedWheel::new(8, 0);
    let filed = w.insert(6, 1).unwrap();
    w.advance(1);
    let early = w.insert(4, 2).unwrap();
    assert_eq!(w.peek_earliest(|t, _| t), Some(early));
    w.remove(early);
    let tie = w.insert(6, 3).unwrap();
    assert!(w.is_unfiled(tie));
    assert_eq!(w.peek_earliest(|t, _| t), Some(filed));
    w.remove(filed);
    assert_eq!(w.peek_earliest(|t, _| t), Some(tie));
}

#[test]
fn drain_pending_detaches_everything() {
    let mut w = HashedWheel::new(8, 0);
    w.insert(3, 1).unwrap();
    w.insert(4, 2).unwrap();
    w.insert(0, 3).unwrap();
    w.advance(1); // files the first
    w.insert(5, 4).unwrap(); // unfiled
    let mut seen = Vec::new();
    w.drain_pending(|_, v| seen.push(*v));
    seen.sort_unstable();
    assert_eq!(seen, [1, 2, 3, 4]);
    assert_eq!(w.pending(), 0);
    assert_eq!(w.len(), 4);
    assert!(w.pop_due().is_none());
}

/// Random inserts, removals and advances on wheels of 1 to 4096 buckets
/// (the occupancy bitmap wraps inside one word below 64), against a plain
/// list: every entry comes out exactly at its tick, and
/// `next_expiration` never passes the earliest scheduled tick.
#[test]
fn scans_skip_empty_buckets_and_miss_nothing() {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rand = move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    for buckets in [1u64, 2, 8, 64, 128, 4096] {
        let start = rand(1 << 40);
        let mut w = HashedWheel::new(buckets as usize, start);
        let mut live: Vec<(u32, u64)> = Vec::new();
        for _ in 0..3000 {
            match rand(4) {
                0 | 1 => {
                    let tick = w.processed() + 1 + rand(3 * buckets + 5);
                    let key = w.insert(tick, tick as u32).unwrap();
                    live.push((key, tick));
                }
                2 if !live.is_empty() => {
                    let (key, _) = live.swap_remove(rand(live.len() as u64) as usize);
                    w.remove(key);
                }
                _ => {
                    if let (Some(next), Some(min)) =
                        (w.next_expiration(), live.iter().map(|&(_, t)| t).min())
                    {
                        assert!(next <= min, "{buckets} buckets: next {next} after {min}");
                    }
                    let now = w.processed() + rand(2 * buckets + 2);
                    w.advance(now);
                    let mut fired = Vec::new();
                    while let Some((key, _)) = w.pop_due() {
                        fired.push(key);
                    }
                    for &key in &fired {
                        w.remove(key);
                    }
                    fired.sort_unstable();
                    let mut due: Vec<u32> = live
                        .iter()
                        .filter(|&&(_, t)| t <= now)
                        .map(|&(k, _)| k)
                        .collect();
                    due.sort_unstable();
                    assert_eq!(fired, due, "{buckets} buckets, advanced to {now}");
                    live.retain(|&(_, t)| t > now);
                }
            }
        }
    }
}
