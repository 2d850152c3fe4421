//! The `metrics` feature: what a wheel hands the `metrics` facade, seen by
//! a recorder of this test's own, on tokio's paused clock.
//!
//! The recorder is global, shared by the tests of this binary, which run
//! at once: each test names its wheels apart.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use hashwheel::Wheel;
use metrics::{
    Counter, Gauge, GaugeFn, Histogram, HistogramFn, Key, KeyName, Metadata, Recorder,
    SharedString, Unit,
};
use tokio_test::{assert_pending, assert_ready, task};

mod common;
use common::{advance, late_by, ms, settle};

// ===== a recorder that keeps what it is given =====

/// A gauge that also counts how often it was set.
#[derive(Debug, Default)]
struct GaugeCell {
    bits: AtomicU64,
    sets: AtomicU64,
}

impl GaugeFn for GaugeCell {
    fn increment(&self, _: f64) {
        unreachable!("the wheel sets its gauge")
    }
    fn decrement(&self, _: f64) {
        unreachable!("the wheel sets its gauge")
    }
    fn set(&self, value: f64) {
        self.bits.store(value.to_bits(), Ordering::SeqCst);
        self.sets.fetch_add(1, Ordering::SeqCst);
    }
}

#[derive(Debug, Default)]
struct Samples(Mutex<Vec<f64>>);

impl HistogramFn for Samples {
    fn record(&self, value: f64) {
        self.0.lock().unwrap().push(value);
    }
}

#[derive(Debug, Default)]
struct Recorded {
    /// `name{wheel=...}` → value.
    counters: Mutex<HashMap<String, Arc<AtomicU64>>>,
    gauges: Mutex<HashMap<String, Arc<GaugeCell>>>,
    histograms: Mutex<HashMap<String, Arc<Samples>>>,
    /// name → (unit, description).
    described: Mutex<HashMap<String, (Option<Unit>, String)>>,
}

fn series(key: &Key) -> String {
    let labels: Vec<String> = key
        .labels()
        .map(|l| format!("{}={}", l.key(), l.value()))
        .collect();
    format!("{}{{{}}}", key.name(), labels.join(","))
}

struct Handle(&'static Recorded);

impl Recorder for Handle {
    fn describe_counter(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.describe(key, unit, description);
    }
    fn describe_gauge(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.describe(key, unit, description);
    }
    fn describe_histogram(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.describe(key, unit, description);
    }
    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        let mut map = self.0.counters.lock().unwrap();
        Counter::from_arc(map.entry(series(key)).or_default().clone())
    }
    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        let mut map = self.0.gauges.lock().unwrap();
        Gauge::from_arc(map.entry(series(key)).or_default().clone())
    }
    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        let mut map = self.0.histograms.lock().unwrap();
        Histogram::from_arc(map.entry(series(key)).or_default().clone())
    }
}

impl Handle {
    fn describe(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        let mut map = self.0.described.lock().unwrap();
        map.insert(key.as_str().to_owned(), (unit, description.into_owned()));
    }
}

fn recorded() -> &'static Recorded {
    static RECORDED: OnceLock<&'static Recorded> = OnceLock::new();
    RECORDED.get_or_init(|| {
        let r: &'static Recorded = Box::leak(Box::default());
        metrics::set_global_recorder(Handle(r)).expect("the only recorder");
        r
    })
}

// ===== reading it =====

/// The five numbers published for the wheels named `wheel`: pending,
/// registered, fired, cancelled, refused. `None` before the first
/// publication.
fn published(wheel: &str) -> Option<[u64; 5]> {
    let r = recorded();
    let counter = |name: &str| {
        r.counters
            .lock()
            .unwrap()
            .get(&format!("{name}{{wheel={wheel}}}"))
            .map(|c| c.load(Ordering::SeqCst))
    };
    let pending = r
        .gauges
        .lock()
        .unwrap()
        .get(&format!("hashwheel_timers_pending{{wheel={wheel}}}"))
        .map(|g| f64::from_bits(g.bits.load(Ordering::SeqCst)))?;
    assert_eq!(pending.fract(), 0.0);
    Some([
        pending as u64,
        counter("hashwheel_timers_registered_total")?,
        counter("hashwheel_timers_fired_total")?,
        counter("hashwheel_timers_cancelled_total")?,
        counter("hashwheel_timers_refused_total")?,
    ])
}

