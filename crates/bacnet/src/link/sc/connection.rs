//! One BACnet/SC connection (Annex AB.6): the Connect-Request / Connect-Accept handshake,
//! heartbeats, and the Disconnect-Request / Disconnect-ACK close, for the initiating peer
//! (a node's hub connector or direct connection) and the accepting peer (a hub function or
//! a node accepting direct connections). Sans-IO: WebSocket messages and the time go in;
//! messages to send, events and the next deadline come out.
//!
//! Decisions where the annex leaves room, recorded here:
//! - Messages other than Connect-Request (accepting peer) or Connect-Accept and its NAK
//!   (initiating peer) that arrive before the connection is established are discarded; the
//!   connect wait timeout then closes a peer that never completes the handshake.
//! - The accepting peer closes a connection on which nothing arrived for twice the heartbeat
//!   timeout; the initiating peer sends a Heartbeat-Request after one heartbeat timeout of
//!   silence and closes the connection when another heartbeat timeout passes without any
//!   message (so a node notices a dead hub and fails over).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::bvlc::{
    BvlcFunction, BvlcHeader, BvlcMessage, BvlcResult, ConnectInfo, Payload, ResultOutcome,
    ScDecodeError, first_not_understood, header_marker, nak_for,
};
use super::vmac::{DeviceUuid, Vmac};
use crate::enums::ErrorCode;

/// Timeouts of a connection (Annex AB.6.2; defaults are the annex's recommended values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionConfig {
    /// How long to wait for Connect-Accept (initiating) or Connect-Request (accepting).
    pub connect_wait: Duration,
    /// How long to wait for Disconnect-ACK before closing anyway.
    pub disconnect_wait: Duration,
    /// Silence after which the initiating peer sends a Heartbeat-Request; the accepting
    /// peer closes after twice this.
    pub heartbeat: Duration,
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        Self {
            connect_wait: Duration::from_secs(10),
            disconnect_wait: Duration::from_secs(10),
            heartbeat: Duration::from_secs(300),
        }
    }
}

/// What a node or hub says about itself in Connect-Request / Connect-Accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalIdentity {
    /// Its VMAC.
    pub vmac: Vmac,
    /// Its device UUID.
    pub uuid: DeviceUuid,
    /// Largest BVLC message it accepts.
    pub max_bvlc_length: u16,
    /// Largest NPDU it accepts.
    pub max_npdu_length: u16,
}

impl LocalIdentity {
    /// As a Connect-Request / Connect-Accept payload.
    pub const fn connect_info(&self) -> ConnectInfo {
        ConnectInfo {
            vmac: self.vmac,
            uuid: self.uuid,
            max_bvlc_length: self.max_bvlc_length,
            max_npdu_length: self.max_npdu_length,
        }
    }
}

/// Which side opened the WebSocket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// This side sent Connect-Request.
    Initiating,
    /// This side waits for Connect-Request.
    Accepting,
}

/// Connection state (Figures AB-11 and AB-12; IDLE is [`Self::Closed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionState {
    /// Initiating peer: Connect-Request sent.
    AwaitingAccept,
    /// Accepting peer: waiting for Connect-Request.
    AwaitingRequest,
    /// Handshake done: data flows.
    Connected,
    /// Disconnect-Request sent, waiting for Disconnect-ACK.
    Disconnecting,
    /// Finished; the WebSocket is to be closed once the queued messages are sent.
    Closed,
}

/// Why a connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseReason {
    /// This side asked (Disconnect-Request answered, or not answered in time).
    LocalDisconnect,
    /// The peer sent Disconnect-Request.
    PeerDisconnect,
    /// No Connect-Accept / Connect-Request within the connect wait timeout.
    ConnectTimeout,
    /// The peer refused the Connect-Request with a NAK of this code (NODE_DUPLICATE_VMAC
    /// when the VMAC is taken).
    Refused(ErrorCode),
    /// This side (a hub or a node accepting direct connections) refused the peer.
    RefusedPeer(ErrorCode),
    /// Nothing received for too long (heartbeat timeout).
    HeartbeatTimeout,
    /// The WebSocket closed or failed under the connection.
    TransportClosed,
    /// Replaced by a newer connection from the same device (same UUID).
    Replaced,
}

