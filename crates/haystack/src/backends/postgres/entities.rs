//! Entities in PostgreSQL: rows of `bw_entities` (Zinc body, index terms, JSONB tags),
//! candidate sets as `WHERE` clauses over the terms, all-or-nothing commits and bulk loads
//! under row locks, and priority arrays in `bw_priority`.

use std::collections::HashMap;

use tokio_postgres::types::ToSql;
use tokio_postgres::{Row, Transaction};

use crate::backends::common::{
    self, Candidates, StoredEntity, apply_command, commit_ids, decode_array, encode_array,
    encode_dict, index_terms, next_expiry, plan_commit,
};
use crate::backends::{BackendError, BackendFuture, Remote, corrupt, grid_dicts};
use crate::store::{CommitOp, PriorityArray, StoreError};
use crate::value::{Dict, Grid, Value};

use super::{LOAD_CHUNK, PostgresBackend, db_error, notify};

pub(super) fn entity_of(row: &Row) -> Result<(String, StoredEntity), BackendError> {
    let id: String = row.try_get(0).map_err(db_error)?;
    let seq: i64 = row.try_get(1).map_err(db_error)?;
    let version: i64 = row.try_get(2).map_err(db_error)?;
    let body: String = row.try_get(3).map_err(db_error)?;
    let dict = common::decode_dict(&body).map_err(corrupt)?;
    Ok((
        id,
        StoredEntity {
            seq,
            version: u64::try_from(version).unwrap_or(0),
            dict,
        },
    ))
}

/// An entity's tags as Hayson (JSON v4), for the `tags` JSONB column.
fn hayson(dict: &Dict) -> String {
    crate::codec::json::hayson::encode_value(&Value::Dict(Box::new(dict.clone())))
}

/// A WHERE clause for a candidate set; its text parameters are pushed to `params`.
fn where_clause(c: &Candidates, params: &mut Vec<Vec<String>>) -> String {
    let terms_of = |items: &[Candidates]| -> Option<Vec<String>> {
        items
            .iter()
            .map(|i| match i {
                Candidates::Term(t) => Some(t.clone()),
                _ => None,
            })
            .collect()
    };
    match c {
        Candidates::All => "TRUE".to_owned(),
        Candidates::Term(t) => {
            params.push(vec![t.clone()]);
            format!("terms @> ${}", params.len())
        }
        Candidates::And(items) => match terms_of(items) {
            Some(terms) => {
                params.push(terms);
                format!("terms @> ${}", params.len())
            }
            None => {
                let parts: Vec<String> = items.iter().map(|i| where_clause(i, params)).collect();
                format!("({})", parts.join(" AND "))
            }
        },
        Candidates::Or(items) => match terms_of(items) {
            Some(terms) => {
                params.push(terms);
                format!("terms && ${}", params.len())
            }
            None => {
                let parts: Vec<String> = items.iter().map(|i| where_clause(i, params)).collect();
                format!("({})", parts.join(" OR "))
            }
        },
    }
}

async fn lock_entities(
    tx: &Transaction<'_>,
    ids: &[String],
) -> Result<HashMap<String, Option<StoredEntity>>, BackendError> {
    let rows = tx
        .query(
            "SELECT id, seq, version, body FROM bw_entities WHERE id = ANY($1) FOR UPDATE",
            &[&ids],
        )
        .await
        .map_err(db_error)?;
    let mut current: HashMap<String, Option<StoredEntity>> =
        ids.iter().map(|id| (id.clone(), None)).collect();
    for row in &rows {
        let (id, e) = entity_of(row)?;
        current.insert(id, Some(e));
    }
    Ok(current)
}

async fn store_entity(
    tx: &Transaction<'_>,
    id: &str,
    before: Option<&StoredEntity>,
    after: &StoredEntity,
) -> Result<(), BackendError> {
    let body = encode_dict(&after.dict);
    let json = hayson(&after.dict);
    let terms = index_terms(&after.dict);
    let version = i64::try_from(after.version).unwrap_or(i64::MAX);
    if before.is_some() {
        tx.execute(
            "UPDATE bw_entities SET version = $2, body = $3, terms = $4, tags = $5::text::jsonb
             WHERE id = $1",
            &[&id, &version, &body, &terms, &json],
        )
        .await
        .map_err(db_error)?;
    } else {
        let inserted = tx
            .execute(
                "INSERT INTO bw_entities (id, version, body, terms, tags)
                 VALUES ($1, $2, $3, $4, $5::text::jsonb)
                 ON CONFLICT (id) DO NOTHING",
                &[&id, &version, &body, &terms, &json],
            )
            .await
            .map_err(db_error)?;
        if inserted == 0 {
            return Err(StoreError::DuplicateId(id.to_owned()).into());
        }
    }
    Ok(())
}

