//! The BACnet/SC hub function (Annex AB.5.3), sans-IO: it accepts hub connections, keeps
//! the table of connected nodes by VMAC and device UUID, and relays every message that
//! carries a destination VMAC: a unicast to that node, a broadcast to every other node.
//!
//! The driver reports WebSocket connections opening and closing and the binary messages
//! they carry; the hub answers with frames to send on given connections (a broadcast is one
//! shared buffer, so relaying to a thousand nodes copies nothing), connections to close,
//! events for logs and the next deadline.
//!
//! Decisions where the annex leaves room or other implementations differ, recorded here:
//! - **Originating VMAC from a node.** Annex AB.5.3 says a node's message to its hub carries
//!   no Originating Virtual Address and that the hub adds it when relaying. Some nodes
//!   (bac-py 1.5) send one anyway. Refusing those messages (bacnet-stack NAKs them with
//!   HEADER_ENCODING_ERROR) would cut such nodes off entirely, and trusting the value would
//!   let any node impersonate another. This hub accepts the message and **replaces** the
//!   claimed VMAC with the VMAC the connection registered in its Connect-Request, so a
//!   relayed message always names its real sender; each such connection is reported once
//!   ([`HubEvent::OriginatingVmacReplaced`]) and counted in [`HubStats`].
//! - A message with no destination VMAC is for the hub function itself, which has nothing
//!   to do with it: a unicast request gets a NAK (HEADER_ENCODING_ERROR), anything else is
//!   dropped. A unicast to a VMAC that is not connected is dropped and counted.
//! - Connect-Request with a VMAC already used by another device UUID (or the hub's own) is
//!   refused with NODE_DUPLICATE_VMAC; with the UUID of a connected device, the new
//!   connection is accepted and the old one disconnected (Annex AB.6.2.3).
//! - More connections than [`HubConfig::max_connections`] are refused before any handshake.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::time::Instant;

use bytes::Bytes;

use super::bvlc::{BvlcHeader, BvlcMessage, ScDecodeError, nak_for, relay_rewrite};
use super::connection::{
    CloseReason, ConnectionConfig, ConnectionEvent, ConnectionState, Handled, LocalIdentity,
    ScConnection,
};
use super::vmac::{DeviceUuid, Vmac};
use crate::enums::ErrorCode;

/// Identifies one WebSocket connection of the hub (never reused).
pub type ConnectionId = u64;

/// Most events kept until the driver takes them; older ones are dropped past this.
pub const MAX_QUEUED_EVENTS: usize = 4096;

/// How the hub presents itself and what it allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HubConfig {
    /// The hub function's VMAC, UUID and limits (sent in Connect-Accept).
    pub identity: LocalIdentity,
    /// Handshake, heartbeat and disconnect timeouts.
    pub connection: ConnectionConfig,
    /// Most simultaneous connections (handshaking ones included).
    pub max_connections: usize,
}

impl HubConfig {
    /// A hub with the given VMAC and UUID, 1600-octet BVLC and 1497-octet NPDU limits, the
    /// annex's default timeouts and room for 10,000 connections.
    pub fn new(vmac: Vmac, uuid: DeviceUuid) -> Self {
        Self {
            identity: LocalIdentity {
                vmac,
                uuid,
                max_bvlc_length: super::DEFAULT_MAX_BVLC_LENGTH,
                max_npdu_length: super::DEFAULT_MAX_NPDU_LENGTH,
            },
            connection: ConnectionConfig::default(),
            max_connections: 10_000,
        }
    }
}

/// What the driver must do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HubOutput {
    /// Send this binary message on the connection.
    Send {
        /// The connection.
        connection: ConnectionId,
        /// The message (shared between the copies of a broadcast).
        frame: Bytes,
    },
    /// Close the connection's WebSocket after sending what was queued before.
    Close {
        /// The connection.
        connection: ConnectionId,
    },
}

