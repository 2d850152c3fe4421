//! An HTTP/1 server whose timers run on a hashwheel wheel, under a load it
//! generates itself over loopback.
//!
//! ```text
//! # with --features hyper,tower,metrics (or --all-features):
//! cargo run --release --example http_server                       # hashwheel's timers
//! cargo run --release --example http_server -- --timer tokio      # tokio's, to compare
//! cargo run --release --example http_server -- --secs 20 --conns 2000
//! cargo run --release --example http_server -- --serve-only --port 3000   # for wrk & co
//! cargo run --release --example http_server -- --metrics-port 9000   # curl 127.0.0.1:9000/metrics
//! cargo run --release --example http_server -- --soak --secs 600   # under faults, checked (soak.rs)
//! ```
//!
//! The server is hyper's HTTP/1 connection builder with
//! `.timer(hashwheel::hyper::Timer::new())` and a header-read timeout
//! (hyper arms it while a connection waits for a request head, so it also
//! reaps idle keep-alive connections), in front of a tower stack with
//! `hashwheel::tower::TimeoutLayer` (a timeout becomes a 408). `--timer
//! tokio` swaps in hyper-util's `TokioTimer` and `tower::timeout`.
//!
//! The load generator opens keep-alive connections of three kinds: chatty
//! ones sending requests back to back, idle ones that send one request and
//! must be reaped, and slow ones whose every request outlives the request
//! timeout. It prints live progress and a summary (requests per second,
//! latency, CPU per 1,000 requests, the wheel's metrics), checks that every
//! idle connection was reaped, every slow request answered 408 and no
//! chatty connection closed, and exits 0 only then.
//!
//! What an operator sees of the timers: with hashwheel's `metrics` feature
//! the wheel publishes its numbers through the `metrics` facade, and the
//! demo installs `metrics-exporter-prometheus`'s recorder and serves it at
//! `GET /metrics` on its own port (`--metrics-port`): the pending timers,
//! the registered, fired, cancelled and refused ones, and a histogram of
//! how late the timer driver ran, the first sign of a blocked runtime. The
//! live progress line shows the pending timers and the driver's lag (p99
//! over the last period) beside the request rate, and the run ends with a
//! scrape of that page.

mod args;
mod load;
mod progress;
mod prometheus;
mod report;
mod server;
mod service;
mod soak;
mod soak_clients;
mod soak_server;
mod soak_stats;
mod system;

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use args::{Args, TimerKind};
use load::{Load, Plan, Timing};
use tokio::sync::watch;
use tokio::time::Instant;

/// Open files beyond two per connection (the runtime, stdio, the listener).
const SPARE_FILES: u64 = 256;

