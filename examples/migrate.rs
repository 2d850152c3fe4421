//! Moving a tokio program onto the wheel: this program was written against
//! `tokio::time`, and only its `use` line changed.
//!
//! ```text
//! cargo run --release --example migrate
//! ```
//!
//! It runs a heartbeat on an `interval`, calls a flaky backend under a
//! `timeout` with `sleep` between retries, and keeps an idle deadline in a
//! `select!` loop (its `tokio::pin!` still compiles, and is no longer
//! needed); then it prints what the runtime's default wheel did and exits
//! 0. What else can change in a larger program (type names, helpers taking
//! `Pin<&mut Sleep>`, shutdown) is in `docs/migration.md`.

// Before: use tokio::time::{interval, sleep, timeout, Duration, Instant, MissedTickBehavior};
use hashwheel::{interval, sleep, timeout, Duration, Instant, MissedTickBehavior};
use tokio::sync::mpsc;

/// A backend that answers in 40 ms on the first two calls, then in 5 ms.
async fn backend(call: u32) -> &'static str {
    let took = if call < 2 { 40 } else { 5 };
    sleep(Duration::from_millis(took)).await;
    "pong"
}

/// Calls the backend with a 20 ms deadline, backing off between attempts.
async fn call_with_retries() -> (u32, &'static str) {
    let mut backoff = Duration::from_millis(5);
    for attempt in 0.. {
        match timeout(Duration::from_millis(20), backend(attempt)).await {
            Ok(reply) => return (attempt + 1, reply),
            Err(elapsed) => {
                println!(
                    "  attempt {}: {elapsed}, retrying in {backoff:?}",
                    attempt + 1
                );
                sleep(backoff).await;
                backoff *= 2;
            }
        }
    }
    unreachable!()
}

/// Counts heartbeats every 10 ms until `stop` is dropped.
async fn heartbeat(mut stop: mpsc::Receiver<()>) -> u32 {
    let mut ticks = interval(Duration::from_millis(10));
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut beats = 0;
    loop {
        tokio::select! {
            _ = ticks.tick() => beats += 1,
            _ = stop.recv() => return beats,
        }
    }
}

/// Reads messages until none has come for 30 ms.
async fn until_idle(mut rx: mpsc::Receiver<u32>) -> u32 {
    let idle = Duration::from_millis(30);
    let deadline = sleep(idle);
    // Needed with tokio, whose Sleep is !Unpin; harmless (and unneeded)
    // with hashwheel's, which is Unpin.
    tokio::pin!(deadline);
    let mut got = 0;
    loop {
        tokio::select! {
            biased;
            Some(_) = rx.recv() => {
                got += 1;
                deadline.as_mut().reset(Instant::now() + idle);
            }
            _ = &mut deadline => return got,
        }
    }
}

#[tokio::main]
async fn main() {
    let start = Instant::now();
    let (stop_tx, stop_rx) = mpsc::channel(1);
    let beats = tokio::spawn(heartbeat(stop_rx));

    println!("calling a flaky backend with a 20 ms timeout:");
    let (attempts, reply) = call_with_retries().await;
    println!("  {reply} after {attempts} attempts");
    assert_eq!((attempts, reply), (3, "pong"));

    println!("reading until 30 ms of silence:");
    let (tx, rx) = mpsc::channel(8);
    let reader = tokio::spawn(until_idle(rx));
    for i in 0..5 {
        tx.send(i).await.unwrap();
        sleep(Duration::from_millis(10)).await;
    }
    let got = reader.await.unwrap();
    println!("  {got} messages, then idle");
    assert!(got >= 1);
    drop(tx);

    drop(stop_tx);
    let beats = beats.await.unwrap();
    let elapsed = start.elapsed();
    println!("heartbeat: {beats} beats in {elapsed:.0?}");
    assert!(beats >= 2, "a 10 ms heartbeat over {elapsed:?}");

    let m = hashwheel::Wheel::current().metrics();
    println!(
        "the runtime's default wheel: {} timers fired, {} cancelled, {} pending, {} driver wake-ups",
        m.fired_count(),
        m.cancelled_count(),
        m.num_pending(),
        m.driver_wakeups_count()
    );
    assert!(m.fired_count() > 0);
}
