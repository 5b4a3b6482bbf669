//! `ScTransport`: a BACnet/SC node on tokio, usable wherever a [`Transport`] is (the device
//! server, the client, a router port). It runs the sans-IO [`ScNode`]: opens the WebSockets
//! it asks for (TLS 1.3 with the node's operational certificate), feeds it what arrives,
//! fires its deadlines, and hands the NPDUs it receives to [`Transport::receive`]. With a
//! direct-connection listener it also accepts `dc.bsc.bacnet.org` connections from peers.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::driver::peer_log::{CONNECTION_LINES_PER_WINDOW, LineBudget};

use tokio::net::TcpListener;
use tokio::sync::{Notify, mpsc, watch};
use tokio::task::JoinHandle;

use super::hub::random_bytes;
use super::websocket::{LinkHandle, LinkReader, accept, connect, start_link};
use crate::driver::error::DriverError;
use crate::driver::transport::{Delivery, Transport};
use crate::link::sc::node::LinkId;
use crate::link::sc::{
    DeviceUuid, HubConnectionStatus, NodeCommand, NodeConfig, NodeEvent, NodeStats, ScNode,
    SendError, Subprotocol, Vmac,
};
use crate::network::MacAddress;

/// NPDUs received and not yet taken by [`Transport::receive`]; more are dropped.
const DELIVERY_QUEUE: usize = 4096;
/// How long a TCP connect, TLS handshake and WebSocket upgrade may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the timer task sleeps when nothing is due.
const IDLE_WAKE: Duration = Duration::from_secs(3600);

/// Where a node connects and how.
#[derive(Debug, Clone)]
pub struct ScNodeConfig {
    /// The node: identity, hubs, timeouts, reconnect delays.
    pub node: NodeConfig,
    /// TLS towards hubs and direct peers (see `tls::client_config`); `None` for
    /// plaintext `ws://` (only when asked for).
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// Accept direct connections on this address, with this TLS configuration (`None`:
    /// plaintext). The node answers Address-Resolution with the listener's URI unless
    /// `node.direct_uris` names others.
    pub direct_listener: Option<(SocketAddr, Option<Arc<rustls::ServerConfig>>)>,
    /// How long [`ScTransport::start`] waits for the first hub connection.
    pub connect_timeout: Duration,
}

impl ScNodeConfig {
    /// A node connecting to `node.primary_hub` with `tls`, without direct connections,
    /// waiting up to 10 s for its hub when started.
    pub fn new(node: NodeConfig, tls: Option<Arc<rustls::ClientConfig>>) -> Self {
        Self {
            node,
            tls,
            direct_listener: None,
            connect_timeout: Duration::from_secs(10),
        }
    }
}

struct State {
    core: ScNode,
    links: HashMap<LinkId, LinkHandle>,
    timer_target: Option<Instant>,
}

struct Shared {
    state: Mutex<State>,
    timer: Notify,
    status: watch::Sender<HubConnectionStatus>,
    deliveries: mpsc::Sender<Delivery<Vmac>>,
    tls: Option<Arc<rustls::ClientConfig>>,
    max_message: usize,
    /// The budget of this node's connection lines.
    log_budget: LineBudget,
}

fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    shared
        .state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A running BACnet/SC node.
pub struct ScTransport {
    shared: Arc<Shared>,
    received: tokio::sync::Mutex<mpsc::Receiver<Delivery<Vmac>>>,
    status: watch::Receiver<HubConnectionStatus>,
    direct_address: Option<SocketAddr>,
    tasks: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for ScTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScTransport")
            .field("vmac", &self.vmac())
            .finish_non_exhaustive()
    }
}

