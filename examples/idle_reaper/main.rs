//! The crate's demo: a TCP echo server on 127.0.0.1 that closes idle
//! connections through a hashwheel `Wheel`, driven by clients it starts
//! itself (chatty, silent, and silent half-way). It shows the three ways a
//! tokio server reaps idle connections, side by side: a `Sleep` per
//! connection reset on every read, one reaper task with a `DelayQueue`,
//! and the socket wrapped in a `hashwheel::io::TimeoutStream` whose idle
//! timeout fails the read.
//!
//! ```text
//! cargo run --release --example idle_reaper                 # all three patterns
//! cargo run --release --example idle_reaper -- --mode sleep # per-connection Sleep
//! cargo run --release --example idle_reaper -- --mode queue # central DelayQueue reaper
//! cargo run --release --example idle_reaper -- --mode io    # TimeoutStream's idle timeout
//! options: --idle-ms N (300)  --clients N per kind (50)  --secs N (3)
//! ```
//!
//! It prints a live progress line, then a summary, checks that every silent
//! client and no chatty one was reaped, and exits 0 (1 if the check fails).

mod server;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use hashwheel::Wheel;
use server::{client, Kind, Reaper, Stats};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Mode {
    Sleep,
    Queue,
    Io,
}

struct Args {
    modes: Vec<Mode>,
    idle: Duration,
    clients: usize,
    run: Duration,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        modes: vec![Mode::Sleep, Mode::Queue, Mode::Io],
        idle: Duration::from_millis(300),
        clients: 50,
        run: Duration::from_secs(3),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        let number = |v: String| v.parse::<u64>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--mode" => {
                args.modes = match value()?.as_str() {
                    "sleep" => vec![Mode::Sleep],
                    "queue" => vec![Mode::Queue],
                    "io" => vec![Mode::Io],
                    "both" => vec![Mode::Sleep, Mode::Queue],
                    "all" => vec![Mode::Sleep, Mode::Queue, Mode::Io],
                    m => {
                        return Err(format!(
                            "--mode {m}: expected sleep, queue, io, both or all"
                        ))
                    }
                }
            }
            "--idle-ms" => args.idle = Duration::from_millis(number(value()?)?.max(20)),
            "--clients" => args.clients = number(value()?)?.clamp(1, 2000) as usize,
            "--secs" => args.run = Duration::from_secs(number(value()?)?.clamp(1, 20)),
            "-h" | "--help" => return Err(String::new()),
            f => return Err(format!("unknown flag {f}")),
        }
    }
    Ok(args)
}

/// Runs the echo server for one pattern on `listener`.
async fn serve(listener: TcpListener, mode: Mode, wheel: Wheel, idle: Duration, stats: Arc<Stats>) {
    let reaper = (mode == Mode::Queue).then(|| Reaper::spawn(&wheel, idle));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let (wheel, stats, reaper) = (wheel.clone(), stats.clone(), reaper.clone());
        tokio::spawn(async move {
            match (mode, reaper) {
                (_, Some(r)) => r.serve(stream, &stats).await,
                (Mode::Io, None) => {
                    server::serve_with_idle_timeout(&wheel, stream, idle, &stats).await
                }
                (_, None) => server::serve_with_sleep(&wheel, stream, idle, &stats).await,
            };
        });
    }
}

#[tokio::main]
async fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}\nusage: idle_reaper [--mode sleep|queue|io|both|all] [--idle-ms N] [--clients N] [--secs N]");
            std::process::exit(2);
        }
    };
    // A 10 ms tick is plenty for idle timeouts of a few hundred ms.
    let wheel = Wheel::builder()
        .tick(Duration::from_millis(10))
        .build()
        .expect("wheel");
    println!(
        "idle_reaper: {} clients of each kind (chatty, silent, silent half-way), idle timeout {:?}, run {:?}",
        args.clients, args.idle, args.run
    );
    let mut servers = Vec::new();
    let mut clients = JoinSet::new();
    for &mode in &args.modes {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().unwrap();
        let stats = Arc::new(Stats::default());
        println!("  {mode:?} pattern listening on {addr}");
        tokio::spawn(serve(
            listener,
            mode,
            wheel.clone(),
            args.idle,
            stats.clone(),
        ));
        servers.push((mode, stats));
        for kind in Kind::ALL {
            for _ in 0..args.clients {
                let (run, idle) = (args.run, args.idle);
                clients.spawn(async move {
                    let stream = TcpStream::connect(addr).await.expect("connect");
                    (mode, kind, client(stream, kind, run, idle).await)
                });
            }
        }
    }

    let mut tally: HashMap<(Mode, Kind), usize> = HashMap::new();
    let mut progress = tokio::time::interval(Duration::from_millis(200));
    while !clients.is_empty() {
        tokio::select! {
            done = clients.join_next() => {
                let (mode, kind, reaped) = done.unwrap().expect("client task");
                if reaped {
                    *tally.entry((mode, kind)).or_default() += 1;
                }
            }
            _ = progress.tick() => {
                let line: Vec<String> = servers.iter().map(|(mode, s)| format!(
                    "{mode:?}: open {:4} echoed {:7} B reaped {:4}",
                    s.open.load(Ordering::Relaxed),
                    s.bytes.load(Ordering::Relaxed),
                    s.reaped.load(Ordering::Relaxed),
                )).collect();
                print!("\r  {}", line.join(" | "));
                std::io::stdout().flush().ok();
            }
        }
    }
    println!("\n\nsummary (reaped / clients):");
    let mut ok = true;
    for &(mode, _) in &servers {
        for kind in Kind::ALL {
            let reaped = tally.get(&(mode, kind)).copied().unwrap_or(0);
            let want = if kind.should_be_reaped() {
                args.clients
            } else {
                0
            };
            let verdict = if reaped == want { "ok" } else { "WRONG" };
            ok &= reaped == want;
            println!(
                "  {mode:?} {kind:?}: {reaped}/{} reaped, expected {want}: {verdict}",
                args.clients
            );
        }
    }
    let m = wheel.metrics();
    println!(
        "wheel: fired {} timers, cancelled {}, {} driver wake-ups, max driver lag {:?}",
        m.fired_count(),
        m.cancelled_count(),
        m.driver_wakeups_count(),
        m.max_driver_lag()
    );
    if ok {
        println!("check passed: every silent client and no chatty one was reaped");
    } else {
        println!("check FAILED");
        std::process::exit(1);
    }
}
