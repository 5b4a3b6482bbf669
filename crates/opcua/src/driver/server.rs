//! `OpcuaServer`: the sans-IO [`Server`] on TCP. One task accepts, one task per connection
//! moves bytes between its socket and its [`ServerConnection`], and one housekeeping task
//! expires sessions.
//!
//! Sharing: the `Server` sits behind a `std::sync::Mutex`. A connection holds the lock only
//! while the core handles the bytes it just read (no `.await` inside), then writes its
//! responses outside the lock; the benchmark payload is shared (`Bytes`), so even a 100 MiB
//! getData response is built under the lock in constant time, and its chunks go to the
//! socket as gather writes of header bytes and payload slices: no copy in user space. A
//! `tokio::sync::Mutex` would add a wake-up per request for nothing, and a single owner task
//! with channels would add two cross-task hops to every request of the latency-bound 1 KiB
//! loop.

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

use crate::encoding::DateTime;
use crate::server::address_space::AddNodeError;
use crate::server::security::Refusal;
use crate::server::server_state::SessionEvent;
use crate::server::{CloseReason, Server, ServerConfig, ServerConnection};
use crate::transport::TransmitBuffer;
use crate::types::StatusCode;

/// Bytes of chunks gathered before one (vectored) socket write. Shared payload slices cost
/// no copy, so this only bounds how many chunk headers are prepared ahead.
pub const SERVER_WRITE_BATCH: usize = 4 * 1024 * 1024;
/// How often sessions are checked for expiry.
pub const SESSION_SWEEP_INTERVAL: Duration = Duration::from_secs(1);

type SharedServer = Arc<Mutex<Server>>;

fn lock(server: &SharedServer) -> MutexGuard<'_, Server> {
    // A panic in another connection's handler leaves the state as consistent as the core
    // keeps it between calls; keep serving.
    server.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerStartError {
    /// Binding the listening socket failed.
    #[error("cannot listen on {bind}: {source}")]
    Bind {
        /// The address asked for.
        bind: String,
        /// The error.
        source: io::Error,
    },
    /// The address space setup failed.
    #[error("address space: {0}")]
    AddressSpace(#[from] AddNodeError),
}

/// A setup step run on the new [`Server`] before the first connection: adds namespaces,
/// nodes and methods (e.g. [`bench_methods::install`](crate::server::bench_methods::install)).
pub type SetupHook = Box<dyn FnOnce(&mut Server) -> Result<(), AddNodeError> + Send>;

/// What [`OpcuaServer::start`] needs: where to listen, the server core's configuration and
/// the setup steps that fill its address space.
///
/// ```
/// use buildwire_opcua::driver::OpcuaServerConfig;
/// use buildwire_opcua::server::{ServerConfig, bench_methods};
///
/// let config = OpcuaServerConfig::new("127.0.0.1:0", ServerConfig::default())
///     .with_setup(bench_methods::install);
/// assert_eq!(config.setup.len(), 1);
/// ```
pub struct OpcuaServerConfig {
    /// `host:port` to listen on (port 0 picks a free one).
    pub bind: String,
    /// The server core's configuration. An empty `endpoint_url` becomes
    /// `opc.tcp://<bound address>/`; a `start_time` left at `DateTime::MIN` becomes the
    /// current wall clock.
    pub server: ServerConfig,
    /// Setup steps, run in order on the new server before the first connection.
    pub setup: Vec<SetupHook>,
}

impl OpcuaServerConfig {
    /// Listens on `bind` with `server`, and no setup steps yet.
    pub fn new(bind: impl Into<String>, server: ServerConfig) -> Self {
        Self {
            bind: bind.into(),
            server,
            setup: Vec::new(),
        }
    }

    /// Adds a setup step, run after those added before.
    pub fn with_setup(
        mut self,
        hook: impl FnOnce(&mut Server) -> Result<(), AddNodeError> + Send + 'static,
    ) -> Self {
        self.setup.push(Box::new(hook));
        self
    }
}

impl Default for OpcuaServerConfig {
    /// `127.0.0.1:4840` with the default [`ServerConfig`] and no setup steps.
    fn default() -> Self {
        Self::new("127.0.0.1:4840", ServerConfig::default())
    }
}

impl std::fmt::Debug for OpcuaServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpcuaServerConfig")
            .field("bind", &self.bind)
            .field("server", &self.server)
            .field("setup", &format_args!("{} steps", self.setup.len()))
            .finish()
    }
}

/// A running server: its bound address and endpoint URL, access to the shared state, and
/// [`shutdown`](OpcuaServer::shutdown) to stop it (dropping it leaves the tasks running).
#[derive(Debug)]
pub struct OpcuaServer {
    local_addr: SocketAddr,
    endpoint_url: String,
    shutdown: watch::Sender<bool>,
    accept_task: JoinHandle<()>,
    server: SharedServer,
    /// Bumped when responses answered outside a connection (external method calls) wait
    /// in an outbox: every connection then looks at its own.
    outbox: watch::Sender<u64>,
}