#[tokio::main]
async fn main() -> ExitCode {
    let mut args = match Args::parse() {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("{e}");
            }
            eprintln!("{}", args::USAGE);
            return ExitCode::from(2);
        }
    };
    if args.soak {
        return soak::run(&args).await;
    }
    // Both ends of every connection live in this process.
    if !args.serve_only {
        let needed = 2 * args.conns as u64 + SPARE_FILES;
        let limit = system::ensure_open_files(needed);
        if limit < needed {
            let fit = (limit.saturating_sub(SPARE_FILES) / 2).max(3) as usize;
            println!(
                "note: the open-file limit is {limit}; running {fit} connections instead of {}",
                args.conns
            );
            args.conns = fit;
        }
    }
    let listener = match server::listen(if args.serve_only { args.port } else { 0 }) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("http_server: cannot listen on 127.0.0.1:{}: {e}", args.port);
            return ExitCode::from(2);
        }
    };
    let addr = listener.local_addr().expect("a bound listener");
    // Before the first wheel is built: the wheel publishes to the recorder
    // installed when it publishes, and its series exist from its start.
    let scrapes = prometheus::install();
    let metrics_listener =
        match tokio::net::TcpListener::bind(("127.0.0.1", args.metrics_port)).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!(
                    "http_server: cannot listen on 127.0.0.1:{}: {e}",
                    args.metrics_port
                );
                return ExitCode::from(2);
            }
        };
    let metrics_addr = metrics_listener.local_addr().expect("a bound listener");
    let (stop_metrics, metrics_stopped) = watch::channel(false);
    let metrics_page = tokio::spawn(prometheus::serve(
        metrics_listener,
        scrapes,
        metrics_stopped,
    ));
    let plan = Plan::split(args.conns);
    println!(
        "http_server: {} timers ({}), header-read timeout {:?}, request timeout {:?}, on http://{addr}",
        match args.timer {
            TimerKind::Hashwheel => "hashwheel",
            TimerKind::Tokio => "tokio",
        },
        match args.timer {
            TimerKind::Hashwheel => "hashwheel::hyper::Timer + hashwheel::tower::TimeoutLayer",
            TimerKind::Tokio => "hyper_util::rt::TokioTimer + tower::timeout::TimeoutLayer",
        },
        args.header_timeout,
        args.request_timeout,
    );
    println!("timer metrics (Prometheus text format): http://{metrics_addr}/metrics");
    if args.serve_only {
        println!(
            "serving for {:?} (or until Ctrl-C); GET / answers at once, GET /slow times out. Try:\n  wrk -t2 -c1000 -d{}s --latency http://{addr}/",
            args.secs,
            args.secs.as_secs().saturating_sub(5).max(1),
        );
    } else {
        println!(
            "load: {} keep-alive connections ({} chatty, {} idle, {} slow) for {:?}",
            plan.total(),
            plan.chatty,
            plan.idle,
            plan.slow,
            args.secs
        );
    }

    let server_stats = Arc::new(server::Stats::default());
    let (stop_server, stopped) = watch::channel(false);
    let (t, h) = (args.timer, args.header_timeout);
    let serving = match args.timer {
        TimerKind::Hashwheel => {
            let app = service::hashwheel_app(&args);
            tokio::spawn(server::run(
                listener,
                app,
                t,
                h,
                server_stats.clone(),
                stopped,
            ))
        }
        TimerKind::Tokio => {
            let app = service::tokio_app(&args);
            tokio::spawn(server::run(
                listener,
                app,
                t,
                h,
                server_stats.clone(),
                stopped,
            ))
        }
    };
    let (done, progressing) = watch::channel(false);
    let progress = progress::spawn(
        server_stats.clone(),
        args.timer == TimerKind::Hashwheel,
        progressing,
    );
    let cpu_start = system::cpu_time();
    let start = Instant::now();

    let client_stats = Arc::new(load::Stats::default());
    let mut latencies = Vec::new();
    let mut finished = true;
    let responses_in_load;
    if args.serve_only {
        tokio::select! {
            _ = tokio::time::sleep(args.secs) => {}
            _ = tokio::signal::ctrl_c() => {}
        }
        responses_in_load = server_stats.requests.load(Relaxed);
    } else {
        let stop = Arc::new(AtomicBool::new(false));
        let give_up = start + args.secs + 2 * args.header_timeout + Duration::from_secs(2);
        let timing = Timing {
            header_timeout: args.header_timeout,
            request_timeout: args.request_timeout,
            give_up,
        };
        let load = Load::start(addr, plan, timing, client_stats.clone(), stop.clone());
        tokio::time::sleep(args.secs).await;
        stop.store(true, Relaxed);
        responses_in_load = client_stats.responses.load(Relaxed);
        match tokio::time::timeout_at(give_up + Duration::from_secs(5), load.finish()).await {
            Ok(l) => latencies = l,
            Err(_) => {
                println!("the load generator did not finish in time");
                finished = false;
            }
        }
    }
    let load_time = start.elapsed().min(args.secs);
    // Let the server see the last connections close.
    let _ = stop_server.send(true);
    let _ = serving.await;
    for _ in 0..200 {
        if server_stats.open.load(Relaxed) == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let cpu = system::cpu_time() - cpu_start;
    let _ = done.send(true);
    let _ = progress.await;

    let responses = if args.serve_only {
        server_stats.requests.load(Relaxed)
    } else {
        client_stats.responses.load(Relaxed)
    };
    report::summary(
        report::Run {
            load_time,
            responses_in_load,
            responses,
            cpu,
            cpu_of: if args.serve_only {
                "the server"
            } else {
                "server and load generator"
            },
            latencies: &mut latencies,
            wheel: (args.timer == TimerKind::Hashwheel)
                .then(|| hashwheel::Wheel::current().metrics()),
        },
        &server_stats,
    );
    // What a scraper reads: the published values, at most one publishing
    // interval old.
    let scraped = prometheus::scrape(metrics_addr).await;
    let _ = stop_metrics.send(true);
    let _ = metrics_page.await;
    let published = match &scraped {
        Ok(page) => {
            println!("timer metrics scraped from http://{metrics_addr}/metrics (published each second; histogram buckets left out):");
            for line in prometheus::timer_lines(page) {
                println!("  {line}");
            }
            args.timer == TimerKind::Tokio
                || page.contains("hashwheel_timers_fired_total{wheel=\"default\"}")
        }
        Err(e) => {
            println!("scraping http://{metrics_addr}/metrics failed: {e}");
            false
        }
    };
    if args.serve_only {
        return ExitCode::SUCCESS;
    }
    let checked = report::checks(plan, &client_stats, &server_stats);
    println!(
        "  {}  the metrics page serves the wheel's series",
        if published { "ok  " } else { "FAIL" }
    );
    if checked && published && finished {
        println!("all checks hold");
        ExitCode::SUCCESS
    } else {
        println!("a check failed");
        ExitCode::FAILURE
    }
}
