//! [`MemoryBackend`]: the [`Backend`] kept in memory, over [`InMemoryStorage`] and the
//! priority arrays.
//!
//! The state is behind a [`std::sync::RwLock`], held only for the synchronous store call
//! and never across an `await`; the futures are ready when created.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use tokio::sync::broadcast;

use crate::filter::Filter;
use crate::store::{
    CommitOp, HisSample, HisWriteReport, InMemoryStorage, PriorityArray, PriorityEntry, StoreError,
    entity_id,
};
use crate::value::{DateTime, Dict, Grid, Number, Ref, Value};

use super::{Backend, BackendError, BackendFuture, CHANGE_CHANNEL_CAPACITY, ChangeEvent};

/// State of a [`MemoryBackend`].
#[derive(Debug, Default)]
pub(crate) struct MemoryState {
    pub(crate) storage: InMemoryStorage,
    pub(crate) arrays: HashMap<String, PriorityArray>,
}

/// [`Backend`] kept in memory: [`InMemoryStorage`] and the priority arrays behind a
/// read-write lock.
#[derive(Debug)]
pub struct MemoryBackend {
    state: RwLock<MemoryState>,
    version: AtomicU64,
    changes: broadcast::Sender<Arc<ChangeEvent>>,
}

impl Default for MemoryBackend {
    fn default() -> Self {
        Self::with_storage(InMemoryStorage::new())
    }
}

impl MemoryBackend {
    /// An empty backend.
    pub fn new() -> Self {
        Self::default()
    }

    /// A backend over existing storage (e.g. one with another history bound).
    pub fn with_storage(storage: InMemoryStorage) -> Self {
        let (changes, _) = broadcast::channel(CHANGE_CHANNEL_CAPACITY);
        Self {
            state: RwLock::new(MemoryState {
                storage,
                arrays: HashMap::new(),
            }),
            version: AtomicU64::new(0),
            changes,
        }
    }

    pub(crate) fn read_state(&self) -> RwLockReadGuard<'_, MemoryState> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn write_state(&self) -> RwLockWriteGuard<'_, MemoryState> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Number of entities.
    pub fn entity_count(&self) -> usize {
        self.read_state().storage.entities.len()
    }

    /// Adds every row of a grid (synchronously; see [`Backend::load`]).
    pub fn load_grid(&self, grid: &Grid) -> Result<usize, StoreError> {
        let result = self.write_state().storage.entities.load_grid(grid);
        let ids = (0..grid.row_count())
            .filter_map(|i| match grid.get(i, "id") {
                Some(Value::Ref(r)) => Some(r.id.clone()),
                _ => None,
            })
            .collect();
        self.changed(ids);
        result
    }

    /// Records a change: bumps the version and tells the listeners.
    pub(crate) fn changed(&self, ids: Vec<String>) {
        let version = self.version.fetch_add(1, Ordering::AcqRel) + 1;
        // No listener is not an error.
        let _ = self.changes.send(Arc::new(ChangeEvent { ids, version }));
    }

    fn do_commit(&self, op: CommitOp) -> Result<Vec<Dict>, BackendError> {
        let removed: Vec<String> = match &op {
            CommitOp::Remove(ids) => ids.iter().map(|(r, _)| r.id.clone()).collect(),
            _ => Vec::new(),
        };
        let out = {
            let mut state = self.write_state();
            let out = state.storage.commit(op)?;
            for id in &removed {
                state.arrays.remove(id);
            }
            out
        };
        let ids = out
            .iter()
            .filter_map(|d| entity_id(d).ok().map(str::to_owned))
            .collect();
        self.changed(ids);
        Ok(out)
    }

    fn do_his_read(
        &self,
        id: &Ref,
        start: &DateTime,
        end: &DateTime,
        limit: usize,
    ) -> Result<Vec<HisSample>, BackendError> {
        let state = self.read_state();
        let entity = state
            .storage
            .entities
            .get(&id.id)
            .ok_or_else(|| StoreError::UnknownId(id.id.clone()))?;
        if !entity.contains("his") {
            return Err(StoreError::NotHistorized(id.id.clone()).into());
        }
        Ok(state
            .storage
            .histories
            .read(id, start, end)
            .iter()
            .take(limit)
            .cloned()
            .collect())
    }

    fn do_his_write(
        &self,
        id: &Ref,
        samples: Vec<HisSample>,
    ) -> Result<HisWriteReport, BackendError> {
        let report = self.write_state().storage.his_write(id, samples)?;
        self.changed(vec![id.id.clone()]);
        Ok(report)
    }

