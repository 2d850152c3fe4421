//! A heartbeat watchdog: one `select!` loop on a wheel `Sleep` and a
//! channel, resetting the sleep on every heartbeat. The sleep is `Unpin`,
//! so the loop uses `&mut watchdog` with no `tokio::pin!`. A peer beats five
//! times and goes quiet; the watchdog fires 100 ms after the last beat,
//! never sooner.
//!
//! ```text
//! cargo run --release --example select_timeout
//! ```

use std::time::Duration;

use hashwheel::Wheel;
use tokio::sync::mpsc;
use tokio::time::Instant;

#[tokio::main]
async fn main() {
    let wheel = Wheel::new();
    let (beat, mut beats) = mpsc::channel::<u32>(16);

    // A peer that beats every 20 ms five times, then goes quiet.
    tokio::spawn(async move {
        for n in 1..=5 {
            tokio::time::sleep(Duration::from_millis(20)).await;
            if beat.send(n).await.is_err() {
                return;
            }
        }
        std::future::pending::<()>().await;
    });

    let timeout = Duration::from_millis(100);
    let start = Instant::now();
    let mut watchdog = wheel.sleep(timeout);
    loop {
        tokio::select! {
            Some(n) = beats.recv() => {
                println!("{:>4} ms: heartbeat {n}", start.elapsed().as_millis());
                watchdog.reset(Instant::now() + timeout);
            }
            _ = &mut watchdog => {
                println!("{:>4} ms: no heartbeat for {timeout:?}: peer is gone", start.elapsed().as_millis());
                break;
            }
        }
    }
    assert!(
        start.elapsed() >= Duration::from_millis(200),
        "the watchdog fired early"
    );
}
