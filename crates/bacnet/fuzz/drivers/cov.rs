// The cov fuzz driver, shared by fuzz/fuzz_targets/cov.rs (libFuzzer) and
// tests/cov_fuzz_driver.rs (proptest on stable). The input is a stream of instructions to a
// device server holding the stress objects under small COV limits: SubscribeCOV and
// SubscribeCOVProperty (with lifetimes, increments, cancellations) from a few subscribers,
// local value changes, time steps, and the subscribers' answers to confirmed notifications
// (SimpleACK, Error, Reject, Abort or silence). Nothing may panic, the subscription table
// never exceeds its limit, every subscription request is answered with a SimpleACK or an
// Error, and every NPDU the server sends decodes, with COV notifications that decode.
// Included with include!, so no inner doc comments here.

use std::collections::VecDeque;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::{Duration, Instant};

use buildwire_bacnet::apdu::{
    Apdu, ConfirmedServiceChoice, MaxApdu, MaxSegments, UnconfirmedServiceChoice,
};
use buildwire_bacnet::app::DeviceServer;
use buildwire_bacnet::app::cov::CovLimits;
use buildwire_bacnet::encoding::{ApplicationValue, ObjectIdentifier, Reader};
use buildwire_bacnet::enums::{AbortReason, PropertyIdentifier, RejectReason};
use buildwire_bacnet::network::Npdu;
use buildwire_bacnet::network::npdu::NpduBody;
use buildwire_bacnet::objects::PropertyData;
use buildwire_bacnet::objects::profile::DeviceProfile;
use profiles::stress_profile;
use buildwire_bacnet::services::{
    CovNotificationRequest, PropertyReference, SubscribeCovPropertyRequest, SubscribeCovRequest,
};
use buildwire_bacnet::tsm::TsmConfig;

const LIMITS: CovLimits = CovLimits {
    max_subscriptions: 12,
    max_per_subscriber: 5,
};
const SUBSCRIBERS: u8 = 4;
/// Confirmed notifications remembered for answers.
const MAX_OUTSTANDING: usize = 64;

/// What the server sent that the driver keeps track of.
#[derive(Default)]
struct Seen {
    /// (subscriber, invoke id) of confirmed COV notifications not answered yet.
    outstanding: VecDeque<(SocketAddrV4, u8)>,
    /// Invoke ids of our subscription requests the server answered.
    answered: Vec<(SocketAddrV4, u8)>,
}

fn subscriber(pick: u8) -> SocketAddrV4 {
    SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 1 + pick % SUBSCRIBERS), 47808)
}

/// An NPDU carrying a confirmed request.
fn confirmed(invoke_id: u8, service: ConfirmedServiceChoice, payload: &[u8]) -> Vec<u8> {
    let mut apdu = Vec::new();
    Apdu::ConfirmedRequest {
        segmented_response_accepted: false,
        max_segments: MaxSegments::Unspecified,
        max_apdu: MaxApdu::Up1476,
        invoke_id,
        segment: None,
        service,
        payload,
    }
    .encode(&mut apdu);
    npdu_of(&apdu, true)
}

fn npdu_of(apdu: &[u8], expecting_reply: bool) -> Vec<u8> {
    let mut npdu = Vec::new();
    Npdu::local_apdu(apdu, expecting_reply).encode(&mut npdu);
    npdu
}

/// Checks one NPDU the server sent to `to` and notes what needs an answer.
fn check(to: Option<SocketAddrV4>, npdu_bytes: &[u8], seen: &mut Seen) {
    let npdu = Npdu::decode(&mut Reader::new(npdu_bytes)).expect("server NPDUs decode");
    let NpduBody::Apdu(apdu_bytes) = npdu.body else {
        panic!("the server only sends APDUs");
    };
    let apdu = Apdu::decode(&mut Reader::new(apdu_bytes)).expect("server APDUs decode");
    match apdu {
        Apdu::ConfirmedRequest {
            invoke_id,
            service: ConfirmedServiceChoice::ConfirmedCovNotification,
            payload,
            ..
        } => {
            let mut reader = Reader::new(payload);
            CovNotificationRequest::decode(&mut reader).expect("notifications decode");
            reader
                .expect_end()
                .expect("notifications end with their values");
            let to = to.expect("a confirmed notification goes to one subscriber");
            if seen.outstanding.len() >= MAX_OUTSTANDING {
                seen.outstanding.pop_front();
            }
            seen.outstanding.push_back((to, invoke_id));
        }
        Apdu::UnconfirmedRequest {
            service: UnconfirmedServiceChoice::UnconfirmedCovNotification,
            payload,
        } => {
            CovNotificationRequest::decode(&mut Reader::new(payload))
                .expect("notifications decode");
        }
        Apdu::SimpleAck {
            invoke_id,
            service:
                ConfirmedServiceChoice::SubscribeCov | ConfirmedServiceChoice::SubscribeCovProperty,
        }
        | Apdu::Error {
            invoke_id,
            service:
                ConfirmedServiceChoice::SubscribeCov | ConfirmedServiceChoice::SubscribeCovProperty,
            ..
        } => {
            if let Some(to) = to {
                seen.answered.push((to, invoke_id));
            }
        }
        Apdu::Reject { .. } | Apdu::Abort { .. } => {
            panic!("a well-formed subscription was rejected or aborted: {apdu:?}")
        }
        _ => {}
    }
}

