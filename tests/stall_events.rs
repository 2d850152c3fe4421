//! The `tracing` feature: a driver that runs late warns, at most once a
//! second; a healthy one does not; its start and stop show at `DEBUG`.
//! Events are caught by a subscriber of this test's own, the default of
//! the test's thread, where its current-thread runtime runs the driver.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hashwheel::Wheel;
use tokio_test::{assert_pending, assert_ready, task};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

mod common;
use common::{late_by, ms, settle};

// ===== a subscriber that keeps every event =====

#[derive(Debug, Clone)]
struct Caught {
    level: Level,
    target: String,
    message: String,
    fields: BTreeMap<String, String>,
}

#[derive(Clone, Default)]
struct Catcher(Arc<Mutex<Vec<Caught>>>);

impl Catcher {
    /// Catches the events of this thread until the guard drops.
    fn install() -> (Catcher, tracing::subscriber::DefaultGuard) {
        let c = Catcher::default();
        let guard = tracing::subscriber::set_default(c.clone());
        (c, guard)
    }

    /// The events of wheel `wheel` at `level`.
    fn of(&self, wheel: &str, level: Level) -> Vec<Caught> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|e| {
                e.level == level && e.fields.get("wheel").map(String::as_str) == Some(wheel)
            })
            .cloned()
            .collect()
    }

    fn warnings(&self, wheel: &str) -> Vec<Caught> {
        self.of(wheel, Level::WARN)
    }
}

struct Fields<'a>(&'a mut Caught);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.record_str(field, &format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.message = value.to_owned();
        } else {
            self.0
                .fields
                .insert(field.name().to_owned(), value.to_owned());
        }
    }
}

impl Subscriber for Catcher {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut caught = Caught {
            level: *event.metadata().level(),
            target: event.metadata().target().to_owned(),
            message: String::new(),
            fields: BTreeMap::new(),
        };
        event.record(&mut Fields(&mut caught));
        self.0.lock().unwrap().push(caught);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

fn field(e: &Caught, name: &str) -> u64 {
    e.fields[name].parse().unwrap()
}

// ===== on the paused clock =====

/// On the paused clock the driver's lag is exact: the clock jumps past its
/// planned wake-up by what `advance` overshoots.
#[tokio::test(start_paused = true)]
async fn a_late_pass_warns_with_its_lag_and_pending_timers() {
    let (caught, _guard) = Catcher::install();
    let wheel = Wheel::builder().name("late").build().unwrap();
    let mut other = task::spawn(wheel.sleep(Duration::from_secs(60)));
    assert_pending!(other.poll());
    late_by(&wheel, ms(10), ms(300)).await;

    let w = caught.warnings("late");
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].target, "hashwheel");
    assert_eq!(field(&w[0], "lag_ms"), 290);
    // Both timers, before the pass fired the late one.
    assert_eq!(field(&w[0], "pending"), 2);
    assert!(w[0].message.contains("late"), "{}", w[0].message);
}

/// Over the threshold only, and at most one warning a second.
#[tokio::test(start_paused = true)]
async fn the_threshold_and_the_rate_limit_hold() {
    let (caught, _guard) = Catcher::install();
    let wheel = Wheel::builder()
        .name("limited")
        .stall_threshold(ms(50))
        .build()
        .unwrap();
    // Exactly the threshold: no warning.
    late_by(&wheel, ms(10), ms(60)).await;
    assert_eq!(caught.warnings("limited").len(), 0);
    // Over it.
    late_by(&wheel, ms(10), ms(61)).await;
    assert_eq!(caught.warnings("limited").len(), 1);
    // Again within the second since that warning: counted, not reported.
    late_by(&wheel, ms(10), ms(200)).await;
    late_by(&wheel, ms(10), ms(500)).await;
    assert_eq!(caught.warnings("limited").len(), 1);
    assert_eq!(wheel.metrics().max_driver_lag(), ms(490));
    // A second after it: reported.
    late_by(&wheel, ms(10), ms(300)).await;
    let w = caught.warnings("limited");
    assert_eq!(w.len(), 2);
    assert_eq!(field(&w[1], "lag_ms"), 290);
}

/// A healthy runtime runs its driver on time: a thousand timers over a
/// minute under auto-advance, not one warning. The driver's start and stop
/// show at `DEBUG`.
#[tokio::test(start_paused = true)]
async fn a_healthy_runtime_does_not_warn() {
    let (caught, _guard) = Catcher::install();
    let wheel = Wheel::builder().name("healthy").build().unwrap();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..1000u64 {
        let w = wheel.clone();
        tasks.spawn(async move {
            w.sleep(ms(1 + i * 61 % 60_000)).await;
            w.sleep(ms(1 + i % 7)).await;
        });
    }
    while let Some(r) = tasks.join_next().await {
        r.unwrap();
    }
    let m = wheel.metrics();
    assert_eq!(m.fired_count(), 2000);
    assert!(
        m.driver_lag_quantile(1.0).is_some(),
        "the driver measured its lag"
    );
    assert_eq!(caught.warnings("healthy").len(), 0);

    wheel.shutdown();
    settle().await;
    let debug = caught.of("healthy", Level::DEBUG);
    let messages: Vec<&str> = debug.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(messages.len(), 2, "{debug:?}");
    assert!(messages[0].contains("started"), "{messages:?}");
    assert!(messages[1].contains("stopped"), "{messages:?}");
    assert_eq!(field(&debug[1], "fired"), 2000);
}

