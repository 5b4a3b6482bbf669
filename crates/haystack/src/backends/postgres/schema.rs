//! The PostgreSQL schema: versioned migrations ([`MIGRATIONS`]), and whether histories
//! live in a TimescaleDB hypertable or a plain table.

use deadpool_postgres::Pool;

use super::{db_error, pool_error};
use crate::backends::BackendError;

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

/// Where histories live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum HisStorage {
    /// A TimescaleDB hypertable (rollups with `time_bucket`).
    Hypertable,
    /// A plain table (rollups with `date_bin`), and why.
    Plain(String),
}

impl HisStorage {
    pub(super) fn describe(&self) -> String {
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
pub(super) async fn migrate(pool: &Pool) -> Result<HisStorage, BackendError> {
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