/// How many times the pending gauge of `wheel` was set: one per
/// publication.
fn publications(wheel: &str) -> u64 {
    recorded()
        .gauges
        .lock()
        .unwrap()
        .get(&format!("hashwheel_timers_pending{{wheel={wheel}}}"))
        .map_or(0, |g| g.sets.load(Ordering::SeqCst))
}

fn lag_samples(wheel: &str) -> Vec<f64> {
    recorded()
        .histograms
        .lock()
        .unwrap()
        .get(&format!("hashwheel_driver_lag_seconds{{wheel={wheel}}}"))
        .map_or(Vec::new(), |h| h.0.lock().unwrap().clone())
}

/// A wheel named `name`, its driver started (and its first publication
/// made) before the caller goes on.
async fn named(name: &'static str) -> Wheel {
    recorded();
    let wheel = Wheel::builder().name(name).build().unwrap();
    settle().await;
    wheel
}

/// `advance`, then lets the driver's task run: the publisher runs in it,
/// after the timers that `advance` woke.
async fn elapse(d: Duration) {
    advance(d).await;
    settle().await;
}

// ===== the tests =====

/// Each number reaches the recorder within one interval, and not before
/// the interval is up; the final values when the wheel shuts down.
#[tokio::test(start_paused = true)]
async fn every_count_is_published_each_interval_and_at_shutdown() {
    recorded();
    let wheel = Wheel::builder()
        .name("every-count")
        .max_timers(3)
        .build()
        .unwrap();
    settle().await;
    // The driver publishes as it starts: the series exist from then on.
    assert_eq!(published("every-count"), Some([0; 5]));

    // Pending at the interval.
    let mut pending = task::spawn(wheel.sleep(Duration::from_secs(10)));
    assert_pending!(pending.poll());
    // Cancelled: dropped while pending.
    let mut dropped = task::spawn(wheel.sleep(Duration::from_secs(5)));
    assert_pending!(dropped.poll());
    drop(dropped);
    // Fired.
    let mut fired = task::spawn(wheel.delay(ms(100)));
    assert_pending!(fired.poll());
    // Refused: three timers are alive.
    let _third = wheel.sleep(ms(1));
    assert!(wheel.try_sleep(ms(1)).unwrap_err().is_at_capacity());
    elapse(ms(100)).await;
    assert_ready!(fired.poll()).unwrap();
    drop(fired);

    elapse(ms(899)).await;
    assert_eq!(
        published("every-count"),
        Some([0; 5]),
        "before the interval"
    );
    elapse(ms(1)).await;
    // pending, registered, fired, cancelled, refused
    assert_eq!(published("every-count"), Some([1, 3, 1, 1, 1]));
    let m = wheel.metrics();
    assert_eq!(
        (m.registered_count(), m.fired_count(), m.cancelled_count()),
        (3, 1, 1),
        "the same numbers as Wheel::metrics"
    );

    // The final values at shutdown, without waiting for the interval.
    let mut more = task::spawn(wheel.delay(ms(50)));
    assert_pending!(more.poll());
    assert_eq!(wheel.shutdown(), 2);
    settle().await;
    assert_eq!(published("every-count"), Some([0, 4, 1, 1, 1]));
}

