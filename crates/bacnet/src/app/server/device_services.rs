//! The services of [`DeviceServer`] beyond property access: COV subscriptions and the
//! notifications they send (confirmed ones through a client TSM of the device's own),
//! ReadRange, AddListElement / RemoveListElement, DeviceCommunicationControl,
//! ReinitializeDevice, time synchronization, and the time-driven work (schedules,
//! calendars, trend logs, subscription lifetimes).

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use super::{DeviceServer, PeerAddress, error_response, service_error};
use crate::apdu::{Apdu, BacnetError, ConfirmedServiceChoice, MaxApdu, MaxSegments};
use crate::app::cov::{CovLimits, CovNotice, CovRequest, CovTable, SubscriptionId};
use crate::app::device_control::{
    CommunicationState, DeviceControl, PASSWORD_FAILURE, PasswordThrottle,
};
use crate::encoding::{
    BacnetAddress, CovSubscription, DateTime, Element, ObjectPropertyReference, Recipient,
    RecipientProcess,
};
use crate::enums::{ObjectType, PropertyIdentifier, ReinitializedState};
use crate::network::LinkAddress;
use crate::objects::datatypes::to_elements;
use crate::objects::value::PropertyData;
use crate::services::{
    ChangeListError, ConfirmedRequest, DeviceCommunicationControlRequest, ListElementRequest,
    ReadRangeAck, ReadRangeRequest, ReinitializeDeviceRequest, SubscribeCovPropertyRequest,
    SubscribeCovRequest, TimeSynchronizationRequest, UnconfirmedRequest,
};
use crate::tsm::{ClientEvent, ClientTsm, Response, TsmConfig};

/// How often schedules and calendars are evaluated against the device clock.
pub const SCHEDULE_TICK: Duration = Duration::from_secs(1);
/// Most device events kept until the application takes them.
pub const MAX_QUEUED_EVENTS: usize = 256;
/// Bytes of a ReadRange-ACK besides its items (object, property, index, flags, count,
/// tags, first sequence number).
const READ_RANGE_OVERHEAD: usize = 32;

/// Something the application may want to act on.
#[derive(Debug, Clone, PartialEq)]
pub enum DeviceEvent {
    /// A ReinitializeDevice was accepted and carried out (after its SimpleACK): for cold
    /// and warm starts, COV subscriptions and communication control were reset and an
    /// I-Am queued.
    Reinitialized(ReinitializedState),
    /// DeviceCommunicationControl changed the communication state.
    CommunicationControl(CommunicationState),
    /// The clock was set by (UTC)TimeSynchronization; `utc` tells which.
    TimeSynchronized {
        /// The time received.
        time: DateTime,
        /// True for UTCTimeSynchronization.
        utc: bool,
    },
}

/// Counters of the services of this module.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CovStats {
    /// COV notifications sent (both kinds, initial ones included).
    pub notifications: u64,
    /// Confirmed notifications that ended without a SimpleACK (timeout, error, abort).
    pub failed_confirmed: u64,
    /// Notifications not sent (communication disabled, or too long to send).
    pub suppressed: u64,
    /// Subscriptions that ended because their lifetime ran out.
    pub expired: u64,
    /// Messages dropped while communication was disabled.
    pub dropped_while_disabled: u64,
}

/// The state behind these services, one field of [`DeviceServer`].
pub(super) struct Extras<A> {
    pub(super) cov: CovTable<PeerAddress<A>>,
    pub(super) notifier: ClientTsm<PeerAddress<A>>,
    pub(super) control: DeviceControl,
    passwords: PasswordThrottle<PasswordSource<A>>,
    in_flight: HashMap<(PeerAddress<A>, u8), SubscriptionId>,
    after_response: Vec<CovNotice<PeerAddress<A>>>,
    restart_after_response: Option<ReinitializedState>,
    events: VecDeque<DeviceEvent>,
    next_tick: Option<Instant>,
    host_clock: Option<DateTime>,
    link_mac: Option<fn(&A) -> Vec<u8>>,
    pub(super) stats: CovStats,
}

/// Where wrong passwords are counted (see [`PasswordThrottle`]): the IP address of a B/IP
/// or B/IPv6 peer, any other peer by its address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum PasswordSource<A> {
    Host(std::net::IpAddr),
    Peer(PeerAddress<A>),
}

