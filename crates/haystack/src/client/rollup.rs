//! Rollups folded by the client: `hisRead` with `interval` and `fold` is a buildwire
//! extension, and a server without it (Haxall, haystack-py, an older buildwire) ignores the
//! two cells and answers the raw samples. [`HaystackApi::his_rollup`] sees that (the answer
//! has no `hisRollup` in its meta) and folds the samples here with the same
//! [`fold_samples`] the server's store uses, so that the caller never gets raw rows as if
//! they were buckets.
//!
//! The folded grid says where it was folded: `hisRollup` and `hisInterval` as a server puts
//! them, plus the marker `hisRollupByClient`. Buckets start at the answer's `hisStart`, or,
//! when the server sends no timestamps there, at the start of the range asked resolved in
//! the samples' timezone (samples outside the range are dropped: haystack-py answers all of
//! them); they are stamped in that timezone; numeric folds carry the unit of the samples.
//!
//! [`HaystackApi::his_rollup`]: super::HaystackApi::his_rollup

use crate::ops::{datetime_at, parse_range};
use crate::store::{HisSample, Rollup, fold_samples, micros};
use crate::value::{Column, Dict, Grid, Value};

use super::error::ClientError;

/// Meta tag of a grid the client folded (a server's rollup does not have it).
pub const CLIENT_ROLLUP_TAG: &str = "hisRollupByClient";

/// The rollup of an `interval` (a duration Number such as `15min`) and a `fold` name, or
/// why they are not one (checked before anything is sent).
pub fn parse_rollup(interval: &Value, fold: &str) -> Result<Rollup, ClientError> {
    match Rollup::parse(Some(interval), Some(&Value::Str(fold.to_owned()))) {
        Ok(Some(rollup)) => Ok(rollup),
        Ok(None) => Err(ClientError::Rollup(
            "a rollup needs an interval and a fold".into(),
        )),
        Err(e) => Err(ClientError::Rollup(
            e.dis.trim_start_matches("hisRead: ").to_owned(),
        )),
    }
}

/// Whether a `hisRead` answer is already rolled up by the server.
pub fn is_rolled_up(answer: &Grid) -> bool {
    answer.meta.contains("hisRollup")
}

