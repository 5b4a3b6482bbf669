//! The client against devices that cannot segment, do not offer ReadPropertyMultiple, or
//! do not answer, over UDP on 127.0.0.1: element-by-element fallback for arrays,
//! `read_many` batching (and its splitting and fallback), the per-device concurrency
//! limit, and firm time limits.
#![allow(clippy::unwrap_used)]

#[allow(dead_code)]
#[path = "../../bench/src/bacnet/profiles.rs"]
mod profiles;

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use buildwire_bacnet::PropertyIdentifier as P;
use buildwire_bacnet::apdu::MaxApdu;
use buildwire_bacnet::app::ClientError;
use buildwire_bacnet::driver::{BacnetClient, BacnetServer, BacnetServerConfig, ClientConfig};
use buildwire_bacnet::encoding::{
    ApplicationValue, Element, ObjectIdentifier, ObjectPropertyReference,
};
use buildwire_bacnet::enums::Segmentation;
use buildwire_bacnet::tsm::TsmConfig;
use profiles::{large_profile, stress_profile};
use tokio::net::UdpSocket;

const LOCALHOST: Ipv4Addr = Ipv4Addr::LOCALHOST;

fn id(text: &str) -> ObjectIdentifier {
    text.parse().unwrap()
}

async fn server(
    profile: buildwire_bacnet::objects::profile::DeviceProfile,
    tsm: TsmConfig,
) -> BacnetServer {
    let mut config =
        BacnetServerConfig::new(SocketAddrV4::new(LOCALHOST, 0), profile.build().unwrap());
    config.announce = false;
    config.tsm = tsm;
    BacnetServer::start(config).await.unwrap()
}

async fn client_with(tsm: TsmConfig) -> BacnetClient {
    let mut config = ClientConfig::new(SocketAddrV4::new(LOCALHOST, 0), None);
    config.tsm = tsm;
    BacnetClient::start(config).await.unwrap()
}

