//! `ScHub`: the BACnet/SC hub function on tokio. A listener accepts TCP connections, does
//! the TLS 1.3 handshake (the node must present a certificate from a trusted issuer) and
//! the WebSocket upgrade with subprotocol `hub.bsc.bacnet.org`; one task per connection
//! reads its messages into the sans-IO [`Hub`], which decides what goes where.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::driver::peer_log::{CONNECTION_LINES_PER_WINDOW, LineBudget};

use tokio::net::TcpListener;
use tokio::sync::{Notify, oneshot};
use tokio::task::JoinHandle;

use super::websocket::{LinkHandle, accept, start_link};
use crate::link::sc::hub::{ConnectionId, Hub, HubConfig, HubEvent, HubOutput, HubStats};
use crate::link::sc::{CloseReason, Subprotocol};

/// How long a TLS handshake and WebSocket upgrade may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the timer task sleeps when nothing is due.
const IDLE_WAKE: Duration = Duration::from_secs(3600);

/// Where and how a hub serves.
#[derive(Debug, Clone)]
pub struct ScHubConfig {
    /// Local address; port 0 picks a free port.
    pub bind: SocketAddr,
    /// TLS (see `tls::server_config`); `None` serves plaintext `ws://` (only when
    /// asked for, e.g. to compare with TLS in a benchmark).
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// The hub function's identity, limits and timeouts.
    pub hub: HubConfig,
}

/// Counters of the driver around the hub.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScHubStats {
    /// The hub function's counters.
    pub hub: HubStats,
    /// Connections refused during the TLS handshake or the WebSocket upgrade.
    pub handshake_refused: u64,
    /// Messages dropped because a node's send queue was full.
    pub queue_full: u64,
    /// Connected nodes.
    pub nodes: usize,
    /// Open connections.
    pub connections: usize,
}

struct State {
    core: Hub,
    links: HashMap<ConnectionId, LinkHandle>,
    /// The TCP peer of each connection, for the log lines (removed when its task ends).
    peers: HashMap<ConnectionId, SocketAddr>,
    /// The deadline the timer task sleeps until.
    timer_target: Option<Instant>,
}

struct Shared {
    state: Mutex<State>,
    timer: Notify,
    handshake_refused: AtomicU64,
    queue_full: AtomicU64,
    tls: bool,
    /// The budget of this hub's connection lines.
    log_budget: LineBudget,
}

fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    shared
        .state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A running hub.
pub struct ScHub {
    shared: Arc<Shared>,
    local: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for ScHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScHub")
            .field("local", &self.local)
            .finish_non_exhaustive()
    }
}

