//! Issue 30, item 1: half-finished segmented transactions must not starve other clients.
//!
//! Hundreds of peers start reads whose answers need segments and never acknowledge them (or
//! send the first segment of a request and never the rest). The segmented share of the
//! server TSM fills (per host, per peer, in total) and refuses only new segmented work with
//! Abort `out-of-resources`; a one-packet ReadProperty of another client is still answered;
//! the abandoned transactions end after the retries of Clause 5.4.5 (Tseg × (retries + 1))
//! and Tseg × 4 for a reassembly.

#[allow(dead_code)]
#[path = "../../bench/src/bacnet/profiles.rs"]
mod profiles;
mod raw_support;

use std::net::{IpAddr, Ipv4Addr, SocketAddrV4};
use std::time::{Duration, Instant};

use buildwire_bacnet::ObjectIdentifier;
use buildwire_bacnet::apdu::{Apdu, ConfirmedServiceChoice, MaxApdu, MaxSegments};
use buildwire_bacnet::driver::{BacnetServer, BacnetServerConfig};
use buildwire_bacnet::tsm::{Response, ServerEvent, ServerTsm, TsmConfig};

const ABORT_OUT_OF_RESOURCES: u8 = 9;

/// A ReadProperty request (the payload is opaque to the TSM).
fn read_request(invoke_id: u8, max_apdu: MaxApdu, payload: &[u8]) -> Vec<u8> {
    let mut apdu = Vec::new();
    Apdu::ConfirmedRequest {
        segmented_response_accepted: true,
        max_segments: MaxSegments::Unspecified,
        max_apdu,
        invoke_id,
        segment: None,
        service: ConfirmedServiceChoice::ReadProperty,
        payload,
    }
    .encode(&mut apdu);
    apdu
}

/// The first segment (of more) of a segmented WritePropertyMultiple, window 4.
fn first_segment(invoke_id: u8) -> Vec<u8> {
    vec![0x0C, 0x05, invoke_id, 0x00, 0x04, 0x10, 0xAA, 0xBB]
}

fn host_of(peer: &SocketAddrV4) -> Option<IpAddr> {
    Some(IpAddr::V4(*peer.ip()))
}

fn peer(host: u8, port: u16) -> SocketAddrV4 {
    SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, host), port)
}

/// Answers every delivered request with a 600-octet ComplexACK (segments at max-APDU 50).
fn answer_all(server: &mut ServerTsm<SocketAddrV4>, now: Instant, size: usize) {
    while let Some(event) = server.poll_event() {
        if let ServerEvent::Request {
            peer, invoke_id, ..
        } = event
        {
            server
                .respond(now, peer, invoke_id, Response::ComplexAck(vec![0x55; size]))
                .expect("delivered just now");
        }
    }
}

/// Drains the transmits, counting the Aborts `out-of-resources`.
fn drain(server: &mut ServerTsm<SocketAddrV4>) -> usize {
    let mut refused = 0;
    while let Some((_, bytes)) = server.poll_transmit() {
        if bytes.first() == Some(&0x71) && bytes.get(2) == Some(&ABORT_OUT_OF_RESOURCES) {
            refused += 1;
        }
    }
    refused
}

