//! `ClientCore`: the sans-IO BACnet client. It turns typed requests into NPDUs through a
//! [`ClientTsm`], matches the answers to the requests by peer and invoke id, decodes the
//! ACKs into [`ComplexAckParameters`] and maps Error, Reject, Abort and timeouts to a typed
//! [`ClientError`]. I-Am and I-Have answers are queued for the application and teach the
//! TSM each peer's APDU and segmentation limits.

use std::collections::VecDeque;
use std::fmt;
use std::net::SocketAddrV4;
use std::time::Instant;

use super::server::{Destination, PeerAddress, Transmit};
use crate::apdu::{
    Apdu, BacnetError, ConfirmedServiceChoice, MaxApdu, MaxSegments, UnconfirmedServiceChoice,
};
use crate::encoding::{Element, ObjectIdentifier, ObjectPropertyReference, Reader};
use crate::enums::{AbortReason, PropertyIdentifier, RejectReason};
use crate::network::LinkAddress;
use crate::network::npdu::{
    DEFAULT_HOP_COUNT, GLOBAL_BROADCAST_NETWORK, MacAddress, NetworkPriority, Npdu, NpduBody,
    RemoteAddress,
};
use crate::services::{
    ChangeListError, ComplexAckParameters, ConfirmedRequest, IAm, IHave, InstanceRange,
    ReadAccessSpecification, ReadPropertyMultipleRequest, ReadPropertyRequest, UnconfirmedRequest,
    WhoHas, WhoHasObject, WhoIs, WriteAccessSpecification, WritePropertyMultipleError,
    WritePropertyMultipleRequest, WritePropertyRequest,
};
use crate::tsm::{ClientEvent, ClientTsm, RequestTiming, SendError, TsmConfig};

mod notifications;
pub use notifications::{CovNotification, MAX_QUEUED_NOTIFICATIONS};

/// Most I-Am / I-Have answers kept until the application takes them; the oldest are
/// dropped past this.
pub const MAX_QUEUED_ANNOUNCEMENTS: usize = 4096;
/// Most completions kept until the application takes them.
pub const MAX_QUEUED_COMPLETIONS: usize = 4096;

/// Why a request did not succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientError {
    /// The device answered with an Error PDU.
    Error {
        /// The failed service.
        service: ConfirmedServiceChoice,
        /// Error class and code.
        error: BacnetError,
    },
    /// WritePropertyMultiple failed: the writes before `first_failed` were done.
    WriteMultipleFailed {
        /// Error class and code.
        error: BacnetError,
        /// The first write that failed.
        first_failed: ObjectPropertyReference,
    },
    /// Add/RemoveListElement failed: no element was added or removed.
    ChangeListFailed {
        /// The failed service.
        service: ConfirmedServiceChoice,
        /// Error class and code.
        error: BacnetError,
        /// The position (from 1, in the request's order) of the first element that failed.
        first_failed_element: u32,
    },
    /// The device rejected the request (it could not parse or does not offer it).
    Reject(RejectReason),
    /// The transaction was aborted.
    Abort {
        /// Why.
        reason: AbortReason,
        /// True when the device aborted, false when this side did.
        by_server: bool,
    },
    /// No answer after every retry.
    Timeout,
    /// The request could not be sent (no invoke id free, too long for the peer).
    Send(SendError),
    /// The answer did not decode.
    BadReply(String),
    /// The socket failed or the client is shut down (drivers only).
    Io(String),
    /// An argument could not be used (a shorthand that does not parse...).
    InvalidArgument(String),
    /// No router answered Who-Is-Router-To-Network for this network.
    NoRoute(u16),
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Error { service, error } => write!(
                f,
                "{service} failed: {}:{}; check the object, property, index and value type",
                error.class, error.code
            ),
            Self::WriteMultipleFailed {
                error,
                first_failed,
            } => {
                write!(
                    f,
                    "write-property-multiple failed at {} {}",
                    first_failed.object, first_failed.property
                )?;
                if let Some(index) = first_failed.array_index {
                    write!(f, "[{index}]")?;
                }
                write!(
                    f,
                    ": {}:{}; the writes before it were done",
                    error.class, error.code
                )
            }
            Self::ChangeListFailed {
                service,
                error,
                first_failed_element,
            } => write!(
                f,
                "{service} failed at element {first_failed_element}: {}:{}; no element was \
                 changed",
                error.class, error.code
            ),
            Self::Reject(reason) => write!(
                f,
                "request rejected: {reason}; the device does not support or cannot parse it"
            ),
            Self::Abort { reason, by_server } => {
                let who = if *by_server {
                    "the device"
                } else {
                    "this client"
                };
                write!(f, "transaction aborted by {who}: {reason}")?;
                if *reason == AbortReason::SegmentationNotSupported
                    || *reason == AbortReason::BufferOverflow
                {
                    write!(f, "; ask for less (an array index, fewer properties)")?;
                }
                Ok(())
            }
            Self::Timeout => write!(
                f,
                "no answer from the device; check its address, port and that it is running"
            ),
            Self::Send(error) => write!(f, "request not sent: {error}"),
            Self::BadReply(detail) => write!(f, "the device's answer does not decode: {detail}"),
            Self::Io(detail) => write!(f, "network error: {detail}"),
            Self::InvalidArgument(detail) => write!(f, "invalid argument: {detail}"),
            Self::NoRoute(network) => write!(
                f,
                "no router to network {network} answered Who-Is-Router-To-Network; check the \
                 network number and that a router to it is on this network"
            ),
        }
    }
}