impl ScTransport {
    /// Starts the node and waits up to `config.connect_timeout` for a hub connection (it
    /// keeps trying afterwards; see [`Self::wait_connected`]).
    pub async fn start(mut config: ScNodeConfig) -> io::Result<Self> {
        let listener = match &config.direct_listener {
            Some((bind, tls)) => {
                let listener = TcpListener::bind(bind).await?;
                let local = listener.local_addr()?;
                if config.node.direct_uris.is_empty() {
                    let scheme = if tls.is_some() { "wss" } else { "ws" };
                    config.node.direct_uris = vec![format!("{scheme}://{local}")];
                }
                Some((listener, tls.clone().map(tokio_rustls::TlsAcceptor::from)))
            }
            None => None,
        };
        let direct_address = match &listener {
            Some((l, _)) => Some(l.local_addr()?),
            None => None,
        };
        if config.tls.is_none() {
            tracing::warn!(
                "BACnet/SC node {} WITHOUT TLS (plaintext ws://, as asked)",
                config.node.identity.vmac
            );
        }
        let (deliveries, received) = mpsc::channel(DELIVERY_QUEUE);
        let (status_tx, status) = watch::channel(HubConnectionStatus::NoHubConnection);
        let max_message = usize::from(config.node.identity.max_bvlc_length);
        let seed = u64::from_be_bytes(random_bytes::<8>());
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                core: ScNode::new(config.node, seed),
                links: HashMap::new(),
                timer_target: None,
            }),
            timer: Notify::new(),
            status: status_tx,
            deliveries,
            tls: config.tls,
            max_message,
            log_budget: LineBudget::new(CONNECTION_LINES_PER_WINDOW),
        });
        let mut tasks = vec![tokio::spawn(run_timer(Arc::clone(&shared)))];
        if let Some((listener, acceptor)) = listener {
            tasks.push(tokio::spawn(accept_direct(
                Arc::clone(&shared),
                listener,
                acceptor,
            )));
        }
        {
            let mut state = lock(&shared);
            state.core.start(Instant::now());
            pump(&shared, &mut state);
        }
        let transport = Self {
            shared,
            received: tokio::sync::Mutex::new(received),
            status,
            direct_address,
            tasks,
        };
        if !transport.wait_connected(config.connect_timeout).await {
            tracing::warn!(
                "BACnet/SC node {}: no hub connection yet; still trying",
                transport.vmac()
            );
        }
        Ok(transport)
    }

    /// The node's VMAC (it changes if a hub refuses it as a duplicate).
    pub fn vmac(&self) -> Vmac {
        lock(&self.shared).core.vmac()
    }

    /// The hub connection status.
    pub fn status(&self) -> HubConnectionStatus {
        *self.status.borrow()
    }

    /// Waits until connected to a hub (primary or failover); false after `timeout`.
    pub async fn wait_connected(&self, timeout: Duration) -> bool {
        self.wait_status(timeout, |s| s != HubConnectionStatus::NoHubConnection)
            .await
    }

    /// Waits until the status satisfies `wanted`; false after `timeout`.
    pub async fn wait_status(
        &self,
        timeout: Duration,
        wanted: impl Fn(HubConnectionStatus) -> bool,
    ) -> bool {
        let mut status = self.status.clone();
        tokio::time::timeout(timeout, async {
            status.wait_for(|s| wanted(*s)).await.is_ok()
        })
        .await
        .unwrap_or(false)
    }

    /// The address of the direct-connection listener, if any.
    pub fn direct_address(&self) -> Option<SocketAddr> {
        self.direct_address
    }

    /// Starts a direct connection to `vmac` (Address-Resolution through the hub, then a
    /// `dc.bsc.bacnet.org` WebSocket to the URI it answers with).
    pub fn connect_direct(&self, vmac: Vmac) -> io::Result<()> {
        let mut state = lock(&self.shared);
        let result = state.core.connect_direct(Instant::now(), vmac);
        pump(&self.shared, &mut state);
        result.map_err(send_error)
    }

    /// The peers with an established direct connection.
    pub fn direct_peers(&self) -> Vec<Vmac> {
        lock(&self.shared).core.direct_peers().collect()
    }

    /// Counters.
    pub fn stats(&self) -> NodeStats {
        lock(&self.shared).core.stats()
    }

    /// Disconnects gracefully (Disconnect-Request on every connection), waits up to
    /// `grace` for the acknowledgements, and stops.
    pub async fn shutdown(mut self, grace: Duration) {
        {
            let mut state = lock(&self.shared);
            state.core.stop(Instant::now());
            pump(&self.shared, &mut state);
        }
        let deadline = tokio::time::Instant::now() + grace;
        while tokio::time::Instant::now() < deadline && !lock(&self.shared).links.is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.stop_tasks();
    }

    fn stop_tasks(&mut self) {
        for task in self.tasks.drain(..) {
            task.abort();
        }
        let links: Vec<LinkHandle> = lock(&self.shared).links.drain().map(|(_, l)| l).collect();
        for link in links {
            link.close();
        }
    }
}

impl Drop for ScTransport {
    fn drop(&mut self) {
        self.stop_tasks();
    }
}

fn send_error(error: SendError) -> io::Error {
    match error {
        SendError::NotConnected => io::Error::new(io::ErrorKind::NotConnected, error),
        SendError::TooLong { .. } => io::Error::new(io::ErrorKind::InvalidInput, error),
    }
}

impl Transport for ScTransport {
    type Address = Vmac;

