//! Criterion benchmarks: one group per workload, each with hashwheel and
//! every peer that can run it. The workloads live in this package's
//! library, shared with `compare` (`src/bin/compare/`).
//!
//! The `task_*` groups run where a server's timers live: inside tasks on a
//! multi-thread runtime's workers (1 worker, or 2 with a task on each),
//! polled with the task's context; each asserts that it runs there. The
//! `plain_thread_*` groups register timers from a thread outside the
//! runtime inside `rt.enter()`, which takes other paths in tokio (and in
//! hashwheel): secondary, kept for comparison with earlier runs. The server
//! simulation (`compare --only server`) is not a criterion group: one
//! sample is a minute-long run against a no-timer baseline.
//!
//! What each group's "time" is:
//! - `*_cpu` groups: CPU time of the whole process per operation (every
//!   thread: callers, tokio workers, drivers, the implementation's own
//!   timer thread), not wall time.
//! - `*_wall` groups with two threads or workers: wall time per operation
//!   with both working at once (combined throughput).
//! - `expiry_burst`: from the deadline to the last task's wake-up.
//! - `expiry_pass`: wall time of the timer's own expiry pass.
//! - `lateness_p99`: the 99th percentile lateness of 10k random sleeps.
//! - `idle_cpu_2s`: CPU used over a 2 s window.
//!
//! Memory per pending timer is not a time; it is printed before the groups
//! (skip with a filter that does not match `memory`).
//!
//! `cargo bench -p hashwheel-bench --bench timers -- register` runs the groups whose name
//! contains `register`.

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use std::sync::Arc;

use hashwheel_bench as harness;

use harness::cpu::Span;
use harness::in_task as tasks;
use harness::plain_rt::Env;
use harness::plain_thread as w;
use harness::task_rt::TaskEnv;
use harness::{pending_inputs, Imp};

fn cpu(s: Span) -> Duration {
    Duration::from_nanos(s.cpu_ns)
}

fn wall(s: Span) -> Duration {
    Duration::from_nanos(s.wall_ns)
}

/// One benchmark per implementation in `imps`: `run(imp, iters)` runs
/// `iters` operations and returns their time.
fn per_op(c: &mut Criterion, group: &str, imps: &[Imp], run: impl Fn(Imp, u64) -> Duration) {
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(1));
    for &imp in imps {
        g.bench_function(imp.id(), |b| b.iter_custom(|iters| run(imp, iters)));
    }
    g.finish();
}

/// A group of slow benchmarks: ten samples of one run each.
fn slow<'a>(
    c: &'a mut Criterion,
    group: &str,
) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut g = c.benchmark_group(group);
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_secs(1));
    g
}

/// Runs `run` `iters` times and adds up what it returns.
fn repeat(iters: u64, mut run: impl FnMut() -> Duration) -> Duration {
    (0..iters).map(|_| run()).sum()
}

fn throughput(c: &mut Criterion, env: &Env) {
    per_op(
        c,
        "plain_thread_register_cancel_1thread_cpu",
        &w::register_cancel_imps(),
        |imp, n| cpu(w::register_cancel(env, imp, 1, n)),
    );
    per_op(
        c,
        "plain_thread_register_cancel_2threads_wall",
        &w::imps(Imp::has_sleeps),
        |imp, n| wall(w::register_cancel(env, imp, 2, n.max(2))),
    );
    per_op(
        c,
        "plain_thread_timeout_pending_once_cpu",
        &w::timeout_imps(),
        |imp, n| cpu(w::timeout(env, imp, true, n)),
    );
    per_op(
        c,
        "plain_thread_timeout_ready_cpu",
        &w::timeout_imps(),
        |imp, n| cpu(w::timeout(env, imp, false, n)),
    );
    per_op(
        c,
        "plain_thread_reset_later_cpu",
        &w::reset_imps(),
        |imp, n| cpu(w::reset(env, imp, false, n)),
    );
    per_op(
        c,
        "plain_thread_reset_later_and_poll_cpu",
        &w::reset_imps(),
        |imp, n| cpu(w::reset(env, imp, true, n)),
    );
}

