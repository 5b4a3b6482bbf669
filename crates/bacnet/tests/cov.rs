//! Change of value end to end over UDP on 127.0.0.1: our client's `subscribe_cov` stream
//! against our device server (SubscribeCOV and SubscribeCOVProperty, confirmed and
//! unconfirmed, increments, local sets, renewal, restart, cancellation), notifications to
//! a subscriber that vanished, and a flood of subscriptions.
#![allow(clippy::unwrap_used)]

#[allow(dead_code)]
#[path = "../../bench/src/bacnet/profiles.rs"]
mod profiles;

use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::Duration;

use buildwire_bacnet::apdu::{Apdu, ConfirmedServiceChoice, MaxApdu, MaxSegments};
use buildwire_bacnet::app::cov::CovLimits;
use buildwire_bacnet::app::{ClientError, CovNotification, CovOptions, Destination, DeviceEvent};
use buildwire_bacnet::driver::{BacnetClient, BacnetServer, BacnetServerConfig, ClientConfig};
use buildwire_bacnet::encoding::{ApplicationValue, BitString, Element, ObjectIdentifier};
use buildwire_bacnet::enums::{ErrorClass, ErrorCode, ReinitializedState};
use buildwire_bacnet::link::Bvll;
use buildwire_bacnet::network::Npdu;
use buildwire_bacnet::objects::PropertyData;
use buildwire_bacnet::services::{
    ConfirmedRequest, PropertyReference, ReinitializeDeviceRequest, SubscribeCovRequest,
};
use buildwire_bacnet::tsm::TsmConfig;
use buildwire_bacnet::{PropertyIdentifier as P, Reader};
use profiles::stress_profile;

const LOCALHOST: Ipv4Addr = Ipv4Addr::LOCALHOST;
const QUIET: Duration = Duration::from_millis(400);

fn id(text: &str) -> ObjectIdentifier {
    text.parse().unwrap()
}

fn real(value: f32) -> Vec<Element> {
    vec![Element::Application(ApplicationValue::Real(value))]
}

async fn server_with(tsm: TsmConfig) -> BacnetServer {
    let mut config = BacnetServerConfig::new(
        SocketAddrV4::new(LOCALHOST, 0),
        stress_profile().build().unwrap(),
    );
    config.announce = false;
    config.tsm = tsm;
    BacnetServer::start(config).await.unwrap()
}

async fn client() -> BacnetClient {
    BacnetClient::bind(SocketAddrV4::new(LOCALHOST, 0), None)
        .await
        .unwrap()
}

fn options(object: &str, confirmed: bool, lifetime: u32) -> CovOptions {
    CovOptions {
        object: id(object),
        property: None,
        cov_increment: None,
        confirmed,
        lifetime,
    }
}

async fn next(subscription: &mut buildwire_bacnet::driver::CovSubscription) -> CovNotification {
    tokio::time::timeout(Duration::from_secs(5), subscription.next())
        .await
        .expect("a notification within 5 s")
        .expect("the stream is open")
}

async fn nothing_within(
    subscription: &mut buildwire_bacnet::driver::CovSubscription,
    wait: Duration,
) {
    if let Ok(Some(extra)) = tokio::time::timeout(wait, subscription.next()).await {
        panic!("unexpected notification {extra:?}");
    }
}

fn value_of(notification: &CovNotification, property: P) -> Vec<Element> {
    notification
        .request
        .values
        .iter()
        .find(|v| v.property == property)
        .map(|v| v.value.clone())
        .unwrap_or_else(|| panic!("no {property} in {notification:?}"))
}

fn flags(in_alarm: bool, fault: bool, overridden: bool, out_of_service: bool) -> Vec<Element> {
    vec![Element::Application(ApplicationValue::BitString(
        BitString::from_bits(&[in_alarm, fault, overridden, out_of_service]),
    ))]
}

