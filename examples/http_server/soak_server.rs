//! The soak's server: the demo's hyper HTTP/1 server, on one listener per
//! kind of client, with every timeout it enforces measured where it fires.
//!
//! Three timers end a connection or a request, all on the runtime's
//! default wheel:
//!
//! - hyper's header-read timeout (slowloris heads, idle keep-alive
//!   connections), through [`ProbeTimer`], a `hyper::rt::Timer` that notes
//!   each deadline hyper asks for;
//! - the per-request timeout (`hashwheel::try_timeout` around the handler);
//! - a write timeout (`hashwheel::io::TimeoutStream`) for clients that
//!   never read their response: hyper has none of its own. A [`Recorder`]
//!   under it notes when the writes began to wait.
//!
//! Each uses the `try_` form of the wheel, so a timer refused at the
//! wheel's `max_timers` bound sheds the request (503) or the connection
//! and is counted, instead of panicking. hyper's `half_close` is on: a
//! request whose client has shut down its writes (or gone) still runs to
//! its answer or its timeout, so the request timer is what ends it.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant as StdInstant};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::soak_stats::{End, Listener, Stats, Timer};

/// Timeouts the server enforces, and the size of `GET /big`.
#[derive(Debug, Clone)]
pub struct Config {
    pub header: Duration,
    pub request: Duration,
    pub write: Duration,
    pub big: Bytes,
}

/// Accepts and serves connections of `kind` until `stop` turns true.
pub async fn run(
    listener: TcpListener,
    kind: Listener,
    config: Arc<Config>,
    stats: Arc<Stats>,
    stop: watch::Receiver<bool>,
) {
    crate::server::accept(listener, stop, |stream| {
        stats.open.fetch_add(1, Relaxed);
        tokio::spawn(serve(stream, kind, config.clone(), stats.clone()));
    })
    .await
}

async fn serve(stream: TcpStream, kind: Listener, config: Arc<Config>, stats: Arc<Stats>) {
    let _ = stream.set_nodelay(true);
    let probe = Arc::new(Probe::default());
    let mut io = hashwheel::io::TimeoutStream::new(Recorder {
        inner: stream,
        probe: probe.clone(),
    });
    io.set_write_timeout(Some(config.write));
    let mut builder = http1::Builder::new();
    builder
        .timer(ProbeTimer {
            probe: probe.clone(),
        })
        .header_read_timeout(config.header)
        .half_close(true);
    let (cfg, st) = (config.clone(), stats.clone());
    let svc = hyper::service::service_fn(move |req: Request<Incoming>| {
        let (cfg, st) = (cfg.clone(), st.clone());
        async move { Ok::<_, Infallible>(answer(req, kind, &cfg, &st).await) }
    });
    let result = builder.serve_connection(TokioIo::new(io), svc).await;
    let at = Instant::now();
    stats.open.fetch_sub(1, Relaxed);
    let state = *probe.state.lock().unwrap();
    let end = match result {
        Ok(()) => End::Closed,
        Err(e) if e.is_timeout() && state.shed => End::Shed,
        Err(e) if e.is_timeout() => match state.header {
            Some(deadline) => {
                stats.timed_out(kind, Timer::Header, Instant::from_std(deadline), at);
                End::TimedOut
            }
            None => End::Other(format!("{e}, with no header deadline")),
        },
        Err(e) => match io_error(&e) {
            Some(io) if io.kind() == io::ErrorKind::TimedOut => match state.stall {
                Some(start) => {
                    stats.timed_out(kind, Timer::Write, start + config.write, at);
                    End::TimedOut
                }
                None => End::Other(format!("{e}, with no write waiting")),
            },
            Some(io) if at_capacity(io) => End::Shed,
            Some(_) => End::Fault,
            None if e.is_incomplete_message() => End::Fault,
            None => End::Other(e.to_string()),
        },
    };
    stats.ended(kind, end);
}

/// The io error under hyper's error, if one caused it.
fn io_error(e: &hyper::Error) -> Option<&io::Error> {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<io::Error>() {
            return Some(io);
        }
        source = s.source();
    }
    None
}

fn at_capacity(e: &io::Error) -> bool {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<hashwheel::error::Error>())
        .is_some_and(|h| h.is_at_capacity())
}

