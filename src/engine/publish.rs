//! What a wheel tells the world outside it: its counts through the
//! `metrics` facade (feature `metrics`), and its driver's lateness and life
//! as `tracing` events (feature `tracing`). Without either feature every
//! hook here is empty.
//!
//! The driver calls five hooks: [`alongside`] runs the publisher beside the
//! driver in the driver's own task (a wheel is one tokio task, with or
//! without the feature), [`lag`] each time a pass that fires timers
//! measures how late it runs, [`pass`] on each pass, [`panicked`] when a
//! pass panicked and the driver starts again, and [`stopped`] when the
//! driver stops. Nothing here is on the path that registers or cancels a timer:
//! the publisher reads the shards' counts, as `Wheel::metrics` does.
//!
//! # Publishing
//!
//! The publisher hands the recorder absolute values (a counter's
//! `absolute`, a gauge's `set`) at the driver's start, every
//! `metrics_interval` after, and once more when the driver stops, so a
//! recorder installed after the wheel was built still gets the whole
//! counts. The lag histogram gets one sample per measured pass, from the
//! driver itself, through a handle that each publication registers anew
//! (a recorder's registration hashes and looks the key up, which a pass
//! need not pay); a sample taken before the first publication registers
//! it, so none is dropped.
//!
//! Wheels that share a name share their series: each publisher adds what
//! changed since its last publication to its name's row in `facade::TOTALS` and
//! publishes the row. Two runtimes' default wheels thus make one
//! `wheel="default"` series that counts both, rather than two publishers
//! overwriting each other's values.
//!
//! On tokio's paused clock (`start_paused`, `tokio::time::pause`) a
//! publisher whose last interval changed nothing waits for the driver's
//! next pass instead of its next interval: a timer that keeps the runtime's
//! clock advancing every interval would make a paused-clock test that
//! awaits a sleep thirty years away take a billion steps of auto-advance.
//! tokio pauses clocks on current-thread runtimes only, so the publisher
//! and the driver's passes, on the same thread, never run at once. On the
//! real clock the publisher always keeps its interval.

use std::borrow::Cow;
use std::future::Future;
use std::time::Duration;

use crate::engine::config::Config;
use crate::engine::shards::Shards;

/// A wheel's name, what it reports and how.
#[derive(Debug)]
pub(crate) struct Telemetry {
    #[cfg_attr(not(any(feature = "metrics", feature = "tracing")), allow(dead_code))]
    pub(crate) name: Cow<'static, str>,
    #[cfg(feature = "metrics")]
    publisher: facade::Publisher,
    /// Passes later than this are reported (feature `tracing`).
    #[cfg(feature = "tracing")]
    stall_threshold: Duration,
    /// When the wheel last reported a stall.
    #[cfg(feature = "tracing")]
    last_stall: std::sync::Mutex<Option<tokio::time::Instant>>,
}

impl Telemetry {
    /// What the wheel of `config` reports: its counts every
    /// `metrics_interval` (feature `metrics`), and passes later than
    /// `stall_threshold` (feature `tracing`).
    pub(crate) fn new(config: &Config) -> Self {
        let name = config.name();
        Telemetry {
            #[cfg(feature = "metrics")]
            publisher: facade::Publisher::new(name.clone(), config.metrics_interval),
            name,
            #[cfg(feature = "tracing")]
            stall_threshold: config.stall_threshold,
            #[cfg(feature = "tracing")]
            last_stall: std::sync::Mutex::new(None),
        }
    }
}

// ===== the driver's hooks =====
// Each feature uses some of the hooks' arguments; without either, none.

/// Runs the driver's future `driver` and, with the `metrics` feature, the
/// publisher beside it, until `driver` ends.
#[allow(unused_variables)]
pub(crate) async fn alongside(
    telemetry: &Telemetry,
    shards: &Shards,
    driver: impl Future<Output = ()>,
) {
    #[cfg(feature = "tracing")]
    tracing::debug!(
        target: "hashwheel",
        wheel = &*telemetry.name,
        tick_ms = shards.core.clock.tick().as_millis() as u64,
        buckets = shards.core.buckets,
        shards = shards.shards.len(),
        "timer driver started"
    );
    #[cfg(feature = "metrics")]
    {
        let driver = std::pin::pin!(driver);
        // The publisher never ends: the driver's end ends both.
        let publisher = std::pin::pin!(facade::publish_every(telemetry, shards));
        futures_util::future::select(driver, publisher).await;
    }
    #[cfg(not(feature = "metrics"))]
    driver.await;
}

/// A driver pass fired `fired` timers `lag` after the end of the earliest
/// due tick among them.
#[allow(unused_variables)]
pub(crate) fn lag(telemetry: &Telemetry, shards: &Shards, lag: Duration, fired: usize) {
    #[cfg(feature = "metrics")]
    facade::record_lag(telemetry, lag);
    #[cfg(feature = "tracing")]
    check_stall(telemetry, shards, lag, fired);
}

/// The driver runs a pass: a publisher waiting for one publishes.
#[allow(unused_variables)]
pub(crate) fn pass(telemetry: &Telemetry) {
    #[cfg(feature = "metrics")]
    telemetry.publisher.wake_if_parked();
}