impl OpcuaServer {
    /// Binds `config.bind`, builds the [`Server`] and runs the setup steps on it before the
    /// first connection. Must run inside a tokio runtime.
    pub async fn start(config: OpcuaServerConfig) -> Result<Self, ServerStartError> {
        let OpcuaServerConfig {
            bind,
            server: mut config,
            setup,
        } = config;
        let bind_error = |source| ServerStartError::Bind {
            bind: bind.clone(),
            source,
        };
        let listener = TcpListener::bind(&bind).await.map_err(bind_error)?;
        let local_addr = listener.local_addr().map_err(bind_error)?;
        if config.endpoint_url.is_empty() {
            config.endpoint_url = format!("opc.tcp://{local_addr}/");
        }
        if config.start_time == DateTime::MIN {
            config.start_time = wall_clock_now();
        }
        let endpoint_url = config.endpoint_url.clone();
        let max_connections = config.max_connections;
        let mut server = Server::new(config, Instant::now())?;
        for step in setup {
            step(&mut server)?;
        }
        let server = Arc::new(Mutex::new(server));
        let (shutdown, watcher) = watch::channel(false);
        let (outbox, _) = watch::channel(0u64);
        let released = Arc::new(Notify::new());
        tokio::spawn(sweep_sessions(
            Arc::clone(&server),
            Arc::clone(&released),
            watcher.clone(),
        ));
        let accept_task = tokio::spawn(accept_loop(
            listener,
            Arc::clone(&server),
            released,
            Wake {
                shutdown: watcher,
                outbox: outbox.subscribe(),
            },
            max_connections,
        ));
        Ok(Self {
            local_addr,
            endpoint_url,
            shutdown,
            accept_task,
            server,
            outbox,
        })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The endpoint URL the server reports.
    pub fn endpoint_url(&self) -> &str {
        &self.endpoint_url
    }

    /// Runs `f` on the shared server state (e.g. to change a value while serving).
    pub fn with_server<T>(&self, f: impl FnOnce(&mut Server) -> T) -> T {
        f(&mut lock(&self.server))
    }

    /// Answers an external method invocation (see
    /// [`Server::on_method_call`]) and wakes the connections so that a finished
    /// CallResponse goes out at once. False when the invocation is unknown.
    pub fn complete_method_call(
        &self,
        id: u64,
        result: Result<Vec<crate::encoding::Variant>, StatusCode>,
    ) -> bool {
        let known = lock(&self.server).complete_method_call(id, result, Instant::now());
        if known {
            self.outbox
                .send_modify(|count| *count = count.wrapping_add(1));
        }
        known
    }

    /// Sets the value of a Variable from the application (a new reading, a simulated
    /// point), stamped with the server's clock; monitored items see it at once.
    pub fn set_value(
        &self,
        node: &crate::encoding::NodeId,
        value: crate::encoding::Variant,
    ) -> Result<(), StatusCode> {
        let now = Instant::now();
        let mut server = lock(&self.server);
        let wall = server.wall_clock(now);
        server.address_space.set_value(node, value, wall)?;
        server.value_written(node, now);
        Ok(())
    }

    /// Announces the shutdown to clients for `notice` (ServerStatus.State Shutdown,
    /// SecondsTillShutdown counting down, ShutdownReason `reason`: OPC 10000-5 §12.6), goes
    /// on serving meanwhile so that their subscriptions deliver it, then stops accepting and
    /// closes every connection.
    pub async fn shutdown_announced(self, notice: Duration, reason: &str) {
        self.with_server(|server| server.announce_shutdown(Instant::now(), notice, reason));
        tokio::time::sleep(notice).await;
        self.shutdown().await;
    }

    /// Stops accepting and closes every connection.
    pub async fn shutdown(self) {
        let _ = self.shutdown.send(true);
        let _ = self.accept_task.await;
    }
}

/// Expires sessions and drives the subscriptions of sessions without a channel: they go on
/// sampling at their own intervals, so the task wakes at the server's next deadline (at
/// least every [`SESSION_SWEEP_INTERVAL`]) and whenever a connection is released (its
/// subscriptions just became orphans with deadlines of their own).
async fn sweep_sessions(
    server: SharedServer,
    released: Arc<Notify>,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        let sweep = Instant::now() + SESSION_SWEEP_INTERVAL;
        let deadline = lock(&server)
            .poll_timeout()
            .map_or(sweep, |next| next.min(sweep));
        tokio::select! {
            () = tokio::time::sleep_until(deadline.into()) => {
                lock(&server).handle_timeout(Instant::now());
            }
            () = released.notified() => {}
            _ = shutdown.changed() => return,
        }
    }
}

