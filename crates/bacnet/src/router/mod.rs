//! A sans-IO BACnet router (Clause 6.5, 6.6): any number of ports, each a data link with a
//! network number; a routing table of static and learned routes; the network-layer
//! messages; hop counts; rejects with their reasons; congestion (Router-Busy/Available);
//! and, optionally, a device hosted in the router.
//!
//! NPDUs come in with [`Router::handle_npdu`] (port, link source as a BACnet MAC, bytes);
//! what to send comes out of [`Router::poll_transmit`] (port, MAC or broadcast, bytes) and
//! what is for the hosted device out of [`Router::poll_local`]. Deadlines (route discovery)
//! through [`Router::poll_timeout`] / [`Router::handle_timeout`].
//!
//! Decisions where the standard leaves room:
//! - A message for an unknown network is held (bounded) while Who-Is-Router-To-Network goes
//!   out on the other ports; when nobody answers within [`DISCOVERY_TIMEOUT`] (two tries),
//!   the originator gets Reject-Message-To-Network "unknown network".
//! - I-Am-Router-To-Network is re-broadcast on the other ports only for the networks whose
//!   entry changed, so that a loop of routers settles instead of echoing forever.
//! - A message is never sent back out of the port it came in on, and one whose SNET is the
//!   network of another of our ports (a loop, or a spoof) is dropped.
//! - No Reject is ever sent about a Reject, and every Reject draws from a token bucket.
//! - Initialize-Routing-Table with entries changes the table only when configured to
//!   (`accept_routing_table_updates`); otherwise it is rejected with reason "other". A
//!   query (no entries) is always answered.

pub(crate) mod table;

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use crate::encoding::Reader;
use crate::link::bbmd::rate::RateLimit;
use crate::network::message::{NetworkMessage, NetworkRejectReason, RoutingTablePort};
use crate::network::npdu::{GLOBAL_BROADCAST_NETWORK, MacAddress, Npdu, NpduBody, RemoteAddress};

pub use table::{Route, RouteOrigin, RoutingTable};

/// How long a message for an unknown network waits for an I-Am-Router-To-Network per try.
pub const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(1);
/// Who-Is-Router-To-Network tries before the waiting messages are rejected.
pub const DISCOVERY_ATTEMPTS: u8 = 2;
/// Most messages held for route discovery, all networks together.
pub const MAX_HELD: usize = 256;
/// Most NPDUs waiting to be sent; past this the oldest are dropped.
pub const MAX_QUEUED: usize = 16_384;
/// How long a router's busy state lasts without Router-Available (Clause 6.6.3.6).
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);
/// Networks listed per I-Am-Router-To-Network (fits every B/IP datagram).
const NETWORKS_PER_MESSAGE: usize = 700;

/// One port of the router.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortConfig {
    /// The network number of the directly connected network (1..=65534).
    pub network: u16,
    /// The router's own MAC address on that network.
    pub mac: MacAddress,
    /// Largest NPDU the link carries (1497 for B/IP and B/IPv6).
    pub max_npdu: usize,
    /// Length every MAC address on the link has (6 for B/IP, 3 for B/IPv6), if fixed.
    pub mac_length: Option<usize>,
}

/// A configured route: `network` through `port` (0-based), via the router at `next_hop`
/// (or by broadcast on that port when `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StaticRoute {
    /// The remote network.
    pub network: u16,
    /// The port index.
    pub port: usize,
    /// The next router's MAC address on that port.
    pub next_hop: Option<MacAddress>,
}

/// Router settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouterConfig {
    /// The ports; their index is the port id minus one.
    pub ports: Vec<PortConfig>,
    /// Configured routes.
    pub static_routes: Vec<StaticRoute>,
    /// Apply Initialize-Routing-Table entries from the network.
    pub accept_routing_table_updates: bool,
    /// A device is hosted in the router: NPDUs for the router itself go to
    /// [`Router::poll_local`].
    pub host_device: bool,
    /// Rejects per second at most (with a burst of as many).
    pub reject_rate: u32,
}