/// A driver pass panicked with `message`; the driver starts again.
#[allow(unused_variables)]
pub(crate) fn panicked(telemetry: &Telemetry, shards: &Shards, message: &str) {
    #[cfg(feature = "metrics")]
    facade::publish(telemetry, shards);
    #[cfg(feature = "tracing")]
    tracing::error!(
        target: "hashwheel",
        wheel = &*telemetry.name,
        panic = message,
        pending = shards.counts().pending,
        "the timer driver panicked and starts again; every timer keeps its deadline"
    );
}

/// The driver has stopped and the wheel has shut down: the final values
/// are published.
#[allow(unused_variables)]
pub(crate) fn stopped(telemetry: &Telemetry, shards: &Shards) {
    #[cfg(feature = "metrics")]
    facade::publish(telemetry, shards);
    #[cfg(feature = "tracing")]
    {
        let c = shards.counts();
        tracing::debug!(
            target: "hashwheel",
            wheel = &*telemetry.name,
            fired = c.fired,
            cancelled = c.cancelled,
            shut_down = c.drained,
            "timer driver stopped; the wheel has shut down"
        );
    }
}

/// At most one stall event per this much time, per wheel.
#[cfg(feature = "tracing")]
const STALL_EVENT_EVERY: Duration = Duration::from_secs(1);

/// Reports a pass `lag` late, if that is beyond the threshold and the
/// wheel has not reported one within the last second. Its `pending`
/// counts the timers pending when the pass began: those still pending
/// and the `fired` ones it fired.
#[cfg(feature = "tracing")]
fn check_stall(telemetry: &Telemetry, shards: &Shards, lag: Duration, fired: usize) {
    if lag <= telemetry.stall_threshold {
        return;
    }
    let now = tokio::time::Instant::now();
    {
        let mut last = telemetry
            .last_stall
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if last.is_some_and(|t| now.saturating_duration_since(t) < STALL_EVENT_EVERY) {
            return;
        }
        *last = Some(now);
    }
    tracing::warn!(
        target: "hashwheel",
        wheel = &*telemetry.name,
        lag_ms = u64::try_from(lag.as_millis()).unwrap_or(u64::MAX),
        pending = shards.counts().pending + fired,
        "timers are running late: the timer driver ran long after its tick \
         (a blocked or overloaded runtime)"
    );
}

// ===== the metrics facade =====

