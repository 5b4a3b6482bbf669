//! `hisRead` and `hisWrite`, single-point and batch (`v0`, `v1`, ... columns with the point
//! `id` in each column's meta), and [`HisRange`]: the range forms `today`, `yesterday`,
//! `{date}`, `{date},{date}`, `{dateTime},{dateTime}` and `{dateTime}` (anything after),
//! resolved in the point's timezone (dates run from midnight of the first to midnight after
//! the last; ends are exclusive).

use std::collections::BTreeMap;

use crate::codec::zinc;
use crate::filter::instant_of;
use crate::store::HisSample;
use crate::timezone;
use crate::value::{Column, Date, DateTime, Dict, Grid, Ref, Value};

use super::OpError;
use super::engine::{CallContext, Engine, ref_of};
use super::time::{add_days, datetime_at, local_midnight};
use crate::store::Rollup;

/// A `hisRead` range.
#[derive(Debug, Clone, PartialEq)]
pub enum HisRange {
    /// The current day in the point's timezone.
    Today,
    /// The day before.
    Yesterday,
    /// One whole day.
    Date(Date),
    /// From the start of the first day to the end of the second.
    Dates(Date, Date),
    /// From the first instant (inclusive) to the second (exclusive).
    DateTimes(DateTime, DateTime),
    /// Everything from an instant on.
    Since(DateTime),
}

/// Longest range text read.
const MAX_RANGE_LEN: usize = 256;

fn range_item(text: &str) -> Result<Value, OpError> {
    match zinc::decode_value(text.trim()) {
        Ok(v @ (Value::Date(_) | Value::DateTime(_))) => Ok(v),
        _ => Err(OpError::new(format!(
            "hisRead: range part `{}` is not a Zinc Date or DateTime",
            text.trim()
        ))),
    }
}

/// Reads a range: a Str in one of the spec's forms (or a Date or DateTime value).
pub fn parse_range(value: &Value) -> Result<HisRange, OpError> {
    let text = match value {
        Value::Str(s) => s.trim(),
        Value::Date(d) => return Ok(HisRange::Date(*d)),
        Value::DateTime(dt) => return Ok(HisRange::Since((**dt).clone())),
        other => {
            return Err(OpError::new(format!(
                "hisRead: `range` must be a Str, not {other:?}"
            )));
        }
    };
    if text.len() > MAX_RANGE_LEN {
        return Err(OpError::new("hisRead: `range` is too long"));
    }
    match text {
        "today" => return Ok(HisRange::Today),
        "yesterday" => return Ok(HisRange::Yesterday),
        _ => {}
    }
    let range = match text.split_once(',') {
        None => match range_item(text)? {
            Value::Date(d) => HisRange::Date(d),
            Value::DateTime(dt) => HisRange::Since(*dt),
            _ => return Err(OpError::new("hisRead: unreadable range")),
        },
        Some((a, b)) => match (range_item(a)?, range_item(b)?) {
            (Value::Date(a), Value::Date(b)) => HisRange::Dates(a, b),
            (Value::DateTime(a), Value::DateTime(b)) => HisRange::DateTimes(*a, *b),
            _ => {
                return Err(OpError::new(
                    "hisRead: a range is two Dates or two DateTimes, not a mix",
                ));
            }
        },
    };
    Ok(range)
}

fn in_tz(dt: &DateTime, tz: &str) -> DateTime {
    if dt.tz.as_deref() == Some(tz) {
        return dt.clone();
    }
    timezone::in_zone(dt, tz).unwrap_or_else(|| dt.clone())
}

fn day_start(date: Date, tz: &str) -> Result<DateTime, OpError> {
    local_midnight(date, tz).ok_or_else(|| OpError::new("hisRead: date outside years 0..=9999"))
}

fn next_day(date: Date) -> Result<Date, OpError> {
    add_days(date, 1).ok_or_else(|| OpError::new("hisRead: date outside years 0..=9999"))
}

