//! `hashwheel::io` beside tokio-io-timeout (`bench/src/io.rs`).

use crate::harness;
use crate::table::{self, Table};
use crate::{Config, Envs};

pub fn read(cfg: &Config, e: &Envs, t: &mut Table) {
    let skip = table::SKIP.get().map_or(&[][..], Vec::as_slice);
    for v in harness::io::read_costs(&e.task, cfg.task_ops, cfg.rounds, skip) {
        t.add(&v.row, v.unit, v.imp, v.value);
    }
}

pub fn idle(cfg: &Config, e: &Envs, t: &mut Table) {
    let skip = table::SKIP.get().map_or(&[][..], Vec::as_slice);
    let n = harness::io::IDLE_CONNS;
    for v in harness::io::idle_connections(&e.task, n, cfg.slow_rounds, skip) {
        t.add(&v.row, v.unit, v.imp, v.value);
    }
}
