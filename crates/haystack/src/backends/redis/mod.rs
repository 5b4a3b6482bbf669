//! [`RedisBackend`]: entities, indexes, priority arrays and histories in plain Redis 7
//! data structures (no modules), shared by any number of server processes.
//!
//! Keys (prefix `bw` unless the URL says `?prefix=NAME`):
//! - `P:ent`: hash, entity id → `SEQ VERSION {zinc dict}`;
//! - `P:t:TERM`: set of the ids holding an index term (`h:site`, `e:siteRef=r:s1`, ...);
//!   the `e:...=r:...` sets are the reverse ref graph;
//! - `P:seq`: the insertion counter;
//! - `P:pa`: hash, point id → priority array (Zinc); `P:pax`: sorted set of points with
//!   timed levels, scored by the earliest lapse (ms);
//! - `P:h:ID`: a point's history, a sorted set with every score 0 ordered by member,
//!   `INSTANTKEY ZINCSAMPLE` (the fixed-width instant key makes `[start, end)` one
//!   `ZRANGE ... BYLEX` and an overwrite one `ZREMRANGEBYLEX`);
//! - `P:ver`: the store's change counter, incremented by every write script (answers of
//!   `read` and `nav` are cached under it);
//! - channel `P:changes`: `ORIGIN VERSION id,id,...` after every change.
//!
//! Writes run as Lua scripts (core Redis, not a module): a commit checks that every
//! record it read is unchanged (compare-and-set) and then applies all its commands, or
//! none; on a conflict it reads again and retries. Acknowledged writes survive a Redis
//! restart when Redis persists them: run it with `appendonly yes` and `appendfsync
//! always` (the backend reads the setting at connect and says so in `about` and the log).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use redis::aio::ConnectionManager;
use redis::{AsyncCommands, Script};
use tokio::sync::broadcast;

use crate::backends::common::{self, decode_change, encode_change};
use crate::backends::{Backend, BackendError, BackendFuture, CHANGE_CHANNEL_CAPACITY, ChangeEvent};
use crate::store::{CommitOp, HisSample, HisWriteReport, PriorityArray, PriorityEntry, StoreError};
use crate::value::{DateTime, Dict, Grid, Ref};

mod entities;
mod histories;
mod schema;
mod watches;

use schema::{APPLY_SCRIPT, HIS_WRITE_SCRIPT};

/// Ids per `HMGET`.
const FETCH_CHUNK: usize = 1000;
/// Entities per bulk-load script.
const LOAD_CHUNK: usize = 500;

/// Storage in Redis. Cheap to share (`Arc`); one multiplexed connection that reconnects
/// by itself, plus a pub/sub connection for other processes' changes.
pub struct RedisBackend {
    conn: ConnectionManager,
    prefix: String,
    origin: String,
    version: Arc<AtomicU64>,
    changes: broadcast::Sender<Arc<ChangeEvent>>,
    apply: Script,
    his: Script,
    durability: String,
    listener: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for RedisBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBackend")
            .field("prefix", &self.prefix)
            .field("durability", &self.durability)
            .finish_non_exhaustive()
    }
}

impl Drop for RedisBackend {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

fn unavailable(e: redis::RedisError) -> BackendError {
    BackendError::Unavailable(format!(
        "redis: {e} (is redis-server running and reachable? the next request retries)"
    ))
}

impl RedisBackend {
    /// Connects (`redis://HOST:PORT[/DB][?prefix=NAME]`) and starts listening for other
    /// processes' changes.
    pub async fn connect(url: &str) -> Result<RedisBackend, BackendError> {
        let (url, prefix) = match url.split_once("?prefix=") {
            Some((u, p)) if !p.is_empty() => (u.to_owned(), p.to_owned()),
            _ => (url.to_owned(), "bw".to_owned()),
        };
        let client = redis::Client::open(url.as_str()).map_err(unavailable)?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_number_of_retries(6)
            .set_factor(50)
            .set_max_delay(2_000)
            .set_connection_timeout(Duration::from_secs(5))
            .set_response_timeout(Duration::from_secs(30));
        let mut conn = ConnectionManager::new_with_config(client.clone(), config)
            .await
            .map_err(unavailable)?;
        let aof: Vec<String> = redis::cmd("CONFIG")
            .arg("GET")
            .arg("appendfsync")
            .query_async(&mut conn)
            .await
            .unwrap_or_default();
        let appendonly: Vec<String> = redis::cmd("CONFIG")
            .arg("GET")
            .arg("appendonly")
            .query_async(&mut conn)
            .await
            .unwrap_or_default();
        let durability = match (appendonly.get(1).map(String::as_str), aof.get(1)) {
            (Some("yes"), Some(fsync)) => format!("appendonly, appendfsync {fsync}"),
            _ => "no append-only file: acknowledged writes may be lost when Redis restarts \
                  (run redis-server with --appendonly yes --appendfsync always)"
                .to_owned(),
        };
        eprintln!("haystack storage: redis {url} prefix {prefix}: {durability}");
        let (changes, _) = broadcast::channel(CHANGE_CHANNEL_CAPACITY);
        let origin = common::origin_id();
        let version = Arc::new(AtomicU64::new(0));
        let listener = tokio::spawn(listen(
            client,
            format!("{prefix}:changes"),
            origin.clone(),
            version.clone(),
            changes.clone(),
        ));
        Ok(RedisBackend {
            conn,
            prefix,
            origin,
            version,
            changes,
            apply: Script::new(APPLY_SCRIPT),
            his: Script::new(HIS_WRITE_SCRIPT),
            durability,
            listener,
        })
    }

