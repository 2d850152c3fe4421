//! `hashwheel::hyper::Timer`: the `hyper::rt::Timer` contract (reset in
//! place, the foreign-sleep fallback, tokio's clock), and a real hyper
//! HTTP/1 server timing its connections on the wheel.
//!
//! Everything runs on tokio's paused clock, so the times asserted are
//! exact. The servers run both over `tokio::io::duplex` (no kernel in the
//! way) and over TCP on 127.0.0.1. On loopback a write has reached the
//! peer's socket when it returns, and the paused clock only moves when
//! every task is idle after a zero-timeout poll of the I/O driver, so no
//! request is in flight when the clock jumps to the next timer.
//!
//! What hyper 1.x does with the timer on an HTTP/1 server (read from its
//! `proto/h1/conn.rs`, checked by the tests below): it has no keep-alive
//! idle timeout of its own; `header_read_timeout` is armed whenever the
//! connection waits for a request head: when it opens, and again each time
//! a response has been written and the connection is idle. It is not
//! pushed back by the bytes of a partial head, and it is not running while
//! a request is being handled. So it is at once the slow-header (slowloris)
//! timeout and the idle keep-alive timeout, and a busy connection is never
//! closed by it. On expiry hyper closes the connection without a response
//! and `serve_connection` fails with an error for which `is_timeout()`
//! holds.
#![cfg(feature = "hyper")]

mod common;

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use common::{advance, ms, settle};
use hashwheel::hyper::Timer;
use hashwheel::Wheel;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::{Bytes, Incoming};
use hyper::rt::Timer as _;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_test::{assert_pending, assert_ready, task};

type DynSleep = Pin<Box<dyn hyper::rt::Sleep>>;

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// Where the box behind a hyper sleep lives: the same address means the
/// same allocation.
fn addr(sleep: &DynSleep) -> *const () {
    let r: &dyn hyper::rt::Sleep = &**sleep;
    (r as *const dyn hyper::rt::Sleep).cast()
}

fn ours(sleep: &mut DynSleep) -> &mut hashwheel::hyper::Sleep {
    sleep
        .as_mut()
        .downcast_mut_pin::<hashwheel::hyper::Sleep>()
        .expect("a hashwheel sleep")
        .get_mut()
}

// ===== the Timer contract =====

#[tokio::test(start_paused = true)]
async fn reset_moves_its_own_sleep_in_place() {
    let wheel = Wheel::new();
    let timer = Timer::from(wheel.clone());
    let start = Instant::now();
    let mut sleep = timer.sleep(ms(100));
    let before = addr(&sleep);
    {
        let mut polled = task::spawn(&mut sleep);
        assert_pending!(polled.poll());
    }
    assert_eq!(wheel.metrics().num_pending(), 1);

    // Later: same box, same entry, nothing cancelled.
    timer.reset(&mut sleep, (start + ms(300)).into_std());
    assert_eq!(addr(&sleep), before, "no new allocation");
    assert_eq!(ours(&mut sleep).deadline(), start + ms(300));
    let m = wheel.metrics();
    assert_eq!((m.num_pending(), m.cancelled_count()), (1, 0));

    let mut polled = task::spawn(&mut sleep);
    advance(ms(100)).await;
    assert_pending!(polled.poll());
    advance(ms(199)).await;
    assert_pending!(polled.poll());
    advance(ms(1)).await;
    assert!(polled.is_woken());
    assert_ready!(polled.poll());
    drop(polled);
    assert_eq!(start.elapsed(), ms(300));

    // Earlier, and after completion: still the same box, pending again.
    timer.reset(&mut sleep, (Instant::now() + ms(50)).into_std());
    assert_eq!(addr(&sleep), before);
    let at = Instant::now();
    (&mut sleep).await;
    assert_eq!(at.elapsed(), ms(50));
    // One entry all along: never cancelled and registered anew.
    let m = wheel.metrics();
    assert_eq!((m.num_pending(), m.cancelled_count()), (0, 0));
}

#[tokio::test(start_paused = true)]
async fn reset_earlier_moves_the_entry() {
    let wheel = Wheel::new();
    let timer = Timer::from(wheel.clone());
    let start = Instant::now();
    let mut sleep = timer.sleep_until((start + secs(60)).into_std());
    let mut polled = task::spawn(&mut sleep);
    assert_pending!(polled.poll());
    drop(polled);
    timer.reset(&mut sleep, (start + ms(20)).into_std());
    sleep.as_mut().await;
    assert_eq!(start.elapsed(), ms(20));
    assert_eq!(wheel.metrics().num_pending(), 0);
}

/// A sleep some other timer made: hyper's own tokio-based one, say.
struct Foreign(Pin<Box<tokio::time::Sleep>>);

