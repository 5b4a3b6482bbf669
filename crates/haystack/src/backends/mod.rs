//! [`Backend`]: the asynchronous storage interface the ops run on (entities, histories,
//! priority arrays, a broadcast channel of [`ChangeEvent`]s), and its implementations:
//! [`MemoryBackend`] over [`crate::store::InMemoryStorage`], [`redis::RedisBackend`]
//! over plain Redis 7 data structures and [`postgres::PostgresBackend`] over PostgreSQL
//! (with TimescaleDB hypertables when the extension is installed). Every op runs
//! unchanged on each of them.
//!
//! The interface is object-safe (`Arc<dyn Backend>`) and its results are owned. Every
//! change goes out on a [`tokio::sync::broadcast`] channel: watches and WebSocket pushes
//! listen there, and a remote backend feeds the same channel from Redis pub/sub or
//! PostgreSQL `LISTEN/NOTIFY`, so writes made through another process reach this one's
//! watches. A store shared by several processes may also keep users, sessions and
//! watches for all of them ([`SharedAuth`], [`SharedWatches`]).
//!
//! The shape shared by the remote backends (see [`common`] and `remote.rs`):
//! - entities are stored as Zinc dicts with an insertion sequence and a version, and
//!   indexed by terms (`h:TAG`, `e:TAG=s:TEXT`, `e:TAG=r:ID`);
//! - a read pushes the filter down as a [`common::Candidates`] expression over terms and
//!   evaluates the full filter on the candidates in the server (fetching the targets of
//!   `->` paths in rounds), so results and their order equal the in-memory store's;
//! - every write is atomic (a Lua script with compare-and-set in Redis, a transaction
//!   with row locks in PostgreSQL) and is acknowledged only after the store took it;
//! - every change is published (Redis pub/sub, PostgreSQL `NOTIFY`) so that watches in
//!   other server processes see it;
//! - a lost connection gives [`BackendError::Unavailable`] (an error grid)
//!   and the next call reconnects, with backoff.
//!
//! [`open`] picks a backend from a URL: `memory`, `redis://HOST:PORT[/DB]` or
//! `postgres://USER@HOST:PORT/DB`.

pub mod common;
mod memory;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "redis")]
pub mod redis;
#[cfg(any(feature = "redis", feature = "postgres"))]
mod remote;
mod shared;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tokio::sync::broadcast;

use crate::filter::Filter;
use crate::store::{
    CommitOp, HisSample, HisWriteReport, MAX_ROLLUP_SAMPLES, PriorityArray, PriorityEntry, Rollup,
    RollupBucket, StoreError, fold_samples,
};
use crate::value::{DateTime, Dict, Grid, Ref};

pub use memory::MemoryBackend;
#[cfg(any(feature = "redis", feature = "postgres"))]
pub(crate) use remote::{
    MAX_CAS_RETRIES, Remote, corrupt, current_of, grid_dicts, nav, read_filtered, read_ids,
    remote_reads,
};
pub use shared::{SHARED_WATCH_PREFIX, SharedAuth, SharedWatches, WatchError, WatchLimits};

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
    Watch(#[from] WatchError),
    /// The request asks for more work than this backend does in one call.
    #[error("{0}")]
    TooLarge(String),
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
    /// [`crate::store::fold_samples`] for the rules). The default reads the samples and folds them here;
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

/// Opens the backend a URL names: `memory`, `redis://...` or `postgres://...`.
///
/// ```no_run
/// # async fn demo() -> Result<(), buildwire_haystack::backends::BackendError> {
/// let backend = buildwire_haystack::backends::open("redis://127.0.0.1:6379").await?;
/// assert_eq!(backend.name(), "redis");
/// # Ok(()) }
/// ```
pub async fn open(url: &str) -> Result<Arc<dyn Backend>, BackendError> {
    if url == "memory" || url.is_empty() {
        return Ok(Arc::new(MemoryBackend::new()));
    }
    if url.starts_with("redis://") || url.starts_with("rediss://") {
        #[cfg(feature = "redis")]
        return Ok(Arc::new(redis::RedisBackend::connect(url).await?));
        #[cfg(not(feature = "redis"))]
        return Err(BackendError::Unavailable(
            "this build has no Redis backend (feature `redis`)".into(),
        ));
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        #[cfg(feature = "postgres")]
        return Ok(Arc::new(postgres::PostgresBackend::connect(url).await?));
        #[cfg(not(feature = "postgres"))]
        return Err(BackendError::Unavailable(
            "this build has no PostgreSQL backend (feature `postgres`)".into(),
        ));
    }
    Err(BackendError::Unavailable(format!(
        "unknown backend {url:?}: use memory, redis://HOST:PORT or postgres://USER@HOST:PORT/DB"
    )))
}
