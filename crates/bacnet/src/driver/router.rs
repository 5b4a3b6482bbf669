//! `BacnetRouter`: a sans-IO [`Router`] between B/IP and B/IPv6 transports on tokio, with an
//! optional device hosted in the router. One task per port reads its transport; one task
//! runs the router (and the device) and sends what they queue. Protocol decisions are all
//! the router's and the device server's.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddrV4, SocketAddrV6};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::bip::BipTransport;
use super::bip::{Bip6Config, Bip6Transport};
use super::transport::Transport;
use crate::app::{Destination, DeviceServer};
use crate::link::bip6::bvll::{MULTICAST_LINK_LOCAL, Vmac};
use crate::network::MacAddress;
use crate::objects::database::ObjectDatabase;
use crate::router::{Route, Router, RouterConfig, RouterLink, RouterStats, StaticRoute};
use crate::tsm::TsmConfig;

/// NPDUs waiting between the port readers and the router; more are dropped (and counted)
/// rather than queued without bound.
const INBOUND_QUEUE: usize = 4096;
/// How long the router task sleeps when nothing is due.
const IDLE_WAKE: Duration = Duration::from_secs(3600);

/// One port: a bound transport and the network number behind it.
#[derive(Debug)]
pub enum RouterPort {
    /// A BACnet/IP network.
    Bip {
        /// Its network number.
        network: u16,
        /// The bound transport (a node, or a BBMD).
        transport: BipTransport,
    },
    /// A BACnet/IPv6 network.
    Bip6 {
        /// Its network number.
        network: u16,
        /// The bound transport.
        transport: Bip6Transport,
    },
    /// A BACnet/SC network: the router is a node of its hub.
    Sc {
        /// Its network number.
        network: u16,
        /// The connected node.
        transport: super::ScTransport,
    },
}

impl RouterPort {
    fn network(&self) -> u16 {
        match self {
            Self::Bip { network, .. } | Self::Bip6 { network, .. } | Self::Sc { network, .. } => {
                *network
            }
        }
    }

    fn port_config(&self) -> crate::router::PortConfig {
        let (mac, max_npdu, mac_length) = match self {
            Self::Bip { transport, .. } => (
                BipTransport::mac_of(&transport.local_link_address()),
                transport.max_npdu(),
                6,
            ),
            Self::Bip6 { transport, .. } => (
                Bip6Transport::mac_of(&transport.local_link_address()),
                transport.max_npdu(),
                3,
            ),
            Self::Sc { transport, .. } => (
                super::ScTransport::mac_of(&transport.local_link_address()),
                transport.max_npdu(),
                6,
            ),
        };
        crate::router::PortConfig {
            network: self.network(),
            mac,
            max_npdu,
            mac_length: Some(mac_length),
        }
    }

    async fn send(&self, destination: Option<MacAddress>, npdu: &[u8]) -> io::Result<()> {
        match (self, destination) {
            (Self::Bip { transport, .. }, None) => transport.send_broadcast(npdu).await,
            (Self::Bip { transport, .. }, Some(mac)) => match BipTransport::address_of(&mac) {
                Some(to) => transport.send_unicast(to, npdu).await,
                None => Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "not a B/IP MAC",
                )),
            },
            (Self::Bip6 { transport, .. }, None) => {
                Transport::send_broadcast(transport, npdu).await
            }
            (Self::Bip6 { transport, .. }, Some(mac)) => match Bip6Transport::address_of(&mac) {
                Some(to) => Transport::send_unicast(transport, to, npdu).await,
                None => Err(io::Error::new(io::ErrorKind::InvalidInput, "not a VMAC")),
            },
            (Self::Sc { transport, .. }, None) => Transport::send_broadcast(transport, npdu).await,
            (Self::Sc { transport, .. }, Some(mac)) => match super::ScTransport::address_of(&mac) {
                Some(to) => Transport::send_unicast(transport, to, npdu).await,
                None => Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "not a BACnet/SC VMAC",
                )),
            },
        }
    }

    async fn receive(&self) -> io::Result<(MacAddress, Vec<u8>, bool)> {
        match self {
            Self::Bip { transport, .. } => {
                let d = transport.receive().await?;
                Ok((BipTransport::mac_of(&d.source), d.npdu, d.broadcast))
            }
            Self::Bip6 { transport, .. } => {
                let d = transport.receive().await?;
                Ok((Bip6Transport::mac_of(&d.source), d.npdu, d.broadcast))
            }
            Self::Sc { transport, .. } => {
                let d = transport.receive().await?;
                Ok((super::ScTransport::mac_of(&d.source), d.npdu, d.broadcast))
            }
        }
    }
}

