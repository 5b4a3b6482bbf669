//! The Haystack side: [`GatewayBackend`] is the configured storage backend with
//! `pointWrite` going to the devices first. The Haystack server (read, nav, hisRead,
//! watches, pointWrite) runs on it unchanged: reads and histories come from the backend,
//! watches from its change events (the collector's commits), and a write reaches the
//! stored priority array only after the device accepted it.
//!
//! | Haystack `pointWrite` | BACnet |
//! |---|---|
//! | level 1-16, a value | WriteProperty present-value with that priority |
//! | level 1-16, null | WriteProperty NULL with that priority (relinquish) |
//! | level 17, a value | WriteProperty relinquish-default |
//! | level 17, null | refused (relinquish-default has no NULL) |
//! | level 8 with a duration | as level 8; when it lapses the gateway relinquishes level 8 |

use std::collections::HashMap;
use std::net::SocketAddrV4;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use buildwire_bacnet::driver::BacnetClient;
use buildwire_bacnet::encoding::{ApplicationValue, Element};
use buildwire_bacnet::enums::PropertyIdentifier as P;
use buildwire_bacnet::network::DeviceAddress;
use buildwire_haystack::backends::{
    Backend, BackendError, BackendFuture, ChangeEvent, SharedAuth, SharedWatches,
};
use buildwire_haystack::filter::Filter;
use buildwire_haystack::store::{
    CommitOp, HisSample, HisWriteReport, PriorityArray, PriorityEntry, Rollup, RollupBucket,
    TIMED_LEVEL,
};
use buildwire_haystack::value::{DateTime, Dict, Grid, Ref};
use tokio::sync::broadcast;

use crate::model::PointValue;

/// Where a writable point lives.
#[derive(Debug, Clone)]
pub struct WriteTarget {
    /// The device's address.
    pub address: DeviceAddress<SocketAddrV4>,
    /// The device instance (for messages).
    pub instance: u32,
    /// The point.
    pub point: PointValue,
}

/// The backend the gateway's Haystack server runs on.
pub struct GatewayBackend {
    inner: Arc<dyn Backend>,
    client: Arc<BacnetClient>,
    targets: RwLock<HashMap<String, WriteTarget>>,
    /// Timed level-8 writes: point id and when they lapse.
    timed: Mutex<HashMap<String, i64>>,
}

impl std::fmt::Debug for GatewayBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayBackend")
            .field("inner", &self.inner.name())
            .finish_non_exhaustive()
    }
}

impl GatewayBackend {
    /// Wraps `inner`; `targets` are the writable points by id.
    pub fn new(
        inner: Arc<dyn Backend>,
        client: Arc<BacnetClient>,
        targets: HashMap<String, WriteTarget>,
    ) -> Self {
        Self {
            inner,
            client,
            targets: RwLock::new(targets),
            timed: Mutex::new(HashMap::new()),
        }
    }

    /// The wrapped backend.
    pub fn inner(&self) -> &Arc<dyn Backend> {
        &self.inner
    }

    fn target(&self, id: &str) -> Option<WriteTarget> {
        self.targets
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
    }

    /// Writes a level to the device: see the module's table.
    async fn write_device(
        &self,
        target: &WriteTarget,
        level: u8,
        entry: Option<&PriorityEntry>,
    ) -> Result<(), BackendError> {
        let object = target.point.object;
        let refused = |message: String| {
            BackendError::Unavailable(format!(
                "device {} refused the write of {object}: {message}",
                target.instance
            ))
        };
        let value = match entry {
            Some(entry) => target.point.bacnet(&entry.val).map_err(refused)?,
            None if level == 17 => {
                return Err(refused(
                    "level 17 is the relinquish-default, which cannot be released; write a value"
                        .to_owned(),
                ));
            }
            None => Element::Application(ApplicationValue::Null),
        };
        let (property, priority) = if level == 17 {
            (P::RelinquishDefault, None)
        } else {
            (P::PresentValue, Some(level))
        };
        self.client
            .write(
                target.address,
                object,
                property,
                vec![value],
                priority,
                None,
            )
            .await
            .map_err(|e| refused(e.to_string()))
    }
}

