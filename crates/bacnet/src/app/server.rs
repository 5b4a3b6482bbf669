//! `DeviceServer`: the sans-IO BACnet device. It takes NPDUs in, answers confirmed requests
//! from its [`ObjectDatabase`] through a [`ServerTsm`] (so long answers are segmented and
//! repeated requests are answered from the response cache) and answers Who-Is and Who-Has;
//! the NPDUs to send come out of [`DeviceServer::poll_transmit`].
//!
//! Routing: this device is not a router. NPDUs carrying a DNET other than the global
//! broadcast are dropped, as are network-layer messages. A request that came through a
//! router (SNET/SADR present) is answered with DNET/DADR set to that SNET/SADR, sent to the
//! router's B/IP address (Clause 6.5.2).

use std::collections::VecDeque;
use std::net::SocketAddrV4;
use std::time::Instant;

use crate::apdu::{Apdu, BacnetError, UnconfirmedServiceChoice};
use crate::encoding::ObjectIdentifier;
use crate::encoding::{ApplicationValue, Element, ObjectPropertyReference, Reader};
use crate::enums::{ObjectType, PropertyIdentifier};
use crate::network::LinkAddress;
use crate::network::npdu::{
    DEFAULT_HOP_COUNT, GLOBAL_BROADCAST_NETWORK, NetworkPriority, Npdu, NpduBody, RemoteAddress,
};
use crate::objects::database::ObjectDatabase;
use crate::objects::value::PropertyData;
use crate::objects::{PropertyError, PropertySelection};
use crate::services::{
    ConfirmedRequest, IAm, IHave, PropertyReadResult, ReadAccessResult, ReadPropertyAck,
    ReadPropertyMultipleAck, ReadPropertyMultipleRequest, ReadResult, UnconfirmedRequest, WhoHas,
    WhoHasObject, WhoIs, WritePropertyMultipleError, WritePropertyMultipleRequest,
    WritePropertyRequest, reject_reason_for,
};
use crate::tsm::{Response, ServerEvent, ServerTsm, TsmConfig};

mod device_services;
use device_services::RequestContext;
pub use device_services::{CovStats, DeviceEvent, SCHEDULE_TICK};

/// Most NPDUs waiting in the transmit queue; older unsent ones are dropped past this so a
/// flood of Who-Is cannot grow memory without bound.
pub const MAX_QUEUED_TRANSMITS: usize = 4096;

/// Where a request came from: the B/IP address of the sender (the device itself, or the
/// router that forwarded it) and, for routed messages, the originator's network address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PeerAddress<A = SocketAddrV4> {
    /// The data-link address the NPDU came from: for B/IP the UDP address (or the one a
    /// Forwarded-NPDU names); for other links their own address type.
    pub link: A,
    /// SNET/SADR of a routed request; the answer goes back with this as DNET/DADR.
    pub remote: Option<RemoteAddress>,
}

impl<A> PeerAddress<A> {
    /// A device on the local network.
    pub const fn local(link: A) -> Self {
        Self { link, remote: None }
    }
}

impl<A> From<A> for PeerAddress<A> {
    fn from(link: A) -> Self {
        Self { link, remote: None }
    }
}

/// The IP address a peer's datagrams came from, for the TSM's per-host share of segmented
/// transactions: the UDP source of B/IP and B/IPv6 links (for a routed peer, its router's
/// address, so one router's devices share it); `None` for other links.
pub(crate) fn peer_host<A: 'static>(peer: &PeerAddress<A>) -> Option<std::net::IpAddr> {
    let link: &dyn std::any::Any = &peer.link;
    if let Some(address) = link.downcast_ref::<SocketAddrV4>() {
        return Some((*address.ip()).into());
    }
    if let Some(address) = link.downcast_ref::<std::net::SocketAddrV6>() {
        return Some((*address.ip()).into());
    }
    link.downcast_ref::<std::net::SocketAddr>()
        .map(std::net::SocketAddr::ip)
}

/// Where an outgoing NPDU goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Destination<A = SocketAddrV4> {
    /// One data-link address (for B/IP: Original-Unicast-NPDU).
    Unicast(A),
    /// The local broadcast address (Original-Broadcast-NPDU).
    Broadcast,
}