// ===== on the real clock =====

/// A task that blocks the runtime's only thread for 300 ms while a timer
/// is due in 10: the driver runs about 290 ms late, well past the 100 ms
/// threshold, and warns once. (Real time: a loaded machine only makes the
/// lag longer; the upper bound is wide.)
#[test]
fn a_blocked_runtime_warns() {
    let (caught, _guard) = Catcher::install();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let wheel = Wheel::builder().name("blocked").build().unwrap();
        let mut sleep = task::spawn(wheel.sleep(ms(10)));
        assert_pending!(sleep.poll());
        // The driver plans its wake-up at the sleep's tick.
        tokio::task::yield_now().await;
        tokio::task::yield_now().await;
        std::thread::sleep(ms(300));
        // The runtime runs again: its timer finds the driver's wake-up late.
        tokio::time::sleep(ms(1)).await;
        assert!(sleep.is_woken());
        assert_ready!(sleep.poll());
    });
    let w = caught.warnings("blocked");
    assert_eq!(w.len(), 1, "{w:?}");
    let lag = field(&w[0], "lag_ms");
    assert!((100..30_000).contains(&lag), "lag_ms = {lag}");
    assert_eq!(field(&w[0], "pending"), 1);
    assert_eq!(w[0].target, "hashwheel");
}

/// Runs `setup` on a real-clock runtime, then registers a 10 ms sleep and
/// blocks the runtime's only thread for 300 ms before the driver's task
/// can run: the pass that fires the sleep is the task's, about 290 ms
/// late. Returns the wheel's warnings and its largest lag. (Real time: a
/// loaded machine only makes the lag longer; the bounds are wide.)
fn blocked_before_the_task_runs(
    name: &'static str,
    setup: impl AsyncFnOnce(&Wheel),
) -> (Vec<Caught>, Duration) {
    let (caught, _guard) = Catcher::install();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let max_lag = rt.block_on(async {
        let wheel = Wheel::builder().name(name).build().unwrap();
        setup(&wheel).await;
        let mut sleep = task::spawn(wheel.sleep(ms(10)));
        assert_pending!(sleep.poll());
        std::thread::sleep(ms(300));
        tokio::time::sleep(ms(1)).await;
        assert!(sleep.is_woken());
        assert_ready!(sleep.poll());
        wheel.metrics().max_driver_lag()
    });
    (caught.warnings(name), max_lag)
}

fn assert_warned_late(w: &[Caught], max_lag: Duration) {
    assert_eq!(w.len(), 1, "{w:?}");
    let lag = field(&w[0], "lag_ms");
    assert!((200..30_000).contains(&lag), "lag_ms = {lag}");
    assert!(max_lag >= ms(200), "max_driver_lag = {max_lag:?}");
    assert_eq!(w[0].target, "hashwheel");
}

/// The runtime blocks before the driver has ever run: its first pass,
/// run by its task, warns.
#[test]
fn a_runtime_blocked_before_the_drivers_first_run_warns() {
    let (w, max_lag) = blocked_before_the_task_runs("before-first", async |_| {});
    assert_warned_late(&w, max_lag);
    assert_eq!(field(&w[0], "pending"), 1);
}

/// The driver has fired a timer and been idle since: the pass that wakes
/// it for the next one warns.
#[test]
fn a_runtime_blocked_after_an_idle_period_warns() {
    let (w, max_lag) = blocked_before_the_task_runs("after-idle", async |wheel| {
        wheel.sleep(ms(1)).await;
        tokio::time::sleep(ms(20)).await;
    });
    assert_warned_late(&w, max_lag);
}

/// The driver waits for a timer a minute away; a new earliest one wakes
/// its task, which the blocked runtime runs late: that pass warns.
#[test]
fn a_runtime_blocked_after_a_new_earliest_timer_warns() {
    let (w, max_lag) = blocked_before_the_task_runs("new-earliest", async |wheel| {
        let far = wheel.sleep(Duration::from_secs(60));
        tokio::spawn(far);
        tokio::time::sleep(ms(5)).await;
    });
    assert_warned_late(&w, max_lag);
    assert_eq!(field(&w[0], "pending"), 2);
}
