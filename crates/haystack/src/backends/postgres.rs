//! [`PostgresBackend`]: entities, histories and priority arrays in PostgreSQL, shared by
//! any number of server processes.
//!
//! Tables (created and upgraded by versioned migrations, see [`MIGRATIONS`]):
//! - `bw_entities(id, seq, version, body, terms, tags)`: the Zinc dict (read back exactly),
//!   its insertion order and version, its index terms in a `text[]` with a GIN index, so a
//!   filter's [`Candidates`] become `terms @> ARRAY[...]` (and) and `terms && ARRAY[...]`
//!   (or), and the same tags as JSONB (Hayson) for SQL users;
//! - `bw_his(point, ts, sub_us, sample, num)`: one row per sample keyed by point and time
//!   (`sub_us` keeps the nanoseconds below PostgreSQL's microseconds, `sample` the exact
//!   Zinc timestamp and value, `num` the number for SQL users). With the TimescaleDB
//!   extension installed it is a hypertable on `ts`; without it, a plain table. The log and
//!   `about` say which;
//! - `bw_priority(id, array, next_expiry)`: priority arrays and when a timed level lapses;
//! - `bw_schema(version, description, applied_at)`: the migrations applied.
//!
//! Every write is one transaction that locks the rows it reads (`FOR UPDATE`), so nothing
//! is half-written and concurrent writers from other processes serialize. Changes are
//! announced with `NOTIFY bw_changes` inside the transaction (delivered at commit), and a
//! connection of its own `LISTEN`s for other processes' changes, reconnecting with
//! backoff. Connections come from a pool (deadpool) that replaces broken ones, so after
//! the database restarts the next request reconnects; meanwhile requests get error grids.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use futures_util::StreamExt;
use tokio::sync::broadcast;
use tokio_postgres::types::ToSql;
use tokio_postgres::{AsyncMessage, NoTls, Row, Transaction};

use crate::ops::{
    Backend, BackendError, BackendFuture, CHANGE_CHANNEL_CAPACITY, ChangeEvent, HisFold,
    PriorityArray, PriorityEntry, Rollup, RollupBucket,
};
use crate::store::{CommitOp, HisSample, HisWriteReport, StoreError};
use crate::value::{DateTime, Dict, Grid, Ref, Value};

use super::common::{
    self, Candidates, StoredEntity, apply_command, commit_ids, decode_array, decode_change,
    encode_array, encode_change, encode_dict, index_terms, instant_us, next_expiry, plan_commit,
};
use super::{Remote, corrupt, grid_dicts};

/// The notification channel.
const CHANNEL: &str = "bw_changes";
/// Largest notification payload sent (PostgreSQL's limit is 8,000 bytes).
const MAX_NOTIFY_BYTES: usize = 7_000;
/// Connections in the pool.
const POOL_SIZE: usize = 16;
/// Rows per bulk-load statement.
const LOAD_CHUNK: usize = 1000;

