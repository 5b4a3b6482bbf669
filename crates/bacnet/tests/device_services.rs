//! The device server's services beyond property access, without sockets: the stress
//! Schedule, Calendar and Notification Class answering every property they have with the
//! right values at given device times, schedule writes, list changes, ReadRange by
//! position / sequence number / time, DeviceCommunicationControl, ReinitializeDevice,
//! time synchronization, Who-Has, active-cov-subscriptions and confirmed COV
//! notifications in order after the SimpleACK.
#![allow(clippy::unwrap_used)]

#[allow(dead_code)]
#[path = "../../bench/src/bacnet/profiles.rs"]
mod profiles;

use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::{Duration, Instant};

use buildwire_bacnet::apdu::{Apdu, BacnetError, ConfirmedServiceChoice, MaxApdu, MaxSegments};
use buildwire_bacnet::app::device_control::CommunicationState;
use buildwire_bacnet::app::{Destination, DeviceEvent, DeviceServer, Transmit};
use buildwire_bacnet::encoding::abstract_syntax::decode_to_end;
use buildwire_bacnet::encoding::calendar::{days_from_civil, weekday_from_days};
use buildwire_bacnet::encoding::{
    ApplicationValue, BitString, CalendarEntry, CovSubscription, DailySchedule, Date, DateTime,
    Destination as NcDestination, Element, LogDatum, LogRecord, Recipient, SpecialEvent,
    SpecialEventPeriod, Time, TimeValue, WeekNDay,
};
use buildwire_bacnet::enums::{EnableDisable, ErrorClass, ErrorCode, ReinitializedState};
use buildwire_bacnet::network::Npdu;
use buildwire_bacnet::network::npdu::NpduBody;
use buildwire_bacnet::objects::profile::{DeviceProfile, ObjectSpec};
use buildwire_bacnet::services::{
    ChangeListError, ComplexAckParameters, ConfirmedRequest, CovNotificationRequest,
    DeviceCommunicationControlRequest, ListElementRequest, PropertyReadResult, PropertyReference,
    RangeSpec, ReadAccessSpecification, ReadPropertyMultipleAck, ReadPropertyMultipleRequest,
    ReadPropertyRequest, ReadRangeAck, ReadRangeRequest, ReadResult, ReinitializeDeviceRequest,
    SubscribeCovRequest, TimeSynchronizationRequest, UnconfirmedRequest, WhoHas, WhoHasObject,
    WritePropertyRequest,
};
use buildwire_bacnet::tsm::TsmConfig;
use buildwire_bacnet::{ObjectIdentifier, PropertyIdentifier as P, Reader};
use profiles::stress_profile;

const CLIENT: SocketAddrV4 = SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 2), 47808);

fn id(text: &str) -> ObjectIdentifier {
    text.parse().unwrap()
}

fn at(year: u16, month: u8, day: u8, hour: u8, minute: u8) -> DateTime {
    let weekday = weekday_from_days(days_from_civil(i64::from(year), month, day));
    DateTime {
        date: Date::new(year, month, day, weekday),
        time: Time::new(hour, minute, 0, 0),
    }
}

struct Device {
    server: DeviceServer,
    now: Instant,
    invoke_id: u8,
}

impl Device {
    fn new(profile: &DeviceProfile) -> Self {
        Self {
            server: DeviceServer::new(profile.build().unwrap(), TsmConfig::default()),
            now: Instant::now(),
            invoke_id: 0,
        }
    }

    fn stress() -> Self {
        Self::new(&stress_profile())
    }

    /// Moves the device clock (and the monotonic clock by `advance`) and runs the timers.
    fn clock(&mut self, time: DateTime, advance: Duration) {
        self.now += advance;
        self.server.set_clock(time);
        self.server.handle_timeout(self.now);
    }

    fn sent(&mut self) -> Vec<Transmit> {
        std::iter::from_fn(|| self.server.poll_transmit()).collect()
    }

    fn send_apdu(&mut self, apdu: &[u8]) {
        self.send_apdu_from(CLIENT, apdu);
    }

    fn send_apdu_from(&mut self, from: SocketAddrV4, apdu: &[u8]) {
        let mut npdu = Vec::new();
        Npdu::local_apdu(apdu, true).encode(&mut npdu);
        self.server.handle_npdu(self.now, from, &npdu, false);
    }

    /// Sends a confirmed request and returns every APDU the device sent back.
    fn exchange(&mut self, request: &ConfirmedRequest) -> Vec<Vec<u8>> {
        self.exchange_from(CLIENT, request)
    }

    /// [`Self::exchange`] from another client address.
    fn exchange_from(&mut self, from: SocketAddrV4, request: &ConfirmedRequest) -> Vec<Vec<u8>> {
        self.invoke_id = self.invoke_id.wrapping_add(1);
        let mut payload = Vec::new();
        request.encode(&mut payload);
        let mut apdu = Vec::new();
        Apdu::ConfirmedRequest {
            segmented_response_accepted: true,
            max_segments: MaxSegments::Unspecified,
            max_apdu: MaxApdu::Up1476,
            invoke_id: self.invoke_id,
            segment: None,
            service: request.service_choice(),
            payload: &payload,
        }
        .encode(&mut apdu);
        self.send_apdu_from(from, &apdu);
        self.sent().iter().map(|t| apdu_of(&t.npdu)).collect()
    }

    /// The single answer to a confirmed request.
    fn ask(&mut self, request: &ConfirmedRequest) -> Answer {
        self.ask_from(CLIENT, request)
    }

    /// [`Self::ask`] from another client address.
    fn ask_from(&mut self, from: SocketAddrV4, request: &ConfirmedRequest) -> Answer {
        let apdus = self.exchange_from(from, request);
        let first = apdus.first().expect("an answer");
        Answer::of(first)
    }