#[test]
fn unacknowledged_segmented_reads_from_hundreds_of_peers_leave_room_for_a_plain_read() {
    let config = TsmConfig {
        retries: 1,
        ..TsmConfig::default()
    };
    let mut server = ServerTsm::new(config.clone());
    server.set_host_of(host_of);
    let now = Instant::now();

    // The probe of the issue: 500 source ports of one host, each three reads whose answers
    // need segments (never acknowledged) and two unfinished segmented requests.
    let mut refused = 0;
    for port in 0..500u16 {
        let from = peer(1, 40_000 + port);
        for invoke_id in 0..3 {
            server.handle_datagram(now, from, &read_request(invoke_id, MaxApdu::Up50, b"rp"));
        }
        for invoke_id in 10..12 {
            server.handle_datagram(now, from, &first_segment(invoke_id));
        }
        answer_all(&mut server, now, 600);
        refused += drain(&mut server);
    }
    assert_eq!(
        server.segmented_in_progress(),
        config.max_segmented_per_host,
        "one host holds at most its share"
    );
    assert_eq!(refused, 500 * 5 - config.max_segmented_per_host);

    // Then hundreds of peers of twenty other hosts: the total share binds.
    for host in 2..22u8 {
        for port in 0..20u16 {
            let from = peer(host, 50_000 + port);
            for invoke_id in 0..3 {
                server.handle_datagram(now, from, &read_request(invoke_id, MaxApdu::Up50, b"rp"));
            }
            server.handle_datagram(now, from, &first_segment(20));
            answer_all(&mut server, now, 600);
            drain(&mut server);
        }
    }
    assert_eq!(
        server.segmented_in_progress(),
        config.max_segmented_transactions
    );
    assert!(server.in_progress() <= config.max_transactions);

    // A one-packet ReadProperty from another client, and one from a flooding host's other
    // port, are delivered and answered with a plain ComplexACK.
    for from in [peer(200, 47_808), peer(1, 47_808)] {
        server.handle_datagram(now, from, &read_request(7, MaxApdu::Up1476, b"rp"));
        let Some(ServerEvent::Request {
            peer, invoke_id, ..
        }) = server.poll_event()
        else {
            panic!("the plain read from {from} is delivered");
        };
        assert_eq!((peer, invoke_id), (from, 7));
        server
            .respond(now, peer, invoke_id, Response::ComplexAck(vec![1, 2, 3]))
            .expect("delivered");
        assert_eq!(
            server.poll_transmit(),
            Some((from, vec![0x30, 7, 0x0C, 1, 2, 3]))
        );
    }

    // A segmented answer to a new client finds the share full: Abort out-of-resources,
    // and the unsegmented table is not touched by it.
    let late = peer(201, 47_808);
    server.handle_datagram(now, late, &read_request(9, MaxApdu::Up50, b"rp"));
    answer_all(&mut server, now, 600);
    assert_eq!(
        server.poll_transmit(),
        Some((late, vec![0x71, 9, ABORT_OUT_OF_RESOURCES]))
    );

    // Clause 5.4.5: unacknowledged answers are sent again once (retries = 1), then
    // abandoned after Tseg × 2; reassemblies nobody continues end after Tseg × 4.
    let tseg = config.segment_timeout;
    server.handle_timeout(now + tseg + Duration::from_millis(1));
    assert!(server.stats().retries > 0);
    drain(&mut server);
    server.handle_timeout(now + tseg * 2 + Duration::from_millis(2));
    drain(&mut server);
    let reassembling = server.segmented_in_progress();
    assert!(reassembling > 0, "reassemblies wait Tseg × 4");
    server.handle_timeout(now + tseg * 4 + Duration::from_millis(3));
    assert_eq!(server.segmented_in_progress(), 0);
    assert_eq!(server.in_progress(), 0);
    assert!(server.poll_transmit().is_none(), "abandoned silently");

    // The share is free again.
    let later = now + tseg * 5;
    server.handle_datagram(later, late, &read_request(10, MaxApdu::Up50, b"rp"));
    answer_all(&mut server, later, 600);
    let (to, first) = server.poll_transmit().expect("a segment");
    assert_eq!(
        (to, first[0] & 0xF8),
        (late, 0x38),
        "a segmented ComplexACK"
    );
}

// ---- the same over real UDP on 127.0.0.1, at a smaller scale ----

/// ReadProperty parameters: object identifier [0], property identifier [1].
fn read_property_payload(object: ObjectIdentifier, property: u8) -> Vec<u8> {
    let mut payload = vec![0x0C];
    payload.extend_from_slice(&object.to_u32().to_be_bytes());
    payload.extend_from_slice(&[0x19, property]);
    payload
}

#[tokio::test]
async fn a_plain_read_is_answered_while_udp_peers_leave_segmented_reads_unacknowledged() {
    let mut config = BacnetServerConfig::new(
        SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0),
        profiles::stress_profile().build().expect("test setup"),
    );
    config.announce = false;
    // A table of eight: before issue 30 the unacknowledged segmented reads filled it and
    // the plain read below got Abort out-of-resources.
    config.tsm = TsmConfig {
        max_transactions: 8,
        max_segmented_transactions: 8,
        max_segmented_per_host: 6,
        max_segmented_per_peer: 2,
        ..TsmConfig::default()
    };
    let server = BacnetServer::start(config).await.expect("test setup");
    let to = server.local_addr();
    let device = server.with_database(|db| db.device_identifier());
    // object-list (76): hundreds of identifiers, many segments at max-APDU 50.
    let object_list = read_property_payload(device, 76);

    let mut flood = Vec::new();
    for _ in 0..20 {
        let socket = tokio::net::UdpSocket::bind("127.0.0.1:0")
            .await
            .expect("test setup");
        for invoke_id in 0..3 {
            let apdu = read_request(invoke_id, MaxApdu::Up50, &object_list);
            raw_support::send(&socket, to, &apdu, true).await;
        }
        flood.push(socket);
    }
    // Every flooding socket hears something: segments for the admitted reads, Aborts
    // out-of-resources for the rest (read before the plain request so that it is queued
    // behind the flood).
    let mut refused = 0;
    for socket in &flood {
        while let Some(apdu) = raw_support::receive(socket, Duration::from_millis(200)).await {
            if apdu.first() == Some(&0x71) && apdu.get(2) == Some(&ABORT_OUT_OF_RESOURCES) {
                refused += 1;
            }
        }
    }
    // At most six of the eight transactions (three quarters) may be segmented.
    assert!(refused >= 60 - 6, "refused {refused} of 60 segmented reads");

    // object-name (77) fits in one packet.
    let plain = tokio::net::UdpSocket::bind("127.0.0.1:0")
        .await
        .expect("test setup");
    let apdu = read_request(42, MaxApdu::Up1476, &read_property_payload(device, 77));
    raw_support::send(&plain, to, &apdu, true).await;
    let answer = raw_support::receive(&plain, Duration::from_secs(2))
        .await
        .expect("the plain read is answered");
    assert_eq!(&answer[..3], &[0x30, 42, 0x0C], "a ComplexACK: {answer:?}");
    drop(server);
}
