//! `hashwheel::io` beside tokio-io-timeout (`bench/src/io.rs`).

use crate::harness;
use crate::table::{self, Table};
use crate::{Config, Envs};

/// The fewest rounds of the io rows (per read and memory): each is short,
/// and an added cost of a few ns is the difference of two noisy medians.
const IO_ROUNDS: usize = 7;

pub fn read(cfg: &Config, e: &Envs, t: &mut Table) {
    let skip = table::SKIP.get().map_or(&[][..], Vec::as_slice);
    let rounds = cfg.rounds.max(IO_ROUNDS);
    for v in harness::io::read_costs(&e.task, cfg.task_ops, rounds, skip) {
        t.add(&v.row, v.unit, v.imp, v.value);
    }
}

pub fn idle(cfg: &Config, e: &Envs, t: &mut Table) {
    let skip = table::SKIP.get().map_or(&[][..], Vec::as_slice);
    let n = harness::io::IDLE_CONNS;
    let mem_rounds = cfg.rounds.max(IO_ROUNDS);
    for v in harness::io::idle_connections(&e.task, n, mem_rounds, cfg.slow_rounds, skip) {
        t.add(&v.row, v.unit, v.imp, v.value);
    }
}
