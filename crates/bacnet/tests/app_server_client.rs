//! The device server and the client talking over real UDP on 127.0.0.1: every service the
//! application layer offers, errors and rejects, segmentation at max-APDU 480, timeouts and
//! duplicate detection driven with raw datagrams.

#[allow(dead_code)]
#[path = "../../bench/src/bacnet/profiles.rs"]
mod profiles;

use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::Duration;

use buildwire_bacnet::apdu::{Apdu, BacnetError, ConfirmedServiceChoice, MaxApdu, MaxSegments};
use buildwire_bacnet::app::{ClientError, Destination};
use buildwire_bacnet::driver::{BacnetClient, BacnetServer, BacnetServerConfig, ClientConfig};
use buildwire_bacnet::encoding::{ApplicationValue, Element, ObjectPropertyReference};
use buildwire_bacnet::enums::{ErrorClass, ErrorCode, ObjectType, RejectReason};
use buildwire_bacnet::link::Bvll;
use buildwire_bacnet::network::Npdu;
use buildwire_bacnet::network::npdu::NpduBody;
use buildwire_bacnet::services::{
    InstanceRange, PropertyReference, ReadAccessSpecification, ReadResult, WhoHasObject,
    WriteAccessSpecification,
};
use buildwire_bacnet::tsm::TsmConfig;
use buildwire_bacnet::{ObjectIdentifier, PropertyIdentifier as P, PropertyValue, Reader};
use profiles::{large_profile, stress_profile};

const LOCALHOST: Ipv4Addr = Ipv4Addr::LOCALHOST;
const LOOPBACK_BROADCAST: Ipv4Addr = Ipv4Addr::new(127, 255, 255, 255);

fn id(text: &str) -> ObjectIdentifier {
    text.parse().expect("test setup")
}

fn real(value: f32) -> Vec<Element> {
    vec![Element::Application(ApplicationValue::Real(value))]
}

async fn stress_server() -> BacnetServer {
    let mut config = BacnetServerConfig::new(
        SocketAddrV4::new(LOCALHOST, 0),
        stress_profile().build().expect("test setup"),
    );
    config.announce = false;
    BacnetServer::start(config).await.expect("test setup")
}

async fn client() -> BacnetClient {
    BacnetClient::bind(SocketAddrV4::new(LOCALHOST, 0), None)
        .await
        .expect("test setup")
}

#[tokio::test]
async fn reads_the_present_value_of_every_object_type() {
    let server = stress_server().await;
    let client = client().await;
    let objects: Vec<ObjectIdentifier> =
        server.with_database(|db| db.objects().map(|o| o.identifier()).collect());
    let mut types_read = std::collections::HashSet::new();
    for object in objects {
        let expected = server.with_database(|db| db.read_property(object, P::PresentValue, None));
        let got = client
            .read(server.local_addr(), object, P::PresentValue, None)
            .await;
        match expected {
            Ok(value) => {
                assert_eq!(got.unwrap(), value, "{object}");
                types_read.insert(object.object_type());
            }
            Err(error) => match got {
                Err(ClientError::Error { error: e, .. }) => {
                    assert_eq!((e.class, e.code), (error.class, error.code), "{object}");
                }
                other => panic!("{object}: {other:?}"),
            },
        }
    }
    // AI, AO, AV, BI, BO, BV, MSI, MSV, Schedule, Calendar all have a present-value.
    assert_eq!(types_read.len(), 10, "{types_read:?}");
    assert_eq!(
        client
            .read_str(server.local_addr(), "ai,1", "pv")
            .await
            .unwrap(),
        real(61.5)
    );
}