/// On a paused clock, a publisher whose last interval changed nothing
/// waits for the driver's next pass, and publishes then.
#[tokio::test(start_paused = true)]
async fn on_a_paused_clock_a_quiet_publisher_waits_for_the_driver() {
    let wheel = named("quiet-paused").await;
    let mut sleep = task::spawn(wheel.sleep(Duration::from_secs(60)));
    assert_pending!(sleep.poll());
    elapse(Duration::from_secs(1)).await;
    assert_eq!(published("quiet-paused"), Some([1, 1, 0, 0, 0]));
    // An interval with no change: the publisher waits for the driver.
    elapse(Duration::from_secs(1)).await;
    let before = publications("quiet-paused");
    drop(sleep);
    elapse(Duration::from_secs(3)).await;
    assert_eq!(publications("quiet-paused"), before);
    assert_eq!(published("quiet-paused"), Some([1, 1, 0, 0, 0]));
    // A timer due before the planned wake-up makes the driver run a pass.
    let mut sooner = task::spawn(wheel.sleep(Duration::from_secs(10)));
    assert_pending!(sooner.poll());
    settle().await;
    assert_eq!(published("quiet-paused"), Some([1, 2, 0, 1, 0]));
    drop(sooner);
}

/// On the real clock the publisher keeps its interval through quiet
/// stretches, with no driver pass to wake it. (Real time: the bounds are
/// wide, for a loaded machine.)
#[test]
fn on_the_real_clock_a_change_after_quiet_intervals_is_published() {
    recorded();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let wheel = Wheel::builder()
            .name("quiet-real")
            .metrics_interval(ms(20))
            .build()
            .unwrap();
        let mut sleep = task::spawn(wheel.sleep(Duration::from_secs(600)));
        assert_pending!(sleep.poll());
        until_published("quiet-real", [1, 1, 0, 0, 0]).await;
        // Several intervals with no change.
        tokio::time::sleep(ms(200)).await;
        drop(sleep);
        until_published("quiet-real", [0, 1, 0, 1, 0]).await;
    });
}

/// A name read at run time (an owned `String`) labels the series as a
/// `&'static str` does, and the two spellings of one name share a row.
#[tokio::test(start_paused = true)]
async fn an_owned_name_labels_the_series_as_a_static_one_does() {
    recorded();
    let owned: String = ["tenant", "-", "42"].concat();
    let a = Wheel::builder().name(owned.clone()).build().unwrap();
    let b = Wheel::builder().name("tenant-42").build().unwrap();
    settle().await;
    let mut on_a = task::spawn(a.sleep(Duration::from_secs(10)));
    assert_pending!(on_a.poll());
    let mut on_b = task::spawn(b.sleep(Duration::from_secs(10)));
    assert_pending!(on_b.poll());
    elapse(Duration::from_secs(1)).await;
    assert_eq!(published(&owned), Some([2, 2, 0, 0, 0]));
}

async fn until_published(wheel: &str, want: [u64; 5]) {
    let start = std::time::Instant::now();
    while published(wheel) != Some(want) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{wheel}: {:?}, not {want:?}",
            published(wheel)
        );
        tokio::time::sleep(ms(5)).await;
    }
}

/// Wheels of one name publish their sum; one that shuts down takes its
/// pending timers out and leaves its counts in.
#[tokio::test(start_paused = true)]
async fn wheels_of_one_name_publish_their_sum() {
    let a = named("shared").await;
    let b = named("shared").await;
    let mut timers = Vec::new();
    for (wheel, n) in [(&a, 2), (&b, 3)] {
        for _ in 0..n {
            let mut t = task::spawn(wheel.sleep(Duration::from_secs(30)));
            assert_pending!(t.poll());
            timers.push(t);
        }
    }
    late_by(&b, ms(10), ms(10)).await;
    elapse(Duration::from_secs(1)).await;
    assert_eq!(published("shared"), Some([5, 6, 1, 0, 0]));
    a.shutdown();
    settle().await;
    assert_eq!(published("shared"), Some([3, 6, 1, 0, 0]));
    elapse(Duration::from_secs(1)).await;
    assert_eq!(published("shared"), Some([3, 6, 1, 0, 0]));
}

