//! Every setting the builder takes, over its whole range and at each of its
//! extremes: a setting out of range is an error from `build` that names it;
//! every other one builds a wheel that runs a short timeline of timers on
//! tokio's paused clock without a panic, fires no timer before its deadline
//! nor more than a tick (and tokio's millisecond) after it, and stays alive
//! until `shutdown`.

use std::time::Duration;

use hashwheel::Wheel;
use proptest::prelude::*;
use tokio::time::Instant;
use tokio_test::task;

mod common;
use common::{proptest_cases, settle};

/// Where tokio and the wheel put a deadline that overflows an `Instant`.
const FAR_FUTURE: Duration = Duration::from_secs(86_400 * 365 * 30);
/// The longest tick the builder takes.
const MAX_TICK: Duration = Duration::from_secs(3600);
/// The most slots, and the most buckets of all shards together.
const MAX_BUCKETS: usize = 1 << 20;
const MAX_SHARDS: usize = 1024;

#[derive(Debug, Clone)]
struct Settings {
    tick: Option<Duration>,
    slots: Option<usize>,
    max_timers: Option<usize>,
    shards: Option<usize>,
    name: Option<&'static str>,
    metrics_interval: Option<Duration>,
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    stall_threshold: Option<Duration>,
    as_default: bool,
}

/// The shards of a wheel that is not told how many: four per available
/// core, a power of two, at most 64 (the builder's documented default).
fn default_shards() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores * 4).next_power_of_two().min(64)
}

/// The first setting out of range, by the name `build`'s error gives it.
fn out_of_range(s: &Settings) -> Option<&'static str> {
    if let Some(t) = s.tick {
        if t < Duration::from_millis(1) || t > MAX_TICK {
            return Some("tick");
        }
    }
    if let Some(n) = s.slots {
        if n == 0 || n > MAX_BUCKETS {
            return Some("buckets");
        }
    }
    if s.max_timers == Some(0) {
        return Some("max_timers");
    }
    if cfg!(feature = "metrics") && s.metrics_interval == Some(Duration::ZERO) {
        return Some("metrics_interval");
    }
    if let Some(n) = s.shards {
        if n == 0 || n > MAX_SHARDS {
            return Some("shards");
        }
    }
    let shards = s.shards.unwrap_or_else(default_shards);
    if s.slots.unwrap_or(4096).next_power_of_two() * shards > MAX_BUCKETS {
        return Some("buckets × shards");
    }
    None
}

fn builder(s: &Settings) -> hashwheel::Builder {
    let mut b = Wheel::builder();
    if let Some(t) = s.tick {
        b = b.tick(t);
    }
    if let Some(n) = s.slots {
        b = b.buckets(n);
    }
    if let Some(n) = s.max_timers {
        b = b.max_timers(n);
    }
    if let Some(n) = s.shards {
        b = b.shards(n);
    }
    if let Some(n) = s.name {
        b = b.name(n);
    }
    #[cfg(feature = "metrics")]
    if let Some(d) = s.metrics_interval {
        b = b.metrics_interval(d);
    }
    #[cfg(feature = "tracing")]
    if let Some(d) = s.stall_threshold {
        b = b.stall_threshold(d);
    }
    b
}

/// A duration from `extremes` half of the time, else one up to `max`.
fn weighted(extremes: Vec<Duration>, max: Duration) -> impl Strategy<Value = Duration> {
    let max_ns = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX);
    prop_oneof![
        prop::sample::select(extremes),
        (0..=max_ns).prop_map(Duration::from_nanos),
    ]
}

fn sizes(extremes: Vec<usize>, max: usize) -> impl Strategy<Value = usize> {
    prop_oneof![prop::sample::select(extremes), 1..=max]
}

fn settings() -> impl Strategy<Value = Settings> {
    let ns = Duration::from_nanos;
    let ms = Duration::from_millis;
    let years = |y: u64| Duration::from_secs(y * 365 * 86_400);
    let tick = weighted(
        vec![
            Duration::ZERO,
            ns(1),
            ms(1) - ns(1),
            ms(1),
            ms(1) + ns(1),
            ms(7),
            Duration::from_secs(1),
            MAX_TICK - ns(1),
            MAX_TICK,
            MAX_TICK + ns(1),
            ns(1 << 62),
            Duration::MAX,
        ],
        MAX_TICK * 2,
    );
    let slots = sizes(
        vec![
            0,
            1,
            2,
            3,
            64,
            4096,
            MAX_BUCKETS / 1024,
            MAX_BUCKETS - 1,
            MAX_BUCKETS,
            MAX_BUCKETS + 1,
            usize::MAX,
        ],
        1 << 16,
    );
    let max_timers = sizes(vec![0, 1, 2, usize::MAX], 1 << 20);
    let shards = sizes(
        vec![0, 1, 2, 3, 64, MAX_SHARDS, MAX_SHARDS + 1, usize::MAX],
        64,
    );
    let names = prop::sample::select(vec![
        "",
        "x",
        "default",
        "unnamed",
        "a wheel with a long name, spaces and ünïcödé",
    ]);
    let durations = || {
        weighted(
            vec![Duration::ZERO, ns(1), ms(1), years(100), Duration::MAX],
            Duration::from_secs(5),
        )
    };
    (
        prop::option::of(tick),
        prop::option::of(slots),
        prop::option::of(max_timers),
        prop::option::of(shards),
        prop::option::of(names),
        prop::option::of(durations()),
        prop::option::of(durations()),
        any::<bool>(),
    )
        .prop_map(
            |(tick, slots, max_timers, shards, name, metrics_interval, stall_threshold, d)| {
                Settings {
                    tick,
                    slots,
                    max_timers,
                    shards,
                    name,
                    metrics_interval,
                    stall_threshold,
                    as_default: d,
                }
            },
        )
}