/// Counters of one port.
#[derive(Debug, Default)]
pub struct RouterPortStats {
    /// NPDUs received.
    pub received: AtomicU64,
    /// NPDUs sent.
    pub sent: AtomicU64,
    /// NPDUs dropped: the router's inbound queue was full, or a send failed.
    pub dropped: AtomicU64,
}

/// What the router hosts and how it is configured beyond its ports.
#[derive(Debug, Default)]
pub struct RouterOptions {
    /// Static routes, accepting Initialize-Routing-Table updates, reject rate (the ports
    /// are filled in from the transports).
    pub static_routes: Vec<crate::router::StaticRoute>,
    /// Apply Initialize-Routing-Table entries from the network.
    pub accept_routing_table_updates: bool,
    /// A device served by the router: its objects and TSM limits.
    pub device: Option<(ObjectDatabase, TsmConfig)>,
}

struct Shared {
    router: Mutex<Router>,
    device: Option<Mutex<DeviceServer<RouterLink>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A running router.
pub struct BacnetRouter {
    shared: Arc<Shared>,
    ports: Arc<Vec<RouterPort>>,
    port_stats: Arc<Vec<RouterPortStats>>,
    stop: Option<oneshot::Sender<()>>,
    tasks: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for BacnetRouter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BacnetRouter")
            .field("ports", &self.ports)
            .finish_non_exhaustive()
    }
}

impl BacnetRouter {
    /// Starts routing between `ports` (bound transports).
    pub async fn start(ports: Vec<RouterPort>, options: RouterOptions) -> io::Result<Self> {
        let mut config = RouterConfig::new(ports.iter().map(RouterPort::port_config).collect());
        config.static_routes = options.static_routes;
        config.accept_routing_table_updates = options.accept_routing_table_updates;
        config.host_device = options.device.is_some();
        let router =
            Router::new(config).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let device = options.device.map(|(database, tsm)| {
            let mut server = DeviceServer::new(database, tsm);
            server.i_am();
            Mutex::new(server)
        });
        let shared = Arc::new(Shared {
            router: Mutex::new(router),
            device,
        });
        let ports = Arc::new(ports);
        let port_stats: Arc<Vec<RouterPortStats>> =
            Arc::new(ports.iter().map(|_| RouterPortStats::default()).collect());
        let (inbound, receiver) = mpsc::channel(INBOUND_QUEUE);
        let mut tasks = Vec::new();
        for index in 0..ports.len() {
            let ports = Arc::clone(&ports);
            let stats = Arc::clone(&port_stats);
            let inbound = inbound.clone();
            tasks.push(tokio::spawn(async move {
                let Some(port) = ports.get(index) else {
                    return;
                };
                loop {
                    match port.receive().await {
                        Ok((mac, npdu, broadcast)) => {
                            if let Some(stats) = stats.get(index) {
                                stats.received.fetch_add(1, Ordering::Relaxed);
                            }
                            let sent = inbound.try_send((index, mac, npdu, broadcast));
                            if let Err(mpsc::error::TrySendError::Full(_)) = sent {
                                if let Some(stats) = stats.get(index) {
                                    stats.dropped.fetch_add(1, Ordering::Relaxed);
                                }
                            } else if sent.is_err() {
                                return;
                            }
                        }
                        Err(_) => tokio::time::sleep(Duration::from_millis(1)).await,
                    }
                }
            }));
        }
        let (stop, stopped) = oneshot::channel();
        tasks.push(tokio::spawn(run(
            Arc::clone(&shared),
            Arc::clone(&ports),
            Arc::clone(&port_stats),
            receiver,
            stopped,
        )));
        Ok(Self {
            shared,
            ports,
            port_stats,
            stop: Some(stop),
            tasks,
        })
    }

    /// The routing table (networks not directly connected).
    pub fn routes(&self) -> Vec<(u16, Route)> {
        lock(&self.shared.router).table().entries()
    }

    /// The router's counters.
    pub fn stats(&self) -> RouterStats {
        lock(&self.shared.router).stats()
    }

    /// Per port: network number, NPDUs received, sent and dropped.
    pub fn port_stats(&self) -> Vec<(u16, u64, u64, u64)> {
        self.ports
            .iter()
            .zip(self.port_stats.iter())
            .map(|(port, stats)| {
                (
                    port.network(),
                    stats.received.load(Ordering::Relaxed),
                    stats.sent.load(Ordering::Relaxed),
                    stats.dropped.load(Ordering::Relaxed),
                )
            })
            .collect()
    }

