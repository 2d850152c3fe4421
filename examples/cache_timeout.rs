//! A lookup under a time limit where most lookups are cache hits, ready at
//! once: `lazy_timeout` leaves those alone (no clock read, no wheel entry)
//! and times the misses from their first pending poll. It prints the hits,
//! misses and timeouts, and checks that the wheel made one entry per miss
//! and none per hit.
//!
//! ```text
//! cargo run --release --example cache_timeout
//! ```

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hashwheel::Wheel;

/// A cache in front of a slow backend: a hit is ready at once, a miss waits
/// for the backend (slower than the limit for one key in ten).
async fn lookup(cache: Arc<Mutex<HashMap<u64, u64>>>, key: u64) -> u64 {
    if let Some(v) = cache.lock().unwrap().get(&key) {
        return *v;
    }
    let latency = if key % 10 == 0 { 80 } else { 5 };
    tokio::time::sleep(Duration::from_millis(latency)).await;
    cache.lock().unwrap().insert(key, key * 2);
    key * 2
}

#[tokio::main]
async fn main() {
    let wheel = Wheel::new();
    let cache = Arc::new(Mutex::new(HashMap::new()));
    let limit = Duration::from_millis(50);
    let (mut hits, mut misses, mut timed_out) = (0u32, 0u32, 0u32);
    for round in 0..5 {
        // 100 keys, 20 of them new each round: the rest are hits.
        for key in 0..100 + round * 20 {
            let hit = cache.lock().unwrap().contains_key(&key);
            match wheel.lazy_timeout(limit, lookup(cache.clone(), key)).await {
                Ok(v) => {
                    assert_eq!(v, key * 2);
                    if hit {
                        hits += 1;
                    } else {
                        misses += 1;
                    }
                }
                Err(_) => timed_out += 1,
            }
        }
    }
    let m = wheel.metrics();
    println!("{hits} hits, {misses} misses answered in time, {timed_out} timed out");
    println!(
        "wheel entries made: {} (cancelled {} + fired {}): one per miss, none per hit",
        m.cancelled_count() + m.fired_count(),
        m.cancelled_count(),
        m.fired_count()
    );
    assert_eq!(u64::from(misses), m.cancelled_count());
    assert_eq!(u64::from(timed_out), m.fired_count());
}