/// A relay between one client and one device that counts requests in flight, keeps the
/// highest count seen, and (optionally) rejects ReadPropertyMultiple itself.
struct Relay {
    port: u16,
    max_in_flight: Arc<AtomicUsize>,
    rpm_seen: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Relay {
    async fn start(target: SocketAddrV4, reject_rpm: bool) -> Self {
        let front = Arc::new(UdpSocket::bind("127.0.0.1:0").await.unwrap());
        let back = Arc::new(UdpSocket::bind("127.0.0.1:0").await.unwrap());
        back.connect(target).await.unwrap();
        let port = front.local_addr().unwrap().port();
        let max_in_flight = Arc::new(AtomicUsize::new(0));
        let rpm_seen = Arc::new(AtomicUsize::new(0));
        let (max, rpm) = (Arc::clone(&max_in_flight), Arc::clone(&rpm_seen));
        let task = tokio::spawn(async move {
            let mut client: Option<SocketAddr> = None;
            let mut in_flight = 0usize;
            let (mut a, mut b) = ([0u8; 1600], [0u8; 1600]);
            loop {
                tokio::select! {
                    Ok((n, from)) = front.recv_from(&mut a) => {
                        client = Some(from);
                        let datagram = &a[..n];
                        // BVLL (4) + NPDU without addresses (2) + APDU.
                        let apdu = &datagram[6..];
                        let confirmed = apdu[0] >> 4 == 0;
                        if confirmed && apdu[3] == 14 && reject_rpm {
                            rpm.fetch_add(1, Ordering::SeqCst);
                            // Reject-PDU, reason unrecognized-service (9).
                            let reject = [0x81, 0x0A, 0x00, 0x09, 0x01, 0x00, 0x60, apdu[2], 0x09];
                            let _ = front.send_to(&reject, from).await;
                            continue;
                        }
                        if confirmed {
                            if apdu[3] == 14 {
                                rpm.fetch_add(1, Ordering::SeqCst);
                            }
                            in_flight += 1;
                            max.fetch_max(in_flight, Ordering::SeqCst);
                        }
                        let _ = back.send(datagram).await;
                    }
                    Ok(n) = back.recv(&mut b) => {
                        let apdu = &b[6..n];
                        if matches!(apdu[0] >> 4, 2..=7) {
                            in_flight = in_flight.saturating_sub(1);
                        }
                        if let Some(to) = client {
                            let _ = front.send_to(&b[..n], to).await;
                        }
                    }
                }
            }
        });
        Self {
            port,
            max_in_flight,
            rpm_seen,
            task,
        }
    }

    fn address(&self) -> SocketAddrV4 {
        SocketAddrV4::new(LOCALHOST, self.port)
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[tokio::test]
async fn arrays_are_read_element_by_element_from_a_device_that_cannot_segment() {
    let device = server(
        large_profile(400),
        TsmConfig {
            segmentation: Segmentation::NoSegmentation,
            ..TsmConfig::default()
        },
    )
    .await;
    let client = client_with(TsmConfig::default()).await;
    let expected: Vec<Element> = device.with_database(|db| {
        db.objects()
            .map(|o| Element::Application(ApplicationValue::ObjectIdentifier(o.identifier())))
            .collect()
    });
    assert_eq!(expected.len(), 401);
    let list = client
        .read(device.local_addr(), id("device,500"), P::ObjectList, None)
        .await
        .unwrap();
    assert_eq!(list, expected);
    // The device refused the whole value once (segmentation-not-supported), then
    // answered the length and the 401 elements.
    let (_, tsm) = device.stats();
    assert_eq!(tsm.aborts_sent, 1);
    assert_eq!(tsm.requests, 1 + 1 + 401);
}

#[tokio::test]
async fn read_many_batches_into_read_property_multiple() {
    let device = server(stress_profile(), TsmConfig::default()).await;
    let client = client_with(TsmConfig::default()).await;
    let relay = Relay::start(device.local_addr(), false).await;
    let mut references: Vec<ObjectPropertyReference> = device.with_database(|db| {
        db.objects()
            .flat_map(|o| {
                [P::ObjectName, P::PresentValue].map(|property| ObjectPropertyReference {
                    object: o.identifier(),
                    property,
                    array_index: None,
                })
            })
            .collect()
    });
    references.push(ObjectPropertyReference {
        object: id("ai,99"),
        property: P::PresentValue,
        array_index: None,
    });
    assert_eq!(references.len(), 81);
    let results = client.read_many(relay.address(), &references).await;
    assert_eq!(results.len(), 81);
    for (reference, result) in references.iter().zip(&results) {
        let direct =
            device.with_database(|db| db.read_property(reference.object, reference.property, None));
        match (direct, result) {
            (Ok(value), Ok(got)) => assert_eq!(&value, got, "{reference:?}"),
            (Err(error), Err(ClientError::Error { error: got, .. })) => {
                assert_eq!(
                    (error.class, error.code),
                    (got.class, got.code),
                    "{reference:?}"
                );
            }
            (direct, got) => panic!("{reference:?}: {direct:?} vs {got:?}"),
        }
    }
    // 81 references in batches of at most 64: two ReadPropertyMultiple requests.
    assert_eq!(relay.rpm_seen.load(Ordering::SeqCst), 2);
    assert_eq!(device.stats().1.requests, 2);
}

#[tokio::test]
async fn read_many_splits_answers_a_device_cannot_send() {
    // 206-octet APDUs, no segmentation: 64 present-values do not fit one answer.
    let device = server(
        large_profile(64),
        TsmConfig {
            max_apdu: MaxApdu::Up206,
            segmentation: Segmentation::NoSegmentation,
            ..TsmConfig::default()
        },
    )
    .await;
    let client = client_with(TsmConfig::default()).await;
    let references: Vec<ObjectPropertyReference> = (1..=64)
        .map(|i| ObjectPropertyReference {
            object: ObjectIdentifier::new(buildwire_bacnet::ObjectType::AnalogValue, i),
            property: P::PresentValue,
            array_index: None,
        })
        .collect();
    let results = client.read_many(device.local_addr(), &references).await;
    for (i, result) in results.iter().enumerate() {
        let expected = ((i as u32 + 1) % 1000) as f32 / 10.0;
        assert_eq!(
            result.as_ref().unwrap(),
            &vec![Element::Application(ApplicationValue::Real(expected))]
        );
    }
    let (_, tsm) = device.stats();
    assert!(tsm.aborts_sent >= 1, "{tsm:?}");
}

#[tokio::test]
async fn read_many_falls_back_to_read_property_and_remembers() {
    let device = server(stress_profile(), TsmConfig::default()).await;
    let client = client_with(TsmConfig::default()).await;
    let relay = Relay::start(device.local_addr(), true).await;
    let references: Vec<ObjectPropertyReference> = (1..=10)
        .map(|i| ObjectPropertyReference {
            object: ObjectIdentifier::new(buildwire_bacnet::ObjectType::AnalogInput, i),
            property: P::PresentValue,
            array_index: None,
        })
        .collect();
    for _ in 0..2 {
        let results = client.read_many(relay.address(), &references).await;
        for (i, result) in results.iter().enumerate() {
            assert_eq!(
                result.as_ref().unwrap(),
                &vec![Element::Application(ApplicationValue::Real(
                    60.0 + (i as f32 + 1.0) * 1.5
                ))]
            );
        }
    }
    assert_eq!(
        relay.rpm_seen.load(Ordering::SeqCst),
        1,
        "rejected once, then not tried again"
    );
    assert_eq!(device.stats().1.requests, 20);
}

#[tokio::test]
async fn requests_to_one_device_respect_the_concurrency_limit() {
    let device = server(stress_profile(), TsmConfig::default()).await;
    let client = client_with(TsmConfig::default()).await;
    client.set_max_concurrent_per_device(3);
    let relay = Relay::start(device.local_addr(), false).await;
    let to = relay.address();
    let reads: Vec<_> = (0..30)
        .map(|i| {
            let object =
                ObjectIdentifier::new(buildwire_bacnet::ObjectType::AnalogInput, i % 10 + 1);
            let client = &client;
            async move { client.read(to, object, P::PresentValue, None).await }
        })
        .collect();
    let mut results = Vec::new();
    for read in reads {
        results.push(read);
    }
    let outputs = futures_join(results).await;
    assert!(outputs.iter().all(Result::is_ok));
    let max = relay.max_in_flight.load(Ordering::SeqCst);
    assert!((1..=3).contains(&max), "at most 3 in flight, saw {max}");
}

/// Polls futures together (the test crate has no futures dependency).
async fn futures_join<F: std::future::Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut pinned: Vec<_> = futures.into_iter().map(Box::pin).collect();
    let mut out: Vec<Option<F::Output>> = pinned.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (slot, future) in out.iter_mut().zip(pinned.iter_mut()) {
            if slot.is_none() {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => *slot = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    out.into_iter().flatten().collect()
}

#[tokio::test]
async fn calls_to_a_silent_device_end_within_their_limit() {
    let silent = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let to = match silent.local_addr().unwrap() {
        SocketAddr::V4(v4) => v4,
        SocketAddr::V6(_) => unreachable!(),
    };
    let client = client_with(TsmConfig {
        apdu_timeout: Duration::from_millis(100),
        retries: 1,
        ..TsmConfig::default()
    })
    .await;
    client.set_max_concurrent_per_device(2);
    let started = Instant::now();
    let reads: Vec<_> = (0..6)
        .map(|_| client.read(to, id("ai,1"), P::PresentValue, None))
        .collect();
    let outputs = futures_join(reads).await;
    let elapsed = started.elapsed();
    assert!(
        outputs
            .iter()
            .all(|r| matches!(r, Err(ClientError::Timeout))),
        "{outputs:?}"
    );
    // Three rounds of two requests, 2 x 100 ms each: well inside the call limit.
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
}

/// Issue 25: discovery against a device without ReadPropertyMultiple (the relay rejects
/// it with unrecognized-service): every property of an object comes through the
/// property-list and one ReadProperty each, the same properties and values the device
/// gives to ReadPropertyMultiple `all`; points and an `rpm ... :all` read the same way.
#[tokio::test]
async fn discovery_reads_every_property_from_a_device_without_rpm() {
    use buildwire_bacnet::driver::discovery;
    use buildwire_bacnet::services::{PropertyReference, ReadAccessSpecification};

    let device = server(stress_profile(), TsmConfig::default()).await;
    let client = client_with(TsmConfig::default()).await;
    let relay = Relay::start(device.local_addr(), true).await;
    let av1 = id("av,1");

    let direct = discovery::read_all_properties(&client, device.local_addr(), av1)
        .await
        .unwrap();
    // An object the device does not have fails as a whole, both ways.
    for to in [device.local_addr(), relay.address()] {
        let missing = discovery::read_all_properties(&client, to, id("av,999")).await;
        assert!(
            matches!(&missing, Err(ClientError::Error { error, .. })
                if error.code.to_string() == "unknown-object"),
            "{missing:?}"
        );
    }
    let fallback = discovery::read_all_properties(&client, relay.address(), av1)
        .await
        .unwrap();
    assert!(
        relay.rpm_seen.load(Ordering::SeqCst) >= 1,
        "RPM was tried first"
    );
    let names = |readings: &discovery::ObjectReadings| {
        let mut names: Vec<String> = readings
            .readings
            .iter()
            .map(|r| r.property.to_string())
            .collect();
        names.sort();
        names
    };
    assert_eq!(names(&fallback), names(&direct));
    for reading in &direct.readings {
        let other = fallback
            .readings
            .iter()
            .find(|r| r.property == reading.property)
            .unwrap();
        assert_eq!(other.result, reading.result, "{}", reading.property);
    }

    let inventory = discovery::object_inventory(&client, relay.address(), None)
        .await
        .unwrap();
    let points =
        discovery::read_points(&client, relay.address(), &inventory.objects, &|_| {}).await;
    let expected =
        discovery::read_points(&client, device.local_addr(), &inventory.objects, &|_| {}).await;
    assert_eq!(points, expected);
    assert!(points.iter().all(|p| p.name.is_some()));

    let asked = vec![
        ReadAccessSpecification {
            object: av1,
            properties: vec![PropertyReference {
                property: P::All,
                array_index: None,
            }],
        },
        ReadAccessSpecification {
            object: id("ai,1"),
            properties: vec![PropertyReference {
                property: P::PresentValue,
                array_index: None,
            }],
        },
    ];
    let got = discovery::read_multiple_or_fallback(&client, relay.address(), asked)
        .await
        .unwrap();
    assert_eq!(got.len(), 2);
    assert_eq!(names(&got[0]), names(&direct));
    assert_eq!(
        got[1].readings[0].result,
        Ok(vec![Element::Application(ApplicationValue::Real(61.5))])
    );
}