    /// The ports, to read their link state (BBMD tables...).
    pub fn ports(&self) -> &[RouterPort] {
        &self.ports
    }

    /// Declares the router busy (Router-Busy-To-Network) or available again.
    pub fn set_busy(&self, busy: bool) {
        lock(&self.shared.router).set_busy(busy);
    }

    /// Runs `f` on the hosted device's objects; `None` without a device.
    pub fn with_database<R>(&self, f: impl FnOnce(&mut ObjectDatabase) -> R) -> Option<R> {
        self.shared
            .device
            .as_ref()
            .map(|device| f(lock(device).database_mut()))
    }

    /// Stops the router's tasks (without waiting for them to end).
    pub fn stop(&self) {
        for task in &self.tasks {
            task.abort();
        }
    }

    /// Stops the router's tasks.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        for task in self.tasks.drain(..) {
            task.abort();
            let _ = task.await;
        }
    }
}

impl Drop for BacnetRouter {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// Moves NPDUs between the router and its hosted device until neither has more.
fn exchange_with_device(shared: &Shared, now: std::time::Instant) {
    let Some(device) = &shared.device else {
        return;
    };
    loop {
        let local: Vec<_> = {
            let mut router = lock(&shared.router);
            std::iter::from_fn(|| router.poll_local()).collect()
        };
        let mut device = lock(device);
        if !local.is_empty() {
            device.database_mut().set_clock(super::clock::local_now());
        }
        for delivery in local {
            device.handle_npdu(now, delivery.link, &delivery.npdu, delivery.broadcast);
        }
        let outgoing: Vec<_> = std::iter::from_fn(|| device.poll_transmit()).collect();
        drop(device);
        if outgoing.is_empty() {
            return;
        }
        let mut router = lock(&shared.router);
        for transmit in outgoing {
            let link = match transmit.destination {
                Destination::Unicast(link) => Some(link),
                Destination::Broadcast => None,
            };
            router.send_from_device(now, link, &transmit.npdu);
        }
    }
}

/// One log line for a peer's NPDU that the router refused, read from its counters around
/// the NPDU (logged after the router's lock is released).
fn log_peer_errors<M: std::fmt::Debug>(
    before: &crate::router::RouterStats,
    after: &crate::router::RouterStats,
    port: usize,
    mac: &M,
) {
    if after.malformed > before.malformed
        && let Some(suppressed) = crate::driver::peer_log::admit()
    {
        let what = "malformed NPDU from a peer: dropped";
        tracing::warn!(port_index = port, peer = ?mac, suppressed, "{what}");
    }
    if after.hop_count_exhausted > before.hop_count_exhausted
        && let Some(suppressed) = crate::driver::peer_log::admit()
    {
        let hops = "NPDU from a peer dropped: hop count exhausted";
        tracing::info!(port_index = port, peer = ?mac, suppressed, "{hops}");
    }
    if after.rejects_sent > before.rejects_sent
        && let Some(suppressed) = crate::driver::peer_log::admit()
    {
        let what = "Reject-Message-To-Network sent to a peer";
        tracing::info!(port_index = port, peer = ?mac, suppressed, "{what}");
    }
}

async fn run(
    shared: Arc<Shared>,
    ports: Arc<Vec<RouterPort>>,
    port_stats: Arc<Vec<RouterPortStats>>,
    mut inbound: mpsc::Receiver<(usize, MacAddress, Vec<u8>, bool)>,
    mut stopped: oneshot::Receiver<()>,
) {
    loop {
        exchange_with_device(&shared, std::time::Instant::now());
        let outgoing: Vec<_> = {
            let mut router = lock(&shared.router);
            std::iter::from_fn(|| router.poll_transmit()).collect()
        };
        for transmit in outgoing {
            let (Some(port), Some(stats)) =
                (ports.get(transmit.port), port_stats.get(transmit.port))
            else {
                continue;
            };
            match port.send(transmit.destination, &transmit.npdu).await {
                Ok(()) => stats.sent.fetch_add(1, Ordering::Relaxed),
                Err(_) => stats.dropped.fetch_add(1, Ordering::Relaxed),
            };
        }
        let deadline = {
            let router = lock(&shared.router);
            let device = shared.device.as_ref().and_then(|d| lock(d).poll_timeout());
            [router.poll_timeout(), device].into_iter().flatten().min()
        };
        let wake = deadline.map_or_else(
            || tokio::time::Instant::now() + IDLE_WAKE,
            tokio::time::Instant::from_std,
        );
        tokio::select! {
            _ = &mut stopped => break,
            received = inbound.recv() => match received {
                Some((port, mac, npdu, broadcast)) => {
                    let (before, after) = {
                        let mut router = lock(&shared.router);
                        let before = router.stats();
                        router.handle_npdu(std::time::Instant::now(), port, mac, &npdu, broadcast);
                        (before, router.stats())
                    };
                    log_peer_errors(&before, &after, port, &mac);
                }
                None => break,
            },
            () = tokio::time::sleep_until(wake) => {
                let now = std::time::Instant::now();
                lock(&shared.router).handle_timeout(now);
                if let Some(device) = &shared.device {
                    lock(device).handle_timeout(now);
                }
            }
        }
    }
}

// ---- ports and routes written as text (command line, Python) ------------------------------

/// One router port written as text: `NETWORK=bip:ADDRESS:PORT[,broadcast=IP][,bdt=FILE]`,
/// `NETWORK=bip6:[ADDRESS]:PORT[,vmac=HEX6][,interface=NAME][,group=ADDRESS]` or
/// `NETWORK=sc:wss://HOST:PORT,cert=FILE,key=FILE,ca=FILE` (a node of that BACnet/SC hub;
/// `ws://` without TLS needs no files).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortSpec {
    /// A B/IP port, optionally also a BBMD with the BDT in a file.
    Bip {
        /// Network number.
        network: u16,
        /// Address to bind.
        bind: SocketAddrV4,
        /// The subnet's broadcast address.
        broadcast: Option<Ipv4Addr>,
        /// BDT file: the port is a BBMD too.
        bdt: Option<String>,
    },
    /// A B/IPv6 port.
    Bip6 {
        /// Network number.
        network: u16,
        /// Address to bind.
        bind: SocketAddrV6,
        /// VMAC (default X'3F' and the network number).
        vmac: Option<Vmac>,
        /// Interface name or index for the multicast group.
        interface: Option<String>,
        /// Multicast group.
        group: Ipv6Addr,
    },
    /// A BACnet/SC port: the router is a node of the hub.
    Sc {
        /// Network number.
        network: u16,
        /// The hub, `wss://HOST:PORT` (`ws://` for plaintext).
        hub: String,
        /// Operational certificate, its key, and the trusted issuer (PEM files).
        tls: Option<(String, String, String)>,
    },
}

