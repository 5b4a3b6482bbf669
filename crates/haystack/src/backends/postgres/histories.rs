//! Histories in PostgreSQL: samples in `bw_his` (a hypertable with TimescaleDB), reads,
//! writes, and rollups folded in SQL (`time_bucket` or `date_bin`).

use std::collections::HashMap;

use crate::backends::common::{self, instant_us};
use crate::backends::{BackendError, corrupt};
use crate::store::{HisFold, HisSample, HisWriteReport, Rollup, RollupBucket, StoreError};
use crate::value::{DateTime, Ref, Value};

use super::entities::entity_of;
use super::{LOAD_CHUNK, PostgresBackend, db_error, notify};

impl PostgresBackend {
    pub(super) async fn do_his_write(
        &self,
        id: &Ref,
        samples: Vec<HisSample>,
    ) -> Result<HisWriteReport, BackendError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(db_error)?;
        let row = tx
            .query_opt(
                "SELECT id, seq, version, body FROM bw_entities WHERE id = $1 FOR SHARE",
                &[&id.id],
            )
            .await
            .map_err(db_error)?;
        let point = match row {
            Some(row) => Some(entity_of(&row)?.1),
            None => None,
        };
        common::check_his_write(id, point.as_ref(), &samples)?;
        // Later samples win at equal instants, as in memory; within one statement a row
        // may be written once only, so duplicates are resolved here and counted as
        // overwrites.
        let mut by_instant: HashMap<(i64, i32), usize> = HashMap::with_capacity(samples.len());
        let mut overwritten = 0;
        let mut unique: Vec<&HisSample> = Vec::with_capacity(samples.len());
        for sample in &samples {
            let key = instant_us(&sample.ts);
            match by_instant.get(&key) {
                Some(&at) => {
                    if let Some(slot) = unique.get_mut(at) {
                        *slot = sample;
                    }
                    overwritten += 1;
                }
                None => {
                    by_instant.insert(key, unique.len());
                    unique.push(sample);
                }
            }
        }
        let mut inserted = 0;
        for chunk in unique.chunks(LOAD_CHUNK * 5) {
            let mut us = Vec::with_capacity(chunk.len());
            let mut sub = Vec::with_capacity(chunk.len());
            let mut text = Vec::with_capacity(chunk.len());
            let mut num: Vec<Option<f64>> = Vec::with_capacity(chunk.len());
            for sample in chunk {
                let (u, s) = instant_us(&sample.ts);
                us.push(u);
                sub.push(s);
                text.push(common::encode_sample(sample));
                num.push(match &sample.value {
                    Value::Number(n) => Some(n.value),
                    Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
                    _ => None,
                });
            }
            let rows = tx
                .query(
                    "INSERT INTO bw_his (point, ts, sub_us, sample, num)
                     SELECT $1, 'epoch'::timestamptz + u::float8 * interval '1 microsecond', s, t, n
                     FROM unnest($2::bigint[], $3::int[], $4::text[], $5::float8[])
                          AS x(u, s, t, n)
                     ON CONFLICT (point, ts, sub_us) DO UPDATE
                         SET sample = EXCLUDED.sample, num = EXCLUDED.num
                     RETURNING (xmax = 0)",
                    &[&id.id, &us, &sub, &text, &num],
                )
                .await
                .map_err(db_error)?;
            for row in &rows {
                let fresh: bool = row.try_get(0).map_err(db_error)?;
                if fresh {
                    inserted += 1;
                } else {
                    overwritten += 1;
                }
            }
        }
        let version = self.next_version();
        let changed = vec![id.id.clone()];
        notify(&tx, &self.origin, version, &changed).await?;
        tx.commit().await.map_err(db_error)?;
        self.announce(changed, version);
        Ok(HisWriteReport {
            inserted,
            overwritten,
            evicted: 0,
        })
    }

    /// Refuses unknown and non-historized points.
    pub(super) async fn check_historized(&self, id: &Ref) -> Result<(), BackendError> {
        let ids = [id.id.clone()];
        let point = self
            .fetch_entities(&ids)
            .await?
            .into_iter()
            .next()
            .flatten();
        let point = point.ok_or_else(|| StoreError::UnknownId(id.id.clone()))?;
        if !point.dict.contains("his") {
            return Err(StoreError::NotHistorized(id.id.clone()).into());
        }
        Ok(())
    }

    pub(super) async fn do_his_read(
        &self,
        id: &Ref,
        start: &DateTime,
        end: &DateTime,
        limit: usize,
    ) -> Result<Vec<HisSample>, BackendError> {
        self.check_historized(id).await?;
        let (start_us, start_sub) = instant_us(start);
        let (end_us, end_sub) = instant_us(end);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT sample FROM bw_his
                 WHERE point = $1
                   AND (ts, sub_us) >= ('epoch'::timestamptz + $2::float8 * interval '1 microsecond', $3::int4)
                   AND (ts, sub_us) < ('epoch'::timestamptz + $4::float8 * interval '1 microsecond', $5::int4)
                 ORDER BY ts, sub_us LIMIT $6",
                &[
                    &id.id,
                    &(start_us as f64),
                    &start_sub,
                    &(end_us as f64),
                    &end_sub,
                    &limit,
                ],
            )
            .await
            .map_err(db_error)?;
        rows.iter()
            .map(|row| {
                let text: String = row.try_get(0).map_err(db_error)?;
                common::decode_sample(&text).map_err(corrupt)
            })
            .collect()
    }

    /// A rollup folded in SQL: `time_bucket` on a hypertable, `date_bin` on a plain table
    /// (both bucket from the range start with a fixed-length interval, as the rules in
    /// [`crate::store::fold_samples`] ask). Numeric folds use the `num` column (Numbers, and Bools
    /// as 1 and 0) without NaN; `first` and `last` return the stored sample.
    pub(super) async fn do_his_rollup(
        &self,
        id: &Ref,
        start: &DateTime,
        end: &DateTime,
        rollup: Rollup,
        limit: usize,
    ) -> Result<Vec<RollupBucket>, BackendError> {
        self.check_historized(id).await?;
        let bucket = if self.timescale() {
            "time_bucket"
        } else {
            "date_bin"
        };
        let (value, numeric_only) = match rollup.fold {
            HisFold::Avg => ("avg(num)", true),
            HisFold::Min => ("min(num)", true),
            HisFold::Max => ("max(num)", true),
            HisFold::Sum => ("sum(num)", true),
            HisFold::Count => ("count(*)::float8", false),
            HisFold::First | HisFold::Last => ("NULL::float8", false),
        };
        let sample = match rollup.fold {
            HisFold::First => "(array_agg(sample ORDER BY ts, sub_us))[1]",
            HisFold::Last => "(array_agg(sample ORDER BY ts DESC, sub_us DESC))[1]",
            _ => "NULL::text",
        };
        let numeric = if numeric_only {
            "AND num IS NOT NULL AND num <> 'NaN'::float8"
        } else {
            ""
        };
        let sql = format!(
            "SELECT (extract(epoch FROM b) * 1000000)::int8, {value}, {sample}
             FROM (SELECT {bucket}(make_interval(secs => $6::float8 / 1000000), ts,
                                   'epoch'::timestamptz + $2::float8 * interval '1 microsecond') AS b,
                          ts, sub_us, sample, num
                   FROM bw_his
                   WHERE point = $1
                     AND (ts, sub_us) >= ('epoch'::timestamptz + $2::float8 * interval '1 microsecond', $3::int4)
                     AND (ts, sub_us) < ('epoch'::timestamptz + $4::float8 * interval '1 microsecond', $5::int4)
                     {numeric}) AS samples
             GROUP BY b ORDER BY b LIMIT $7"
        );
        let (start_us, start_sub) = instant_us(start);
        let (end_us, end_sub) = instant_us(end);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let client = self.client().await?;
        let rows = client
            .query(
                sql.as_str(),
                &[
                    &id.id,
                    &(start_us as f64),
                    &start_sub,
                    &(end_us as f64),
                    &end_sub,
                    &(rollup.interval_us as f64),
                    &limit,
                ],
            )
            .await
            .map_err(db_error)?;
        rows.iter()
            .map(|row| {
                let start_us: i64 = row.try_get(0).map_err(db_error)?;
                let value = match rollup.fold {
                    HisFold::First | HisFold::Last => {
                        let text: String = row.try_get(2).map_err(db_error)?;
                        common::decode_sample(&text).map_err(corrupt)?.value
                    }
                    _ => {
                        let number: f64 = row.try_get(1).map_err(db_error)?;
                        Value::number(number)
                    }
                };
                Ok(RollupBucket { start_us, value })
            })
            .collect()
    }
}
