//! [`Backend`]: the asynchronous storage interface the ops run on, and [`MemoryBackend`],
//! its in-memory implementation over [`InMemoryStorage`].
//!
//! The interface is asynchronous and object-safe (`Arc<dyn Backend>`) so that remote
//! stores (Redis, PostgreSQL) implement the same trait; results are owned. Every change
//! goes out on a [`tokio::sync::broadcast`] channel as a [`ChangeEvent`] (the ids that
//! changed): watches and WebSocket pushes listen there, and a remote backend can feed the
//! same channel from Redis pub/sub or PostgreSQL `LISTEN/NOTIFY`, so writes made through
//! another process reach this one's watches.
//!
//! The in-memory backend keeps its state behind a [`std::sync::RwLock`], held only for the
//! synchronous store call and never across an `await`; its futures are ready when created.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use tokio::sync::broadcast;

use crate::filter::Filter;
use crate::store::{
    CommitOp, HisSample, HisWriteReport, InMemoryStorage, Storage, StoreError, entity_id,
};
use crate::value::{DateTime, Dict, Grid, Number, Ref, Value};

use super::point_write::{PriorityArray, PriorityEntry};
use super::rollup::{MAX_ROLLUP_SAMPLES, Rollup, RollupBucket, fold_samples};

/// A backend call in progress.
pub type BackendFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, BackendError>> + Send + 'a>>;

/// Changes kept for slow listeners before they lag (and then see a full refresh).
pub const CHANGE_CHANNEL_CAPACITY: usize = 1024;

/// Why a backend call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    /// The store refused the request.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The storage could not be reached (remote backends).
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// A shared watch request was refused.
    #[error(transparent)]
    Watch(#[from] super::watch::WatchError),
    /// The request asks for more work than this backend does in one call.
    #[error("{0}")]
    TooLarge(String),
}

/// Prefix of the ids of watches kept in a shared store (the local ones are `w-N`).
pub const SHARED_WATCH_PREFIX: &str = "sw-";

/// Users and login sessions kept in the store, so that every server process on it knows
/// the same users and accepts a bearer token issued by another. Users are kept as lines of
/// a users file (salted SCRAM keys, never passwords); sessions by the SHA-256 of their
/// token (hex), never the token itself.
pub trait SharedAuth: Send + Sync {
    /// Every stored user, as users-file lines.
    fn users(&self) -> BackendFuture<'_, Vec<String>>;
    /// Adds or replaces users (`name` → users-file line).
    fn put_users<'a>(&'a self, users: &'a [(String, String)]) -> BackendFuture<'a, ()>;
    /// Removes a user; returns whether it existed.
    fn remove_user<'a>(&'a self, name: &'a str) -> BackendFuture<'a, bool>;
    /// Records a session until `expires_ms`.
    fn put_session<'a>(
        &'a self,
        key: &'a str,
        user: &'a str,
        role: &'a str,
        expires_ms: i64,
    ) -> BackendFuture<'a, ()>;
    /// The user and role of a live session.
    fn session<'a>(
        &'a self,
        key: &'a str,
        now_ms: i64,
    ) -> BackendFuture<'a, Option<(String, String)>>;
    /// Ends a session.
    fn drop_session<'a>(&'a self, key: &'a str) -> BackendFuture<'a, ()>;
}

/// Watches kept in the store itself, so that any server process on it serves them: a
/// `watchSub` made through one process can be polled through another. A change marks
/// the watches holding the changed ids in the same atomic write as the change, so a poll
/// misses nothing and reports nothing twice. Used for HTTP watches; WebSocket watches
/// stay with their connection's process.
pub trait SharedWatches: Send + Sync {
    /// Opens a watch for `owner`; returns its id (starting with [`SHARED_WATCH_PREFIX`]).
    fn open<'a>(
        &'a self,
        owner: &'a str,
        dis: &'a str,
        lease_ms: i64,
        limits: &'a super::watch::WatchLimits,
        now_ms: i64,
    ) -> BackendFuture<'a, String>;
    /// Adds ids (at most `limits.max_ids_per_watch` in all); renews the lease and returns it.
    fn add<'a>(
        &'a self,
        watch: &'a str,
        owner: &'a str,
        ids: &'a [String],
        limits: &'a super::watch::WatchLimits,
        now_ms: i64,
    ) -> BackendFuture<'a, i64>;
    /// Removes ids.
    fn remove<'a>(
        &'a self,
        watch: &'a str,
        owner: &'a str,
        ids: &'a [String],
        now_ms: i64,
    ) -> BackendFuture<'a, ()>;
    /// Closes a watch.
    fn close<'a>(&'a self, watch: &'a str, owner: &'a str) -> BackendFuture<'a, ()>;
    /// The ids changed since the last poll (every id with `refresh`), in watch order.
    fn poll<'a>(
        &'a self,
        watch: &'a str,
        owner: &'a str,
        refresh: bool,
        now_ms: i64,
    ) -> BackendFuture<'a, Vec<String>>;
    /// Closes the watches whose lease ran out; returns how many.
    fn sweep(&self, now_ms: i64) -> BackendFuture<'_, usize>;
}