fn parse_v4(text: &str) -> Option<SocketAddrV4> {
    text.parse().ok().or_else(|| {
        text.parse::<Ipv4Addr>()
            .ok()
            .map(|ip| SocketAddrV4::new(ip, 0xBAC0))
    })
}

fn parse_v6(text: &str) -> Option<SocketAddrV6> {
    text.parse().ok().or_else(|| {
        text.trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<Ipv6Addr>()
            .ok()
            .map(|ip| SocketAddrV6::new(ip, 0xBAC0, 0, 0))
    })
}

/// A router port, static route or router that cannot be set up from its text.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RouterSetupError {
    /// No network interface of that name.
    #[error("no network interface {0:?}")]
    NoInterface(String),
    /// A port not written as [`PortSpec`] documents.
    #[error(
        "port {0:?}: write NETWORK=bip:ADDRESS:PORT[,broadcast=IP][,bdt=FILE], \
         NETWORK=bip6:[ADDRESS]:PORT[,vmac=HEX6][,interface=NAME][,group=ADDRESS] or \
         NETWORK=sc:wss://HOST:PORT,cert=FILE,key=FILE,ca=FILE"
    )]
    PortUsage(String),
    /// A port's network number outside 1..=65534.
    #[error("port {0:?}: the network number is 1..=65534")]
    NetworkNumber(String),
    /// An option the port's link does not have.
    #[error("port {port:?}: no option {option:?} for {link}")]
    UnknownOption {
        /// The port as written.
        port: String,
        /// The option's name.
        option: String,
        /// `bip`, `bip6` or `sc`.
        link: &'static str,
    },
    /// A value that does not parse (`broadcast=`, `group=`: `what` names the option).
    #[error("{what}={value}: not an {family} address")]
    Address {
        /// The option.
        what: &'static str,
        /// Its value.
        value: String,
        /// `IPv4` or `IPv6`.
        family: &'static str,
    },
    /// A VMAC that does not parse.
    #[error("{0}")]
    Vmac(String),
    /// A BACnet/SC hub that is not a WebSocket URI.
    #[error("port {0:?}: the hub is wss://HOST:PORT")]
    HubUri(String),
    /// A `wss://` hub without certificate files.
    #[error(
        "port {0:?}: a wss:// hub needs cert=FILE,key=FILE,ca=FILE \
         (make test ones with `buildwire bacnet sc-certs DIR`)"
    )]
    HubTls(String),
    /// A port's BDT file.
    #[error(transparent)]
    Bdt(#[from] super::bip::bbmd::BdtError),
    /// A port's socket that cannot be bound (`at` as written in the message).
    #[error("network {network}: cannot bind {at}: {source}")]
    Bind {
        /// The port's network.
        network: u16,
        /// The address.
        at: String,
        /// Why.
        source: io::Error,
    },
    /// A BACnet/SC port's TLS files.
    #[error("network {network}: {source}")]
    Tls {
        /// The port's network.
        network: u16,
        /// Why.
        source: super::sc::tls::TlsSetupError,
    },
    /// A BACnet/SC port's hub connection.
    #[error("network {network}: hub {hub}: {source}")]
    Hub {
        /// The port's network.
        network: u16,
        /// The hub.
        hub: String,
        /// Why.
        source: io::Error,
    },
    /// A static route not written `NETWORK=PORT_NETWORK[:NEXT_HOP_HEXMAC]`.
    #[error("route {0:?}: write NETWORK=PORT_NETWORK[:NEXT_HOP_HEXMAC]")]
    RouteUsage(String),
    /// A static route through a network no port is on.
    #[error("route {route:?}: no port for network {network}")]
    RoutePort {
        /// The route as written.
        route: String,
        /// The network it names as its port's.
        network: u16,
    },
    /// A static route's next hop that is not a MAC.
    #[error(transparent)]
    NextHop(#[from] crate::network::address::AddressParseError),
    /// The router itself did not start.
    #[error(transparent)]
    Start(io::Error),
}

/// The index of a network interface given by name (or as a number).
pub fn interface_index(name: &str) -> Result<u32, RouterSetupError> {
    if let Ok(index) = name.parse::<u32>() {
        return Ok(index);
    }
    std::fs::read_to_string(format!("/sys/class/net/{name}/ifindex"))
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .ok_or_else(|| RouterSetupError::NoInterface(name.to_owned()))
}

impl std::str::FromStr for PortSpec {
    type Err = RouterSetupError;

    fn from_str(text: &str) -> Result<Self, RouterSetupError> {
        let usage = || RouterSetupError::PortUsage(text.to_owned());
        let unknown = |option: &str, link| RouterSetupError::UnknownOption {
            port: text.to_owned(),
            option: option.to_owned(),
            link,
        };
        let (network, rest) = text.split_once('=').ok_or_else(usage)?;
        let network: u16 = network
            .trim()
            .parse()
            .ok()
            .filter(|n| *n != 0 && *n != 0xFFFF)
            .ok_or_else(|| RouterSetupError::NetworkNumber(text.to_owned()))?;
        let mut parts = rest.split(',');
        let link = parts.next().unwrap_or_default();
        let options: Vec<(&str, &str)> = parts
            .map(|option| option.split_once('=').ok_or_else(usage))
            .collect::<Result<_, _>>()?;
        if let Some(address) = link.strip_prefix("bip:") {
            let bind = parse_v4(address).ok_or_else(usage)?;
            let mut broadcast = super::bip::BipConfig::with_default_broadcast(bind).broadcast;
            let mut bdt = None;
            for (key, value) in options {
                match key {
                    "broadcast" => {
                        broadcast = Some(value.parse().map_err(|_| RouterSetupError::Address {
                            what: "broadcast",
                            value: value.to_owned(),
                            family: "IPv4",
                        })?);
                    }
                    "bdt" => bdt = Some(value.to_owned()),
                    other => return Err(unknown(other, "bip")),
                }
            }
            return Ok(Self::Bip {
                network,
                bind,
                broadcast,
                bdt,
            });
        }
        if let Some(address) = link.strip_prefix("bip6:") {
            let bind = parse_v6(address).ok_or_else(usage)?;
            let (mut vmac, mut interface, mut group) = (None, None, MULTICAST_LINK_LOCAL);
            for (key, value) in options {
                match key {
                    "vmac" => {
                        vmac = Some(value.parse::<Vmac>().map_err(RouterSetupError::Vmac)?);
                    }
                    "interface" => interface = Some(value.to_owned()),
                    "group" => {
                        group = value.parse().map_err(|_| RouterSetupError::Address {
                            what: "group",
                            value: value.to_owned(),
                            family: "IPv6",
                        })?;
                    }
                    other => return Err(unknown(other, "bip6")),
                }
            }
            return Ok(Self::Bip6 {
                network,
                bind,
                vmac,
                interface,
                group,
            });
        }
        if let Some(hub) = link.strip_prefix("sc:") {
            if !(hub.starts_with("wss://") || hub.starts_with("ws://")) {
                return Err(RouterSetupError::HubUri(text.to_owned()));
            }
            let (mut cert, mut key, mut ca) = (None, None, None);
            for (option, value) in options {
                match option {
                    "cert" => cert = Some(value.to_owned()),
                    "key" => key = Some(value.to_owned()),
                    "ca" => ca = Some(value.to_owned()),
                    other => return Err(unknown(other, "sc")),
                }
            }
            let tls = match (hub.starts_with("wss://"), cert, key, ca) {
                (true, Some(cert), Some(key), Some(ca)) => Some((cert, key, ca)),
                (true, ..) => {
                    return Err(RouterSetupError::HubTls(text.to_owned()));
                }
                (false, ..) => None,
            };
            return Ok(Self::Sc {
                network,
                hub: hub.to_owned(),
                tls,
            });
        }
        Err(usage())
    }
}

impl PortSpec {
    /// The network number.
    pub fn network(&self) -> u16 {
        match self {
            Self::Bip { network, .. } | Self::Bip6 { network, .. } | Self::Sc { network, .. } => {
                *network
            }
        }
    }

    /// Binds the port's transport.
    pub async fn bind(&self) -> Result<RouterPort, RouterSetupError> {
        match self {
            Self::Bip {
                network,
                bind,
                broadcast,
                bdt,
            } => {
                let role = match bdt {
                    Some(path) => crate::link::BipRole::Bbmd(crate::link::BbmdConfig {
                        bdt: super::bip::bbmd::bdt_file(path, *bind)?,
                        ..crate::link::BbmdConfig::default()
                    }),
                    None => crate::link::BipRole::Node,
                };
                let config = super::bip::BipConfig {
                    bind: *bind,
                    broadcast: *broadcast,
                };
                let transport =
                    BipTransport::bind_with_role(&config, role)
                        .await
                        .map_err(|source| RouterSetupError::Bind {
                            network: *network,
                            at: bind.to_string(),
                            source,
                        })?;
                Ok(RouterPort::Bip {
                    network: *network,
                    transport,
                })
            }
            Self::Bip6 {
                network,
                bind,
                vmac,
                interface,
                group,
            } => {
                let interface = interface
                    .as_deref()
                    .map(interface_index)
                    .transpose()?
                    .unwrap_or(0);
                // Default VMAC: X'3F' and the network number, unlike any device instance
                // below 4128768.
                let vmac = vmac.unwrap_or_else(|| {
                    let n = network.to_be_bytes();
                    Vmac([0x3F, n[0], n[1]])
                });
                let config = Bip6Config {
                    multicast: Some(*group),
                    multicast_port: if bind.port() == 0 {
                        0xBAC0
                    } else {
                        bind.port()
                    },
                    interface,
                    ..Bip6Config::new(*bind, vmac)
                };
                let transport = Bip6Transport::bind(&config).await.map_err(|source| {
                    RouterSetupError::Bind {
                        network: *network,
                        at: format!("[{}]:{}", bind.ip(), bind.port()),
                        source,
                    }
                })?;
                Ok(RouterPort::Bip6 {
                    network: *network,
                    transport,
                })
            }
            Self::Sc { network, hub, tls } => {
                let tls = match tls {
                    Some((cert, key, ca)) => Some(
                        super::sc::tls::client_config(&super::sc::tls::ScTlsFiles {
                            certificate: cert.into(),
                            private_key: key.into(),
                            issuers: vec![ca.into()],
                        })
                        .map_err(|source| RouterSetupError::Tls {
                            network: *network,
                            source,
                        })?,
                    ),
                    None => None,
                };
                let identity = crate::link::sc::LocalIdentity {
                    vmac: super::random_vmac(),
                    uuid: super::random_uuid(),
                    max_bvlc_length: crate::link::sc::DEFAULT_MAX_BVLC_LENGTH,
                    max_npdu_length: crate::link::sc::DEFAULT_MAX_NPDU_LENGTH,
                };
                let config = super::ScNodeConfig::new(
                    crate::link::sc::node::NodeConfig::new(identity, hub.clone()),
                    tls,
                );
                let transport = super::ScTransport::start(config).await.map_err(|source| {
                    RouterSetupError::Hub {
                        network: *network,
                        hub: hub.clone(),
                        source,
                    }
                })?;
                Ok(RouterPort::Sc {
                    network: *network,
                    transport,
                })
            }
        }
    }
}

/// A static route written `NETWORK=PORT_NETWORK[:NEXT_HOP_HEXMAC]`: `NETWORK` is reached
/// through the port of `PORT_NETWORK`, via the router with that MAC there (or by broadcast
/// on that port).
pub fn parse_static_route(text: &str, ports: &[PortSpec]) -> Result<StaticRoute, RouterSetupError> {
    let usage = || RouterSetupError::RouteUsage(text.to_owned());
    let (network, rest) = text.split_once('=').ok_or_else(usage)?;
    let network: u16 = network.trim().parse().map_err(|_| usage())?;
    let (port_network, next_hop) = match rest.split_once(':') {
        Some((port, mac)) => (port, Some(mac)),
        None => (rest, None),
    };
    let port_network: u16 = port_network.trim().parse().map_err(|_| usage())?;
    let port = ports
        .iter()
        .position(|p| p.network() == port_network)
        .ok_or_else(|| RouterSetupError::RoutePort {
            route: text.to_owned(),
            network: port_network,
        })?;
    let next_hop = match next_hop {
        Some(mac) => {
            let routed: crate::network::RoutedAddress = format!("{port_network}:{mac}").parse()?;
            Some(routed.mac)
        }
        None => None,
    };
    Ok(StaticRoute {
        network,
        port,
        next_hop,
    })
}

impl BacnetRouter {
    /// Binds the ports written as text and starts routing (see [`PortSpec`] and
    /// [`parse_static_route`]).
    pub async fn start_from_text(
        ports: &[String],
        routes: &[String],
        accept_routing_table_updates: bool,
        device: Option<(ObjectDatabase, TsmConfig)>,
    ) -> Result<Self, RouterSetupError> {
        let specs: Vec<PortSpec> = ports.iter().map(|p| p.parse()).collect::<Result<_, _>>()?;
        let static_routes = routes
            .iter()
            .map(|r| parse_static_route(r, &specs))
            .collect::<Result<_, _>>()?;
        let mut bound = Vec::with_capacity(specs.len());
        for spec in &specs {
            bound.push(spec.bind().await?);
        }
        Self::start(
            bound,
            RouterOptions {
                static_routes,
                accept_routing_table_updates,
                device,
            },
        )
        .await
        .map_err(RouterSetupError::Start)
    }

    /// Per port: network, link kind, local address, and VMAC for B/IPv6.
    pub fn describe_ports(&self) -> Vec<PortDescription> {
        self.ports
            .iter()
            .map(|port| match port {
                RouterPort::Bip { network, transport } => PortDescription {
                    network: *network,
                    link: PortLink::Bip,
                    address: transport.local_addr().to_string(),
                    vmac: None,
                },
                RouterPort::Bip6 { network, transport } => {
                    let local = transport.local_addr();
                    PortDescription {
                        network: *network,
                        link: PortLink::Bip6,
                        address: format!("[{}]:{}", local.ip(), local.port()),
                        vmac: Some(transport.vmac()),
                    }
                }
                RouterPort::Sc { network, transport } => PortDescription {
                    network: *network,
                    link: PortLink::Sc,
                    address: format!("vmac {}", transport.vmac()),
                    vmac: None,
                },
            })
            .collect()
    }
}

/// The link layer of a router port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortLink {
    /// BACnet/IP.
    Bip,
    /// BACnet/IPv6.
    Bip6,
    /// BACnet/SC.
    Sc,
}

