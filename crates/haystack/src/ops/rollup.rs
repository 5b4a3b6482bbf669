//! The `hisRead` rollup request: a request's `interval` and `fold` cells as a
//! [`Rollup`] (the buckets and folds themselves are [`crate::store::Rollup`] and
//! [`crate::store::fold_samples`]).

use crate::store::{HisFold, MIN_INTERVAL_US, Rollup};
use crate::value::Value;

use super::OpError;

fn interval_us(value: &Value) -> Result<i64, OpError> {
    let Value::Number(n) = value else {
        return Err(OpError::new(
            "hisRead: `interval` must be a Number with a duration unit, such as 15min or 1h",
        ));
    };
    let per_unit: f64 = match n.unit.as_deref() {
        Some("ms") => 1e3,
        Some("s" | "sec") => 1e6,
        Some("min") => 60e6,
        Some("h" | "hr") => 3600e6,
        Some("day") => 86_400e6,
        Some("wk" | "week") => 7.0 * 86_400e6,
        Some(other @ ("mo" | "month" | "yr" | "year")) => {
            return Err(OpError::new(format!(
                "hisRead: an interval in `{other}` has no fixed length; use day or wk"
            )));
        }
        Some(other) => {
            return Err(OpError::new(format!(
                "hisRead: `{other}` is not a duration unit; use ms, s, min, h, day or wk"
            )));
        }
        None => {
            return Err(OpError::new(
                "hisRead: `interval` needs a duration unit, such as 15min or 1h",
            ));
        }
    };
    let us = n.value * per_unit;
    if !us.is_finite() || us < MIN_INTERVAL_US as f64 || us > 1e17 {
        return Err(OpError::new(format!(
            "hisRead: `interval` must be between 1s and about 3,000 years, not {}",
            n.value
        )));
    }
    Ok(us.round() as i64)
}

impl Rollup {
    /// The rollup of a request's `interval` and `fold` (both or neither).
    pub fn parse(
        interval: Option<&Value>,
        fold: Option<&Value>,
    ) -> Result<Option<Rollup>, OpError> {
        match (interval, fold) {
            (None, None) => Ok(None),
            (Some(interval), Some(fold)) => {
                let fold = match fold {
                    Value::Str(name) => HisFold::from_name(name),
                    _ => None,
                }
                .ok_or_else(|| {
                    let names: Vec<&str> = HisFold::ALL.iter().map(|f| f.name()).collect();
                    OpError::new(format!(
                        "hisRead: `fold` must be one of {}",
                        names.join(", ")
                    ))
                })?;
                Ok(Some(Rollup {
                    interval_us: interval_us(interval)?,
                    fold,
                }))
            }
            _ => Err(OpError::new(
                "hisRead: a rollup needs both `interval` (e.g. 15min) and `fold` (e.g. \"avg\")",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::zinc;

    #[test]
    fn parse_needs_both_parts_and_fixed_units() {
        assert_eq!(Rollup::parse(None, None).unwrap(), None);
        let avg = Value::Str("avg".into());
        assert!(Rollup::parse(Some(&Value::number_with_unit(1.0, "h")), None).is_err());
        assert!(Rollup::parse(None, Some(&avg)).is_err());
        let month = Rollup::parse(Some(&Value::number_with_unit(1.0, "mo")), Some(&avg));
        assert!(month.unwrap_err().dis.contains("fixed length"));
        let tiny = Rollup::parse(Some(&Value::number_with_unit(10.0, "ms")), Some(&avg));
        assert!(tiny.unwrap_err().dis.contains("between 1s"));
        let bad = Rollup::parse(
            Some(&Value::number_with_unit(1.0, "h")),
            Some(&Value::Str("median".into())),
        );
        assert!(
            bad.unwrap_err()
                .dis
                .contains("avg, min, max, sum, count, first, last")
        );
        let hour = Rollup::parse(Some(&Value::number_with_unit(1.0, "h")), Some(&avg))
            .unwrap()
            .unwrap();
        assert_eq!(hour.interval_us, 3_600_000_000);
        let instants = ["2024-01-01T00:00:00Z UTC", "2024-01-02T00:30:00Z UTC"].map(|text| {
            match zinc::decode_value(text) {
                Ok(Value::DateTime(dt)) => *dt,
                other => panic!("{text}: {other:?}"),
            }
        });
        let [start, end] = instants;
        assert_eq!(hour.bucket_count(&start, &end), 25);
    }
}
