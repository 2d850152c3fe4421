//! The primary sections: timers inside tasks on a multi-thread runtime's
//! workers, and the server simulation.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use crate::harness::in_task as tasks;
use crate::harness::server::{self, ServerConfig};
use crate::harness::{median, pending_inputs, Imp};
use crate::table::{count, rounds, Table};
use crate::{Config, Envs, NS};

/// The name of the in-task insert row for `n` pending timers.
pub fn insert_row(n: usize) -> String {
    format!(
        "task, 1 worker: insert {} pending timers (10–60 s), CPU",
        count(n)
    )
}

/// The name of the in-task cancel row for `n` pending timers, cancelled in
/// insertion order (`random` false) or in random order.
pub fn cancel_row(n: usize, random: bool) -> String {
    let order = if random { "random" } else { "insertion" };
    format!(
        "task, 1 worker: cancel those {} ({order} order), CPU",
        count(n)
    )
}

/// The name of the server's timer CPU row for `conns` connections.
pub fn server_cpu_row(conns: usize) -> String {
    format!(
        "{}: timer CPU per message (run − its round's no-timer run)",
        server_head(conns)
    )
}

fn server_head(conns: usize) -> String {
    format!("server, {} connections, 2 workers", count(conns))
}

/// The head of a row run in a task on each of `workers` workers.
fn workers_head(workers: usize) -> String {
    match workers {
        1 => "task, 1 worker".to_string(),
        n => format!("task, {n} workers (a task on each)"),
    }
}

pub fn register_cancel(cfg: &Config, e: &Envs, t: &mut Table) {
    let ops = cfg.task_ops;
    for workers in [1, 2] {
        let head = workers_head(workers);
        let cpu = format!("{head}: register + cancel a 30 s sleep, CPU");
        let wall = match workers {
            1 => format!("{head}: register + cancel a 30 s sleep, wall"),
            _ => format!(
                "{head}: register + cancel a 30 s sleep, wall (combined: all ops ÷ elapsed)"
            ),
        };
        rounds(cfg.rounds, &tasks::register_cancel_imps(), |imp| {
            let all = ops * workers as u64;
            let (c, w) = tasks::register_cancel(e.task.rt(imp, workers), imp, ops).per_op(all);
            t.add(&cpu, NS, imp, c);
            t.add(&wall, NS, imp, w);
        });
    }
}

pub fn reset_poll(cfg: &Config, e: &Envs, t: &mut Table) {
    let ops = cfg.task_ops;
    let steps = [
        (
            Duration::from_millis(1),
            "1 ms later (a new tick each time)",
        ),
        (
            Duration::from_micros(1),
            "1 µs later (mostly within its tick)",
        ),
    ];
    for (workers, (step, what)) in [1, 2].into_iter().flat_map(|w| steps.map(|s| (w, s))) {
        let head = workers_head(workers);
        let cpu = format!("{head}: reset a pending sleep {what} and poll it, CPU");
        rounds(cfg.rounds, &tasks::reset_poll_imps(), |imp| {
            let all = ops * workers as u64;
            let c = tasks::reset_poll(e.task.rt(imp, workers), imp, step, ops)
                .per_op(all)
                .0;
            t.add(&cpu, NS, imp, c);
        });
    }
}

pub fn timeout(cfg: &Config, e: &Envs, t: &mut Table) {
    let ops = cfg.task_ops;
    for (pending, what) in [(true, "pending once, then ready"), (false, "ready at once")] {
        let name = format!("task, 1 worker: timeout(30 s, f), f {what}, CPU");
        rounds(cfg.rounds, &tasks::timeout_imps(), |imp| {
            let cpu = tasks::timeout(e.task.rt(imp, 1), imp, pending, ops)
                .per_op(ops)
                .0;
            t.add(&name, NS, imp, cpu);
        });
        let name = format!(
            "task, 1 worker: timeout counted from the first pending poll (lazy_timeout; pingora's fast_timeout), f {what}, CPU"
        );
        rounds(cfg.rounds, &tasks::lazy_timeout_imps(), |imp| {
            let cpu = tasks::lazy_timeout(e.task.rt(imp, 1), imp, pending, ops)
                .per_op(ops)
                .0;
            t.add(&name, NS, imp, cpu);
        });
    }
}

/// Each round runs every implementation twice: insert then cancel in
/// insertion order, and insert then cancel in random order. The insert row
/// has both inserts (two values per round).
pub fn insert_cancel(cfg: &Config, e: &Envs, t: &mut Table) {
    for &n in &cfg.sizes {
        let (deadlines, random) = pending_inputs(n, n as u64);
        let (deadlines, random): (Arc<[Duration]>, Arc<[usize]>) =
            (deadlines.into(), random.into());
        let in_order: Arc<[usize]> = (0..n).collect();
        let r = if n >= cfg.slow_size {
            cfg.slow_rounds
        } else {
            cfg.rounds
        };
        let insert = insert_row(n);
        t.reserve(&insert, NS);
        rounds(r, &tasks::insert_cancel_imps(), |imp| {
            for (is_random, order) in [(false, &in_order), (true, &random)] {
                let ic = tasks::insert_cancel(&e.task, imp, deadlines.clone(), order.clone());
                t.add(&insert, NS, imp, ic.insert.per_op(n as u64).0);
                let cancel = cancel_row(n, is_random);
                t.add(&cancel, NS, imp, ic.cancel.per_op(n as u64).0);
            }
        });
    }
}

