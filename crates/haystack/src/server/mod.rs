//! The Haystack server: HTTP/1.1 (hyper) and WebSocket (tokio-tungstenite) over the sans-IO
//! op layer [`crate::ops`], with Haystack authentication ([`crate::auth::AuthServer`]),
//! optional TLS and mutual TLS (rustls), and an optional snapshot file.
//!
//! This layer only moves bytes and fires timers: it reads requests (bounded bodies and
//! headers, timeouts), asks [`crate::auth::AuthServer`] about the `Authorization` header,
//! hands the request to [`Engine::handle_http`] or the WebSocket envelope loop, and writes
//! the answer. One task listens to the backend's change channel and wakes the WebSocket
//! connections whose watches changed.
//!
//! ```no_run
//! # async fn run() -> Result<(), buildwire_haystack::server::ServerError> {
//! use buildwire_haystack::auth::Role;
//! use buildwire_haystack::server::{HaystackServer, HaystackServerConfig};
//! let config = HaystackServerConfig::new()
//!     .bind("127.0.0.1:0".parse().expect("address"))
//!     .load_file("alpha.zinc")
//!     .user("ann", "s3cret", Role::Admin)?;
//! let server = HaystackServer::start(config).await?;
//! println!("serving {} on {}", server.url(), server.local_addr());
//! server.stop().await?;
//! # Ok(()) }
//! ```

mod body_budget;
mod http;
mod tls;
mod users;
mod ws;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{broadcast, mpsc, watch};
use tokio::task::JoinHandle;

use crate::auth::{AuthConfig, AuthServer, Role, User, UserFileError};
use crate::backends::{Backend, MemoryBackend};
use crate::codec::Format;
use crate::ops::{ActionRegistry, Engine, Limits, ServerInfo, SnapshotError, WireFormat};
use crate::value::Grid;

pub use tls::TlsConfig;
pub use users::{DEFAULT_ITERATIONS, load_users_file, parse_user_spec, user_file_line};

/// Why the server could not start (or save its snapshot).
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// A file or socket operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        source: std::io::Error,
    },
    /// The TLS configuration is unusable.
    #[error("TLS: {0}")]
    Tls(String),
    /// A users file line is wrong.
    #[error(transparent)]
    Users(#[from] UserFileError),
    /// A user given as `name:password:role` is wrong.
    #[error("user: {0}")]
    User(String),
    /// A data file could not be read or loaded.
    #[error("data: {0}")]
    Data(String),
    /// The snapshot could not be restored.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// The configuration is inconsistent.
    #[error("configuration: {0}")]
    Config(String),
}

impl ServerError {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        ServerError::Io {
            context: context.into(),
            source,
        }
    }
}

/// Timeouts against slow or idle clients.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeouts {
    /// Longest time to receive a request's headers (also closes idle keep-alive
    /// connections).
    pub header_read: Duration,
    /// Longest time to receive a request body.
    pub body_read: Duration,
    /// Longest TLS handshake.
    pub tls_handshake: Duration,
    /// Longest time for a WebSocket client to log in after connecting.
    pub ws_auth: Duration,
    /// A WebSocket connection with no message for this long is closed.
    pub ws_idle: Duration,
    /// How long shutdown waits for requests in progress.
    pub shutdown_grace: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            header_read: Duration::from_secs(30),
            body_read: Duration::from_secs(60),
            tls_handshake: Duration::from_secs(10),
            ws_auth: Duration::from_secs(30),
            ws_idle: Duration::from_secs(300),
            shutdown_grace: Duration::from_secs(10),
        }
    }
}

/// Default of [`HaystackServerConfig::body_budget`]: 256 MiB of request bodies in all.
pub const DEFAULT_BODY_BUDGET: usize = 256 * 1024 * 1024;
/// Default of [`HaystackServerConfig::body_budget`]: 64 MiB per user.
pub const DEFAULT_BODY_BUDGET_PER_USER: usize = 64 * 1024 * 1024;