impl RouterConfig {
    /// A router between `ports`, nothing else configured.
    pub fn new(ports: Vec<PortConfig>) -> Self {
        Self {
            ports,
            static_routes: Vec::new(),
            accept_routing_table_updates: false,
            host_device: false,
            reject_rate: 100,
        }
    }
}

/// Why a configuration is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// An address of the hosted device's peers: a port and a MAC address on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RouterLink {
    /// Port index.
    pub port: usize,
    /// MAC address on that port's network.
    pub mac: MacAddress,
}

impl std::fmt::Display for RouterLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "port {}:", self.port + 1)?;
        for octet in self.mac.as_bytes() {
            write!(f, "{octet:02x}")?;
        }
        Ok(())
    }
}

/// An NPDU to send on one port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouterTransmit {
    /// Port index.
    pub port: usize,
    /// The MAC address to send to, or `None` to broadcast on that port's network.
    pub destination: Option<MacAddress>,
    /// The NPDU.
    pub npdu: Vec<u8>,
}

/// An NPDU for the device hosted in the router.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalDelivery {
    /// Where it came from (the port, and the MAC on it to answer to).
    pub link: RouterLink,
    /// The NPDU, as the device should see it.
    pub npdu: Vec<u8>,
    /// True when it was a broadcast.
    pub broadcast: bool,
}

/// Counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RouterStats {
    /// NPDUs that did not decode.
    pub malformed: u64,
    /// NPDUs forwarded to another port (one per port for broadcasts).
    pub routed: u64,
    /// NPDUs delivered to the hosted device.
    pub local: u64,
    /// Dropped: hop count exhausted.
    pub hop_count_exhausted: u64,
    /// Dropped: would go back out of its port, or SNET names one of our own networks.
    pub loops: u64,
    /// Dropped: nothing to do with it (an APDU for a router without a device...).
    pub dropped: u64,
    /// Reject-Message-To-Network sent.
    pub rejects_sent: u64,
    /// Rejects not sent because of the rate limit.
    pub rejects_suppressed: u64,
    /// Network-layer messages handled.
    pub network_messages: u64,
}

struct Held {
    port: usize,
    from: MacAddress,
    npdu: Vec<u8>,
}

struct Discovery {
    next_try: Instant,
    attempts_left: u8,
    held: Vec<Held>,
}

/// The router.
pub struct Router {
    config: RouterConfig,
    table: RoutingTable,
    discoveries: HashMap<u16, Discovery>,
    held: usize,
    transmits: VecDeque<RouterTransmit>,
    local: VecDeque<LocalDelivery>,
    busy: bool,
    rejects: RateLimit,
    stats: RouterStats,
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Router")
            .field("ports", &self.config.ports)
            .field("table", &self.table)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

/// Where an NPDU with a DNET goes.
enum Next {
    /// A directly connected network: the port.
    Direct(usize),
    /// Through another router.
    Via(Route),
}

impl Router {
    /// A router for `config`: checks it and queues the start-up I-Am-Router-To-Network on
    /// every port (Clause 6.6.2).
    pub fn new(config: RouterConfig) -> Result<Self, ConfigError> {
        if config.ports.is_empty() {
            return Err(ConfigError("a router needs at least one port".into()));
        }
        let mut seen = std::collections::HashSet::new();
        for port in &config.ports {
            if port.network == 0 || port.network == GLOBAL_BROADCAST_NETWORK {
                return Err(ConfigError(format!(
                    "network number {} is not 1..=65534",
                    port.network
                )));
            }
            if !seen.insert(port.network) {
                return Err(ConfigError(format!(
                    "network {} is on two ports; each port is its own network",
                    port.network
                )));
            }
        }
        let mut table = RoutingTable::default();
        for route in &config.static_routes {
            if route.port >= config.ports.len() {
                return Err(ConfigError(format!(
                    "static route to network {}: no port {}",
                    route.network,
                    route.port + 1
                )));
            }
            if seen.contains(&route.network) {
                return Err(ConfigError(format!(
                    "static route to network {}: it is directly connected",
                    route.network
                )));
            }
            table.add_static(route.network, route.port, route.next_hop);
        }
        let rate = config.reject_rate.max(1);
        let mut router = Self {
            config,
            table,
            discoveries: HashMap::new(),
            held: 0,
            transmits: VecDeque::new(),
            local: VecDeque::new(),
            busy: false,
            rejects: RateLimit::new(rate, rate),
            stats: RouterStats::default(),
        };
        for port in 0..router.config.ports.len() {
            let networks = router.reachable_except(port);
            router.announce(port, &networks);
        }
        Ok(router)
    }