    fn local_link_address(&self) -> Vmac {
        self.vmac()
    }

    fn mac_of(address: &Vmac) -> MacAddress {
        // Six octets always fit in a MAC address.
        MacAddress::new(address.as_bytes()).unwrap_or_default()
    }

    fn address_of(mac: &MacAddress) -> Option<Vmac> {
        Vmac::from_slice(mac.as_bytes())
    }

    fn can_broadcast(&self) -> bool {
        true
    }

    fn max_npdu(&self) -> usize {
        lock(&self.shared).core.max_npdu()
    }

    async fn send_unicast(&self, to: Vmac, npdu: &[u8]) -> io::Result<()> {
        let mut state = lock(&self.shared);
        let result = state.core.send_npdu(Some(to), npdu);
        pump(&self.shared, &mut state);
        result.map_err(send_error)
    }

    async fn send_broadcast(&self, npdu: &[u8]) -> io::Result<()> {
        let mut state = lock(&self.shared);
        let result = state.core.send_npdu(None, npdu);
        pump(&self.shared, &mut state);
        result.map_err(send_error)
    }

    async fn receive(&self) -> io::Result<Delivery<Vmac>> {
        self.received.lock().await.recv().await.ok_or_else(|| {
            io::Error::new(io::ErrorKind::BrokenPipe, "the BACnet/SC node has stopped")
        })
    }
}

/// Carries out what the node asked for and passes on what it received.
fn pump(shared: &Arc<Shared>, state: &mut State) {
    while let Some(command) = state.core.poll_command() {
        match command {
            NodeCommand::Open {
                link,
                uri,
                subprotocol,
            } => {
                tokio::spawn(open_link(Arc::clone(shared), link, uri, subprotocol));
            }
            NodeCommand::Send { link, frame } => {
                if let Some(handle) = state.links.get(&link) {
                    // A full queue loses the message, as a congested network would.
                    let _ = handle.send(frame);
                }
            }
            NodeCommand::Close { link } => {
                if let Some(handle) = state.links.remove(&link) {
                    handle.close();
                }
            }
        }
    }
    while let Some(delivery) = state.core.poll_delivery() {
        let _ = shared.deliveries.try_send(Delivery {
            source: delivery.source,
            npdu: delivery.npdu,
            broadcast: delivery.broadcast,
        });
    }
    while let Some(event) = state.core.poll_event() {
        log_event(state.core.vmac(), &event, &shared.log_budget);
        if let NodeEvent::HubStatus(status) = event {
            shared.status.send_replace(status);
        }
    }
    let due = state.core.poll_timeout();
    if due.is_some() && (state.timer_target.is_none() || due < state.timer_target) {
        state.timer_target = due;
        shared.timer.notify_one();
    }
}

