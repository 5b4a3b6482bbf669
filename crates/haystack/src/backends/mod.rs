//! Storage backends beyond memory: [`redis::RedisBackend`] over plain Redis 7 data
//! structures and [`postgres::PostgresBackend`] over PostgreSQL (with TimescaleDB
//! hypertables when the extension is installed). Both implement
//! [`crate::ops::Backend`], so every op runs unchanged on them.
//!
//! The shape shared by both (see [`common`]):
//! - entities are stored as Zinc dicts with an insertion sequence and a version, and
//!   indexed by terms (`h:TAG`, `e:TAG=s:TEXT`, `e:TAG=r:ID`);
//! - a read pushes the filter down as a [`common::Candidates`] expression over terms and
//!   evaluates the full filter on the candidates in the server (fetching the targets of
//!   `->` paths in rounds), so results and their order equal the in-memory store's;
//! - every write is atomic (a Lua script with compare-and-set in Redis, a transaction
//!   with row locks in PostgreSQL) and is acknowledged only after the store took it;
//! - every change is published (Redis pub/sub, PostgreSQL `NOTIFY`) so that watches in
//!   other server processes see it;
//! - a lost connection gives [`crate::ops::BackendError::Unavailable`] (an error grid)
//!   and the next call reconnects, with backoff.
//!
//! [`open`] picks a backend from a URL: `memory`, `redis://HOST:PORT[/DB]` or
//! `postgres://USER@HOST:PORT/DB`.

pub mod common;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "postgres")]
mod postgres_watches;
#[cfg(feature = "redis")]
pub mod redis;
#[cfg(feature = "redis")]
mod redis_watches;

use std::collections::HashMap;
use std::sync::Arc;

use crate::filter::{Filter, Path};
use crate::ops::{Backend, BackendError, BackendFuture, MemoryBackend};
use crate::store::StoreError;
use crate::value::{Dict, Ref, Value};

use common::{Candidates, MAX_PATH_ROUNDS, Prefetched, StoredEntity, has_paths};

/// Opens the backend a URL names: `memory`, `redis://...` or `postgres://...`.
///
/// ```no_run
/// # async fn demo() -> Result<(), buildwire_haystack::ops::BackendError> {
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

/// The fetch primitives a remote backend offers; the reads are built on them here, once.
pub(crate) trait Remote: Send + Sync {
    /// The entities in a candidate set (any order).
    fn candidates<'a>(&'a self, c: &'a Candidates) -> BackendFuture<'a, Vec<StoredEntity>>;
    /// Entities by id (`None` for unknown ids), in the order asked.
    fn fetch<'a>(&'a self, ids: &'a [String]) -> BackendFuture<'a, Vec<Option<StoredEntity>>>;
}

/// The [`Backend`] read methods of a [`Remote`] backend (`read`, `read_by_ids`,
/// `nav_children`), built on its fetch primitives.
macro_rules! remote_reads {
    () => {
        fn read<'a>(
            &'a self,
            filter: &'a $crate::filter::Filter,
            limit: Option<usize>,
        ) -> $crate::ops::BackendFuture<'a, Vec<$crate::value::Dict>> {
            Box::pin($crate::backends::read_filtered(self, filter, limit))
        }

        fn read_by_ids<'a>(
            &'a self,
            ids: &'a [$crate::value::Ref],
        ) -> $crate::ops::BackendFuture<'a, Vec<Option<$crate::value::Dict>>> {
            Box::pin($crate::backends::read_ids(self, ids))
        }

        fn nav_children<'a>(
            &'a self,
            parent: Option<&'a str>,
        ) -> $crate::ops::BackendFuture<'a, Vec<$crate::value::Dict>> {
            Box::pin($crate::backends::nav(self, parent))
        }
    };
}
pub(crate) use remote_reads;