/// The in-task groups: register + cancel, reset + poll, timeout, insert +
/// cancel (both orders) and cross-worker cancel.
fn in_tasks(c: &mut Criterion, env: &TaskEnv) {
    per_op(
        c,
        "task_register_cancel_1worker_cpu",
        &tasks::register_cancel_imps(),
        |imp, n| cpu(tasks::register_cancel(env.rt(imp, 1), imp, n)),
    );
    // Each of the two tasks does half of the operations: time per
    // operation of the pair.
    per_op(
        c,
        "task_register_cancel_2workers_cpu",
        &tasks::register_cancel_imps(),
        |imp, n| cpu(tasks::register_cancel(env.rt(imp, 2), imp, n.div_ceil(2))),
    );
    per_op(
        c,
        "task_register_cancel_2workers_wall",
        &tasks::register_cancel_imps(),
        |imp, n| wall(tasks::register_cancel(env.rt(imp, 2), imp, n.div_ceil(2))),
    );
    per_op(
        c,
        "task_reset_later_and_poll_1worker_cpu",
        &tasks::reset_poll_imps(),
        |imp, n| {
            cpu(tasks::reset_poll(
                env.rt(imp, 1),
                imp,
                Duration::from_millis(1),
                n,
            ))
        },
    );
    per_op(
        c,
        "task_reset_later_and_poll_2workers_cpu",
        &tasks::reset_poll_imps(),
        |imp, n| {
            cpu(tasks::reset_poll(
                env.rt(imp, 2),
                imp,
                Duration::from_millis(1),
                n.div_ceil(2),
            ))
        },
    );
    per_op(
        c,
        "task_timeout_pending_once_cpu",
        &tasks::timeout_imps(),
        |imp, n| cpu(tasks::timeout(env.rt(imp, 1), imp, true, n)),
    );
    per_op(
        c,
        "task_timeout_ready_cpu",
        &tasks::timeout_imps(),
        |imp, n| cpu(tasks::timeout(env.rt(imp, 1), imp, false, n)),
    );
    per_op(
        c,
        "task_lazy_timeout_pending_once_cpu",
        &tasks::lazy_timeout_imps(),
        |imp, n| cpu(tasks::lazy_timeout(env.rt(imp, 1), imp, true, n)),
    );
    per_op(
        c,
        "task_lazy_timeout_ready_cpu",
        &tasks::lazy_timeout_imps(),
        |imp, n| cpu(tasks::lazy_timeout(env.rt(imp, 1), imp, false, n)),
    );
    for n in [10_000, 100_000, 1_000_000, 4_000_000] {
        let (deadlines, random) = pending_inputs(n, n as u64);
        let (deadlines, random): (Arc<[Duration]>, Arc<[usize]>) =
            (deadlines.into(), random.into());
        let in_order: Arc<[usize]> = (0..n).collect();
        let mut g = slow(c, &format!("task_insert_cancel_{n}_cpu"));
        g.throughput(Throughput::Elements(n as u64));
        for imp in tasks::insert_cancel_imps() {
            let run = |order: &Arc<[usize]>| {
                tasks::insert_cancel(env, imp, deadlines.clone(), order.clone())
            };
            g.bench_function(BenchmarkId::new("insert", imp.id()), |b| {
                b.iter_custom(|iters| repeat(iters, || cpu(run(&random).insert)))
            });
            g.bench_function(BenchmarkId::new("cancel_insertion_order", imp.id()), |b| {
                b.iter_custom(|iters| repeat(iters, || cpu(run(&in_order).cancel)))
            });
            g.bench_function(BenchmarkId::new("cancel_random_order", imp.id()), |b| {
                b.iter_custom(|iters| repeat(iters, || cpu(run(&random).cancel)))
            });
        }
        g.finish();
    }
    let n = 100_000;
    let mut g = slow(c, &format!("task_cancel_{n}_2workers_cpu"));
    g.throughput(Throughput::Elements(n as u64));
    for imp in tasks::cancel_from_imps() {
        for (cross, what) in [(false, "same_worker"), (true, "other_worker")] {
            g.bench_function(BenchmarkId::new(what, imp.id()), |b| {
                b.iter_custom(|iters| repeat(iters, || cpu(tasks::cancel_from(env, imp, n, cross))))
            });
        }
    }
    g.finish();
}

fn pending_timers(c: &mut Criterion, env: &Env) {
    for n in [10_000, 100_000, 1_000_000, 4_000_000] {
        let (deadlines, order) = pending_inputs(n, n as u64);
        let mut g = slow(c, &format!("plain_thread_insert_cancel_{n}_cpu"));
        g.throughput(Throughput::Elements(n as u64));
        for imp in w::insert_cancel_imps() {
            let run = || w::insert_cancel(env, imp, &deadlines, &order);
            g.bench_function(BenchmarkId::new("insert", imp.id()), |b| {
                b.iter_custom(|iters| repeat(iters, || cpu(run().insert)))
            });
            g.bench_function(BenchmarkId::new("cancel", imp.id()), |b| {
                b.iter_custom(|iters| repeat(iters, || cpu(run().cancel)))
            });
        }
        g.finish();
    }
}

fn burst(c: &mut Criterion) {
    for n in [100_000, 1_000_000] {
        let mut g = slow(c, &format!("expiry_burst_{n}_tasks"));
        for imp in w::burst_imps() {
            g.bench_function(imp.id(), |b| {
                b.iter_custom(|iters| {
                    repeat(iters, || {
                        w::burst(imp, n)
                            .expect("the tasks register before the deadline")
                            .last_wake
                    })
                })
            });
        }
        g.finish();
    }
}

