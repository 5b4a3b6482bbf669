//! HTTP watches, users and login sessions kept in Redis ([`SharedWatches`] and
//! [`SharedAuth`] for [`RedisBackend`]), so that every server process on one Redis serves
//! them. Users: hash `P:users` (name → users-file line); sessions: `P:sess:KEY` holding
//! `USER ROLE`, expiring by itself (`PX`).
//!
//! Keys (prefix `P`): `P:w:WATCH` hash (owner, dis, lease), `P:wi:WATCH` sorted set of the
//! watched ids in the order added, `P:wby:ID` the watches holding an id, `P:wd:WATCH` the
//! ids changed since the last poll, `P:wo:OWNER` an owner's watches, `P:wall` every watch
//! scored by when its lease runs out. Writers mark `P:wd:...` in the same script as their
//! change (see `mark_dirty_lua!` in `schema.rs`), so a poll sees every committed change once.
//! Each operation is one Lua script, so concurrent polls through two processes never
//! report a change twice or lose one.

use redis::Script;

use crate::backends::{
    BackendError, BackendFuture, SharedAuth, SharedWatches, WatchError, WatchLimits,
};

use super::RedisBackend;

/// Lua: the lease of a live watch owned by `owner`, or nil.
const CHECK: &str = r"
local function check(p, wid, owner, now)
  local o = redis.call('HGET', p .. ':w:' .. wid, 'owner')
  if (not o) or (owner ~= '' and o ~= owner) then return nil end
  local exp = redis.call('ZSCORE', p .. ':wall', wid)
  if (not exp) or tonumber(exp) < now then return nil end
  return tonumber(redis.call('HGET', p .. ':w:' .. wid, 'lease'))
end
";

/// ARGV: prefix, watch, owner, dis, lease, now, max per owner, max watches.
const OPEN: &str = r"
local p, wid, owner = ARGV[1], ARGV[2], ARGV[3]
local now, lease = tonumber(ARGV[6]), tonumber(ARGV[5])
if redis.call('ZCOUNT', p .. ':wall', now, '+inf') >= tonumber(ARGV[8]) then return -1 end
local mine = 0
for _, w in ipairs(redis.call('SMEMBERS', p .. ':wo:' .. owner)) do
  local exp = redis.call('ZSCORE', p .. ':wall', w)
  if exp and tonumber(exp) >= now then mine = mine + 1 end
end
if mine >= tonumber(ARGV[7]) then return -2 end
redis.call('HSET', p .. ':w:' .. wid, 'owner', owner, 'dis', ARGV[4], 'lease', lease)
redis.call('ZADD', p .. ':wall', now + lease, wid)
redis.call('SADD', p .. ':wo:' .. owner, wid)
return 0
";

/// ARGV: prefix, watch, owner, now, max ids, ids...; the lease, -1 unknown, -2 too many.
const ADD: &str = r"
local p, wid, owner, now = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local lease = check(p, wid, owner, now)
if not lease then return -1 end
local wi = p .. ':wi:' .. wid
local new = {}
local count = 0
for i = 6, #ARGV do
  if (not redis.call('ZSCORE', wi, ARGV[i])) and (not new[ARGV[i]]) then
    new[ARGV[i]] = true
    count = count + 1
  end
end
if redis.call('ZCARD', wi) + count > tonumber(ARGV[5]) then return -2 end
for i = 6, #ARGV do
  if not redis.call('ZSCORE', wi, ARGV[i]) then
    redis.call('ZADD', wi, redis.call('INCR', p .. ':wseq'), ARGV[i])
    redis.call('SADD', p .. ':wby:' .. ARGV[i], wid)
  end
end
redis.call('ZADD', p .. ':wall', now + lease, wid)
return lease
";

/// ARGV: prefix, watch, owner, now, ids...; 0, or -1 unknown.
const REMOVE: &str = r"
local p, wid, owner, now = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local lease = check(p, wid, owner, now)
if not lease then return -1 end
for i = 5, #ARGV do
  redis.call('ZREM', p .. ':wi:' .. wid, ARGV[i])
  redis.call('SREM', p .. ':wby:' .. ARGV[i], wid)
  redis.call('SREM', p .. ':wd:' .. wid, ARGV[i])
end
redis.call('ZADD', p .. ':wall', now + lease, wid)
return 0
";

