//! History rollups: `hisRead` with an `interval` and a `fold` folds the samples of the range
//! into buckets (a buildwire extension; the standard `hisRead` has no rollup, and Haxall
//! only offers one through its Axon `hisRollup()` function).
//!
//! Decisions written down here, so that every backend gives the same answer:
//! - Buckets are `interval` long and start at the range's start (`hisStart`), not at the
//!   epoch or at local midnight: a `15min` rollup of `2024-01-01` starts at that midnight.
//!   Intervals have a fixed length (a `1day` bucket is 86,400 s, also across a daylight
//!   saving change); months and years are refused for that reason.
//! - A bucket without samples is left out (no null rows).
//! - `avg`, `min`, `max` and `sum` fold the numeric samples (Numbers, and Bools as 1 and 0,
//!   as the PostgreSQL `num` column stores them); NaN samples and other kinds are skipped.
//!   The result carries the point's `unit`.
//! - `count` counts every sample; `first` and `last` return the first and last sample of
//!   the bucket as stored.
//!
//! The in-memory and Redis backends fold in the server with [`fold_samples`]; PostgreSQL
//! folds in SQL with TimescaleDB's `time_bucket` when the extension is loaded and with
//! `date_bin` otherwise.
//!
//! A request's `interval` and `fold` cells become a [`Rollup`] with `Rollup::parse`,
//! defined next to the `hisRead` op in `ops/`.
//!
//! ```
//! use buildwire_haystack::store::{HisFold, Rollup};
//! use buildwire_haystack::value::Value;
//!
//! let rollup = Rollup::parse(Some(&Value::number_with_unit(15.0, "min")), Some(&Value::Str("avg".into())))
//!     .unwrap()
//!     .unwrap();
//! assert_eq!((rollup.interval_us, rollup.fold), (900_000_000, HisFold::Avg));
//! ```

use crate::filter::instant_of;
use crate::value::{DateTime, Value};

use super::history::HisSample;

/// How the samples of a bucket fold into one value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HisFold {
    /// Mean of the numeric samples.
    Avg,
    /// Smallest numeric sample.
    Min,
    /// Largest numeric sample.
    Max,
    /// Sum of the numeric samples.
    Sum,
    /// Number of samples.
    Count,
    /// The first sample.
    First,
    /// The last sample.
    Last,
}

impl HisFold {
    /// Every fold, in the order the error message lists them.
    pub const ALL: [HisFold; 7] = [
        HisFold::Avg,
        HisFold::Min,
        HisFold::Max,
        HisFold::Sum,
        HisFold::Count,
        HisFold::First,
        HisFold::Last,
    ];

    /// The fold's name in requests.
    pub const fn name(self) -> &'static str {
        match self {
            HisFold::Avg => "avg",
            HisFold::Min => "min",
            HisFold::Max => "max",
            HisFold::Sum => "sum",
            HisFold::Count => "count",
            HisFold::First => "first",
            HisFold::Last => "last",
        }
    }

    /// The fold of a name.
    pub fn from_name(name: &str) -> Option<HisFold> {
        HisFold::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Whether the fold works on the numeric samples only.
    pub const fn is_numeric(self) -> bool {
        matches!(
            self,
            HisFold::Avg | HisFold::Min | HisFold::Max | HisFold::Sum
        )
    }
}

/// Shortest bucket accepted.
pub const MIN_INTERVAL_US: i64 = 1_000_000;

/// Most samples a backend without a native rollup reads to fold one point's range.
pub const MAX_ROLLUP_SAMPLES: usize = 5_000_000;

/// A rollup asked of `hisRead`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rollup {
    /// Bucket length in microseconds.
    pub interval_us: i64,
    /// How each bucket folds.
    pub fold: HisFold,
}

/// A folded bucket: its start (microseconds since 1970) and its value. Numeric folds give
/// unitless Numbers here; the op adds the point's unit.
#[derive(Debug, Clone, PartialEq)]
pub struct RollupBucket {
    /// Start of the bucket, microseconds since 1970-01-01T00:00Z.
    pub start_us: i64,
    /// The folded value.
    pub value: Value,
}

impl Rollup {
    /// The number of buckets between two instants (an upper bound on the rows).
    pub fn bucket_count(&self, start: &DateTime, end: &DateTime) -> i64 {
        let span = micros(end).saturating_sub(micros(start)).max(0);
        span / self.interval_us + i64::from(span % self.interval_us != 0)
    }
}

