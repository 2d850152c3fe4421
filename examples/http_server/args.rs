//! The command line.

use std::time::Duration;

pub const USAGE: &str = "\
usage: http_server [--secs N] [--conns N] [--timer hashwheel|tokio] [--serve-only [--port N]]
                   [--header-timeout-ms N] [--request-timeout-ms N] [--metrics-port N] [--soak]
  --secs N                how long the load runs (default 10; with --serve-only: how long to serve,
                          default 60; with --soak: how long the soak runs, default 600)
  --conns N               keep-alive connections the load generator opens (default 2000)
  --timer hashwheel|tokio the server's timers: hashwheel (hashwheel::hyper::Timer and
                          hashwheel::tower::TimeoutLayer, the default) or tokio (hyper-util's
                          TokioTimer and tower::timeout::TimeoutLayer)
  --serve-only            no load generator: serve on 127.0.0.1:PORT for an external tool (wrk, ...)
  --port N                the port for --serve-only (default 3000; 0 picks one)
  --header-timeout-ms N   hyper's header_read_timeout, which also reaps idle keep-alive connections (default 1000)
  --request-timeout-ms N  the per-request timeout of the tower layer (default 500)
  --metrics-port N        where GET /metrics serves the timer metrics in the Prometheus text
                          format, on 127.0.0.1 (default 0: a free port, printed at the start)
  --soak                  the soak under faults (misbehaving clients, a blocked worker, the wheel
                          at its bound) with hashwheel's timers; --conns and --timer do not apply
  --late-bound-ms N       with --soak: how late past its deadline a timeout may be seen (default 5)";

/// Which timers the server uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerKind {
    Hashwheel,
    Tokio,
}

#[derive(Debug, Clone)]
pub struct Args {
    pub secs: Duration,
    pub conns: usize,
    pub timer: TimerKind,
    pub serve_only: bool,
    pub port: u16,
    pub header_timeout: Duration,
    pub request_timeout: Duration,
    pub metrics_port: u16,
    pub soak: bool,
    /// With --soak: how late a timeout may be seen, past its deadline.
    pub late_bound: Duration,
}

impl Args {
    /// Parses `std::env::args()`; `Err` carries the message to print.
    pub fn parse() -> Result<Args, String> {
        let mut secs = None;
        let mut args = Args {
            secs: Duration::ZERO,
            conns: 2000,
            timer: TimerKind::Hashwheel,
            serve_only: false,
            port: 3000,
            header_timeout: Duration::from_millis(1000),
            request_timeout: Duration::from_millis(500),
            metrics_port: 0,
            soak: false,
            late_bound: Duration::from_millis(5),
        };
        let mut it = std::env::args().skip(1);
        while let Some(flag) = it.next() {
            let mut value = || it.next().ok_or(format!("{flag} needs a value"));
            let number = |v: String| v.parse::<u64>().map_err(|e| format!("{flag} {v}: {e}"));
            match flag.as_str() {
                "--secs" => secs = Some(number(value()?)?.clamp(1, 3600)),
                "--conns" => args.conns = number(value()?)?.clamp(3, 50_000) as usize,
                "--timer" => {
                    args.timer = match value()?.as_str() {
                        "hashwheel" => TimerKind::Hashwheel,
                        "tokio" => TimerKind::Tokio,
                        t => return Err(format!("--timer {t}: expected hashwheel or tokio")),
                    }
                }
                "--serve-only" => args.serve_only = true,
                "--soak" => args.soak = true,
                "--late-bound-ms" => {
                    args.late_bound = Duration::from_millis(number(value()?)?.clamp(1, 1000))
                }
                "--port" => args.port = number(value()?)?.min(u16::MAX as u64) as u16,
                "--header-timeout-ms" => {
                    args.header_timeout = Duration::from_millis(number(value()?)?.clamp(10, 60_000))
                }
                "--request-timeout-ms" => {
                    args.request_timeout =
                        Duration::from_millis(number(value()?)?.clamp(10, 60_000))
                }
                "--metrics-port" => {
                    args.metrics_port = number(value()?)?.min(u16::MAX as u64) as u16
                }
                "-h" | "--help" => return Err(String::new()),
                f => return Err(format!("unknown option {f}")),
            }
        }
        let default = match (args.serve_only, args.soak) {
            (true, _) => 60,
            (_, true) => 600,
            _ => 10,
        };
        args.secs = Duration::from_secs(secs.unwrap_or(default));
        Ok(args)
    }
}