impl std::error::Error for ClientError {}

/// A successful answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// SimpleACK (writes).
    SimpleAck,
    /// ComplexACK with its decoded parameters (reads).
    ComplexAck(ComplexAckParameters),
}

/// The end of one request, drained from [`ClientCore::poll_completion`].
#[derive(Debug, Clone, PartialEq)]
pub struct Completion<A = SocketAddrV4> {
    /// The device asked (its link address, and its network address when routed).
    pub peer: PeerAddress<A>,
    /// The invoke id [`ClientCore::send`] returned.
    pub invoke_id: u8,
    /// The answer.
    pub result: Result<Reply, ClientError>,
}

/// An unconfirmed answer received: I-Am or I-Have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Announcement<A = SocketAddrV4> {
    /// An I-Am and the address it came from (with SNET/SADR when routed).
    IAm(PeerAddress<A>, IAm),
    /// An I-Have and the address it came from (with SNET/SADR when routed).
    IHave(PeerAddress<A>, IHave),
}

/// A sans-IO BACnet client. `A` is the data link's address type (`SocketAddrV4` for
/// B/IP). Devices on other networks are addressed by a [`PeerAddress`] whose `link` is
/// their router and whose `remote` is their network and MAC (the driver finds the router
/// with a [`crate::network::RouteCache`]); their answers come back with SNET/SADR set and
/// are matched on the same pair.
#[derive(Debug)]
pub struct ClientCore<A = SocketAddrV4> {
    tsm: ClientTsm<PeerAddress<A>>,
    transmits: VecDeque<Transmit<A>>,
    completions: VecDeque<Completion<A>>,
    announcements: VecDeque<Announcement<A>>,
    malformed: u64,
    global_broadcasts: bool,
    /// COV notifications received (see `notifications`).
    inbox: notifications::Inbox<A>,
}

impl<A: LinkAddress> ClientCore<A> {
    /// A client with the TSM timeouts, retries and limits of `config`.
    pub fn new(config: TsmConfig) -> Self {
        let inbox = notifications::Inbox::new(&config);
        Self {
            inbox,
            tsm: ClientTsm::new(config),
            transmits: VecDeque::new(),
            completions: VecDeque::new(),
            announcements: VecDeque::new(),
            malformed: 0,
            global_broadcasts: false,
        }
    }

    /// Sends broadcast Who-Is / Who-Has as global broadcasts (DNET X'FFFF'), so routers
    /// pass them to every network; off by default (local broadcasts).
    pub fn set_global_broadcasts(&mut self, global: bool) {
        self.global_broadcasts = global;
    }

    /// The TSM configuration.
    pub fn config(&self) -> &TsmConfig {
        self.tsm.config()
    }

    /// Datagrams that did not decode.
    pub fn malformed(&self) -> u64 {
        self.malformed
    }

    /// The transaction counters of the client TSM (requests, retries, segments...).
    pub fn tsm_stats(&self) -> crate::tsm::TsmStats {
        self.tsm.stats()
    }