#[tokio::test]
async fn write_with_priority_shows_in_the_priority_array() {
    let server = stress_server().await;
    let client = client().await;
    let av = id("av,1");
    client
        .write(
            server.local_addr(),
            av,
            P::PresentValue,
            real(42.5),
            Some(8),
            None,
        )
        .await
        .unwrap();
    let slot = client
        .read(server.local_addr(), av, P::PriorityArray, Some(8))
        .await
        .unwrap();
    assert_eq!(slot, real(42.5));
    let whole = client
        .read(server.local_addr(), av, P::PriorityArray, None)
        .await
        .unwrap();
    assert_eq!(whole.len(), 16);
    assert_eq!(whole[7], real(42.5)[0]);
    assert_eq!(whole[0], Element::Application(ApplicationValue::Null));
    let pv = client
        .read(server.local_addr(), av, P::PresentValue, None)
        .await
        .unwrap();
    assert_eq!(pv, real(42.5));
    // Relinquish: NULL at the same priority gives the relinquish default back.
    client
        .write(
            server.local_addr(),
            av,
            P::PresentValue,
            vec![Element::Application(ApplicationValue::Null)],
            Some(8),
            None,
        )
        .await
        .unwrap();
    let slot = client
        .read(server.local_addr(), av, P::PriorityArray, Some(8))
        .await
        .unwrap();
    assert_eq!(slot, vec![Element::Application(ApplicationValue::Null)]);
    // A read-only property answers an Error PDU with class and code.
    let error = client
        .write(
            server.local_addr(),
            av,
            P::ObjectType,
            real(1.0),
            None,
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(
        error,
        ClientError::Error {
            service: ConfirmedServiceChoice::WriteProperty,
            error: BacnetError {
                class: ErrorClass::Property,
                code: ErrorCode::WriteAccessDenied
            }
        }
    );
    assert!(error.to_string().contains("write-access-denied"), "{error}");
}

fn reference(property: P) -> PropertyReference {
    PropertyReference {
        property,
        array_index: None,
    }
}

#[tokio::test]
async fn read_multiple_expands_all_required_optional_and_reports_errors() {
    let server = stress_server().await;
    let client = client().await;
    let ai = id("ai,1");
    let specs = vec![
        ReadAccessSpecification {
            object: ai,
            properties: vec![reference(P::All)],
        },
        ReadAccessSpecification {
            object: ai,
            properties: vec![reference(P::Required)],
        },
        ReadAccessSpecification {
            object: ai,
            properties: vec![reference(P::Optional)],
        },
        ReadAccessSpecification {
            object: ai,
            properties: vec![reference(P::PresentValue), reference(P::from_u32(9999))],
        },
        ReadAccessSpecification {
            object: id("ai,999"),
            properties: vec![reference(P::PresentValue), reference(P::All)],
        },
    ];
    let results = client
        .read_multiple(server.local_addr(), specs)
        .await
        .unwrap();
    assert_eq!(results.len(), 5);
    let all = server.with_database(|db| db.get(ai).unwrap().property_list().len());
    let (required, optional) = (results[1].results.len(), results[2].results.len());
    assert!(results[0].results.len() >= all, "all lists every property");
    assert_eq!(required + optional, results[0].results.len());
    assert!(
        results[1]
            .results
            .iter()
            .any(|r| r.property == P::PresentValue)
    );
    assert!(
        results[0]
            .results
            .iter()
            .all(|r| matches!(r.result, ReadResult::Value(_)))
    );
    assert_eq!(results[3].results[0].result, ReadResult::Value(real(61.5)));
    assert_eq!(
        results[3].results[1].result,
        ReadResult::Error(BacnetError {
            class: ErrorClass::Property,
            code: ErrorCode::UnknownProperty
        })
    );
    let unknown_object = BacnetError {
        class: ErrorClass::Object,
        code: ErrorCode::UnknownObject,
    };
    assert_eq!(results[4].results.len(), 2);
    for result in &results[4].results {
        assert_eq!(result.result, ReadResult::Error(unknown_object));
    }
    assert_eq!(results[4].results[1].property, P::All);
}

fn write_spec(
    object: ObjectIdentifier,
    values: Vec<(P, Vec<Element>)>,
) -> WriteAccessSpecification {
    WriteAccessSpecification {
        object,
        properties: values
            .into_iter()
            .map(|(property, value)| PropertyValue {
                property,
                array_index: None,
                value,
                priority: Some(10),
            })
            .collect(),
    }
}

#[tokio::test]
async fn write_multiple_succeeds_or_names_the_first_failure() {
    let server = stress_server().await;
    let client = client().await;
    let addr = server.local_addr();
    client
        .write_multiple(
            addr,
            vec![
                write_spec(id("av,1"), vec![(P::PresentValue, real(11.0))]),
                write_spec(id("av,2"), vec![(P::PresentValue, real(12.0))]),
            ],
        )
        .await
        .unwrap();
    assert_eq!(
        client
            .read(addr, id("av,2"), P::PresentValue, None)
            .await
            .unwrap(),
        real(12.0)
    );
    let error = client
        .write_multiple(
            addr,
            vec![
                write_spec(id("av,3"), vec![(P::PresentValue, real(13.0))]),
                write_spec(
                    id("av,4"),
                    vec![(P::PresentValue, real(14.0)), (P::ObjectType, real(0.0))],
                ),
                write_spec(id("av,5"), vec![(P::PresentValue, real(15.0))]),
            ],
        )
        .await
        .unwrap_err();
    assert_eq!(
        error,
        ClientError::WriteMultipleFailed {
            error: BacnetError {
                class: ErrorClass::Property,
                code: ErrorCode::WriteAccessDenied
            },
            first_failed: ObjectPropertyReference {
                object: id("av,4"),
                property: P::ObjectType,
                array_index: None
            }
        }
    );
    // Writes before the failure stay done; the ones after it were not attempted.
    for (object, expected) in [("av,3", 13.0), ("av,4", 14.0), ("av,5", 75.0)] {
        let value = client
            .read(addr, id(object), P::PresentValue, None)
            .await
            .unwrap();
        assert_eq!(value, real(expected), "{object}");
    }
}

/// A server on 127.0.0.1:P with broadcasts, and a client on 127.0.0.2:P so that both
/// receive what the other broadcasts to 127.255.255.255:P.
async fn broadcast_pair() -> (BacnetServer, BacnetClient) {
    let mut config = BacnetServerConfig::new(
        SocketAddrV4::new(LOCALHOST, 0),
        stress_profile().build().expect("test setup"),
    );
    config.broadcast = Some(LOOPBACK_BROADCAST);
    config.announce = false;
    let server = BacnetServer::start(config).await.expect("test setup");
    let client = BacnetClient::bind(
        SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 2), server.local_addr().port()),
        Some(LOOPBACK_BROADCAST),
    )
    .await
    .expect("test setup");
    (server, client)
}