#[tokio::test]
async fn unconfirmed_subscription_follows_writes_and_local_sets() {
    let server = server_with(TsmConfig::default()).await;
    let client = client().await;
    let device = server.local_addr();
    let mut subscription = client
        .subscribe_cov(device, options("av,1", false, 120))
        .await
        .unwrap();
    // Clause 13.14.2: the initial notification carries the current values.
    let initial = next(&mut subscription).await;
    assert!(!initial.confirmed);
    assert_eq!(initial.from.link, device);
    assert_eq!(initial.request.initiating_device, id("device,400"));
    assert_eq!(initial.request.monitored_object, id("av,1"));
    assert_eq!(
        initial.request.subscriber_process_identifier,
        subscription.process_identifier()
    );
    assert!((119..=120).contains(&initial.request.time_remaining));
    assert_eq!(value_of(&initial, P::PresentValue), real(71.0));
    assert_eq!(
        value_of(&initial, P::StatusFlags),
        flags(false, false, false, false)
    );

    // A network write of more than the increment (0.1).
    client
        .write(
            device,
            id("av,1"),
            P::PresentValue,
            real(72.5),
            Some(8),
            None,
        )
        .await
        .unwrap();
    let written = next(&mut subscription).await;
    assert_eq!(value_of(&written, P::PresentValue), real(72.5));

    // Less than the increment since the last notification: nothing.
    client
        .write(
            device,
            id("av,1"),
            P::PresentValue,
            real(72.55),
            Some(8),
            None,
        )
        .await
        .unwrap();
    nothing_within(&mut subscription, QUIET).await;
    // 72.5 -> 72.65 is 0.15 from the last notified value: notified.
    client
        .write(
            device,
            id("av,1"),
            P::PresentValue,
            real(72.65),
            Some(8),
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        value_of(&next(&mut subscription).await, P::PresentValue),
        real(72.65)
    );

    // A local set (a new sensor value) notifies too, with no request in between.
    server.with_database(|db| {
        db.set_local(
            id("av,1"),
            P::OutOfService,
            PropertyData::Single(ApplicationValue::Boolean(true)),
        )
        .unwrap();
    });
    let flagged = next(&mut subscription).await;
    assert_eq!(
        value_of(&flagged, P::StatusFlags),
        flags(false, false, false, true)
    );

    assert_eq!(server.with_server(|s| s.cov_subscriptions()), 1);
    subscription.cancel().await;
    assert_eq!(server.with_server(|s| s.cov_subscriptions()), 0);
}

#[tokio::test]
async fn confirmed_subscription_of_a_binary_value_and_a_property() {
    let server = server_with(TsmConfig::default()).await;
    let client = client().await;
    let device = server.local_addr();
    let mut binary = client
        .subscribe_cov(device, options("bv,1", true, 0))
        .await
        .unwrap();
    let initial = next(&mut binary).await;
    assert!(initial.confirmed);
    assert_eq!(initial.request.time_remaining, 0, "indefinite");
    assert_eq!(
        value_of(&initial, P::PresentValue),
        vec![Element::Application(ApplicationValue::Enumerated(0))]
    );
    client
        .write(
            device,
            id("bv,1"),
            P::PresentValue,
            vec![Element::Application(ApplicationValue::Enumerated(1))],
            None,
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        value_of(&next(&mut binary).await, P::PresentValue),
        vec![Element::Application(ApplicationValue::Enumerated(1))]
    );

    // SubscribeCOVProperty of AI-2 with a COV increment of 1.0.
    let mut property = client
        .subscribe_cov(
            device,
            CovOptions {
                property: Some(PropertyReference {
                    property: P::PresentValue,
                    array_index: None,
                }),
                cov_increment: Some(1.0),
                ..options("ai,2", true, 60)
            },
        )
        .await
        .unwrap();
    assert_eq!(
        value_of(&next(&mut property).await, P::PresentValue),
        real(63.0)
    );
    let set = |value: f32| {
        server.with_database(|db| {
            db.set_local(
                id("ai,2"),
                P::PresentValue,
                PropertyData::Single(ApplicationValue::Real(value)),
            )
            .unwrap();
        });
    };
    set(63.5);
    nothing_within(&mut property, QUIET).await;
    set(64.0);
    assert_eq!(
        value_of(&next(&mut property).await, P::PresentValue),
        real(64.0)
    );
    let stats = server.with_server(|s| s.cov_stats());
    assert_eq!(stats.notifications, 4);
    assert_eq!(stats.failed_confirmed, 0);
}

