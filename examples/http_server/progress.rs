//! The live status line: refreshed in place on a terminal, a plain line
//! every few seconds otherwise (CI, a pipe). With hashwheel's timers it
//! shows the wheel's pending timers and how late its driver ran: the p99
//! of the driver's lag over the last period, from `Wheel::metrics`.

use std::io::{IsTerminal, Write};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::server;

/// Prints the status until `done` turns true; the wheel's numbers with
/// `wheel`.
pub fn spawn(
    stats: Arc<server::Stats>,
    wheel: bool,
    mut done: watch::Receiver<bool>,
) -> JoinHandle<()> {
    let live = std::io::stdout().is_terminal() && std::env::var_os("CI").is_none();
    let every = if live {
        Duration::from_millis(250)
    } else {
        Duration::from_secs(5)
    };
    tokio::spawn(async move {
        let start = Instant::now();
        let mut last = (start, 0);
        let mut last_wheel = wheel.then(|| hashwheel::Wheel::current().metrics());
        let mut tick = tokio::time::interval_at(start + every, every);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = done.wait_for(|d| *d) => break,
            }
            let now = Instant::now();
            let requests = stats.requests.load(Relaxed);
            let rate = (requests - last.1) as f64 / (now - last.0).as_secs_f64();
            last = (now, requests);
            let mut line = format!(
                "{:5.1}s  open {:5}  {:8.0} req/s  requests {:9}  timeouts fired {:6}  reaped {:5}",
                (now - start).as_secs_f64(),
                stats.open.load(Relaxed),
                rate,
                requests,
                stats.timeouts.load(Relaxed),
                stats.reaped.load(Relaxed),
            );
            if let Some(before) = &mut last_wheel {
                let m = hashwheel::Wheel::current().metrics();
                let lag = match lag_p99(&m, before) {
                    Some(d) => format!("<{:.1} ms", d.as_secs_f64() * 1e3),
                    None => "-".to_owned(),
                };
                line += &format!("  timers {:6}  driver lag p99 {lag}", m.num_pending());
                *before = m;
            }
            let mut out = std::io::stdout().lock();
            if live {
                let _ = write!(out, "\r\x1b[2K{line}");
            } else {
                let _ = writeln!(out, "  {line}");
            }
            let _ = out.flush();
        }
        if live {
            println!();
        }
    })
}

/// An upper bound of the 99th percentile of the driver's lag over the
/// passes it ran between the snapshots `before` and `now`: the end of the
/// histogram bucket that holds it. `None` when it ran none.
fn lag_p99(now: &hashwheel::Metrics, before: &hashwheel::Metrics) -> Option<Duration> {
    let buckets = now.driver_lag_histogram_num_buckets();
    let counts: Vec<u64> = (0..buckets)
        .map(|i| {
            now.driver_lag_histogram_bucket_count(i) - before.driver_lag_histogram_bucket_count(i)
        })
        .collect();
    let total: u64 = counts.iter().sum();
    let rank = (total as f64 * 0.99).ceil() as u64;
    let mut seen = 0;
    counts.iter().enumerate().find_map(|(i, &n)| {
        seen += n;
        (total > 0 && seen >= rank).then(|| now.driver_lag_histogram_bucket_range(i).end)
    })
}
