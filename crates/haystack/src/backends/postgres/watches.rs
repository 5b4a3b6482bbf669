//! HTTP watches, users and login sessions kept in PostgreSQL ([`SharedWatches`] and
//! [`SharedAuth`] for [`PostgresBackend`]), so that every server process on one database
//! serves them. Users and sessions live in `bw_users` and `bw_sessions` (migration 4).
//!
//! Tables (migration 3): `bw_watches` (owner, dis, lease, when the lease runs out),
//! `bw_watch_ids` (the watched ids, in the order added) and `bw_watch_dirty` (ids changed
//! since the last poll). Every writer marks `bw_watch_dirty` in its own transaction (see
//! `notify` in `postgres.rs`), and a poll takes the marks with `DELETE ... RETURNING` in a
//! transaction that locks the watch's row, so a committed change is reported exactly once.

use crate::backends::{
    BackendError, BackendFuture, SharedAuth, SharedWatches, WatchError, WatchLimits,
};

use super::{PostgresBackend, db_error};

fn unknown(watch: &str) -> BackendError {
    WatchError::Unknown(watch.to_owned()).into()
}

/// Locks a live watch of `owner` in the transaction; its lease, or an unknown-watch error.
async fn lock_watch(
    tx: &tokio_postgres::Transaction<'_>,
    watch: &str,
    owner: &str,
    now_ms: i64,
) -> Result<i64, BackendError> {
    let row = tx
        .query_opt(
            "SELECT lease_ms FROM bw_watches
             WHERE id = $1 AND owner = $2 AND expires_ms >= $3 FOR UPDATE",
            &[&watch, &owner, &now_ms],
        )
        .await
        .map_err(db_error)?;
    let row = row.ok_or_else(|| unknown(watch))?;
    let lease: i64 = row.try_get(0).map_err(db_error)?;
    tx.execute(
        "UPDATE bw_watches SET expires_ms = $2 WHERE id = $1",
        &[&watch, &(now_ms + lease)],
    )
    .await
    .map_err(db_error)?;
    Ok(lease)
}

impl SharedWatches for PostgresBackend {
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
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(db_error)?;
            // Serialize opens of one owner so the per-owner limit holds across processes.
            tx.execute("SELECT pg_advisory_xact_lock(hashtext($1))", &[&owner])
                .await
                .map_err(db_error)?;
            let row = tx
                .query_one(
                    "SELECT count(*), count(*) FILTER (WHERE owner = $2)
                     FROM bw_watches WHERE expires_ms >= $1",
                    &[&now_ms, &owner],
                )
                .await
                .map_err(db_error)?;
            let total: i64 = row.try_get(0).map_err(db_error)?;
            let mine: i64 = row.try_get(1).map_err(db_error)?;
            if total >= limits.max_watches as i64 {
                return Err(WatchError::TooManyWatches(limits.max_watches).into());
            }
            if mine >= limits.max_watches_per_owner as i64 {
                return Err(WatchError::TooManyWatches(limits.max_watches_per_owner).into());
            }
            tx.execute(
                "INSERT INTO bw_watches (id, owner, dis, lease_ms, expires_ms)
                 VALUES ($1, $2, $3, $4, $5)",
                &[&id, &owner, &dis, &lease_ms, &(now_ms + lease_ms)],
            )
            .await
            .map_err(db_error)?;
            tx.commit().await.map_err(db_error)?;
            Ok(id)
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
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(db_error)?;
            let lease = lock_watch(&tx, watch, owner, now_ms).await?;
            let row = tx
                .query_one(
                    "SELECT (SELECT count(*) FROM bw_watch_ids WHERE watch = $1),
                            (SELECT count(DISTINCT e) FROM unnest($2::text[]) AS u(e)
                             WHERE NOT EXISTS (SELECT 1 FROM bw_watch_ids
                                               WHERE watch = $1 AND entity = e))",
                    &[&watch, &ids],
                )
                .await
                .map_err(db_error)?;
            let (held, new): (i64, i64) = (
                row.try_get(0).map_err(db_error)?,
                row.try_get(1).map_err(db_error)?,
            );
            if held + new > limits.max_ids_per_watch as i64 {
                return Err(WatchError::TooManyIds(limits.max_ids_per_watch).into());
            }
            tx.execute(
                "INSERT INTO bw_watch_ids (watch, entity)
                 SELECT $1, e FROM unnest($2::text[]) WITH ORDINALITY AS u(e, n) ORDER BY n
                 ON CONFLICT DO NOTHING",
                &[&watch, &ids],
            )
            .await
            .map_err(db_error)?;
            tx.commit().await.map_err(db_error)?;
            Ok(lease)
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
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(db_error)?;
            lock_watch(&tx, watch, owner, now_ms).await?;
            for table in ["bw_watch_ids", "bw_watch_dirty"] {
                tx.execute(
                    &format!("DELETE FROM {table} WHERE watch = $1 AND entity = ANY($2)"),
                    &[&watch, &ids],
                )
                .await
                .map_err(db_error)?;
            }
            tx.commit().await.map_err(db_error)?;
            Ok(())
        })
    }

    fn close<'a>(&'a self, watch: &'a str, owner: &'a str) -> BackendFuture<'a, ()> {
        Box::pin(async move {
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(db_error)?;
            let closed = tx
                .execute(
                    "DELETE FROM bw_watches WHERE id = $1 AND owner = $2",
                    &[&watch, &owner],
                )
                .await
                .map_err(db_error)?;
            if closed == 0 {
                return Err(unknown(watch));
            }
            tx.execute("DELETE FROM bw_watch_dirty WHERE watch = $1", &[&watch])
                .await
                .map_err(db_error)?;
            tx.commit().await.map_err(db_error)?;
            Ok(())
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
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(db_error)?;
            lock_watch(&tx, watch, owner, now_ms).await?;
            let dirty: Vec<String> = tx
                .query(
                    "DELETE FROM bw_watch_dirty WHERE watch = $1 RETURNING entity",
                    &[&watch],
                )
                .await
                .map_err(db_error)?
                .iter()
                .map(|r| r.try_get(0).map_err(db_error))
                .collect::<Result<_, _>>()?;
            let rows = if refresh {
                tx.query(
                    "SELECT entity FROM bw_watch_ids WHERE watch = $1 ORDER BY ord",
                    &[&watch],
                )
                .await
            } else {
                tx.query(
                    "SELECT entity FROM bw_watch_ids
                     WHERE watch = $1 AND entity = ANY($2) ORDER BY ord",
                    &[&watch, &dirty],
                )
                .await
            }
            .map_err(db_error)?;
            let ids = rows
                .iter()
                .map(|r| r.try_get(0).map_err(db_error))
                .collect::<Result<_, _>>()?;
            tx.commit().await.map_err(db_error)?;
            Ok(ids)
        })
    }

    fn sweep(&self, now_ms: i64) -> BackendFuture<'_, usize> {
        Box::pin(async move {
            let client = self.client().await?;
            let closed: Vec<String> = client
                .query(
                    "DELETE FROM bw_watches WHERE expires_ms < $1 RETURNING id",
                    &[&now_ms],
                )
                .await
                .map_err(db_error)?
                .iter()
                .map(|r| r.try_get(0).map_err(db_error))
                .collect::<Result<_, _>>()?;
            if !closed.is_empty() {
                client
                    .execute(
                        "DELETE FROM bw_watch_dirty WHERE watch = ANY($1)",
                        &[&closed],
                    )
                    .await
                    .map_err(db_error)?;
            }
            Ok(closed.len())
        })
    }
}

