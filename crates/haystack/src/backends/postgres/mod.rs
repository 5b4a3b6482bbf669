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

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use futures_util::StreamExt;
use tokio::sync::broadcast;
use tokio_postgres::{AsyncMessage, NoTls, Transaction};

use crate::backends::common::{self, decode_array, decode_change, encode_change};
use crate::backends::{
    Backend, BackendError, BackendFuture, CHANGE_CHANNEL_CAPACITY, ChangeEvent, corrupt,
};
use crate::store::{
    CommitOp, HisSample, HisWriteReport, PriorityArray, PriorityEntry, Rollup, RollupBucket,
    StoreError,
};
use crate::value::{DateTime, Dict, Grid, Ref};

mod entities;
mod histories;
mod schema;
mod watches;

pub use schema::MIGRATIONS;
use schema::{HisStorage, migrate};

/// The notification channel.
const CHANNEL: &str = "bw_changes";
/// Largest notification payload sent (PostgreSQL's limit is 8,000 bytes).
const MAX_NOTIFY_BYTES: usize = 7_000;
/// Connections in the pool.
const POOL_SIZE: usize = 16;
/// Rows per bulk-load statement.
const LOAD_CHUNK: usize = 1000;
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

pub(crate) fn db_error(e: tokio_postgres::Error) -> BackendError {
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

    fn shared_watches(&self) -> Option<&dyn crate::backends::SharedWatches> {
        Some(self)
    }

    fn shared_auth(&self) -> Option<&dyn crate::backends::SharedAuth> {
        Some(self)
    }

    crate::backends::remote_reads!();

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