    fn read(
        &mut self,
        object: &str,
        property: P,
        index: Option<u32>,
    ) -> Result<Vec<Element>, BacnetError> {
        let request = ConfirmedRequest::ReadProperty(ReadPropertyRequest {
            object: id(object),
            property,
            array_index: index,
        });
        match self.ask(&request) {
            Answer::Complex(ComplexAckParameters::ReadProperty(ack)) => Ok(ack.value),
            Answer::Error(error) => Err(error),
            other => panic!("{other:?}"),
        }
    }

    fn write(
        &mut self,
        object: &str,
        property: P,
        index: Option<u32>,
        value: Vec<Element>,
    ) -> Answer {
        self.ask(&ConfirmedRequest::WriteProperty(WritePropertyRequest {
            object: id(object),
            property,
            array_index: index,
            value,
            priority: None,
        }))
    }

    fn unconfirmed(&mut self, request: &UnconfirmedRequest) {
        let mut payload = Vec::new();
        request.encode(&mut payload);
        let mut apdu = Vec::new();
        Apdu::UnconfirmedRequest {
            service: request.service_choice(),
            payload: &payload,
        }
        .encode(&mut apdu);
        let mut npdu = Vec::new();
        Npdu::local_apdu(&apdu, false).encode(&mut npdu);
        self.server.handle_npdu(self.now, CLIENT, &npdu, true);
    }
}

fn apdu_of(npdu: &[u8]) -> Vec<u8> {
    match Npdu::decode(&mut Reader::new(npdu)).unwrap().body {
        NpduBody::Apdu(apdu) => apdu.to_vec(),
        other => panic!("{other:?}"),
    }
}

#[derive(Debug, PartialEq)]
enum Answer {
    Simple,
    Complex(ComplexAckParameters),
    Error(BacnetError),
    ListError(ChangeListError),
    Other(Vec<u8>),
}

impl Answer {
    fn of(apdu: &[u8]) -> Self {
        match Apdu::decode(&mut Reader::new(apdu)).unwrap() {
            Apdu::SimpleAck { .. } => Self::Simple,
            Apdu::ComplexAck {
                service, payload, ..
            } => Self::Complex(
                ComplexAckParameters::decode(service, &mut Reader::new(payload)).unwrap(),
            ),
            Apdu::Error {
                service:
                    ConfirmedServiceChoice::AddListElement | ConfirmedServiceChoice::RemoveListElement,
                payload,
                ..
            } => Self::ListError(ChangeListError::decode(&mut Reader::new(payload)).unwrap()),
            Apdu::Error { payload, .. } => {
                Self::Error(BacnetError::decode(&mut Reader::new(payload)).unwrap())
            }
            _ => Self::Other(apdu.to_vec()),
        }
    }
}

fn app(value: ApplicationValue) -> Vec<Element> {
    vec![Element::Application(value)]
}

fn encoded(encode: impl FnOnce(&mut Vec<u8>)) -> Vec<Element> {
    let mut bytes = Vec::new();
    encode(&mut bytes);
    decode_to_end(&mut Reader::new(&bytes)).unwrap()
}

fn error(class: ErrorClass, code: ErrorCode) -> BacnetError {
    BacnetError { class, code }
}

/// Every property of `object` read with RPM `all`, as (property, value) pairs; panics on
/// any error result (none of these objects has an unreadable property).
fn read_all(device: &mut Device, object: &str) -> Vec<(P, Vec<Element>)> {
    let request = ConfirmedRequest::ReadPropertyMultiple(ReadPropertyMultipleRequest {
        specifications: vec![ReadAccessSpecification {
            object: id(object),
            properties: vec![PropertyReference {
                property: P::All,
                array_index: None,
            }],
        }],
    });
    let Answer::Complex(ComplexAckParameters::ReadPropertyMultiple(ReadPropertyMultipleAck {
        results,
    })) = device.ask(&request)
    else {
        panic!("RPM answer");
    };
    results[0]
        .results
        .iter()
        .map(
            |PropertyReadResult {
                 property, result, ..
             }| match result {
                ReadResult::Value(value) => (*property, value.clone()),
                ReadResult::Error(error) => panic!("{object} {property}: {error:?}"),
            },
        )
        .collect()
}

