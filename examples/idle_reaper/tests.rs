//! The idle-reaper demo's server logic, tested: on the paused clock over
//! in-memory pipes, and over real loopback sockets. `cargo test` runs them
//! (`test = true` for this example in Cargo.toml).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use crate::server::{self, client, Kind, Outcome, Reaper, Stats};
use hashwheel::Wheel;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

const IDLE: Duration = Duration::from_millis(200);
const RUN: Duration = Duration::from_millis(1000);

/// Plays every kind of client against a server on pipes; returns what each
/// client saw and what the server counted.
async fn play(use_queue: bool) -> (Vec<(Kind, bool)>, Arc<Stats>) {
    let wheel = Wheel::builder()
        .tick(Duration::from_millis(10))
        .build()
        .unwrap();
    let stats = Arc::new(Stats::default());
    let reaper = use_queue.then(|| Reaper::spawn(&wheel, IDLE));
    let mut clients = Vec::new();
    for kind in Kind::ALL {
        for _ in 0..5 {
            let (near, far) = tokio::io::duplex(1024);
            let (wheel, stats, reaper) = (wheel.clone(), stats.clone(), reaper.clone());
            tokio::spawn(async move {
                match reaper {
                    None => server::serve_with_sleep(&wheel, far, IDLE, &stats).await,
                    Some(r) => r.serve(far, &stats).await,
                }
            });
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
    let (seen, stats) = play(false).await;
    check(&seen, &stats);
}

#[tokio::test(start_paused = true)]
async fn central_delay_queue_reaps_exactly_the_idle() {
    let (seen, stats) = play(true).await;
    check(&seen, &stats);
}

#[tokio::test(start_paused = true)]
async fn a_silent_connection_is_reaped_at_its_idle_deadline_not_before() {
    let wheel = Wheel::builder()
        .tick(Duration::from_millis(10))
        .build()
        .unwrap();
    let stats = Stats::default();
    let (mut near, far) = tokio::io::duplex(64);
    let start = Instant::now();
    let server = async {
        let outcome = server::serve_with_sleep(&wheel, far, IDLE, &stats).await;
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
    assert_eq!(outcome, Outcome::Reaped);
    assert_eq!(at, Duration::from_millis(250));
}

#[tokio::test(start_paused = true)]
async fn loopback_sockets_both_patterns() {
    use tokio::net::{TcpListener, TcpStream};
    let wheel = Wheel::builder()
        .tick(Duration::from_millis(10))
        .build()
        .unwrap();
    for use_queue in [false, true] {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let stats = Arc::new(Stats::default());
        let reaper = use_queue.then(|| Reaper::spawn(&wheel, IDLE));
        let (w, s) = (wheel.clone(), stats.clone());
        let server = tokio::spawn(async move {
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                let (w, s, r) = (w.clone(), s.clone(), reaper.clone());
                tokio::spawn(async move {
                    match r {
                        None => server::serve_with_sleep(&w, stream, IDLE, &s).await,
                        Some(r) => r.serve(stream, &s).await,
                    }
                });
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
                "{kind:?} client (queue: {use_queue})"
            );
        }
        assert_eq!(stats.reaped.load(Ordering::Relaxed), 6);
        server.abort();
    }
}