/// One NPDU to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit<A = SocketAddrV4> {
    /// Where to send it.
    pub destination: Destination<A>,
    /// The encoded NPDU (without BVLL).
    pub npdu: Vec<u8>,
}

impl<A> Transmit<A> {
    /// True when the NPDU goes to the local broadcast address.
    pub const fn is_broadcast(&self) -> bool {
        matches!(self.destination, Destination::Broadcast)
    }
}

/// Counters of what the server did with its input, beyond the TSM's own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerStats {
    /// NPDUs or APDUs that did not decode.
    pub malformed: u64,
    /// Network-layer messages dropped (this device is not a router).
    pub network_messages: u64,
    /// NPDUs for another network dropped.
    pub not_for_us: u64,
    /// Confirmed requests executed.
    pub requests: u64,
    /// Confirmed requests rejected (undecodable parameters or unknown service).
    pub rejected: u64,
    /// Who-Is and Who-Has answered.
    pub announcements: u64,
    /// Unconfirmed requests ignored (other services, ranges that exclude us, undecodable).
    pub unconfirmed_ignored: u64,
}

/// Whether an asker at this link address hears the device's broadcasts.
pub type HearsBroadcasts<A> = Box<dyn Fn(&A) -> bool + Send>;

/// A sans-IO BACnet device: an object database served over a server TSM.
///
/// `A` is the data link's address type: `SocketAddrV4` for B/IP (the default), a virtual
/// MAC for B/IPv6, a (port, MAC) pair for a device hosted in a router.
pub struct DeviceServer<A = SocketAddrV4> {
    database: ObjectDatabase,
    tsm: ServerTsm<PeerAddress<A>>,
    transmits: VecDeque<Transmit<A>>,
    unicast_i_am: bool,
    /// Whether an asker hears this device's broadcasts (see `set_hears_broadcasts`).
    hears_broadcasts: Option<HearsBroadcasts<A>>,
    stats: ServerStats,
    /// COV, device management and time-driven work (see `device_services`).
    extras: device_services::Extras<A>,
}