impl Backend for GatewayBackend {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn version(&self) -> u64 {
        self.inner.version()
    }
    fn caches_responses(&self) -> bool {
        self.inner.caches_responses()
    }
    fn store_version(&self) -> BackendFuture<'_, Option<u64>> {
        self.inner.store_version()
    }
    fn describe(&self) -> String {
        format!(
            "{} (buildwire gateway: pointWrite goes to BACnet)",
            self.inner.describe()
        )
    }
    fn shared_auth(&self) -> Option<&dyn SharedAuth> {
        self.inner.shared_auth()
    }
    fn shared_watches(&self) -> Option<&dyn SharedWatches> {
        self.inner.shared_watches()
    }
    fn subscribe(&self) -> broadcast::Receiver<Arc<ChangeEvent>> {
        self.inner.subscribe()
    }
    fn read<'a>(
        &'a self,
        filter: &'a Filter,
        limit: Option<usize>,
    ) -> BackendFuture<'a, Vec<Dict>> {
        self.inner.read(filter, limit)
    }
    fn read_by_ids<'a>(&'a self, ids: &'a [Ref]) -> BackendFuture<'a, Vec<Option<Dict>>> {
        self.inner.read_by_ids(ids)
    }
    fn nav_children<'a>(&'a self, parent: Option<&'a str>) -> BackendFuture<'a, Vec<Dict>> {
        self.inner.nav_children(parent)
    }
    fn commit(&self, op: CommitOp) -> BackendFuture<'_, Vec<Dict>> {
        self.inner.commit(op)
    }
    fn his_read<'a>(
        &'a self,
        id: &'a Ref,
        start: &'a DateTime,
        end: &'a DateTime,
        limit: usize,
    ) -> BackendFuture<'a, Vec<HisSample>> {
        self.inner.his_read(id, start, end, limit)
    }
    fn his_rollup<'a>(
        &'a self,
        id: &'a Ref,
        start: &'a DateTime,
        end: &'a DateTime,
        rollup: Rollup,
        limit: usize,
    ) -> BackendFuture<'a, Vec<RollupBucket>> {
        self.inner.his_rollup(id, start, end, rollup, limit)
    }
    fn his_write<'a>(
        &'a self,
        id: &'a Ref,
        samples: Vec<HisSample>,
    ) -> BackendFuture<'a, HisWriteReport> {
        self.inner.his_write(id, samples)
    }
    fn priority_array<'a>(&'a self, id: &'a Ref) -> BackendFuture<'a, PriorityArray> {
        self.inner.priority_array(id)
    }
    fn point_write<'a>(
        &'a self,
        id: &'a Ref,
        level: u8,
        entry: Option<PriorityEntry>,
        now_ms: i64,
    ) -> BackendFuture<'a, PriorityArray> {
        Box::pin(async move {
            if let Some(target) = self.target(&id.id) {
                self.write_device(&target, level, entry.as_ref()).await?;
                let mut timed = self.timed.lock().unwrap_or_else(PoisonError::into_inner);
                match entry.as_ref().and_then(|e| e.expires_ms) {
                    Some(expires) if level == TIMED_LEVEL => {
                        timed.insert(id.id.clone(), expires);
                    }
                    _ if level == TIMED_LEVEL => {
                        timed.remove(&id.id);
                    }
                    _ => {}
                }
            }
            self.inner.point_write(id, level, entry, now_ms).await
        })
    }
    fn load<'a>(&'a self, grid: &'a Grid) -> BackendFuture<'a, usize> {
        self.inner.load(grid)
    }
    fn expire_writes(&self, now_ms: i64) -> BackendFuture<'_, usize> {
        Box::pin(async move {
            let lapsed: Vec<String> = {
                let mut timed = self.timed.lock().unwrap_or_else(PoisonError::into_inner);
                let ids: Vec<String> = timed
                    .iter()
                    .filter(|(_, expires)| **expires <= now_ms)
                    .map(|(id, _)| id.clone())
                    .collect();
                for id in &ids {
                    timed.remove(id);
                }
                ids
            };
            for id in lapsed {
                if let Some(target) = self.target(&id)
                    && let Err(error) = self.write_device(&target, TIMED_LEVEL, None).await
                {
                    log::warn!("relinquishing the lapsed level 8 of @{id}: {error}");
                }
            }
            self.inner.expire_writes(now_ms).await
        })
    }
}