fn property_list(values: &[(P, Vec<Element>)]) -> Vec<P> {
    let (_, list) = values.iter().find(|(p, _)| *p == P::PropertyList).unwrap();
    list.iter()
        .map(|e| match e {
            Element::Application(ApplicationValue::Enumerated(n)) => P::from_u32(*n),
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn stress_schedule_answers_every_property_with_the_right_values() {
    let mut device = Device::stress();
    // Wednesday 2025-06-04 10:00: occupied.
    device.clock(at(2025, 6, 4, 10, 0), Duration::from_secs(1));
    let all = read_all(&mut device, "schedule,1");
    let properties: Vec<P> = all.iter().map(|(p, _)| *p).collect();
    assert_eq!(
        properties,
        [
            P::ObjectIdentifier,
            P::ObjectName,
            P::ObjectType,
            P::PropertyList,
            P::PresentValue,
            P::Description,
            P::EffectivePeriod,
            P::WeeklySchedule,
            P::ExceptionSchedule,
            P::ScheduleDefault,
            P::ListOfObjectPropertyReferences,
            P::PriorityForWriting,
            P::StatusFlags,
            P::Reliability,
            P::OutOfService,
        ]
    );
    assert_eq!(property_list(&all), properties[4..]);
    let value = |p: P| all.iter().find(|(q, _)| *q == p).unwrap().1.clone();
    assert_eq!(
        value(P::ObjectIdentifier),
        app(ApplicationValue::ObjectIdentifier(id("schedule,1")))
    );
    assert_eq!(
        value(P::ObjectName),
        app(ApplicationValue::CharacterString("Schedule-1".into()))
    );
    assert_eq!(value(P::ObjectType), app(ApplicationValue::Enumerated(17)));
    assert_eq!(value(P::PresentValue), app(ApplicationValue::Real(72.0)));
    assert_eq!(value(P::ScheduleDefault), app(ApplicationValue::Real(65.0)));
    assert_eq!(
        value(P::EffectivePeriod),
        [
            app(ApplicationValue::Date(Date::ANY)),
            app(ApplicationValue::Date(Date::ANY))
        ]
        .concat()
    );
    let weekday = DailySchedule {
        day_schedule: vec![
            TimeValue {
                time: Time::new(8, 0, 0, 0),
                value: ApplicationValue::Real(72.0),
            },
            TimeValue {
                time: Time::new(18, 0, 0, 0),
                value: ApplicationValue::Null,
            },
        ],
    };
    let week: Vec<Element> = (0..7)
        .flat_map(|day| {
            if day < 5 {
                encoded(|b| weekday.encode(b))
            } else {
                encoded(|b| DailySchedule::default().encode(b))
            }
        })
        .collect();
    assert_eq!(value(P::WeeklySchedule), week);
    let holiday = SpecialEvent {
        period: SpecialEventPeriod::CalendarReference(id("calendar,1")),
        time_values: vec![TimeValue {
            time: Time::new(0, 0, 0, 0),
            value: ApplicationValue::Real(60.0),
        }],
        event_priority: 10,
    };
    assert_eq!(value(P::ExceptionSchedule), encoded(|b| holiday.encode(b)));
    assert_eq!(value(P::ListOfObjectPropertyReferences), vec![]);
    assert_eq!(
        value(P::PriorityForWriting),
        app(ApplicationValue::Unsigned(16))
    );
    assert_eq!(
        value(P::StatusFlags),
        app(ApplicationValue::BitString(BitString::from_bits(
            &[false; 4]
        )))
    );
    assert_eq!(value(P::Reliability), app(ApplicationValue::Enumerated(0)));
    assert_eq!(
        value(P::OutOfService),
        app(ApplicationValue::Boolean(false))
    );
    // Array indexes of the weekly schedule: 7 elements, Monday first.
    assert_eq!(
        device
            .read("schedule,1", P::WeeklySchedule, Some(0))
            .unwrap(),
        app(ApplicationValue::Unsigned(7))
    );
    assert_eq!(
        device
            .read("schedule,1", P::WeeklySchedule, Some(1))
            .unwrap(),
        encoded(|b| weekday.encode(b))
    );
    assert_eq!(
        device
            .read("schedule,1", P::ExceptionSchedule, Some(0))
            .unwrap(),
        app(ApplicationValue::Unsigned(1))
    );

    // The present value follows the clock.
    let pv = |device: &mut Device| device.read("schedule,1", P::PresentValue, None).unwrap();
    device.clock(at(2025, 6, 4, 18, 0), Duration::from_secs(1));
    assert_eq!(
        pv(&mut device),
        app(ApplicationValue::Real(65.0)),
        "NULL at 18:00: default"
    );
    device.clock(at(2025, 6, 7, 10, 0), Duration::from_secs(1));
    assert_eq!(
        pv(&mut device),
        app(ApplicationValue::Real(65.0)),
        "Saturday"
    );
    // Christmas 2025 is a Thursday: the calendar's holiday (60.0) beats the weekly 72.0.
    device.clock(at(2025, 12, 25, 10, 0), Duration::from_secs(1));
    assert_eq!(pv(&mut device), app(ApplicationValue::Real(60.0)));
    device.clock(at(2025, 12, 26, 10, 0), Duration::from_secs(1));
    assert_eq!(pv(&mut device), app(ApplicationValue::Real(72.0)));
}

#[test]
fn stress_calendar_and_notification_class_answer_every_property() {
    let mut device = Device::stress();
    device.clock(at(2025, 11, 27, 9, 0), Duration::from_secs(1));
    let all = read_all(&mut device, "calendar,1");
    let properties: Vec<P> = all.iter().map(|(p, _)| *p).collect();
    assert_eq!(
        properties,
        [
            P::ObjectIdentifier,
            P::ObjectName,
            P::ObjectType,
            P::PropertyList,
            P::PresentValue,
            P::Description,
            P::DateList
        ]
    );
    assert_eq!(property_list(&all), properties[4..]);
    let value =
        |all: &[(P, Vec<Element>)], p: P| all.iter().find(|(q, _)| *q == p).unwrap().1.clone();
    // Thanksgiving 2025 (fourth Thursday of November).
    assert_eq!(
        value(&all, P::PresentValue),
        app(ApplicationValue::Boolean(true))
    );
    let any_year = |month, day| {
        CalendarEntry::Date(Date {
            year_since_1900: 255,
            month,
            day,
            weekday: 255,
        })
    };
    let entries = [
        any_year(1, 1),
        any_year(12, 25),
        CalendarEntry::WeekNDay(WeekNDay {
            month: 11,
            week_of_month: 4,
            day_of_week: 4,
        }),
    ];
    let date_list: Vec<Element> = entries
        .iter()
        .flat_map(|e| encoded(|b| e.encode(b)))
        .collect();
    assert_eq!(value(&all, P::DateList), date_list);
    for (when, expected) in [
        (at(2025, 11, 28, 9, 0), false),
        (at(2026, 1, 1, 0, 0), true),
        (at(2026, 1, 2, 0, 0), false),
        (at(2026, 12, 25, 23, 59), true),
    ] {
        device.clock(when, Duration::from_secs(1));
        assert_eq!(
            device.read("calendar,1", P::PresentValue, None).unwrap(),
            app(ApplicationValue::Boolean(expected)),
            "{when:?}"
        );
    }

    let all = read_all(&mut device, "notification-class,1");
    let properties: Vec<P> = all.iter().map(|(p, _)| *p).collect();
    assert_eq!(
        properties,
        [
            P::ObjectIdentifier,
            P::ObjectName,
            P::ObjectType,
            P::PropertyList,
            P::Description,
            P::NotificationClass,
            P::Priority,
            P::AckRequired,
            P::RecipientList
        ]
    );
    assert_eq!(property_list(&all), properties[4..]);
    assert_eq!(
        value(&all, P::NotificationClass),
        app(ApplicationValue::Unsigned(1))
    );
    assert_eq!(
        value(&all, P::Priority),
        [3, 3, 3]
            .map(|p| app(ApplicationValue::Unsigned(p)))
            .concat()
    );
    assert_eq!(
        value(&all, P::AckRequired),
        app(ApplicationValue::BitString(BitString::from_bits(&[
            true, false, false
        ])))
    );
    let recipient = NcDestination {
        valid_days: BitString::from_bits(&[true; 7]),
        from_time: Time::new(0, 0, 0, 0),
        to_time: Time::new(23, 59, 59, 99),
        recipient: Recipient::Device(id("device,999")),
        process_identifier: 1,
        issue_confirmed_notifications: false,
        transitions: BitString::from_bits(&[true; 3]),
    };
    assert_eq!(
        value(&all, P::RecipientList),
        encoded(|b| recipient.encode(b))
    );
    assert_eq!(
        device
            .read("notification-class,1", P::Priority, Some(2))
            .unwrap(),
        app(ApplicationValue::Unsigned(3))
    );
}

#[test]
fn schedule_and_calendar_writes_are_checked_and_take_effect() {
    let mut device = Device::stress();
    device.clock(at(2025, 6, 4, 10, 0), Duration::from_secs(1));
    // A Wednesday written to 19.5 from 09:00.
    let wednesday = DailySchedule {
        day_schedule: vec![TimeValue {
            time: Time::new(9, 0, 0, 0),
            value: ApplicationValue::Real(19.5),
        }],
    };
    assert_eq!(
        device.write(
            "schedule,1",
            P::WeeklySchedule,
            Some(3),
            encoded(|b| wednesday.encode(b))
        ),
        Answer::Simple
    );
    assert_eq!(
        device.read("schedule,1", P::PresentValue, None).unwrap(),
        app(ApplicationValue::Real(19.5)),
        "re-evaluated right after the write"
    );
    // Six days are not a week; a bare time is not a daily schedule.
    let six: Vec<Element> = (0..6)
        .flat_map(|_| encoded(|b| wednesday.encode(b)))
        .collect();
    assert_eq!(
        device.write("schedule,1", P::WeeklySchedule, None, six),
        Answer::Error(error(ErrorClass::Property, ErrorCode::ValueOutOfRange))
    );
    assert_eq!(
        device.write(
            "schedule,1",
            P::WeeklySchedule,
            Some(1),
            app(ApplicationValue::Time(Time::new(8, 0, 0, 0)))
        ),
        Answer::Error(error(ErrorClass::Property, ErrorCode::InvalidDataType))
    );
    // An event priority of 17 is out of range.
    let bad_event = SpecialEvent {
        period: SpecialEventPeriod::CalendarReference(id("calendar,1")),
        time_values: vec![],
        event_priority: 17,
    };
    assert_eq!(
        device.write(
            "schedule,1",
            P::ExceptionSchedule,
            None,
            encoded(|b| bad_event.encode(b))
        ),
        Answer::Error(error(ErrorClass::Property, ErrorCode::ValueOutOfRange))
    );
    // Present-value of a schedule is written only out of service.
    assert_eq!(
        device.write(
            "schedule,1",
            P::PresentValue,
            None,
            app(ApplicationValue::Real(1.0))
        ),
        Answer::Error(error(ErrorClass::Property, ErrorCode::WriteAccessDenied))
    );
    // The calendar's date-list: add today, remove it again, remove what is not there.
    let today = CalendarEntry::Date(Date::new(2025, 6, 4, 3));
    let add = ConfirmedRequest::AddListElement(ListElementRequest {
        object: id("calendar,1"),
        property: P::DateList,
        array_index: None,
        elements: encoded(|b| today.encode(b)),
    });
    assert_eq!(device.ask(&add), Answer::Simple);
    assert_eq!(device.ask(&add), Answer::Simple, "adding twice keeps one");
    assert_eq!(
        device.read("calendar,1", P::PresentValue, None).unwrap(),
        app(ApplicationValue::Boolean(true))
    );
    // The holiday now applies: 60.0 beats the written Wednesday.
    assert_eq!(
        device.read("schedule,1", P::PresentValue, None).unwrap(),
        app(ApplicationValue::Real(60.0))
    );
    let remove = |elements| {
        ConfirmedRequest::RemoveListElement(ListElementRequest {
            object: id("calendar,1"),
            property: P::DateList,
            array_index: None,
            elements,
        })
    };
    assert_eq!(
        device.ask(&remove(encoded(|b| today.encode(b)))),
        Answer::Simple
    );
    assert_eq!(
        device.read("calendar,1", P::DateList, None).unwrap().len(),
        3
    );
    let two = [today, CalendarEntry::Date(Date::new(2025, 1, 1, 3))];
    let elements: Vec<Element> = two.iter().flat_map(|e| encoded(|b| e.encode(b))).collect();
    assert_eq!(
        device.ask(&remove(elements)),
        Answer::ListError(ChangeListError {
            error: error(ErrorClass::Services, ErrorCode::ListElementNotFound),
            first_failed_element_number: 1,
        })
    );
    // Not a list.
    let not_a_list = ConfirmedRequest::AddListElement(ListElementRequest {
        object: id("calendar,1"),
        property: P::PresentValue,
        array_index: None,
        elements: app(ApplicationValue::Boolean(true)),
    });
    assert_eq!(
        device.ask(&not_a_list),
        Answer::ListError(ChangeListError {
            error: error(ErrorClass::Services, ErrorCode::PropertyIsNotAList),
            first_failed_element_number: 0,
        })
    );
    // Recipient-list: a new destination, then a malformed one.
    let destination = NcDestination {
        valid_days: BitString::from_bits(&[true, true, true, true, true, false, false]),
        from_time: Time::new(8, 0, 0, 0),
        to_time: Time::new(17, 0, 0, 0),
        recipient: Recipient::Device(id("device,7")),
        process_identifier: 3,
        issue_confirmed_notifications: true,
        transitions: BitString::from_bits(&[true, false, true]),
    };
    let add_recipient = ConfirmedRequest::AddListElement(ListElementRequest {
        object: id("notification-class,1"),
        property: P::RecipientList,
        array_index: None,
        elements: encoded(|b| destination.encode(b)),
    });
    assert_eq!(device.ask(&add_recipient), Answer::Simple);
    assert_eq!(
        device
            .read("notification-class,1", P::RecipientList, None)
            .unwrap()
            .len(),
        14
    );
    assert_eq!(
        device.write(
            "notification-class,1",
            P::Priority,
            Some(1),
            app(ApplicationValue::Unsigned(256))
        ),
        Answer::Error(error(ErrorClass::Property, ErrorCode::ValueOutOfRange))
    );
    assert_eq!(
        device.write(
            "notification-class,1",
            P::Priority,
            Some(1),
            app(ApplicationValue::Unsigned(200))
        ),
        Answer::Simple
    );
    assert_eq!(
        device.write(
            "notification-class,1",
            P::AckRequired,
            None,
            app(ApplicationValue::BitString(BitString::from_bits(&[
                true, true
            ])))
        ),
        Answer::Error(error(ErrorClass::Property, ErrorCode::ValueOutOfRange))
    );
    assert_eq!(
        device.write(
            "notification-class,1",
            P::NotificationClass,
            None,
            app(ApplicationValue::Unsigned(2))
        ),
        Answer::Error(error(ErrorClass::Property, ErrorCode::WriteAccessDenied))
    );
}

#[test]
fn a_schedule_commands_the_properties_it_references() {
    let mut profile = stress_profile();
    let mut spec = ObjectSpec::from_json(
        r#"{"type": "schedule", "instance": 2, "name": "Lights",
            "weekly_schedule": [[["07:00", {"enumerated": 1}], ["19:00", null]], [], [], [], [], [], []],
            "schedule_default": {"enumerated": 0},
            "references": ["bv,2:present-value", "bo,1:present-value"],
            "priority_for_writing": 9}"#,
    )
    .unwrap();
    spec.description = "lighting".into();
    profile.objects.push(spec);
    let mut device = Device::new(&profile);
    // Monday 2025-06-02 06:00: the default (inactive) is written at priority 9.
    device.clock(at(2025, 6, 2, 6, 0), Duration::from_secs(1));
    let slot =
        |device: &mut Device, object: &str| device.read(object, P::PriorityArray, Some(9)).unwrap();
    assert_eq!(
        slot(&mut device, "bv,2"),
        app(ApplicationValue::Enumerated(0))
    );
    device.clock(at(2025, 6, 2, 7, 0), Duration::from_secs(1));
    assert_eq!(
        slot(&mut device, "bv,2"),
        app(ApplicationValue::Enumerated(1))
    );
    assert_eq!(
        slot(&mut device, "bo,1"),
        app(ApplicationValue::Enumerated(1))
    );
    assert_eq!(
        device.read("bo,1", P::PresentValue, None).unwrap(),
        app(ApplicationValue::Enumerated(1))
    );
    // The NULL at 19:00 hands back to the default: written, not relinquished.
    device.clock(at(2025, 6, 2, 19, 0), Duration::from_secs(1));
    assert_eq!(
        slot(&mut device, "bo,1"),
        app(ApplicationValue::Enumerated(0))
    );
    // Out of service: evaluation and writes stop.
    assert_eq!(
        device.write(
            "schedule,2",
            P::OutOfService,
            None,
            app(ApplicationValue::Boolean(true))
        ),
        Answer::Simple
    );
    device.clock(at(2025, 6, 3, 8, 0), Duration::from_secs(1));
    assert_eq!(
        slot(&mut device, "bo,1"),
        app(ApplicationValue::Enumerated(0))
    );
}

#[test]
fn read_range_by_position_sequence_number_and_time() {
    let mut profile = stress_profile();
    profile.objects.push(
        ObjectSpec::from_json(
            r#"{"type": "trend-log", "instance": 1, "name": "AI-1 log", "log": "ai,1:pv",
                "log_interval": 1, "buffer_size": 4}"#,
        )
        .unwrap(),
    );
    let mut device = Device::new(&profile);
    // Object-list by position: items 2..=4, then the two before item 3.
    let range = |object: &str, property, range| {
        ConfirmedRequest::ReadRange(ReadRangeRequest {
            object: id(object),
            property,
            array_index: None,
            range,
        })
    };
    let ack = |answer: Answer| match answer {
        Answer::Complex(ComplexAckParameters::ReadRange(ack)) => ack,
        other => panic!("{other:?}"),
    };
    let forward = ack(device.ask(&range(
        "device,400",
        P::ObjectList,
        Some(RangeSpec::ByPosition {
            reference_index: 2,
            count: 3,
        }),
    )));
    assert_eq!(forward.item_count, 3);
    assert_eq!(
        forward.item_data,
        ["ai,1", "ai,2", "ai,3"]
            .map(|o| Element::Application(ApplicationValue::ObjectIdentifier(id(o))))
            .to_vec()
    );
    assert!(!forward.result_flags.first_item && !forward.result_flags.last_item);
    let backward = ack(device.ask(&range(
        "device,400",
        P::ObjectList,
        Some(RangeSpec::ByPosition {
            reference_index: 3,
            count: -5,
        }),
    )));
    assert_eq!(backward.item_count, 3);
    assert!(backward.result_flags.first_item);
    assert_eq!(
        ack(device.ask(&range("calendar,1", P::DateList, None))).item_count,
        3
    );
    assert_eq!(
        device.ask(&range("calendar,1", P::PresentValue, None)),
        Answer::Error(error(ErrorClass::Services, ErrorCode::PropertyIsNotAList))
    );
    assert_eq!(
        device.ask(&range(
            "calendar,1",
            P::DateList,
            Some(RangeSpec::BySequenceNumber {
                reference_sequence_number: 1,
                count: 1
            })
        )),
        Answer::Error(error(ErrorClass::Property, ErrorCode::DatatypeNotSupported))
    );

    // The trend log samples AI-1 once a second; six samples, four kept.
    for second in 0..6u8 {
        let when = DateTime {
            date: Date::new(2025, 6, 4, 3),
            time: Time::new(12, 0, second, 0),
        };
        device
            .server
            .database_mut()
            .set_local(
                id("ai,1"),
                P::PresentValue,
                buildwire_bacnet::objects::PropertyData::Single(ApplicationValue::Real(f32::from(
                    second,
                ))),
            )
            .unwrap();
        device.clock(when, Duration::from_secs(1));
    }
    assert_eq!(
        device.read("trend-log,1", P::RecordCount, None).unwrap(),
        app(ApplicationValue::Unsigned(4))
    );
    assert_eq!(
        device
            .read("trend-log,1", P::TotalRecordCount, None)
            .unwrap(),
        app(ApplicationValue::Unsigned(6))
    );
    assert_eq!(
        device.read("trend-log,1", P::LogBuffer, None),
        Err(error(ErrorClass::Property, ErrorCode::ReadAccessDenied))
    );
    let records = |ack: &ReadRangeAck| -> Vec<f32> {
        let mut bytes = Vec::new();
        buildwire_bacnet::encoding::abstract_syntax::encode_elements(&ack.item_data, &mut bytes);
        let mut reader = Reader::new(&bytes);
        let mut out = Vec::new();
        while !reader.is_empty() {
            match LogRecord::decode(&mut reader).unwrap().datum {
                LogDatum::Real(v) => out.push(v),
                other => panic!("{other:?}"),
            }
        }
        out
    };
    let all = ack(device.ask(&range("trend-log,1", P::LogBuffer, None)));
    assert_eq!(records(&all), [2.0, 3.0, 4.0, 5.0]);
    assert!(all.result_flags.first_item && all.result_flags.last_item);
    let by_sequence = ack(device.ask(&range(
        "trend-log,1",
        P::LogBuffer,
        Some(RangeSpec::BySequenceNumber {
            reference_sequence_number: 4,
            count: 2,
        }),
    )));
    assert_eq!(records(&by_sequence), [3.0, 4.0]);
    assert_eq!(by_sequence.first_sequence_number, Some(4));
    let by_time = ack(device.ask(&range(
        "trend-log,1",
        P::LogBuffer,
        Some(RangeSpec::ByTime {
            reference_time: DateTime {
                date: Date::new(2025, 6, 4, 3),
                time: Time::new(12, 0, 3, 0),
            },
            count: -10,
        }),
    )));
    assert_eq!(records(&by_time), [2.0], "strictly older than 12:00:03");
    assert_eq!(by_time.first_sequence_number, Some(3));
    assert!(by_time.result_flags.first_item && !by_time.result_flags.more_items);
    // Writing 0 to record-count empties the buffer; other values are refused.
    assert_eq!(
        device.write(
            "trend-log,1",
            P::RecordCount,
            None,
            app(ApplicationValue::Unsigned(3))
        ),
        Answer::Error(error(ErrorClass::Property, ErrorCode::ValueOutOfRange))
    );
    assert_eq!(
        device.write(
            "trend-log,1",
            P::RecordCount,
            None,
            app(ApplicationValue::Unsigned(0))
        ),
        Answer::Simple
    );
    assert_eq!(
        ack(device.ask(&range("trend-log,1", P::LogBuffer, None))).item_count,
        0
    );
}

#[test]
fn read_range_cuts_to_what_the_client_accepts() {
    let mut device = Device::new(&profiles::large_profile(300));
    // A client taking 206-octet APDUs and no segments.
    let mut payload = Vec::new();
    ConfirmedRequest::ReadRange(ReadRangeRequest {
        object: id("device,500"),
        property: P::ObjectList,
        array_index: None,
        range: None,
    })
    .encode(&mut payload);
    let mut apdu = Vec::new();
    Apdu::ConfirmedRequest {
        segmented_response_accepted: false,
        max_segments: MaxSegments::Unspecified,
        max_apdu: MaxApdu::Up206,
        invoke_id: 1,
        segment: None,
        service: ConfirmedServiceChoice::ReadRange,
        payload: &payload,
    }
    .encode(&mut apdu);
    device.send_apdu(&apdu);
    let answer = apdu_of(&device.sent()[0].npdu);
    assert!(answer.len() <= 206, "{}", answer.len());
    let Answer::Complex(ComplexAckParameters::ReadRange(ack)) = Answer::of(&answer) else {
        panic!("{answer:?}");
    };
    assert!(ack.result_flags.first_item && ack.result_flags.more_items);
    assert!(!ack.result_flags.last_item);
    assert_eq!(ack.item_count as usize, ack.item_data.len());
    assert!(ack.item_count >= 30, "{}", ack.item_count);
}

#[test]
fn device_communication_control_with_password_and_duration() {
    let mut device = Device::stress();
    device
        .server
        .set_passwords(Some("open sesame".into()), Some("reboot".into()));
    let dcc = |enable_disable, minutes, password: Option<&str>| {
        ConfirmedRequest::DeviceCommunicationControl(DeviceCommunicationControlRequest {
            time_duration: minutes,
            enable_disable,
            password: password.map(str::to_owned),
        })
    };
    assert_eq!(
        device.ask(&dcc(EnableDisable::Disable, Some(2), Some("wrong"))),
        Answer::Error(error(ErrorClass::Security, ErrorCode::PasswordFailure))
    );
    assert_eq!(
        device.ask(&dcc(EnableDisable::Disable, Some(2), Some("open sesame"))),
        Answer::Simple
    );
    assert_eq!(
        device.server.communication_state(),
        CommunicationState::Disabled
    );
    assert_eq!(
        device.server.poll_event(),
        Some(DeviceEvent::CommunicationControl(
            CommunicationState::Disabled
        ))
    );
    // Disabled: a read and a Who-Is get nothing back.
    let read = ConfirmedRequest::ReadProperty(ReadPropertyRequest {
        object: id("ai,1"),
        property: P::PresentValue,
        array_index: None,
    });
    assert!(device.exchange(&read).is_empty());
    device.unconfirmed(&UnconfirmedRequest::WhoIs(
        buildwire_bacnet::services::WhoIs { range: None },
    ));
    assert!(device.sent().is_empty());
    // Two minutes later communication is back.
    device.now += Duration::from_secs(120);
    device.server.handle_timeout(device.now);
    assert_eq!(
        device.server.communication_state(),
        CommunicationState::Enabled
    );
    assert_eq!(device.exchange(&read).len(), 1);
    // Disable-initiation: requests answered, Who-Is answered, COV notifications not sent.
    assert_eq!(
        device.ask(&dcc(
            EnableDisable::DisableInitiation,
            None,
            Some("open sesame")
        )),
        Answer::Simple
    );
    assert_eq!(device.exchange(&read).len(), 1);
    device.unconfirmed(&UnconfirmedRequest::WhoIs(
        buildwire_bacnet::services::WhoIs { range: None },
    ));
    assert_eq!(device.sent().len(), 1, "I-Am");
    let subscribe =
        ConfirmedRequest::SubscribeCov(SubscribeCovRequest::subscribe(1, id("av,1"), false, 60));
    assert_eq!(
        device.exchange(&subscribe).len(),
        1,
        "SimpleACK, no notification"
    );
    assert_eq!(device.server.cov_stats().suppressed, 1);
    assert_eq!(
        device.ask(&dcc(EnableDisable::Enable, None, Some("open sesame"))),
        Answer::Simple
    );
}

#[test]
fn wrong_passwords_slow_their_source_down() {
    let mut device = Device::stress();
    device
        .server
        .set_passwords(Some("open sesame".into()), Some("reboot".into()));
    let dcc = |password: &str| {
        ConfirmedRequest::DeviceCommunicationControl(DeviceCommunicationControlRequest {
            time_duration: None,
            enable_disable: EnableDisable::Enable,
            password: Some(password.to_owned()),
        })
    };
    let reinitialize = |password: &str| {
        ConfirmedRequest::ReinitializeDevice(ReinitializeDeviceRequest {
            state: ReinitializedState::Warmstart,
            password: Some(password.to_owned()),
        })
    };
    let failure = || Answer::Error(error(ErrorClass::Security, ErrorCode::PasswordFailure));
    let other_port = SocketAddrV4::new(*CLIENT.ip(), 50_000);
    let other_host = SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 3), 47808);

    // Three wrong passwords are free (DeviceCommunicationControl and ReinitializeDevice
    // count together); the right one is still taken at once.
    assert_eq!(device.ask(&dcc("wrong")), failure());
    assert_eq!(device.ask(&reinitialize("wrong")), failure());
    assert_eq!(device.ask(&dcc("wrong")), failure());
    // The fourth closes the source for a second: even the right password fails, from any
    // port of that host; another host is not slowed down.
    assert_eq!(device.ask(&dcc("wrong")), failure());
    assert_eq!(device.ask(&dcc("open sesame")), failure());
    assert_eq!(device.ask_from(other_port, &dcc("open sesame")), failure());
    assert_eq!(
        device.ask_from(other_host, &dcc("open sesame")),
        Answer::Simple
    );
    device.now += Duration::from_millis(999);
    assert_eq!(device.ask(&dcc("open sesame")), failure());

    // Each further wrong password, once the pause is over, doubles it: 2 s, 4 s, ...,
    // 32 s, then 60 s at most.
    let mut open_at = device.now + Duration::from_millis(1);
    for pause in [2, 4, 8, 16, 32, 60, 60, 60] {
        device.now = open_at;
        assert_eq!(device.ask(&dcc("wrong")), failure());
        open_at = device.now + Duration::from_secs(pause);
        device.now = open_at - Duration::from_millis(1);
        assert_eq!(
            device.ask(&dcc("open sesame")),
            failure(),
            "within {pause} s"
        );
    }
    device.now = open_at;
    // The right password once the pause is over forgets the source: three free ones again.
    assert_eq!(device.ask(&reinitialize("reboot")), Answer::Simple);
    for _ in 0..3 {
        assert_eq!(device.ask(&dcc("wrong")), failure());
    }
    assert_eq!(device.ask(&dcc("open sesame")), Answer::Simple);
}

