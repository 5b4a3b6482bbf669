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

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use redis::aio::ConnectionManager;
use redis::{AsyncCommands, Script};
use tokio::sync::broadcast;

use crate::ops::{
    Backend, BackendError, BackendFuture, CHANGE_CHANNEL_CAPACITY, ChangeEvent, PriorityArray,
    PriorityEntry,
};
use crate::store::{CommitOp, HisSample, HisWriteReport, StoreError};
use crate::value::{DateTime, Dict, Grid, Ref};

use super::common::{
    self, Candidates, StoredEntity, apply_command, commit_ids, decode_array, decode_change,
    encode_array, encode_change, index_terms, instant_key, next_expiry, plan_commit,
};
use super::{MAX_CAS_RETRIES, Remote, corrupt, current_of, grid_dicts};

/// Ids per `HMGET`.
const FETCH_CHUNK: usize = 1000;
/// Entities per bulk-load script.
const LOAD_CHUNK: usize = 500;

/// Lua: marks `id` changed in every shared watch holding it (`P:wby:ID` → `P:wd:WATCH`).
macro_rules! mark_dirty_lua {
    () => {
        r"
local function mark_dirty(p, id)
  for _, w in ipairs(redis.call('SMEMBERS', p .. ':wby:' .. id)) do
    redis.call('SADD', p .. ':wd:' .. w, id)
  end
end
"
    };
}

/// Compare-and-set apply: KEYS[1] the entity hash; ARGV: the number of checks, then
/// (id, expected record or "") pairs, then the number of commands, then each command as
/// its argument count followed by its arguments, then the key prefix and the changed ids
/// (marked in the shared watches holding them).
const APPLY_SCRIPT: &str = concat!(
    mark_dirty_lua!(),
    r"
local ent = KEYS[1]
local n = tonumber(ARGV[1])
local i = 2
for k = 1, n do
  local cur = redis.call('HGET', ent, ARGV[i])
  if not cur then cur = '' end
  if cur ~= ARGV[i + 1] then return {'conflict', ARGV[i]} end
  i = i + 2
end
local m = tonumber(ARGV[i])
i = i + 1
for k = 1, m do
  local nargs = tonumber(ARGV[i])
  redis.call(unpack(ARGV, i + 1, i + nargs))
  i = i + 1 + nargs
end
local p = ARGV[i]
for k = i + 1, #ARGV do mark_dirty(p, ARGV[k]) end
redis.call('INCR', p .. ':ver')
return {'ok', ''}
"
);

/// History write: KEYS[1] the history set, KEYS[2] the entity hash; ARGV[1] the point id,
/// ARGV[2] the key prefix, then (instant key, member) pairs. Returns {inserted,
/// overwritten}, or {-1, -1} when the point is gone.
const HIS_WRITE_SCRIPT: &str = concat!(
    mark_dirty_lua!(),
    r"
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then return {-1, -1} end
local ins, over = 0, 0
for i = 3, #ARGV, 2 do
  local key = ARGV[i]
  local removed = redis.call('ZREMRANGEBYLEX', KEYS[1], '[' .. key, '(' .. key .. '!')
  if removed > 0 then over = over + 1 else ins = ins + 1 end
  redis.call('ZADD', KEYS[1], 0, ARGV[i + 1])
end
mark_dirty(ARGV[2], ARGV[1])
redis.call('INCR', ARGV[2] .. ':ver')
return {ins, over}
"
);

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

/// A command as the apply script takes it.
struct Commands {
    args: Vec<String>,
    count: usize,
}

impl Commands {
    fn new() -> Self {
        Self {
            args: Vec::new(),
            count: 0,
        }
    }

    fn push(&mut self, parts: &[&str]) {
        self.args.push(parts.len().to_string());
        self.args.extend(parts.iter().map(|s| (*s).to_owned()));
        self.count += 1;
    }
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