/// Microseconds since 1970 of a timestamp (sub-microsecond digits dropped).
pub fn micros(ts: &DateTime) -> i64 {
    let (secs, nanos) = instant_of(ts);
    secs.saturating_mul(1_000_000)
        .saturating_add(i64::from(nanos / 1000))
}

/// The numeric reading of a sample for the numeric folds.
fn numeric(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) if !n.value.is_nan() => Some(n.value),
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        _ => None,
    }
}

/// Folds samples (oldest first, all at or after `start`) into buckets of the rollup that
/// start at `start`; at most `limit` buckets, oldest first.
pub fn fold_samples(
    samples: &[HisSample],
    start: &DateTime,
    rollup: &Rollup,
    limit: usize,
) -> Vec<RollupBucket> {
    let origin = micros(start);
    let mut out: Vec<RollupBucket> = Vec::new();
    let mut i = 0;
    while i < samples.len() && out.len() < limit {
        let Some(sample) = samples.get(i) else { break };
        let index = micros(&sample.ts)
            .saturating_sub(origin)
            .div_euclid(rollup.interval_us);
        let bucket_start = origin.saturating_add(index.saturating_mul(rollup.interval_us));
        let mut j = i;
        while samples.get(j).is_some_and(|s| {
            micros(&s.ts)
                .saturating_sub(origin)
                .div_euclid(rollup.interval_us)
                == index
        }) {
            j += 1;
        }
        let bucket = samples.get(i..j).unwrap_or(&[]);
        i = j;
        let value = match rollup.fold {
            HisFold::Count => Some(Value::number(bucket.len() as f64)),
            HisFold::First => bucket.first().map(|s| s.value.clone()),
            HisFold::Last => bucket.last().map(|s| s.value.clone()),
            fold => {
                let nums: Vec<f64> = bucket.iter().filter_map(|s| numeric(&s.value)).collect();
                if nums.is_empty() {
                    None
                } else {
                    let folded = match fold {
                        HisFold::Min => nums.iter().copied().fold(f64::INFINITY, f64::min),
                        HisFold::Max => nums.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                        HisFold::Sum => nums.iter().sum(),
                        _ => nums.iter().sum::<f64>() / nums.len() as f64,
                    };
                    Some(Value::number(folded))
                }
            }
        };
        if let Some(value) = value {
            out.push(RollupBucket {
                start_us: bucket_start,
                value,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::zinc;

    fn ts(text: &str) -> DateTime {
        match zinc::decode_value(text) {
            Ok(Value::DateTime(dt)) => *dt,
            other => panic!("{text}: {other:?}"),
        }
    }

    fn sample(text: &str, value: Value) -> HisSample {
        HisSample {
            ts: ts(text),
            value,
        }
    }

    #[test]
    fn folds_buckets_from_the_range_start() {
        let start = ts("2024-01-01T00:00:00Z UTC");
        let samples = vec![
            sample(
                "2024-01-01T00:00:00Z UTC",
                Value::number_with_unit(1.0, "kW"),
            ),
            sample("2024-01-01T00:10:00Z UTC", Value::number(f64::NAN)),
            sample(
                "2024-01-01T00:14:59Z UTC",
                Value::number_with_unit(3.0, "kW"),
            ),
            sample("2024-01-01T00:45:00Z UTC", Value::Str("x".into())),
            sample("2024-01-01T00:46:00Z UTC", Value::Bool(true)),
        ];
        let rollup = |fold| Rollup {
            interval_us: 900_000_000,
            fold,
        };
        let values = |fold| -> Vec<(i64, Value)> {
            fold_samples(&samples, &start, &rollup(fold), 100)
                .into_iter()
                .map(|b| ((b.start_us - micros(&start)) / 60_000_000, b.value))
                .collect()
        };
        assert_eq!(
            values(HisFold::Avg),
            vec![(0, Value::number(2.0)), (45, Value::number(1.0))]
        );
        assert_eq!(values(HisFold::Min)[0].1, Value::number(1.0));
        assert_eq!(values(HisFold::Max)[0].1, Value::number(3.0));
        assert_eq!(values(HisFold::Sum)[0].1, Value::number(4.0));
        assert_eq!(
            values(HisFold::Count),
            vec![(0, Value::number(3.0)), (45, Value::number(2.0))]
        );
        assert_eq!(values(HisFold::First)[1].1, Value::Str("x".into()));
        assert_eq!(values(HisFold::Last)[1].1, Value::Bool(true));
        assert_eq!(
            fold_samples(&samples, &start, &rollup(HisFold::Count), 1).len(),
            1
        );
    }
}