/// What the connection tells its owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionEvent {
    /// The handshake completed; the peer's Connect-Request / Connect-Accept parameters.
    Connected(ConnectInfo),
    /// The connection ended.
    Closed(CloseReason),
}

/// The result of one received message.
#[derive(Debug)]
pub enum Handled<'a> {
    /// Consumed by the connection (handshake, heartbeat, disconnect) or discarded.
    Done,
    /// A valid message for the owner (Encapsulated-NPDU, address resolution, results...).
    Message(BvlcMessage<'a>),
    /// Accepting peer: a Connect-Request the owner must accept ([`ScConnection::accept`])
    /// or refuse ([`ScConnection::refuse`]).
    ConnectRequest {
        /// Its message id (the answer carries it back).
        message_id: u16,
        /// The initiating peer's VMAC, UUID and limits.
        peer: ConnectInfo,
    },
    /// The message did not decode; a NAK was queued when the annex asks for one.
    Malformed(ScDecodeError),
}

/// One BACnet/SC connection, either side.
#[derive(Debug)]
pub struct ScConnection {
    role: Role,
    state: ConnectionState,
    local: LocalIdentity,
    config: ConnectionConfig,
    peer: Option<ConnectInfo>,
    next_message_id: u16,
    /// The message id of our Connect-Request or Disconnect-Request.
    pending_id: u16,
    /// When the current state's timer started (handshake, disconnect).
    state_since: Instant,
    last_received: Instant,
    heartbeat_sent: Option<Instant>,
    transmits: VecDeque<Vec<u8>>,
    events: VecDeque<ConnectionEvent>,
}

impl ScConnection {
    /// An initiating connection on a WebSocket that just opened: queues the Connect-Request.
    pub fn initiate(
        now: Instant,
        local: LocalIdentity,
        config: ConnectionConfig,
        first_message_id: u16,
    ) -> Self {
        let mut connection = Self::new(now, Role::Initiating, local, config, first_message_id);
        connection.state = ConnectionState::AwaitingAccept;
        let id = connection.next_id();
        connection.pending_id = id;
        connection.queue(&BvlcMessage::new(
            id,
            Payload::ConnectRequest(local.connect_info()),
        ));
        connection
    }

    /// An accepting connection on a WebSocket that just opened: waits for Connect-Request.
    pub fn accepting(
        now: Instant,
        local: LocalIdentity,
        config: ConnectionConfig,
        first_message_id: u16,
    ) -> Self {
        let mut connection = Self::new(now, Role::Accepting, local, config, first_message_id);
        connection.state = ConnectionState::AwaitingRequest;
        connection
    }

    fn new(
        now: Instant,
        role: Role,
        local: LocalIdentity,
        config: ConnectionConfig,
        first_message_id: u16,
    ) -> Self {
        Self {
            role,
            state: ConnectionState::Closed,
            local,
            config,
            peer: None,
            next_message_id: first_message_id,
            pending_id: 0,
            state_since: now,
            last_received: now,
            heartbeat_sent: None,
            transmits: VecDeque::new(),
            events: VecDeque::new(),
        }
    }

    /// Which side this is.
    pub const fn role(&self) -> Role {
        self.role
    }

    /// The current state.
    pub const fn state(&self) -> ConnectionState {
        self.state
    }

    /// The peer's VMAC, UUID and limits, once known.
    pub const fn peer(&self) -> Option<&ConnectInfo> {
        self.peer.as_ref()
    }

    /// True once the handshake completed and until the connection starts closing.
    pub fn is_connected(&self) -> bool {
        self.state == ConnectionState::Connected
    }

    /// Changes the VMAC this side announces (before a new Connect-Request).
    pub fn set_local_vmac(&mut self, vmac: Vmac) {
        self.local.vmac = vmac;
    }