/// Runs the instructions; returns how many subscriptions the server holds at the end.
fn drive(data: &[u8]) -> usize {
    static PROFILE: std::sync::OnceLock<DeviceProfile> = std::sync::OnceLock::new();
    let Ok(database) = PROFILE.get_or_init(stress_profile).build() else {
        return 0;
    };
    let objects: Vec<ObjectIdentifier> = database.objects().map(|o| o.identifier()).collect();
    let mut server = DeviceServer::new(database, TsmConfig::default());
    server.set_cov_limits(LIMITS);
    let mut now = Instant::now();
    let mut seen = Seen::default();
    let mut invoke_id = 0u8;
    for op in data.chunks_exact(4) {
        let [kind, a, b, c] = [op[0], op[1], op[2], op[3]];
        let from = subscriber(a);
        let object = objects[usize::from(b) % objects.len()];
        let mut sent = None;
        match kind % 7 {
            0 | 1 => {
                let request = if kind & 0x80 != 0 {
                    SubscribeCovRequest::cancel(u32::from(a >> 2), object)
                } else {
                    // Lifetimes from indefinite to a few seconds.
                    SubscribeCovRequest::subscribe(
                        u32::from(a >> 2),
                        object,
                        c & 1 == 1,
                        u32::from(c >> 5),
                    )
                };
                let mut payload = Vec::new();
                request.encode(&mut payload);
                invoke_id = invoke_id.wrapping_add(1);
                sent = Some((from, invoke_id));
                let npdu = confirmed(invoke_id, ConfirmedServiceChoice::SubscribeCov, &payload);
                server.handle_npdu(now, from, &npdu, false);
            }
            2 => {
                let property = [
                    PropertyIdentifier::PresentValue,
                    PropertyIdentifier::StatusFlags,
                    PropertyIdentifier::PriorityArray,
                    PropertyIdentifier::ObjectName,
                ][usize::from(c) % 4];
                let cancel = kind & 0x80 != 0;
                let request = SubscribeCovPropertyRequest {
                    subscriber_process_identifier: u32::from(a >> 2),
                    monitored_object: object,
                    issue_confirmed_notifications: (!cancel).then_some(c & 0x10 != 0),
                    lifetime: (!cancel).then_some(u32::from(c >> 5)),
                    monitored_property: PropertyReference {
                        property,
                        array_index: (c & 0x08 != 0).then_some(u32::from(c >> 4)),
                    },
                    cov_increment: (kind & 0x40 != 0).then_some(f32::from(kind & 0x0F) / 4.0),
                };
                let mut payload = Vec::new();
                request.encode(&mut payload);
                invoke_id = invoke_id.wrapping_add(1);
                sent = Some((from, invoke_id));
                let npdu = confirmed(
                    invoke_id,
                    ConfirmedServiceChoice::SubscribeCovProperty,
                    &payload,
                );
                server.handle_npdu(now, from, &npdu, false);
            }
            3 => {
                // A local change: a new present value, or out-of-service toggled.
                let (property, value) = if c & 1 == 0 {
                    (
                        PropertyIdentifier::PresentValue,
                        ApplicationValue::Real(f32::from(u16::from_be_bytes([a, c])) / 16.0),
                    )
                } else {
                    (
                        PropertyIdentifier::OutOfService,
                        ApplicationValue::Boolean(a & 1 == 1),
                    )
                };
                let _ =
                    server
                        .database_mut()
                        .set_local(object, property, PropertyData::Single(value));
                server.process_changes(now);
            }
            4 => {
                now += Duration::from_millis(u64::from(u16::from_be_bytes([a, c])) * 4);
                server.handle_timeout(now);
            }
            _ => {
                // A subscriber answers (or ignores) the oldest confirmed notification.
                if let Some((to, id)) = seen.outstanding.pop_front() {
                    let service = ConfirmedServiceChoice::ConfirmedCovNotification;
                    let mut apdu = Vec::new();
                    match c % 5 {
                        0 => Apdu::SimpleAck {
                            invoke_id: id,
                            service,
                        }
                        .encode(&mut apdu),
                        1 => Apdu::Error {
                            invoke_id: id,
                            service,
                            payload: &[0x91, 0x05, 0x91, 0x1F],
                        }
                        .encode(&mut apdu),
                        2 => Apdu::Reject {
                            invoke_id: id,
                            reason: RejectReason::UnrecognizedService,
                        }
                        .encode(&mut apdu),
                        3 => Apdu::Abort {
                            server: true,
                            invoke_id: id,
                            reason: AbortReason::Other,
                        }
                        .encode(&mut apdu),
                        _ => {}
                    }
                    if !apdu.is_empty() {
                        server.handle_npdu(now, to, &npdu_of(&apdu, false), false);
                    }
                }
            }
        }
        while let Some(transmit) = server.poll_transmit() {
            let to = match transmit.destination {
                buildwire_bacnet::app::Destination::Unicast(to) => Some(to),
                _ => None,
            };
            check(to, &transmit.npdu, &mut seen);
        }
        if let Some(request) = sent {
            assert!(
                seen.answered.contains(&request),
                "subscription request {request:?} unanswered"
            );
            seen.answered.clear();
        }
        assert!(server.cov_subscriptions() <= LIMITS.max_subscriptions);
    }
    server.cov_subscriptions()
}