fn expiry_pass(c: &mut Criterion) {
    let n = 1_000_000;
    let mut g = slow(c, "expiry_pass_1000000_wall");
    g.throughput(Throughput::Elements(n as u64));
    for imp in w::expiry_pass_imps() {
        g.bench_function(imp.id(), |b| {
            b.iter_custom(|iters| repeat(iters, || wall(w::expiry_pass(imp, n))))
        });
    }
    g.finish();
}

fn delay_queue(c: &mut Criterion) {
    let n = 1_000_000;
    let (deadlines, order) = pending_inputs(n, 3);
    let mut g = slow(c, "delay_queue_1000000_cpu");
    g.throughput(Throughput::Elements(n as u64));
    type Pick = fn(&w::QueueOps) -> Span;
    let ops: [(&str, Pick); 4] = [
        ("insert", |q| q.insert),
        ("reset", |q| q.reset),
        ("remove", |q| q.remove),
        ("drain", |q| q.drain),
    ];
    for (op, pick) in ops {
        for &imp in &w::delay_queue_imps() {
            g.bench_function(BenchmarkId::new(op, imp.id()), |b| {
                b.iter_custom(|iters| {
                    repeat(iters, || {
                        cpu(pick(&w::delay_queue(imp, &deadlines, &order)))
                    })
                })
            });
        }
    }
    g.finish();
}

fn real_clock(c: &mut Criterion) {
    let mut g = slow(c, "lateness_p99_10000_sleeps");
    for imp in w::lateness_imps() {
        g.bench_function(imp.id(), |b| {
            b.iter_custom(|iters| {
                repeat(iters, || {
                    let l = w::lateness(imp, 10_000);
                    if l.early > 0 {
                        eprintln!("{}: {} early fires", imp.name(), l.early);
                    }
                    Duration::from_secs_f64(l.p99_ms.max(0.0) / 1e3)
                })
            })
        });
    }
    g.finish();
    let mut g = slow(c, "idle_cpu_2s");
    for (timers, what) in [(0, "nothing"), (100_000, "100k_far")] {
        for imp in w::idle_imps(timers) {
            g.bench_function(BenchmarkId::new(what, imp.id()), |b| {
                b.iter_custom(|iters| {
                    repeat(iters, || w::idle_cpu(imp, timers, Duration::from_secs(2)))
                })
            });
        }
    }
    g.finish();
}

/// Bytes per pending timer, each measured in a fresh child process.
fn memory() {
    let n = 1_000_000;
    println!(
        "memory: bytes per pending timer, {n} timers 10–60 s away, held in a task (RSS delta)"
    );
    for imp in tasks::memory_imps(false) {
        let rss = tasks::bytes_per_timer(imp, n, false).map_or("?".into(), |b| format!("{b:.1}"));
        println!("task_memory/{:<14} RSS {rss:>6} B", imp.id());
    }
    println!("memory: the same, each timer moved 1 s later once (an idle timer)");
    for imp in tasks::memory_imps(true) {
        let rss = tasks::bytes_per_timer(imp, n, true).map_or("?".into(), |b| format!("{b:.1}"));
        println!("task_memory_moved/{:<8} RSS {rss:>6} B", imp.id());
    }
    println!("memory: bytes per pending timer, {n} timers 10–60 s away, plain thread (RSS delta) and size_of");
    // A wheel to make hashwheel's types from, for `size_of_timer`.
    let env = Env::new();
    for imp in w::memory_imps() {
        let rss = w::bytes_per_timer(imp, n).map_or("?".into(), |b| format!("{b:.1}"));
        println!(
            "plain_thread_memory/{:<14} RSS {rss:>6} B   size_of {:>3} B",
            imp.id(),
            w::size_of_timer(&env.wheel, imp)
        );
    }
}

/// Whether the command line selects `name`: no filter, or a filter that is
/// a substring of it (as criterion's default filter matching does).
fn selected(name: &str) -> bool {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--test" || a == "--list") {
        return false;
    }
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
}

fn main() {
    w::child_main();
    if selected("memory") {
        memory();
    }
    let task_env = TaskEnv::new();
    let env = Env::new();
    let mut c = Criterion::default().configure_from_args();
    in_tasks(&mut c, &task_env);
    throughput(&mut c, &env);
    pending_timers(&mut c, &env);
    burst(&mut c);
    real_clock(&mut c);
    // On tokio's paused clock: last, because once a clock has been paused
    // every `tokio::time::Instant::now()` in the process (with `test-util`,
    // which the dev-dependencies enable) takes a slower path.
    expiry_pass(&mut c);
    delay_queue(&mut c);
    c.final_summary();
}
