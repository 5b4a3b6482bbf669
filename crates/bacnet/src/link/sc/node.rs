//! A BACnet/SC node, sans-IO (Annex AB.5.2, AB.5.4, AB.3.3): the hub connector with a
//! primary and a failover hub, reconnection with backoff, direct connections found by
//! Address-Resolution, and the node's answers to Address-Resolution and
//! Advertisement-Solicitation.
//!
//! The node never opens a socket: it asks its driver to open a WebSocket ([`NodeCommand::Open`],
//! with the subprotocol to ask for), to send binary messages on it and to close it, and the
//! driver reports back when a WebSocket opened, failed or closed and what arrived on it.
//!
//! Hub connector policy (Annex AB.5.2): connect to the primary hub; when that fails, to the
//! failover hub at once; when both fail, wait the reconnect delay (doubling from
//! [`NodeConfig::reconnect_min`] up to [`NodeConfig::reconnect_max`], plus up to 25 % random
//! jitter) and start again with the primary. While connected to the failover hub, try the
//! primary again every reconnect delay and move back to it when it answers. A hub that
//! refuses the VMAC (NODE_DUPLICATE_VMAC) makes the node pick a new random VMAC and try again
//! at once.
//!
//! Messages received from a hub must carry the Originating Virtual Address of their sender
//! and no destination other than this node or broadcast; others are NAKed
//! (HEADER_ENCODING_ERROR) when the annex asks for an answer, and dropped.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::bvlc::{
    Advertisement, BvlcFunction, BvlcHeader, BvlcMessage, BvlcResult, HubConnectionStatus,
    MAX_RESOLVED_URIS, Payload, ResultOutcome, ScDecodeError, encode_encapsulated_npdu,
    first_not_understood, header_marker, nak_for,
};
use super::connection::{
    CloseReason, ConnectionConfig, ConnectionEvent, ConnectionState, Handled, LocalIdentity,
    ScConnection,
};
use super::vmac::Vmac;
use crate::enums::ErrorCode;

/// Most received NPDUs kept until the driver takes them; the oldest are dropped past this.
pub const MAX_QUEUED_DELIVERIES: usize = 4096;
/// Most events kept until the driver takes them.
pub const MAX_QUEUED_EVENTS: usize = 1024;

/// Identifies one WebSocket of the node (never reused).
pub type LinkId = u64;

/// The WebSocket subprotocol of a connection (Annex AB.7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Subprotocol {
    /// `hub.bsc.bacnet.org`: a hub connection.
    Hub,
    /// `dc.bsc.bacnet.org`: a direct connection between two nodes.
    Direct,
}

impl Subprotocol {
    /// The subprotocol name sent in `Sec-WebSocket-Protocol`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Hub => "hub.bsc.bacnet.org",
            Self::Direct => "dc.bsc.bacnet.org",
        }
    }
}

/// Which hub a hub connection goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HubRole {
    /// The primary hub.
    Primary,
    /// The failover hub.
    Failover,
}

/// How a node connects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeConfig {
    /// VMAC, device UUID and limits announced in Connect-Request.
    pub identity: LocalIdentity,
    /// WebSocket URI of the primary hub (`wss://host:port`).
    pub primary_hub: String,
    /// WebSocket URI of the failover hub.
    pub failover_hub: Option<String>,
    /// Handshake, heartbeat and disconnect timeouts.
    pub connection: ConnectionConfig,
    /// First reconnect delay after both hubs failed.
    pub reconnect_min: Duration,
    /// Largest reconnect delay.
    pub reconnect_max: Duration,
    /// WebSocket URIs at which this node accepts direct connections (answered to
    /// Address-Resolution); empty when it accepts none.
    pub direct_uris: Vec<String>,
}

impl NodeConfig {
    /// A node with `identity` connecting to `primary_hub`, with the annex's timeouts and a
    /// reconnect delay from 10 s to 10 minutes.
    pub fn new(identity: LocalIdentity, primary_hub: impl Into<String>) -> Self {
        Self {
            identity,
            primary_hub: primary_hub.into(),
            failover_hub: None,
            connection: ConnectionConfig::default(),
            reconnect_min: Duration::from_secs(10),
            reconnect_max: Duration::from_secs(600),
            direct_uris: Vec::new(),
        }
    }
}