    async fn ids_of(&self, c: &Candidates) -> Result<Option<HashSet<String>>, BackendError> {
        let mut conn = self.conn();
        let keys = |items: &[Candidates]| -> Option<Vec<String>> {
            items
                .iter()
                .map(|i| match i {
                    Candidates::Term(t) => Some(self.term_key(t)),
                    _ => None,
                })
                .collect()
        };
        Ok(Some(match c {
            Candidates::All => return Ok(None),
            Candidates::Term(t) => conn.smembers(self.term_key(t)).await.map_err(unavailable)?,
            Candidates::And(items) => match keys(items) {
                Some(keys) => conn.sinter(keys).await.map_err(unavailable)?,
                None => {
                    let mut acc: Option<HashSet<String>> = None;
                    for item in items {
                        if let Some(set) = Box::pin(self.ids_of(item)).await? {
                            acc = Some(match acc {
                                Some(a) => a.intersection(&set).cloned().collect(),
                                None => set,
                            });
                        }
                    }
                    return Ok(acc);
                }
            },
            Candidates::Or(items) => match keys(items) {
                Some(keys) => conn.sunion(keys).await.map_err(unavailable)?,
                None => {
                    let mut acc = HashSet::new();
                    for item in items {
                        match Box::pin(self.ids_of(item)).await? {
                            Some(set) => acc.extend(set),
                            None => return Ok(None),
                        }
                    }
                    acc
                }
            },
        }))
    }

    async fn fetch_records(
        &self,
        ids: &[String],
    ) -> Result<Vec<Option<StoredEntity>>, BackendError> {
        let mut conn = self.conn();
        let mut out = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(FETCH_CHUNK) {
            let records: Vec<Option<String>> = redis::cmd("HMGET")
                .arg(self.key("ent"))
                .arg(chunk)
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
            for record in records {
                out.push(match record {
                    Some(text) => Some(StoredEntity::from_record(&text).map_err(corrupt)?),
                    None => None,
                });
            }
        }
        Ok(out)
    }

    /// Runs the apply script; `Ok(false)` on a compare-and-set conflict.
    async fn run_apply(
        &self,
        checks: &[(String, String)],
        commands: Commands,
        changed: &[String],
    ) -> Result<bool, BackendError> {
        let mut invocation = self.apply.key(self.key("ent"));
        invocation.arg(checks.len());
        for (id, expected) in checks {
            invocation.arg(id).arg(expected);
        }
        invocation.arg(commands.count).arg(commands.args);
        invocation.arg(&self.prefix).arg(changed);
        let mut conn = self.conn();
        let (status, _id): (String, String) = invocation
            .invoke_async(&mut conn)
            .await
            .map_err(unavailable)?;
        Ok(status == "ok")
    }

    /// The commands that store an entity (replacing `before`).
    fn write_commands(
        &self,
        cmds: &mut Commands,
        id: &str,
        before: Option<&StoredEntity>,
        after: Option<&StoredEntity>,
    ) {
        let old: HashSet<String> = before
            .map(|b| index_terms(&b.dict))
            .unwrap_or_default()
            .into_iter()
            .collect();
        let new: HashSet<String> = after
            .map(|a| index_terms(&a.dict))
            .unwrap_or_default()
            .into_iter()
            .collect();
        for term in old.difference(&new) {
            cmds.push(&["SREM", &self.term_key(term), id]);
        }
        for term in new.difference(&old) {
            cmds.push(&["SADD", &self.term_key(term), id]);
        }
        match after {
            Some(a) => cmds.push(&["HSET", &self.key("ent"), id, &a.to_record()]),
            None => {
                cmds.push(&["HDEL", &self.key("ent"), id]);
                cmds.push(&["DEL", &self.key(&format!("h:{id}"))]);
                cmds.push(&["HDEL", &self.key("pa"), id]);
                cmds.push(&["ZREM", &self.key("pax"), id]);
            }
        }
    }

    async fn next_seqs(&self, n: usize) -> Result<i64, BackendError> {
        let mut conn = self.conn();
        let last: i64 = conn
            .incr(self.key("seq"), n as i64)
            .await
            .map_err(unavailable)?;
        Ok(last - n as i64 + 1)
    }