impl PortLink {
    /// `bip`, `bip6` or `sc`, as in a port's text form.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Bip => "bip",
            Self::Bip6 => "bip6",
            Self::Sc => "sc",
        }
    }
}

/// What a started router says about one of its ports ([`BacnetRouter::describe_ports`]).
///
/// Its text form, `network N: LINK ADDRESS[ vmac VMAC]`, is what `buildwire bacnet router`
/// prints; [`FromStr`](std::str::FromStr) reads it back, and [`PortDescription::to_json`]
/// gives `{network, link, address, vmac}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortDescription {
    /// The network number behind the port.
    pub network: u16,
    /// Its link layer.
    pub link: PortLink,
    /// Its local address: `HOST:PORT`, `[IPV6]:PORT`, or `vmac VMAC` for a BACnet/SC node.
    pub address: String,
    /// The B/IPv6 port's VMAC.
    pub vmac: Option<Vmac>,
}

impl PortDescription {
    /// `{"network": N, "link": "bip", "address": "...", "vmac": "..." or null}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "network": self.network,
            "link": self.link.name(),
            "address": self.address,
            "vmac": self.vmac.map(|v| v.to_string()),
        })
    }
}

impl std::fmt::Display for PortDescription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "network {}: {} {}",
            self.network,
            self.link.name(),
            self.address
        )?;
        match self.vmac {
            Some(vmac) => write!(f, " vmac {vmac}"),
            None => Ok(()),
        }
    }
}