impl<A: LinkAddress> PasswordSource<A> {
    fn of(peer: PeerAddress<A>) -> Self {
        super::peer_host(&peer).map_or(Self::Peer(peer), Self::Host)
    }
}

/// The confirmed request being executed: when it arrived, its client and the largest
/// answer it takes (octets).
pub(super) struct RequestContext<A> {
    pub(super) now: Instant,
    pub(super) peer: PeerAddress<A>,
    pub(super) capacity: usize,
}

impl<A: LinkAddress> Extras<A> {
    pub(super) fn new(config: &TsmConfig) -> Self {
        Self {
            cov: CovTable::new(CovLimits::default()),
            notifier: ClientTsm::new(TsmConfig {
                max_transactions: crate::app::cov::DEFAULT_MAX_SUBSCRIPTIONS,
                ..config.clone()
            }),
            control: DeviceControl::default(),
            passwords: PasswordThrottle::default(),
            in_flight: HashMap::new(),
            after_response: Vec::new(),
            restart_after_response: None,
            events: VecDeque::new(),
            next_tick: None,
            host_clock: None,
            link_mac: None,
            stats: CovStats::default(),
        }
    }
}

/// True for the APDUs that answer a request this device sent (its confirmed COV
/// notifications): they go to the notifier's client TSM.
pub(super) fn answers_our_request(apdu: &Apdu<'_>) -> bool {
    matches!(
        apdu,
        Apdu::SimpleAck { .. }
            | Apdu::ComplexAck { .. }
            | Apdu::Error { .. }
            | Apdu::Reject { .. }
            | Apdu::SegmentAck { server: true, .. }
            | Apdu::Abort { server: true, .. }
    )
}

/// The largest ComplexACK payload a client accepts.
pub(super) fn answer_capacity(
    max_apdu: MaxApdu,
    max_segments: MaxSegments,
    segmented: bool,
    config: &TsmConfig,
) -> usize {
    let apdu = usize::from(max_apdu.octets().min(config.max_apdu.octets()));
    if segmented && config.segmentation != crate::enums::Segmentation::NoSegmentation {
        let segments = crate::tsm::UNSPECIFIED_SEGMENT_LIMIT.min(
            max_segments
                .count()
                .map_or(crate::tsm::UNSPECIFIED_SEGMENT_LIMIT, u32::from),
        ) as usize;
        (apdu.saturating_sub(5) * segments).min(config.max_reassembly_bytes)
    } else {
        apdu.saturating_sub(3)
    }
}

impl<A: LinkAddress> DeviceServer<A> {
    /// Sets the host's local date and time; the database's clock (local-date, local-time,
    /// schedules, calendars, trend log timestamps) is this plus the offset time
    /// synchronization set. The driver calls it before each input.
    pub fn set_clock(&mut self, host_local: DateTime) {
        self.extras.host_clock = Some(host_local);
        let device_time = self.extras.control.device_time(host_local);
        self.database.set_clock(device_time);
    }

    /// Sets the passwords DeviceCommunicationControl and ReinitializeDevice require.
    pub fn set_passwords(&mut self, dcc: Option<String>, reinitialize: Option<String>) {
        self.extras.control.set_passwords(dcc, reinitialize);
    }

    /// Sets the host's UTC offset in BACnet's convention (minutes to add to local time to
    /// get UTC), used by UTCTimeSynchronization.
    pub fn set_utc_offset_minutes(&mut self, minutes: i32) {
        self.extras.control.set_utc_offset_minutes(minutes);
    }

    /// Sets how a link address becomes a BACnet MAC address, for the subscribers listed in
    /// the Device's active-cov-subscriptions (without it they are listed with an empty MAC).
    pub fn set_link_mac(&mut self, link_mac: fn(&A) -> Vec<u8>) {
        self.extras.link_mac = Some(link_mac);
    }

    /// Sets the size limits of the COV subscription table (existing subscriptions stay).
    pub fn set_cov_limits(&mut self, limits: CovLimits) {
        let mut table = CovTable::new(limits);
        std::mem::swap(&mut table, &mut self.extras.cov);
        // Fresh limits start a fresh table: set them before clients subscribe.
        drop(table);
    }