/// Follows `bw_changes` on a connection of its own; other processes' changes go to this
impl PostgresBackend {
    pub(super) async fn fetch_entities(
        &self,
        ids: &[String],
    ) -> Result<Vec<Option<StoredEntity>>, BackendError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT id, seq, version, body FROM bw_entities WHERE id = ANY($1)",
                &[&ids],
            )
            .await
            .map_err(db_error)?;
        let mut found: HashMap<String, StoredEntity> = HashMap::with_capacity(rows.len());
        for row in &rows {
            let (id, e) = entity_of(row)?;
            found.insert(id, e);
        }
        Ok(ids.iter().map(|id| found.get(id).cloned()).collect())
    }

    pub(super) async fn do_commit(&self, op: CommitOp) -> Result<Vec<Dict>, BackendError> {
        let ids = commit_ids(&op)?;
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(db_error)?;
        let current = lock_entities(&tx, &ids).await?;
        let plan = plan_commit(op, &current, || 0)?;
        for (id, before, after) in &plan.writes {
            store_entity(&tx, id, before.as_ref(), after).await?;
        }
        let removed: Vec<String> = plan.removes.iter().map(|(id, _)| id.clone()).collect();
        if !removed.is_empty() {
            for table in [
                "bw_entities WHERE id",
                "bw_his WHERE point",
                "bw_priority WHERE id",
            ] {
                tx.execute(&format!("DELETE FROM {table} = ANY($1)"), &[&removed])
                    .await
                    .map_err(db_error)?;
            }
        }
        let changed = plan.ids();
        let version = self.next_version();
        notify(&tx, &self.origin, version, &changed).await?;
        tx.commit().await.map_err(db_error)?;
        self.announce(changed, version);
        Ok(plan.out)
    }

    pub(super) async fn do_load(&self, grid: &Grid) -> Result<usize, BackendError> {
        let dicts = grid_dicts(grid)?;
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(db_error)?;
        let mut ids_all = Vec::with_capacity(dicts.len());
        for chunk in dicts.chunks(LOAD_CHUNK) {
            let mut ids = Vec::with_capacity(chunk.len());
            let mut bodies = Vec::with_capacity(chunk.len());
            let mut terms = Vec::with_capacity(chunk.len());
            let mut jsons = Vec::with_capacity(chunk.len());
            for dict in chunk {
                jsons.push(hayson(dict));
                let id = crate::store::entity_id(dict)?.to_owned();
                ids.push(id);
                bodies.push(encode_dict(dict));
                // Arrays of arrays must be rectangular in PostgreSQL: terms go as one
                // tab-joined string each and are split in SQL.
                terms.push(index_terms(dict).join("\t"));
            }
            // A bulk load replaces an entity that exists (keeping its place in the order).
            tx.execute(
                "INSERT INTO bw_entities (id, version, body, terms, tags)
                 SELECT id, 1, body, CASE WHEN t = '' THEN '{}'::text[]
                                          ELSE string_to_array(t, E'\\t') END, j::jsonb
                 FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS u(id, body, t, j)
                 ON CONFLICT (id) DO UPDATE SET version = bw_entities.version + 1,
                     body = EXCLUDED.body, terms = EXCLUDED.terms, tags = EXCLUDED.tags",
                &[&ids, &bodies, &terms, &jsons],
            )
            .await
            .map_err(db_error)?;
            ids_all.extend(ids);
        }
        let version = self.next_version();
        notify(&tx, &self.origin, version, &ids_all).await?;
        tx.commit().await.map_err(db_error)?;
        let n = ids_all.len();
        self.announce(ids_all, version);
        Ok(n)
    }

    /// Changes a point's priority array and its `writeVal`/`writeLevel` in one transaction;
    /// `None` when the point does not exist.
    pub(super) async fn update_array(
        &self,
        id: &str,
        now_ms: i64,
        change: impl FnOnce(&mut PriorityArray),
    ) -> Result<Option<PriorityArray>, BackendError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(db_error)?;
        let ids = [id.to_owned()];
        let current = lock_entities(&tx, &ids).await?;
        let Some(Some(point)) = current.get(id).cloned() else {
            return Ok(None);
        };
        let row = tx
            .query_opt(
                "SELECT array_zinc FROM bw_priority WHERE id = $1 FOR UPDATE",
                &[&id],
            )
            .await
            .map_err(db_error)?;
        let mut array = match row {
            Some(row) => {
                let text: String = row.try_get(0).map_err(db_error)?;
                decode_array(&text).map_err(corrupt)?
            }
            None => PriorityArray::new(),
        };
        change(&mut array);
        array.expire(now_ms);
        let after = apply_command(point.clone(), &array, now_ms);
        store_entity(&tx, id, Some(&point), &after).await?;
        if array.is_empty() {
            tx.execute("DELETE FROM bw_priority WHERE id = $1", &[&id])
                .await
                .map_err(db_error)?;
        } else {
            let text = encode_array(&array);
            let expiry = next_expiry(&array);
            tx.execute(
                "INSERT INTO bw_priority (id, array_zinc, next_expiry) VALUES ($1, $2, $3)
                 ON CONFLICT (id) DO UPDATE SET array_zinc = EXCLUDED.array_zinc,
                     next_expiry = EXCLUDED.next_expiry",
                &[&id, &text, &expiry],
            )
            .await
            .map_err(db_error)?;
        }
        let version = self.next_version();
        let changed = vec![id.to_owned()];
        notify(&tx, &self.origin, version, &changed).await?;
        tx.commit().await.map_err(db_error)?;
        self.announce(changed, version);
        Ok(Some(array))
    }
}

impl Remote for PostgresBackend {
    fn candidates<'a>(&'a self, c: &'a Candidates) -> BackendFuture<'a, Vec<StoredEntity>> {
        Box::pin(async move {
            let mut params: Vec<Vec<String>> = Vec::new();
            let clause = where_clause(c, &mut params);
            let sql = format!("SELECT id, seq, version, body FROM bw_entities WHERE {clause}");
            let refs: Vec<&(dyn ToSql + Sync)> =
                params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
            let client = self.client().await?;
            let rows = client.query(&sql, &refs).await.map_err(db_error)?;
            rows.iter().map(|r| entity_of(r).map(|(_, e)| e)).collect()
        })
    }

    fn fetch<'a>(&'a self, ids: &'a [String]) -> BackendFuture<'a, Vec<Option<StoredEntity>>> {
        Box::pin(self.fetch_entities(ids))
    }
}