#[tokio::test]
async fn who_is_with_a_range_finds_the_server() {
    let (server, client) = broadcast_pair().await;
    let wait = Duration::from_millis(500);
    let found = client
        .who_is(InstanceRange::new(300, 500), wait)
        .await
        .unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, server.local_addr());
    assert_eq!(found[0].1.device, id("device,400"));
    assert_eq!(found[0].1.max_apdu_length_accepted, 1476);
    let none = client
        .who_is(InstanceRange::new(401, 500), wait)
        .await
        .unwrap();
    assert!(none.is_empty(), "{none:?}");
    // A unicast Who-Is is answered too.
    let direct = client
        .who_is_at(Destination::Unicast(server.local_addr()), None, wait)
        .await
        .unwrap();
    assert_eq!(direct.len(), 1);
}

#[tokio::test]
async fn who_has_by_identifier_and_by_name() {
    let (server, client) = broadcast_pair().await;
    let wait = Duration::from_millis(500);
    let by_id = client
        .who_has(
            Destination::Broadcast,
            WhoHasObject::Identifier(id("bv,2")),
            wait,
        )
        .await
        .unwrap();
    assert_eq!(by_id.len(), 1);
    assert_eq!(by_id[0].0, server.local_addr());
    assert_eq!(by_id[0].1.object_name, "BV-2");
    let by_name = client
        .who_has(
            Destination::Broadcast,
            WhoHasObject::Name("MSV-1".to_owned()),
            wait,
        )
        .await
        .unwrap();
    assert_eq!(by_name.len(), 1);
    assert_eq!(by_name[0].1.object, id("msv,1"));
    let missing = client
        .who_has(
            Destination::Broadcast,
            WhoHasObject::Name("nope".to_owned()),
            wait,
        )
        .await
        .unwrap();
    assert!(missing.is_empty());
}

