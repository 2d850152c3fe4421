//! The live status line: refreshed in place on a terminal, a plain line
//! every few seconds otherwise (CI, a pipe).

use std::io::{IsTerminal, Write};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::server;

/// Prints the status until `done` turns true.
pub fn spawn(stats: Arc<server::Stats>, mut done: watch::Receiver<bool>) -> JoinHandle<()> {
    let live = std::io::stdout().is_terminal() && std::env::var_os("CI").is_none();
    let every = if live {
        Duration::from_millis(250)
    } else {
        Duration::from_secs(5)
    };
    tokio::spawn(async move {
        let start = Instant::now();
        let mut last = (start, 0);
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
            let line = format!(
                "{:5.1}s  open {:5}  {:8.0} req/s  requests {:9}  timeouts fired {:6}  reaped {:5}",
                (now - start).as_secs_f64(),
                stats.open.load(Relaxed),
                rate,
                requests,
                stats.timeouts.load(Relaxed),
                stats.reaped.load(Relaxed),
            );
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
