//! The HTTP/1 server: hyper on each accepted connection, with the chosen
//! timer for its header-read timeout (which also reaps idle keep-alive
//! connections), and the app's per-request timeout.

use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::{Request, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::watch;
use tower::ServiceExt;

use crate::args::TimerKind;
use crate::service::{error_response, App};

/// What the server saw. Counters only grow, except `open`.
#[derive(Debug, Default)]
pub struct Stats {
    pub open: AtomicU64,
    pub accepted: AtomicU64,
    pub requests: AtomicU64,
    /// Requests answered 408: the per-request timeout fired.
    pub timeouts: AtomicU64,
    /// Requests answered 500.
    pub failures: AtomicU64,
    /// Connections closed by hyper's header-read timeout.
    pub reaped: AtomicU64,
    /// Connections that ended with another error.
    pub conn_errors: AtomicU64,
    pub first_error: Mutex<Option<String>>,
}

/// A listener on 127.0.0.1:`port` with a backlog for thousands of
/// connections at once.
pub fn listen(port: u16) -> std::io::Result<TcpListener> {
    let socket = TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(([127, 0, 0, 1], port).into())?;
    socket.listen(4096)
}

/// Accepts and serves connections until `stop` turns true.
pub async fn run<S: App>(
    listener: TcpListener,
    app: S,
    timer: TimerKind,
    header_timeout: Duration,
    stats: Arc<Stats>,
    stop: watch::Receiver<bool>,
) {
    accept(listener, stop, |stream| {
        stats.accepted.fetch_add(1, Relaxed);
        stats.open.fetch_add(1, Relaxed);
        let (app, stats) = (app.clone(), stats.clone());
        tokio::spawn(serve(stream, app, timer, header_timeout, stats));
    })
    .await
}

/// Hands each connection `listener` accepts to `conn` until `stop` turns
/// true.
pub async fn accept(
    listener: TcpListener,
    mut stop: watch::Receiver<bool>,
    mut conn: impl FnMut(TcpStream),
) {
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                conn(stream);
            }
            _ = stop.wait_for(|s| *s) => return,
        }
    }
}

/// Serves one connection.
async fn serve<S: App>(
    stream: TcpStream,
    app: S,
    timer: TimerKind,
    header_timeout: Duration,
    stats: Arc<Stats>,
) {
    let _ = stream.set_nodelay(true);
    let mut builder = http1::Builder::new();
    builder.header_read_timeout(header_timeout);
    match timer {
        // The one-line change: hyper's timers go to the wheel.
        TimerKind::Hashwheel => builder.timer(hashwheel::hyper::Timer::new()),
        TimerKind::Tokio => builder.timer(TokioTimer::new()),
    };
    let st = stats.clone();
    let svc = hyper::service::service_fn(move |req: Request<Incoming>| {
        let (app, stats) = (app.clone(), st.clone());
        async move {
            stats.requests.fetch_add(1, Relaxed);
            let res = match app.oneshot(req).await {
                Ok(res) => res,
                Err(err) => error_response(&err),
            };
            match res.status() {
                StatusCode::REQUEST_TIMEOUT => stats.timeouts.fetch_add(1, Relaxed),
                StatusCode::INTERNAL_SERVER_ERROR => stats.failures.fetch_add(1, Relaxed),
                _ => 0,
            };
            Ok::<_, Infallible>(res)
        }
    });
    let result = builder.serve_connection(TokioIo::new(stream), svc).await;
    stats.open.fetch_sub(1, Relaxed);
    match result {
        Ok(()) => {}
        Err(e) if e.is_timeout() => {
            stats.reaped.fetch_add(1, Relaxed);
        }
        Err(e) => {
            stats.conn_errors.fetch_add(1, Relaxed);
            let mut first = stats.first_error.lock().unwrap();
            first.get_or_insert_with(|| e.to_string());
        }
    }
}