/// The log line of a node event, with the node's `vmac` and the `peer`, `uri` and `reason`
/// as fields, within the budget of BACnet/SC connection lines (see `peer_log`), so that a
/// hub that refuses in a loop cannot flood the log.
fn log_event(vmac: Vmac, event: &NodeEvent, budget: &LineBudget) {
    if matches!(event, NodeEvent::Advertisement { .. }) {
        return;
    }
    let Some(suppressed) = budget.admit() else {
        return;
    };
    let vmac = vmac.to_string();
    match event {
        NodeEvent::HubStatus(status) => {
            let status = status.to_string();
            tracing::info!(vmac, status, suppressed, "BACnet/SC node: hub connection");
        }
        NodeEvent::HubConnectFailed { role, uri, reason } => tracing::warn!(
            vmac,
            hub = ?role,
            uri = %uri,
            reason = %reason,
            suppressed,
            "BACnet/SC node: hub connection failed"
        ),
        NodeEvent::VmacChanged { old, new } => tracing::warn!(
            vmac = %new,
            old_vmac = %old,
            reason = "NODE_DUPLICATE_VMAC",
            suppressed,
            "BACnet/SC node: the hub refused its VMAC (in use); now using a new one"
        ),
        NodeEvent::DirectConnected(peer) => {
            let peer = peer.to_string();
            tracing::info!(
                vmac,
                peer,
                suppressed,
                "BACnet/SC node: direct connection open"
            );
        }
        NodeEvent::DirectDisconnected(peer) => {
            let peer = peer.to_string();
            tracing::info!(
                vmac,
                peer,
                suppressed,
                "BACnet/SC node: direct connection closed"
            );
        }
        NodeEvent::AddressResolved { vmac: peer, uris } => tracing::info!(
            vmac,
            peer = %peer,
            uris = ?uris,
            suppressed,
            "BACnet/SC node: a peer accepts direct connections"
        ),
        NodeEvent::Advertisement { .. } => {}
        NodeEvent::Nak {
            from,
            for_function,
            code,
            details,
        } => tracing::warn!(
            vmac,
            peer = from.map_or_else(|| "hub".to_owned(), |v| v.to_string()),
            function = %for_function,
            reason = %code,
            details = %details,
            suppressed,
            "BACnet/SC node: a request was refused (NAK)"
        ),
        NodeEvent::Malformed(error) => tracing::warn!(
            vmac,
            reason = %error,
            suppressed,
            "BACnet/SC node: malformed message"
        ),
    }
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

async fn open_link(shared: Arc<Shared>, link: LinkId, uri: String, subprotocol: Subprotocol) {
    let opened = connect(
        &uri,
        shared.tls.as_ref(),
        subprotocol,
        shared.max_message,
        HANDSHAKE_TIMEOUT,
    )
    .await;
    let reader = {
        let mut state = lock(&shared);
        match opened {
            Ok(ws) => {
                let (handle, reader) = start_link(ws, None);
                state.links.insert(link, handle);
                state.core.link_opened(Instant::now(), link);
                pump(&shared, &mut state);
                reader
            }
            Err(reason) => {
                state
                    .core
                    .link_failed(Instant::now(), link, &reason.to_string());
                pump(&shared, &mut state);
                return;
            }
        }
    };
    read_link(shared, link, reader).await;
}

async fn read_link(shared: Arc<Shared>, link: LinkId, mut reader: LinkReader) {
    while let Some(frame) = reader.next().await {
        let mut state = lock(&shared);
        state.core.handle_message(Instant::now(), link, &frame);
        pump(&shared, &mut state);
    }
    let mut state = lock(&shared);
    state.core.link_closed(Instant::now(), link);
    pump(&shared, &mut state);
    if let Some(handle) = state.links.remove(&link) {
        handle.close();
    }
}

async fn accept_direct(
    shared: Arc<Shared>,
    listener: TcpListener,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
) {
    loop {
        let Ok((tcp, peer)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let shared = Arc::clone(&shared);
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            let ws = match accept(
                tcp,
                acceptor.as_ref(),
                &[Subprotocol::Direct],
                shared.max_message,
                HANDSHAKE_TIMEOUT,
            )
            .await
            {
                Ok((ws, _)) => ws,
                Err(error) => {
                    if let Some(suppressed) = shared.log_budget.admit() {
                        let reason = error.to_string();
                        let what = "BACnet/SC node: direct connection refused";
                        tracing::warn!(peer = %peer, reason, suppressed, "{what}");
                    }
                    return;
                }
            };
            let (handle, reader) = start_link(ws, Some(peer));
            let link = {
                let mut state = lock(&shared);
                let link = state.core.accept_direct(Instant::now());
                state.links.insert(link, handle);
                pump(&shared, &mut state);
                link
            };
            read_link(shared, link, reader).await;
        });
    }
}

/// The device UUID stored in `path` (RFC 4122 text), or a new random one written there:
/// a device keeps its UUID across restarts (Annex AB.1.5.3).
pub fn load_or_create_uuid(path: &Path) -> io::Result<DeviceUuid> {
    match std::fs::read_to_string(path) {
        Ok(text) => text.trim().parse().map_err(|source| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                DriverError::UuidFile {
                    path: path.to_owned(),
                    source,
                },
            )
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let uuid = DeviceUuid::random_v4(random_bytes::<16>());
            std::fs::write(path, format!("{uuid}\n"))?;
            Ok(uuid)
        }
        Err(e) => Err(e),
    }
}

/// A new random (version 4) device UUID, for a device that keeps none across restarts.
pub fn random_uuid() -> DeviceUuid {
    DeviceUuid::random_v4(random_bytes::<16>())
}

/// A new random-48 VMAC.
pub fn random_vmac() -> Vmac {
    Vmac::random_48(random_bytes::<6>())
}

/// A node identity for a run: a random VMAC and a random device UUID, with the default
/// largest BVLC message and NPDU. For a device that keeps its UUID across restarts, set
/// `uuid` from [`load_or_create_uuid`].
pub fn random_identity() -> crate::link::sc::LocalIdentity {
    crate::link::sc::LocalIdentity {
        vmac: random_vmac(),
        uuid: random_uuid(),
        max_bvlc_length: crate::link::sc::DEFAULT_MAX_BVLC_LENGTH,
        max_npdu_length: crate::link::sc::DEFAULT_MAX_NPDU_LENGTH,
    }
}