/// A filtered read: candidates from the backend, the whole filter evaluated here, in
/// insertion order, at most `limit`.
pub(crate) async fn read_filtered<R: Remote + ?Sized>(
    remote: &R,
    filter: &Filter,
    limit: Option<usize>,
) -> Result<Vec<Dict>, BackendError> {
    let mut rows = remote.candidates(&Candidates::of(filter)).await?;
    rows.sort_by_key(|e| e.seq);
    let mut refs = Prefetched::default();
    if has_paths(filter) {
        for (id, e) in rows.iter().filter_map(|e| Some((common_id(&e.dict)?, e))) {
            refs.add(id, Some(e.dict.clone()));
        }
        for _ in 0..MAX_PATH_ROUNDS {
            for row in &rows {
                let _ = filter.matches(&row.dict, &refs);
            }
            let missing = refs.take_missing();
            if missing.is_empty() {
                break;
            }
            let found = remote.fetch(&missing).await?;
            for (id, e) in missing.into_iter().zip(found) {
                refs.add(id, e.map(|e| e.dict));
            }
        }
    }
    let max = limit.unwrap_or(usize::MAX);
    Ok(rows
        .into_iter()
        .filter(|e| filter.matches(&e.dict, &refs))
        .take(max)
        .map(|e| e.dict)
        .collect())
}

fn common_id(dict: &Dict) -> Option<String> {
    crate::store::entity_id(dict).ok().map(str::to_owned)
}

/// Entities by id for `readByIds`.
pub(crate) async fn read_ids<R: Remote + ?Sized>(
    remote: &R,
    ids: &[Ref],
) -> Result<Vec<Option<Dict>>, BackendError> {
    let ids: Vec<String> = ids.iter().map(|r| r.id.clone()).collect();
    Ok(remote
        .fetch(&ids)
        .await?
        .into_iter()
        .map(|e| e.map(|e| e.dict))
        .collect())
}

/// Navigation children, as the in-memory store defines them: a site's top-level equips,
/// an equip's points and sub-equips, a space's entities; the sites for `None`.
pub(crate) async fn nav<R: Remote + ?Sized>(
    remote: &R,
    parent: Option<&str>,
) -> Result<Vec<Dict>, BackendError> {
    let Some(id) = parent else {
        return read_filtered(remote, &Filter::Has(Path::tag("site")), None).await;
    };
    let ids = [id.to_owned()];
    let Some(Some(parent)) = remote.fetch(&ids).await?.into_iter().next() else {
        return Ok(Vec::new());
    };
    let via = |tag: &str| Filter::Cmp {
        path: Path::tag(tag),
        op: crate::filter::CmpOp::Eq,
        value: Value::Ref(Ref::new(id.to_owned())),
    };
    let filter = if parent.dict.contains("site") {
        Filter::And(vec![
            Filter::Has(Path::tag("equip")),
            via("siteRef"),
            Filter::Missing(Path::tag("equipRef")),
        ])
    } else if parent.dict.contains("equip") {
        via("equipRef")
    } else if parent.dict.contains("space") {
        via("spaceRef")
    } else {
        return Ok(Vec::new());
    };
    read_filtered(remote, &filter, None).await
}

/// The current entities of a commit's ids, keyed by id.
pub(crate) async fn current_of<R: Remote + ?Sized>(
    remote: &R,
    ids: &[String],
) -> Result<HashMap<String, Option<StoredEntity>>, BackendError> {
    let found = remote.fetch(ids).await?;
    Ok(ids.iter().cloned().zip(found).collect())
}

/// Rows of a grid as dicts, each checked for an id (the bulk load's validation).
pub(crate) fn grid_dicts(grid: &crate::value::Grid) -> Result<Vec<Dict>, StoreError> {
    let mut out = Vec::with_capacity(grid.row_count());
    for row in 0..grid.row_count() {
        let dict = grid.row_dict(row).unwrap_or_default();
        crate::store::entity_id(&dict).map_err(|error| StoreError::GridRow {
            row,
            error: Box::new(error),
        })?;
        out.push(dict);
    }
    Ok(out)
}

/// How many times a compare-and-set write is retried when another writer got there first.
pub(crate) const MAX_CAS_RETRIES: usize = 64;

/// An error for a stored record that does not decode (the store was written by something
/// else, or is damaged): reported, never a panic.
pub(crate) fn corrupt(what: impl std::fmt::Display) -> BackendError {
    BackendError::Unavailable(format!("corrupt stored data: {what}"))
}