impl Future for Foreign {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.0.as_mut().poll(cx)
    }
}

impl hyper::rt::Sleep for Foreign {}

#[tokio::test(start_paused = true)]
async fn reset_of_a_foreign_sleep_replaces_it() {
    let wheel = Wheel::new();
    let timer = Timer::from(wheel.clone());
    let start = Instant::now();
    let mut sleep: DynSleep = Box::pin(Foreign(Box::pin(tokio::time::sleep(secs(10)))));
    assert!(sleep.is::<Foreign>());
    timer.reset(&mut sleep, (start + ms(40)).into_std());
    assert!(
        sleep.is::<hashwheel::hyper::Sleep>(),
        "replaced by one of ours"
    );
    assert_eq!(ours(&mut sleep).deadline(), start + ms(40));
    sleep.as_mut().await;
    assert_eq!(start.elapsed(), ms(40));
    assert_eq!(wheel.metrics().fired_count(), 1);
}

#[tokio::test(start_paused = true)]
async fn sleep_until_takes_std_instants_and_now_reads_tokios_clock() {
    let timer = Timer::from(Wheel::new());
    let start = Instant::now();
    assert_eq!(Instant::from_std(timer.now()), start);
    advance(secs(3600)).await;
    assert_eq!(timer.now(), (start + secs(3600)).into_std());

    let deadline = timer.now() + ms(250);
    let mut sleep = timer.sleep_until(deadline);
    assert_eq!(ours(&mut sleep).deadline().into_std(), deadline);
    sleep.as_mut().await;
    assert_eq!(timer.now(), deadline);

    // A deadline in the past completes on the first poll; as with tokio's
    // `Sleep`, it is not elapsed before that poll.
    let mut late = timer.sleep_until((start + secs(1)).into_std());
    assert!(!ours(&mut late).is_elapsed());
    let mut polled = task::spawn(late);
    assert_ready!(polled.poll());
}

#[tokio::test(start_paused = true)]
async fn new_uses_the_runtimes_default_wheel() {
    let timer = Timer::new();
    assert!(timer.wheel().is_none());
    let before = Wheel::current().metrics().fired_count();
    let start = Instant::now();
    timer.sleep(ms(30)).await;
    assert_eq!(start.elapsed(), ms(30));
    assert_eq!(Wheel::current().metrics().fired_count(), before + 1);
    // Its own sleeps reset in place too.
    let mut sleep = timer.sleep(secs(1));
    let before = addr(&sleep);
    timer.reset(&mut sleep, timer.now() + ms(5));
    assert_eq!(addr(&sleep), before);
    sleep.await;
    assert_eq!(start.elapsed(), ms(35));
}

#[tokio::test(start_paused = true)]
async fn duration_max_lands_thirty_years_ahead_as_with_tokio() {
    let timer = Timer::from(Wheel::new());
    let mut polled = task::spawn(timer.sleep(Duration::MAX));
    assert_pending!(polled.poll());
    advance(secs(29 * 365 * 24 * 3600)).await;
    assert_pending!(polled.poll());
    advance(secs(365 * 24 * 3600)).await;
    assert_ready!(polled.poll());
}

#[test]
fn sleep_after_its_runtime_is_gone_completes() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let (mut registered, unpolled, mut of_new, timer) = rt.block_on(async {
        let timer = Timer::from(Wheel::new());
        let mut registered = timer.sleep(secs(3600));
        let mut of_new = Timer::new().sleep(secs(3600));
        // Both take their wheel entry.
        for s in [&mut registered, &mut of_new] {
            let mut polled = task::spawn(s);
            assert_pending!(polled.poll());
        }
        let unpolled = timer.sleep(secs(3600));
        (registered, unpolled, of_new, timer)
    });
    drop(rt);
    // No runtime anywhere now: the sleeps complete, nothing panics.
    futures::executor::block_on(async {
        registered.as_mut().await;
        unpolled.await;
        timer.reset(&mut of_new, std::time::Instant::now() + secs(60));
        of_new.as_mut().await;
        // A new sleep of a dead wheel completes too.
        timer.sleep(secs(60)).await;
    });
}

/// The `# Panics` of `Timer`: a message naming the call, since hyper's
/// `Timer` cannot return an error (a full wheel is no panic: see below).
#[test]
fn a_timer_panics_only_as_documented() {
    let message = |f: Box<dyn FnOnce()>| {
        let e = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_err();
        e.downcast::<String>().map(|s| *s).unwrap()
    };
    // No timer in the runtime: `Timer::new()`'s sleeps cannot be made.
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let _entered = rt.enter();
    assert_eq!(
        message(Box::new(|| drop(Timer::new().sleep(secs(1))))),
        "hashwheel::sleep: the Tokio runtime has no timer: build it with enable_time() or enable_all()"
    );
}

