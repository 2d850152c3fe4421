//! The idle-reaper demo's server logic, tested in each of its three
//! patterns: on the paused clock over in-memory pipes, and over real
//! loopback sockets. `cargo test` runs them (`test = true` for this example
//! in Cargo.toml).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use crate::server::{self, client, Kind, Outcome, Reaper, Stats};
use hashwheel::Wheel;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

const IDLE: Duration = Duration::from_millis(200);
const RUN: Duration = Duration::from_millis(1000);

/// How the server reaps: the demo's three patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pattern {
    Sleep,
    Queue,
    TimeoutStream,
}

/// A connection served in `pattern` (`reaper` for `Queue`).
async fn serve<S>(
    pattern: Pattern,
    wheel: &Wheel,
    reaper: Option<Reaper>,
    stream: S,
    stats: &Stats,
) -> Outcome
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    match (pattern, reaper) {
        (Pattern::Queue, Some(r)) => r.serve(stream, stats).await,
        (Pattern::Sleep, None) => server::serve_with_sleep(wheel, stream, IDLE, stats).await,
        (Pattern::TimeoutStream, None) => {
            server::serve_with_idle_timeout(wheel, stream, IDLE, stats).await
        }
        (p, r) => panic!("{p:?} with a reaper: {}", r.is_some()),
    }
}

/// Plays every kind of client against a server on pipes; returns what each
/// client saw and what the server counted.
async fn play(pattern: Pattern) -> (Vec<(Kind, bool)>, Arc<Stats>) {
    let wheel = Wheel::builder()
        .tick(Duration::from_millis(10))
        .build()
        .unwrap();
    let stats = Arc::new(Stats::default());
    let reaper = (pattern == Pattern::Queue).then(|| Reaper::spawn(&wheel, IDLE));
    let mut clients = Vec::new();
    for kind in Kind::ALL {
        for _ in 0..5 {
            let (near, far) = tokio::io::duplex(1024);
            let (wheel, stats, reaper) = (wheel.clone(), stats.clone(), reaper.clone());
            tokio::spawn(async move { serve(pattern, &wheel, reaper, far, &stats).await });
            clients.push(tokio::spawn(async move {
                (kind, client(near, kind, RUN, IDLE).await)
            }));
        }
    }
    let mut seen = Vec::new();
    for c in clients {
        seen.push(c.await.unwrap());
    }
    (seen, stats)
}

fn check(seen: &[(Kind, bool)], stats: &Stats) {
    for &(kind, reaped) in seen {
        assert_eq!(reaped, kind.should_be_reaped(), "{kind:?} client");
    }
    assert_eq!(stats.reaped.load(Ordering::Relaxed), 10);
    assert!(stats.bytes.load(Ordering::Relaxed) > 0);
}

#[tokio::test(start_paused = true)]
async fn per_connection_sleep_reaps_exactly_the_idle() {
    let (seen, stats) = play(Pattern::Sleep).await;
    check(&seen, &stats);
}

#[tokio::test(start_paused = true)]
async fn central_delay_queue_reaps_exactly_the_idle() {
    let (seen, stats) = play(Pattern::Queue).await;
    check(&seen, &stats);
}

#[tokio::test(start_paused = true)]
async fn timeout_stream_idle_timeout_reaps_exactly_the_idle() {
    let (seen, stats) = play(Pattern::TimeoutStream).await;
    check(&seen, &stats);
}

#[tokio::test(start_paused = true)]
async fn a_silent_connection_is_reaped_at_its_idle_deadline_not_before() {
    for pattern in [Pattern::Sleep, Pattern::TimeoutStream] {
        let wheel = Wheel::builder()
            .tick(Duration::from_millis(10))
            .build()
            .unwrap();
        let stats = Stats::default();
        let (mut near, far) = tokio::io::duplex(64);
        let start = Instant::now();
        let server = async {
            let outcome = serve(pattern, &wheel, None, far, &stats).await;
            (outcome, start.elapsed())
        };
        let talk = async {
            // One exchange at 50 ms moves the deadline to 250 ms.
            tokio::time::sleep(Duration::from_millis(50)).await;
            near.write_all(b"hi").await.unwrap();
            let mut buf = [0; 2];
            near.read_exact(&mut buf).await.unwrap();
            near
        };
        let ((outcome, at), _near) = tokio::join!(server, talk);
        assert_eq!(outcome, Outcome::Reaped, "{pattern:?}");
        assert_eq!(at, Duration::from_millis(250), "{pattern:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn loopback_sockets_every_pattern() {
    use tokio::net::{TcpListener, TcpStream};
    let wheel = Wheel::builder()
        .tick(Duration::from_millis(10))
        .build()
        .unwrap();
    for pattern in [Pattern::Sleep, Pattern::Queue, Pattern::TimeoutStream] {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let stats = Arc::new(Stats::default());
        let reaper = (pattern == Pattern::Queue).then(|| Reaper::spawn(&wheel, IDLE));
        let (w, s) = (wheel.clone(), stats.clone());
        let server = tokio::spawn(async move {
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                let (w, s, r) = (w.clone(), s.clone(), reaper.clone());
                tokio::spawn(async move { serve(pattern, &w, r, stream, &s).await });
            }
        });
        let mut clients = Vec::new();
        for kind in Kind::ALL {
            for _ in 0..3 {
                let stream = TcpStream::connect(addr).await.unwrap();
                clients.push(tokio::spawn(async move {
                    (kind, client(stream, kind, RUN, IDLE).await)
                }));
            }
        }
        for c in clients {
            let (kind, reaped) = c.await.unwrap();
            assert_eq!(
                reaped,
                kind.should_be_reaped(),
                "{kind:?} client ({pattern:?})"
            );
        }
        assert_eq!(stats.reaped.load(Ordering::Relaxed), 6);
        server.abort();
    }
}