#[cfg(feature = "metrics")]
mod facade {
    use std::borrow::Cow;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Mutex, MutexGuard};
    use std::time::Duration;

    use metrics::{Histogram, Key, Label, Metadata, Unit};
    use tokio::sync::Notify;
    use tokio::time::Instant;

    use crate::engine::clock::later;
    use crate::engine::counts::Counts;
    use crate::engine::shards::Shards;
    use crate::engine::tokio_reliance::{self, Reset};

    /// A published count: its name, whether it is a gauge (else a
    /// counter), its description, and its value in a wheel's counts.
    type Row = (&'static str, bool, &'static str, fn(&Counts) -> u64);

    /// The counts the facade publishes, by name.
    const ROWS: [Row; 6] = [
        (
            "hashwheel_timers_pending",
            true,
            "Timers in the wheel that have not fired, been cancelled or been shut down yet.",
            |c| c.pending as u64,
        ),
        (
            "hashwheel_timers_registered_total",
            false,
            "Timers the wheel has taken: every registration of a sleep, timeout or delay, \
             again after a reset that re-registers it.",
            |c| c.registered,
        ),
        (
            "hashwheel_timers_fired_total",
            false,
            "Timers the wheel's driver has fired.",
            |c| c.fired,
        ),
        (
            "hashwheel_timers_cancelled_total",
            false,
            "Timers removed before they fired: dropped, cancelled through a handle, \
             or reset to a deadline that had already passed.",
            |c| c.cancelled,
        ),
        (
            "hashwheel_timers_refused_total",
            false,
            "Timers refused because the wheel held max_timers timers already.",
            |c| c.refused,
        ),
        (
            "hashwheel_driver_panics_total",
            false,
            "Times the timer driver panicked (a bug) and started again; timers kept their deadlines.",
            |c| c.driver_panics,
        ),
    ];

    /// The lag histogram's name.
    const LAG: &str = "hashwheel_driver_lag_seconds";

    /// The published counts of a wheel, or their sums over the wheels of
    /// one name, in the order of [`ROWS`].
    type Values = [u64; ROWS.len()];

    /// Every name's published counts: the sum over the wheels of that name
    /// of what each last published (see the module docs). A handful of rows.
    static TOTALS: Mutex<Vec<(Cow<'static, str>, Values)>> = Mutex::new(Vec::new());

    fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
        // Nothing panics while these locks are held but the recorder, which
        // leaves the counts whole.
        m.lock().unwrap_or_else(|e| e.into_inner())
    }

    static METADATA: Metadata<'static> =
        Metadata::new("hashwheel", metrics::Level::INFO, Some(module_path!()));

    /// A wheel's publisher: its keys, what it last published, and how it
    /// waits.
    #[derive(Debug)]
    pub(super) struct Publisher {
        interval: Duration,
        /// One key per row of [`ROWS`].
        keys: [Key; ROWS.len()],
        lag: Key,
        /// `lag`'s handle, from the recorder of the last publication.
        lag_handle: Mutex<Option<Histogram>>,
        /// What this wheel last added to its name's row of `TOTALS`.
        last: Mutex<Values>,
        /// Waiting for the driver's next pass (a paused clock only).
        parked: AtomicBool,
        wake: Notify,
    }

    impl Publisher {
        pub(super) fn new(name: Cow<'static, str>, interval: Duration) -> Publisher {
            let key = |metric: &'static str| {
                Key::from_parts(metric, vec![Label::new("wheel", name.clone())])
            };
            Publisher {
                interval,
                keys: ROWS.map(|(metric, ..)| key(metric)),
                lag: key(LAG),
                lag_handle: Mutex::new(None),
                last: Mutex::new(Values::default()),
                parked: AtomicBool::new(false),
                wake: Notify::new(),
            }
        }

        pub(super) fn wake_if_parked(&self) {
            if self.parked.load(Ordering::Relaxed) {
                self.wake.notify_one();
            }
        }
    }

    /// Registers the names' descriptions and units with the recorder.
    fn describe() {
        for (name, gauge, description, _) in ROWS {
            if gauge {
                metrics::describe_gauge!(name, Unit::Count, description);
            } else {
                metrics::describe_counter!(name, Unit::Count, description);
            }
        }
        metrics::describe_histogram!(
            LAG,
            Unit::Seconds,
            "How long after the end of the earliest due tick it fired each timer driver pass \
             that fired timers ran: how late a blocked or busy runtime let the timers be."
        );
    }

    /// One sample of the lag histogram. The driver's first pass can come
    /// before the first publication: its sample registers the handle.
    pub(super) fn record_lag(telemetry: &super::Telemetry, lag: Duration) {
        let p = &telemetry.publisher;
        lock(&p.lag_handle)
            .get_or_insert_with(|| {
                metrics::with_recorder(|r| r.register_histogram(&p.lag, &METADATA))
            })
            .record(lag.as_secs_f64());
    }

    /// Hands `shards`' counts, summed with those of the other wheels of its
    /// name, to the recorder. Returns whether they changed since this
    /// wheel's last publication.
    pub(super) fn publish(telemetry: &super::Telemetry, shards: &Shards) -> bool {
        let p = &telemetry.publisher;
        let counts = shards.counts();
        let now: Values = ROWS.map(|(.., value)| value(&counts));
        let mut last = lock(&p.last);
        let changed = now != *last;
        let mut totals = lock(&TOTALS);
        let i = match totals.iter().position(|(n, _)| *n == telemetry.name) {
            Some(i) => i,
            None => {
                totals.push((telemetry.name.clone(), Values::default()));
                totals.len() - 1
            }
        };
        // The sum holds this wheel's last values: it gives them back and
        // takes the new ones (a gauge may have fallen).
        let sum = &mut totals[i].1;
        for ((s, old), new) in sum.iter_mut().zip(*last).zip(now) {
            *s = *s - old + new;
        }
        *last = now;
        // Under the lock: publications of one name reach the recorder in
        // the order of their sums.
        metrics::with_recorder(|r| {
            for (((_, gauge, ..), key), v) in ROWS.iter().zip(&p.keys).zip(*sum) {
                if *gauge {
                    r.register_gauge(key, &METADATA).set(v as f64);
                } else {
                    r.register_counter(key, &METADATA).absolute(v);
                }
            }
            *lock(&p.lag_handle) = Some(r.register_histogram(&p.lag, &METADATA));
        });
        changed
    }

    /// The publisher: publishes at once, then every interval, while the
    /// driver runs. Never ends.
    pub(super) async fn publish_every(telemetry: &super::Telemetry, shards: &Shards) {
        let p = &telemetry.publisher;
        describe();
        publish(telemetry, shards);
        let mut sleep = Box::pin(tokio::time::sleep(p.interval));
        loop {
            let start = (Instant::now(), std::time::Instant::now());
            let deadline = later(start.0, p.interval);
            // As in the driver: a sleep whose tokio timer has shut down must
            // not be polled. The driver is about to stop, and `stopped`
            // publishes.
            if tokio_reliance::reset(sleep.as_mut(), deadline) == Reset::Dead {
                return std::future::pending().await;
            }
            sleep.as_mut().await;
            if !publish(telemetry, shards) && clock_is_driven(start, p.interval) {
                p.parked.store(true, Ordering::Relaxed);
                p.wake.notified().await;
                p.parked.store(false, Ordering::Relaxed);
                publish(telemetry, shards);
            }
        }
    }

    /// Whether tokio's clock has run ahead of the real one since `start`
    /// (by more than half of `interval`, which `start` was an interval
    /// ago): it is paused, and advanced by a test or by auto-advance.
    fn clock_is_driven(start: (Instant, std::time::Instant), interval: Duration) -> bool {
        start.0.elapsed() > start.1.elapsed().saturating_add(interval / 2)
    }
}