    fn next_id(&mut self) -> u16 {
        let id = self.next_message_id;
        self.next_message_id = self.next_message_id.wrapping_add(1);
        id
    }

    fn queue(&mut self, message: &BvlcMessage<'_>) {
        self.transmits.push_back(message.to_bytes());
    }

    fn close(&mut self, reason: CloseReason) {
        if self.state != ConnectionState::Closed {
            self.state = ConnectionState::Closed;
            self.events.push_back(ConnectionEvent::Closed(reason));
        }
    }

    /// Handles one WebSocket binary message received at `now`.
    pub fn handle_message<'a>(&mut self, now: Instant, bytes: &'a [u8]) -> Handled<'a> {
        if self.state == ConnectionState::Closed {
            return Handled::Done;
        }
        let message = match BvlcMessage::decode(bytes) {
            Ok(message) => message,
            Err(error) => {
                if self.state == ConnectionState::Connected {
                    self.nak_malformed(bytes, &error);
                }
                return Handled::Malformed(error);
            }
        };
        // Every valid message restarts the heartbeat timer.
        self.last_received = now;
        self.heartbeat_sent = None;
        match self.state {
            ConnectionState::AwaitingAccept => self.awaiting_accept(now, message),
            ConnectionState::AwaitingRequest => match message.payload {
                Payload::ConnectRequest(peer) => Handled::ConnectRequest {
                    message_id: message.message_id,
                    peer,
                },
                _ => Handled::Done,
            },
            ConnectionState::Connected => self.connected(message),
            ConnectionState::Disconnecting => {
                match message.payload {
                    Payload::DisconnectAck => self.close(CloseReason::LocalDisconnect),
                    Payload::Result(BvlcResult {
                        for_function: BvlcFunction::DisconnectRequest,
                        ..
                    }) => self.close(CloseReason::LocalDisconnect),
                    Payload::DisconnectRequest => self.peer_disconnects(message.message_id),
                    _ => {}
                }
                Handled::Done
            }
            ConnectionState::Closed => Handled::Done,
        }
    }

    fn awaiting_accept<'a>(&mut self, now: Instant, message: BvlcMessage<'a>) -> Handled<'a> {
        match message.payload {
            Payload::ConnectAccept(peer) if message.message_id == self.pending_id => {
                self.peer = Some(peer);
                self.state = ConnectionState::Connected;
                self.state_since = now;
                self.events.push_back(ConnectionEvent::Connected(peer));
            }
            Payload::Result(BvlcResult {
                for_function: BvlcFunction::ConnectRequest,
                outcome: ResultOutcome::Nak { error_code, .. },
            }) => self.close(CloseReason::Refused(error_code)),
            _ => {}
        }
        Handled::Done
    }

    fn connected<'a>(&mut self, message: BvlcMessage<'a>) -> Handled<'a> {
        let control = matches!(
            message.payload,
            Payload::HeartbeatRequest
                | Payload::HeartbeatAck
                | Payload::DisconnectRequest
                | Payload::DisconnectAck
                | Payload::ConnectRequest(_)
                | Payload::ConnectAccept(_)
        );
        if !control {
            return Handled::Message(message);
        }
        // Connection-control messages are for this side: options it must understand but
        // does not are refused (Annex AB.2.3).
        if let Some(option) = first_not_understood(&message.destination_options) {
            if message.function().is_nak_answered() {
                let header = BvlcHeader {
                    function: message.function(),
                    flags: 0,
                    message_id: message.message_id,
                    originating: None,
                    destination: None,
                    rest_offset: 0,
                };
                let mut out = Vec::new();
                nak_for(
                    &header,
                    ErrorCode::HeaderNotUnderstood,
                    header_marker(&option),
                    "header option not understood",
                    &mut out,
                );
                self.transmits.push_back(out);
            }
            return Handled::Done;
        }
        match message.payload {
            Payload::HeartbeatRequest => {
                self.queue(&BvlcMessage::new(message.message_id, Payload::HeartbeatAck));
            }
            Payload::DisconnectRequest => self.peer_disconnects(message.message_id),
            // Heartbeat-ACK only restarts the timer (done above); a stray Disconnect-ACK or
            // a second handshake message on an established connection is discarded.
            _ => {}
        }
        Handled::Done
    }

    /// Queues the BVLC-Result NAK the annex asks for when a message cannot be decoded: only
    /// for unicast requests, never for responses or messages shorter than four octets.
    fn nak_malformed(&mut self, bytes: &[u8], error: &ScDecodeError) {
        if !error.answerable {
            return;
        }
        let Ok(header) = BvlcHeader::peek(bytes) else {
            return;
        };
        if header.is_broadcast() || !header.function.is_nak_answered() {
            return;
        }
        let mut out = Vec::new();
        nak_for(&header, error.code, 0, error.detail, &mut out);
        self.transmits.push_back(out);
    }

    /// The peer sent Disconnect-Request: acknowledge it and close.
    fn peer_disconnects(&mut self, message_id: u16) {
        self.queue(&BvlcMessage::new(message_id, Payload::DisconnectAck));
        self.close(CloseReason::PeerDisconnect);
    }

    /// Accepting peer: answers the Connect-Request with Connect-Accept; the connection is
    /// established.
    pub fn accept(&mut self, now: Instant, message_id: u16, peer: ConnectInfo) {
        if self.state != ConnectionState::AwaitingRequest {
            return;
        }
        self.queue(&BvlcMessage::new(
            message_id,
            Payload::ConnectAccept(self.local.connect_info()),
        ));
        self.peer = Some(peer);
        self.state = ConnectionState::Connected;
        self.state_since = now;
        self.last_received = now;
        self.events.push_back(ConnectionEvent::Connected(peer));
    }

    /// Accepting peer: refuses the Connect-Request with a NAK of `code`
    /// (NODE_DUPLICATE_VMAC for a VMAC in use) and closes.
    pub fn refuse(&mut self, message_id: u16, code: ErrorCode, details: &str) {
        let result = BvlcResult::nak(BvlcFunction::ConnectRequest, code, details);
        self.queue(&BvlcMessage::new(message_id, Payload::Result(result)));
        self.close(CloseReason::RefusedPeer(code));
    }

    /// Starts a graceful close: Disconnect-Request, then Disconnect-ACK (or the disconnect
    /// wait timeout). A connection not yet established is simply closed.
    pub fn disconnect(&mut self, now: Instant) {
        match self.state {
            ConnectionState::Connected => {
                let id = self.next_id();
                self.pending_id = id;
                self.queue(&BvlcMessage::new(id, Payload::DisconnectRequest));
                self.state = ConnectionState::Disconnecting;
                self.state_since = now;
            }
            ConnectionState::Disconnecting | ConnectionState::Closed => {}
            ConnectionState::AwaitingAccept | ConnectionState::AwaitingRequest => {
                self.close(CloseReason::LocalDisconnect);
            }
        }
    }

    /// The WebSocket under the connection closed or failed.
    pub fn transport_closed(&mut self) {
        self.close(CloseReason::TransportClosed);
    }

    /// Closes the connection because a newer one from the same device replaced it: a
    /// Disconnect-Request is sent (best effort) and the connection ends.
    pub fn replace(&mut self) {
        if self.state == ConnectionState::Connected {
            let id = self.next_id();
            self.queue(&BvlcMessage::new(id, Payload::DisconnectRequest));
        }
        self.close(CloseReason::Replaced);
    }

    /// Queues an already encoded message; false when the connection is not established.
    pub fn send(&mut self, frame: Vec<u8>) -> bool {
        if self.state != ConnectionState::Connected {
            return false;
        }
        self.transmits.push_back(frame);
        true
    }

    /// When [`Self::handle_timeout`] should next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self.state {
            ConnectionState::AwaitingAccept | ConnectionState::AwaitingRequest => {
                Some(self.state_since + self.config.connect_wait)
            }
            ConnectionState::Disconnecting => Some(self.state_since + self.config.disconnect_wait),
            ConnectionState::Connected => Some(match (self.role, self.heartbeat_sent) {
                (Role::Accepting, _) => self.last_received + self.config.heartbeat * 2,
                (Role::Initiating, None) => self.last_received + self.config.heartbeat,
                (Role::Initiating, Some(sent)) => sent + self.config.heartbeat,
            }),
            ConnectionState::Closed => None,
        }
    }

    /// Handles the deadlines due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        let Some(due) = self.poll_timeout() else {
            return;
        };
        if now < due {
            return;
        }
        match self.state {
            ConnectionState::AwaitingAccept | ConnectionState::AwaitingRequest => {
                self.close(CloseReason::ConnectTimeout);
            }
            ConnectionState::Disconnecting => self.close(CloseReason::LocalDisconnect),
            ConnectionState::Connected => match (self.role, self.heartbeat_sent) {
                (Role::Initiating, None) => {
                    let id = self.next_id();
                    self.queue(&BvlcMessage::new(id, Payload::HeartbeatRequest));
                    self.heartbeat_sent = Some(now);
                }
                _ => self.close(CloseReason::HeartbeatTimeout),
            },
            ConnectionState::Closed => {}
        }
    }

    /// The next message to send.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.transmits.pop_front()
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<ConnectionEvent> {
        self.events.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(last: u8) -> LocalIdentity {
        LocalIdentity {
            vmac: Vmac::new([2, 0, 0, 0, 0, last]),
            uuid: DeviceUuid::random_v4([last; 16]),
            max_bvlc_length: 1600,
            max_npdu_length: 1497,
        }
    }

    /// Moves every queued message from `from` to `to`; returns what `to` handed its owner.
    fn pump(now: Instant, from: &mut ScConnection, to: &mut ScConnection) -> Vec<String> {
        let mut seen = Vec::new();
        while let Some(frame) = from.poll_transmit() {
            match to.handle_message(now, &frame) {
                Handled::ConnectRequest { message_id, peer } => {
                    to.accept(now, message_id, peer);
                    seen.push("connect-request".to_owned());
                }
                Handled::Message(m) => seen.push(m.function().to_string()),
                Handled::Malformed(e) => seen.push(format!("malformed {e}")),
                Handled::Done => {}
            }
        }
        seen
    }

    #[test]
    fn handshake_heartbeat_and_disconnect() {
        let t0 = Instant::now();
        let config = ConnectionConfig::default();
        let mut node = ScConnection::initiate(t0, identity(1), config, 100);
        let mut hub = ScConnection::accepting(t0, identity(9), config, 500);
        assert_eq!(pump(t0, &mut node, &mut hub), ["connect-request"]);
        pump(t0, &mut hub, &mut node);
        assert!(node.is_connected() && hub.is_connected());
        assert_eq!(node.peer().unwrap().vmac, identity(9).vmac);
        assert_eq!(hub.peer().unwrap().uuid, identity(1).uuid);

        // Silence: the node sends a heartbeat after one timeout, the hub answers.
        let t1 = t0 + config.heartbeat;
        assert_eq!(node.poll_timeout(), Some(t1));
        node.handle_timeout(t1);
        pump(t1, &mut node, &mut hub);
        pump(t1, &mut hub, &mut node);
        assert!(node.is_connected());
        assert_eq!(node.poll_timeout(), Some(t1 + config.heartbeat));

        node.disconnect(t1);
        pump(t1, &mut node, &mut hub);
        pump(t1, &mut hub, &mut node);
        assert_eq!(node.state(), ConnectionState::Closed);
        assert_eq!(hub.state(), ConnectionState::Closed);
        assert!(matches!(
            hub.poll_event(),
            Some(ConnectionEvent::Connected(_))
        ));
        assert_eq!(
            hub.poll_event(),
            Some(ConnectionEvent::Closed(CloseReason::PeerDisconnect))
        );
    }

    #[test]
    fn silence_closes_both_sides_and_early_messages_are_discarded() {
        let t0 = Instant::now();
        let config = ConnectionConfig::default();
        let mut hub = ScConnection::accepting(t0, identity(9), config, 1);
        // An Encapsulated-NPDU before Connect-Request is discarded, not delivered.
        let early = BvlcMessage::new(5, Payload::EncapsulatedNpdu(&[1, 0])).to_bytes();
        assert!(matches!(hub.handle_message(t0, &early), Handled::Done));
        hub.handle_timeout(t0 + config.connect_wait);
        assert_eq!(
            hub.poll_event(),
            Some(ConnectionEvent::Closed(CloseReason::ConnectTimeout))
        );

        let mut node = ScConnection::initiate(t0, identity(1), config, 1);
        let mut hub = ScConnection::accepting(t0, identity(9), config, 1);
        pump(t0, &mut node, &mut hub);
        pump(t0, &mut hub, &mut node);
        // The node's heartbeat goes unanswered: closed after two heartbeat timeouts.
        node.handle_timeout(t0 + config.heartbeat);
        assert!(node.poll_transmit().is_some());
        node.handle_timeout(t0 + config.heartbeat * 2);
        assert_eq!(node.state(), ConnectionState::Closed);
        hub.handle_timeout(t0 + config.heartbeat * 2);
        assert_eq!(hub.state(), ConnectionState::Closed);
    }

    #[test]
    fn refusal_and_malformed_input() {
        let t0 = Instant::now();
        let config = ConnectionConfig::default();
        let mut node = ScConnection::initiate(t0, identity(1), config, 1);
        let mut hub = ScConnection::accepting(t0, identity(9), config, 1);
        let frame = node.poll_transmit().unwrap();
        let Handled::ConnectRequest { message_id, .. } = hub.handle_message(t0, &frame) else {
            panic!("no connect request");
        };
        hub.refuse(message_id, ErrorCode::NodeDuplicateVmac, "");
        pump(t0, &mut hub, &mut node);
        assert_eq!(
            node.poll_event(),
            Some(ConnectionEvent::Closed(CloseReason::Refused(
                ErrorCode::NodeDuplicateVmac
            )))
        );

        let mut node = ScConnection::initiate(t0, identity(1), config, 1);
        let mut hub = ScConnection::accepting(t0, identity(9), config, 1);
        pump(t0, &mut node, &mut hub);
        pump(t0, &mut hub, &mut node);
        // An unknown function is answered with a NAK; a 3-octet message is not.
        assert!(matches!(
            hub.handle_message(t0, &[0x20, 0, 0, 7]),
            Handled::Malformed(_)
        ));
        let nak = hub.poll_transmit().unwrap();
        let decoded = BvlcMessage::decode(&nak).unwrap();
        assert_eq!(decoded.message_id, 7);
        assert!(matches!(
            decoded.payload,
            Payload::Result(BvlcResult {
                outcome: ResultOutcome::Nak {
                    error_code: ErrorCode::BvlcFunctionUnknown,
                    ..
                },
                ..
            })
        ));
        assert!(matches!(
            hub.handle_message(t0, &[1, 0, 0]),
            Handled::Malformed(_)
        ));
        assert!(hub.poll_transmit().is_none());
        // A heartbeat with a must-understand option nobody knows.
        let odd = [0x0A, 0x02, 0, 9, 0x40 | 0x05];
        assert!(matches!(hub.handle_message(t0, &odd), Handled::Done));
        let nak = hub.poll_transmit().unwrap();
        assert!(matches!(
            BvlcMessage::decode(&nak).unwrap().payload,
            Payload::Result(BvlcResult {
                outcome: ResultOutcome::Nak {
                    error_code: ErrorCode::HeaderNotUnderstood,
                    header_marker: 0x45,
                    ..
                },
                ..
            })
        ));
    }
}