    /// The configuration.
    pub fn config(&self) -> &RouterConfig {
        &self.config
    }

    /// The routing table.
    pub fn table(&self) -> &RoutingTable {
        &self.table
    }

    /// Counters.
    pub fn stats(&self) -> RouterStats {
        self.stats
    }

    /// The port index serving `network` directly.
    pub fn port_of(&self, network: u16) -> Option<usize> {
        self.config.ports.iter().position(|p| p.network == network)
    }

    /// Networks reachable through ports other than `port`: the directly connected ones
    /// and the routing table's.
    pub fn reachable_except(&self, port: usize) -> Vec<u16> {
        let mut networks: Vec<u16> = self
            .config
            .ports
            .iter()
            .enumerate()
            .filter(|(index, _)| *index != port)
            .map(|(_, p)| p.network)
            .collect();
        networks.extend(
            self.table
                .entries()
                .into_iter()
                .filter(|(_, route)| route.port != port)
                .map(|(network, _)| network),
        );
        networks.sort_unstable();
        networks.dedup();
        networks
    }

    /// Declares this router busy (or available again): broadcasts Router-Busy-To-Network
    /// (or Router-Available) on every port; while busy, traffic to route is rejected with
    /// reason "router busy".
    pub fn set_busy(&mut self, busy: bool) {
        if self.busy == busy {
            return;
        }
        self.busy = busy;
        for port in 0..self.config.ports.len() {
            let networks = self.reachable_except(port);
            let message = if busy {
                NetworkMessage::RouterBusyToNetwork(networks)
            } else {
                NetworkMessage::RouterAvailableToNetwork(networks)
            };
            self.broadcast_message(port, &message);
        }
    }

    /// True while declared busy.
    pub fn is_busy(&self) -> bool {
        self.busy
    }

    fn push(&mut self, transmit: RouterTransmit) {
        if self.transmits.len() >= MAX_QUEUED {
            self.transmits.pop_front();
        }
        self.transmits.push_back(transmit);
    }

    fn broadcast_message(&mut self, port: usize, message: &NetworkMessage) {
        self.push(RouterTransmit {
            port,
            destination: None,
            npdu: message.to_local_npdu(),
        });
    }

    fn announce(&mut self, port: usize, networks: &[u16]) {
        for chunk in networks.chunks(NETWORKS_PER_MESSAGE) {
            self.broadcast_message(port, &NetworkMessage::IAmRouterToNetwork(chunk.to_vec()));
        }
    }

    /// Handles one NPDU received on `port` from the node at `from` (`broadcast` when it
    /// came as a link-layer broadcast).
    pub fn handle_npdu(
        &mut self,
        now: Instant,
        port: usize,
        from: MacAddress,
        npdu: &[u8],
        broadcast: bool,
    ) {
        if port >= self.config.ports.len() {
            self.stats.dropped += 1;
            return;
        }
        let Ok(decoded) = Npdu::decode(&mut Reader::new(npdu)) else {
            self.stats.malformed += 1;
            return;
        };
        if let Some(source) = decoded.source
            && self
                .port_of(source.network)
                .is_some_and(|other| other != port)
        {
            // SNET is one of our other networks: it went round a loop, or is forged.
            self.stats.loops += 1;
            return;
        }
        if let Some(source) = decoded.source
            && self.port_of(source.network).is_none()
        {
            // A router on this port forwarded it: that router serves SNET.
            self.learn(now, port, from, &[source.network]);
        }
        match decoded.destination {
            None => self.handle_local(now, port, from, &decoded, npdu, broadcast),
            Some(destination) if destination.network == GLOBAL_BROADCAST_NETWORK => {
                self.handle_global_broadcast(now, port, from, &decoded, npdu, broadcast);
            }
            Some(destination) => self.route(now, port, from, &decoded, npdu, destination),
        }
    }

