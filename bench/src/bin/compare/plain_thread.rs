//! The secondary sections: timers registered from a plain thread inside
//! `rt.enter()`, and the real-clock, paused-clock and `DelayQueue` rows
//! that run outside tasks (`bench/src/plain_thread.rs`).

use crate::harness::pending_inputs;
use crate::harness::plain_thread as w;
use crate::table::{count, rounds, Table};
use crate::{Config, Envs, NS};

/// The mark of a secondary row: timers registered from a plain thread
/// inside `rt.enter()`, not from a task (see [`PLAIN_NOTE`]).
const PLAIN: &str = "plain thread†";

pub const PLAIN_NOTE: &str =
    "† plain thread: timers registered from a thread that is not one of the \
runtime's workers, inside `rt.enter()`. That takes other paths than a server's timers: \
tokio's timer picks its shard at random for each timer registered off a worker (on a worker, \
the worker's own shard) and applies no cooperative budget, and hashwheel's shard is \
per thread too. Secondary rows, kept for comparison with earlier runs; the `task, …` and \
`server, …` rows measure timers inside tasks on the runtime's workers.";

pub fn register_cancel(cfg: &Config, e: &Envs, t: &mut Table) {
    let env = &e.plain;
    for threads in [1, 2] {
        let name = |m| format!("{PLAIN}: register + cancel a 30 s sleep, {threads} thread(s), {m}");
        let ops = cfg.register_ops;
        rounds(cfg.rounds, &w::register_cancel_imps(), |imp| {
            let (cpu, wall) = w::register_cancel(env, imp, threads, ops).per_op(ops);
            t.add(&name("CPU"), NS, imp, cpu);
            t.add(&name("wall"), NS, imp, wall);
        });
    }
}

pub fn timeout(cfg: &Config, e: &Envs, t: &mut Table) {
    let env = &e.plain;
    for (pending, what) in [(true, "pending once, then ready"), (false, "ready at once")] {
        let name = format!("{PLAIN}: timeout(30 s, f), f {what}, CPU");
        let ops = cfg.register_ops;
        rounds(cfg.rounds, &w::timeout_imps(), |imp| {
            let cpu = w::timeout(env, imp, pending, ops).per_op(ops).0;
            t.add(&name, NS, imp, cpu);
        });
    }
}

pub fn insert_cancel(cfg: &Config, e: &Envs, t: &mut Table) {
    let env = &e.plain;
    for &n in &cfg.sizes {
        let (deadlines, order) = pending_inputs(n, n as u64);
        let r = if n >= cfg.slow_size {
            cfg.slow_rounds
        } else {
            cfg.rounds
        };
        let insert = format!("{PLAIN}: insert {} pending timers (10–60 s), CPU", count(n));
        let cancel = format!("{PLAIN}: cancel those {} (random order), CPU", count(n));
        rounds(r, &w::insert_cancel_imps(), |imp| {
            let ic = w::insert_cancel(env, imp, &deadlines, &order);
            t.add(&insert, NS, imp, ic.insert.per_op(n as u64).0);
            t.add(&cancel, NS, imp, ic.cancel.per_op(n as u64).0);
        });
    }
}

pub fn memory(cfg: &Config, e: &Envs, t: &mut Table) {
    let name = format!(
        "{PLAIN}: memory per pending timer, RSS of {}",
        count(cfg.memory_n)
    );
    for imp in w::memory_imps() {
        if let Some(b) = w::bytes_per_timer(imp, cfg.memory_n) {
            t.add(&name, "B", imp, b);
        }
        t.add(
            "size_of the timer a user holds",
            "B",
            imp,
            w::size_of_timer(&e.plain.wheel, imp) as f64,
        );
    }
}

pub fn reset(cfg: &Config, e: &Envs, t: &mut Table) {
    let env = &e.plain;
    for (poll, what) in [(false, ""), (true, " and poll")] {
        let name = format!("{PLAIN}: reset a pending timer to a deadline 1 ms later{what}, CPU");
        let ops = cfg.reset_ops;
        rounds(cfg.rounds, &w::reset_imps(), |imp| {
            t.add(&name, NS, imp, w::reset(env, imp, poll, ops).per_op(ops).0);
        });
    }
}

pub fn burst(cfg: &Config, _: &Envs, t: &mut Table) {
    for &n in &cfg.bursts {
        let name = format!(
            "{} tasks on one deadline: deadline → last wake-up",
            count(n)
        );
        let early = format!("{} tasks on one deadline: early wake-ups", count(n));
        // All rounds, even at 1M tasks: the herd is noisy (it is mostly
        // tokio's scheduler and the allocator), and three rounds were not
        // enough to tell two runs of the same code apart.
        rounds(cfg.rounds, &w::burst_imps(), |imp| match w::burst(imp, n) {
            Some(b) => {
                t.add(&name, "ms", imp, b.last_wake.as_secs_f64() * 1e3);
                t.add(&early, "tasks", imp, b.early as f64);
            }
            None => eprintln!(
                "{}: {n} tasks could not register before the deadline",
                imp.name()
            ),
        });
    }
}

pub fn lateness(cfg: &Config, _: &Envs, t: &mut Table) {
    let head = format!("{} random sleeps 1–500 ms (real clock)", count(cfg.late_n));
    // All rounds: a p99 over 10k timers moves by tens of microseconds when
    // the machine stalls for a moment, whichever timer is running then.
    rounds(cfg.rounds, &w::lateness_imps(), |imp| {
        let l = w::lateness(imp, cfg.late_n);
        t.add(&format!("{head}: lateness p50"), "ms", imp, l.p50_ms);
        t.add(&format!("{head}: lateness p99"), "ms", imp, l.p99_ms);
        t.add(&format!("{head}: lateness max"), "ms", imp, l.max_ms);
        t.add(
            &format!("{head}: early fires"),
            "timers",
            imp,
            l.early as f64,
        );
    });
}

pub fn idle(cfg: &Config, _: &Envs, t: &mut Table) {
    let window = cfg.idle_window;
    for (timers, what) in [(0, "nothing pending"), (100_000, "100k timers 60 s away")] {
        let name = format!("CPU over {window:?} with {what}");
        rounds(cfg.slow_rounds, &w::idle_imps(timers), |imp| {
            let used = w::idle_cpu(imp, timers, window);
            t.add(&name, "ms", imp, used.as_secs_f64() * 1e3);
        });
    }
}

pub fn expiry_pass(cfg: &Config, _: &Envs, t: &mut Table) {
    let n = cfg.pass_n;
    let name = format!(
        "expiry pass: {} due timers, counting wakers, paused clock",
        count(n)
    );
    rounds(cfg.rounds, &w::expiry_pass_imps(), |imp| {
        t.add(
            &name,
            "ms",
            imp,
            w::expiry_pass(imp, n).wall_ns as f64 / 1e6,
        );
    });
}

pub fn delay_queue(cfg: &Config, _: &Envs, t: &mut Table) {
    let n = cfg.queue_n;
    let (deadlines, order) = pending_inputs(n, 3);
    rounds(cfg.rounds, &w::delay_queue_imps(), |imp| {
        let q = w::delay_queue(imp, &deadlines, &order);
        let ops = [
            ("insert", q.insert),
            ("reset", q.reset),
            ("remove", q.remove),
            ("drain", q.drain),
        ];
        for (op, s) in ops {
            let name = format!("DelayQueue {op}, {} entries, CPU", count(n));
            t.add(&name, NS, imp, s.per_op(n as u64).0);
        }
    });
}