/// Where and how often the in-memory state is saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotConfig {
    /// The file: `.json` is written as JSON v4, anything else as Zinc.
    pub path: PathBuf,
    /// How often a changed state is saved (and always at shutdown).
    pub interval: Duration,
}

/// What to serve and how: start a server with [`HaystackServer::start`]. The defaults
/// ([`HaystackServerConfig::new`]) serve 127.0.0.1:8080 at `/api`, in-memory storage, no
/// users (anonymous admin), no TLS; the methods below change one setting each.
pub struct HaystackServerConfig {
    bind: SocketAddr,
    prefix: String,
    grids: Vec<Grid>,
    files: Vec<PathBuf>,
    users: Vec<User>,
    user_files: Vec<PathBuf>,
    user_specs: Vec<String>,
    iterations: u32,
    auth: AuthConfig,
    anonymous: Option<Option<Role>>,
    tls: Option<TlsConfig>,
    limits: Limits,
    info: ServerInfo,
    backend: Option<Arc<dyn Backend>>,
    backend_url: Option<String>,
    snapshot: Option<SnapshotConfig>,
    actions: Option<Arc<dyn ActionRegistry>>,
    timeouts: Timeouts,
    max_connections: usize,
    /// Bytes of request bodies held while they arrive: in all, and per user.
    body_budget: (usize, usize),
}

impl Default for HaystackServerConfig {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from(([127, 0, 0, 1], 8080)),
            prefix: "/api".to_owned(),
            grids: Vec::new(),
            files: Vec::new(),
            users: Vec::new(),
            user_files: Vec::new(),
            user_specs: Vec::new(),
            iterations: DEFAULT_ITERATIONS,
            auth: AuthConfig::default(),
            anonymous: None,
            tls: None,
            limits: Limits::default(),
            info: ServerInfo::default(),
            backend: None,
            backend_url: None,
            snapshot: None,
            actions: None,
            timeouts: Timeouts::default(),
            max_connections: 10_000,
            body_budget: (DEFAULT_BODY_BUDGET, DEFAULT_BODY_BUDGET_PER_USER),
        }
    }
}

/// Reads a grid file by its extension: `.zinc`, `.json` (JSON v4) or `.trio`.
pub fn read_grid_file(path: &Path) -> Result<Grid, ServerError> {
    let name = path.display().to_string();
    let format = Format::from_path(&name)
        .ok_or_else(|| ServerError::Data(format!("{name}: use a .zinc, .json or .trio file")))?;
    let text = std::fs::read_to_string(path).map_err(|e| ServerError::io(&name, e))?;
    format
        .decode_grid(&text)
        .map_err(|e| ServerError::Data(format!("{name}: {e}")))
}

impl HaystackServerConfig {
    /// A server on 127.0.0.1:8080 at `/api`, in-memory storage, no users (anonymous
    /// admin), no TLS.
    pub fn new() -> Self {
        Self::default()
    }

    /// The address to listen on (port 0 picks a free port; see [`HaystackServer::local_addr`]).
    pub fn bind(mut self, addr: SocketAddr) -> Self {
        self.bind = addr;
        self
    }

    /// The base path of the ops (default `/api`): ops at `{prefix}/{op}`, the WebSocket at
    /// `{prefix}/ws`.
    pub fn prefix(mut self, prefix: &str) -> Self {
        self.prefix = format!("/{}", prefix.trim_matches('/'));
        self
    }

    /// Entities to load (every row an entity with an `id`).
    pub fn load(mut self, grid: Grid) -> Self {
        self.grids.push(grid);
        self
    }

