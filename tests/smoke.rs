use std::time::Duration;
use tokio::time::Instant;

#[tokio::test(start_paused = true)]
async fn smoke() {
    let wheel = hashwheel::Wheel::new();
    let start = Instant::now();
    wheel.sleep(Duration::from_micros(1500)).await;
    assert_eq!(start.elapsed(), Duration::from_millis(2));
    wheel.sleep(Duration::from_secs(86400)).await;
    assert_eq!(
        start.elapsed(),
        Duration::from_millis(2) + Duration::from_secs(86400)
    );
    println!("{:?}", wheel.metrics());
    let t0 = Instant::now();
    wheel.sleep(Duration::from_secs(86400 * 365 * 5)).await;
    assert_eq!(t0.elapsed(), Duration::from_secs(86400 * 365 * 5));
    println!("{:?}", wheel.metrics());
}