/// At `max_timers`, hyper's `Timer` (which has no error channel) gets a
/// sleep that is already complete, outside a runtime too, and the refusal
/// is counted; `reset` replaces it with a real sleep once there is room.
#[test]
fn a_full_wheel_gives_hyper_a_complete_sleep_and_counts_it() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let wheel = rt.block_on(async { Wheel::builder().max_timers(1).build().unwrap() });
    let timer = Timer::from(wheel.clone());
    let held = timer.sleep(secs(1));
    // A held wheel needs no runtime, full or not.
    let mut shed = task::spawn(timer.sleep(secs(1)));
    assert_ready!(shed.poll());
    let mut shed = timer.sleep_until(std::time::Instant::now() + secs(1));
    assert!(!shed.is::<hashwheel::hyper::Sleep>());
    assert_eq!(wheel.metrics().refused_count(), 2);

    drop(held);
    rt.block_on(async {
        let start = Instant::now();
        timer.reset(&mut shed, (start + secs(1)).into_std());
        assert_eq!(ours(&mut shed).deadline(), start + secs(1));
        shed.as_mut().await;
        assert_eq!(start.elapsed(), secs(1));
    });
    assert_eq!(wheel.metrics().refused_count(), 2);
}

#[test]
fn types() {
    fn check<T: Send + Sync + Unpin + std::fmt::Debug + 'static>() {}
    check::<Timer>();
    check::<hashwheel::hyper::Sleep>();
    // The box hyper gets holds a hashwheel `Sleep` and nothing else.
    assert_eq!(
        std::mem::size_of::<hashwheel::hyper::Sleep>(),
        std::mem::size_of::<hashwheel::Sleep>()
    );
    fn clone<T: Clone + Default>() {}
    clone::<Timer>();
    assert_eq!(
        format!("{:?}", Timer::new()),
        "Timer { wheel: the current runtime's default wheel }"
    );
}

// ===== a hyper HTTP/1 server =====

const HEADER_TIMEOUT: Duration = Duration::from_secs(5);

/// `GET /` answers "hello"; `GET /sleep/N` answers after N seconds.
async fn handler(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    if let Some(n) = req.uri().path().strip_prefix("/sleep/") {
        tokio::time::sleep(secs(n.parse().unwrap())).await;
    }
    Ok(Response::new(Full::new(Bytes::from_static(b"hello"))))
}

trait Io: AsyncRead + AsyncWrite + Unpin + Send + 'static {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + 'static> Io for T {}

#[derive(Debug, Clone, Copy)]
enum Transport {
    Tcp,
    Duplex,
}

/// Runs `scenario` as two paused-clock tests, `name::duplex` and
/// `name::tcp`, one over each transport.
macro_rules! over_both {
    ($name:ident, $scenario:ident) => {
        mod $name {
            #[tokio::test(start_paused = true)]
            async fn duplex() {
                super::$scenario(super::Transport::Duplex).await;
            }

            #[tokio::test(start_paused = true)]
            async fn tcp() {
                super::$scenario(super::Transport::Tcp).await;
            }
        }
    };
}

/// A connected (client, server) pair.
async fn connect(t: Transport) -> (Box<dyn Io>, Box<dyn Io>) {
    match t {
        Transport::Duplex => {
            let (c, s) = tokio::io::duplex(64 * 1024);
            (Box::new(c), Box::new(s))
        }
        Transport::Tcp => {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let (c, s) = tokio::join!(TcpStream::connect(addr), listener.accept());
            (Box::new(c.unwrap()), Box::new(s.unwrap().0))
        }
    }
}

/// Serves one connection with `timer` and the header-read timeout; the
/// task's result is `serve_connection`'s.
fn serve(io: Box<dyn Io>, timer: Timer) -> JoinHandle<Result<(), hyper::Error>> {
    tokio::spawn(
        http1::Builder::new()
            .timer(timer)
            .header_read_timeout(HEADER_TIMEOUT)
            .serve_connection(TokioIo::new(io), service_fn(handler)),
    )
}

/// Reads until the peer closes; the bytes read.
async fn read_to_close(io: &mut Box<dyn Io>) -> Vec<u8> {
    let mut got = Vec::new();
    io.read_to_end(&mut got).await.unwrap();
    got
}