    /// A message with no DNET: for this router (network message) or its device.
    fn handle_local(
        &mut self,
        now: Instant,
        port: usize,
        from: MacAddress,
        decoded: &Npdu<'_>,
        npdu: &[u8],
        broadcast: bool,
    ) {
        match decoded.body {
            NpduBody::Apdu(_) => self.deliver_local(port, from, npdu.to_vec(), broadcast),
            NpduBody::NetworkMessage { .. } => {
                self.handle_network_message(now, port, from, decoded);
            }
        }
    }

    fn deliver_local(&mut self, port: usize, mac: MacAddress, npdu: Vec<u8>, broadcast: bool) {
        if !self.config.host_device {
            self.stats.dropped += 1;
            return;
        }
        self.stats.local += 1;
        if self.local.len() >= MAX_QUEUED {
            self.local.pop_front();
        }
        self.local.push_back(LocalDelivery {
            link: RouterLink { port, mac },
            npdu,
            broadcast,
        });
    }

    fn handle_global_broadcast(
        &mut self,
        now: Instant,
        port: usize,
        from: MacAddress,
        decoded: &Npdu<'_>,
        npdu: &[u8],
        broadcast: bool,
    ) {
        match decoded.body {
            NpduBody::Apdu(_) => self.deliver_local(port, from, npdu.to_vec(), broadcast),
            NpduBody::NetworkMessage { .. } => {
                self.handle_network_message(now, port, from, decoded);
            }
        }
        if decoded.hop_count <= 1 {
            self.stats.hop_count_exhausted += 1;
            return;
        }
        let source = decoded.source.unwrap_or(RemoteAddress {
            network: self.config.ports[port].network,
            mac: from,
        });
        let forwarded = Npdu {
            source: Some(source),
            hop_count: decoded.hop_count - 1,
            ..*decoded
        };
        let mut bytes = Vec::with_capacity(npdu.len() + 12);
        forwarded.encode(&mut bytes);
        for other in 0..self.config.ports.len() {
            if other == port {
                continue;
            }
            if bytes.len() > self.config.ports[other].max_npdu {
                continue;
            }
            self.stats.routed += 1;
            self.push(RouterTransmit {
                port: other,
                destination: None,
                npdu: bytes.clone(),
            });
        }
    }

    fn next_for(&self, network: u16) -> Option<Next> {
        if let Some(port) = self.port_of(network) {
            return Some(Next::Direct(port));
        }
        self.table.get(network).copied().map(Next::Via)
    }

