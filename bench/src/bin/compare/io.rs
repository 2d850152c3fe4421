//! `hashwheel::io` beside tokio-io-timeout (`bench/src/io.rs`).

use crate::harness;
use crate::harness::io::Value;
use crate::table::{self, Table};
use crate::{Config, Envs};

/// The fewest rounds of the io rows (per read and memory): each is short,
/// and an added cost of a few ns is the difference of two noisy medians.
const IO_ROUNDS: usize = 7;

pub fn read(cfg: &Config, e: &Envs, t: &mut Table) {
    let skip = table::SKIP.get().map_or(&[][..], Vec::as_slice);
    let rounds = cfg.rounds.max(IO_ROUNDS);
    add(
        t,
        harness::io::read_costs(&e.task, cfg.task_ops, rounds, skip),
    );
}

pub fn idle(cfg: &Config, e: &Envs, t: &mut Table) {
    let skip = table::SKIP.get().map_or(&[][..], Vec::as_slice);
    let n = harness::io::IDLE_CONNS;
    let mem_rounds = cfg.rounds.max(IO_ROUNDS);
    add(
        t,
        harness::io::idle_connections(&e.task, n, mem_rounds, cfg.slow_rounds, skip),
    );
}

/// Adds `values` to the table, and prints each cell's median with its min
/// and max (the table shows the median and the min).
fn add(t: &mut Table, values: Vec<Value>) {
    let mut cells: Vec<(&str, &str, Vec<f64>)> = Vec::new();
    for v in &values {
        t.add(&v.row, v.unit, v.imp, v.value);
        match cells
            .iter_mut()
            .find(|(row, imp, _)| *row == v.row && *imp == v.imp.name())
        {
            Some((_, _, all)) => all.push(v.value),
            None => cells.push((&v.row, v.imp.name(), vec![v.value])),
        }
    }
    for (row, imp, mut all) in cells {
        let n = all.len();
        let median = harness::median(&mut all);
        println!(
            "io spread, {row}, {imp}: median {median:.3} min {:.3} max {:.3} ({n} rounds)",
            all[0],
            all[n - 1]
        );
    }
}