/// What the driver must do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeCommand {
    /// Open a WebSocket to `uri` asking for `subprotocol`; report
    /// [`ScNode::link_opened`] or [`ScNode::link_failed`].
    Open {
        /// The new link.
        link: LinkId,
        /// Where to connect.
        uri: String,
        /// The subprotocol to ask for.
        subprotocol: Subprotocol,
    },
    /// Send a binary message on the link.
    Send {
        /// The link.
        link: LinkId,
        /// The message.
        frame: Bytes,
    },
    /// Close the link's WebSocket once what was queued before is sent.
    Close {
        /// The link.
        link: LinkId,
    },
}

/// Things worth a log line or a reaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeEvent {
    /// The hub connection changed.
    HubStatus(HubConnectionStatus),
    /// A hub refused the VMAC; the node now uses `new`.
    VmacChanged {
        /// The refused VMAC.
        old: Vmac,
        /// The new random VMAC.
        new: Vmac,
    },
    /// A hub connection attempt failed.
    HubConnectFailed {
        /// Which hub.
        role: HubRole,
        /// Its URI.
        uri: String,
        /// Why, in words.
        reason: String,
    },
    /// A direct connection to this peer is established.
    DirectConnected(Vmac),
    /// A direct connection to this peer ended.
    DirectDisconnected(Vmac),
    /// A peer answered Address-Resolution with these WebSocket URIs.
    AddressResolved {
        /// The peer.
        vmac: Vmac,
        /// Where it accepts direct connections.
        uris: Vec<String>,
    },
    /// A peer advertised itself.
    Advertisement {
        /// The peer.
        vmac: Vmac,
        /// What it said.
        advertisement: Advertisement,
    },
    /// A BVLC-Result NAK arrived.
    Nak {
        /// Who sent it (`None`: the connection peer, such as the hub itself).
        from: Option<Vmac>,
        /// The function it refuses.
        for_function: BvlcFunction,
        /// Error code.
        code: ErrorCode,
        /// Details text.
        details: String,
    },
    /// A message did not decode.
    Malformed(ScDecodeError),
}

/// An NPDU received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeDelivery {
    /// The VMAC of the node that sent it.
    pub source: Vmac,
    /// The NPDU.
    pub npdu: Vec<u8>,
    /// True when it was sent to the broadcast VMAC.
    pub broadcast: bool,
}

/// Why an NPDU could not be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// No hub connection (and no direct connection to the destination).
    #[error("not connected to a BACnet/SC hub")]
    NotConnected,
    /// Longer than the peer accepts.
    #[error("NPDU of {length} octets is longer than the {limit} the peer accepts")]
    TooLong {
        /// The NPDU's length.
        length: usize,
        /// The peer's limit.
        limit: usize,
    },
}

/// Counters of the node.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeStats {
    /// NPDUs sent (through the hub or direct).
    pub sent: u64,
    /// NPDUs sent on a direct connection.
    pub sent_direct: u64,
    /// NPDUs received.
    pub received: u64,
    /// NPDUs dropped because the driver did not take them.
    pub dropped: u64,
    /// Messages that did not decode or broke the annex's rules for messages from a hub.
    pub malformed: u64,
    /// Hub connections established.
    pub hub_connects: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LinkKind {
    Hub(HubRole),
    DirectOut(Vmac),
    DirectIn,
}

#[derive(Debug)]
struct Link {
    kind: LinkKind,
    uri: String,
    connection: Option<ScConnection>,
}

/// A BACnet/SC node: hub connector, node switch for direct connections.
#[derive(Debug)]
pub struct ScNode {
    config: NodeConfig,
    identity: LocalIdentity,
    rng: u64,
    links: HashMap<LinkId, Link>,
    next_link: LinkId,
    hub: Option<(LinkId, HubRole)>,
    attempt: Option<(LinkId, HubRole)>,
    reconnect_at: Option<Instant>,
    backoff: Duration,
    primary_retry_at: Option<Instant>,
    status: HubConnectionStatus,
    direct: HashMap<Vmac, LinkId>,
    resolving: HashMap<Vmac, Instant>,
    next_message_id: u16,
    running: bool,
    commands: VecDeque<NodeCommand>,
    events: VecDeque<NodeEvent>,
    deliveries: VecDeque<NodeDelivery>,
    stats: NodeStats,
}

