//! Entities in Redis: index-term sets as candidate sets, records fetched in chunks,
//! commits and bulk loads through the compare-and-set apply script (retried on conflict),
//! and priority arrays.

use std::collections::HashSet;

use redis::AsyncCommands;

use crate::backends::common::{
    Candidates, StoredEntity, apply_command, commit_ids, decode_array, encode_array, index_terms,
    next_expiry, plan_commit,
};
use crate::backends::{
    BackendError, BackendFuture, MAX_CAS_RETRIES, Remote, corrupt, current_of, grid_dicts,
};
use crate::store::{CommitOp, PriorityArray};
use crate::value::{Dict, Grid};

use super::{FETCH_CHUNK, LOAD_CHUNK, RedisBackend, unavailable};

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
    pub(super) async fn ids_of(
        &self,
        c: &Candidates,
    ) -> Result<Option<HashSet<String>>, BackendError> {
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

    pub(super) async fn fetch_records(
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

    pub(super) async fn next_seqs(&self, n: usize) -> Result<i64, BackendError> {
        let mut conn = self.conn();
        let last: i64 = conn
            .incr(self.key("seq"), n as i64)
            .await
            .map_err(unavailable)?;
        Ok(last - n as i64 + 1)
    }

    pub(super) async fn do_commit(&self, op: CommitOp) -> Result<Vec<Dict>, BackendError> {
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

    pub(super) async fn do_load(&self, grid: &Grid) -> Result<usize, BackendError> {
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

    pub(super) async fn load_array(&self, id: &str) -> Result<PriorityArray, BackendError> {
        let mut conn = self.conn();
        let text: Option<String> = conn.hget(self.key("pa"), id).await.map_err(unavailable)?;
        match text {
            Some(t) => decode_array(&t).map_err(corrupt),
            None => Ok(PriorityArray::new()),
        }
    }

    /// Applies a change to a point's array and its `writeVal`/`writeLevel`, atomically.
    pub(super) async fn update_array(
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