/// Sends one confirmed request as raw BVLL/NPDU/APDU and returns the decoded answer APDU
/// bytes.
async fn raw_exchange(socket: &tokio::net::UdpSocket, to: SocketAddrV4, apdu: &[u8]) -> Vec<u8> {
    let mut npdu = Vec::new();
    Npdu::local_apdu(apdu, true).encode(&mut npdu);
    let mut datagram = Vec::new();
    Bvll::OriginalUnicastNpdu(&npdu).encode(&mut datagram);
    socket.send_to(&datagram, to).await.expect("test setup");
    receive_apdu(socket).await
}

async fn receive_apdu(socket: &tokio::net::UdpSocket) -> Vec<u8> {
    let mut buf = [0u8; 2048];
    let (n, _) = tokio::time::timeout(Duration::from_secs(2), socket.recv_from(&mut buf))
        .await
        .expect("the server answers")
        .expect("test setup");
    let bvll = Bvll::decode_datagram(&buf[..n]).expect("test setup");
    let npdu =
        Npdu::decode(&mut Reader::new(bvll.npdu().expect("test setup"))).expect("test setup");
    match npdu.body {
        NpduBody::Apdu(apdu) => apdu.to_vec(),
        other => panic!("{other:?}"),
    }
}

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
    apdu
}

async fn raw_socket() -> tokio::net::UdpSocket {
    tokio::net::UdpSocket::bind("127.0.0.1:0")
        .await
        .expect("test setup")
}

#[tokio::test]
async fn unknown_service_is_rejected() {
    let server = stress_server().await;
    let socket = raw_socket().await;
    // AtomicReadFile (6) is not implemented by this device.
    let apdu = confirmed(
        7,
        ConfirmedServiceChoice::AtomicReadFile,
        &[0x0C, 0, 0, 0, 1],
    );
    let answer = raw_exchange(&socket, server.local_addr(), &apdu).await;
    assert_eq!(
        Apdu::decode(&mut Reader::new(&answer)).unwrap(),
        Apdu::Reject {
            invoke_id: 7,
            reason: RejectReason::UnrecognizedService
        }
    );
    // Clause 20.1.8: Reject-PDU = type 6, invoke id, reason 9.
    assert_eq!(answer, [0x60, 0x07, 0x09]);
}

#[tokio::test]
async fn malformed_requests_are_rejected_with_the_right_reason() {
    let server = stress_server().await;
    let socket = raw_socket().await;
    let cases: [(&[u8], RejectReason); 3] = [
        // ReadProperty cut after the object identifier: no property.
        (
            &[0x0C, 0x00, 0x00, 0x00, 0x05],
            RejectReason::MissingRequiredParameter,
        ),
        // ReadProperty with an extra octet string after its parameters.
        (
            &[0x0C, 0x00, 0x00, 0x00, 0x05, 0x19, 0x55, 0x61, 0x01],
            RejectReason::TooManyArguments,
        ),
        // An application tag where context tag 0 belongs.
        (
            &[0xC4, 0x00, 0x00, 0x00, 0x05, 0x19, 0x55],
            RejectReason::InvalidTag,
        ),
    ];
    for (invoke_id, (payload, reason)) in (1u8..).zip(cases) {
        let apdu = confirmed(invoke_id, ConfirmedServiceChoice::ReadProperty, payload);
        let answer = raw_exchange(&socket, server.local_addr(), &apdu).await;
        assert_eq!(
            Apdu::decode(&mut Reader::new(&answer)).unwrap(),
            Apdu::Reject { invoke_id, reason },
            "{payload:02X?}"
        );
    }
}