/// The driver's lag goes to the histogram as it is measured, in seconds.
#[tokio::test(start_paused = true)]
async fn the_lag_histogram_gets_each_measured_lag_in_seconds() {
    let wheel = named("lag").await;
    late_by(&wheel, ms(10), ms(10)).await;
    late_by(&wheel, ms(10), ms(250)).await;
    assert_eq!(lag_samples("lag"), vec![0.0, 0.24]);
}

/// A runtime's default wheel is named `default`; an unnamed `Builder`
/// wheel `unnamed`. (Other tests' wheels share neither name.)
#[tokio::test(start_paused = true)]
async fn default_and_unnamed_wheels_have_their_names() {
    recorded();
    hashwheel::sleep(ms(5)).await;
    let unnamed = Wheel::new();
    settle().await;
    unnamed.sleep(ms(5)).await;
    elapse(Duration::from_secs(1)).await;
    for name in ["default", "unnamed"] {
        let [_, registered, fired, ..] = published(name).unwrap();
        assert!(registered >= 1 && fired >= 1, "{name}");
    }
}

#[tokio::test(start_paused = true)]
async fn every_name_is_described_with_its_unit() {
    let _wheel = named("described").await;
    settle().await;
    let described = recorded().described.lock().unwrap().clone();
    for (name, unit) in [
        ("hashwheel_timers_pending", Unit::Count),
        ("hashwheel_timers_registered_total", Unit::Count),
        ("hashwheel_timers_fired_total", Unit::Count),
        ("hashwheel_timers_cancelled_total", Unit::Count),
        ("hashwheel_timers_refused_total", Unit::Count),
        ("hashwheel_driver_lag_seconds", Unit::Seconds),
    ] {
        let (u, text) = described.get(name).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(*u, Some(unit), "{name}");
        assert!(!text.is_empty(), "{name}");
    }
}

/// On a paused clock a quiet wheel does not hold auto-advance at every
/// interval: a sleep an hour away takes a few publications, not one a
/// second. (`tests/sleep.rs` awaits one thirty years away.)
#[tokio::test(start_paused = true)]
async fn a_quiet_wheel_lets_auto_advance_jump() {
    let wheel = named("auto-advance").await;
    wheel.sleep(Duration::from_secs(3600)).await;
    settle().await;
    let n = publications("auto-advance");
    assert!((2..=8).contains(&n), "{n} publications");
    assert_eq!(published("auto-advance"), Some([0, 1, 1, 0, 0]));
}

#[tokio::test(start_paused = true)]
async fn a_zero_interval_does_not_build() {
    let err = Wheel::builder()
        .metrics_interval(Duration::ZERO)
        .build()
        .unwrap_err();
    assert_eq!(err.to_string(), "metrics_interval must be more than zero");
}

/// A wheel whose interval is shorter publishes more often.
#[tokio::test(start_paused = true)]
async fn the_interval_is_the_builders() {
    recorded();
    let wheel = Wheel::builder()
        .name("interval")
        .metrics_interval(ms(100))
        .build()
        .unwrap();
    settle().await;
    let mut sleep = task::spawn(wheel.sleep(Duration::from_secs(60)));
    assert_pending!(sleep.poll());
    elapse(ms(99)).await;
    assert_eq!(published("interval"), Some([0; 5]));
    elapse(ms(1)).await;
    assert_eq!(published("interval"), Some([1, 1, 0, 0, 0]));
}

/// The driver's first pass comes before the wheel's first publication;
/// when it runs late, its sample still reaches the recorder.
#[tokio::test(start_paused = true)]
async fn a_lag_measured_before_the_first_publication_is_recorded() {
    recorded();
    let wheel = Wheel::builder().name("first-pass").build().unwrap();
    // The sleep registers before the driver has run; the clock then jumps
    // 300 ms, and the driver's first pass fires it 290 ms late.
    let mut sleep = tokio_test::task::spawn(wheel.sleep(ms(10)));
    tokio_test::assert_pending!(sleep.poll());
    elapse(ms(300)).await;
    tokio_test::assert_ready!(sleep.poll());
    assert_eq!(lag_samples("first-pass"), vec![0.29]);
}