impl SharedAuth for PostgresBackend {
    fn users(&self) -> BackendFuture<'_, Vec<String>> {
        Box::pin(async move {
            let client = self.client().await?;
            client
                .query("SELECT line FROM bw_users ORDER BY name", &[])
                .await
                .map_err(db_error)?
                .iter()
                .map(|r| r.try_get(0).map_err(db_error))
                .collect()
        })
    }

    fn put_users<'a>(&'a self, users: &'a [(String, String)]) -> BackendFuture<'a, ()> {
        Box::pin(async move {
            let (names, lines): (Vec<String>, Vec<String>) = users.iter().cloned().unzip();
            let client = self.client().await?;
            client
                .execute(
                    "INSERT INTO bw_users (name, line)
                     SELECT * FROM unnest($1::text[], $2::text[])
                     ON CONFLICT (name) DO UPDATE SET line = EXCLUDED.line",
                    &[&names, &lines],
                )
                .await
                .map_err(db_error)?;
            Ok(())
        })
    }

    fn remove_user<'a>(&'a self, name: &'a str) -> BackendFuture<'a, bool> {
        Box::pin(async move {
            let client = self.client().await?;
            let n = client
                .execute("DELETE FROM bw_users WHERE name = $1", &[&name])
                .await
                .map_err(db_error)?;
            Ok(n > 0)
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
            let client = self.client().await?;
            client
                .execute(
                    "INSERT INTO bw_sessions (key, username, role, expires_ms)
                     VALUES ($1, $2, $3, $4)
                     ON CONFLICT (key) DO UPDATE SET expires_ms = EXCLUDED.expires_ms",
                    &[&key, &user, &role, &expires_ms],
                )
                .await
                .map_err(db_error)?;
            Ok(())
        })
    }

    fn session<'a>(
        &'a self,
        key: &'a str,
        now_ms: i64,
    ) -> BackendFuture<'a, Option<(String, String)>> {
        Box::pin(async move {
            let client = self.client().await?;
            // Expired sessions are deleted on the way.
            client
                .execute("DELETE FROM bw_sessions WHERE expires_ms < $1", &[&now_ms])
                .await
                .map_err(db_error)?;
            let row = client
                .query_opt(
                    "SELECT username, role FROM bw_sessions WHERE key = $1",
                    &[&key],
                )
                .await
                .map_err(db_error)?;
            match row {
                Some(row) => Ok(Some((
                    row.try_get(0).map_err(db_error)?,
                    row.try_get(1).map_err(db_error)?,
                ))),
                None => Ok(None),
            }
        })
    }

    fn drop_session<'a>(&'a self, key: &'a str) -> BackendFuture<'a, ()> {
        Box::pin(async move {
            let client = self.client().await?;
            client
                .execute("DELETE FROM bw_sessions WHERE key = $1", &[&key])
                .await
                .map_err(db_error)?;
            Ok(())
        })
    }
}