/// The schema, one migration per version, applied in order and recorded in `bw_schema`.
pub const MIGRATIONS: &[(i32, &str, &str)] = &[
    (
        1,
        "entities, histories, priority arrays",
        "CREATE TABLE bw_entities (
         id text PRIMARY KEY,
         seq bigserial NOT NULL,
         version bigint NOT NULL,
         body text NOT NULL,
         terms text[] NOT NULL
     );
     CREATE INDEX bw_entities_terms ON bw_entities USING gin (terms);
     CREATE INDEX bw_entities_seq ON bw_entities (seq);
     CREATE TABLE bw_his (
         point text NOT NULL,
         ts timestamptz NOT NULL,
         sub_us integer NOT NULL,
         sample text NOT NULL,
         num double precision,
         PRIMARY KEY (point, ts, sub_us)
     );
     CREATE TABLE bw_priority (
         id text PRIMARY KEY,
         array_zinc text NOT NULL,
         next_expiry bigint
     );
     CREATE INDEX bw_priority_expiry ON bw_priority (next_expiry)
         WHERE next_expiry IS NOT NULL;",
    ),
    (
        2,
        "entities as JSONB (Hayson) for SQL users",
        "ALTER TABLE bw_entities ADD COLUMN tags jsonb;",
    ),
    (
        3,
        "HTTP watches shared by the server processes",
        // No foreign key on bw_watch_dirty: a writer marking a watch that is being closed
        // must not fail; closing and sweeping delete the marks.
        "CREATE TABLE bw_watches (
             id text PRIMARY KEY,
             owner text NOT NULL,
             dis text NOT NULL,
             lease_ms bigint NOT NULL,
             expires_ms bigint NOT NULL
         );
         CREATE INDEX bw_watches_owner ON bw_watches (owner);
         CREATE INDEX bw_watches_expires ON bw_watches (expires_ms);
         CREATE TABLE bw_watch_ids (
             watch text NOT NULL REFERENCES bw_watches (id) ON DELETE CASCADE,
             entity text NOT NULL,
             ord bigserial,
             PRIMARY KEY (watch, entity)
         );
         CREATE INDEX bw_watch_ids_entity ON bw_watch_ids (entity);
         CREATE TABLE bw_watch_dirty (
             watch text NOT NULL,
             entity text NOT NULL,
             PRIMARY KEY (watch, entity)
         );",
    ),
    (
        4,
        "users and login sessions shared by the server processes",
        "CREATE TABLE bw_users (name text PRIMARY KEY, line text NOT NULL);
         CREATE TABLE bw_sessions (
             key text PRIMARY KEY,
             username text NOT NULL,
             role text NOT NULL,
             expires_ms bigint NOT NULL
         );
         CREATE INDEX bw_sessions_expires ON bw_sessions (expires_ms);",
    ),
    (
        5,
        "a change counter for cached answers",
        // One row, updated by every writing transaction just before it commits: readers
        // see a committed count (a sequence would show uncommitted increments).
        "CREATE TABLE bw_version (
             one boolean PRIMARY KEY DEFAULT true CHECK (one),
             v bigint NOT NULL
         );
         INSERT INTO bw_version VALUES (true, 0);",
    ),
];

/// Storage in PostgreSQL.
pub struct PostgresBackend {
    pool: Pool,
    origin: String,
    version: Arc<AtomicU64>,
    changes: broadcast::Sender<Arc<ChangeEvent>>,
    storage: HisStorage,
    listener: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for PostgresBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresBackend")
            .field("storage", &self.storage)
            .finish_non_exhaustive()
    }
}