/// The last representable instant, the end of an open range.
fn end_of_time(tz: &str) -> Result<DateTime, OpError> {
    let last_ms = (timezone::days_from_civil(9999, 12, 31) + 1) * 86_400_000 - 1;
    // A zone east of UTC would put the local time past 9999: stay in UTC then.
    datetime_at(last_ms, tz)
        .filter(|dt| dt.date.year() <= 9999)
        .or_else(|| datetime_at(last_ms, "UTC"))
        .ok_or_else(|| OpError::new("hisRead: no end of time"))
}

impl HisRange {
    /// The `[start, end)` instants in zone `tz` at `now_ms`.
    pub fn resolve(&self, tz: &str, now_ms: i64) -> Result<(DateTime, DateTime), OpError> {
        let today = || {
            datetime_at(now_ms, tz)
                .map(|dt| dt.date)
                .ok_or_else(|| OpError::new("hisRead: the clock is outside years 0..=9999"))
        };
        let days = |first: Date, last: Date| -> Result<(DateTime, DateTime), OpError> {
            Ok((day_start(first, tz)?, day_start(next_day(last)?, tz)?))
        };
        let (start, end) = match self {
            HisRange::Today => {
                let d = today()?;
                days(d, d)?
            }
            HisRange::Yesterday => {
                let d = add_days(today()?, -1)
                    .ok_or_else(|| OpError::new("hisRead: date outside years 0..=9999"))?;
                days(d, d)?
            }
            HisRange::Date(d) => days(*d, *d)?,
            HisRange::Dates(a, b) => days(*a, *b)?,
            HisRange::DateTimes(a, b) => (in_tz(a, tz), in_tz(b, tz)),
            HisRange::Since(a) => (in_tz(a, tz), end_of_time(tz)?),
        };
        if instant_of(&end) < instant_of(&start) {
            return Err(OpError::new("hisRead: the range ends before it starts"));
        }
        Ok((start, end))
    }
}

/// The point's timezone (its `tz` tag), else the server's.
fn point_tz(point: &Dict, default: &str) -> String {
    match point.get("tz") {
        Some(Value::Str(tz)) => tz.clone(),
        _ => default.to_owned(),
    }
}

fn incomplete(limit: usize) -> Value {
    let mut d = Dict::new();
    let _ = d.insert(
        "dis",
        Value::Str(format!("hisRead returns at most {limit} samples per point")),
    );
    let _ = d.insert("limit", Value::number(limit as f64));
    Value::from(d)
}

/// Why a sample does not fit its point.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum SampleMismatch {
    /// A Number in another unit.
    #[error("unit {given} differs from the point's unit {unit} (no conversion)")]
    Unit { given: String, unit: String },
    /// A value of another kind.
    #[error("{value:?} does not fit the point's kind {kind}")]
    Kind { value: Value, kind: String },
}

/// Whether a value fits a point's `kind` and `unit` (numbers unitless or in the unit).
fn check_sample(point: &Dict, value: &Value) -> Result<(), SampleMismatch> {
    let kind = match point.get("kind") {
        Some(Value::Str(k)) => k.as_str(),
        _ => return Ok(()),
    };
    match (kind, value) {
        ("Number", Value::Number(n)) => match (point.get("unit"), &n.unit) {
            (Some(Value::Str(unit)), Some(given)) if unit != given => Err(SampleMismatch::Unit {
                given: given.clone(),
                unit: unit.clone(),
            }),
            _ => Ok(()),
        },
        ("Bool", Value::Bool(_)) | ("Str", Value::Str(_)) => Ok(()),
        ("Number" | "Bool" | "Str", other) => Err(SampleMismatch::Kind {
            value: other.clone(),
            kind: kind.to_owned(),
        }),
        _ => Ok(()),
    }
}

impl Engine {
    async fn his_point(&self, id: &Ref) -> Result<Dict, OpError> {
        self.entity(id, "his").await
    }