impl<A> std::fmt::Debug for DeviceServer<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceServer")
            .field("database", &self.database)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl<A: LinkAddress> DeviceServer<A> {
    /// A server for `database` with the TSM limits of `config`. The Device object's
    /// max-apdu-length-accepted, segmentation-supported and max-segments-accepted are set
    /// from `config`, so that what the device says matches what its TSM does.
    pub fn new(mut database: ObjectDatabase, config: TsmConfig) -> Self {
        let device = database.device_identifier();
        let max_segments = config
            .max_segments
            .count()
            .map_or(u64::from(crate::tsm::UNSPECIFIED_SEGMENT_LIMIT), u64::from);
        let settings = [
            (
                PropertyIdentifier::MaxApduLengthAccepted,
                ApplicationValue::Unsigned(u64::from(config.max_apdu.octets())),
            ),
            (
                PropertyIdentifier::SegmentationSupported,
                ApplicationValue::Enumerated(config.segmentation.to_u32()),
            ),
            (
                PropertyIdentifier::MaxSegmentsAccepted,
                ApplicationValue::Unsigned(max_segments),
            ),
        ];
        for (property, value) in settings {
            // The Device object always exists; a failure here leaves the old value.
            let _ = database.set_local(device, property, PropertyData::Single(value));
        }
        let extras = device_services::Extras::new(&config);
        let mut tsm = ServerTsm::new(config);
        tsm.set_host_of(peer_host::<A>);
        Self {
            database,
            tsm,
            transmits: VecDeque::new(),
            unicast_i_am: false,
            hears_broadcasts: None,
            stats: ServerStats::default(),
            extras,
        }
    }

    /// The object database.
    pub fn database(&self) -> &ObjectDatabase {
        &self.database
    }

    /// The object database, to change objects from the application.
    pub fn database_mut(&mut self) -> &mut ObjectDatabase {
        &mut self.database
    }

    /// The TSM limits in use.
    pub fn config(&self) -> &TsmConfig {
        self.tsm.config()
    }

    /// Counters of this layer.
    pub fn stats(&self) -> ServerStats {
        self.stats
    }

    /// The TSM's counters (retries, duplicates, segments...).
    pub fn tsm_stats(&self) -> crate::tsm::TsmStats {
        self.tsm.stats()
    }

    /// Answer Who-Is with a unicast I-Am to the asker instead of a broadcast (the default,
    /// as most devices do, is to broadcast).
    pub fn set_unicast_i_am(&mut self, unicast: bool) {
        self.unicast_i_am = unicast;
    }

    /// Tells which askers can hear this device's broadcasts: an asker that cannot (on B/IP,
    /// one whose UDP port is not the device's, since broadcasts go to the device's port)
    /// gets its I-Am or I-Have answer by unicast too when it asked by broadcast.
    pub fn set_hears_broadcasts(&mut self, hears: HearsBroadcasts<A>) {
        self.hears_broadcasts = Some(hears);
    }

    /// This device's I-Am parameters.
    pub fn i_am_parameters(&self) -> IAm {
        let device = self.database.device_identifier();
        let vendor_id =
            match self
                .database
                .read_property(device, PropertyIdentifier::VendorIdentifier, None)
            {
                Ok(value) => match value.as_slice() {
                    [Element::Application(ApplicationValue::Unsigned(id))] => {
                        u16::try_from(*id).unwrap_or(0)
                    }
                    _ => 0,
                },
                Err(_) => 0,
            };
        let config = self.tsm.config();
        IAm {
            device,
            max_apdu_length_accepted: u32::from(config.max_apdu.octets()),
            segmentation_supported: config.segmentation,
            vendor_id,
        }
    }

    /// Queues an I-Am broadcast (as a device does when it starts), unless
    /// DeviceCommunicationControl stopped the device initiating messages.
    pub fn i_am(&mut self) {
        if !self.extras.control.may_initiate() {
            return;
        }
        let request = UnconfirmedRequest::IAm(self.i_am_parameters());
        self.queue_unconfirmed(&request, Destination::Broadcast, None);
    }

    /// Handles one NPDU received from `from` (`was_broadcast` when it came as a BVLL
    /// broadcast). Answers are queued for [`Self::poll_transmit`].
    pub fn handle_npdu(&mut self, now: Instant, from: A, npdu: &[u8], was_broadcast: bool) {
        let Ok(decoded) = Npdu::decode(&mut Reader::new(npdu)) else {
            self.stats.malformed += 1;
            return;
        };
        let NpduBody::Apdu(apdu) = decoded.body else {
            self.stats.network_messages += 1;
            return;
        };
        if decoded
            .destination
            .is_some_and(|d| d.network != GLOBAL_BROADCAST_NETWORK)
        {
            self.stats.not_for_us += 1;
            return;
        }
        let peer = PeerAddress {
            link: from,
            remote: decoded.source,
        };
        match Apdu::decode(&mut Reader::new(apdu)) {
            Ok(Apdu::UnconfirmedRequest { .. }) if !self.extras.control.accepts_unconfirmed() => {
                self.extras.stats.dropped_while_disabled += 1;
            }
            Ok(Apdu::UnconfirmedRequest { service, payload }) => {
                self.handle_unconfirmed(peer, service, payload, was_broadcast);
            }
            Ok(Apdu::ConfirmedRequest { service, .. }) if !self.extras.control.accepts(service) => {
                self.extras.stats.dropped_while_disabled += 1;
            }
            Ok(Apdu::ConfirmedRequest { .. }) => {
                self.tsm.handle_datagram(now, peer, apdu);
                self.drain_tsm(now);
            }
            // Clause 16.1: a device whose communication is disabled answers DeviceCommunication-
            // Control and ReinitializeDevice requests only. Decision: every other APDU is
            // dropped too, SegmentACKs included, so an answer that was being sent in segments
            // when the disable came does not go on (its transaction ends with the TSM's
            // retries), and answers to our own requests are ignored.
            Ok(_) if !self.extras.control.accepts_unconfirmed() => {
                self.extras.stats.dropped_while_disabled += 1;
            }
            // Answers to this device's own confirmed COV notifications.
            Ok(decoded) if device_services::answers_our_request(&decoded) => {
                self.extras.notifier.handle_datagram(now, peer, apdu);
                self.drain_notifier(now);
            }
            Ok(_) => {
                self.tsm.handle_datagram(now, peer, apdu);
                self.drain_tsm(now);
            }
            Err(_) => self.stats.malformed += 1,
        }
        self.tick(now);
    }

    /// Handles the deadlines due at `now` (segment retransmissions, expiries, COV
    /// subscription lifetimes and notification retries, the schedule tick, trend log
    /// samples, the end of a timed DeviceCommunicationControl).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.tsm.handle_timeout(now);
        self.drain_tsm(now);
        self.extras_handle_timeout(now);
    }

    /// When [`Self::handle_timeout`] should next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match (self.tsm.poll_timeout(), self.extras_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The next NPDU to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit<A>> {
        self.transmits.pop_front()
    }

    fn drain_tsm(&mut self, now: Instant) {
        loop {
            while let Some(event) = self.tsm.poll_event() {
                if let ServerEvent::Request {
                    peer,
                    invoke_id,
                    service,
                    payload,
                    max_apdu,
                    max_segments,
                    segmented_response_accepted,
                } = event
                {
                    let capacity = device_services::answer_capacity(
                        max_apdu,
                        max_segments,
                        segmented_response_accepted,
                        self.tsm.config(),
                    );
                    let context = RequestContext {
                        now,
                        peer,
                        capacity,
                    };
                    let response = self.execute(&context, service, &payload);
                    // The transaction was delivered just now, so it is known to the TSM.
                    let _ = self.tsm.respond(now, peer, invoke_id, response);
                    // The answer goes out before what follows it (initial COV notification).
                    while let Some((peer, apdu)) = self.tsm.poll_transmit() {
                        self.queue_apdu(&peer, &apdu, false);
                    }
                    self.after_response(now);
                }
            }
            let Some((peer, apdu)) = self.tsm.poll_transmit() else {
                break;
            };
            self.queue_apdu(&peer, &apdu, false);
        }
    }

    fn queue_apdu(&mut self, peer: &PeerAddress<A>, apdu: &[u8], expecting_reply: bool) {
        let npdu = Npdu {
            destination: peer.remote,
            source: None,
            hop_count: DEFAULT_HOP_COUNT,
            expecting_reply,
            priority: NetworkPriority::Normal,
            body: NpduBody::Apdu(apdu),
        };
        let mut bytes = Vec::with_capacity(apdu.len() + 8);
        npdu.encode(&mut bytes);
        self.push(Transmit {
            destination: Destination::Unicast(peer.link),
            npdu: bytes,
        });
    }

    fn push(&mut self, transmit: Transmit<A>) {
        if self.transmits.len() >= MAX_QUEUED_TRANSMITS {
            self.transmits.pop_front();
        }
        self.transmits.push_back(transmit);
    }

    fn queue_unconfirmed(
        &mut self,
        request: &UnconfirmedRequest,
        destination: Destination<A>,
        remote: Option<RemoteAddress>,
    ) {
        let mut payload = Vec::new();
        request.encode(&mut payload);
        let mut apdu = Vec::with_capacity(payload.len() + 2);
        Apdu::UnconfirmedRequest {
            service: request.service_choice(),
            payload: &payload,
        }
        .encode(&mut apdu);
        match (destination, remote) {
            (Destination::Unicast(link), remote) => {
                self.queue_apdu(&PeerAddress { link, remote }, &apdu, false);
            }
            (Destination::Broadcast, _) => {
                let mut bytes = Vec::with_capacity(apdu.len() + 2);
                Npdu::local_apdu(&apdu, false).encode(&mut bytes);
                self.push(Transmit {
                    destination: Destination::Broadcast,
                    npdu: bytes,
                });
            }
        }
    }

    /// Where an answer to Who-Is / Who-Has goes: remote askers through their router; a
    /// request sent straight to this device is answered straight back; a broadcast one by
    /// broadcast (unless unicast I-Am answers were asked for, which I-Have never uses).
    fn announce_to(
        &self,
        peer: PeerAddress<A>,
        was_broadcast: bool,
        always_broadcast: bool,
    ) -> Destination<A> {
        let unicast_answer = !was_broadcast || (self.unicast_i_am && !always_broadcast);
        if peer.remote.is_some() || unicast_answer {
            Destination::Unicast(peer.link)
        } else {
            Destination::Broadcast
        }
    }

    fn handle_unconfirmed(
        &mut self,
        peer: PeerAddress<A>,
        service: UnconfirmedServiceChoice,
        payload: &[u8],
        was_broadcast: bool,
    ) {
        let answer = match UnconfirmedRequest::decode(service, &mut Reader::new(payload)) {
            Ok(UnconfirmedRequest::WhoIs(who_is)) => self.answer_who_is(&who_is),
            Ok(UnconfirmedRequest::WhoHas(who_has)) => self.answer_who_has(&who_has),
            Ok(other) if self.handle_more_unconfirmed(&other) => return,
            _ => None,
        };
        match answer {
            Some((request, always_broadcast)) => {
                self.stats.announcements += 1;
                let destination = self.announce_to(peer, was_broadcast, always_broadcast);
                // An asker that cannot hear the broadcast answer also gets it directly
                // (the broadcast still goes out, for BBMDs to distribute).
                let deaf = destination == Destination::Broadcast
                    && peer.remote.is_none()
                    && self
                        .hears_broadcasts
                        .as_ref()
                        .is_some_and(|hears| !hears(&peer.link));
                self.queue_unconfirmed(&request, destination, peer.remote);
                if deaf {
                    self.queue_unconfirmed(&request, Destination::Unicast(peer.link), None);
                }
            }
            None => self.stats.unconfirmed_ignored += 1,
        }
    }

    fn answer_who_is(&self, who_is: &WhoIs) -> Option<(UnconfirmedRequest, bool)> {
        let device = self.database.device_identifier();
        who_is
            .matches(device.instance())
            .then(|| (UnconfirmedRequest::IAm(self.i_am_parameters()), false))
    }

    fn answer_who_has(&self, who_has: &WhoHas) -> Option<(UnconfirmedRequest, bool)> {
        let device = self.database.device_identifier();
        if who_has
            .range
            .is_some_and(|range| !range.contains(device.instance()))
        {
            return None;
        }
        let object = match &who_has.object {
            WhoHasObject::Identifier(id) => self.database.get(*id)?,
            WhoHasObject::Name(name) => self.database.get_by_name(name)?,
        };
        let answer = IHave {
            device,
            object: object.identifier(),
            object_name: object.name().to_owned(),
        };
        // I-Have answers a broadcast Who-Has by broadcast (Clause 16.9.2).
        Some((UnconfirmedRequest::IHave(answer), true))
    }

    /// Decodes and executes one confirmed request against the database.
    fn execute(
        &mut self,
        context: &RequestContext<A>,
        service: crate::apdu::ConfirmedServiceChoice,
        payload: &[u8],
    ) -> Response {
        let request = match ConfirmedRequest::decode(service, &mut Reader::new(payload)) {
            Ok(request) => request,
            Err(error) => {
                self.stats.rejected += 1;
                return Response::Reject(reject_reason_for(&error));
            }
        };
        self.stats.requests += 1;
        for (object, property) in device_services::device_reads(&request) {
            self.refresh_active_subscriptions(context.now, object, property);
        }
        match request {
            ConfirmedRequest::ReadProperty(rp) => self.read_property(&rp),
            ConfirmedRequest::WriteProperty(wp) => self.write_property(&wp),
            ConfirmedRequest::ReadPropertyMultiple(rpm) => self.read_property_multiple(&rpm),
            ConfirmedRequest::WritePropertyMultiple(wpm) => self.write_property_multiple(&wpm),
            other => self.execute_more(context, other),
        }
    }

    /// The device object for the wildcard device instance 4194303 (Clauses 15.5 and
    /// 15.7: a device reads it as its own, so a client can ask an unknown device its
    /// identifier); any other object as it is.
    fn resolve_wildcard(&self, object: ObjectIdentifier) -> ObjectIdentifier {
        const WILDCARD: u32 = crate::encoding::object_identifier::MAX_INSTANCE;
        if object.object_type() == ObjectType::Device && object.instance() == WILDCARD {
            self.database.device_identifier()
        } else {
            object
        }
    }

    fn read_property(&self, rp: &crate::services::ReadPropertyRequest) -> Response {
        let object = self.resolve_wildcard(rp.object);
        match self
            .database
            .read_property(object, rp.property, rp.array_index)
        {
            Ok(value) => {
                let mut bytes = Vec::new();
                ReadPropertyAck {
                    object,
                    property: rp.property,
                    array_index: rp.array_index,
                    value,
                }
                .encode(&mut bytes);
                Response::ComplexAck(bytes)
            }
            Err(error) => error_response(error),
        }
    }

    fn write_property(&mut self, wp: &WritePropertyRequest) -> Response {
        match self.database.write_property(
            wp.object,
            wp.property,
            wp.array_index,
            &wp.value,
            wp.priority,
        ) {
            Ok(_) => Response::SimpleAck,
            Err(error) => error_response(error),
        }
    }

    fn read_property_multiple(&self, rpm: &ReadPropertyMultipleRequest) -> Response {
        let mut results = Vec::with_capacity(rpm.specifications.len());
        for spec in &rpm.specifications {
            let object = self.resolve_wildcard(spec.object);
            let mut object_results = Vec::new();
            for reference in &spec.properties {
                let selection = match reference.property {
                    PropertyIdentifier::All => Some(PropertySelection::All),
                    PropertyIdentifier::Required => Some(PropertySelection::Required),
                    PropertyIdentifier::Optional => Some(PropertySelection::Optional),
                    _ => None,
                };
                match selection.filter(|_| reference.array_index.is_none()) {
                    Some(selection) => match self.database.read_selection(object, selection) {
                        Ok(list) => {
                            object_results.extend(list.into_iter().map(|(property, result)| {
                                PropertyReadResult {
                                    property,
                                    array_index: None,
                                    result: read_result(result),
                                }
                            }));
                        }
                        Err(error) => object_results.push(PropertyReadResult {
                            property: reference.property,
                            array_index: None,
                            result: ReadResult::Error(service_error(error)),
                        }),
                    },
                    None => object_results.push(PropertyReadResult {
                        property: reference.property,
                        array_index: reference.array_index,
                        result: read_result(self.database.read_property(
                            object,
                            reference.property,
                            reference.array_index,
                        )),
                    }),
                }
            }
            results.push(ReadAccessResult {
                object,
                results: object_results,
            });
        }
        let mut bytes = Vec::new();
        ReadPropertyMultipleAck { results }.encode(&mut bytes);
        Response::ComplexAck(bytes)
    }

    fn write_property_multiple(&mut self, wpm: &WritePropertyMultipleRequest) -> Response {
        for spec in &wpm.specifications {
            for value in &spec.properties {
                if let Err(error) = self.database.write_property(
                    spec.object,
                    value.property,
                    value.array_index,
                    &value.value,
                    value.priority,
                ) {
                    // Clause 15.10.1.3.2: writes before the failing one stay done.
                    let mut bytes = Vec::new();
                    WritePropertyMultipleError {
                        error: service_error(error),
                        first_failed_write_attempt: ObjectPropertyReference {
                            object: spec.object,
                            property: value.property,
                            array_index: value.array_index,
                        },
                    }
                    .encode(&mut bytes);
                    return Response::Error(bytes);
                }
            }
        }
        Response::SimpleAck
    }
}

fn service_error(error: PropertyError) -> BacnetError {
    BacnetError {
        class: error.class,
        code: error.code,
    }
}

fn error_response(error: PropertyError) -> Response {
    let mut bytes = Vec::new();
    service_error(error).encode(&mut bytes);
    Response::Error(bytes)
}

fn read_result(result: Result<Vec<Element>, PropertyError>) -> ReadResult {
    match result {
        Ok(value) => ReadResult::Value(value),
        Err(error) => ReadResult::Error(service_error(error)),
    }
}