    fn do_point_write(
        &self,
        id: &Ref,
        level: u8,
        entry: Option<PriorityEntry>,
        now_ms: i64,
    ) -> Result<PriorityArray, BackendError> {
        let array = {
            let mut state = self.write_state();
            if state.storage.entities.get(&id.id).is_none() {
                return Err(StoreError::UnknownId(id.id.clone()).into());
            }
            let mut array = state.arrays.remove(&id.id).unwrap_or_default();
            array.set(level, entry);
            array.expire(now_ms);
            apply_command(&mut state, id, array, now_ms)?
        };
        self.changed(vec![id.id.clone()]);
        Ok(array)
    }

    fn do_expire_writes(&self, now_ms: i64) -> Result<usize, BackendError> {
        let lapsed: Vec<String> = self
            .read_state()
            .arrays
            .iter()
            .filter(|(_, a)| a.has_lapsed(now_ms))
            .map(|(id, _)| id.clone())
            .collect();
        if lapsed.is_empty() {
            return Ok(0);
        }
        {
            let mut state = self.write_state();
            for id in &lapsed {
                if let Some(mut array) = state.arrays.remove(id) {
                    array.expire(now_ms);
                    apply_command(&mut state, &Ref::new(id.clone()), array, now_ms)?;
                }
            }
        }
        let count = lapsed.len();
        self.changed(lapsed);
        Ok(count)
    }
}

/// Stores a point's array and sets the point's `writeVal` and `writeLevel` to its
/// effective command (removing them when no level is written).
fn apply_command(
    state: &mut MemoryState,
    id: &Ref,
    array: PriorityArray,
    now_ms: i64,
) -> Result<PriorityArray, BackendError> {
    let (write_val, write_level) = match array.effective(now_ms) {
        Some((level, val)) => (val.clone(), Value::Number(Number::new(f64::from(level)))),
        None => (Value::Remove, Value::Remove),
    };
    let mut diff = Dict::new();
    let _ = diff.insert("id", Value::Ref(id.clone()));
    let _ = diff.insert("writeVal", write_val);
    let _ = diff.insert("writeLevel", write_level);
    if state.storage.entities.get(&id.id).is_some() {
        state.storage.entities.update(&diff, None)?;
    }
    if !array.is_empty() {
        state.arrays.insert(id.id.clone(), array.clone());
    }
    Ok(array)
}

fn ready<'a, T: Send + 'a>(result: Result<T, BackendError>) -> BackendFuture<'a, T> {
    Box::pin(std::future::ready(result))
}

impl Backend for MemoryBackend {
    fn name(&self) -> &str {
        "memory"
    }

    fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    fn subscribe(&self) -> broadcast::Receiver<Arc<ChangeEvent>> {
        self.changes.subscribe()
    }