    fn route(
        &mut self,
        now: Instant,
        port: usize,
        from: MacAddress,
        decoded: &Npdu<'_>,
        npdu: &[u8],
        destination: RemoteAddress,
    ) {
        let Some(next) = self.next_for(destination.network) else {
            self.discover(now, port, from, npdu, destination.network);
            return;
        };
        if self.busy {
            self.reject(
                now,
                port,
                from,
                decoded,
                NetworkRejectReason::RouterBusy,
                destination.network,
            );
            return;
        }
        let source = decoded.source.unwrap_or(RemoteAddress {
            network: self.config.ports[port].network,
            mac: from,
        });
        match next {
            Next::Direct(out) if out == port => {
                // DNET is the network it came from: if it names us, it is ours.
                if destination.mac == self.config.ports[port].mac || destination.mac.is_empty() {
                    let local = Npdu {
                        destination: None,
                        ..*decoded
                    };
                    let mut bytes = Vec::new();
                    local.encode(&mut bytes);
                    self.deliver_local(port, from, bytes, destination.mac.is_empty());
                } else {
                    self.stats.loops += 1;
                }
            }
            Next::Direct(out) => {
                let out_config = self.config.ports[out].clone();
                if let Some(length) = out_config.mac_length
                    && !destination.mac.is_empty()
                    && destination.mac.as_bytes().len() != length
                {
                    self.reject(
                        now,
                        port,
                        from,
                        decoded,
                        NetworkRejectReason::AddressingError,
                        destination.network,
                    );
                    return;
                }
                let own = destination.mac == out_config.mac;
                let delivered = Npdu {
                    destination: None,
                    source: Some(source),
                    ..*decoded
                };
                let mut bytes = Vec::with_capacity(npdu.len() + 12);
                delivered.encode(&mut bytes);
                if own {
                    // Addressed to this router on that network: its device answers as a
                    // node of network `out`, to the originator's network address.
                    self.deliver_local(out, out_config.mac, bytes, false);
                    return;
                }
                if bytes.len() > out_config.max_npdu {
                    self.reject(
                        now,
                        port,
                        from,
                        decoded,
                        NetworkRejectReason::MessageTooLong,
                        destination.network,
                    );
                    return;
                }
                if destination.mac.is_empty() {
                    // A broadcast on a network we are a node of reaches our device too.
                    if matches!(decoded.body, NpduBody::Apdu(_)) && self.config.host_device {
                        self.deliver_local(out, out_config.mac, bytes.clone(), true);
                    }
                }
                self.stats.routed += 1;
                let to = (!destination.mac.is_empty()).then_some(destination.mac);
                self.push(RouterTransmit {
                    port: out,
                    destination: to,
                    npdu: bytes,
                });
            }
            Next::Via(route) => {
                if route.port == port {
                    // The next router is on the network it came from: never back out.
                    self.stats.loops += 1;
                    return;
                }
                if route.busy_until.is_some_and(|until| until > now) {
                    self.reject(
                        now,
                        port,
                        from,
                        decoded,
                        NetworkRejectReason::RouterBusy,
                        destination.network,
                    );
                    return;
                }
                if decoded.hop_count <= 1 {
                    self.stats.hop_count_exhausted += 1;
                    return;
                }
                let forwarded = Npdu {
                    source: Some(source),
                    hop_count: decoded.hop_count - 1,
                    ..*decoded
                };
                let mut bytes = Vec::with_capacity(npdu.len() + 12);
                forwarded.encode(&mut bytes);
                if bytes.len() > self.config.ports[route.port].max_npdu {
                    self.reject(
                        now,
                        port,
                        from,
                        decoded,
                        NetworkRejectReason::MessageTooLong,
                        destination.network,
                    );
                    return;
                }
                self.stats.routed += 1;
                self.push(RouterTransmit {
                    port: route.port,
                    destination: route.next_hop,
                    npdu: bytes,
                });
            }
        }
    }

    fn discover(&mut self, now: Instant, port: usize, from: MacAddress, npdu: &[u8], network: u16) {
        if self.held >= MAX_HELD {
            if let Ok(decoded) = Npdu::decode(&mut Reader::new(npdu)) {
                self.reject(
                    now,
                    port,
                    from,
                    &decoded,
                    NetworkRejectReason::UnknownNetwork,
                    network,
                );
            }
            return;
        }
        self.held += 1;
        let discovery = self
            .discoveries
            .entry(network)
            .or_insert_with(|| Discovery {
                next_try: now,
                attempts_left: DISCOVERY_ATTEMPTS,
                held: Vec::new(),
            });
        discovery.held.push(Held {
            port,
            from,
            npdu: npdu.to_vec(),
        });
        self.discover_due(now);
    }