/// Entities that changed (added, updated, removed, commanded or historized). No ids means
/// that anything may have changed (a remote backend's change feed had a gap).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeEvent {
    /// Ids of the changed entities, without `@`.
    pub ids: Vec<String>,
    /// The backend's version after the change.
    pub version: u64,
}

/// Entity, history and priority-array storage as the ops need it.
pub trait Backend: Send + Sync {
    /// A short name for logs and `about` (`memory`).
    fn name(&self) -> &str;
    /// A number that grows with every change (cached responses are valid while it stays).
    fn version(&self) -> u64;
    /// Whether answers may be cached while [`Backend::version`] stays: true when this
    /// process sees every change as it happens (memory), false for stores that other
    /// processes write too.
    fn caches_responses(&self) -> bool {
        true
    }
    /// For a store other processes write too: its change counter, read from the store now
    /// (it grows in the same atomic write as every change). Answers are cached under it,
    /// so a read after another process's write never gets a stale cached answer. `None`
    /// (the default) when the store keeps no such counter.
    fn store_version(&self) -> BackendFuture<'_, Option<u64>> {
        Box::pin(std::future::ready(Ok(None)))
    }
    /// What `about` says of the storage (kind and, for remote stores, durability).
    fn describe(&self) -> String {
        self.name().to_owned()
    }
    /// Users and sessions kept in the store (shared by the server processes on it), if it
    /// keeps them.
    fn shared_auth(&self) -> Option<&dyn SharedAuth> {
        None
    }
    /// Watches kept in the store (shared by the server processes on it), if it keeps them.
    fn shared_watches(&self) -> Option<&dyn SharedWatches> {
        None
    }
    /// A listener for changes made from now on.
    fn subscribe(&self) -> broadcast::Receiver<Arc<ChangeEvent>>;
    /// Entities matching `filter`, at most `limit`.
    fn read<'a>(&'a self, filter: &'a Filter, limit: Option<usize>)
    -> BackendFuture<'a, Vec<Dict>>;
    /// Entities by id, `None` for unknown ids, in the order asked.
    fn read_by_ids<'a>(&'a self, ids: &'a [Ref]) -> BackendFuture<'a, Vec<Option<Dict>>>;
    /// Navigation children of an entity (a site's equips, an equip's points), or the roots
    /// (the sites) for `None`.
    fn nav_children<'a>(&'a self, parent: Option<&'a str>) -> BackendFuture<'a, Vec<Dict>>;
    /// Adds, updates or removes entities, all or nothing.
    fn commit(&self, op: CommitOp) -> BackendFuture<'_, Vec<Dict>>;
    /// At most `limit` samples of a historized point in `[start, end)`, oldest first.
    fn his_read<'a>(
        &'a self,
        id: &'a Ref,
        start: &'a DateTime,
        end: &'a DateTime,
        limit: usize,
    ) -> BackendFuture<'a, Vec<HisSample>>;
    /// Folds the samples of a historized point in `[start, end)` into buckets of the rollup
    /// that start at `start`, oldest first, at most `limit` buckets (see
    /// [`super::rollup`] for the rules). The default reads the samples and folds them here;
    /// PostgreSQL folds in SQL.
    fn his_rollup<'a>(
        &'a self,
        id: &'a Ref,
        start: &'a DateTime,
        end: &'a DateTime,
        rollup: Rollup,
        limit: usize,
    ) -> BackendFuture<'a, Vec<RollupBucket>> {
        Box::pin(async move {
            let samples = self
                .his_read(id, start, end, MAX_ROLLUP_SAMPLES.saturating_add(1))
                .await?;
            if samples.len() > MAX_ROLLUP_SAMPLES {
                return Err(BackendError::TooLarge(format!(
                    "a rollup folds at most {MAX_ROLLUP_SAMPLES} samples here; ask for a shorter range"
                )));
            }
            Ok(fold_samples(&samples, start, &rollup, limit))
        })
    }
    /// Writes samples to a historized point.
    fn his_write<'a>(
        &'a self,
        id: &'a Ref,
        samples: Vec<HisSample>,
    ) -> BackendFuture<'a, HisWriteReport>;
    /// A point's priority array (empty when never written).
    fn priority_array<'a>(&'a self, id: &'a Ref) -> BackendFuture<'a, PriorityArray>;
    /// Writes (`Some`) or releases (`None`) a level of a point's priority array, and sets
    /// the point's `writeVal` and `writeLevel` to the effective command at `now_ms`.
    fn point_write<'a>(
        &'a self,
        id: &'a Ref,
        level: u8,
        entry: Option<PriorityEntry>,
        now_ms: i64,
    ) -> BackendFuture<'a, PriorityArray>;
    /// Adds every row of a grid as an entity (bulk load).
    fn load<'a>(&'a self, grid: &'a Grid) -> BackendFuture<'a, usize>;
    /// Drops timed (level 8) commands that lapsed by `now_ms` and updates the points'
    /// `writeVal` and `writeLevel`; returns how many points changed. The server calls it
    /// every second.
    fn expire_writes(&self, now_ms: i64) -> BackendFuture<'_, usize>;
}

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
