//! Unit tests of `Metrics`: its `Debug` output names every getter.

use super::*;

/// The public getters of `Metrics`, read from this file's source, so
/// that a getter added later is checked too.
fn getters() -> Vec<&'static str> {
    include_str!("mod.rs")
        .lines()
        .filter_map(|l| l.strip_prefix("    pub fn "))
        .filter_map(|l| l.split('(').next())
        .collect()
}

/// Counts with a value of its own in every field, the driver's lag in
/// three buckets, the last (open-ended) one among them.
fn counts() -> Counts {
    let mut lag_buckets = [0; LAG_BUCKETS];
    lag_buckets[3] = 40;
    lag_buckets[11] = 2;
    lag_buckets[LAG_BUCKETS - 1] = 1;
    Counts {
        pending: 101,
        entries: 102,
        shards: 3,
        fired: 104,
        cancelled: 105,
        registered: 106,
        drained: 987_654,
        wakeups: 108,
        waker_panics: 109,
        driver_panics: 110,
        max_lag: Duration::from_micros(1500),
        refused: 111,
        lag_buckets,
    }
}

#[test]
fn debug_names_every_getter_and_nothing_else() {
    let m = Metrics(counts());
    let pretty = format!("{m:#?}");
    // `{:#?}` puts each field on a line of its own, four spaces in.
    let fields: Vec<&str> = pretty
        .lines()
        .filter_map(|l| l.strip_prefix("    "))
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| Some(l.split_once(": ")?.0))
        .collect();
    let mut named: Vec<&str> = fields
        .iter()
        .map(|name| name.split('(').next().unwrap())
        .collect();
    named.dedup();
    // The histogram's three getters show as one map.
    let histogram = "driver_lag_histogram";
    let mut want: Vec<&str> = getters()
        .into_iter()
        .filter(|g| !g.starts_with(histogram))
        .chain([histogram])
        .collect();
    assert!(want.len() >= 13, "getters read from the source: {want:?}");
    want.sort_unstable();
    let mut sorted = named.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, want, "{pretty}");
    assert_eq!(
        named.len(),
        fields.len() - 1,
        "one field each, but the quantiles"
    );

    // Each field holds what its getter returns.
    let flat = format!("{m:?}");
    let scalar = |name: &str, v: &dyn fmt::Debug| {
        let (mid, last) = (format!(" {name}: {v:?},"), format!(" {name}: {v:?} }}"));
        assert!(
            flat.contains(&mid) || flat.ends_with(&last),
            "{name}: {flat}"
        );
    };
    scalar("num_pending", &m.num_pending());
    scalar("num_entries", &m.num_entries());
    scalar("num_shards", &m.num_shards());
    scalar("fired_count", &m.fired_count());
    scalar("cancelled_count", &m.cancelled_count());
    scalar("registered_count", &m.registered_count());
    scalar("refused_count", &m.refused_count());
    scalar("driver_wakeups_count", &m.driver_wakeups_count());
    scalar("waker_panic_count", &m.waker_panic_count());
    scalar("driver_panic_count", &m.driver_panic_count());
    scalar("max_driver_lag", &m.max_driver_lag());
    scalar("driver_lag_quantile(0.5)", &m.driver_lag_quantile(0.5));
    scalar("driver_lag_quantile(0.99)", &m.driver_lag_quantile(0.99));

    // The histogram: its non-empty buckets only, each range and count
    // as the getters give them, the last open-ended.
    let last = m.driver_lag_histogram_bucket_range(LAG_BUCKETS - 1).start;
    let want = format!(
        "{{{:?}: 40, {:?}: 2, {:?}: 1}}",
        m.driver_lag_histogram_bucket_range(3),
        m.driver_lag_histogram_bucket_range(11),
        last..,
    );
    scalar(histogram, &format_args!("{want}"));
    assert!(!flat.contains(&format!("{:?}", Duration::MAX)), "{flat}");

    // Nothing a getter does not show: not the drained entries.
    assert!(!flat.contains("drained"), "{flat}");
    assert!(!flat.contains("987654"), "{flat}");
}