    async fn do_commit(&self, op: CommitOp) -> Result<Vec<Dict>, BackendError> {
        let ids = commit_ids(&op)?;
        let adds = matches!(op, CommitOp::Add(_));
        for _ in 0..MAX_CAS_RETRIES {
            let current = current_of(self, &ids).await?;
            let mut seq = if adds {
                self.next_seqs(ids.len()).await?
            } else {
                0
            };
            let plan = plan_commit(op.clone(), &current, || {
                seq += 1;
                seq - 1
            })?;
            let checks: Vec<(String, String)> = current
                .iter()
                .map(|(id, e)| {
                    (
                        id.clone(),
                        e.as_ref().map(StoredEntity::to_record).unwrap_or_default(),
                    )
                })
                .collect();
            let mut cmds = Commands::new();
            for (id, before, after) in &plan.writes {
                self.write_commands(&mut cmds, id, before.as_ref(), Some(after));
            }
            for (id, before) in &plan.removes {
                self.write_commands(&mut cmds, id, Some(before), None);
            }
            if self.run_apply(&checks, cmds, &plan.ids()).await? {
                self.changed(plan.ids()).await;
                return Ok(plan.out);
            }
        }
        Err(BackendError::Unavailable(
            "too many concurrent changes to the same entities; try again".into(),
        ))
    }