    /// Samples of one point in the range (or, with a rollup, its buckets stamped with their
    /// start), in the point's zone; whether more were cut.
    async fn his_samples(
        &self,
        id: &Ref,
        range: &HisRange,
        rollup: Option<Rollup>,
        now_ms: i64,
    ) -> Result<(String, DateTime, DateTime, Vec<HisSample>, bool), OpError> {
        let point = self.his_point(id).await?;
        let tz = point_tz(&point, &self.info.tz);
        let (start, end) = range.resolve(&tz, now_ms)?;
        let max = self.limits.max_his_rows;
        if let Some(rollup) = rollup {
            let samples = self
                .his_rollup(id, &point, &tz, &start, &end, rollup)
                .await?;
            return Ok((tz, start, end, samples, false));
        }
        let mut samples = self
            .backend
            .his_read(id, &start, &end, max.saturating_add(1))
            .await?;
        let cut = samples.len() > max;
        samples.truncate(max);
        for s in &mut samples {
            if s.ts.tz.as_deref() != Some(tz.as_str()) {
                s.ts = in_tz(&s.ts, &tz);
            }
        }
        Ok((tz, start, end, samples, cut))
    }

    /// The buckets of a rollup as samples stamped with the bucket's start in `tz`.
    async fn his_rollup(
        &self,
        id: &Ref,
        point: &Dict,
        tz: &str,
        start: &DateTime,
        end: &DateTime,
        rollup: Rollup,
    ) -> Result<Vec<HisSample>, OpError> {
        let max = self.limits.max_his_rows;
        let buckets = rollup.bucket_count(start, end);
        if usize::try_from(buckets).map_or(true, |n| n > max) {
            return Err(OpError::new(format!(
                "hisRead: {buckets} buckets of this interval fit the range, at most {max} are \
                 returned; ask for a longer interval or a shorter range"
            )));
        }
        let kind = match point.get("kind") {
            Some(Value::Str(kind)) => kind.as_str(),
            _ => "",
        };
        if rollup.fold.is_numeric() && !matches!(kind, "" | "Number" | "Bool") {
            return Err(OpError::new(format!(
                "hisRead: fold `{}` needs a Number or Bool point, and @{} is a {kind} point; \
                 use count, first or last",
                rollup.fold.name(),
                id.id
            )));
        }
        let unit = match point.get("unit") {
            Some(Value::Str(unit)) if rollup.fold.is_numeric() => Some(unit.clone()),
            _ => None,
        };
        let buckets = self.backend.his_rollup(id, start, end, rollup, max).await?;
        let mut out = Vec::with_capacity(buckets.len());
        for bucket in buckets {
            let ts = datetime_at(bucket.start_us.div_euclid(1000), tz)
                .ok_or_else(|| OpError::new("hisRead: a bucket lies outside years 0..=9999"))?;
            let value = match (bucket.value, &unit) {
                (Value::Number(mut n), Some(unit)) => {
                    n.unit = Some(unit.clone());
                    Value::Number(n)
                }
                (value, _) => value,
            };
            out.push(HisSample { ts, value });
        }
        Ok(out)
    }