/// Writes a whole request and reads its whole response ("hello").
async fn raw_request(io: &mut Box<dyn Io>, path: &str) {
    let req = format!("GET {path} HTTP/1.1\r\nHost: test\r\n\r\n");
    io.write_all(req.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.ends_with(b"\r\n\r\nhello") {
        let n = io.read(&mut buf).await.unwrap();
        assert!(
            n > 0,
            "closed mid-response: {:?}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
    }
    assert!(got.starts_with(b"HTTP/1.1 200 OK\r\n"));
}

fn assert_header_timeout(result: Result<Result<(), hyper::Error>, tokio::task::JoinError>) {
    let err = result
        .unwrap()
        .expect_err("the server timed the connection out");
    assert!(err.is_timeout(), "{err}");
}

async fn half_request_is_closed(t: Transport) {
    let wheel = Wheel::new();
    let (mut client, server) = connect(t).await;
    let start = Instant::now();
    let served = serve(server, Timer::from(wheel.clone()));
    // A head that never ends (slowloris).
    client
        .write_all(b"GET / HTTP/1.1\r\nHost: test\r\n")
        .await
        .unwrap();
    assert_eq!(read_to_close(&mut client).await, b"", "closed, no response");
    assert_eq!(start.elapsed(), HEADER_TIMEOUT);
    assert_header_timeout(served.await);
    assert_eq!(wheel.metrics().fired_count(), 1);
}

over_both!(
    header_read_timeout_closes_a_half_request,
    half_request_is_closed
);

/// What hyper does with it: the connection is timed out at once.
async fn a_full_wheel_times_the_connection_out(t: Transport) {
    let wheel = Wheel::builder().max_timers(1).build().unwrap();
    let _held = wheel.sleep(secs(60));
    let (mut client, server) = connect(t).await;
    let start = Instant::now();
    let served = serve(server, Timer::from(wheel.clone()));
    assert_eq!(read_to_close(&mut client).await, b"", "closed, no response");
    assert_eq!(start.elapsed(), Duration::ZERO);
    assert_header_timeout(served.await);
    assert_eq!(wheel.metrics().refused_count(), 1);
}

over_both!(
    a_full_wheel_sheds_the_connection,
    a_full_wheel_times_the_connection_out
);

async fn idle_keep_alive_is_reaped(t: Transport) {
    let (client, server) = connect(t).await;
    // The runtime's default wheel, through `Timer::new()`.
    let served = serve(server, Timer::new());
    let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(client))
        .await
        .unwrap();
    let conn = tokio::spawn(conn);
    for _ in 0..3 {
        let res = send
            .send_request(Request::new(Empty::<Bytes>::new()))
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(
            &res.into_body().collect().await.unwrap().to_bytes()[..],
            b"hello"
        );
    }
    // Kept alive, then idle: the header-read timer reaps it.
    let idle_from = Instant::now();
    conn.await
        .unwrap()
        .expect("a clean close, seen by the client");
    assert_eq!(idle_from.elapsed(), HEADER_TIMEOUT);
    assert_header_timeout(served.await);
}

over_both!(
    idle_keep_alive_connection_is_reaped,
    idle_keep_alive_is_reaped
);

async fn timer_runs_from_idle_not_from_first_byte(t: Transport) {
    let (mut client, server) = connect(t).await;
    let served = serve(server, Timer::from(Wheel::new()));
    raw_request(&mut client, "/").await;
    let idle_from = Instant::now();
    tokio::time::sleep(secs(3)).await;
    // Part of a second head, 3 s into the idle time: it does not push the
    // timer back.
    client.write_all(b"GET / HTTP/1.1\r\n").await.unwrap();
    assert_eq!(read_to_close(&mut client).await, b"");
    assert_eq!(idle_from.elapsed(), HEADER_TIMEOUT);
    assert_header_timeout(served.await);
}

over_both!(
    header_timer_runs_from_idle_not_from_first_byte,
    timer_runs_from_idle_not_from_first_byte
);

async fn busy_connection_is_never_closed(t: Transport) {
    let wheel = Wheel::new();
    let (mut client, server) = connect(t).await;
    let served = serve(server, Timer::from(wheel.clone()));
    let start = Instant::now();
    // A request handled for longer than the header-read timeout: the
    // timer is not running while the server works on it.
    raw_request(&mut client, "/sleep/12").await;
    assert_eq!(start.elapsed(), secs(12));
    // Requests 4.9 s apart, for well over the timeout in total.
    for _ in 0..20 {
        tokio::time::sleep(ms(4900)).await;
        raw_request(&mut client, "/").await;
    }
    assert_eq!(start.elapsed(), secs(12) + ms(20 * 4900));
    assert!(!served.is_finished());
    // Every one of those timers was dropped, none fired.
    settle().await;
    let m = wheel.metrics();
    assert_eq!((m.fired_count(), m.num_pending()), (0, 1));
    // Then silent: reaped.
    let idle_from = Instant::now();
    assert_eq!(read_to_close(&mut client).await, b"");
    assert_eq!(idle_from.elapsed(), HEADER_TIMEOUT);
    assert_header_timeout(served.await);
}

over_both!(
    busy_connection_is_never_closed,
    busy_connection_is_never_closed
);