/// Connections that have not opened a secure channel yet, oldest first, each with the
/// signal that closes it. They may take at most half of the connection slots, and when all
/// slots are taken a new connection closes the oldest of them instead of being refused
/// (Bad_MaxConnectionsReached for the closed one), so clients that do not finish Hello and
/// OpenSecureChannel never keep one that does out (issue 30: 256 silent connections used
/// to hold every slot). A real client opens its channel within milliseconds, so it is only
/// pushed out by a flood of that many connections meanwhile.
#[derive(Default)]
struct OpeningConnections {
    queue: Mutex<VecDeque<(u64, Arc<Notify>)>>,
}

impl OpeningConnections {
    /// Registers connection `id`; if that makes more than `max`, signals the oldest to close.
    fn admit(&self, id: u64, max: usize) -> Arc<Notify> {
        let close = Arc::new(Notify::new());
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        queue.push_back((id, Arc::clone(&close)));
        while queue.len() > max {
            if let Some((_, oldest)) = queue.pop_front() {
                oldest.notify_one();
            }
        }
        close
    }

    /// Signals the oldest connection still opening to close; false when none is opening.
    fn evict_oldest(&self) -> bool {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        match queue.pop_front() {
            Some((_, oldest)) => {
                oldest.notify_one();
                true
            }
            None => false,
        }
    }

    /// Connection `id` opened its channel, or ended.
    fn leave(&self, id: u64) {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        queue.retain(|(queued, _)| *queued != id);
    }
}

async fn accept_loop(
    listener: TcpListener,
    server: SharedServer,
    released: Arc<Notify>,
    mut wake: Wake,
    max_connections: usize,
) {
    let mut connections = Vec::new();
    let opening = Arc::new(OpeningConnections::default());
    let max_opening = (max_connections / 2).max(1);
    let mut next_id = 0u64;
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((socket, peer)) = accepted else { continue };
                let _ = socket.set_nodelay(true);
                connections.retain(|task: &JoinHandle<()>| !task.is_finished());
                // Full: the oldest connection still opening makes room (it closes within
                // moments); only when every slot holds an open channel is the new one refused.
                if connections.len() >= max_connections && !opening.evict_oldest() {
                    let why = "every slot holds an open channel";
                    tracing::warn!(%peer, max_connections, "connection refused: {why}");
                    tokio::spawn(refuse_connection(socket, max_connections));
                    continue;
                }
                next_id += 1;
                let close = opening.admit(next_id, max_opening);
                let slot = OpeningSlot { id: next_id, opening: Arc::clone(&opening), close };
                tracing::debug!(%peer, "connection accepted");
                connections.push(tokio::spawn(serve_connection(
                    socket,
                    peer,
                    Arc::clone(&server),
                    Arc::clone(&released),
                    wake.clone(),
                    slot,
                )));
            }
            _ = wake.shutdown.changed() => break,
        }
    }
    for task in connections {
        let _ = task.await;
    }
}

/// Answers a connection over the limit with an Error message and closes it.
async fn refuse_connection(mut socket: TcpStream, max_connections: usize) {
    use crate::transport::{ConnectionMessage, ErrorMessage};
    let reason = format!("this server serves at most {max_connections} connections at once");
    let message = ErrorMessage::new(StatusCode::BAD_MAX_CONNECTIONS_REACHED, &reason);
    let _ = socket.write_all(&message.to_message_bytes()).await;
    let _ = socket.shutdown().await;
}

/// Moves bytes between one socket and its `ServerConnection` until either side closes. Reads
/// go straight into the connection's receive buffer and writes are gathered (header bytes
/// and shared payload slices in one `writev`), so a getData payload is copied only by the
/// kernel.
async fn serve_connection(
    socket: TcpStream,
    peer: SocketAddr,
    server: SharedServer,
    released: Arc<Notify>,
    wake: Wake,
    slot: OpeningSlot,
) {
    let mut connection = ServerConnection::accepted(&lock(&server), Instant::now());
    run_connection(socket, &server, &mut connection, wake, &slot, peer).await;
    slot.opening.leave(slot.id);
    log_close(peer, &connection);
    // Publish requests waiting on this channel go; its subscriptions stay for the session
    // and the housekeeping task drives them (sampling included) until it comes back.
    connection.release(&mut lock(&server));
    released.notify_one();
}

/// A connection's place among those still opening.
struct OpeningSlot {
    id: u64,
    opening: Arc<OpeningConnections>,
    /// Signalled when newer connections need the place.
    close: Arc<Notify>,
}