/// Folds the samples of a plain single-point `hisRead` answer (`ts` and `val` columns) for
/// the range asked (`range`, as sent) into the buckets of `rollup`; samples outside the
/// range are left out. Grid meta and the `val` column's meta are kept, with `hisRollup`,
/// `hisInterval` and [`CLIENT_ROLLUP_TAG`] added.
pub fn fold_answer(
    answer: &Grid,
    range: &str,
    interval: &Value,
    rollup: &Rollup,
) -> Result<Grid, ClientError> {
    let (Some(ts_col), Some(val_col)) = (answer.column_index("ts"), answer.column_index("val"))
    else {
        return Err(ClientError::Rollup(
            "the server's hisRead answer has no ts and val columns to fold".into(),
        ));
    };
    let mut samples: Vec<HisSample> = Vec::with_capacity(answer.row_count());
    for row in answer.rows() {
        let (Some(Value::DateTime(ts)), Some(value)) = (row.get(ts_col), row.get(val_col)) else {
            continue;
        };
        samples.push(HisSample {
            ts: (**ts).clone(),
            value: value.clone(),
        });
    }
    samples.sort_by_key(|s| micros(&s.ts));
    // The range: the answer's hisStart and hisEnd when they are timestamps, else the range
    // asked resolved in the samples' timezone (haystack-py writes the strings "start" and
    // "end" there and answers every sample of the point, whatever the range).
    let stamp = |name: &str| match answer.meta.get(name) {
        Some(Value::DateTime(ts)) => Some((**ts).clone()),
        _ => None,
    };
    let (start, end) = match (stamp("hisStart"), stamp("hisEnd")) {
        (Some(start), Some(end)) => (Some(start), Some(end)),
        _ => {
            let tz = samples
                .first()
                .and_then(|s| s.ts.tz.clone())
                .unwrap_or_else(|| "UTC".to_owned());
            let now_ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
            match parse_range(&Value::Str(range.to_owned())).and_then(|r| r.resolve(&tz, now_ms)) {
                Ok((start, end)) => (Some(start), Some(end)),
                Err(_) => (samples.first().map(|s| s.ts.clone()), None),
            }
        }
    };
    if let Some(start) = &start {
        let (from, to) = (micros(start), end.as_ref().map(micros));
        samples.retain(|s| {
            let at = micros(&s.ts);
            at >= from && to.is_none_or(|to| at < to)
        });
    }
    let unit = samples.iter().find_map(|s| match &s.value {
        Value::Number(n) => n.unit.clone(),
        _ => None,
    });
    let mut meta = answer.meta.clone();
    // Constant, valid tag names: the inserts cannot fail.
    let _ = meta.insert("hisRollup", Value::Str(rollup.fold.name().to_owned()));
    let _ = meta.insert("hisInterval", interval.clone());
    let _ = meta.insert(CLIENT_ROLLUP_TAG, Value::Marker);
    if let (Some(start), Some(end)) = (&start, &end) {
        let _ = meta.insert("hisStart", Value::from(start.clone()));
        let _ = meta.insert("hisEnd", Value::from(end.clone()));
    }
    let val_meta = answer
        .columns()
        .get(val_col)
        .map(|c| c.meta.clone())
        .unwrap_or_default();
    let columns = vec![
        Column {
            name: "ts".into(),
            meta: Dict::new(),
        },
        Column {
            name: "val".into(),
            meta: val_meta,
        },
    ];
    let mut grid = Grid::new(meta, columns)?;
    let Some(start) = start else {
        return Ok(grid);
    };
    let tz = start.tz.clone().unwrap_or_else(|| "UTC".to_owned());
    for bucket in fold_samples(&samples, &start, rollup, usize::MAX) {
        let ts = datetime_at(bucket.start_us.div_euclid(1000), &tz).ok_or_else(|| {
            ClientError::Rollup("a bucket lies outside years 0..=9999".to_owned())
        })?;
        let value = match (bucket.value, &unit) {
            (Value::Number(mut n), Some(unit)) if rollup.fold.is_numeric() => {
                n.unit = Some(unit.clone());
                Value::Number(n)
            }
            (value, _) => value,
        };
        grid.push_row(vec![Some(Value::from(ts)), Some(value)])?;
    }
    Ok(grid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::zinc;

    #[test]
    fn a_raw_answer_without_timestamps_in_its_meta_is_cut_to_the_range_asked() {
        // What haystack-py answers: "start"/"end" strings and every sample of the point.
        let answer = zinc::decode_grid(
            "ver:\"3.0\" hisStart:\"start\" hisEnd:\"end\"\nts,val\n\
             2024-02-29T23:50:00Z UTC,100kW\n\
             2024-03-01T00:10:00Z UTC,1kW\n\
             2024-03-01T00:50:00Z UTC,3kW\n\
             2024-03-01T01:05:00Z UTC,5kW\n\
             2024-03-02T00:00:00Z UTC,100kW\n",
        )
        .unwrap();
        let hour = zinc::decode_value("1h").unwrap();
        let rollup = parse_rollup(&hour, "avg").unwrap();
        let grid = fold_answer(&answer, "2024-03-01", &hour, &rollup).unwrap();
        let folded = zinc::encode_grid(&grid);
        assert!(folded.contains("hisRollupByClient"), "{folded}");
        assert!(
            folded.contains("hisStart:2024-03-01T00:00:00Z UTC"),
            "{folded}"
        );
        let rows: Vec<_> = (0..grid.row_count())
            .map(|i| (grid.get(i, "ts").cloned(), grid.get(i, "val").cloned()))
            .collect();
        assert_eq!(
            rows,
            vec![
                (
                    Some(zinc::decode_value("2024-03-01T00:00:00Z UTC").unwrap()),
                    Some(Value::number_with_unit(2.0, "kW"))
                ),
                (
                    Some(zinc::decode_value("2024-03-01T01:00:00Z UTC").unwrap()),
                    Some(Value::number_with_unit(5.0, "kW"))
                ),
            ]
        );
        assert!(matches!(
            parse_rollup(&hour, "median"),
            Err(ClientError::Rollup(_))
        ));
    }
}