    /// How Redis persists what it acknowledged (from its configuration).
    pub fn durability(&self) -> &str {
        &self.durability
    }

    fn key(&self, suffix: &str) -> String {
        format!("{}:{suffix}", self.prefix)
    }

    fn term_key(&self, term: &str) -> String {
        format!("{}:t:{term}", self.prefix)
    }

    pub(super) fn prefix(&self) -> &str {
        &self.prefix
    }

    pub(super) fn conn(&self) -> ConnectionManager {
        self.conn.clone()
    }

    /// Tells this process's listeners and publishes to the others.
    async fn changed(&self, ids: Vec<String>) {
        if ids.is_empty() {
            return;
        }
        let version = self.version.fetch_add(1, Ordering::AcqRel) + 1;
        let mut conn = self.conn();
        for batch in common::change_batches(&ids, 64 * 1024) {
            let payload = encode_change(&self.origin, version, &batch);
            // A lost notification only delays other processes' watches until their next
            // full refresh; the write itself is already stored.
            let _: Result<i64, _> = conn.publish(self.key("changes"), payload).await;
        }
        let _ = self.changes.send(Arc::new(ChangeEvent { ids, version }));
    }
}

/// Follows the change channel: other processes' changes go to this process's
/// listeners. Reconnects with backoff; after a gap every listener is told that
/// everything may have changed (an event with no ids is a full refresh).
async fn listen(
    client: redis::Client,
    channel: String,
    origin: String,
    version: Arc<AtomicU64>,
    changes: broadcast::Sender<Arc<ChangeEvent>>,
) {
    let mut delay = Duration::from_millis(50);
    let mut first = true;
    loop {
        if let Ok(mut pubsub) = client.get_async_pubsub().await
            && pubsub.subscribe(&channel).await.is_ok()
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
            let mut stream = pubsub.on_message();
            while let Some(msg) = stream.next().await {
                let Ok(payload) = msg.get_payload::<String>() else {
                    continue;
                };
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
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(Duration::from_secs(2));
    }
}

impl Backend for RedisBackend {
    fn name(&self) -> &str {
        "redis"
    }

    fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    fn caches_responses(&self) -> bool {
        false
    }

    fn store_version(&self) -> BackendFuture<'_, Option<u64>> {
        Box::pin(async move {
            let mut conn = self.conn();
            let v: Option<u64> = conn.get(self.key("ver")).await.map_err(unavailable)?;
            Ok(Some(v.unwrap_or(0)))
        })
    }

    fn describe(&self) -> String {
        format!("redis ({})", self.durability)
    }

    fn shared_watches(&self) -> Option<&dyn crate::backends::SharedWatches> {
        Some(self)
    }

    fn shared_auth(&self) -> Option<&dyn crate::backends::SharedAuth> {
        Some(self)
    }

    fn subscribe(&self) -> broadcast::Receiver<Arc<ChangeEvent>> {
        self.changes.subscribe()
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

    fn his_write<'a>(
        &'a self,
        id: &'a Ref,
        samples: Vec<HisSample>,
    ) -> BackendFuture<'a, HisWriteReport> {
        Box::pin(self.do_his_write(id, samples))
    }

    fn priority_array<'a>(&'a self, id: &'a Ref) -> BackendFuture<'a, PriorityArray> {
        Box::pin(async move {
            let ids = [id.id.clone()];
            if self
                .fetch_records(&ids)
                .await?
                .into_iter()
                .next()
                .flatten()
                .is_none()
            {
                return Err(StoreError::UnknownId(id.id.clone()).into());
            }
            self.load_array(&id.id).await
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
            self.update_array(&id.id, now_ms, |a| a.set(level, entry.clone()))
                .await?
                .ok_or_else(|| StoreError::UnknownId(id.id.clone()).into())
        })
    }

    fn load<'a>(&'a self, grid: &'a Grid) -> BackendFuture<'a, usize> {
        Box::pin(self.do_load(grid))
    }

    fn expire_writes(&self, now_ms: i64) -> BackendFuture<'_, usize> {
        Box::pin(async move {
            let mut conn = self.conn();
            let due: Vec<String> = conn
                .zrangebyscore(self.key("pax"), "-inf", now_ms)
                .await
                .map_err(unavailable)?;
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