async fn run_connection(
    mut socket: TcpStream,
    server: &SharedServer,
    connection: &mut ServerConnection,
    mut wake: Wake,
    slot: &OpeningSlot,
    peer: SocketAddr,
) {
    let mut transmit = TransmitBuffer::new();
    let mut opened = false;
    loop {
        if !opened && connection.is_open() {
            opened = true;
            slot.opening.leave(slot.id);
            log_open(peer, connection);
        }
        while connection.transmit_buffered(&mut transmit, SERVER_WRITE_BATCH) > 0 {
            if socket.write_all_buf(&mut transmit).await.is_err() {
                return;
            }
        }
        if connection.is_closed() {
            let _ = socket.shutdown().await;
            return;
        }
        let deadline = connection.poll_timeout();
        tokio::select! {
            read = socket.read_buf(connection.read_buffer()) => match read {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    let mut server = lock(server);
                    connection.handle_received(&mut server, Instant::now());
                    let mut refusals = connection.take_refusals();
                    refusals.extend(server.take_refusals());
                    report_refusals(&server, refusals);
                    log_session_events(peer, server.take_session_events());
                }
            },
            () = sleep_until(deadline) => {
                connection.handle_timeout_with(&mut lock(server), Instant::now());
            }
            Ok(()) = wake.outbox.changed() => {
                connection.handle_timeout_with(&mut lock(server), Instant::now());
            }
            () = slot.close.notified(), if !opened => {
                connection.close_with(
                    StatusCode::BAD_MAX_CONNECTIONS_REACHED,
                    "too many connections are still opening: this one was the oldest",
                );
            }
            _ = wake.shutdown.changed() => return,
        }
    }
}

/// What wakes a connection besides its socket and its timer.
#[derive(Clone)]
struct Wake {
    /// The server stops.
    shutdown: watch::Receiver<bool>,
    /// Late responses wait in an outbox (see [`OpcuaServer::complete_method_call`]).
    outbox: watch::Receiver<u64>,
}

/// Logs refused certificates (application or user) to the server's standard error, the log
/// of `buildwire opcua serve`, and writes the untrusted ones to the PKI's `rejected/` folder
/// (when one is set), so an operator can trust them with `buildwire opcua certs trust`. The
/// peer got only the status code: thumbprints and hints are for the operator.
fn report_refusals(server: &Server, refusals: Vec<Refusal>) {
    for refusal in refusals {
        tracing::warn!("certificate refused: {}", refusal.detail);
        if let (Some(pki), Some(der)) = (&server.config.security.pki, &refusal.certificate) {
            // A certificate that cannot be stored was still refused; nothing else to do.
            let _ = pki.reject_certificate(der);
        }
    }
}

/// The log line of a secure channel that opened.
fn log_open(peer: SocketAddr, connection: &ServerConnection) {
    let channel_id = connection.channel_id().unwrap_or_default();
    let (policy, mode) = connection.security().map_or_else(
        || ("None".to_owned(), "None".to_owned()),
        |security| {
            (
                security.policy().to_string(),
                format!("{:?}", security.mode()),
            )
        },
    );
    tracing::info!(%peer, channel_id, %policy, %mode, "channel open");
}

/// The log line of a connection that ended: how, and the channel it had.
fn log_close(peer: SocketAddr, connection: &ServerConnection) {
    let channel_id = connection.channel_id().unwrap_or_default();
    match connection.close_reason() {
        Some(CloseReason::Error { status, reason }) => {
            let reason = reason.as_str();
            tracing::warn!(%peer, channel_id, %status, reason, "channel closed on an error");
        }
        Some(CloseReason::ClosedByClient) => {
            tracing::info!(%peer, channel_id, "channel closed by the client");
        }
        None => tracing::info!(%peer, channel_id, "connection closed"),
    }
}

/// The log lines of session events: names and ids only, never passwords or nonces.
fn log_session_events(peer: SocketAddr, events: Vec<SessionEvent>) {
    for event in events {
        match event {
            SessionEvent::Created {
                session_id,
                name,
                channel_id,
            } => tracing::info!(%peer, channel_id, %session_id, name = %name, "session created"),
            SessionEvent::Activated {
                session_id,
                user,
                channel_id,
            } => {
                let user = user.as_deref().unwrap_or("anonymous");
                tracing::info!(%peer, channel_id, %session_id, user, "session activated");
            }
            SessionEvent::Closed {
                session_id,
                channel_id,
            } => tracing::info!(%peer, channel_id, %session_id, "session closed"),
            SessionEvent::Refused {
                service,
                channel_id,
                status,
            } => tracing::warn!(%peer, channel_id, service, %status, "session service refused"),
        }
    }
}

/// Sleeps until `deadline`, forever when there is none.
pub(crate) async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
        None => std::future::pending().await,
    }
}

/// The current wall clock as an OPC UA DateTime.
pub(crate) fn wall_clock_now() -> DateTime {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    DateTime::from_unix_millis(millis)
}