/// Timers' durations, then the steps the paused clock takes.
fn timeline() -> impl Strategy<Value = (Vec<Duration>, Vec<Duration>)> {
    let ns = Duration::from_nanos;
    let ms = Duration::from_millis;
    let years = |y: u64| Duration::from_secs(y * 365 * 86_400);
    let timer = weighted(
        vec![
            Duration::ZERO,
            ns(1),
            ms(1) - ns(1),
            ms(1),
            ms(2),
            FAR_FUTURE,
            years(100),
            Duration::MAX,
        ],
        Duration::from_secs(3),
    );
    let step = weighted(
        vec![Duration::ZERO, ns(1), ms(1), ms(10), years(31)],
        Duration::from_secs(3),
    );
    (
        prop::collection::vec(timer, 0..6),
        prop::collection::vec(step, 1..6),
    )
}

/// Builds the wheel on a paused current-thread runtime and runs the
/// timeline on it.
fn check(s: Settings, timers: Vec<Duration>, steps: Vec<Duration>) -> Result<(), TestCaseError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    rt.block_on(async move {
        let built = if s.as_default {
            builder(&s).build_default()
        } else {
            builder(&s).build()
        };
        if let Some(setting) = out_of_range(&s) {
            let err = match built {
                Ok(_) => return Err(TestCaseError::fail(format!("{setting} accepted: {s:?}"))),
                Err(e) => e.to_string(),
            };
            prop_assert!(err.starts_with(setting), "{setting}: {err}");
            return Ok(());
        }
        let wheel = match built {
            Ok(w) => w,
            Err(e) => return Err(TestCaseError::fail(format!("{e}: {s:?}"))),
        };
        let tick = wheel.tick();
        // The driver's first pass, and the publisher's first interval.
        settle().await;
        prop_assert!(!wheel.is_shutdown(), "the driver stopped on its own");

        let mut sleeps = Vec::new();
        for d in timers {
            // Where tokio puts it: a sleep is capped at 30 years.
            let deadline = tokio::time::sleep(d).deadline();
            match wheel.try_sleep(d) {
                Ok(sleep) => sleeps.push((deadline, Some(task::spawn(sleep)))),
                Err(e) => prop_assert!(e.is_at_capacity(), "{e}"),
            }
        }
        for step in steps {
            // Poll first: a timer registers on its first poll.
            let now = Instant::now();
            for (deadline, sleep) in &mut sleeps {
                let Some(t) = sleep else { continue };
                if t.poll().is_ready() {
                    prop_assert!(now >= *deadline, "fired {:?} early", *deadline - now);
                    *sleep = None;
                } else if let Some(late) = deadline.checked_add(tick + Duration::from_millis(1)) {
                    prop_assert!(now < late, "{:?} late", now - *deadline);
                }
            }
            tokio::time::advance(step).await;
            settle().await;
            prop_assert!(!wheel.is_shutdown(), "the driver stopped on its own");
        }
        prop_assert_eq!(wheel.metrics().driver_panic_count(), 0);
        wheel.shutdown();
        prop_assert!(wheel.is_shutdown());
        for (_, sleep) in &mut sleeps {
            if let Some(t) = sleep {
                prop_assert!(t.poll().is_ready(), "a timer outlived its wheel's shutdown");
            }
        }
        Ok(())
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: proptest_cases(512),
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_accepted_setting_works_and_every_other_is_an_error(
        s in settings(),
        (timers, steps) in timeline(),
    ) {
        check(s, timers, steps)?;
    }
}

/// The reported case: a metrics interval of `Duration::MAX` builds, and
/// the wheel keeps time beside tokio's own sleep.
#[tokio::test(start_paused = true)]
async fn the_longest_metrics_interval_keeps_the_wheel_alive() {
    let b = Wheel::builder();
    #[cfg(feature = "metrics")]
    let b = b.metrics_interval(Duration::MAX);
    let wheel = b.build().unwrap();
    settle().await;
    let start = Instant::now();
    let mut ours = task::spawn(wheel.sleep(Duration::from_millis(50)));
    let mut theirs = task::spawn(tokio::time::sleep(Duration::from_millis(50)));
    tokio_test::assert_pending!(ours.poll());
    tokio_test::assert_pending!(theirs.poll());
    tokio::time::advance(Duration::from_millis(49)).await;
    tokio_test::assert_pending!(ours.poll());
    tokio_test::assert_pending!(theirs.poll());
    tokio::time::advance(Duration::from_millis(1)).await;
    tokio_test::assert_ready!(theirs.poll());
    tokio_test::assert_ready!(ours.poll());
    assert_eq!(start.elapsed(), Duration::from_millis(50));
    assert!(!wheel.is_shutdown());
}

/// An interval whose period overflows an `Instant` ticks 30 years after its
/// last tick, as tokio's does, even when that tick was taken late: the
/// clamp adds to the tick, not to the moment it was seen.
#[tokio::test(start_paused = true)]
async fn an_interval_of_duration_max_ticks_30_years_after_its_last_tick() {
    let wheel = Wheel::new();
    let start = Instant::now();
    let mut ours = wheel.interval(Duration::MAX);
    let mut theirs = tokio::time::interval(Duration::MAX);
    // The first tick, taken 3 ms late (under the 5 ms that count as missed).
    tokio::time::advance(Duration::from_millis(3)).await;
    assert_eq!(ours.tick().await, start);
    assert_eq!(theirs.tick().await, start);
    assert_eq!(ours.tick().await, start + FAR_FUTURE);
    assert_eq!(start.elapsed(), FAR_FUTURE);
    assert_eq!(theirs.tick().await, start + FAR_FUTURE);
    assert_eq!(start.elapsed(), FAR_FUTURE);
}