    /// Records a peer's limits (also learnt from every I-Am received).
    pub fn set_peer_limits(&mut self, peer: impl Into<PeerAddress<A>>, i_am: &IAm) {
        let octets = u16::try_from(i_am.max_apdu_length_accepted).unwrap_or(u16::MAX);
        self.tsm.set_peer_limits(
            peer.into(),
            MaxApdu::for_length(octets),
            i_am.segmentation_supported,
            MaxSegments::Unspecified,
        );
    }

    /// Sends a confirmed request; returns the invoke id its [`Completion`] will carry.
    pub fn send(
        &mut self,
        now: Instant,
        to: impl Into<PeerAddress<A>>,
        request: &ConfirmedRequest,
    ) -> Result<u8, ClientError> {
        let timing = RequestTiming::of(self.tsm.config());
        self.send_timed(now, to, request, timing)
    }

    /// [`Self::send`] with this request's own reply timeout and retries.
    pub fn send_timed(
        &mut self,
        now: Instant,
        to: impl Into<PeerAddress<A>>,
        request: &ConfirmedRequest,
        timing: RequestTiming,
    ) -> Result<u8, ClientError> {
        let mut payload = Vec::new();
        request.encode(&mut payload);
        let invoke_id = self
            .tsm
            .send_request_timed(now, to.into(), request.service_choice(), payload, timing)
            .map_err(ClientError::Send)?;
        self.drain_tsm();
        Ok(invoke_id)
    }

    /// ReadProperty of `property` (one element when `array_index` is given; 0 reads the
    /// array's length).
    pub fn read_property(
        &mut self,
        now: Instant,
        to: impl Into<PeerAddress<A>>,
        object: ObjectIdentifier,
        property: PropertyIdentifier,
        array_index: Option<u32>,
    ) -> Result<u8, ClientError> {
        let request = ConfirmedRequest::ReadProperty(ReadPropertyRequest {
            object,
            property,
            array_index,
        });
        self.send(now, to, &request)
    }

    /// WriteProperty of `value` (tagged elements) with an optional priority (1..=16) and
    /// array index.
    #[allow(clippy::too_many_arguments)]
    pub fn write_property(
        &mut self,
        now: Instant,
        to: impl Into<PeerAddress<A>>,
        object: ObjectIdentifier,
        property: PropertyIdentifier,
        value: Vec<Element>,
        priority: Option<u8>,
        array_index: Option<u32>,
    ) -> Result<u8, ClientError> {
        let request = ConfirmedRequest::WriteProperty(WritePropertyRequest {
            object,
            property,
            array_index,
            value,
            priority,
        });
        self.send(now, to, &request)
    }

    /// ReadPropertyMultiple.
    pub fn read_property_multiple(
        &mut self,
        now: Instant,
        to: impl Into<PeerAddress<A>>,
        specifications: Vec<ReadAccessSpecification>,
    ) -> Result<u8, ClientError> {
        let request =
            ConfirmedRequest::ReadPropertyMultiple(ReadPropertyMultipleRequest { specifications });
        self.send(now, to, &request)
    }

    /// WritePropertyMultiple.
    pub fn write_property_multiple(
        &mut self,
        now: Instant,
        to: impl Into<PeerAddress<A>>,
        specifications: Vec<WriteAccessSpecification>,
    ) -> Result<u8, ClientError> {
        let request = ConfirmedRequest::WritePropertyMultiple(WritePropertyMultipleRequest {
            specifications,
        });
        self.send(now, to, &request)
    }

    /// Queues a Who-Is (for devices in `range`, or all) to `destination`.
    pub fn who_is(&mut self, range: Option<InstanceRange>, destination: Destination<A>) {
        self.queue_unconfirmed(&UnconfirmedRequest::WhoIs(WhoIs { range }), destination);
    }

    /// Queues a Who-Is for the devices of one remote `network` (DNET `network`, a broadcast
    /// there), sent as a local broadcast for the router serving that network to pass on.
    pub fn who_is_on_network(&mut self, range: Option<InstanceRange>, network: u16) {
        let request = UnconfirmedRequest::WhoIs(WhoIs { range });
        self.queue_unconfirmed_to(&request, Destination::Broadcast, Some(network));
    }

