//! Histories in Redis: one sorted set per point, members ordered by a fixed-width instant
//! key, so a range read is one `ZRANGE ... BYLEX` and a write one Lua script.

use crate::backends::common::{self, instant_key};
use crate::backends::{BackendError, corrupt};
use crate::store::{HisSample, HisWriteReport, StoreError};
use crate::value::{DateTime, Ref};

use super::{RedisBackend, unavailable};

impl RedisBackend {
    pub(super) async fn do_his_read(
        &self,
        id: &Ref,
        start: &DateTime,
        end: &DateTime,
        limit: usize,
    ) -> Result<Vec<HisSample>, BackendError> {
        {
            let ids = [id.id.clone()];
            let point = self.fetch_records(&ids).await?.into_iter().next().flatten();
            let point = point.ok_or_else(|| StoreError::UnknownId(id.id.clone()))?;
            if !point.dict.contains("his") {
                return Err(StoreError::NotHistorized(id.id.clone()).into());
            }
            let mut conn = self.conn();
            let members: Vec<String> = redis::cmd("ZRANGE")
                .arg(self.key(&format!("h:{}", id.id)))
                .arg(format!("[{}", instant_key(start)))
                .arg(format!("({}", instant_key(end)))
                .arg("BYLEX")
                .arg("LIMIT")
                .arg(0)
                .arg(limit.min(i64::MAX as usize))
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
            members
                .iter()
                .map(|m| {
                    let sample = m.split_once(' ').map_or("", |(_, s)| s);
                    common::decode_sample(sample).map_err(corrupt)
                })
                .collect()
        }
    }

    pub(super) async fn do_his_write(
        &self,
        id: &Ref,
        samples: Vec<HisSample>,
    ) -> Result<HisWriteReport, BackendError> {
        {
            let ids = [id.id.clone()];
            let point = self.fetch_records(&ids).await?.into_iter().next().flatten();
            common::check_his_write(id, point.as_ref(), &samples)?;
            let mut invocation = self.his.key(self.key(&format!("h:{}", id.id)));
            invocation
                .key(self.key("ent"))
                .arg(&id.id)
                .arg(&self.prefix);
            for sample in &samples {
                let key = instant_key(&sample.ts);
                let member = format!("{key} {}", common::encode_sample(sample));
                invocation.arg(key).arg(member);
            }
            let mut conn = self.conn();
            let (inserted, overwritten): (i64, i64) = invocation
                .invoke_async(&mut conn)
                .await
                .map_err(unavailable)?;
            if inserted < 0 {
                return Err(StoreError::UnknownId(id.id.clone()).into());
            }
            self.changed(vec![id.id.clone()]).await;
            Ok(HisWriteReport {
                inserted: inserted as usize,
                overwritten: overwritten as usize,
                evicted: 0,
            })
        }
    }
}