    /// A data file to load at start (`.zinc`, `.json` or `.trio`).
    pub fn load_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.files.push(path.into());
        self
    }

    /// Users who may log in.
    pub fn users(mut self, users: impl IntoIterator<Item = User>) -> Self {
        self.users.extend(users);
        self
    }

    /// A user from a password (salted and hashed now, with
    /// [`HaystackServerConfig::iterations`]).
    pub fn user(mut self, name: &str, password: &str, role: Role) -> Result<Self, ServerError> {
        let user = User::with_password(name, password, role, self.iterations)
            .map_err(|e| ServerError::User(e.to_string()))?;
        self.users.push(user);
        Ok(self)
    }

    /// A user as `name:password:role` (hashed at start).
    pub fn user_spec(mut self, spec: &str) -> Self {
        self.user_specs.push(spec.to_owned());
        self
    }

    /// A users file (`name:role:iterations:salt:storedKey:serverKey` lines) read at start.
    pub fn users_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.user_files.push(path.into());
        self
    }

    /// PBKDF2 iterations for users given with passwords (default 10,000; at least 4,096).
    pub fn iterations(mut self, iterations: u32) -> Self {
        self.iterations = iterations.max(4096);
        self
    }

    /// Login limits and timings (handshake and token lifetimes, lockout).
    pub fn auth_config(mut self, config: AuthConfig) -> Self {
        self.auth = config;
        self
    }

    /// The role of requests without credentials: by default `Admin` when no user is
    /// configured (an open development server) and none (login required) otherwise.
    pub fn anonymous(mut self, role: Option<Role>) -> Self {
        self.anonymous = Some(role);
        self
    }

    /// Serves HTTPS and WSS.
    pub fn tls(mut self, tls: TlsConfig) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Request limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// What `about` reports (`boot_ms` is set at start).
    pub fn info(mut self, info: ServerInfo) -> Self {
        self.info = info;
        self
    }

    /// Another storage backend instead of a new in-memory one.
    pub fn backend(mut self, backend: Arc<dyn Backend>) -> Self {
        self.backend = Some(backend);
        self
    }

    /// The storage backend by URL (`memory`, `redis://...`, `postgres://...`), opened
    /// when the server starts (see [`crate::backends::open`]).
    pub fn backend_url(mut self, url: impl Into<String>) -> Self {
        self.backend_url = Some(url.into());
        self
    }

    /// Keeps the in-memory state in a snapshot file: restored at start when it exists
    /// (instead of loading the data files), saved every `interval` when changed and at
    /// shutdown.
    pub fn snapshot(mut self, path: impl Into<PathBuf>, interval: Duration) -> Self {
        self.snapshot = Some(SnapshotConfig {
            path: path.into(),
            interval,
        });
        self
    }

    /// The actions `invokeAction` runs.
    pub fn actions(mut self, actions: Arc<dyn ActionRegistry>) -> Self {
        self.actions = Some(actions);
        self
    }

    /// Timeouts.
    pub fn timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    /// Caps the memory that request bodies take while they arrive: `total` bytes for the
    /// whole server (default 256 MiB; past it new bodies get 503) and `per_user` for one
    /// user's bodies in progress (default 64 MiB; past it 429). Each body is bounded by the
    /// ops' `max_body_bytes` besides.
    pub fn body_budget(mut self, total: usize, per_user: usize) -> Self {
        self.body_budget = (total.max(1), per_user.max(1));
        self
    }

    /// Most connections at once; more are closed when accepted.
    pub fn max_connections(mut self, max: usize) -> Self {
        self.max_connections = max.max(1);
        self
    }
}

