//! What a store shared by several server processes keeps for all of them: users and login
//! sessions ([`SharedAuth`]) and watches ([`SharedWatches`]), with the limits and errors of
//! watches.

use super::BackendFuture;

/// Limits of watches: of the ops' watch registry and of watches kept in a shared store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchLimits {
    /// Most open watches in all.
    pub max_watches: usize,
    /// Most open watches of one owner.
    pub max_watches_per_owner: usize,
    /// Most ids in one watch.
    pub max_ids_per_watch: usize,
    /// Lease when the client asks for none.
    pub default_lease_ms: i64,
    /// Shortest lease granted.
    pub min_lease_ms: i64,
    /// Longest lease granted.
    pub max_lease_ms: i64,
}

impl Default for WatchLimits {
    fn default() -> Self {
        Self {
            max_watches: 10_000,
            max_watches_per_owner: 100,
            max_ids_per_watch: 10_000,
            default_lease_ms: 60_000,
            min_lease_ms: 1_000,
            max_lease_ms: 3_600_000,
        }
    }
}

/// Why a watch request was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WatchError {
    /// No open watch has this id (it may have expired), or it belongs to someone else.
    #[error("unknown watch `{0}` (closed, expired or not yours)")]
    Unknown(String),
    /// Too many open watches.
    #[error("too many open watches (limit {0})")]
    TooManyWatches(usize),
    /// Too many ids in one watch.
    #[error("a watch holds at most {0} ids")]
    TooManyIds(usize),
}

/// Prefix of the ids of watches kept in a shared store (the local ones are `w-N`).
pub const SHARED_WATCH_PREFIX: &str = "sw-";

/// Users and login sessions kept in the store, so that every server process on it knows
/// the same users and accepts a bearer token issued by another. Users are kept as lines of
/// a users file (salted SCRAM keys, never passwords); sessions by the SHA-256 of their
/// token (hex), never the token itself.
pub trait SharedAuth: Send + Sync {
    /// Every stored user, as users-file lines.
    fn users(&self) -> BackendFuture<'_, Vec<String>>;
    /// Adds or replaces users (`name` → users-file line).
    fn put_users<'a>(&'a self, users: &'a [(String, String)]) -> BackendFuture<'a, ()>;
    /// Removes a user; returns whether it existed.
    fn remove_user<'a>(&'a self, name: &'a str) -> BackendFuture<'a, bool>;
    /// Records a session until `expires_ms`.
    fn put_session<'a>(
        &'a self,
        key: &'a str,
        user: &'a str,
        role: &'a str,
        expires_ms: i64,
    ) -> BackendFuture<'a, ()>;
    /// The user and role of a live session.
    fn session<'a>(
        &'a self,
        key: &'a str,
        now_ms: i64,
    ) -> BackendFuture<'a, Option<(String, String)>>;
    /// Ends a session.
    fn drop_session<'a>(&'a self, key: &'a str) -> BackendFuture<'a, ()>;
}

/// Watches kept in the store itself, so that any server process on it serves them: a
/// `watchSub` made through one process can be polled through another. A change marks
/// the watches holding the changed ids in the same atomic write as the change, so a poll
/// misses nothing and reports nothing twice. Used for HTTP watches; WebSocket watches
/// stay with their connection's process.
pub trait SharedWatches: Send + Sync {
    /// Opens a watch for `owner`; returns its id (starting with [`SHARED_WATCH_PREFIX`]).
    fn open<'a>(
        &'a self,
        owner: &'a str,
        dis: &'a str,
        lease_ms: i64,
        limits: &'a WatchLimits,
        now_ms: i64,
    ) -> BackendFuture<'a, String>;
    /// Adds ids (at most `limits.max_ids_per_watch` in all); renews the lease and returns it.
    fn add<'a>(
        &'a self,
        watch: &'a str,
        owner: &'a str,
        ids: &'a [String],
        limits: &'a WatchLimits,
        now_ms: i64,
    ) -> BackendFuture<'a, i64>;
    /// Removes ids.
    fn remove<'a>(
        &'a self,
        watch: &'a str,
        owner: &'a str,
        ids: &'a [String],
        now_ms: i64,
    ) -> BackendFuture<'a, ()>;
    /// Closes a watch.
    fn close<'a>(&'a self, watch: &'a str, owner: &'a str) -> BackendFuture<'a, ()>;
    /// The ids changed since the last poll (every id with `refresh`), in watch order.
    fn poll<'a>(
        &'a self,
        watch: &'a str,
        owner: &'a str,
        refresh: bool,
        now_ms: i64,
    ) -> BackendFuture<'a, Vec<String>>;
    /// Closes the watches whose lease ran out; returns how many.
    fn sweep(&self, now_ms: i64) -> BackendFuture<'_, usize>;
}