    fn discover_due(&mut self, now: Instant) {
        let mut asks: Vec<(u16, Vec<usize>)> = Vec::new();
        let mut failed = Vec::new();
        for (network, discovery) in &mut self.discoveries {
            if discovery.next_try > now {
                continue;
            }
            if discovery.attempts_left == 0 {
                failed.push(*network);
                continue;
            }
            discovery.attempts_left -= 1;
            discovery.next_try = now + DISCOVERY_TIMEOUT;
            let mut arrival_ports: Vec<usize> = discovery.held.iter().map(|h| h.port).collect();
            arrival_ports.sort_unstable();
            arrival_ports.dedup();
            asks.push((*network, arrival_ports));
        }
        for (network, arrival_ports) in asks {
            for port in 0..self.config.ports.len() {
                // Ask on the ports the message did not come from.
                if arrival_ports.len() == 1 && arrival_ports[0] == port {
                    continue;
                }
                self.broadcast_message(port, &NetworkMessage::WhoIsRouterToNetwork(Some(network)));
            }
        }
        for network in failed {
            if let Some(discovery) = self.discoveries.remove(&network) {
                self.held -= discovery.held.len();
                for held in discovery.held {
                    if let Ok(decoded) = Npdu::decode(&mut Reader::new(&held.npdu)) {
                        self.reject(
                            now,
                            held.port,
                            held.from,
                            &decoded,
                            NetworkRejectReason::UnknownNetwork,
                            network,
                        );
                    }
                }
            }
        }
    }

    /// Sends Reject-Message-To-Network to the originator of `decoded`: back through the
    /// router it came from (DNET/DADR = its SNET/SADR) or straight to it.
    fn reject(
        &mut self,
        now: Instant,
        port: usize,
        from: MacAddress,
        decoded: &Npdu<'_>,
        reason: NetworkRejectReason,
        network: u16,
    ) {
        if let NpduBody::NetworkMessage { message_type, .. } = decoded.body
            && message_type == crate::network::NetworkMessageType::RejectMessageToNetwork
        {
            return;
        }
        if !self.rejects.allow(now) {
            self.stats.rejects_suppressed += 1;
            return;
        }
        self.stats.rejects_sent += 1;
        let mut bytes = Vec::new();
        NetworkMessage::RejectMessageToNetwork { reason, network }.encode_npdu(
            decoded.source,
            None,
            crate::network::npdu::DEFAULT_HOP_COUNT,
            &mut bytes,
        );
        self.push(RouterTransmit {
            port,
            destination: Some(from),
            npdu: bytes,
        });
    }

    fn learn(&mut self, now: Instant, port: usize, from: MacAddress, networks: &[u16]) -> Vec<u16> {
        let mut changed = Vec::new();
        for &network in networks {
            if network == 0
                || network == GLOBAL_BROADCAST_NETWORK
                || self.port_of(network).is_some()
            {
                continue;
            }
            if self.table.learn(network, port, from) == table::Update::Changed {
                changed.push(network);
            }
            if let Some(discovery) = self.discoveries.remove(&network) {
                self.held -= discovery.held.len();
                for held in discovery.held {
                    self.handle_npdu(now, held.port, held.from, &held.npdu, false);
                }
            }
        }
        changed
    }