impl ScNode {
    /// A node; `seed` (random, from the driver) drives new VMACs after a collision, jitter
    /// and message ids.
    pub fn new(config: NodeConfig, seed: u64) -> Self {
        let mut node = Self {
            identity: config.identity,
            backoff: config.reconnect_min,
            config,
            rng: seed,
            links: HashMap::new(),
            next_link: 1,
            hub: None,
            attempt: None,
            reconnect_at: None,
            primary_retry_at: None,
            status: HubConnectionStatus::NoHubConnection,
            direct: HashMap::new(),
            resolving: HashMap::new(),
            next_message_id: 0,
            running: false,
            commands: VecDeque::new(),
            events: VecDeque::new(),
            deliveries: VecDeque::new(),
            stats: NodeStats::default(),
        };
        node.next_message_id = (node.random() >> 48) as u16;
        node
    }

    /// The VMAC in use (it changes after a collision).
    pub const fn vmac(&self) -> Vmac {
        self.identity.vmac
    }

    /// The identity announced in Connect-Request.
    pub const fn identity(&self) -> &LocalIdentity {
        &self.identity
    }

    /// The hub connection status (as an Advertisement reports it).
    pub const fn hub_status(&self) -> HubConnectionStatus {
        self.status
    }

    /// True when connected to a hub.
    pub fn is_connected(&self) -> bool {
        self.hub.is_some()
    }