/// ARGV: prefix, watch, owner ('' closes any owner's watch, for the sweeper); 0 or -1.
const CLOSE: &str = r"
local p, wid, owner = ARGV[1], ARGV[2], ARGV[3]
local o = redis.call('HGET', p .. ':w:' .. wid, 'owner')
if (not o) or (owner ~= '' and o ~= owner) then
  redis.call('ZREM', p .. ':wall', wid)
  return -1
end
for _, id in ipairs(redis.call('ZRANGE', p .. ':wi:' .. wid, 0, -1)) do
  redis.call('SREM', p .. ':wby:' .. id, wid)
end
redis.call('DEL', p .. ':w:' .. wid, p .. ':wi:' .. wid, p .. ':wd:' .. wid)
redis.call('ZREM', p .. ':wall', wid)
redis.call('SREM', p .. ':wo:' .. o, wid)
return 0
";

/// ARGV: prefix, watch, owner, now, refresh (1/0); {'ok', ids...} or {'unknown'}.
const POLL: &str = r"
local p, wid, owner, now = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local lease = check(p, wid, owner, now)
if not lease then return {'unknown'} end
redis.call('ZADD', p .. ':wall', now + lease, wid)
local all = redis.call('ZRANGE', p .. ':wi:' .. wid, 0, -1)
local dirty = redis.call('SMEMBERS', p .. ':wd:' .. wid)
redis.call('DEL', p .. ':wd:' .. wid)
local out = {'ok'}
if ARGV[5] == '1' then
  for _, id in ipairs(all) do out[#out + 1] = id end
  return out
end
local changed = {}
for _, id in ipairs(dirty) do changed[id] = true end
for _, id in ipairs(all) do
  if changed[id] then out[#out + 1] = id end
end
return out
";

fn script(body: &str) -> Script {
    Script::new(&format!("{CHECK}{body}"))
}

fn unavailable(e: redis::RedisError) -> BackendError {
    BackendError::Unavailable(format!(
        "redis: {e} (is redis-server running and reachable? the next request retries)"
    ))
}

fn unknown(watch: &str) -> BackendError {
    WatchError::Unknown(watch.to_owned()).into()
}

impl RedisBackend {
    /// Runs a watch script with the key prefix as ARGV[1] and then `args`.
    async fn watch_script<T: redis::FromRedisValue>(
        &self,
        body: &str,
        args: &[&str],
        ids: &[String],
    ) -> Result<T, BackendError> {
        let script = script(body);
        let mut invocation = script.arg(self.prefix());
        for arg in args {
            invocation.arg(*arg);
        }
        invocation.arg(ids);
        let mut conn = self.conn();
        invocation
            .invoke_async(&mut conn)
            .await
            .map_err(unavailable)
    }
}

impl SharedWatches for RedisBackend {
    fn open<'a>(
        &'a self,
        owner: &'a str,
        dis: &'a str,
        lease_ms: i64,
        limits: &'a WatchLimits,
        now_ms: i64,
    ) -> BackendFuture<'a, String> {
        Box::pin(async move {
            let id = crate::backends::common::shared_watch_id();
            let numbers = [
                lease_ms.to_string(),
                now_ms.to_string(),
                limits.max_watches_per_owner.to_string(),
                limits.max_watches.to_string(),
            ];
            let status: i64 = self
                .watch_script(
                    OPEN,
                    &[
                        &id,
                        owner,
                        dis,
                        &numbers[0],
                        &numbers[1],
                        &numbers[2],
                        &numbers[3],
                    ],
                    &[],
                )
                .await?;
            match status {
                -1 => Err(WatchError::TooManyWatches(limits.max_watches).into()),
                -2 => Err(WatchError::TooManyWatches(limits.max_watches_per_owner).into()),
                _ => Ok(id),
            }
        })
    }

    fn add<'a>(
        &'a self,
        watch: &'a str,
        owner: &'a str,
        ids: &'a [String],
        limits: &'a WatchLimits,
        now_ms: i64,
    ) -> BackendFuture<'a, i64> {
        Box::pin(async move {
            let (now, max) = (now_ms.to_string(), limits.max_ids_per_watch.to_string());
            let lease: i64 = self
                .watch_script(ADD, &[watch, owner, &now, &max], ids)
                .await?;
            match lease {
                -1 => Err(unknown(watch)),
                -2 => Err(WatchError::TooManyIds(limits.max_ids_per_watch).into()),
                lease => Ok(lease),
            }
        })
    }

    fn remove<'a>(
        &'a self,
        watch: &'a str,
        owner: &'a str,
        ids: &'a [String],
        now_ms: i64,
    ) -> BackendFuture<'a, ()> {
        Box::pin(async move {
            let now = now_ms.to_string();
            let status: i64 = self
                .watch_script(REMOVE, &[watch, owner, &now], ids)
                .await?;
            if status < 0 {
                Err(unknown(watch))
            } else {
                Ok(())
            }
        })
    }

    fn close<'a>(&'a self, watch: &'a str, owner: &'a str) -> BackendFuture<'a, ()> {
        Box::pin(async move {
            let status: i64 = self.watch_script(CLOSE, &[watch, owner], &[]).await?;
            if status < 0 {
                Err(unknown(watch))
            } else {
                Ok(())
            }
        })
    }

    fn poll<'a>(
        &'a self,
        watch: &'a str,
        owner: &'a str,
        refresh: bool,
        now_ms: i64,
    ) -> BackendFuture<'a, Vec<String>> {
        Box::pin(async move {
            let now = now_ms.to_string();
            let flag = if refresh { "1" } else { "0" };
            let mut out: Vec<String> = self
                .watch_script(POLL, &[watch, owner, &now, flag], &[])
                .await?;
            if out.first().map(String::as_str) != Some("ok") {
                return Err(unknown(watch));
            }
            out.remove(0);
            Ok(out)
        })
    }

    fn sweep(&self, now_ms: i64) -> BackendFuture<'_, usize> {
        Box::pin(async move {
            let mut conn = self.conn();
            let expired: Vec<String> = redis::cmd("ZRANGEBYSCORE")
                .arg(format!("{}:wall", self.prefix()))
                .arg("-inf")
                .arg(format!("({now_ms}"))
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
            for watch in &expired {
                let _: i64 = self.watch_script(CLOSE, &[watch, ""], &[]).await?;
            }
            Ok(expired.len())
        })
    }
}