    fn handle_network_message(
        &mut self,
        now: Instant,
        port: usize,
        from: MacAddress,
        decoded: &Npdu<'_>,
    ) {
        self.stats.network_messages += 1;
        let message = match NetworkMessage::from_body(&decoded.body) {
            Some(Ok(message)) => message,
            Some(Err(_)) => {
                self.stats.malformed += 1;
                return;
            }
            None => return,
        };
        // Answers go back the way the question came: to its SNET/SADR through `from`, or
        // to `from` on the local network.
        let reply_to = decoded.source;
        match message {
            NetworkMessage::WhoIsRouterToNetwork(None) => {
                let networks = self.reachable_except(port);
                self.announce(port, &networks);
            }
            NetworkMessage::WhoIsRouterToNetwork(Some(network)) => {
                match self.next_for(network) {
                    Some(Next::Direct(out)) if out != port => {
                        self.announce(port, &[network]);
                    }
                    Some(Next::Via(route)) if route.port != port => {
                        self.announce(port, &[network]);
                    }
                    Some(_) => {}
                    None => {
                        // Ask the other networks on the requester's behalf; the answer is
                        // re-broadcast here when it teaches us the route.
                        let source = reply_to.unwrap_or(RemoteAddress {
                            network: self.config.ports[port].network,
                            mac: from,
                        });
                        let mut bytes = Vec::new();
                        NetworkMessage::WhoIsRouterToNetwork(Some(network)).encode_npdu(
                            None,
                            Some(source),
                            crate::network::npdu::DEFAULT_HOP_COUNT,
                            &mut bytes,
                        );
                        for other in 0..self.config.ports.len() {
                            if other != port {
                                self.push(RouterTransmit {
                                    port: other,
                                    destination: None,
                                    npdu: bytes.clone(),
                                });
                            }
                        }
                    }
                }
            }
            NetworkMessage::IAmRouterToNetwork(networks) => {
                let changed = self.learn(now, port, from, &networks);
                if !changed.is_empty() {
                    for other in 0..self.config.ports.len() {
                        if other != port {
                            self.announce(other, &changed);
                        }
                    }
                }
            }
            NetworkMessage::RejectMessageToNetwork { reason, network } => {
                if reason == NetworkRejectReason::UnknownNetwork
                    && self
                        .table
                        .get(network)
                        .is_some_and(|r| r.origin == RouteOrigin::Learned && r.port == port)
                {
                    self.table.remove(network);
                }
            }
            NetworkMessage::RouterBusyToNetwork(networks) => {
                let changed =
                    self.table
                        .set_busy(port, from, &networks, Some(now + BUSY_TIMEOUT), now);
                self.relay_congestion(port, true, &changed);
            }
            NetworkMessage::RouterAvailableToNetwork(networks) => {
                let changed = self.table.set_busy(port, from, &networks, None, now);
                self.relay_congestion(port, false, &changed);
            }
            NetworkMessage::InitializeRoutingTable(entries) => {
                if entries.is_empty() {
                    let table = self.routing_table_ports();
                    self.reply(
                        port,
                        from,
                        reply_to,
                        &NetworkMessage::InitializeRoutingTableAck(table),
                    );
                } else if self.config.accept_routing_table_updates {
                    for entry in entries {
                        if self.port_of(entry.network).is_some() {
                            continue;
                        }
                        if entry.port_id == 0 {
                            self.table.remove(entry.network);
                        } else if let Some(index) = usize::from(entry.port_id)
                            .checked_sub(1)
                            .filter(|index| *index < self.config.ports.len())
                        {
                            let next_hop = (index == port).then_some(from);
                            self.table.add_static(entry.network, index, next_hop);
                        }
                    }
                    self.reply(
                        port,
                        from,
                        reply_to,
                        &NetworkMessage::InitializeRoutingTableAck(Vec::new()),
                    );
                } else {
                    self.reject(
                        now,
                        port,
                        from,
                        decoded,
                        NetworkRejectReason::Other,
                        self.config.ports[port].network,
                    );
                }
            }
            NetworkMessage::WhatIsNetworkNumber => {
                // Only answered on the local network (Clause 6.4.19): never when routed.
                if decoded.source.is_none() && decoded.destination.is_none() {
                    let network = self.config.ports[port].network;
                    self.broadcast_message(
                        port,
                        &NetworkMessage::NetworkNumberIs {
                            network,
                            configured: true,
                        },
                    );
                }
            }
            NetworkMessage::ICouldBeRouterToNetwork { .. }
            | NetworkMessage::InitializeRoutingTableAck(_)
            | NetworkMessage::NetworkNumberIs { .. } => {}
            NetworkMessage::Other { .. } => {
                let network = decoded
                    .destination
                    .map_or(self.config.ports[port].network, |d| d.network);
                self.reject(
                    now,
                    port,
                    from,
                    decoded,
                    NetworkRejectReason::UnknownMessageType,
                    network,
                );
            }
        }
    }

