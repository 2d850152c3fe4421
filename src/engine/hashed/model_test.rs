//! The wheel against a plain model, over random programs.
//!
//! The model keeps each entry's tick and a filing number (the order in
//! which entries were inserted or rescheduled). After every step the wheel's
//! due entries are popped and must be exactly the model's, in (tick, filing
//! number) order: a tick's entries in the order they were filed, whether
//! they waited unfiled or not. Bursts of inserts fill the unfiled list past
//! [`FILE_AT`], small wheels put entries turns away, and long advances catch
//! up more than a turn (then the due list is put in order with
//! [`HashedWheel::sort_due`], as the driver does). Every invariant written
//! at the top of the wheel's module is checked after each step too.
//!
//! An owner may also make a filed entry due later without moving it (kept
//! here in a map beside the wheel, as the `DelayQueue` keeps it in the
//! entry's value): after each advance [`HashedWheel::recheck_due`] moves
//! such entries on, and [`HashedWheel::peek_earliest`] counts their later
//! tick. An entry moved on that way joins its new tick's entries in an
//! order the model does not pin down ("loose"): for those only the set of
//! due entries and their tick order are checked.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use super::{HashedWheel, DETACHED, FILE_AT, NEVER, NIL, UNFILED};

#[derive(Debug, Clone)]
enum Op {
    /// One entry, `delta` ticks after `processed` (0: due at once).
    Insert(u64),
    /// `n` entries, each `1 + (i * step) % spread` ticks ahead: enough to
    /// fill the unfiled list past its bound.
    Burst {
        n: usize,
        step: u64,
        spread: u64,
    },
    /// Removes the `i`-th live entry (modulo their number).
    Remove(usize),
    /// Moves the `i`-th live entry to `delta` ticks after `processed`.
    Reschedule(usize, u64),
    /// Removes every `k`-th live entry, many of them unfiled; in one
    /// [`HashedWheel::remove_many`] when `batch` (the shards' sweep), where
    /// entries and their list neighbours go together.
    RemoveEvery(usize, bool),
    /// The owner of the `i`-th live entry, if it is filed in a bucket, makes
    /// it due `extra` ticks after the tick it is filed at without moving it,
    /// as the `DelayQueue` does ([`HashedWheel::recheck_due`] moves it on).
    Later(usize, u64),
    Advance(u64),
}

/// Where the model has an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Due at `tick`; `seq` orders the entries of one tick.
    Scheduled { tick: u64, seq: u64 },
    /// Popped as due; stays until removed.
    Expired,
}

struct Model {
    entries: BTreeMap<u32, State>,
    processed: u64,
    seq: u64,
    /// The later tick an owner gave a filed entry (see the module docs).
    later: BTreeMap<u32, u64>,
    /// Entries moved on by `recheck_due`, whose filing order among their
    /// tick's entries the model does not pin down.
    loose: BTreeSet<u32>,
}

impl Model {
    fn place(&mut self, key: u32, tick: u64) -> bool {
        self.later.remove(&key);
        self.loose.remove(&key);
        self.seq += 1;
        let seq = self.seq;
        self.entries.insert(key, State::Scheduled { tick, seq });
        tick <= self.processed
    }

    fn live(&self) -> Vec<u32> {
        self.entries.keys().copied().collect()
    }

    /// Scheduled entries due by `now`, in (tick, seq) order.
    fn due(&self, now: u64) -> Vec<u32> {
        let mut due: Vec<(u64, u64, u32)> = self
            .entries
            .iter()
            .filter_map(|(&k, s)| match *s {
                State::Scheduled { tick, seq } if tick <= now => Some((tick, seq, k)),
                _ => None,
            })
            .collect();
        due.sort_unstable();
        due.into_iter().map(|(_, _, k)| k).collect()
    }

    /// The scheduled entry that expires first, counting owners' later
    /// ticks, and whether its key is pinned down (no other entry due at
    /// its tick has a later tick or is loose).
    fn earliest(&self) -> Option<(u64, u32, bool)> {
        let due: Vec<(u64, u64, u32)> = self
            .entries
            .iter()
            .filter_map(|(&k, s)| match *s {
                State::Scheduled { tick, seq } => {
                    Some((self.later.get(&k).copied().unwrap_or(tick), seq, k))
                }
                _ => None,
            })
            .collect();
        let &(tick, _, key) = due.iter().min()?;
        let pinned = due
            .iter()
            .filter(|&&(t, _, _)| t == tick)
            .all(|(_, _, k)| !self.later.contains_key(k) && !self.loose.contains(k));
        Some((tick, key, pinned))
    }