    /// Queues a Who-Has for an object by identifier or name.
    pub fn who_has(
        &mut self,
        range: Option<InstanceRange>,
        object: WhoHasObject,
        destination: Destination<A>,
    ) {
        let request = UnconfirmedRequest::WhoHas(WhoHas { range, object });
        self.queue_unconfirmed(&request, destination);
    }

    /// Queues any unconfirmed request (TimeSynchronization, UTCTimeSynchronization...) to
    /// `destination`; a broadcast is global when [`Self::set_global_broadcasts`] says so.
    pub fn send_unconfirmed(&mut self, request: &UnconfirmedRequest, destination: Destination<A>) {
        self.queue_unconfirmed(request, destination);
    }

    fn queue_unconfirmed(&mut self, request: &UnconfirmedRequest, destination: Destination<A>) {
        let global = self.global_broadcasts && destination == Destination::Broadcast;
        let network = global.then_some(GLOBAL_BROADCAST_NETWORK);
        self.queue_unconfirmed_to(request, destination, network);
    }

    /// Queues an unconfirmed request; `network` (DNET, broadcast on it) when given.
    fn queue_unconfirmed_to(
        &mut self,
        request: &UnconfirmedRequest,
        destination: Destination<A>,
        network: Option<u16>,
    ) {
        let mut payload = Vec::new();
        request.encode(&mut payload);
        let mut apdu = Vec::with_capacity(payload.len() + 2);
        Apdu::UnconfirmedRequest {
            service: request.service_choice(),
            payload: &payload,
        }
        .encode(&mut apdu);
        let mut npdu = Vec::with_capacity(apdu.len() + 8);
        Npdu {
            destination: network.map(|network| RemoteAddress {
                network,
                mac: MacAddress::BROADCAST,
            }),
            ..Npdu::local_apdu(&apdu, false)
        }
        .encode(&mut npdu);
        self.transmits.push_back(Transmit { destination, npdu });
    }

    /// Handles one NPDU received from `from`.
    pub fn handle_npdu(&mut self, now: Instant, from: A, npdu: &[u8]) {
        let Ok(decoded) = Npdu::decode(&mut Reader::new(npdu)) else {
            self.malformed += 1;
            return;
        };
        // Network-layer messages are for the route cache, not the application.
        let NpduBody::Apdu(apdu) = decoded.body else {
            return;
        };
        if decoded
            .destination
            .is_some_and(|d| d.network != GLOBAL_BROADCAST_NETWORK)
        {
            // Addressed to another network: only a router acts on it.
            return;
        }
        // A routed answer names its origin in SNET/SADR; it is matched on that pair.
        let from = PeerAddress {
            link: from,
            remote: decoded.source,
        };
        match Apdu::decode(&mut Reader::new(apdu)) {
            Ok(Apdu::UnconfirmedRequest { service, payload }) => {
                self.handle_unconfirmed(from, service, payload);
            }
            // Confirmed COV notifications, and the segment-acks and aborts of their
            // senders, go to the notification responder.
            Ok(
                Apdu::ConfirmedRequest { .. }
                | Apdu::SegmentAck { server: false, .. }
                | Apdu::Abort { server: false, .. },
            ) => self.inbox_datagram(now, from, apdu),
            Ok(_) => {
                self.tsm.handle_datagram(now, from, apdu);
                self.drain_tsm();
            }
            Err(_) => self.malformed += 1,
        }
    }

    fn handle_unconfirmed(
        &mut self,
        from: PeerAddress<A>,
        service: UnconfirmedServiceChoice,
        payload: &[u8],
    ) {
        let announcement = match UnconfirmedRequest::decode(service, &mut Reader::new(payload)) {
            Ok(UnconfirmedRequest::IAm(i_am)) => {
                self.set_peer_limits(from, &i_am);
                Announcement::IAm(from, i_am)
            }
            Ok(UnconfirmedRequest::IHave(i_have)) => Announcement::IHave(from, i_have),
            Ok(UnconfirmedRequest::UnconfirmedCovNotification(request)) => {
                self.unconfirmed_notification(from, request);
                return;
            }
            Ok(_) => return,
            Err(_) => {
                self.malformed += 1;
                return;
            }
        };
        if self.announcements.len() >= MAX_QUEUED_ANNOUNCEMENTS {
            self.announcements.pop_front();
        }
        self.announcements.push_back(announcement);
    }

