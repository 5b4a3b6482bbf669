//! The reads of a remote backend (Redis, PostgreSQL), built once on its fetch primitives
//! ([`Remote`]): filtered reads with `->` paths resolved in rounds, reads by id,
//! navigation; and what their writes share.

use std::collections::HashMap;

use crate::filter::{Filter, Path};
use crate::store::StoreError;
use crate::value::{Dict, Ref, Value};

use super::common::{Candidates, MAX_PATH_ROUNDS, Prefetched, StoredEntity, has_paths};
use super::{BackendError, BackendFuture};

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
        ) -> $crate::backends::BackendFuture<'a, Vec<$crate::value::Dict>> {
            Box::pin($crate::backends::read_filtered(self, filter, limit))
        }

        fn read_by_ids<'a>(
            &'a self,
            ids: &'a [$crate::value::Ref],
        ) -> $crate::backends::BackendFuture<'a, Vec<Option<$crate::value::Dict>>> {
            Box::pin($crate::backends::read_ids(self, ids))
        }

        fn nav_children<'a>(
            &'a self,
            parent: Option<&'a str>,
        ) -> $crate::backends::BackendFuture<'a, Vec<$crate::value::Dict>> {
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