pub fn cross_worker_cancel(cfg: &Config, e: &Envs, t: &mut Table) {
    let n = cfg.cross_n;
    let same = format!(
        "task, 2 workers: cancel {} timers on the worker that registered them, CPU",
        count(n)
    );
    let cross = format!(
        "task, 2 workers: cancel {} timers on the other worker (registered on A, dropped on B), CPU",
        count(n)
    );
    rounds(cfg.rounds, &tasks::cancel_from_imps(), |imp| {
        for (is_cross, name) in [(false, &same), (true, &cross)] {
            let s = tasks::cancel_from(&e.task, imp, n, is_cross);
            t.add(name, NS, imp, s.per_op(n as u64).0);
        }
    });
}

pub fn memory(cfg: &Config, _: &Envs, t: &mut Table) {
    let rows = [(false, ""), (true, " moved 1 s later once (an idle timer)")];
    for (moved, what) in rows {
        let name = format!(
            "task, 1 worker: memory per pending timer{what}, RSS of {}",
            count(cfg.memory_n)
        );
        rounds(
            1,
            &tasks::memory_imps(moved),
            |imp| match tasks::bytes_per_timer(imp, cfg.memory_n, moved) {
                Some(b) => t.add(&name, "B", imp, b),
                None => eprintln!("{}: the memory child failed", imp.name()),
            },
        );
    }
}

/// The server rows: every implementation and the no-timer baseline,
/// alternating. The timer CPU per message of a run is its process CPU per
/// message less the baseline's in the same round; the median, min and max
/// over the rounds go to stderr beside the per-run lines.
pub fn server(cfg: &Config, _: &Envs, t: &mut Table) {
    for &conns in &cfg.server_conns {
        let sc = ServerConfig::new(conns, cfg.server_rate, cfg.server_run, cfg.server_min_idle);
        let head = server_head(conns);
        eprintln!(
            "  {head}: {} msg/s for {:?}, idle timeout {:?}, request timeout {:?}",
            sc.rate, sc.run, sc.idle, sc.request
        );
        let timer_cpu = server_cpu_row(conns);
        t.reserve(&timer_cpu, "ns/msg");
        let mut per_msg: HashMap<Imp, Vec<f64>> = HashMap::new();
        rounds(cfg.server_rounds, Imp::SERVER, |imp| {
            let r = server::server(imp, &sc);
            eprintln!(
                "  {:<34} {:>7.0} ns/msg, {:>7.0} msg/s, {} reaped of {} silent, p99 {:.2} ms",
                imp.name(),
                r.cpu_per_message_ns(),
                r.messages_per_sec(),
                r.lateness_ms.len(),
                r.silent,
                r.lateness(0.99),
            );
            if r.request_timeouts > 0 {
                eprintln!(
                    "  {}: {} request timeouts elapsed",
                    imp.name(),
                    r.request_timeouts
                );
            }
            per_msg.entry(imp).or_default().push(r.cpu_per_message_ns());
            let row = |what: &str| format!("{head}: {what}");
            t.add(
                &row("process CPU per message (all work)"),
                "ns/msg",
                imp,
                r.cpu_per_message_ns(),
            );
            t.add(
                &row("messages sent per second"),
                "msg/s",
                imp,
                r.messages_per_sec(),
            );
            if imp == Imp::NoTimer {
                return;
            }
            t.add(&row("reap lateness p50"), "ms", imp, r.lateness(0.5));
            t.add(&row("reap lateness p99"), "ms", imp, r.lateness(0.99));
            t.add(&row("reap lateness max"), "ms", imp, r.lateness(1.0));
            t.add(&row("early reaps"), "conns", imp, r.early as f64);
            t.add(
                &row("wrong reaps (silent not reaped + active reaped)"),
                "conns",
                imp,
                (r.unreaped + r.active_reaped) as f64,
            );
        });
        let Some(base) = per_msg.remove(&Imp::NoTimer) else {
            eprintln!("  {head}: no baseline run (--imps without none): no timer CPU row");
            continue;
        };
        // Each round's timer CPU against the no-timer run of the same round:
        // the baseline moves between rounds as much as the timer CPU does.
        let mut cpu: Vec<(Imp, Vec<f64>)> = per_msg
            .into_iter()
            .map(|(imp, v)| (imp, v.iter().zip(&base).map(|(x, b)| x - b).collect()))
            .collect();
        cpu.sort_by_key(|(imp, _)| Imp::ALL.iter().position(|i| i == imp));
        let tokio = cpu
            .iter()
            .find(|(imp, _)| *imp == Imp::Tokio)
            .map(|(_, v)| median(&mut v.clone()));
        for (imp, v) in &cpu {
            let (lo, hi) = v
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
                    (l.min(x), h.max(x))
                });
            let med = median(&mut v.clone());
            let vs = tokio.map_or(String::new(), |k| format!(", {:.2}x tokio's", med / k));
            eprintln!(
                "  {head}: timer CPU of {} over {} rounds: median {med:.0} ns/msg (min {lo:.0}, max {hi:.0}){vs}",
                imp.name(),
                v.len()
            );
            for &x in v {
                t.add(&timer_cpu, "ns/msg", *imp, x);
            }
        }
    }
}
