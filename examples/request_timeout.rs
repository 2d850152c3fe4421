//! Request deadlines, Netty style: each of 200 requests arms a `Delay`, and
//! the task that receives the response calls it off through its
//! `TimeoutHandle` (`Clone + Send + Sync`) when the response comes first.
//! It prints how many requests were answered in time and what the wheel
//! fired and cancelled.
//!
//! ```text
//! cargo run --release --example request_timeout
//! ```

use std::time::Duration;

use hashwheel::Wheel;
use tokio::sync::oneshot;

/// A pretend backend: answers request `i` after a latency that depends on it.
fn latency(i: u64) -> Duration {
    Duration::from_millis((i * 37) % 100)
}

#[tokio::main]
async fn main() {
    let wheel = Wheel::builder()
        .tick(Duration::from_millis(5))
        .build()
        .expect("wheel");
    let deadline = Duration::from_millis(60);
    let mut requests = Vec::new();
    for i in 0..200u64 {
        let delay = wheel.delay(deadline);
        let handle = delay.handle();
        let (respond, response) = oneshot::channel();
        // The response side: when the answer arrives, call the timeout off.
        tokio::spawn(async move {
            tokio::time::sleep(latency(i)).await;
            if handle.cancel() {
                let _ = respond.send(format!("response {i}"));
            }
        });
        // The request side: waits for its deadline or its cancellation.
        requests.push(tokio::spawn(async move {
            match delay.await {
                Ok(()) => Err(i),
                Err(e) if e.is_cancelled() => Ok(response.await.expect("sent before cancel")),
                Err(e) => panic!("wheel failed: {e}"),
            }
        }));
    }
    let (mut answered, mut timed_out) = (0, 0);
    for r in requests {
        match r.await.unwrap() {
            Ok(_) => answered += 1,
            Err(_) => timed_out += 1,
        }
    }
    println!("{answered} requests answered in time, {timed_out} timed out after {deadline:?}");
    let m = wheel.metrics();
    println!(
        "wheel: {} timers fired, {} cancelled, {} pending",
        m.fired_count(),
        m.cancelled_count(),
        m.num_pending()
    );
    assert_eq!(answered + timed_out, 200);
    assert_eq!(m.num_pending(), 0);
}