    pub(super) async fn his_read(
        &self,
        ctx: &CallContext,
        request: &Grid,
    ) -> Result<Grid, OpError> {
        let rows = request.row_count();
        if rows == 0 {
            return Err(OpError::new("hisRead: the request has no row"));
        }
        if rows > self.limits.max_his_points {
            return Err(OpError::new(format!(
                "hisRead: at most {} points per request",
                self.limits.max_his_points
            )));
        }
        let mut points = Vec::with_capacity(rows);
        for i in 0..rows {
            let id = ref_of(request.get(i, "id"))
                .ok_or_else(|| OpError::new(format!("hisRead: row {i}: `id` must be a Ref")))?;
            let range = request
                .get(i, "range")
                .or_else(|| request.meta.get("range"))
                .ok_or_else(|| OpError::new("hisRead: no `range`"))?;
            points.push((id, parse_range(range)?));
        }
        // A buildwire extension: `interval` and `fold` (in the grid meta, or in the first
        // row) fold every point's range into buckets; see `crate::store::fold_samples`.
        let param = |name: &str| request.meta.get(name).or_else(|| request.get(0, name));
        let rollup = Rollup::parse(param("interval"), param("fold"))?;
        let rollup_meta = |meta: &mut Dict| {
            if let (Some(rollup), Some(interval)) = (rollup, param("interval")) {
                let _ = meta.insert("hisRollup", Value::Str(rollup.fold.name().to_owned()));
                let _ = meta.insert("hisInterval", interval.clone());
            }
        };
        if let [(id, range)] = points.as_slice() {
            let (_, start, end, samples, cut) =
                self.his_samples(id, range, rollup, ctx.now_ms).await?;
            let mut meta = Dict::new();
            let _ = meta.insert("id", Value::Ref(id.clone()));
            let _ = meta.insert("hisStart", Value::from(start));
            let _ = meta.insert("hisEnd", Value::from(end));
            rollup_meta(&mut meta);
            if cut {
                let _ = meta.insert("incomplete", incomplete(self.limits.max_his_rows));
            }
            // `id` in the `val` column's meta as well as the grid's, as a batch read puts
            // it: phable's DataFrame helpers look for it there.
            let mut cols = columns(&["ts", "val"]);
            if let Some(val) = cols.get_mut(1) {
                let _ = val.meta.insert("id", Value::Ref(id.clone()));
            }
            let mut grid = Grid::new(meta, cols).map_err(|e| OpError::new(e.to_string()))?;
            grid.reserve_rows(samples.len());
            for s in samples {
                let _ = grid.push_row(vec![Some(Value::from(s.ts)), Some(s.value)]);
            }
            return Ok(grid);
        }
        // Batch: one `ts` column and a `vN` column per point, rows merged by instant.
        let mut merged: BTreeMap<(i64, u32), Vec<Option<Value>>> = BTreeMap::new();
        let mut stamps: BTreeMap<(i64, u32), DateTime> = BTreeMap::new();
        let mut cols = vec![Column {
            name: "ts".into(),
            meta: Dict::new(),
        }];
        let mut meta = Dict::new();
        let width = points.len();
        for (n, (id, range)) in points.iter().enumerate() {
            let (_, start, end, samples, cut) =
                self.his_samples(id, range, rollup, ctx.now_ms).await?;
            if n == 0 {
                let _ = meta.insert("hisStart", Value::from(start));
                let _ = meta.insert("hisEnd", Value::from(end));
                rollup_meta(&mut meta);
            }
            if cut {
                let _ = meta.insert("incomplete", incomplete(self.limits.max_his_rows));
            }
            let mut col_meta = Dict::new();
            let _ = col_meta.insert("id", Value::Ref(id.clone()));
            cols.push(Column {
                name: format!("v{n}"),
                meta: col_meta,
            });
            for s in samples {
                let key = instant_of(&s.ts);
                stamps.entry(key).or_insert(s.ts);
                if let Some(cell) = merged
                    .entry(key)
                    .or_insert_with(|| vec![None; width])
                    .get_mut(n)
                {
                    *cell = Some(s.value);
                }
            }
        }
        let mut grid = Grid::new(meta, cols).map_err(|e| OpError::new(e.to_string()))?;
        for (key, values) in merged {
            let mut row = Vec::with_capacity(width + 1);
            row.push(stamps.remove(&key).map(Value::from));
            row.extend(values);
            let _ = grid.push_row(row);
        }
        Ok(grid)
    }