    /// Handles the deadlines due at `now` (retries, timeouts).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.tsm.handle_timeout(now);
        self.drain_tsm();
        self.inbox_handle_timeout(now);
    }

    /// When [`Self::handle_timeout`] should next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match (self.tsm.poll_timeout(), self.inbox_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The next NPDU to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit<A>> {
        self.transmits.pop_front()
    }

    /// The next finished request.
    pub fn poll_completion(&mut self) -> Option<Completion<A>> {
        self.completions.pop_front()
    }

    /// The next I-Am or I-Have received.
    pub fn poll_announcement(&mut self) -> Option<Announcement<A>> {
        self.announcements.pop_front()
    }

    /// Gives up on a request (its Completion never comes).
    pub fn cancel(&mut self, peer: impl Into<PeerAddress<A>>, invoke_id: u8) -> bool {
        self.tsm.cancel(&peer.into(), invoke_id)
    }

    fn drain_tsm(&mut self) {
        while let Some((peer, apdu)) = self.tsm.poll_transmit() {
            let mut npdu = Vec::with_capacity(apdu.len() + 24);
            Npdu {
                destination: peer.remote,
                source: None,
                hop_count: DEFAULT_HOP_COUNT,
                expecting_reply: true,
                priority: NetworkPriority::Normal,
                body: NpduBody::Apdu(&apdu),
            }
            .encode(&mut npdu);
            self.transmits.push_back(Transmit {
                destination: Destination::Unicast(peer.link),
                npdu,
            });
        }
        while let Some(event) = self.tsm.poll_event() {
            let completion = completion_of(event);
            if self.completions.len() >= MAX_QUEUED_COMPLETIONS {
                self.completions.pop_front();
            }
            self.completions.push_back(completion);
        }
    }
}

/// Turns a TSM event into the typed result of the request it ends.
fn completion_of<A>(event: ClientEvent<PeerAddress<A>>) -> Completion<A> {
    let (peer, invoke_id, result) = match event {
        ClientEvent::SimpleAck {
            peer, invoke_id, ..
        } => (peer, invoke_id, Ok(Reply::SimpleAck)),
        ClientEvent::ComplexAck {
            peer,
            invoke_id,
            service,
            payload,
        } => {
            let result = ComplexAckParameters::decode(service, &mut Reader::new(&payload))
                .map(Reply::ComplexAck)
                .map_err(|e| ClientError::BadReply(e.to_string()));
            (peer, invoke_id, result)
        }
        ClientEvent::Error {
            peer,
            invoke_id,
            service,
            payload,
        } => (peer, invoke_id, Err(decode_error(service, &payload))),
        ClientEvent::Reject {
            peer,
            invoke_id,
            reason,
        } => (peer, invoke_id, Err(ClientError::Reject(reason))),
        ClientEvent::Abort {
            peer,
            invoke_id,
            reason,
            by_server,
        } => (
            peer,
            invoke_id,
            Err(ClientError::Abort { reason, by_server }),
        ),
        ClientEvent::Timeout { peer, invoke_id } => (peer, invoke_id, Err(ClientError::Timeout)),
    };
    Completion {
        peer,
        invoke_id,
        result,
    }
}

/// Decodes Error-PDU parameters: the WritePropertyMultiple error type, or the plain pair.
fn decode_error(service: ConfirmedServiceChoice, payload: &[u8]) -> ClientError {
    if service == ConfirmedServiceChoice::WritePropertyMultiple {
        let mut reader = Reader::new(payload);
        if let Ok(wpm) = WritePropertyMultipleError::decode(&mut reader) {
            return ClientError::WriteMultipleFailed {
                error: wpm.error,
                first_failed: wpm.first_failed_write_attempt,
            };
        }
    }
    if matches!(
        service,
        ConfirmedServiceChoice::AddListElement | ConfirmedServiceChoice::RemoveListElement
    ) {
        // Change-List-Error: the error and the first element that failed.
        if let Ok(change) = ChangeListError::decode(&mut Reader::new(payload)) {
            return ClientError::ChangeListFailed {
                service,
                error: change.error,
                first_failed_element: change.first_failed_element_number,
            };
        }
    }
    match BacnetError::decode_payload(&mut Reader::new(payload)) {
        Ok(error) => ClientError::Error { service, error },
        Err(e) => ClientError::BadReply(e.to_string()),
    }
}