#[tokio::test]
async fn repeated_invoke_id_with_new_content_gets_a_fresh_answer() {
    let server = stress_server().await;
    let socket = raw_socket().await;
    // Clause F.3.5 ReadProperty of analog-input,5 present-value, then of analog-input,1,
    // both with invoke id 1.
    let first = confirmed(
        1,
        ConfirmedServiceChoice::ReadProperty,
        &[0x0C, 0x00, 0x00, 0x00, 0x05, 0x19, 0x55],
    );
    let second = confirmed(
        1,
        ConfirmedServiceChoice::ReadProperty,
        &[0x0C, 0x00, 0x00, 0x00, 0x01, 0x19, 0x55],
    );
    let a = raw_exchange(&socket, server.local_addr(), &first).await;
    let again = raw_exchange(&socket, server.local_addr(), &first).await;
    assert_eq!(a, again, "a true duplicate is answered from the cache");
    let b = raw_exchange(&socket, server.local_addr(), &second).await;
    assert_ne!(a, b);
    // ComplexACK, invoke 1, ReadProperty, ai,1 present-value REAL 61.5.
    let mut expected = vec![
        0x30, 0x01, 0x0C, 0x0C, 0x00, 0x00, 0x00, 0x01, 0x19, 0x55, 0x3E,
    ];
    expected.push(0x44);
    expected.extend_from_slice(&61.5f32.to_be_bytes());
    expected.push(0x3F);
    assert_eq!(b, expected);
}

#[tokio::test]
async fn object_list_of_1501_entries_is_read_whole_and_by_element_at_max_apdu_480() {
    let small = TsmConfig {
        max_apdu: MaxApdu::Up480,
        max_segments: MaxSegments::MoreThanSixtyFour,
        ..TsmConfig::default()
    };
    let mut config = BacnetServerConfig::new(
        SocketAddrV4::new(LOCALHOST, 0),
        large_profile(1500).build().unwrap(),
    );
    config.announce = false;
    config.tsm = small.clone();
    let server = BacnetServer::start(config).await.unwrap();
    let mut client_config = ClientConfig::new(SocketAddrV4::new(LOCALHOST, 0), None);
    client_config.tsm = small;
    let client = BacnetClient::start(client_config).await.unwrap();
    let device = id("device,500");
    let addr = server.local_addr();
    let whole = client
        .read(addr, device, P::ObjectList, None)
        .await
        .unwrap();
    assert_eq!(whole.len(), 1501);
    assert_eq!(
        whole[0],
        Element::Application(ApplicationValue::ObjectIdentifier(device))
    );
    assert_eq!(
        whole[1500],
        Element::Application(ApplicationValue::ObjectIdentifier(id("av,1500")))
    );
    let length = client
        .read(addr, device, P::ObjectList, Some(0))
        .await
        .unwrap();
    assert_eq!(
        length,
        vec![Element::Application(ApplicationValue::Unsigned(1501))]
    );
    for index in 1..=1501u32 {
        let element = client
            .read(addr, device, P::ObjectList, Some(index))
            .await
            .unwrap();
        assert_eq!(
            element,
            [whole[index as usize - 1].clone()],
            "index {index}"
        );
    }
    let (_, tsm) = server.stats();
    assert!(tsm.segments_sent > 10, "{tsm:?}");
    let beyond = client
        .read(addr, device, P::ObjectList, Some(1502))
        .await
        .unwrap_err();
    assert!(
        matches!(beyond, ClientError::Error { error, .. } if error.code == ErrorCode::InvalidArrayIndex)
    );
    assert_eq!(
        server.with_database(|db| db.get(id("av,1500")).map(|o| o.object_type())),
        Some(ObjectType::AnalogValue)
    );
}