    fn pending(&self) -> usize {
        self.entries
            .values()
            .filter(|s| !matches!(s, State::Expired))
            .count()
    }
}

/// Pops every due entry and checks them against the model, which marks
/// them expired: exactly in (tick, filing) order, except that entries in
/// `loose` are only checked to be there, in tick order.
fn pop_all(w: &mut HashedWheel<u32>, m: &mut Model, expected: Vec<u32>) {
    let mut popped = Vec::new();
    while let Some((key, value)) = w.pop_due() {
        assert_eq!(*value, key, "an entry keeps its value");
        popped.push(key);
    }
    for &key in &popped {
        if let Some(&State::Scheduled { tick, .. }) = m.entries.get(&key) {
            assert_eq!(
                w.entries[key as usize].tick, tick,
                "entry {key}: the tick it is due at"
            );
        }
    }
    let ticks: Vec<u64> = popped.iter().map(|&k| w.entries[k as usize].tick).collect();
    assert!(
        ticks.windows(2).all(|t| t[0] <= t[1]),
        "due in tick order: {ticks:?}"
    );
    let exact = |keys: &[u32]| -> Vec<u32> {
        keys.iter()
            .copied()
            .filter(|k| !m.loose.contains(k))
            .collect()
    };
    assert_eq!(
        exact(&popped),
        exact(&expected),
        "due entries, in (tick, filing) order"
    );
    let (mut got, mut want) = (popped.clone(), expected);
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want, "due entries");
    for key in popped {
        m.entries.insert(key, State::Expired);
        m.loose.remove(&key);
    }
}

/// Every invariant written at the top of the wheel's module, read off its
/// fields: each entry in exactly one place, the bounds and bits of every
/// bucket, `next`, and the count of pending entries.
fn check_invariants(w: &HashedWheel<u32>) {
    let mut seen = BTreeSet::new();
    let mut visit = |key: u32| assert!(seen.insert(key), "entry {key} in two places");
    // A list from `head`, linked both ways, ending at `tail`; its ticks.
    let walk = |head: u32, tail: u32| -> Vec<(u32, u64)> {
        let (mut key, mut prev, mut out) = (head, NIL, Vec::new());
        while key != NIL {
            let e = &w.entries[key as usize];
            assert_eq!(e.prev, prev, "entry {key}: its back link");
            out.push((key, e.tick));
            assert!(out.len() <= w.entries.len(), "a list with a cycle");
            (prev, key) = (key, e.next);
        }
        assert_eq!(prev, tail, "the list's tail");
        out
    };
    let mut in_buckets = 0;
    for (b, bucket) in w.buckets.iter().enumerate() {
        let list = walk(bucket.head, bucket.tail);
        let occupied = w.occupied[b / 64] & (1 << (b % 64)) != 0;
        assert_eq!(occupied, !list.is_empty(), "bucket {b}: its bit");
        if list.is_empty() {
            assert_eq!(w.mins[b], NEVER, "bucket {b}: empty, no lower bound");
            assert_eq!(bucket.max, 0, "bucket {b}: empty, no upper bound");
        }
        for &(key, tick) in &list {
            visit(key);
            assert_eq!(tick & w.mask, b as u64, "entry {key}: its bucket");
            assert!(tick > w.processed, "entry {key}: a due tick in a bucket");
            assert!(w.mins[b] <= tick, "bucket {b}: lower bound");
            assert!(bucket.max >= tick, "bucket {b}: upper bound");
            assert!(w.next <= tick, "next above a bucket's tick");
        }
        in_buckets += list.len();
    }
    let due = walk(w.due.head, w.due.tail);
    for &(key, tick) in &due {
        visit(key);
        assert!(tick <= w.processed, "entry {key}: in the due list early");
    }
    assert!(w.unfiled.len() <= FILE_AT, "the unfiled list stays bounded");
    assert_ne!(w.unfiled.last(), Some(&NIL), "no hole at the end");
    let mut unfiled = 0;
    for (i, &key) in w.unfiled.iter().enumerate() {
        if key == NIL {
            continue;
        }
        visit(key);
        let e = &w.entries[key as usize];
        assert_eq!((e.prev, e.next), (UNFILED, i as u32), "entry {key}");
        assert!(
            e.tick > w.processed && w.next <= e.tick,
            "entry {key}: tick"
        );
        unfiled += 1;
    }
    for (key, e) in w.entries.iter() {
        let key = key as u32;
        if seen.contains(&key) {
            assert_ne!(e.prev, DETACHED, "entry {key}: listed");
        } else {
            assert_eq!(e.prev, DETACHED, "entry {key}: in no list");
        }
    }
    assert_eq!(w.pending(), in_buckets + due.len() + unfiled);
}