    /// The VMACs with an established direct connection.
    pub fn direct_peers(&self) -> impl Iterator<Item = Vmac> + '_ {
        self.direct.keys().copied()
    }

    /// Counters.
    pub const fn stats(&self) -> NodeStats {
        self.stats
    }

    /// The configuration.
    pub const fn config(&self) -> &NodeConfig {
        &self.config
    }

    /// Largest NPDU the hub (or, failing that, this node) accepts.
    pub fn max_npdu(&self) -> usize {
        let hub = self
            .hub
            .and_then(|(link, _)| self.links.get(&link))
            .and_then(|l| l.connection.as_ref())
            .and_then(|c| c.peer())
            .map(|p| p.max_npdu_length);
        usize::from(hub.unwrap_or(self.identity.max_npdu_length))
    }

    fn random(&mut self) -> u64 {
        // SplitMix64: small, fast and good enough for VMACs and jitter.
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn message_id(&mut self) -> u16 {
        let id = self.next_message_id;
        self.next_message_id = self.next_message_id.wrapping_add(1);
        id
    }

    fn event(&mut self, event: NodeEvent) {
        if self.events.len() >= MAX_QUEUED_EVENTS {
            self.events.pop_front();
        }
        self.events.push_back(event);
    }

    /// Starts connecting to the primary hub.
    pub fn start(&mut self, now: Instant) {
        if self.running {
            return;
        }
        self.running = true;
        self.start_attempt(now, HubRole::Primary);
    }

    /// Disconnects every connection gracefully and stops reconnecting.
    pub fn stop(&mut self, now: Instant) {
        self.running = false;
        self.reconnect_at = None;
        self.primary_retry_at = None;
        let ids: Vec<LinkId> = self.links.keys().copied().collect();
        for id in ids {
            match self.links.get_mut(&id).and_then(|l| l.connection.as_mut()) {
                Some(connection) => connection.disconnect(now),
                None => {
                    self.links.remove(&id);
                    self.commands.push_back(NodeCommand::Close { link: id });
                    continue;
                }
            }
            self.settle(now, id);
        }
        self.attempt = None;
    }

    fn start_attempt(&mut self, now: Instant, role: HubRole) {
        let uri = match role {
            HubRole::Primary => Some(self.config.primary_hub.clone()),
            HubRole::Failover => self.config.failover_hub.clone(),
        };
        let Some(uri) = uri.filter(|u| !u.is_empty()) else {
            self.schedule_reconnect(now);
            return;
        };
        let link = self.open_link(LinkKind::Hub(role), uri, Subprotocol::Hub);
        self.attempt = Some((link, role));
    }

    fn open_link(&mut self, kind: LinkKind, uri: String, subprotocol: Subprotocol) -> LinkId {
        let link = self.next_link;
        self.next_link += 1;
        self.links.insert(
            link,
            Link {
                kind,
                uri: uri.clone(),
                connection: None,
            },
        );
        self.commands.push_back(NodeCommand::Open {
            link,
            uri,
            subprotocol,
        });
        link
    }

    fn jittered(&mut self, delay: Duration) -> Duration {
        let fraction = (self.random() % 1000) as f64 / 4000.0;
        delay + delay.mul_f64(fraction)
    }

    fn schedule_reconnect(&mut self, now: Instant) {
        if !self.running {
            return;
        }
        let delay = self.jittered(self.backoff);
        self.reconnect_at = Some(now + delay);
        self.backoff = (self.backoff * 2).min(self.config.reconnect_max);
    }

    /// The driver opened the WebSocket of `link`: the Connect-Request goes out.
    pub fn link_opened(&mut self, now: Instant, link: LinkId) {
        let first_id = (self.random() >> 48) as u16;
        let identity = self.identity;
        let config = self.config.connection;
        let Some(entry) = self.links.get_mut(&link) else {
            self.commands.push_back(NodeCommand::Close { link });
            return;
        };
        entry.connection = Some(ScConnection::initiate(now, identity, config, first_id));
        self.settle(now, link);
    }

    /// An inbound WebSocket with subprotocol `dc.bsc.bacnet.org` was accepted (this node
    /// accepts direct connections): returns its link id.
    pub fn accept_direct(&mut self, now: Instant) -> LinkId {
        let link = self.next_link;
        self.next_link += 1;
        let first_id = (self.random() >> 48) as u16;
        self.links.insert(
            link,
            Link {
                kind: LinkKind::DirectIn,
                uri: String::new(),
                connection: Some(ScConnection::accepting(
                    now,
                    self.identity,
                    self.config.connection,
                    first_id,
                )),
            },
        );
        link
    }

    /// The WebSocket of `link` could not be opened.
    pub fn link_failed(&mut self, now: Instant, link: LinkId, reason: &str) {
        let Some(entry) = self.links.remove(&link) else {
            return;
        };
        self.after_close(now, link, entry.kind, &entry.uri, None, reason);
    }

    /// The WebSocket of `link` closed or failed.
    pub fn link_closed(&mut self, now: Instant, link: LinkId) {
        if let Some(connection) = self
            .links
            .get_mut(&link)
            .and_then(|l| l.connection.as_mut())
        {
            connection.transport_closed();
            self.settle(now, link);
        } else {
            self.link_failed(now, link, "the WebSocket closed");
        }
    }

    /// Handles one binary WebSocket message received on `link`.
    pub fn handle_message(&mut self, now: Instant, link: LinkId, bytes: &[u8]) {
        let Some(entry) = self.links.get_mut(&link) else {
            return;
        };
        let kind = entry.kind;
        let Some(connection) = entry.connection.as_mut() else {
            return;
        };
        let peer = connection.peer().map(|p| p.vmac);
        match connection.handle_message(now, bytes) {
            Handled::Done => {}
            Handled::Malformed(error) => {
                self.stats.malformed += 1;
                self.event(NodeEvent::Malformed(error));
            }
            Handled::ConnectRequest { message_id, peer } => {
                self.direct_request(now, link, message_id, peer);
            }
            Handled::Message(message) => {
                let source = match kind {
                    LinkKind::Hub(_) => self.check_from_hub(link, bytes, &message),
                    LinkKind::DirectIn | LinkKind::DirectOut(_) => peer.map(Some),
                };
                if let Some(source) = source {
                    self.on_message(link, kind, source, &message);
                }
            }
        }
        self.settle(now, link);
    }

    /// The sender of a message from a hub; `None` (after a NAK where due) when the
    /// message breaks Annex AB.5.3's addressing. `Some(None)`: from the hub itself.
    fn check_from_hub(
        &mut self,
        link: LinkId,
        bytes: &[u8],
        message: &BvlcMessage<'_>,
    ) -> Option<Option<Vmac>> {
        let wrong_destination = message
            .destination
            .is_some_and(|d| !d.is_broadcast() && d != self.identity.vmac);
        let from_hub_itself =
            message.originating.is_none() && matches!(message.payload, Payload::Result(_));
        if from_hub_itself {
            return Some(None);
        }
        if message.originating.is_some() && !wrong_destination {
            return Some(message.originating);
        }
        self.stats.malformed += 1;
        if let Ok(header) = BvlcHeader::peek(bytes)
            && !header.is_broadcast()
            && header.function.is_nak_answered()
        {
            let detail = if wrong_destination {
                "a message from a hub carries no destination but this node or broadcast"
            } else {
                "a message from a hub needs an Originating Virtual Address"
            };
            let mut out = Vec::new();
            nak_for(&header, ErrorCode::HeaderEncodingError, 0, detail, &mut out);
            self.send_frame(link, out);
        }
        None
    }

    fn on_message(
        &mut self,
        link: LinkId,
        kind: LinkKind,
        source: Option<Vmac>,
        message: &BvlcMessage<'_>,
    ) {
        let broadcast = message.destination.is_some_and(|d| d.is_broadcast());
        let function = message.function();
        let not_understood = first_not_understood(&message.destination_options)
            .or_else(|| first_not_understood(&message.data_options));
        if let Some(option) = not_understood {
            if !broadcast && function.is_nak_answered() {
                self.reply_nak(
                    link,
                    kind,
                    source,
                    message,
                    ErrorCode::HeaderNotUnderstood,
                    header_marker(&option),
                    "header option not understood",
                );
            }
            return;
        }
        match &message.payload {
            Payload::EncapsulatedNpdu(npdu) => {
                let Some(source) = source else {
                    return;
                };
                self.stats.received += 1;
                if self.deliveries.len() >= MAX_QUEUED_DELIVERIES {
                    self.deliveries.pop_front();
                    self.stats.dropped += 1;
                }
                self.deliveries.push_back(NodeDelivery {
                    source,
                    npdu: npdu.to_vec(),
                    broadcast,
                });
            }
            Payload::AddressResolution => {
                if self.config.direct_uris.is_empty() {
                    self.reply_nak(
                        link,
                        kind,
                        source,
                        message,
                        ErrorCode::OptionalFunctionalityNotSupported,
                        0,
                        "this node does not accept direct connections",
                    );
                } else {
                    let uris = self.config.direct_uris.join(" ");
                    let ack =
                        BvlcMessage::new(message.message_id, Payload::AddressResolutionAck(&uris));
                    self.reply(link, kind, source, ack);
                }
            }
            Payload::AddressResolutionAck(text) => {
                let Some(source) = source else {
                    return;
                };
                let uris: Vec<String> = text
                    .split_ascii_whitespace()
                    .take(MAX_RESOLVED_URIS)
                    .map(str::to_owned)
                    .collect();
                if self.resolving.remove(&source).is_some()
                    && let Some(uri) = uris.first().cloned()
                    && !self.direct.contains_key(&source)
                    && self.running
                {
                    self.open_link(LinkKind::DirectOut(source), uri, Subprotocol::Direct);
                }
                self.event(NodeEvent::AddressResolved { vmac: source, uris });
            }
            Payload::AdvertisementSolicitation => {
                let advertisement = Advertisement {
                    hub_status: self.status,
                    accepts_direct_connections: !self.config.direct_uris.is_empty(),
                    max_bvlc_length: self.identity.max_bvlc_length,
                    max_npdu_length: self.identity.max_npdu_length,
                };
                let id = self.message_id();
                let answer = BvlcMessage::new(id, Payload::Advertisement(advertisement));
                self.reply(link, kind, source, answer);
            }
            Payload::Advertisement(advertisement) => {
                if let Some(vmac) = source {
                    self.event(NodeEvent::Advertisement {
                        vmac,
                        advertisement: *advertisement,
                    });
                }
            }
            Payload::Result(BvlcResult {
                for_function,
                outcome:
                    ResultOutcome::Nak {
                        error_code,
                        details,
                        ..
                    },
            }) => {
                if *for_function == BvlcFunction::AddressResolution
                    && let Some(vmac) = source
                {
                    self.resolving.remove(&vmac);
                }
                self.event(NodeEvent::Nak {
                    from: source,
                    for_function: *for_function,
                    code: *error_code,
                    details: (*details).to_owned(),
                });
            }
            Payload::Result(_) => {}
            Payload::Proprietary { .. } if !broadcast => {
                self.reply_nak(
                    link,
                    kind,
                    source,
                    message,
                    ErrorCode::BvlcProprietaryFunctionUnknown,
                    0,
                    "no proprietary messages are understood here",
                );
            }
            // Connection control never reaches here (the connection handles it).
            _ => {}
        }
    }

    /// Sends `message` back to `source`: through the hub with a destination VMAC, or on the
    /// direct connection it came from without VMACs.
    fn reply(
        &mut self,
        link: LinkId,
        kind: LinkKind,
        source: Option<Vmac>,
        mut message: BvlcMessage<'_>,
    ) {
        if let LinkKind::Hub(_) = kind {
            let Some(source) = source else {
                return;
            };
            message.destination = Some(source);
        }
        self.send_frame(link, message.to_bytes());
    }

    #[allow(clippy::too_many_arguments)]
    fn reply_nak(
        &mut self,
        link: LinkId,
        kind: LinkKind,
        source: Option<Vmac>,
        message: &BvlcMessage<'_>,
        code: ErrorCode,
        marker: u8,
        details: &str,
    ) {
        let result = BvlcResult {
            for_function: message.function(),
            outcome: ResultOutcome::Nak {
                header_marker: marker,
                error_class: crate::enums::ErrorClass::Communication,
                error_code: code,
                details,
            },
        };
        let nak = BvlcMessage::new(message.message_id, Payload::Result(result));
        self.reply(link, kind, source, nak);
    }

    fn send_frame(&mut self, link: LinkId, frame: Vec<u8>) {
        let connected = self
            .links
            .get(&link)
            .and_then(|l| l.connection.as_ref())
            .is_some_and(ScConnection::is_connected);
        if connected {
            self.commands.push_back(NodeCommand::Send {
                link,
                frame: Bytes::from(frame),
            });
        }
    }

    fn direct_request(
        &mut self,
        now: Instant,
        link: LinkId,
        message_id: u16,
        peer: super::bvlc::ConnectInfo,
    ) {
        let Some(connection) = self
            .links
            .get_mut(&link)
            .and_then(|l| l.connection.as_mut())
        else {
            return;
        };
        if peer.vmac == self.identity.vmac || peer.vmac.is_broadcast() {
            connection.refuse(
                message_id,
                ErrorCode::NodeDuplicateVmac,
                "this VMAC is the accepting node's own",
            );
            return;
        }
        connection.accept(now, message_id, peer);
    }

    /// Sends an NPDU to `destination` (a VMAC), or broadcasts it (`None`): on a direct
    /// connection to the destination when there is one, else through the hub.
    pub fn send_npdu(&mut self, destination: Option<Vmac>, npdu: &[u8]) -> Result<(), SendError> {
        if let Some(vmac) = destination.filter(|d| !d.is_broadcast())
            && let Some(&link) = self.direct.get(&vmac)
        {
            let limit = self
                .links
                .get(&link)
                .and_then(|l| l.connection.as_ref())
                .and_then(|c| c.peer())
                .map_or(usize::MAX, |p| usize::from(p.max_npdu_length));
            if npdu.len() > limit {
                return Err(SendError::TooLong {
                    length: npdu.len(),
                    limit,
                });
            }
            let id = self.message_id();
            let mut frame = Vec::new();
            encode_encapsulated_npdu(&mut frame, id, None, None, npdu);
            self.stats.sent += 1;
            self.stats.sent_direct += 1;
            self.commands.push_back(NodeCommand::Send {
                link,
                frame: Bytes::from(frame),
            });
            return Ok(());
        }
        let Some((link, _)) = self.hub else {
            return Err(SendError::NotConnected);
        };
        let limit = self.max_npdu();
        if npdu.len() > limit {
            return Err(SendError::TooLong {
                length: npdu.len(),
                limit,
            });
        }
        let id = self.message_id();
        let mut frame = Vec::new();
        encode_encapsulated_npdu(
            &mut frame,
            id,
            None,
            Some(destination.unwrap_or(Vmac::BROADCAST)),
            npdu,
        );
        self.stats.sent += 1;
        self.commands.push_back(NodeCommand::Send {
            link,
            frame: Bytes::from(frame),
        });
        Ok(())
    }

    /// Asks `vmac` (through the hub) where it accepts direct connections, and connects to
    /// it when it answers. Unicasts to `vmac` then use the direct connection.
    pub fn connect_direct(&mut self, now: Instant, vmac: Vmac) -> Result<(), SendError> {
        if self.direct.contains_key(&vmac) {
            return Ok(());
        }
        let Some((link, _)) = self.hub else {
            return Err(SendError::NotConnected);
        };
        let id = self.message_id();
        let mut request = BvlcMessage::new(id, Payload::AddressResolution);
        request.destination = Some(vmac);
        self.resolving
            .insert(vmac, now + self.config.connection.connect_wait);
        self.commands.push_back(NodeCommand::Send {
            link,
            frame: Bytes::from(request.to_bytes()),
        });
        Ok(())
    }

    /// Closes the direct connection to `vmac`, if any.
    pub fn disconnect_direct(&mut self, now: Instant, vmac: Vmac) {
        if let Some(link) = self.direct.get(&vmac).copied() {
            if let Some(connection) = self
                .links
                .get_mut(&link)
                .and_then(|l| l.connection.as_mut())
            {
                connection.disconnect(now);
            }
            self.settle(now, link);
        }
    }

    /// Moves a link's queued messages out and reacts to its events.
    fn settle(&mut self, now: Instant, link: LinkId) {
        let Some(entry) = self.links.get_mut(&link) else {
            return;
        };
        let kind = entry.kind;
        let Some(connection) = entry.connection.as_mut() else {
            return;
        };
        while let Some(frame) = connection.poll_transmit() {
            self.commands.push_back(NodeCommand::Send {
                link,
                frame: Bytes::from(frame),
            });
        }
        let mut events = Vec::new();
        while let Some(event) = connection.poll_event() {
            events.push(event);
        }
        let closed = connection.state() == ConnectionState::Closed;
        for event in events {
            match event {
                ConnectionEvent::Connected(peer) => self.connected(now, link, kind, peer.vmac),
                ConnectionEvent::Closed(reason) => {
                    let Some(entry) = self.links.remove(&link) else {
                        continue;
                    };
                    self.commands.push_back(NodeCommand::Close { link });
                    let duplicate = reason == CloseReason::Refused(ErrorCode::NodeDuplicateVmac);
                    match (kind, self.attempt) {
                        // The hub refused the VMAC: take a new one and ask the same hub again.
                        (LinkKind::Hub(role), Some((attempt, _)))
                            if duplicate && attempt == link && self.running =>
                        {
                            self.attempt = None;
                            self.new_vmac();
                            self.start_attempt(now, role);
                        }
                        _ => {
                            let peer = entry
                                .connection
                                .as_ref()
                                .and_then(|c| c.peer())
                                .map(|p| p.vmac);
                            self.after_close(now, link, kind, &entry.uri, peer, &describe(reason));
                        }
                    }
                }
            }
        }
        if closed && self.links.remove(&link).is_some() {
            self.commands.push_back(NodeCommand::Close { link });
        }
    }

    fn new_vmac(&mut self) {
        let old = self.identity.vmac;
        let bytes = self.random().to_be_bytes();
        let new = Vmac::random_48([bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5]]);
        self.identity.vmac = new;
        self.event(NodeEvent::VmacChanged { old, new });
    }

    fn connected(&mut self, now: Instant, link: LinkId, kind: LinkKind, peer: Vmac) {
        match kind {
            LinkKind::Hub(role) => {
                if self.attempt.is_some_and(|(l, _)| l == link) {
                    self.attempt = None;
                }
                // Back on the primary: leave the failover hub.
                if let Some((old, _)) = self.hub.filter(|(old, _)| *old != link) {
                    if let Some(connection) =
                        self.links.get_mut(&old).and_then(|l| l.connection.as_mut())
                    {
                        connection.disconnect(now);
                    }
                    self.hub = Some((link, role));
                    self.settle(now, old);
                }
                self.hub = Some((link, role));
                self.stats.hub_connects += 1;
                self.backoff = self.config.reconnect_min;
                self.reconnect_at = None;
                self.primary_retry_at = None;
                self.status = match role {
                    HubRole::Primary => HubConnectionStatus::ConnectedToPrimaryHub,
                    HubRole::Failover => {
                        let delay = self.jittered(self.config.reconnect_min);
                        self.primary_retry_at = Some(now + delay);
                        HubConnectionStatus::ConnectedToFailoverHub
                    }
                };
                self.event(NodeEvent::HubStatus(self.status));
            }
            LinkKind::DirectOut(expected) if expected != peer => {
                // Address resolution led to another node: not the connection asked for.
                if let Some(connection) = self
                    .links
                    .get_mut(&link)
                    .and_then(|l| l.connection.as_mut())
                {
                    connection.disconnect(now);
                }
            }
            LinkKind::DirectOut(_) | LinkKind::DirectIn => {
                if let Some(old) = self.direct.insert(peer, link).filter(|old| *old != link) {
                    if let Some(connection) =
                        self.links.get_mut(&old).and_then(|l| l.connection.as_mut())
                    {
                        connection.replace();
                    }
                    self.settle(now, old);
                    self.direct.insert(peer, link);
                }
                self.event(NodeEvent::DirectConnected(peer));
            }
        }
    }

    fn after_close(
        &mut self,
        now: Instant,
        link: LinkId,
        kind: LinkKind,
        uri: &str,
        peer: Option<Vmac>,
        reason: &str,
    ) {
        match kind {
            LinkKind::Hub(role) => {
                if self.hub.is_some_and(|(l, _)| l == link) {
                    self.hub = None;
                    self.primary_retry_at = None;
                    self.status = HubConnectionStatus::NoHubConnection;
                    self.event(NodeEvent::HubStatus(self.status));
                    if self.running {
                        self.start_attempt(now, HubRole::Primary);
                    }
                } else if self.attempt.is_some_and(|(l, _)| l == link) {
                    self.attempt = None;
                    self.event(NodeEvent::HubConnectFailed {
                        role,
                        uri: uri.to_owned(),
                        reason: reason.to_owned(),
                    });
                    if !self.running {
                        return;
                    }
                    if self.hub.is_some() {
                        // A probe of the primary while on the failover hub.
                        let delay = self.jittered(self.backoff);
                        self.primary_retry_at = Some(now + delay);
                        self.backoff = (self.backoff * 2).min(self.config.reconnect_max);
                    } else if role == HubRole::Primary && self.config.failover_hub.is_some() {
                        self.start_attempt(now, HubRole::Failover);
                    } else {
                        self.schedule_reconnect(now);
                    }
                }
            }
            LinkKind::DirectOut(expected) => {
                if self.direct.get(&expected) == Some(&link) {
                    self.direct.remove(&expected);
                    self.event(NodeEvent::DirectDisconnected(expected));
                }
            }
            LinkKind::DirectIn => {
                if let Some(peer) = peer
                    && self.direct.get(&peer) == Some(&link)
                {
                    self.direct.remove(&peer);
                    self.event(NodeEvent::DirectDisconnected(peer));
                }
            }
        }
    }

    /// When [`Self::handle_timeout`] should next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let links = self
            .links
            .values()
            .filter_map(|l| l.connection.as_ref()?.poll_timeout());
        links
            .chain(self.reconnect_at)
            .chain(self.primary_retry_at.filter(|_| self.attempt.is_none()))
            .chain(self.resolving.values().copied())
            .min()
    }

    /// Handles the deadlines due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        let due: Vec<LinkId> = self
            .links
            .iter()
            .filter(|(_, l)| {
                l.connection
                    .as_ref()
                    .and_then(ScConnection::poll_timeout)
                    .is_some_and(|t| t <= now)
            })
            .map(|(id, _)| *id)
            .collect();
        for link in due {
            if let Some(connection) = self
                .links
                .get_mut(&link)
                .and_then(|l| l.connection.as_mut())
            {
                connection.handle_timeout(now);
            }
            self.settle(now, link);
        }
        if self.reconnect_at.is_some_and(|t| t <= now) {
            self.reconnect_at = None;
            if self.running && self.hub.is_none() && self.attempt.is_none() {
                self.start_attempt(now, HubRole::Primary);
            }
        }
        if self.attempt.is_none() && self.primary_retry_at.is_some_and(|t| t <= now) {
            self.primary_retry_at = None;
            if self.running && self.hub.is_some_and(|(_, r)| r == HubRole::Failover) {
                self.start_attempt(now, HubRole::Primary);
            }
        }
        self.resolving.retain(|_, until| *until > now);
    }

    /// The next thing for the driver to do.
    pub fn poll_command(&mut self) -> Option<NodeCommand> {
        self.commands.pop_front()
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<NodeEvent> {
        self.events.pop_front()
    }

    /// The next NPDU received.
    pub fn poll_delivery(&mut self) -> Option<NodeDelivery> {
        self.deliveries.pop_front()
    }
}

fn describe(reason: CloseReason) -> String {
    match reason {
        CloseReason::LocalDisconnect => "disconnected by this node".to_owned(),
        CloseReason::PeerDisconnect => "the peer disconnected".to_owned(),
        CloseReason::ConnectTimeout => "no Connect-Accept in time".to_owned(),
        CloseReason::Refused(code) => format!("Connect-Request refused: {code}"),
        CloseReason::RefusedPeer(code) => format!("refused the peer: {code}"),
        CloseReason::HeartbeatTimeout => "no message within the heartbeat timeout".to_owned(),
        CloseReason::TransportClosed => "the WebSocket closed".to_owned(),
        CloseReason::Replaced => "replaced by a newer connection".to_owned(),
    }
}