impl Drop for PostgresBackend {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

pub(super) fn db_error(e: tokio_postgres::Error) -> BackendError {
    if let Some(db) = e.as_db_error()
        && db.code() == &tokio_postgres::error::SqlState::UNIQUE_VIOLATION
    {
        return BackendError::Unavailable(format!(
            "postgres: a concurrent writer added the same id ({})",
            db.message()
        ));
    }
    BackendError::Unavailable(format!(
        "postgres: {e} (is the database running and reachable? the next request reconnects)"
    ))
}

fn pool_error(e: deadpool_postgres::PoolError) -> BackendError {
    BackendError::Unavailable(format!(
        "postgres: no connection ({e}); is the database running? the next request retries"
    ))
}

fn entity_of(row: &Row) -> Result<(String, StoredEntity), BackendError> {
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

async fn notify(
    tx: &Transaction<'_>,
    origin: &str,
    version: u64,
    ids: &[String],
) -> Result<(), BackendError> {
    // Shared watches holding a changed id see it at their next poll (same transaction).
    tx.execute(
        "INSERT INTO bw_watch_dirty (watch, entity)
         SELECT watch, entity FROM bw_watch_ids WHERE entity = ANY($1)
         ON CONFLICT DO NOTHING",
        &[&ids],
    )
    .await
    .map_err(db_error)?;
    tx.execute("UPDATE bw_version SET v = v + 1", &[])
        .await
        .map_err(db_error)?;
    for batch in common::change_batches(ids, MAX_NOTIFY_BYTES) {
        let payload = encode_change(origin, version, &batch);
        tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &payload])
            .await
            .map_err(db_error)?;
    }
    Ok(())
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
/// process's listeners. Reconnects with backoff, and after a gap tells every listener
/// that anything may have changed (an event without ids).
async fn listen(
    config: tokio_postgres::Config,
    origin: String,
    version: Arc<AtomicU64>,
    changes: broadcast::Sender<Arc<ChangeEvent>>,
) {
    let mut delay = Duration::from_millis(50);
    let mut first = true;
    loop {
        if let Ok((client, mut connection)) = config.connect(NoTls).await {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
            let driver = tokio::spawn(async move {
                let mut messages =
                    futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
                while let Some(message) = messages.next().await {
                    match message {
                        Ok(AsyncMessage::Notification(n)) => {
                            if tx.send(n.payload().to_owned()).is_err() {
                                break;
                            }
                        }
                        Ok(_) => {}
                        Err(_) => break,
                    }
                }
            });
            if client
                .batch_execute(&format!("LISTEN {CHANNEL}"))
                .await
                .is_ok()
            {
                delay = Duration::from_millis(50);
                if !first {
                    let v = version.fetch_add(1, Ordering::AcqRel) + 1;
                    let _ = changes.send(Arc::new(ChangeEvent {
                        ids: Vec::new(),
                        version: v,
                    }));
                }
                first = false;
                while let Some(payload) = rx.recv().await {
                    let Some((from, ids)) = decode_change(&payload) else {
                        continue;
                    };
                    if from == origin {
                        continue;
                    }
                    let v = version.fetch_add(1, Ordering::AcqRel) + 1;
                    let _ = changes.send(Arc::new(ChangeEvent { ids, version: v }));
                }
            }
            driver.abort();
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(Duration::from_secs(2));
    }
}

impl PostgresBackend {
    /// Connects (`postgres://USER[:PASSWORD]@HOST:PORT/DB`), applies pending migrations,
    /// turns histories into a hypertable when TimescaleDB is installed, and starts
    /// listening for other processes' changes.
    pub async fn connect(url: &str) -> Result<PostgresBackend, BackendError> {
        let mut config: tokio_postgres::Config = url.parse().map_err(|e| {
            BackendError::Unavailable(format!(
                "bad PostgreSQL URL {url:?}: {e} (use postgres://USER@HOST:PORT/DB)"
            ))
        })?;
        config.connect_timeout(Duration::from_secs(5));
        config.application_name("buildwire-haystack");
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Verified,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(Duration::from_secs(10)))
            .create_timeout(Some(Duration::from_secs(5)))
            .recycle_timeout(Some(Duration::from_secs(5)))
            .build()
            .map_err(|e| BackendError::Unavailable(format!("postgres pool: {e}")))?;
        let storage = migrate(&pool).await?;
        eprintln!(
            "haystack storage: postgres {}: histories in {}",
            config.get_dbname().unwrap_or("?"),
            storage.describe()
        );
        let (changes, _) = broadcast::channel(CHANGE_CHANNEL_CAPACITY);
        let origin = common::origin_id();
        let version = Arc::new(AtomicU64::new(0));
        let listener = tokio::spawn(listen(
            config,
            origin.clone(),
            version.clone(),
            changes.clone(),
        ));
        Ok(PostgresBackend {
            pool,
            origin,
            version,
            changes,
            storage,
            listener,
        })
    }

    /// Whether histories live in a TimescaleDB hypertable.
    pub fn timescale(&self) -> bool {
        self.storage == HisStorage::Hypertable
    }

    pub(super) async fn client(&self) -> Result<deadpool_postgres::Object, BackendError> {
        self.pool.get().await.map_err(pool_error)
    }

    fn next_version(&self) -> u64 {
        self.version.fetch_add(1, Ordering::AcqRel) + 1
    }

    fn announce(&self, ids: Vec<String>, version: u64) {
        let _ = self.changes.send(Arc::new(ChangeEvent { ids, version }));
    }

    async fn fetch_entities(
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

    async fn do_commit(&self, op: CommitOp) -> Result<Vec<Dict>, BackendError> {
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

    async fn do_load(&self, grid: &Grid) -> Result<usize, BackendError> {
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
    async fn update_array(
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

    async fn do_his_write(
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
    async fn check_historized(&self, id: &Ref) -> Result<(), BackendError> {
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

    async fn do_his_read(
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
    /// [`crate::ops::rollup`] ask). Numeric folds use the `num` column (Numbers, and Bools
    /// as 1 and 0) without NaN; `first` and `last` return the stored sample.
    async fn do_his_rollup(
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

/// Where histories live.
#[derive(Debug, Clone, PartialEq, Eq)]
enum HisStorage {
    /// A TimescaleDB hypertable (rollups with `time_bucket`).
    Hypertable,
    /// A plain table (rollups with `date_bin`), and why.
    Plain(String),
}

impl HisStorage {
    fn describe(&self) -> String {
        match self {
            HisStorage::Hypertable => {
                "a TimescaleDB hypertable (rollups with time_bucket)".to_owned()
            }
            HisStorage::Plain(why) => format!("a plain table, rollups with date_bin ({why})"),
        }
    }
}

/// Applies the migrations not yet recorded, under an advisory lock (several processes may
/// start at once), and makes `bw_his` a hypertable when TimescaleDB is available.
/// Returns where histories live.
async fn migrate(pool: &Pool) -> Result<HisStorage, BackendError> {
    let mut client = pool.get().await.map_err(pool_error)?;
    let tx = client.transaction().await.map_err(db_error)?;
    tx.batch_execute(
        "SELECT pg_advisory_xact_lock(7362841);
         CREATE TABLE IF NOT EXISTS bw_schema (
             version integer PRIMARY KEY,
             description text NOT NULL,
             applied_at timestamptz NOT NULL DEFAULT now()
         );",
    )
    .await
    .map_err(db_error)?;
    let row = tx
        .query_one("SELECT coalesce(max(version), 0) FROM bw_schema", &[])
        .await
        .map_err(db_error)?;
    let applied: i32 = row.try_get(0).map_err(db_error)?;
    for (version, description, sql) in MIGRATIONS {
        if *version <= applied {
            continue;
        }
        tx.batch_execute(sql).await.map_err(db_error)?;
        tx.execute(
            "INSERT INTO bw_schema (version, description) VALUES ($1, $2)",
            &[version, description],
        )
        .await
        .map_err(db_error)?;
    }
    let available = tx
        .query_opt(
            "SELECT 1 FROM pg_available_extensions WHERE name = 'timescaledb'",
            &[],
        )
        .await
        .map_err(db_error)?
        .is_some();
    let preloaded: String = tx
        .query_one("SELECT current_setting('shared_preload_libraries')", &[])
        .await
        .map_err(db_error)?
        .try_get(0)
        .map_err(db_error)?;
    let storage = if !available {
        HisStorage::Plain("TimescaleDB is not installed".to_owned())
    } else if !preloaded.contains("timescaledb") {
        // Installed but not loaded: CREATE EXTENSION would fail, so stay on a plain table
        // and say how to enable it rather than refuse to start.
        HisStorage::Plain(
            "TimescaleDB is installed but not loaded; add it to shared_preload_libraries \
             in postgresql.conf and restart PostgreSQL to use a hypertable"
                .to_owned(),
        )
    } else {
        tx.batch_execute("SAVEPOINT bw_timescale")
            .await
            .map_err(db_error)?;
        let made = tx
            .batch_execute(
                "CREATE EXTENSION IF NOT EXISTS timescaledb;
                 SELECT create_hypertable('bw_his', 'ts', if_not_exists => TRUE,
                                          migrate_data => TRUE);",
            )
            .await;
        match made {
            Ok(()) => {
                tx.batch_execute("RELEASE SAVEPOINT bw_timescale")
                    .await
                    .map_err(db_error)?;
                HisStorage::Hypertable
            }
            Err(e) => {
                tx.batch_execute("ROLLBACK TO SAVEPOINT bw_timescale")
                    .await
                    .map_err(db_error)?;
                HisStorage::Plain(format!("TimescaleDB could not be used: {e}"))
            }
        }
    };
    tx.commit().await.map_err(db_error)?;
    Ok(storage)
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

impl Backend for PostgresBackend {
    fn name(&self) -> &str {
        "postgres"
    }

    fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    fn caches_responses(&self) -> bool {
        false
    }

    fn store_version(&self) -> BackendFuture<'_, Option<u64>> {
        Box::pin(async move {
            let client = self.client().await?;
            let row = client
                .query_one("SELECT v FROM bw_version", &[])
                .await
                .map_err(db_error)?;
            let v: i64 = row.try_get(0).map_err(db_error)?;
            Ok(Some(u64::try_from(v).unwrap_or(0)))
        })
    }

    fn describe(&self) -> String {
        format!("postgres (histories in {})", self.storage.describe())
    }

    fn subscribe(&self) -> broadcast::Receiver<Arc<ChangeEvent>> {
        self.changes.subscribe()
    }

    fn shared_watches(&self) -> Option<&dyn crate::ops::SharedWatches> {
        Some(self)
    }

    fn shared_auth(&self) -> Option<&dyn crate::ops::SharedAuth> {
        Some(self)
    }

    super::remote_reads!();

    fn commit(&self, op: CommitOp) -> BackendFuture<'_, Vec<Dict>> {
        Box::pin(self.do_commit(op))
    }

    fn his_read<'a>(
        &'a self,
        id: &'a Ref,
        start: &'a DateTime,
        end: &'a DateTime,
        limit: usize,
    ) -> BackendFuture<'a, Vec<HisSample>> {
        Box::pin(self.do_his_read(id, start, end, limit))
    }

    fn his_rollup<'a>(
        &'a self,
        id: &'a Ref,
        start: &'a DateTime,
        end: &'a DateTime,
        rollup: Rollup,
        limit: usize,
    ) -> BackendFuture<'a, Vec<RollupBucket>> {
        Box::pin(self.do_his_rollup(id, start, end, rollup, limit))
    }

    fn his_write<'a>(
        &'a self,
        id: &'a Ref,
        samples: Vec<HisSample>,
    ) -> BackendFuture<'a, HisWriteReport> {
        Box::pin(self.do_his_write(id, samples))
    }

    fn priority_array<'a>(&'a self, id: &'a Ref) -> BackendFuture<'a, PriorityArray> {
        Box::pin(async move {
            let client = self.client().await?;
            let row = client
                .query_opt(
                    "SELECT p.array_zinc FROM bw_entities e
                     LEFT JOIN bw_priority p ON p.id = e.id WHERE e.id = $1",
                    &[&id.id],
                )
                .await
                .map_err(db_error)?;
            let row = row.ok_or_else(|| StoreError::UnknownId(id.id.clone()))?;
            let text: Option<String> = row.try_get(0).map_err(db_error)?;
            match text {
                Some(t) => decode_array(&t).map_err(corrupt),
                None => Ok(PriorityArray::new()),
            }
        })
    }

    fn point_write<'a>(
        &'a self,
        id: &'a Ref,
        level: u8,
        entry: Option<PriorityEntry>,
        now_ms: i64,
    ) -> BackendFuture<'a, PriorityArray> {
        Box::pin(async move {
            self.update_array(&id.id, now_ms, |a| a.set(level, entry))
                .await?
                .ok_or_else(|| StoreError::UnknownId(id.id.clone()).into())
        })
    }

    fn load<'a>(&'a self, grid: &'a Grid) -> BackendFuture<'a, usize> {
        Box::pin(self.do_load(grid))
    }

    fn expire_writes(&self, now_ms: i64) -> BackendFuture<'_, usize> {
        Box::pin(async move {
            let due: Vec<String> = {
                let client = self.client().await?;
                let rows = client
                    .query(
                        "SELECT id FROM bw_priority WHERE next_expiry <= $1",
                        &[&now_ms],
                    )
                    .await
                    .map_err(db_error)?;
                rows.iter()
                    .map(|r| r.try_get(0).map_err(db_error))
                    .collect::<Result<_, _>>()?
            };
            let mut count = 0;
            for id in due {
                if self.update_array(&id, now_ms, |_| {}).await?.is_some() {
                    count += 1;
                }
            }
            Ok(count)
        })
    }
}