impl SharedAuth for RedisBackend {
    fn users(&self) -> BackendFuture<'_, Vec<String>> {
        Box::pin(async move {
            let mut conn = self.conn();
            let all: Vec<(String, String)> = redis::cmd("HGETALL")
                .arg(format!("{}:users", self.prefix()))
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
            Ok(all.into_iter().map(|(_, line)| line).collect())
        })
    }

    fn put_users<'a>(&'a self, users: &'a [(String, String)]) -> BackendFuture<'a, ()> {
        Box::pin(async move {
            if users.is_empty() {
                return Ok(());
            }
            let mut cmd = redis::cmd("HSET");
            cmd.arg(format!("{}:users", self.prefix()));
            for (name, line) in users {
                cmd.arg(name).arg(line);
            }
            let mut conn = self.conn();
            let _: i64 = cmd.query_async(&mut conn).await.map_err(unavailable)?;
            Ok(())
        })
    }

    fn remove_user<'a>(&'a self, name: &'a str) -> BackendFuture<'a, bool> {
        Box::pin(async move {
            let mut conn = self.conn();
            let removed: i64 = redis::cmd("HDEL")
                .arg(format!("{}:users", self.prefix()))
                .arg(name)
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
            Ok(removed > 0)
        })
    }

    fn put_session<'a>(
        &'a self,
        key: &'a str,
        user: &'a str,
        role: &'a str,
        expires_ms: i64,
    ) -> BackendFuture<'a, ()> {
        Box::pin(async move {
            let mut conn = self.conn();
            let _: () = redis::cmd("SET")
                .arg(format!("{}:sess:{key}", self.prefix()))
                .arg(format!("{user} {role}"))
                .arg("PXAT")
                .arg(expires_ms.max(1))
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
            Ok(())
        })
    }

    fn session<'a>(
        &'a self,
        key: &'a str,
        _now_ms: i64,
    ) -> BackendFuture<'a, Option<(String, String)>> {
        Box::pin(async move {
            let mut conn = self.conn();
            let value: Option<String> = redis::cmd("GET")
                .arg(format!("{}:sess:{key}", self.prefix()))
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
            Ok(value.and_then(|v| v.split_once(' ').map(|(u, r)| (u.to_owned(), r.to_owned()))))
        })
    }

    fn drop_session<'a>(&'a self, key: &'a str) -> BackendFuture<'a, ()> {
        Box::pin(async move {
            let mut conn = self.conn();
            let _: i64 = redis::cmd("DEL")
                .arg(format!("{}:sess:{key}", self.prefix()))
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
            Ok(())
        })
    }
}