    async fn do_load(&self, grid: &Grid) -> Result<usize, BackendError> {
        let dicts = grid_dicts(grid)?;
        let mut all_ids = Vec::with_capacity(dicts.len());
        for chunk in dicts.chunks(LOAD_CHUNK) {
            let ids: Vec<String> = chunk
                .iter()
                .filter_map(|d| crate::store::entity_id(d).ok().map(str::to_owned))
                .collect();
            'retry: {
                for _ in 0..MAX_CAS_RETRIES {
                    let current = current_of(self, &ids).await?;
                    let mut seq = self.next_seqs(chunk.len()).await?;
                    let mut cmds = Commands::new();
                    let mut checks = Vec::new();
                    for (dict, id) in chunk.iter().zip(&ids) {
                        let before = current.get(id).cloned().flatten();
                        // A bulk load replaces an entity that exists (keeping its place).
                        let after = StoredEntity {
                            seq: before.as_ref().map_or(seq, |b| b.seq),
                            version: before.as_ref().map_or(1, |b| b.version + 1),
                            dict: dict.clone(),
                        };
                        seq += 1;
                        checks.push((
                            id.clone(),
                            before
                                .as_ref()
                                .map(StoredEntity::to_record)
                                .unwrap_or_default(),
                        ));
                        self.write_commands(&mut cmds, id, before.as_ref(), Some(&after));
                    }
                    if self.run_apply(&checks, cmds, &ids).await? {
                        break 'retry;
                    }
                }
                return Err(BackendError::Unavailable(
                    "bulk load kept conflicting with other writers; try again".into(),
                ));
            }
            all_ids.extend(ids);
        }
        let n = all_ids.len();
        self.changed(all_ids).await;
        Ok(n)
    }

    async fn load_array(&self, id: &str) -> Result<PriorityArray, BackendError> {
        let mut conn = self.conn();
        let text: Option<String> = conn.hget(self.key("pa"), id).await.map_err(unavailable)?;
        match text {
            Some(t) => decode_array(&t).map_err(corrupt),
            None => Ok(PriorityArray::new()),
        }
    }

    /// Applies a change to a point's array and its `writeVal`/`writeLevel`, atomically.
    async fn update_array(
        &self,
        id: &str,
        now_ms: i64,
        change: impl Fn(&mut PriorityArray),
    ) -> Result<Option<PriorityArray>, BackendError> {
        let ids = [id.to_owned()];
        for _ in 0..MAX_CAS_RETRIES {
            let Some(Some(point)) = self.fetch_records(&ids).await?.into_iter().next() else {
                return Ok(None);
            };
            let mut conn = self.conn();
            let old_text: Option<String> =
                conn.hget(self.key("pa"), id).await.map_err(unavailable)?;
            let mut array = match &old_text {
                Some(t) => decode_array(t).map_err(corrupt)?,
                None => PriorityArray::new(),
            };
            change(&mut array);
            array.expire(now_ms);
            let after = apply_command(point.clone(), &array, now_ms);
            let mut cmds = Commands::new();
            self.write_commands(&mut cmds, id, Some(&point), Some(&after));
            if array.is_empty() {
                cmds.push(&["HDEL", &self.key("pa"), id]);
            } else {
                cmds.push(&["HSET", &self.key("pa"), id, &encode_array(&array)]);
            }
            match next_expiry(&array) {
                Some(ms) => cmds.push(&["ZADD", &self.key("pax"), &ms.to_string(), id]),
                None => cmds.push(&["ZREM", &self.key("pax"), id]),
            }
            // The array is checked through the point's record: every array change also
            // rewrites the point (its version grows), so an unchanged point means an
            // unchanged array.
            let checks = vec![(id.to_owned(), point.to_record())];
            if self.run_apply(&checks, cmds, &ids).await? {
                self.changed(vec![id.to_owned()]).await;
                return Ok(Some(array));
            }
        }
        Err(BackendError::Unavailable(
            "too many concurrent writes to the point; try again".into(),
        ))
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

impl Remote for RedisBackend {
    fn candidates<'a>(&'a self, c: &'a Candidates) -> BackendFuture<'a, Vec<StoredEntity>> {
        Box::pin(async move {
            match self.ids_of(c).await? {
                Some(ids) => {
                    let ids: Vec<String> = ids.into_iter().collect();
                    Ok(self
                        .fetch_records(&ids)
                        .await?
                        .into_iter()
                        .flatten()
                        .collect())
                }
                None => {
                    let mut conn = self.conn();
                    let all: Vec<(String, String)> =
                        conn.hgetall(self.key("ent")).await.map_err(unavailable)?;
                    all.iter()
                        .map(|(_, r)| StoredEntity::from_record(r).map_err(corrupt))
                        .collect()
                }
            }
        })
    }

    fn fetch<'a>(&'a self, ids: &'a [String]) -> BackendFuture<'a, Vec<Option<StoredEntity>>> {
        Box::pin(self.fetch_records(ids))
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

    fn shared_watches(&self) -> Option<&dyn crate::ops::SharedWatches> {
        Some(self)
    }

    fn shared_auth(&self) -> Option<&dyn crate::ops::SharedAuth> {
        Some(self)
    }

    fn subscribe(&self) -> broadcast::Receiver<Arc<ChangeEvent>> {
        self.changes.subscribe()
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
        Box::pin(async move {
            let ids = [id.id.clone()];
            let point = self.fetch_records(&ids).await?.into_iter().next().flatten();
            let point = point.ok_or_else(|| StoreError::UnknownId(id.id.clone()))?;
            if !point.dict.contains("his") {
                return Err(StoreError::NotHistorized(id.id.clone()).into());
            }
            let mut conn = self.conn();
            let members: Vec<String> = redis::cmd("ZRANGE")
                .arg(self.key(&format!("h:{}", id.id)))
                .arg(format!("[{}", instant_key(start)))
                .arg(format!("({}", instant_key(end)))
                .arg("BYLEX")
                .arg("LIMIT")
                .arg(0)
                .arg(limit.min(i64::MAX as usize))
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
            members
                .iter()
                .map(|m| {
                    let sample = m.split_once(' ').map_or("", |(_, s)| s);
                    common::decode_sample(sample).map_err(corrupt)
                })
                .collect()
        })
    }

    fn his_write<'a>(
        &'a self,
        id: &'a Ref,
        samples: Vec<HisSample>,
    ) -> BackendFuture<'a, HisWriteReport> {
        Box::pin(async move {
            let ids = [id.id.clone()];
            let point = self.fetch_records(&ids).await?.into_iter().next().flatten();
            common::check_his_write(id, point.as_ref(), &samples)?;
            let mut invocation = self.his.key(self.key(&format!("h:{}", id.id)));
            invocation
                .key(self.key("ent"))
                .arg(&id.id)
                .arg(&self.prefix);
            for sample in &samples {
                let key = instant_key(&sample.ts);
                let member = format!("{key} {}", common::encode_sample(sample));
                invocation.arg(key).arg(member);
            }
            let mut conn = self.conn();
            let (inserted, overwritten): (i64, i64) = invocation
                .invoke_async(&mut conn)
                .await
                .map_err(unavailable)?;
            if inserted < 0 {
                return Err(StoreError::UnknownId(id.id.clone()).into());
            }
            self.changed(vec![id.id.clone()]).await;
            Ok(HisWriteReport {
                inserted: inserted as usize,
                overwritten: overwritten as usize,
                evicted: 0,
            })
        })
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