#[test]
fn reinitialize_device_checks_its_password_and_restarts() {
    let mut device = Device::stress();
    device.server.set_passwords(None, Some("reboot".into()));
    let reinitialize = |state, password: Option<&str>| {
        ConfirmedRequest::ReinitializeDevice(ReinitializeDeviceRequest {
            state,
            password: password.map(str::to_owned),
        })
    };
    assert_eq!(
        device.ask(&reinitialize(ReinitializedState::Coldstart, None)),
        Answer::Error(error(ErrorClass::Security, ErrorCode::PasswordFailure))
    );
    assert_eq!(
        device.ask(&reinitialize(
            ReinitializedState::StartBackup,
            Some("reboot")
        )),
        Answer::Error(error(
            ErrorClass::Services,
            ErrorCode::OptionalFunctionalityNotSupported
        ))
    );
    let subscribe =
        ConfirmedRequest::SubscribeCov(SubscribeCovRequest::subscribe(1, id("av,1"), false, 0));
    device.exchange(&subscribe);
    assert_eq!(device.server.cov_subscriptions(), 1);
    // SimpleACK first, then the I-Am of the restarted device.
    let apdus = device.exchange(&reinitialize(ReinitializedState::Warmstart, Some("reboot")));
    assert_eq!(apdus.len(), 2);
    assert_eq!(Answer::of(&apdus[0]), Answer::Simple);
    assert_eq!(apdus[1][..2], [0x10, 0x00], "an I-Am");
    assert_eq!(device.server.cov_subscriptions(), 0);
    assert_eq!(
        device.server.poll_event(),
        Some(DeviceEvent::Reinitialized(ReinitializedState::Warmstart))
    );
}