fn check(w: &HashedWheel<u32>, m: &Model) {
    check_invariants(w);
    assert_eq!(w.processed(), m.processed);
    assert_eq!(w.pending(), m.pending());
    assert_eq!(w.len(), m.entries.len());
    for (&key, &s) in &m.entries {
        let scheduled = match s {
            State::Scheduled { tick, .. } => Some(tick),
            State::Expired => None,
        };
        assert_eq!(w.scheduled_at(key), scheduled, "entry {key}");
    }
    let earliest = m.earliest();
    let peeked = w.peek_earliest(|t, v| m.later.get(v).copied().unwrap_or(t));
    match (peeked, earliest) {
        (Some(got), Some((tick, key, pinned))) => {
            let got_tick = m
                .later
                .get(&got)
                .copied()
                .unwrap_or(w.entries[got as usize].tick);
            assert_eq!(got_tick, tick, "the earliest entry's tick");
            if pinned {
                assert_eq!(got, key, "the earliest entry");
            }
        }
        (got, want) => assert_eq!(got, want.map(|(_, k, _)| k), "the earliest entry"),
    }
    if let Some((tick, _, _)) = earliest {
        let next = w.next_expiration().expect("a scheduled entry");
        assert!(next <= tick, "next expiration {next} after tick {tick}");
    }
}

fn run(buckets: usize, ops: &[Op]) {
    let mut w = HashedWheel::new(buckets, 0);
    let mut m = Model {
        entries: BTreeMap::new(),
        processed: 0,
        seq: 0,
        later: BTreeMap::new(),
        loose: BTreeSet::new(),
    };
    for op in ops {
        match *op {
            Op::Insert(delta) => {
                let t = m.processed + delta;
                let key = w.insert(t, 0).unwrap();
                *w.get_mut(key).unwrap() = key;
                let due = m.place(key, t);
                pop_all(&mut w, &mut m, if due { vec![key] } else { vec![] });
            }
            Op::Burst { n, step, spread } => {
                for i in 0..n as u64 {
                    let t = m.processed + 1 + (i * step) % spread;
                    let key = w.insert(t, 0).unwrap();
                    *w.get_mut(key).unwrap() = key;
                    m.place(key, t);
                }
                pop_all(&mut w, &mut m, vec![]);
            }
            Op::Remove(i) | Op::Reschedule(i, _) | Op::Later(i, _) if m.entries.is_empty() => {
                let _ = i;
            }
            Op::Remove(i) => {
                let live = m.live();
                let key = live[i % live.len()];
                assert_eq!(w.remove(key), key);
                m.entries.remove(&key);
                m.later.remove(&key);
                m.loose.remove(&key);
            }
            Op::Later(i, extra) => {
                let live = m.live();
                let key = live[i % live.len()];
                if w.filed_at(key).is_some() {
                    let State::Scheduled { tick, .. } = m.entries[&key] else {
                        panic!("entry {key}: filed but not scheduled in the model");
                    };
                    assert!(tick > m.processed, "entry {key}: filed with a due tick");
                    m.later.insert(key, tick + extra);
                }
            }
            Op::Reschedule(i, delta) => {
                let live = m.live();
                let key = live[i % live.len()];
                let t = m.processed + delta;
                w.reschedule(key, t);
                let due = m.place(key, t);
                pop_all(&mut w, &mut m, if due { vec![key] } else { vec![] });
            }
            Op::RemoveEvery(k, batch) => {
                let keys: Vec<u32> = m.live().into_iter().step_by(k).collect();
                if batch {
                    let mut got = Vec::new();
                    w.remove_many(&keys, |v| got.push(v));
                    assert_eq!(got, keys);
                } else {
                    for &key in &keys {
                        assert_eq!(w.remove(key), key);
                    }
                }
                for key in keys {
                    m.entries.remove(&key);
                    m.later.remove(&key);
                    m.loose.remove(&key);
                }
            }
            Op::Advance(by) => {
                let now = m.processed + by;
                // Entries whose filed tick comes and that are due later:
                // moved on to that tick, loose among its entries.
                let moved: Vec<(u32, u64)> = m
                    .later
                    .iter()
                    .filter(|(k, _)| {
                        matches!(m.entries[*k], State::Scheduled { tick, .. } if tick <= now)
                    })
                    .map(|(&k, &due)| (k, due))
                    .collect();
                for &(key, due) in &moved {
                    m.later.remove(&key);
                    m.seq += 1;
                    m.entries.insert(
                        key,
                        State::Scheduled {
                            tick: due,
                            seq: m.seq,
                        },
                    );
                    m.loose.insert(key);
                }
                let expected = m.due(now);
                w.advance(now);
                m.processed = now;
                let mut rechecked: BTreeMap<u32, u64> = moved.into_iter().collect();
                let retick = w.recheck_due(|_, v| rechecked.remove(v));
                assert!(rechecked.is_empty(), "not in the due list: {rechecked:?}");
                if retick || by > buckets as u64 {
                    w.sort_due();
                }
                pop_all(&mut w, &mut m, expected);
            }
        }
        check(&w, &m);
    }
    // At shutdown every pending entry is handed over once.
    let mut drained = Vec::new();
    w.drain_pending(|key, value| {
        assert_eq!(*value, key);
        drained.push(key);
    });
    drained.sort_unstable();
    let pending: Vec<u32> = m
        .entries
        .iter()
        .filter(|(_, s)| !matches!(s, State::Expired))
        .map(|(&k, _)| k)
        .collect();
    assert_eq!(drained, pending);
    assert_eq!(w.pending(), 0);
    assert_eq!(w.peek_earliest(|t, _| t), None);
}