    fn read<'a>(
        &'a self,
        filter: &'a Filter,
        limit: Option<usize>,
    ) -> BackendFuture<'a, Vec<Dict>> {
        let state = self.read_state();
        let rows = state
            .storage
            .entities
            .read(filter, limit)
            .into_iter()
            .cloned()
            .collect();
        ready(Ok(rows))
    }

    fn read_by_ids<'a>(&'a self, ids: &'a [Ref]) -> BackendFuture<'a, Vec<Option<Dict>>> {
        ready(
            self.read_state()
                .storage
                .read_by_ids(ids)
                .map_err(Into::into),
        )
    }

    fn nav_children<'a>(&'a self, parent: Option<&'a str>) -> BackendFuture<'a, Vec<Dict>> {
        let state = self.read_state();
        let rows = match parent {
            Some(id) => state
                .storage
                .entities
                .children(id)
                .into_iter()
                .cloned()
                .collect(),
            None => state
                .storage
                .entities
                .read(&Filter::Has(crate::filter::Path::tag("site")), None)
                .into_iter()
                .cloned()
                .collect(),
        };
        ready(Ok(rows))
    }

    fn commit(&self, op: CommitOp) -> BackendFuture<'_, Vec<Dict>> {
        ready(self.do_commit(op))
    }

    fn his_read<'a>(
        &'a self,
        id: &'a Ref,
        start: &'a DateTime,
        end: &'a DateTime,
        limit: usize,
    ) -> BackendFuture<'a, Vec<HisSample>> {
        ready(self.do_his_read(id, start, end, limit))
    }

    fn his_write<'a>(
        &'a self,
        id: &'a Ref,
        samples: Vec<HisSample>,
    ) -> BackendFuture<'a, HisWriteReport> {
        ready(self.do_his_write(id, samples))
    }

    fn priority_array<'a>(&'a self, id: &'a Ref) -> BackendFuture<'a, PriorityArray> {
        let state = self.read_state();
        let result = if state.storage.entities.get(&id.id).is_none() {
            Err(StoreError::UnknownId(id.id.clone()).into())
        } else {
            Ok(state.arrays.get(&id.id).cloned().unwrap_or_default())
        };
        ready(result)
    }

    fn point_write<'a>(
        &'a self,
        id: &'a Ref,
        level: u8,
        entry: Option<PriorityEntry>,
        now_ms: i64,
    ) -> BackendFuture<'a, PriorityArray> {
        ready(self.do_point_write(id, level, entry, now_ms))
    }

    fn load<'a>(&'a self, grid: &'a Grid) -> BackendFuture<'a, usize> {
        ready(self.load_grid(grid).map_err(Into::into))
    }

    fn expire_writes(&self, now_ms: i64) -> BackendFuture<'_, usize> {
        ready(self.do_expire_writes(now_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::zinc;
    use futures_util::FutureExt;

    fn backend() -> MemoryBackend {
        let b = MemoryBackend::new();
        let grid = zinc::decode_grid(
            "ver:\"3.0\"\nid,site,equip,point,writable,his,siteRef,equipRef,kind,tz\n\
             @s,M,,,,,,,,\n@e,,M,,,,@s,,,\n@p,,,M,M,M,@s,@e,\"Number\",\"UTC\"\n",
        )
        .unwrap();
        assert_eq!(b.load_grid(&grid), Ok(3));
        b
    }

    #[test]
    fn futures_are_ready_and_changes_are_broadcast() {
        let b = backend();
        let mut rx = b.subscribe();
        let v0 = b.version();
        let p = Ref::new("p");
        let entry = PriorityEntry {
            val: Value::number(70.0),
            who: "ann".into(),
            expires_ms: None,
        };
        let array = b
            .point_write(&p, 10, Some(entry), 0)
            .now_or_never()
            .unwrap()
            .unwrap();
        assert_eq!(array.effective(0).map(|(l, _)| l), Some(10));
        let event = rx.try_recv().unwrap();
        assert_eq!(event.ids, ["p"]);
        assert!(b.version() > v0);
        let p_dict = b
            .read_by_ids(std::slice::from_ref(&p))
            .now_or_never()
            .unwrap()
            .unwrap();
        let p_dict = p_dict[0].clone().unwrap();
        assert_eq!(p_dict.get("writeVal"), Some(&Value::number(70.0)));
        assert_eq!(p_dict.get("writeLevel"), Some(&Value::number(10.0)));
        // Releasing the only level removes writeVal and writeLevel.
        b.point_write(&p, 10, None, 0)
            .now_or_never()
            .unwrap()
            .unwrap();
        let p_dict = b
            .read_by_ids(std::slice::from_ref(&p))
            .now_or_never()
            .unwrap()
            .unwrap();
        assert!(!p_dict[0].as_ref().unwrap().contains("writeVal"));
        // A timed command lapses: the point falls back to the next level.
        let timed = PriorityEntry {
            val: Value::number(80.0),
            who: "ann".into(),
            expires_ms: Some(1_000),
        };
        let low = PriorityEntry {
            val: Value::number(60.0),
            who: "ann".into(),
            expires_ms: None,
        };
        b.point_write(&p, 16, Some(low), 0)
            .now_or_never()
            .unwrap()
            .unwrap();
        b.point_write(&p, 8, Some(timed), 0)
            .now_or_never()
            .unwrap()
            .unwrap();
        assert_eq!(b.expire_writes(999).now_or_never().unwrap(), Ok(0));
        assert_eq!(b.expire_writes(1_000).now_or_never().unwrap(), Ok(1));
        let p_dict = b
            .read_by_ids(std::slice::from_ref(&p))
            .now_or_never()
            .unwrap()
            .unwrap();
        assert_eq!(
            p_dict[0].as_ref().unwrap().get("writeVal"),
            Some(&Value::number(60.0))
        );
        b.point_write(&p, 16, None, 2_000)
            .now_or_never()
            .unwrap()
            .unwrap();
        let nav = b.nav_children(None).now_or_never().unwrap().unwrap();
        assert_eq!(nav.len(), 1);
        let equips = b.nav_children(Some("s")).now_or_never().unwrap().unwrap();
        assert_eq!(equips.len(), 1);
        let missing = b
            .point_write(&Ref::new("nope"), 8, None, 0)
            .now_or_never()
            .unwrap();
        assert!(matches!(
            missing,
            Err(BackendError::Store(StoreError::UnknownId(_)))
        ));
    }
}