#[test]
fn time_synchronization_sets_the_device_clock() {
    let mut device = Device::stress();
    let host = at(2026, 11, 22, 8, 0);
    device.clock(host, Duration::ZERO);
    let set = at(2027, 3, 1, 14, 30);
    device.unconfirmed(&UnconfirmedRequest::TimeSynchronization(
        TimeSynchronizationRequest { time: set },
    ));
    assert_eq!(
        device.read("device,400", P::LocalDate, None).unwrap(),
        app(ApplicationValue::Date(set.date))
    );
    assert_eq!(
        device.read("device,400", P::LocalTime, None).unwrap(),
        app(ApplicationValue::Time(set.time))
    );
    // Ten minutes later on the host, the device clock moved as much.
    device.clock(at(2026, 11, 22, 8, 10), Duration::from_secs(600));
    assert_eq!(
        device.read("device,400", P::LocalTime, None).unwrap(),
        app(ApplicationValue::Time(Time::new(14, 40, 0, 0)))
    );
    // UTC 20:00 at a UTC offset of 300 minutes (US Eastern standard time): 15:00 local.
    device.server.set_utc_offset_minutes(300);
    device.unconfirmed(&UnconfirmedRequest::UtcTimeSynchronization(
        TimeSynchronizationRequest {
            time: at(2027, 3, 1, 20, 0),
        },
    ));
    assert_eq!(
        device.read("device,400", P::LocalTime, None).unwrap(),
        app(ApplicationValue::Time(Time::new(15, 0, 0, 0)))
    );
    assert_eq!(
        device.server.poll_event(),
        Some(DeviceEvent::TimeSynchronized {
            time: set,
            utc: false
        })
    );
}