fn delta(buckets: u64) -> impl Strategy<Value = u64> {
    0..3 * buckets + 3
}

fn op(buckets: u64) -> impl Strategy<Value = Op> {
    let burst = FILE_AT + FILE_AT / 2;
    prop_oneof![
        6 => delta(buckets).prop_map(Op::Insert),
        1 => (1..burst, 1..64u64, 1..4 * buckets + 8)
            .prop_map(|(n, step, spread)| Op::Burst { n, step, spread }),
        3 => any::<usize>().prop_map(Op::Remove),
        3 => (any::<usize>(), delta(buckets)).prop_map(|(i, d)| Op::Reschedule(i, d)),
        2 => (1..5usize, any::<bool>()).prop_map(|(k, b)| Op::RemoveEvery(k, b)),
        3 => (any::<usize>(), 1..2 * buckets + 3).prop_map(|(i, e)| Op::Later(i, e)),
        4 => (0..2 * buckets + 2).prop_map(Op::Advance),
    ]
}

fn program() -> impl Strategy<Value = (usize, Vec<Op>)> {
    prop_oneof![Just(1usize), Just(2), Just(8), Just(64)].prop_flat_map(|buckets| {
        (
            Just(buckets),
            prop::collection::vec(op(buckets as u64), 1..60),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_wheel_matches_its_model((buckets, ops) in program()) {
        run(buckets, &ops);
    }
}

/// A burst past the unfiled bound, cancelled in part while the rest waits,
/// then rescheduled and advanced over more than a turn: the shape of a
/// server's request timeouts, fixed so it always runs.
#[test]
fn a_burst_past_the_bound_keeps_every_rule() {
    let n = FILE_AT + 300;
    run(
        8,
        &[
            Op::Burst {
                n,
                step: 7,
                spread: 40,
            },
            Op::RemoveEvery(3, false),
            Op::RemoveEvery(2, true),
            Op::Insert(1),
            Op::Reschedule(5, 0),
            Op::Advance(3),
            Op::Burst {
                n,
                step: 3,
                spread: 5,
            },
            Op::Advance(30),
            Op::Reschedule(2, 2),
            Op::Advance(2),
        ],
    );
}