/// `GET /` answers at once, `GET /slow` takes twice the request timeout,
/// `GET /big` is a body larger than the socket buffers; each within the
/// request timeout or 408.
async fn answer(
    req: Request<Incoming>,
    kind: Listener,
    cfg: &Config,
    stats: &Stats,
) -> Response<Full<Bytes>> {
    stats.requests.fetch_add(1, Relaxed);
    let path = req.uri().path().to_owned();
    let handler = async {
        match path.as_str() {
            "/slow" => match hashwheel::try_sleep(2 * cfg.request) {
                Ok(sleep) => sleep.await,
                Err(_) => return None,
            },
            "/big" => return Some(cfg.big.clone()),
            _ => {}
        }
        Some(Bytes::from_static(b"hello\n"))
    };
    let armed = Instant::now();
    let (status, body) = match hashwheel::try_timeout(cfg.request, handler) {
        Ok(timed) => match timed.await {
            Ok(Some(body)) => (StatusCode::OK, body),
            Ok(None) => (StatusCode::SERVICE_UNAVAILABLE, Bytes::new()),
            Err(_) => {
                stats.timed_out(kind, Timer::Request, armed + cfg.request, Instant::now());
                (
                    StatusCode::REQUEST_TIMEOUT,
                    Bytes::from_static(b"timed out\n"),
                )
            }
        },
        Err(_) => (StatusCode::SERVICE_UNAVAILABLE, Bytes::new()),
    };
    if status == StatusCode::SERVICE_UNAVAILABLE {
        stats.shed_requests.fetch_add(1, Relaxed);
    }
    let mut res = Response::new(Full::new(body));
    *res.status_mut() = status;
    res
}

/// What one connection's timers and writes were doing.
#[derive(Debug, Default)]
struct Probe {
    state: Mutex<ProbeState>,
}

#[derive(Debug, Default, Clone, Copy)]
struct ProbeState {
    /// The deadline of hyper's latest header-read timer.
    header: Option<StdInstant>,
    /// When the writes began to wait, while they wait.
    stall: Option<Instant>,
    /// A timer of this connection was refused at the wheel's bound.
    shed: bool,
}

/// hyper's timer on the default wheel, noting each deadline; a sleep the
/// wheel refuses at its bound is complete at once (hyper times the
/// connection out) and marks the connection shed.
#[derive(Debug, Clone)]
struct ProbeTimer {
    probe: Arc<Probe>,
}

impl ProbeTimer {
    fn arm(&self, deadline: StdInstant) -> ProbeSleep {
        let mut state = self.probe.state.lock().unwrap();
        state.header = Some(deadline);
        match hashwheel::try_sleep_until(Instant::from_std(deadline)) {
            Ok(sleep) => ProbeSleep(Some(sleep)),
            Err(_) => {
                state.shed = true;
                ProbeSleep(None)
            }
        }
    }
}

impl hyper::rt::Timer for ProbeTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(self.arm((Instant::now() + duration).into_std()))
    }

    fn sleep_until(&self, deadline: StdInstant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(self.arm(deadline))
    }

    fn now(&self) -> StdInstant {
        Instant::now().into_std()
    }

    fn reset(&self, sleep: &mut Pin<Box<dyn hyper::rt::Sleep>>, deadline: StdInstant) {
        *sleep = Box::pin(self.arm(deadline));
    }
}

/// A wheel's sleep, or nothing (complete at once) when it was refused.
struct ProbeSleep(Option<hashwheel::Sleep>);

impl Future for ProbeSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match &mut self.0 {
            Some(sleep) => Pin::new(sleep).poll(cx),
            None => Poll::Ready(()),
        }
    }
}

impl hyper::rt::Sleep for ProbeSleep {}

/// The socket under the write timeout: notes when its writes begin to
/// wait (the write timeout's countdown starts then) and when one
/// completes.
struct Recorder {
    inner: TcpStream,
    probe: Arc<Probe>,
}

impl Recorder {
    fn wrote<T>(&self, r: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        let mut state = self.probe.state.lock().unwrap();
        match r {
            Poll::Pending => {
                state.stall.get_or_insert_with(Instant::now);
            }
            Poll::Ready(_) => state.stall = None,
        }
        r
    }
}

impl AsyncRead for Recorder {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for Recorder {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.wrote(r)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.wrote(r)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