#[test]
fn who_has_by_name_and_by_identifier() {
    let mut device = Device::stress();
    for (object, expected) in [
        (WhoHasObject::Name("AV-3".into()), Some(id("av,3"))),
        (
            WhoHasObject::Identifier(id("calendar,1")),
            Some(id("calendar,1")),
        ),
        (WhoHasObject::Name("nowhere".into()), None),
        (WhoHasObject::Identifier(id("ai,77")), None),
    ] {
        device.unconfirmed(&UnconfirmedRequest::WhoHas(WhoHas {
            range: None,
            object,
        }));
        let sent = device.sent();
        match expected {
            Some(found) => {
                assert_eq!(sent.len(), 1);
                assert_eq!(sent[0].destination, Destination::Broadcast);
                let apdu = apdu_of(&sent[0].npdu);
                let Apdu::UnconfirmedRequest { payload, .. } =
                    Apdu::decode(&mut Reader::new(&apdu)).unwrap()
                else {
                    panic!()
                };
                let i_have =
                    buildwire_bacnet::services::IHave::decode(&mut Reader::new(payload)).unwrap();
                assert_eq!(i_have.device, id("device,400"));
                assert_eq!(i_have.object, found);
            }
            None => assert!(sent.is_empty()),
        }
    }
}

#[test]
fn confirmed_notification_follows_the_simple_ack_and_shows_in_the_device() {
    let mut device = Device::stress();
    device.clock(at(2026, 1, 5, 9, 0), Duration::ZERO);
    let subscribe =
        ConfirmedRequest::SubscribeCov(SubscribeCovRequest::subscribe(42, id("ai,3"), true, 300));
    let apdus = device.exchange(&subscribe);
    assert_eq!(apdus.len(), 2);
    assert_eq!(Answer::of(&apdus[0]), Answer::Simple);
    let Apdu::ConfirmedRequest {
        invoke_id,
        service,
        payload,
        ..
    } = Apdu::decode(&mut Reader::new(&apdus[1])).unwrap()
    else {
        panic!("{:?}", apdus[1]);
    };
    assert_eq!(service, ConfirmedServiceChoice::ConfirmedCovNotification);
    let notification = CovNotificationRequest::decode(&mut Reader::new(payload)).unwrap();
    assert_eq!(notification.subscriber_process_identifier, 42);
    assert_eq!(notification.monitored_object, id("ai,3"));
    assert_eq!(notification.time_remaining, 300);
    // The subscriber acknowledges.
    let mut ack = Vec::new();
    Apdu::SimpleAck {
        invoke_id,
        service: ConfirmedServiceChoice::ConfirmedCovNotification,
    }
    .encode(&mut ack);
    device.send_apdu(&ack);
    assert!(device.sent().is_empty());
    // The Device lists the subscription.
    let listed = device
        .read("device,400", P::ActiveCovSubscriptions, None)
        .unwrap();
    let mut bytes = Vec::new();
    buildwire_bacnet::encoding::abstract_syntax::encode_elements(&listed, &mut bytes);
    let entry = CovSubscription::decode(&mut Reader::new(&bytes)).unwrap();
    assert_eq!(entry.recipient.process_identifier, 42);
    assert_eq!(entry.monitored.object, id("ai,3"));
    assert_eq!(entry.monitored.property, P::PresentValue);
    assert!(entry.issue_confirmed_notifications);
    assert_eq!(entry.time_remaining, 300);
    assert!(matches!(entry.recipient.recipient, Recipient::Address(_)));
    // The subscription's lifetime ends: gone from the table and the list.
    device.now += Duration::from_secs(301);
    device.server.handle_timeout(device.now);
    assert_eq!(device.server.cov_subscriptions(), 0);
    assert_eq!(
        device
            .read("device,400", P::ActiveCovSubscriptions, None)
            .unwrap(),
        vec![]
    );
}