impl HaystackServer {
    /// Loads data and users, opens the backend, binds, and starts serving; the returned
    /// server says where it listens ([`HaystackServer::local_addr`]) and stops with
    /// [`HaystackServer::stop`].
    pub async fn start(config: HaystackServerConfig) -> Result<HaystackServer, ServerError> {
        let mut users = config.users;
        for path in &config.user_files {
            users.extend(load_users_file(path)?);
        }
        for spec in &config.user_specs {
            users.push(parse_user_spec(spec, config.iterations).map_err(ServerError::User)?);
        }
        let backend = match (config.backend, &config.backend_url) {
            (Some(backend), _) => Some(backend),
            (None, Some(url)) if url != "memory" => Some(
                crate::backends::open(url)
                    .await
                    .map_err(|e| ServerError::Config(e.to_string()))?,
            ),
            (None, _) => None,
        };
        let (backend, memory): (Arc<dyn Backend>, Option<Arc<MemoryBackend>>) = match backend {
            Some(backend) => {
                if config.snapshot.is_some() {
                    return Err(ServerError::Config(
                        "snapshots are for the in-memory backend".into(),
                    ));
                }
                (backend, None)
            }
            None => {
                let memory = Arc::new(MemoryBackend::new());
                (memory.clone(), Some(memory))
            }
        };
        // A store that keeps users shares them between the server processes on it: the
        // users given here are stored, and every stored user can log in.
        let shared_auth = backend.shared_auth().is_some();
        if let Some(store) = backend.shared_auth() {
            let lines: Vec<(String, String)> = users
                .iter()
                .map(|u| (u.name.clone(), u.to_line()))
                .collect();
            store
                .put_users(&lines)
                .await
                .map_err(|e| ServerError::Config(e.to_string()))?;
            users = stored_users(store)
                .await
                .map_err(|e| ServerError::Config(e.to_string()))?;
        }
        let anonymous = config.anonymous.unwrap_or(if users.is_empty() {
            Some(Role::Admin)
        } else {
            None
        });
        let auth = if users.is_empty() {
            None
        } else {
            let mut auth = AuthServer::new(config.auth.clone())
                .map_err(|e| ServerError::Config(e.to_string()))?;
            for user in users {
                auth.add_user(user);
            }
            Some(Arc::new(Mutex::new(auth)))
        };

        let restored = match (&config.snapshot, &memory) {
            (Some(snapshot), Some(memory)) if snapshot.path.exists() => {
                let path = snapshot.path.clone();
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| ServerError::io(path.display().to_string(), e))?;
                memory.restore_text(&text, snapshot_format(&path))?;
                true
            }
            _ => false,
        };
        if !restored {
            let mut grids = config.grids;
            for path in &config.files {
                grids.push(read_grid_file(path)?);
            }
            for grid in &grids {
                backend
                    .load(grid)
                    .await
                    .map_err(|e| ServerError::Data(e.to_string()))?;
            }
        }

        let listener = tokio::net::TcpListener::bind(config.bind)
            .await
            .map_err(|e| ServerError::io(format!("bind {}", config.bind), e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| ServerError::io("local address", e))?;
        let tls = match &config.tls {
            Some(tls) => Some(tls.acceptor()?),
            None => None,
        };

        let mut info = config.info;
        info.boot_ms = now_ms();
        let mut engine = Engine::new(backend.clone(), info, config.limits);
        if let Some(actions) = config.actions {
            engine = engine.with_actions(actions);
        }
        if let Some(auth) = &auth {
            engine = engine.with_auth(auth.clone());
        }
        let engine = Arc::new(engine);
        let (shutdown_tx, shutdown_rx) = watch::channel(false);
        let shared = Arc::new(Shared {
            engine: engine.clone(),
            auth,
            anonymous,
            prefix: config.prefix,
            timeouts: config.timeouts,
            pushers: Mutex::new(HashMap::new()),
            next_connection: AtomicU64::new(1),
            shutdown: shutdown_rx.clone(),
            ws_slots: Arc::new(tokio::sync::Semaphore::new(config.max_connections)),
            bodies: body_budget::BodyBudget::new(config.body_budget.0, config.body_budget.1),
        });

        let changes = tokio::spawn(pump_changes(
            shared.clone(),
            backend.subscribe(),
            shutdown_rx.clone(),
        ));
        let expirer = tokio::spawn(expire_timed_writes(backend.clone(), shutdown_rx.clone()));
        if shared_auth {
            // Ends with the shutdown signal.
            tokio::spawn(refresh_users(
                shared.clone(),
                backend.clone(),
                shutdown_rx.clone(),
            ));
        }
        let saver = match (config.snapshot, memory) {
            (Some(config), Some(memory)) => Some(tokio::spawn(save_snapshots(
                config,
                memory,
                shutdown_rx.clone(),
            ))),
            _ => None,
        };
        let accept = tokio::spawn(http::accept_loop(
            listener,
            tls,
            shared.clone(),
            config.max_connections,
        ));
        Ok(HaystackServer {
            addr,
            tls: config.tls.is_some(),
            shared,
            shutdown: shutdown_tx,
            accept,
            changes,
            expirer,
            saver,
        })
    }
}