    fn relay_congestion(&mut self, port: usize, busy: bool, networks: &[u16]) {
        if networks.is_empty() {
            return;
        }
        for other in 0..self.config.ports.len() {
            if other == port {
                continue;
            }
            let message = if busy {
                NetworkMessage::RouterBusyToNetwork(networks.to_vec())
            } else {
                NetworkMessage::RouterAvailableToNetwork(networks.to_vec())
            };
            self.broadcast_message(other, &message);
        }
    }

    fn reply(
        &mut self,
        port: usize,
        to: MacAddress,
        remote: Option<RemoteAddress>,
        message: &NetworkMessage,
    ) {
        let mut bytes = Vec::new();
        message.encode_npdu(
            remote,
            None,
            crate::network::npdu::DEFAULT_HOP_COUNT,
            &mut bytes,
        );
        self.push(RouterTransmit {
            port,
            destination: Some(to),
            npdu: bytes,
        });
    }

    /// The table as Initialize-Routing-Table-Ack reports it: directly connected networks
    /// and routes, with 1-based port ids.
    pub fn routing_table_ports(&self) -> Vec<RoutingTablePort> {
        let mut ports: Vec<RoutingTablePort> = self
            .config
            .ports
            .iter()
            .enumerate()
            .map(|(index, port)| RoutingTablePort {
                network: port.network,
                port_id: u8::try_from(index + 1).unwrap_or(u8::MAX),
                port_info: Vec::new(),
            })
            .collect();
        ports.extend(
            self.table
                .entries()
                .into_iter()
                .map(|(network, route)| RoutingTablePort {
                    network,
                    port_id: u8::try_from(route.port + 1).unwrap_or(u8::MAX),
                    port_info: Vec::new(),
                }),
        );
        ports.truncate(255);
        ports
    }

    /// Sends an NPDU from the hosted device. `link` is where the device's server wants it
    /// (a peer's port and MAC) or `None` to broadcast on every port. An NPDU with a DNET
    /// (an answer to a routed request) is routed as if the device had sent it on
    /// `link.port` from the router's own MAC there.
    pub fn send_from_device(&mut self, now: Instant, link: Option<RouterLink>, npdu: &[u8]) {
        let Ok(decoded) = Npdu::decode(&mut Reader::new(npdu)) else {
            self.stats.malformed += 1;
            return;
        };
        match (link, decoded.destination) {
            (None, _) => {
                for port in 0..self.config.ports.len() {
                    self.push(RouterTransmit {
                        port,
                        destination: None,
                        npdu: npdu.to_vec(),
                    });
                }
            }
            (Some(link), Some(destination))
                if destination.network != GLOBAL_BROADCAST_NETWORK
                    && self
                        .config
                        .ports
                        .get(link.port)
                        .is_some_and(|port| port.mac == link.mac) =>
            {
                // The device answers as a node of `link.port`'s network (it was addressed
                // there through the router): route it from there.
                self.route(now, link.port, link.mac, &decoded, npdu, destination);
            }
            (Some(link), _) => {
                if link.port < self.config.ports.len() {
                    self.push(RouterTransmit {
                        port: link.port,
                        destination: Some(link.mac),
                        npdu: npdu.to_vec(),
                    });
                }
            }
        }
    }

    /// Handles the deadlines due at `now` (route discovery tries and failures).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.discover_due(now);
    }

    /// When [`Self::handle_timeout`] should next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.discoveries.values().map(|d| d.next_try).min()
    }

    /// The next NPDU to send.
    pub fn poll_transmit(&mut self) -> Option<RouterTransmit> {
        self.transmits.pop_front()
    }

    /// The next NPDU for the hosted device.
    pub fn poll_local(&mut self) -> Option<LocalDelivery> {
        self.local.pop_front()
    }
}