/// Things worth a log line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HubEvent {
    /// A node completed the handshake.
    NodeConnected {
        /// Its connection.
        connection: ConnectionId,
        /// Its VMAC.
        vmac: Vmac,
        /// Its device UUID.
        uuid: DeviceUuid,
    },
    /// A node's connection ended.
    NodeDisconnected {
        /// Its connection.
        connection: ConnectionId,
        /// Its VMAC, if it had completed the handshake.
        vmac: Option<Vmac>,
        /// Why.
        reason: CloseReason,
    },
    /// A Connect-Request was refused because its VMAC is in use by another device.
    DuplicateVmacRefused {
        /// The connection.
        connection: ConnectionId,
        /// The VMAC asked for.
        vmac: Vmac,
        /// The device that asked.
        uuid: DeviceUuid,
    },
    /// A node sent an Originating Virtual Address to its hub (Annex AB.5.3 says it must
    /// not); the hub replaced it with the node's registered VMAC. Reported once per
    /// connection.
    OriginatingVmacReplaced {
        /// The connection.
        connection: ConnectionId,
        /// The VMAC the node put in the message.
        claimed: Vmac,
        /// The node's registered VMAC, used instead.
        registered: Vmac,
    },
    /// A message did not decode.
    Malformed {
        /// The connection.
        connection: ConnectionId,
        /// What was wrong.
        error: ScDecodeError,
    },
}

/// Counters of the hub.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HubStats {
    /// Connections that completed the handshake.
    pub accepted: u64,
    /// Connections refused: duplicate VMAC.
    pub duplicate_vmac: u64,
    /// Connections refused before the handshake: too many connections.
    pub over_capacity: u64,
    /// Unicast messages relayed.
    pub unicast_relayed: u64,
    /// Broadcast messages received for relaying.
    pub broadcast_relayed: u64,
    /// Copies of broadcast messages sent.
    pub broadcast_copies: u64,
    /// Unicast messages for a VMAC that is not connected (dropped).
    pub unknown_destination: u64,
    /// Messages with no destination VMAC (for the hub itself; dropped or NAKed).
    pub no_destination: u64,
    /// Messages whose Originating Virtual Address was replaced (non-conforming senders).
    pub originating_replaced: u64,
    /// Messages that did not decode.
    pub malformed: u64,
}

#[derive(Debug)]
struct HubConnection {
    connection: ScConnection,
    /// The deadline this connection is filed under in `timers`.
    timer: Option<Instant>,
    /// True once an `OriginatingVmacReplaced` event was reported.
    reported_originating: bool,
}

/// The hub function.
#[derive(Debug)]
pub struct Hub {
    config: HubConfig,
    connections: HashMap<ConnectionId, HubConnection>,
    by_vmac: HashMap<Vmac, ConnectionId>,
    by_uuid: HashMap<DeviceUuid, ConnectionId>,
    timers: BTreeSet<(Instant, ConnectionId)>,
    next_connection: ConnectionId,
    next_message_id: u16,
    outputs: VecDeque<HubOutput>,
    events: VecDeque<HubEvent>,
    stats: HubStats,
}

impl Hub {
    /// A hub with no connections; `first_message_id` seeds the ids of its own requests.
    pub fn new(config: HubConfig, first_message_id: u16) -> Self {
        Self {
            config,
            connections: HashMap::new(),
            by_vmac: HashMap::new(),
            by_uuid: HashMap::new(),
            timers: BTreeSet::new(),
            next_connection: 1,
            next_message_id: first_message_id,
            outputs: VecDeque::new(),
            events: VecDeque::new(),
            stats: HubStats::default(),
        }
    }

    /// The configuration.
    pub const fn config(&self) -> &HubConfig {
        &self.config
    }

    /// Counters.
    pub const fn stats(&self) -> HubStats {
        self.stats
    }

    /// Open connections (handshaking ones included).
    pub fn connection_count(&self) -> usize {
        self.connections.len()
    }

    /// Connected nodes (handshake completed).
    pub fn node_count(&self) -> usize {
        self.by_vmac.len()
    }