fn snapshot_format(path: &Path) -> WireFormat {
    match path.extension().and_then(|e| e.to_str()) {
        Some(ext) if ext.eq_ignore_ascii_case("json") => WireFormat::Json,
        _ => WireFormat::Zinc,
    }
}

/// The wall clock in UTC milliseconds (the only clock read of the server).
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Resolves once the server is shutting down.
pub(crate) async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    // The guard `wait_for` returns is dropped here, not held by the caller's future.
    let _ = shutdown.wait_for(|stop| *stop).await;
}

/// What every connection of a server shares.
pub(crate) struct Shared {
    pub(crate) engine: Arc<Engine>,
    pub(crate) auth: Option<Arc<Mutex<AuthServer>>>,
    pub(crate) anonymous: Option<Role>,
    pub(crate) prefix: String,
    pub(crate) timeouts: Timeouts,
    /// WebSocket connection → where to send the ids of its watches that changed.
    pub(crate) pushers: Mutex<HashMap<u64, mpsc::Sender<String>>>,
    pub(crate) next_connection: AtomicU64,
    pub(crate) shutdown: watch::Receiver<bool>,
    /// WebSocket connections (their HTTP connection's slot is freed by the upgrade).
    pub(crate) ws_slots: Arc<tokio::sync::Semaphore>,
    /// The memory request bodies take while they arrive.
    pub(crate) bodies: Arc<body_budget::BodyBudget>,
}

impl Shared {
    pub(crate) fn auth(&self) -> Option<std::sync::MutexGuard<'_, AuthServer>> {
        self.auth
            .as_ref()
            .map(|a| a.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn notify(&self, affected: Vec<(String, Option<u64>)>) {
        let pushers = self.pushers.lock().unwrap_or_else(PoisonError::into_inner);
        for (watch_id, connection) in affected {
            if let Some(sender) = connection.and_then(|c| pushers.get(&c)) {
                // A full queue already holds a wake-up; the watch stays marked changed.
                let _ = sender.try_send(watch_id);
            }
        }
    }
}

/// The users a shared store keeps.
async fn stored_users(store: &dyn crate::backends::SharedAuth) -> Result<Vec<User>, String> {
    let lines = store.users().await.map_err(|e| e.to_string())?;
    crate::auth::parse_user_file(&lines.join("\n")).map_err(|e| format!("stored users: {e}"))
}

/// Every few seconds, adds or updates the users a shared store keeps (another process or
/// `buildwire haystack users` may have added some).
async fn refresh_users(
    shared: Arc<Shared>,
    backend: Arc<dyn Backend>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut tick = tokio::time::interval(Duration::from_secs(5));
    loop {
        tokio::select! {
            _ = tick.tick() => {
                let Some(store) = backend.shared_auth() else { return };
                if let Ok(users) = stored_users(store).await
                    && let Some(mut auth) = shared.auth()
                {
                    for user in users {
                        auth.add_user(user);
                    }
                }
            }
            _ = stopped(&mut shutdown) => break,
        }
    }
}

/// Feeds the backend's change events to the watches and wakes WebSocket connections.
async fn pump_changes(
    shared: Arc<Shared>,
    mut changes: broadcast::Receiver<Arc<crate::backends::ChangeEvent>>,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            event = changes.recv() => match event {
                // An event without ids comes from a remote backend that lost its change
                // feed for a while: anything may have changed.
                Ok(event) if event.ids.is_empty() => {
                    let affected = shared.engine.on_missed_changes();
                    shared.notify(affected);
                }
                Ok(event) => {
                    let affected = shared.engine.on_change(&event);
                    shared.notify(affected);
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    let affected = shared.engine.on_missed_changes();
                    shared.notify(affected);
                }
                Err(broadcast::error::RecvError::Closed) => break,
            },
            _ = stopped(&mut shutdown) => break,
        }
    }
}