    pub(super) async fn his_write(&self, request: &Grid) -> Result<Grid, OpError> {
        if request.column_index("ts").is_none() {
            return Err(OpError::new("hisWrite: the request needs a `ts` column"));
        }
        // Single point: `id` in the grid meta and a `val` column. Batch: a `vN` column per
        // point with the point `id` in the column's meta.
        let targets: Vec<(Ref, String)> = match request.meta.get("id") {
            Some(value) => {
                let id = ref_of(Some(value))
                    .ok_or_else(|| OpError::new("hisWrite: grid meta `id` must be a Ref"))?;
                if request.column_index("val").is_none() {
                    return Err(OpError::new("hisWrite: the request needs a `val` column"));
                }
                vec![(id, "val".to_owned())]
            }
            None => request
                .columns()
                .iter()
                .filter(|c| c.name != "ts")
                .map(|c| {
                    ref_of(c.meta.get("id"))
                        .map(|id| (id, c.name.clone()))
                        .ok_or_else(|| {
                            OpError::new(format!(
                                "hisWrite: column `{}` has no `id` Ref in its meta",
                                c.name
                            ))
                        })
                })
                .collect::<Result<_, _>>()?,
        };
        if targets.is_empty() || targets.len() > self.limits.max_his_points {
            return Err(OpError::new(format!(
                "hisWrite: 1 to {} points per request",
                self.limits.max_his_points
            )));
        }
        // Check every sample of every point before writing any.
        let mut batches = Vec::with_capacity(targets.len());
        for (id, column) in &targets {
            let point = self.his_point(id).await?;
            if !point.contains("his") {
                return Err(OpError::new(format!(
                    "hisWrite: @{} is not historized (no his tag)",
                    id.id
                )));
            }
            let mut samples = Vec::with_capacity(request.row_count());
            for i in 0..request.row_count() {
                let ts = match request.get(i, "ts") {
                    Some(Value::DateTime(ts)) => (**ts).clone(),
                    other => {
                        return Err(OpError::new(format!(
                            "hisWrite: row {i}: `ts` must be a DateTime, not {other:?}"
                        )));
                    }
                };
                let Some(value) = request.get(i, column) else {
                    continue;
                };
                check_sample(&point, value)
                    .map_err(|e| OpError::new(format!("hisWrite: row {i}, @{}: {e}", id.id)))?;
                samples.push(HisSample {
                    ts,
                    value: value.clone(),
                });
            }
            batches.push((id, samples));
        }
        for (id, samples) in batches {
            self.backend.his_write(id, samples).await?;
        }
        Ok(Grid::default())
    }
}

