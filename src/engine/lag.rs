//! The driver's lag distribution: a histogram of fixed log2 buckets, in
//! the driver's counts (`Counts::lag_buckets`), that gets a sample for each
//! pass that fires timers (how long after the end of the earliest due tick
//! among them it runs), and [`Wheel::metrics`](crate::Wheel::metrics)
//! reads.
//!
//! # Buckets
//!
//! Lags are counted in whole microseconds. Bucket 0 holds lags under 1 µs
//! (a paused clock's lag is zero); bucket `i`, for `1 <= i < LAG_BUCKETS - 1`,
//! holds lags in `[2^(i-1), 2^i)` µs; the last bucket holds everything from
//! `2^(LAG_BUCKETS - 2)` µs (about 17.9 minutes) on. The bounds are powers of
//! two so that a sample costs a leading-zero count and one atomic add, with
//! no table to search, and so that the relative error of a quantile read
//! from them is at most a factor of two, which is what an operator asking
//! "is the runtime late by microseconds, milliseconds or seconds" needs.
//! The exact maximum is kept beside them (`Counts::max_lag`).

use std::ops::Range;
use std::time::Duration;

/// The number of buckets of the lag histogram.
pub(crate) const LAG_BUCKETS: usize = 32;

/// The bucket that counts a lag of `lag`.
pub(crate) fn bucket_of(lag: Duration) -> usize {
    let micros = lag.as_micros();
    if micros == 0 {
        return 0;
    }
    // 1 µs is bucket 1, 2–3 µs bucket 2, 4–7 µs bucket 3, ...
    let bits = (u128::BITS - micros.leading_zeros()) as usize;
    bits.min(LAG_BUCKETS - 1)
}

/// The lags bucket `i` counts; the last one's end is `Duration::MAX`.
///
/// # Panics
///
/// When `i` is not below [`LAG_BUCKETS`].
#[track_caller]
pub(crate) fn bucket_range(i: usize) -> Range<Duration> {
    assert!(
        i < LAG_BUCKETS,
        "lag histogram bucket {i} out of range (there are {LAG_BUCKETS})"
    );
    let micros = |exp: usize| Duration::from_micros(1 << exp);
    let start = if i == 0 {
        Duration::ZERO
    } else {
        micros(i - 1)
    };
    let end = if i == LAG_BUCKETS - 1 {
        Duration::MAX
    } else {
        micros(i)
    };
    start..end
}

/// An upper bound of the `q`-quantile of the lags counted in `counts`:
/// the end of the bucket that holds it, or `max` when that is lower (`max`
/// is the largest lag counted, so the bound still holds). `None` when
/// nothing was counted.
pub(crate) fn quantile(counts: &[u64; LAG_BUCKETS], max: Duration, q: f64) -> Option<Duration> {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    // The rank of the sample the quantile names, from 1; at least the first.
    let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
    let mut seen = 0;
    for (i, &n) in counts.iter().enumerate() {
        seen += n;
        if seen >= rank {
            return Some(bucket_range(i).end.min(max));
        }
    }
    Some(max)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    #[test]
    fn every_lag_falls_in_the_range_of_its_bucket() {
        let lags = [
            Duration::ZERO,
            Duration::from_nanos(999),
            us(1),
            us(2),
            us(3),
            us(4),
            us(1023),
            us(1024),
            Duration::from_millis(100),
            Duration::from_secs(1),
            us(1 << 29) - Duration::from_nanos(1),
            us(1 << 30),
            Duration::from_secs(86_400),
            Duration::MAX,
        ];
        for lag in lags {
            let i = bucket_of(lag);
            let r = bucket_range(i);
            assert!(
                r.start <= lag && (lag < r.end || r.end == Duration::MAX),
                "{lag:?} in bucket {i}: {r:?}"
            );
        }
        assert_eq!(bucket_of(us(1)), 1);
        assert_eq!(bucket_of(us(3)), 2);
        assert_eq!(bucket_of(us(4)), 3);
        assert_eq!(bucket_of(Duration::MAX), LAG_BUCKETS - 1);
    }

    #[test]
    fn the_buckets_tile_the_lags_without_gaps() {
        assert_eq!(bucket_range(0).start, Duration::ZERO);
        for i in 1..LAG_BUCKETS {
            assert_eq!(bucket_range(i - 1).end, bucket_range(i).start, "{i}");
        }
        assert_eq!(bucket_range(LAG_BUCKETS - 1).end, Duration::MAX);
    }

    #[test]
    fn a_quantile_is_the_end_of_its_bucket_capped_by_the_maximum() {
        let mut c = [0; LAG_BUCKETS];
        assert_eq!(quantile(&c, Duration::ZERO, 0.5), None);
        let lags = [us(10); 98]; // bucket [8, 16) µs
        let more = [Duration::from_millis(3), Duration::from_millis(300)]; // [2048, 4096) µs, ...
        for lag in lags.into_iter().chain(more) {
            c[bucket_of(lag)] += 1;
        }
        let max = Duration::from_millis(300);
        assert_eq!(quantile(&c, max, 0.0), Some(us(16)));
        assert_eq!(quantile(&c, max, 0.5), Some(us(16)));
        assert_eq!(quantile(&c, max, 0.98), Some(us(16)));
        assert_eq!(quantile(&c, max, 0.99), Some(us(4096)));
        assert_eq!(quantile(&c, max, 1.0), Some(max), "capped by the maximum");
    }
}