/// Once a second, lets timed point commands lapse (so `writeVal` follows, and watches
/// see it).
async fn expire_timed_writes(backend: Arc<dyn Backend>, mut shutdown: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {
                let _ = backend.expire_writes(now_ms()).await;
                if let Some(watches) = backend.shared_watches() {
                    let _ = watches.sweep(now_ms()).await;
                }
            }
            _ = stopped(&mut shutdown) => break,
        }
    }
}

/// Writes the snapshot atomically (a temporary file renamed over the old one).
fn write_snapshot(memory: &MemoryBackend, path: &Path) -> Result<(), ServerError> {
    let text = memory.snapshot_text(snapshot_format(path));
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, text).map_err(|e| ServerError::io(tmp.display().to_string(), e))?;
    std::fs::rename(&tmp, path).map_err(|e| ServerError::io(path.display().to_string(), e))
}

async fn save_snapshots(
    config: SnapshotConfig,
    memory: Arc<MemoryBackend>,
    mut shutdown: watch::Receiver<bool>,
) -> Result<(), ServerError> {
    let mut saved = memory.version();
    let mut tick = tokio::time::interval(config.interval.max(Duration::from_millis(100)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let stop = tokio::select! {
            _ = tick.tick() => false,
            _ = stopped(&mut shutdown) => true,
        };
        let version = memory.version();
        if version != saved || (stop && !config.path.exists()) {
            let (m, path) = (memory.clone(), config.path.clone());
            tokio::task::spawn_blocking(move || write_snapshot(&m, &path))
                .await
                .map_err(|e| ServerError::Config(format!("snapshot task: {e}")))??;
            saved = version;
        }
        if stop {
            return Ok(());
        }
    }
}

/// A running Haystack server: started with [`HaystackServer::start`], stopped with
/// [`HaystackServer::stop`].
pub struct HaystackServer {
    addr: SocketAddr,
    tls: bool,
    shared: Arc<Shared>,
    shutdown: watch::Sender<bool>,
    accept: JoinHandle<()>,
    changes: JoinHandle<()>,
    expirer: JoinHandle<()>,
    saver: Option<JoinHandle<Result<(), ServerError>>>,
}

impl std::fmt::Debug for HaystackServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HaystackServer")
            .field("addr", &self.addr)
            .field("tls", &self.tls)
            .finish_non_exhaustive()
    }
}

impl HaystackServer {
    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL of the ops, e.g. `http://127.0.0.1:8080/api`.
    pub fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}{}", self.addr, self.shared.prefix)
    }

    /// The WebSocket URL, e.g. `ws://127.0.0.1:8080/api/ws`.
    pub fn ws_url(&self) -> String {
        let scheme = if self.tls { "wss" } else { "ws" };
        format!("{scheme}://{}{}/ws", self.addr, self.shared.prefix)
    }

    /// The op layer (backend, watches).
    pub fn engine(&self) -> &Arc<Engine> {
        &self.shared.engine
    }

    /// Whether logins are required.
    pub fn auth_enabled(&self) -> bool {
        self.shared.auth.is_some()
    }

    /// Stops accepting, lets requests in progress finish (up to the grace timeout), closes
    /// WebSocket connections, and saves the snapshot. Returns the snapshot's result.
    pub async fn stop(self) -> Result<(), ServerError> {
        let _ = self.shutdown.send(true);
        let grace = self.shared.timeouts.shutdown_grace;
        let _ = tokio::time::timeout(grace + Duration::from_secs(1), self.accept).await;
        let _ = self.changes.await;
        let _ = self.expirer.await;
        match self.saver {
            Some(saver) => saver
                .await
                .map_err(|e| ServerError::Config(format!("snapshot task: {e}")))?,
            None => Ok(()),
        }
    }
}