    /// The communication state DeviceCommunicationControl set.
    pub fn communication_state(&self) -> CommunicationState {
        self.extras.control.state()
    }

    /// Number of COV subscriptions.
    pub fn cov_subscriptions(&self) -> usize {
        self.extras.cov.len()
    }

    /// Counters of COV and device management.
    pub fn cov_stats(&self) -> CovStats {
        self.extras.stats
    }

    /// The next event for the application.
    pub fn poll_event(&mut self) -> Option<DeviceEvent> {
        self.extras.events.pop_front()
    }

    fn push_event(&mut self, event: DeviceEvent) {
        if self.extras.events.len() >= MAX_QUEUED_EVENTS {
            self.extras.events.pop_front();
        }
        self.extras.events.push_back(event);
    }

    /// Looks at what changed in the database (network writes, local sets, schedules) and
    /// sends the COV notifications due. The driver calls it after changing the database
    /// from outside ([`Self::database_mut`]); the server calls it after each input.
    pub fn process_changes(&mut self, now: Instant) {
        if !self.database.has_changes() {
            return;
        }
        let changed = self.database.take_changed_objects();
        let notices = self.extras.cov.on_changes(now, &changed, &self.database);
        for notice in notices {
            self.send_notice(now, notice);
        }
    }

    /// The deadlines of this module: the notifier TSM, subscription expiry, the end of a
    /// timed communication control, the schedule tick and trend log samples.
    pub(super) fn extras_timeout(&self) -> Option<Instant> {
        let schedules = self
            .database
            .objects()
            .any(|o| matches!(o.object_type(), ObjectType::Schedule | ObjectType::Calendar));
        [
            self.extras.notifier.poll_timeout(),
            self.extras.cov.next_expiry(),
            self.extras.control.deadline(),
            self.extras
                .next_tick
                .filter(|_| schedules && self.extras.host_clock.is_some()),
            self.database.next_trend_log_sample(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Handles the deadlines of this module due at `now`.
    pub(super) fn extras_handle_timeout(&mut self, now: Instant) {
        self.extras.notifier.handle_timeout(now);
        self.drain_notifier(now);
        let expired = self.extras.cov.expire(now);
        self.extras.stats.expired += expired as u64;
        if self.extras.control.handle_timeout(now) {
            self.push_event(DeviceEvent::CommunicationControl(
                CommunicationState::Enabled,
            ));
        }
        self.tick(now);
    }

    /// Evaluates schedules and calendars once a [`SCHEDULE_TICK`] (and right away when
    /// one of them changed), and takes the trend log samples due.
    pub(super) fn tick(&mut self, now: Instant) {
        let due = self.extras.next_tick.is_none_or(|at| at <= now);
        let schedule_written = self.database.has_changes();
        if due || schedule_written {
            self.database.evaluate_schedules();
            self.extras.next_tick = Some(crate::tsm::after(now, SCHEDULE_TICK));
        }
        self.database.sample_trend_logs(now);
        self.process_changes(now);
    }

    /// Executes the confirmed services of this module (`None`: not one of them).
    pub(super) fn execute_more(
        &mut self,
        context: &RequestContext<A>,
        request: ConfirmedRequest,
    ) -> Response {
        let RequestContext {
            now,
            peer,
            capacity,
        } = *context;
        match request {
            ConfirmedRequest::SubscribeCov(subscribe) => self.subscribe_cov(now, peer, &subscribe),
            ConfirmedRequest::SubscribeCovProperty(subscribe) => {
                self.subscribe_cov_property(now, peer, &subscribe)
            }
            ConfirmedRequest::ReadRange(read) => self.read_range(now, &read, capacity),
            ConfirmedRequest::AddListElement(change) => self.change_list(&change, true),
            ConfirmedRequest::RemoveListElement(change) => self.change_list(&change, false),
            ConfirmedRequest::DeviceCommunicationControl(dcc) => {
                self.communication_control(now, peer, &dcc)
            }
            ConfirmedRequest::ReinitializeDevice(reinitialize) => {
                self.reinitialize(now, peer, &reinitialize)
            }
            // Notifications are for clients; a device has no subscriptions of its own.
            _ => Response::Reject(crate::enums::RejectReason::UnrecognizedService),
        }
    }

    fn subscribe_cov(
        &mut self,
        now: Instant,
        peer: PeerAddress<A>,
        request: &SubscribeCovRequest,
    ) -> Response {
        if request.is_cancellation() {
            self.extras.cov.cancel(
                &peer,
                request.subscriber_process_identifier,
                request.monitored_object,
                None,
            );
            return Response::SimpleAck;
        }
        let cov = CovRequest {
            process_identifier: request.subscriber_process_identifier,
            object: request.monitored_object,
            property: None,
            confirmed: request.issue_confirmed_notifications.unwrap_or(false),
            lifetime: request.lifetime.unwrap_or(0),
            cov_increment: None,
        };
        self.subscribe(now, peer, &cov)
    }

    fn subscribe_cov_property(
        &mut self,
        now: Instant,
        peer: PeerAddress<A>,
        request: &SubscribeCovPropertyRequest,
    ) -> Response {
        if request.is_cancellation() {
            self.extras.cov.cancel(
                &peer,
                request.subscriber_process_identifier,
                request.monitored_object,
                Some(request.monitored_property),
            );
            return Response::SimpleAck;
        }
        let cov = CovRequest {
            process_identifier: request.subscriber_process_identifier,
            object: request.monitored_object,
            property: Some(request.monitored_property),
            confirmed: request.issue_confirmed_notifications.unwrap_or(false),
            lifetime: request.lifetime.unwrap_or(0),
            cov_increment: request.cov_increment,
        };
        self.subscribe(now, peer, &cov)
    }

    fn subscribe(&mut self, now: Instant, peer: PeerAddress<A>, request: &CovRequest) -> Response {
        match self
            .extras
            .cov
            .subscribe(now, peer, request, &self.database)
        {
            Ok(initial) => {
                // Sent once the SimpleACK is on its way (Clause 13.14.2).
                self.extras.after_response.push(initial);
                Response::SimpleAck
            }
            Err(error) => error_response(error),
        }
    }

    fn read_range(
        &mut self,
        now: Instant,
        request: &ReadRangeRequest,
        capacity: usize,
    ) -> Response {
        self.refresh_active_subscriptions(now, request.object, request.property);
        match self.database.read_range(
            request.object,
            request.property,
            request.array_index,
            request.range.as_ref(),
            capacity.saturating_sub(READ_RANGE_OVERHEAD),
        ) {
            Ok(result) => {
                let mut bytes = Vec::new();
                ReadRangeAck {
                    object: request.object,
                    property: request.property,
                    array_index: request.array_index,
                    result_flags: result.flags,
                    item_count: result.item_count,
                    item_data: result.items,
                    first_sequence_number: result.first_sequence_number,
                }
                .encode(&mut bytes);
                Response::ComplexAck(bytes)
            }
            Err(error) => error_response(error),
        }
    }

    fn change_list(&mut self, request: &ListElementRequest, add: bool) -> Response {
        match self.database.change_list(
            request.object,
            request.property,
            request.array_index,
            &request.elements,
            add,
        ) {
            Ok(_) => Response::SimpleAck,
            Err(failure) => {
                let mut bytes = Vec::new();
                ChangeListError {
                    error: service_error(failure.error),
                    first_failed_element_number: failure.first_failed,
                }
                .encode(&mut bytes);
                Response::Error(bytes)
            }
        }
    }

    fn communication_control(
        &mut self,
        now: Instant,
        peer: PeerAddress<A>,
        request: &DeviceCommunicationControlRequest,
    ) -> Response {
        match self.checking_password(now, peer, |control| {
            control.communication_control(now, request)
        }) {
            Ok(state) => {
                self.push_event(DeviceEvent::CommunicationControl(state));
                Response::SimpleAck
            }
            Err(error) => bacnet_error_response(error),
        }
    }

    fn reinitialize(
        &mut self,
        now: Instant,
        peer: PeerAddress<A>,
        request: &ReinitializeDeviceRequest,
    ) -> Response {
        match self.checking_password(now, peer, |control| control.reinitialize(request)) {
            Ok(state) => {
                self.extras.restart_after_response = Some(state);
                Response::SimpleAck
            }
            Err(error) => bacnet_error_response(error),
        }
    }

    /// Runs a service that checks a password, unless `peer`'s source is paused after wrong
    /// ones (then `password-failure` at once); counts a wrong password, or forgets the
    /// source after a right one. Other errors (a parameter out of range) come after the
    /// password check and leave the count.
    fn checking_password<T>(
        &mut self,
        now: Instant,
        peer: PeerAddress<A>,
        service: impl FnOnce(&mut DeviceControl) -> Result<T, BacnetError>,
    ) -> Result<T, BacnetError> {
        let source = PasswordSource::of(peer);
        if !self.extras.passwords.may_check(now, &source) {
            return Err(PASSWORD_FAILURE);
        }
        let outcome = service(&mut self.extras.control);
        match &outcome {
            Ok(_) => self.extras.passwords.succeeded(&source),
            Err(error) if *error == PASSWORD_FAILURE => self.extras.passwords.failed(now, &source),
            Err(_) => {}
        }
        outcome
    }

    /// Work that follows the answer just sent: the initial COV notification of a
    /// subscription, or a restart.
    pub(super) fn after_response(&mut self, now: Instant) {
        for notice in std::mem::take(&mut self.extras.after_response) {
            self.send_notice(now, notice);
        }
        if let Some(state) = self.extras.restart_after_response.take() {
            if matches!(
                state,
                ReinitializedState::Coldstart | ReinitializedState::Warmstart
            ) {
                self.extras.cov.clear();
                self.extras.control.restart();
                self.i_am();
            }
            self.push_event(DeviceEvent::Reinitialized(state));
        }
    }

    /// The unconfirmed services of this module; true when `request` was one of them.
    pub(super) fn handle_more_unconfirmed(&mut self, request: &UnconfirmedRequest) -> bool {
        let (time, utc) = match request {
            UnconfirmedRequest::TimeSynchronization(TimeSynchronizationRequest { time }) => {
                (*time, false)
            }
            UnconfirmedRequest::UtcTimeSynchronization(TimeSynchronizationRequest { time }) => {
                (*time, true)
            }
            _ => return false,
        };
        let Some(host) = self.extras.host_clock else {
            // Without a host clock there is nothing to set the time against.
            return true;
        };
        if utc {
            self.extras.control.synchronize_utc(host, time);
        } else {
            self.extras.control.synchronize_local(host, time);
        }
        self.set_clock(host);
        self.push_event(DeviceEvent::TimeSynchronized { time, utc });
        true
    }

    /// Sends one COV notification (if the device may initiate messages).
    fn send_notice(&mut self, now: Instant, notice: CovNotice<PeerAddress<A>>) {
        if !self.extras.control.may_initiate() {
            self.extras.stats.suppressed += 1;
            if notice.confirmed {
                // Nothing is outstanding: let later changes through.
                let _ = self
                    .extras
                    .cov
                    .on_confirmed_done(now, notice.subscription, &self.database);
            }
            return;
        }
        let mut payload = Vec::new();
        notice.request.encode(&mut payload);
        if notice.confirmed {
            match self.extras.notifier.send_request(
                now,
                notice.subscriber,
                ConfirmedServiceChoice::ConfirmedCovNotification,
                payload,
            ) {
                Ok(invoke_id) => {
                    self.extras.stats.notifications += 1;
                    self.extras
                        .in_flight
                        .insert((notice.subscriber, invoke_id), notice.subscription);
                    self.drain_notifier(now);
                }
                Err(_) => {
                    self.extras.stats.suppressed += 1;
                    let next =
                        self.extras
                            .cov
                            .on_confirmed_done(now, notice.subscription, &self.database);
                    // A pending change would need the same invoke ids: drop it too.
                    drop(next);
                }
            }
        } else {
            self.extras.stats.notifications += 1;
            let request = UnconfirmedRequest::UnconfirmedCovNotification(notice.request);
            self.queue_unconfirmed(
                &request,
                super::Destination::Unicast(notice.subscriber.link),
                notice.subscriber.remote,
            );
        }
    }

    /// Moves the notifier TSM's output to the transmit queue and ends the notifications it
    /// finished.
    pub(super) fn drain_notifier(&mut self, now: Instant) {
        while let Some((peer, apdu)) = self.extras.notifier.poll_transmit() {
            self.queue_apdu(&peer, &apdu, true);
        }
        while let Some(event) = self.extras.notifier.poll_event() {
            let (peer, invoke_id, acknowledged) = match event {
                ClientEvent::SimpleAck {
                    peer, invoke_id, ..
                } => (peer, invoke_id, true),
                ClientEvent::ComplexAck {
                    peer, invoke_id, ..
                }
                | ClientEvent::Error {
                    peer, invoke_id, ..
                }
                | ClientEvent::Reject {
                    peer, invoke_id, ..
                }
                | ClientEvent::Abort {
                    peer, invoke_id, ..
                }
                | ClientEvent::Timeout { peer, invoke_id } => (peer, invoke_id, false),
            };
            if !acknowledged {
                self.extras.stats.failed_confirmed += 1;
            }
            if let Some(subscription) = self.extras.in_flight.remove(&(peer, invoke_id))
                && let Some(next) =
                    self.extras
                        .cov
                        .on_confirmed_done(now, subscription, &self.database)
            {
                self.send_notice(now, next);
            }
        }
        while let Some((peer, apdu)) = self.extras.notifier.poll_transmit() {
            self.queue_apdu(&peer, &apdu, true);
        }
    }

    /// Puts the live subscriptions into the Device's active-cov-subscriptions before a read
    /// of it (the property exists once the first read of the Device happens).
    pub(super) fn refresh_active_subscriptions(
        &mut self,
        now: Instant,
        object: crate::encoding::ObjectIdentifier,
        property: PropertyIdentifier,
    ) {
        let device = self.database.device_identifier();
        let wanted = matches!(
            property,
            PropertyIdentifier::ActiveCovSubscriptions
                | PropertyIdentifier::All
                | PropertyIdentifier::Optional
                | PropertyIdentifier::PropertyList
        );
        if object != device || !wanted {
            return;
        }
        let link_mac = self.extras.link_mac;
        let entries: Vec<Element> = self
            .extras
            .cov
            .active(now)
            .into_iter()
            .flat_map(|active| {
                let address = match active.subscriber.remote {
                    Some(remote) => BacnetAddress {
                        network: remote.network,
                        mac: remote.mac.as_bytes().to_vec(),
                    },
                    None => BacnetAddress {
                        network: 0,
                        mac: link_mac.map_or_else(Vec::new, |mac| mac(&active.subscriber.link)),
                    },
                };
                let subscription = CovSubscription {
                    recipient: RecipientProcess {
                        recipient: Recipient::Address(address),
                        process_identifier: active.process_identifier,
                    },
                    monitored: ObjectPropertyReference {
                        object: active.object,
                        property: active.property.property,
                        array_index: active.property.array_index,
                    },
                    issue_confirmed_notifications: active.confirmed,
                    time_remaining: active.time_remaining,
                    cov_increment: active.cov_increment,
                };
                to_elements(|b| subscription.encode(b))
            })
            .collect();
        // Bookkeeping of the server, not a change anybody is notified of.
        self.database.set_quietly(
            device,
            PropertyIdentifier::ActiveCovSubscriptions,
            PropertyData::List(entries),
        );
    }
}

fn bacnet_error_response(error: BacnetError) -> Response {
    let mut bytes = Vec::new();
    error.encode(&mut bytes);
    Response::Error(bytes)
}

/// The objects a request reads, for [`DeviceServer::refresh_active_subscriptions`].
pub(super) fn device_reads(
    request: &ConfirmedRequest,
) -> Vec<(crate::encoding::ObjectIdentifier, PropertyIdentifier)> {
    match request {
        ConfirmedRequest::ReadProperty(rp) => vec![(rp.object, rp.property)],
        ConfirmedRequest::ReadPropertyMultiple(rpm) => rpm
            .specifications
            .iter()
            .flat_map(|spec| spec.properties.iter().map(|p| (spec.object, p.property)))
            .collect(),
        _ => Vec::new(),
    }
}