    /// The VMACs of the connected nodes.
    pub fn nodes(&self) -> impl Iterator<Item = Vmac> + '_ {
        self.by_vmac.keys().copied()
    }

    /// A WebSocket connection (subprotocol `hub.bsc.bacnet.org`) opened at `now`; `None`
    /// when the hub is full and the driver must close it.
    pub fn open_connection(&mut self, now: Instant) -> Option<ConnectionId> {
        if self.connections.len() >= self.config.max_connections {
            self.stats.over_capacity += 1;
            return None;
        }
        let id = self.next_connection;
        self.next_connection += 1;
        let first_id = self.next_message_id;
        self.next_message_id = self.next_message_id.wrapping_add(0x100);
        let connection =
            ScConnection::accepting(now, self.config.identity, self.config.connection, first_id);
        self.connections.insert(
            id,
            HubConnection {
                connection,
                timer: None,
                reported_originating: false,
            },
        );
        self.reschedule(id);
        Some(id)
    }

    /// The WebSocket of `id` closed (or failed): the node leaves the table.
    pub fn connection_closed(&mut self, id: ConnectionId) {
        if let Some(entry) = self.connections.get_mut(&id) {
            entry.connection.transport_closed();
        }
        self.settle(id);
    }

    /// Disconnects every node (Disconnect-Request), as a hub does when it stops.
    pub fn shutdown(&mut self, now: Instant) {
        let ids: Vec<ConnectionId> = self.connections.keys().copied().collect();
        for id in ids {
            if let Some(entry) = self.connections.get_mut(&id) {
                entry.connection.disconnect(now);
            }
            self.settle(id);
        }
    }

    /// Handles one binary WebSocket message received on `id` at `now`.
    pub fn handle_message(&mut self, now: Instant, id: ConnectionId, bytes: &[u8]) {
        let Some(entry) = self.connections.get_mut(&id) else {
            return;
        };
        match entry.connection.handle_message(now, bytes) {
            Handled::Done => {}
            Handled::Malformed(error) => {
                self.stats.malformed += 1;
                self.event(HubEvent::Malformed {
                    connection: id,
                    error,
                });
            }
            Handled::ConnectRequest { message_id, peer } => {
                self.connect_request(now, id, message_id, peer.vmac, peer.uuid, peer);
            }
            Handled::Message(message) => {
                let sender = entry.connection.peer().map(|p| p.vmac);
                if let Some(sender) = sender {
                    self.relay(id, sender, bytes, &message);
                }
            }
        }
        self.settle(id);
    }

    fn connect_request(
        &mut self,
        now: Instant,
        id: ConnectionId,
        message_id: u16,
        vmac: Vmac,
        uuid: DeviceUuid,
        peer: super::bvlc::ConnectInfo,
    ) {
        let same_device = self
            .by_uuid
            .get(&uuid)
            .copied()
            .filter(|other| *other != id);
        let vmac_owner = self
            .by_vmac
            .get(&vmac)
            .copied()
            .filter(|other| *other != id);
        let vmac_taken_by_other = vmac_owner.is_some_and(|owner| Some(owner) != same_device);
        if vmac == self.config.identity.vmac || vmac_taken_by_other || vmac.is_broadcast() {
            self.stats.duplicate_vmac += 1;
            if let Some(entry) = self.connections.get_mut(&id) {
                entry.connection.refuse(
                    message_id,
                    ErrorCode::NodeDuplicateVmac,
                    "this VMAC is in use on this hub by another device",
                );
            }
            self.event(HubEvent::DuplicateVmacRefused {
                connection: id,
                vmac,
                uuid,
            });
            return;
        }
        // The same device reconnecting (same UUID): the new connection wins.
        if let Some(old) = same_device {
            if let Some(entry) = self.connections.get_mut(&old) {
                entry.connection.replace();
            }
            self.settle(old);
        }
        if let Some(entry) = self.connections.get_mut(&id) {
            entry.connection.accept(now, message_id, peer);
        }
    }

    fn relay(&mut self, from: ConnectionId, sender: Vmac, bytes: &[u8], message: &BvlcMessage<'_>) {
        let Ok(header) = BvlcHeader::peek(bytes) else {
            return;
        };
        if let Some(claimed) = header.originating {
            self.stats.originating_replaced += 1;
            if let Some(entry) = self.connections.get_mut(&from)
                && !entry.reported_originating
            {
                entry.reported_originating = true;
                self.event(HubEvent::OriginatingVmacReplaced {
                    connection: from,
                    claimed,
                    registered: sender,
                });
            }
        }
        let Some(destination) = header.destination else {
            self.stats.no_destination += 1;
            if message.function().is_nak_answered() {
                let mut out = Vec::new();
                nak_for(
                    &header,
                    ErrorCode::HeaderEncodingError,
                    0,
                    "a message to a hub needs a Destination Virtual Address",
                    &mut out,
                );
                self.outputs.push_back(HubOutput::Send {
                    connection: from,
                    frame: Bytes::from(out),
                });
            }
            return;
        };
        let frame = Bytes::from(relay_rewrite(bytes, &header, sender));
        if destination.is_broadcast() {
            self.stats.broadcast_relayed += 1;
            for (vmac, id) in &self.by_vmac {
                if *id != from && *vmac != sender {
                    self.stats.broadcast_copies += 1;
                    self.outputs.push_back(HubOutput::Send {
                        connection: *id,
                        frame: frame.clone(),
                    });
                }
            }
            return;
        }
        match self.by_vmac.get(&destination) {
            Some(target) => {
                self.stats.unicast_relayed += 1;
                self.outputs.push_back(HubOutput::Send {
                    connection: *target,
                    frame,
                });
            }
            None => self.stats.unknown_destination += 1,
        }
    }

    /// Moves a connection's queued messages and events out, updates the tables and
    /// forgets it once closed.
    fn settle(&mut self, id: ConnectionId) {
        let Some(entry) = self.connections.get_mut(&id) else {
            return;
        };
        while let Some(frame) = entry.connection.poll_transmit() {
            self.outputs.push_back(HubOutput::Send {
                connection: id,
                frame: Bytes::from(frame),
            });
        }
        let mut events = Vec::new();
        while let Some(event) = entry.connection.poll_event() {
            events.push(event);
        }
        let peer = entry.connection.peer().copied();
        let closed = entry.connection.state() == ConnectionState::Closed;
        for event in events {
            match event {
                ConnectionEvent::Connected(info) => {
                    self.stats.accepted += 1;
                    self.by_vmac.insert(info.vmac, id);
                    self.by_uuid.insert(info.uuid, id);
                    self.event(HubEvent::NodeConnected {
                        connection: id,
                        vmac: info.vmac,
                        uuid: info.uuid,
                    });
                }
                ConnectionEvent::Closed(reason) => {
                    let vmac = peer.map(|p| p.vmac);
                    if let Some(peer) = peer {
                        if self.by_vmac.get(&peer.vmac) == Some(&id) {
                            self.by_vmac.remove(&peer.vmac);
                        }
                        if self.by_uuid.get(&peer.uuid) == Some(&id) {
                            self.by_uuid.remove(&peer.uuid);
                        }
                    }
                    if !matches!(reason, CloseReason::RefusedPeer(_)) {
                        self.event(HubEvent::NodeDisconnected {
                            connection: id,
                            vmac: vmac.filter(|_| !matches!(reason, CloseReason::ConnectTimeout)),
                            reason,
                        });
                    }
                }
            }
        }
        if closed {
            if let Some(entry) = self.connections.remove(&id)
                && let Some(at) = entry.timer
            {
                self.timers.remove(&(at, id));
            }
            self.outputs.push_back(HubOutput::Close { connection: id });
        } else {
            self.reschedule(id);
        }
    }

    /// Files the connection under its deadline when that moved earlier (a later deadline
    /// is found when the earlier one fires, which keeps the common path, a message that
    /// pushes the heartbeat deadline back, free of tree updates).
    fn reschedule(&mut self, id: ConnectionId) {
        let Some(entry) = self.connections.get_mut(&id) else {
            return;
        };
        let due = entry.connection.poll_timeout();
        match (entry.timer, due) {
            (Some(filed), Some(due)) if filed <= due => {}
            (filed, due) => {
                if let Some(at) = filed {
                    self.timers.remove(&(at, id));
                }
                entry.timer = due;
                if let Some(at) = due {
                    self.timers.insert((at, id));
                }
            }
        }
    }

    /// When [`Self::handle_timeout`] should next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timers.first().map(|(at, _)| *at)
    }

    /// Handles the deadlines due at `now` (handshake and disconnect waits, heartbeat
    /// silence).
    pub fn handle_timeout(&mut self, now: Instant) {
        while let Some(&(at, id)) = self.timers.first() {
            if at > now {
                break;
            }
            self.timers.remove(&(at, id));
            let Some(entry) = self.connections.get_mut(&id) else {
                continue;
            };
            entry.timer = None;
            entry.connection.handle_timeout(now);
            self.settle(id);
        }
    }

    /// The next frame to send or connection to close.
    pub fn poll_output(&mut self) -> Option<HubOutput> {
        self.outputs.pop_front()
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<HubEvent> {
        self.events.pop_front()
    }

    fn event(&mut self, event: HubEvent) {
        if self.events.len() >= MAX_QUEUED_EVENTS {
            self.events.pop_front();
        }
        self.events.push_back(event);
    }
}