#[tokio::test]
async fn requests_to_a_silent_address_time_out() {
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = match silent.local_addr().unwrap() {
        std::net::SocketAddr::V4(v4) => v4,
        other => panic!("{other}"),
    };
    let mut config = ClientConfig::new(SocketAddrV4::new(LOCALHOST, 0), None);
    config.tsm.apdu_timeout = Duration::from_millis(100);
    config.tsm.retries = 2;
    let client = BacnetClient::start(config).await.unwrap();
    let started = std::time::Instant::now();
    let error = client
        .read(to, id("ai,1"), P::PresentValue, None)
        .await
        .unwrap_err();
    let elapsed = started.elapsed();
    assert_eq!(error, ClientError::Timeout);
    assert!(elapsed >= Duration::from_millis(290), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
    // The request and its two retries reached the silent socket.
    silent.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 64];
    let mut copies = 0;
    while silent.recv_from(&mut buf).is_ok() {
        copies += 1;
    }
    assert_eq!(copies, 3);
    assert!(error.to_string().contains("no answer"), "{error}");
}

#[tokio::test]
async fn write_hook_sees_network_writes_and_shutdown_stops_answers() {
    let server = stress_server().await;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&seen);
    server.set_write_hook(Box::new(move |change, _value| {
        sink.lock().unwrap().push(*change)
    }));
    let client = client().await;
    let addr = server.local_addr();
    client
        .write(addr, id("av,2"), P::PresentValue, real(1.0), Some(5), None)
        .await
        .unwrap();
    let changes = seen.lock().unwrap().clone();
    assert!(
        changes
            .iter()
            .any(|c| c.object == id("av,2") && c.property == P::PresentValue),
        "{changes:?}"
    );
    server.shutdown().await;
    let mut config = ClientConfig::new(SocketAddrV4::new(LOCALHOST, 0), None);
    config.tsm.apdu_timeout = Duration::from_millis(50);
    config.tsm.retries = 0;
    let quick = BacnetClient::start(config).await.unwrap();
    assert_eq!(
        quick.read(addr, id("av,2"), P::PresentValue, None).await,
        Err(ClientError::Timeout)
    );
}

#[tokio::test]
async fn device_local_date_and_time_follow_the_host_clock() {
    use buildwire_bacnet::driver::clock::local_now;
    let server = stress_server().await;
    let client = client().await;
    let device = server.with_database(|db| db.device_identifier());
    let before = local_now();
    let date = client
        .read(server.local_addr(), device, P::LocalDate, None)
        .await
        .unwrap();
    let time = client
        .read(server.local_addr(), device, P::LocalTime, None)
        .await
        .unwrap();
    let after = local_now();
    let [Element::Application(ApplicationValue::Date(date))] = date.as_slice() else {
        panic!("local-date is not one Date: {date:?}");
    };
    let [Element::Application(ApplicationValue::Time(time))] = time.as_slice() else {
        panic!("local-time is not one Time: {time:?}");
    };
    // Answered with the clock of the request: between the two readings taken around it
    // (compared as hundredths of the day; a test run across midnight is the only exception).
    assert!(*date == before.date || *date == after.date, "{date:?}");
    let hundredths = |t: &buildwire_bacnet::encoding::Time| {
        ((u32::from(t.hour) * 60 + u32::from(t.minute)) * 60 + u32::from(t.second)) * 100
            + u32::from(t.hundredths)
    };
    if before.date == after.date {
        assert!(hundredths(&before.time) <= hundredths(time), "{time:?}");
        assert!(hundredths(time) <= hundredths(&after.time), "{time:?}");
    }
}