fn columns(names: &[&str]) -> Vec<Column> {
    names
        .iter()
        .map(|n| Column {
            name: (*n).to_owned(),
            meta: Dict::new(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::auth::Role;
    use crate::backends::MemoryBackend;
    use crate::ops::{Limits, Op, ServerInfo, is_error_grid};
    use futures_util::FutureExt;

    fn text(value: &Value) -> String {
        zinc::encode_value(value)
    }

    // 2024-07-01T12:00:00Z: 08:00 in New York.
    const NOW: i64 = 1_719_835_200_000;

    #[test]
    fn ranges_resolve_in_the_point_zone() {
        let r = |s: &str| parse_range(&Value::Str(s.into())).unwrap();
        let (a, b) = r("today").resolve("New_York", NOW).unwrap();
        assert_eq!(text(&a.into()), "2024-07-01T00:00:00-04:00 New_York");
        assert_eq!(text(&b.into()), "2024-07-02T00:00:00-04:00 New_York");
        let (a, _) = r("yesterday").resolve("New_York", NOW).unwrap();
        assert_eq!(text(&a.into()), "2024-06-30T00:00:00-04:00 New_York");
        let (a, b) = r("2024-03-09,2024-03-10").resolve("New_York", NOW).unwrap();
        assert_eq!(text(&a.into()), "2024-03-09T00:00:00-05:00 New_York");
        assert_eq!(text(&b.into()), "2024-03-11T00:00:00-04:00 New_York");
        let (a, b) = r("2024-01-01T05:00:00Z UTC,2024-01-01T06:00:00Z UTC")
            .resolve("New_York", NOW)
            .unwrap();
        assert_eq!(text(&a.into()), "2024-01-01T00:00:00-05:00 New_York");
        assert_eq!(text(&b.into()), "2024-01-01T01:00:00-05:00 New_York");
        let (a, b) = r("2024-01-01T00:00:00Z UTC").resolve("Tokyo", NOW).unwrap();
        assert_eq!(text(&a.into()), "2024-01-01T09:00:00+09:00 Tokyo");
        assert_eq!(b.date.year(), 9999);
        assert!(parse_range(&Value::Str("2024-01-01,2024-01-02T00:00:00Z UTC".into())).is_err());
        assert!(parse_range(&Value::Str("last week".into())).is_err());
        assert!(parse_range(&Value::number(1.0)).is_err());
        assert!(r("2024-02-01,2024-01-01").resolve("UTC", NOW).is_err());
    }

    fn engine() -> Engine {
        let backend = Arc::new(MemoryBackend::new());
        backend
            .load_grid(
                &zinc::decode_grid(
                    "ver:\"3.0\"\nid,point,his,kind,unit,tz\n\
                     @t,M,M,\"Number\",\"°F\",\"New_York\"\n@b,M,M,\"Bool\",,\"New_York\"\n\
                     @x,M,,\"Number\",,\"New_York\"\n",
                )
                .unwrap(),
            )
            .unwrap();
        let limits = Limits {
            max_his_rows: 3,
            ..Limits::default()
        };
        Engine::new(backend, ServerInfo::default(), limits)
    }

    fn call(e: &Engine, role: Role, op: Op, req: &str) -> Grid {
        let ctx = CallContext::user("ann", role, NOW);
        e.call(&ctx, op, &zinc::decode_grid(req).unwrap())
            .now_or_never()
            .unwrap()
    }

    #[test]
    fn his_write_then_read_single_and_batch() {
        let e = engine();
        let write = "ver:\"3.0\" id:@t\nts,val\n\
            2024-07-01T09:00:00-04:00 New_York,72°F\n\
            2024-07-01T08:00:00-04:00 New_York,71\n\
            2024-06-30T23:00:00-04:00 New_York,70°F\n";
        assert!(!is_error_grid(&call(
            &e,
            Role::Operator,
            Op::HisWrite,
            write
        )));
        let g = call(
            &e,
            Role::Viewer,
            Op::HisRead,
            "ver:\"3.0\"\nid,range\n@t,\"today\"\n",
        );
        assert_eq!(g.row_count(), 2, "{g:?}");
        assert_eq!(g.meta.get("id"), Some(&Value::Ref(Ref::new("t"))));
        assert_eq!(
            g.columns()[1].meta.get("id"),
            Some(&Value::Ref(Ref::new("t")))
        );
        assert_eq!(
            text(g.get(0, "ts").unwrap()),
            "2024-07-01T08:00:00-04:00 New_York"
        );
        // A UTC sample comes back in the point's zone.
        let utc =
            "ver:\"3.0\" id:@t\nts,val\n2024-07-01T14:00:00Z UTC,1\n2024-07-01T15:00:00Z UTC,2\n";
        assert!(
            is_error_grid(&call(&e, Role::Operator, Op::HisWrite, utc)),
            "tz mismatch"
        );
        let batch = "ver:\"3.0\"\nts,v0 id:@t,v1 id:@b\n\
            2024-07-01T10:00:00-04:00 New_York,73°F,T\n2024-07-01T11:00:00-04:00 New_York,74°F,\n";
        assert!(!is_error_grid(&call(
            &e,
            Role::Operator,
            Op::HisWrite,
            batch
        )));
        let g = call(
            &e,
            Role::Viewer,
            Op::HisRead,
            "ver:\"3.0\"\nid,range\n@t,\"today\"\n",
        );
        assert_eq!(g.row_count(), 3);
        assert!(
            g.meta.contains("incomplete"),
            "4 samples cut at max_his_rows = 3"
        );
        let g = call(
            &e,
            Role::Viewer,
            Op::HisRead,
            "ver:\"3.0\" range:\"2024-07-01\"\nid\n@t\n@b\n",
        );
        assert_eq!(g.columns().len(), 3);
        assert_eq!(
            g.columns()[2].meta.get("id"),
            Some(&Value::Ref(Ref::new("b")))
        );
        assert_eq!(g.get(2, "v1"), Some(&Value::Bool(true)));
        assert_eq!(g.get(2, "v0"), Some(&Value::number_with_unit(73.0, "°F")));
    }

    #[test]
    fn his_write_refuses_bad_samples_before_writing_any() {
        let e = engine();
        let bad = [
            "ver:\"3.0\" id:@t\nts,val\n2024-07-01T09:00:00-04:00 New_York,72°C\n",
            "ver:\"3.0\" id:@t\nts,val\n2024-07-01T09:00:00-04:00 New_York,T\n",
            "ver:\"3.0\" id:@t\nts,val\n2024-07-01,1\n",
            "ver:\"3.0\" id:@x\nts,val\n2024-07-01T09:00:00-04:00 New_York,1\n",
            "ver:\"3.0\" id:@nope\nts,val\n2024-07-01T09:00:00-04:00 New_York,1\n",
            "ver:\"3.0\"\nts,v0\n2024-07-01T09:00:00-04:00 New_York,1\n",
            "ver:\"3.0\" id:@t\nts\n2024-07-01T09:00:00-04:00 New_York\n",
        ];
        for req in bad {
            assert!(
                is_error_grid(&call(&e, Role::Admin, Op::HisWrite, req)),
                "{req}"
            );
        }
        let g = call(
            &e,
            Role::Viewer,
            Op::HisRead,
            "ver:\"3.0\"\nid,range\n@t,\"2024-07-01\"\n",
        );
        assert_eq!(g.row_count(), 0);
        assert!(is_error_grid(&call(
            &e,
            Role::Viewer,
            Op::HisRead,
            "ver:\"3.0\"\nid,range\n@x,\"today\"\n"
        )));
    }

    #[test]
    fn his_read_rolls_up_with_interval_and_fold() {
        let e = engine();
        let write = "ver:\"3.0\" id:@t\nts,val\n\
            2024-07-01T09:00:00-04:00 New_York,70°F\n\
            2024-07-01T09:30:00-04:00 New_York,74°F\n\
            2024-07-01T11:15:00-04:00 New_York,80°F\n";
        assert!(!is_error_grid(&call(
            &e,
            Role::Operator,
            Op::HisWrite,
            write
        )));
        let read = |fold: &str| {
            call(
                &e,
                Role::Viewer,
                Op::HisRead,
                &format!(
                    "ver:\"3.0\" interval:1h fold:\"{fold}\"\nid,range\n\
                     @t,\"2024-07-01T09:00:00-04:00 New_York,2024-07-01T12:00:00-04:00 New_York\"\n"
                ),
            )
        };
        let g = read("avg");
        assert!(!is_error_grid(&g), "{g:?}");
        assert_eq!(g.meta.get("hisRollup"), Some(&Value::Str("avg".into())));
        assert_eq!(g.row_count(), 2);
        assert_eq!(
            text(g.get(0, "ts").unwrap()),
            "2024-07-01T09:00:00-04:00 New_York"
        );
        assert_eq!(g.get(0, "val"), Some(&Value::number_with_unit(72.0, "°F")));
        assert_eq!(
            text(g.get(1, "ts").unwrap()),
            "2024-07-01T11:00:00-04:00 New_York"
        );
        let g = read("count");
        assert_eq!(g.get(0, "val"), Some(&Value::number(2.0)));
        let g = read("last");
        assert_eq!(g.get(0, "val"), Some(&Value::number_with_unit(74.0, "°F")));
        // A day in 1-second buckets is more rows than max_his_rows (3).
        let g = call(
            &e,
            Role::Viewer,
            Op::HisRead,
            "ver:\"3.0\" interval:1s fold:\"avg\"\nid,range\n@t,\"2024-07-01\"\n",
        );
        assert!(is_error_grid(&g));
        assert!(format!("{g:?}").contains("longer interval"));
        // Numeric folds refuse a Str point; a fold without an interval is refused.
        assert!(is_error_grid(&read("median")));
        assert!(is_error_grid(&call(
            &e,
            Role::Viewer,
            Op::HisRead,
            "ver:\"3.0\" fold:\"avg\"\nid,range\n@t,\"2024-07-01\"\n"
        )));
    }
}