#[tokio::test]
async fn subscription_errors_come_back_at_once() {
    let server = server_with(TsmConfig::default()).await;
    let client = client().await;
    let device = server.local_addr();
    match client
        .subscribe_cov(device, options("ai,99", false, 60))
        .await
    {
        Err(ClientError::Error { service, error }) => {
            assert_eq!(service, ConfirmedServiceChoice::SubscribeCov);
            assert_eq!(
                (error.class, error.code),
                (ErrorClass::Object, ErrorCode::UnknownObject)
            );
        }
        other => panic!("{other:?}"),
    }
    match client
        .subscribe_cov(device, options("calendar,1", false, 60))
        .await
    {
        Err(ClientError::Error { error, .. }) => assert_eq!(
            (error.class, error.code),
            (
                ErrorClass::Object,
                ErrorCode::OptionalFunctionalityNotSupported
            )
        ),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn short_lifetimes_are_renewed_and_restarts_recovered() {
    let server = server_with(TsmConfig::default()).await;
    let client = client().await;
    let device = server.local_addr();
    // Lifetime 2 s: renewed every second, each renewal answered with a fresh notification.
    let mut subscription = client
        .subscribe_cov(device, options("ai,1", false, 2))
        .await
        .unwrap();
    next(&mut subscription).await;
    tokio::time::sleep(Duration::from_millis(3500)).await;
    assert_eq!(
        server.with_server(|s| s.cov_subscriptions()),
        1,
        "still subscribed after more than its lifetime"
    );
    while let Ok(Some(_)) =
        tokio::time::timeout(Duration::from_millis(50), subscription.next()).await
    {}

    // A cold start forgets every subscription; the next renewal restores it.
    let restart = ConfirmedRequest::ReinitializeDevice(ReinitializeDeviceRequest {
        state: ReinitializedState::Coldstart,
        password: None,
    });
    client.request(device, restart).await.unwrap();
    assert_eq!(
        server.with_server(|s| s.poll_event()),
        Some(DeviceEvent::Reinitialized(ReinitializedState::Coldstart))
    );
    assert_eq!(server.with_server(|s| s.cov_subscriptions()), 0);
    let restored = next(&mut subscription).await;
    assert_eq!(value_of(&restored, P::PresentValue), real(61.5));
    assert_eq!(server.with_server(|s| s.cov_subscriptions()), 1);
    drop(subscription);
    // Dropping the stream cancels the subscription on the device.
    for _ in 0..50 {
        if server.with_server(|s| s.cov_subscriptions()) == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(server.with_server(|s| s.cov_subscriptions()), 0);
}

#[tokio::test]
async fn a_restarted_device_that_announces_itself_is_subscribed_again_at_once() {
    let first = server_with(TsmConfig::default()).await;
    let device = first.local_addr();
    let client = client().await;
    // A long lifetime: the next renewal is minutes away.
    let mut subscription = client
        .subscribe_cov(device, options("ai,1", false, 600))
        .await
        .unwrap();
    assert_eq!(
        value_of(&next(&mut subscription).await, P::PresentValue),
        real(61.5)
    );

    // The device restarts on the same address with an empty subscription table.
    first.shutdown().await;
    let mut config = BacnetServerConfig::new(device, stress_profile().build().unwrap());
    config.announce = false;
    let second = BacnetServer::start(config).await.unwrap();
    second.with_database(|db| {
        db.set_local(
            id("ai,1"),
            P::PresentValue,
            PropertyData::Single(ApplicationValue::Real(80.0)),
        )
        .unwrap();
    });
    nothing_within(&mut subscription, QUIET).await;
    assert_eq!(second.with_server(|s| s.cov_subscriptions()), 0);

    // Its I-Am (here the answer to a directed Who-Is) makes the client subscribe again, and
    // the new subscription's initial notification brings the new value.
    let found = client
        .who_is_at(
            Destination::Unicast(device),
            None,
            Duration::from_millis(300),
        )
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    let restored = next(&mut subscription).await;
    assert_eq!(value_of(&restored, P::PresentValue), real(80.0));
    assert_eq!(second.with_server(|s| s.cov_subscriptions()), 1);
    subscription.cancel().await;
    assert_eq!(second.with_server(|s| s.cov_subscriptions()), 0);
}

#[tokio::test]
async fn notifications_to_a_vanished_subscriber_time_out_cleanly() {
    let tsm = TsmConfig {
        apdu_timeout: Duration::from_millis(150),
        retries: 1,
        ..TsmConfig::default()
    };
    let server = server_with(tsm).await;
    let device = server.local_addr();
    {
        let client = client().await;
        let mut subscription = client
            .subscribe_cov(device, options("av,2", true, 0))
            .await
            .unwrap();
        next(&mut subscription).await;
        // The client goes away without cancelling (its task is aborted).
        client.shutdown();
        std::mem::forget(subscription);
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    for step in 0..5u8 {
        server.with_database(|db| {
            db.set_local(
                id("av,2"),
                P::PresentValue,
                PropertyData::Single(ApplicationValue::Real(80.0 + f32::from(step))),
            )
            .unwrap();
        });
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    // One notification outstanding at a time; each ends with the TSM timeout
    // (2 attempts x 150 ms), then the latest change goes out once more.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let stats = server.with_server(|s| s.cov_stats());
    assert!(stats.failed_confirmed >= 1, "{stats:?}");
    assert!(stats.failed_confirmed <= 3, "changes coalesce: {stats:?}");
    // The server still answers.
    let client = client().await;
    assert_eq!(
        client
            .read(device, id("av,2"), P::PresentValue, None)
            .await
            .unwrap(),
        real(84.0)
    );
}

#[tokio::test]
async fn a_flood_of_subscriptions_is_bounded() {
    let server = server_with(TsmConfig::default()).await;
    server.with_server(|s| {
        s.set_cov_limits(CovLimits {
            max_subscriptions: 40,
            max_per_subscriber: 25,
        });
    });
    let device = server.local_addr();
    let socket = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let mut accepted = 0;
    let mut refused = 0;
    for process in 0..60u32 {
        let mut payload = Vec::new();
        SubscribeCovRequest::subscribe(process, id("ai,1"), false, 300).encode(&mut payload);
        let mut apdu = Vec::new();
        Apdu::ConfirmedRequest {
            segmented_response_accepted: false,
            max_segments: MaxSegments::Unspecified,
            max_apdu: MaxApdu::Up1476,
            invoke_id: process as u8,
            segment: None,
            service: ConfirmedServiceChoice::SubscribeCov,
            payload: &payload,
        }
        .encode(&mut apdu);
        let mut npdu = Vec::new();
        Npdu::local_apdu(&apdu, true).encode(&mut npdu);
        let mut datagram = Vec::new();
        Bvll::OriginalUnicastNpdu(&npdu).encode(&mut datagram);
        socket.send_to(&datagram, device).await.unwrap();
        // Read until the answer to this request (notifications come too).
        loop {
            let mut buf = [0u8; 1500];
            let (n, _) = tokio::time::timeout(Duration::from_secs(2), socket.recv_from(&mut buf))
                .await
                .unwrap()
                .unwrap();
            let apdu = &buf[6..n];
            match Apdu::decode(&mut Reader::new(apdu)).unwrap() {
                Apdu::SimpleAck { invoke_id, .. } if invoke_id == process as u8 => {
                    accepted += 1;
                    break;
                }
                Apdu::Error {
                    invoke_id, payload, ..
                } if invoke_id == process as u8 => {
                    assert_eq!(payload, [0x91, 0x03, 0x91, 0x13], "resources / no-space");
                    refused += 1;
                    break;
                }
                _ => {}
            }
        }
    }
    assert_eq!(accepted, 25, "one subscriber gets at most its share");
    assert_eq!(refused, 35);
    assert_eq!(server.with_server(|s| s.cov_subscriptions()), 25);
}

#[tokio::test]
async fn many_clients_each_get_their_notifications() {
    let server = server_with(TsmConfig::default()).await;
    let device = server.local_addr();
    let mut clients = Vec::new();
    for confirmed in [false, true, false, true] {
        let client = BacnetClient::start(ClientConfig::new(SocketAddrV4::new(LOCALHOST, 0), None))
            .await
            .unwrap();
        let mut subscription = client
            .subscribe_cov(device, options("ao,1", confirmed, 300))
            .await
            .unwrap();
        assert_eq!(
            value_of(&next(&mut subscription).await, P::PresentValue),
            real(51.0)
        );
        clients.push((client, subscription));
    }
    let writer = client().await;
    writer
        .write(
            device,
            id("ao,1"),
            P::PresentValue,
            real(55.0),
            Some(10),
            None,
        )
        .await
        .unwrap();
    for (_, subscription) in &mut clients {
        let update = next(subscription).await;
        assert_eq!(value_of(&update, P::PresentValue), real(55.0));
    }
    assert_eq!(server.with_server(|s| s.cov_subscriptions()), 4);
}