impl ScHub {
    /// Binds the listener and starts serving.
    pub async fn start(config: ScHubConfig) -> io::Result<Self> {
        let listener = TcpListener::bind(config.bind).await?;
        let local = listener.local_addr()?;
        if config.tls.is_none() {
            tracing::warn!(
                "BACnet/SC hub on {local} WITHOUT TLS (plaintext ws://, as asked): \
                 nodes are neither encrypted nor authenticated"
            );
        }
        let first_id = u16::from_be_bytes(random_bytes::<2>());
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                core: Hub::new(config.hub, first_id),
                links: HashMap::new(),
                peers: HashMap::new(),
                timer_target: None,
            }),
            timer: Notify::new(),
            handshake_refused: AtomicU64::new(0),
            queue_full: AtomicU64::new(0),
            tls: config.tls.is_some(),
            log_budget: LineBudget::new(CONNECTION_LINES_PER_WINDOW),
        });
        let acceptor = config.tls.map(tokio_rustls::TlsAcceptor::from);
        let max_message = usize::from(config.hub.identity.max_bvlc_length);
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(run(
            listener,
            Arc::clone(&shared),
            acceptor,
            max_message,
            stopped,
        ));
        tracing::info!(
            "BACnet/SC hub function {} listening on {local}",
            config.hub.identity.vmac
        );
        Ok(Self {
            shared,
            local,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// The listening address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The hub's URI as nodes write it (`wss://127.0.0.1:PORT`, or `ws://` without TLS).
    pub fn uri(&self) -> String {
        let scheme = if self.shared.tls { "wss" } else { "ws" };
        format!("{scheme}://{}", self.local)
    }

    /// Counters.
    pub fn stats(&self) -> ScHubStats {
        let state = lock(&self.shared);
        ScHubStats {
            hub: state.core.stats(),
            handshake_refused: self.shared.handshake_refused.load(Ordering::Relaxed),
            queue_full: self.shared.queue_full.load(Ordering::Relaxed),
            nodes: state.core.node_count(),
            connections: state.core.connection_count(),
        }
    }

    /// The VMACs of the connected nodes.
    pub fn nodes(&self) -> Vec<crate::link::sc::Vmac> {
        lock(&self.shared).core.nodes().collect()
    }

    /// Disconnects every node (Disconnect-Request), waits up to `grace` for the
    /// acknowledgements, and stops.
    pub async fn shutdown(mut self, grace: Duration) {
        {
            let mut state = lock(&self.shared);
            state.core.shutdown(Instant::now());
            pump(&self.shared, &mut state);
        }
        let deadline = tokio::time::Instant::now() + grace;
        while tokio::time::Instant::now() < deadline
            && lock(&self.shared).core.connection_count() > 0
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.stop_now();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }

    /// Stops at once: the listener closes and every WebSocket is dropped without a
    /// Disconnect-Request (as when a hub crashes).
    pub fn abort(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let links: Vec<LinkHandle> = lock(&self.shared).links.drain().map(|(_, l)| l).collect();
        for link in links {
            link.close();
        }
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

impl Drop for ScHub {
    fn drop(&mut self) {
        self.stop_now();
    }
}

pub(crate) fn random_bytes<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    // Without OS randomness the values are only less random (VMACs, message ids).
    let _ = getrandom::fill(&mut out);
    out
}

/// Sends what the hub queued, closes what it closed, and logs its events.
fn pump(shared: &Shared, state: &mut State) {
    while let Some(output) = state.core.poll_output() {
        match output {
            HubOutput::Send { connection, frame } => {
                if let Some(link) = state.links.get(&connection)
                    && !link.send(frame)
                {
                    shared.queue_full.fetch_add(1, Ordering::Relaxed);
                }
            }
            HubOutput::Close { connection } => {
                if let Some(link) = state.links.remove(&connection) {
                    link.close();
                }
            }
        }
    }
    while let Some(event) = state.core.poll_event() {
        log_event(&event, &state.peers, &shared.log_budget);
    }
    // Wake the timer task when a deadline moved earlier than the one it sleeps until.
    let due = state.core.poll_timeout();
    if due.is_some() && (state.timer_target.is_none() || due < state.timer_target) {
        state.timer_target = due;
        shared.timer.notify_one();
    }
}

/// The log line of a hub event, with the node's `vmac`, its TCP `peer` and the `reason` as
/// fields. Connection lines share a budget (see `peer_log`), so that a node connecting in a
/// loop cannot flood the log; the next line written says how many were left out.
fn log_event(event: &HubEvent, peers: &HashMap<ConnectionId, SocketAddr>, budget: &LineBudget) {
    let peer_of = |connection: &ConnectionId| {
        peers
            .get(connection)
            .map(ToString::to_string)
            .unwrap_or_default()
    };
    let Some(suppressed) = budget.admit() else {
        return;
    };
    match event {
        HubEvent::NodeConnected {
            connection,
            vmac,
            uuid,
        } => tracing::info!(
            vmac = %vmac,
            device_uuid = %uuid,
            peer = peer_of(connection),
            suppressed,
            "BACnet/SC hub: node connected"
        ),
        HubEvent::NodeDisconnected {
            connection,
            vmac,
            reason,
        } => {
            let vmac = vmac.map(|v| v.to_string()).unwrap_or_default();
            let peer = peer_of(connection);
            let why = format!("{reason:?}");
            match reason {
                CloseReason::HeartbeatTimeout | CloseReason::ConnectTimeout => tracing::warn!(
                    vmac,
                    peer,
                    reason = why,
                    suppressed,
                    "BACnet/SC hub: connection closed"
                ),
                _ => tracing::info!(
                    vmac,
                    peer,
                    reason = why,
                    suppressed,
                    "BACnet/SC hub: node disconnected"
                ),
            }
        }
        HubEvent::DuplicateVmacRefused {
            connection,
            vmac,
            uuid,
        } => tracing::warn!(
            vmac = %vmac,
            device_uuid = %uuid,
            peer = peer_of(connection),
            reason = "NODE_DUPLICATE_VMAC",
            suppressed,
            "BACnet/SC hub: node refused: its VMAC is in use"
        ),
        HubEvent::OriginatingVmacReplaced {
            connection,
            claimed,
            registered,
        } => tracing::info!(
            vmac = %registered,
            claimed = %claimed,
            peer = peer_of(connection),
            suppressed,
            "BACnet/SC hub: a node sent an Originating Virtual Address to its hub, which Annex \
             AB.5.3 forbids; relayed with its own VMAC as originator"
        ),
        HubEvent::Malformed { connection, error } => tracing::warn!(
            peer = peer_of(connection),
            reason = %error,
            suppressed,
            "BACnet/SC hub: malformed message"
        ),
    }
}

async fn run(
    listener: TcpListener,
    shared: Arc<Shared>,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    max_message: usize,
    mut stopped: oneshot::Receiver<()>,
) {
    let timer = tokio::spawn(run_timer(Arc::clone(&shared)));
    loop {
        tokio::select! {
            _ = &mut stopped => break,
            accepted = listener.accept() => match accepted {
                Ok((tcp, peer)) => {
                    tokio::spawn(serve_connection(
                        Arc::clone(&shared),
                        tcp,
                        peer,
                        acceptor.clone(),
                        max_message,
                    ));
                }
                // Out of file descriptors and the like: wait a little, keep serving.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
        }
    }
    timer.abort();
}

async fn run_timer(shared: Arc<Shared>) {
    loop {
        let target = lock(&shared).timer_target;
        let wake = target.map_or_else(
            || tokio::time::Instant::now() + IDLE_WAKE,
            tokio::time::Instant::from_std,
        );
        tokio::select! {
            () = shared.timer.notified() => {}
            () = tokio::time::sleep_until(wake) => {}
        }
        let mut state = lock(&shared);
        state.core.handle_timeout(Instant::now());
        state.timer_target = state.core.poll_timeout();
        pump(&shared, &mut state);
    }
}

async fn serve_connection(
    shared: Arc<Shared>,
    tcp: tokio::net::TcpStream,
    peer: SocketAddr,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    max_message: usize,
) {
    let ws = match accept(
        tcp,
        acceptor.as_ref(),
        &[Subprotocol::Hub],
        max_message,
        HANDSHAKE_TIMEOUT,
    )
    .await
    {
        Ok((ws, _)) => ws,
        Err(error) => {
            shared.handshake_refused.fetch_add(1, Ordering::Relaxed);
            if let Some(suppressed) = shared.log_budget.admit() {
                let reason = error.to_string();
                tracing::warn!(peer = %peer, reason, suppressed, "BACnet/SC hub: connection refused");
            }
            return;
        }
    };
    let (link, mut reader) = start_link(ws, Some(peer));
    let id = {
        let mut state = lock(&shared);
        let Some(id) = state.core.open_connection(Instant::now()) else {
            if let Some(suppressed) = shared.log_budget.admit() {
                let reason = "the hub is full";
                tracing::warn!(peer = %peer, reason, suppressed, "BACnet/SC hub: connection refused");
            }
            link.close();
            return;
        };
        state.links.insert(id, link);
        state.peers.insert(id, peer);
        pump(&shared, &mut state);
        id
    };
    while let Some(frame) = reader.next().await {
        let mut state = lock(&shared);
        state.core.handle_message(Instant::now(), id, &frame);
        pump(&shared, &mut state);
    }
    let mut state = lock(&shared);
    state.core.connection_closed(id);
    pump(&shared, &mut state);
    if let Some(link) = state.links.remove(&id) {
        link.close();
    }
    state.peers.remove(&id);
}