impl std::str::FromStr for PortDescription {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || format!("`{text}` is not `network N: LINK ADDRESS[ vmac VMAC]`");
        let rest = text.trim().strip_prefix("network ").ok_or_else(bad)?;
        let (network, rest) = rest.split_once(": ").ok_or_else(bad)?;
        let network = network.parse().map_err(|_| bad())?;
        let (link, rest) = rest.split_once(' ').ok_or_else(bad)?;
        let link = match link {
            "bip" => PortLink::Bip,
            "bip6" => PortLink::Bip6,
            "sc" => PortLink::Sc,
            _ => return Err(bad()),
        };
        let (address, vmac) = match (link, rest.split_once(" vmac ")) {
            (PortLink::Bip6, Some((address, vmac))) => {
                (address, Some(vmac.parse().map_err(|_| bad())?))
            }
            _ => (rest, None),
        };
        Ok(Self {
            network,
            link,
            address: address.to_owned(),
            vmac,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_descriptions_read_back_from_their_text() {
        for text in [
            "network 1: bip 127.0.0.1:47808",
            "network 2: bip6 [::1]:47808 vmac 0000fe",
            "network 3: sc vmac 02:00:00:00:00:01",
        ] {
            let port: PortDescription = text.parse().unwrap();
            assert_eq!(port.to_string(), text);
        }
        let bip6: PortDescription = "network 2: bip6 [::1]:47808 vmac 0000fe".parse().unwrap();
        assert_eq!(bip6.link, PortLink::Bip6);
        assert_eq!(bip6.address, "[::1]:47808");
        assert_eq!(bip6.to_json()["vmac"], "0000fe");
        assert!(
            "network x: bip 1.2.3.4:5"
                .parse::<PortDescription>()
                .is_err()
        );
        assert!("network 1: ethernet 00".parse::<PortDescription>().is_err());
    }

    #[test]
    fn ports_and_routes_from_text() {
        let bip: PortSpec = "1=bip:10.0.1.1:47808,broadcast=10.0.1.255".parse().unwrap();
        assert_eq!(
            bip,
            PortSpec::Bip {
                network: 1,
                bind: "10.0.1.1:47808".parse().unwrap(),
                broadcast: Some(Ipv4Addr::new(10, 0, 1, 255)),
                bdt: None
            }
        );
        let bip6: PortSpec = "2=bip6:[::]:47808,vmac=0000fe,group=ff05::bac0"
            .parse()
            .unwrap();
        assert!(matches!(
            bip6,
            PortSpec::Bip6 {
                network: 2,
                vmac: Some(Vmac([0, 0, 0xFE])),
                ..
            }
        ));
        let sc: PortSpec = "3=sc:wss://127.0.0.1:4443,cert=a.crt,key=a.key,ca=ca.crt"
            .parse()
            .unwrap();
        assert_eq!(
            sc,
            PortSpec::Sc {
                network: 3,
                hub: "wss://127.0.0.1:4443".into(),
                tls: Some(("a.crt".into(), "a.key".into(), "ca.crt".into())),
            }
        );
        assert!(matches!(
            "3=sc:ws://127.0.0.1:4443".parse::<PortSpec>(),
            Ok(PortSpec::Sc { tls: None, .. })
        ));
        for bad in [
            "3=sc:wss://127.0.0.1:4443",
            "3=sc:127.0.0.1:4443",
            "3=sc:wss://h:1,cert=a,key=b,ca=c,pin=d",
            "0=bip:1.2.3.4:5",
            "1=mstp:1",
            "1=bip:1.2.3.4:5,speed=9",
            "x",
            "1=bip:nohost",
        ] {
            assert!(bad.parse::<PortSpec>().is_err(), "{bad}");
        }
        let ports = [bip, bip6];
        let route = parse_static_route("5=2:0a0002fe", &ports).unwrap();
        assert_eq!((route.network, route.port), (5, 1));
        assert_eq!(route.next_hop.unwrap().as_bytes(), [0x0A, 0x00, 0x02, 0xFE]);
        assert_eq!(parse_static_route("6=1", &ports).unwrap().next_hop, None);
        assert!(parse_static_route("6=9", &ports).is_err());
    }
}
