//! The application layer without sockets: `DeviceServer` and `ClientCore` fed bytes and a
//! simulated clock. Routing rules, exact I-Am bytes, error mapping, peer limits learnt
//! from I-Am, segmentation end to end in memory, and property tests on arbitrary input.

#[allow(dead_code)]
#[path = "../../bench/src/bacnet/profiles.rs"]
mod profiles;

use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::{Duration, Instant};

use buildwire_bacnet::apdu::{Apdu, ConfirmedServiceChoice, MaxApdu, MaxSegments};
use buildwire_bacnet::app::{
    Announcement, ClientCore, ClientError, Completion, Destination, DeviceServer, PeerAddress,
    Reply, Transmit,
};
use buildwire_bacnet::encoding::{ApplicationValue, Element};
use buildwire_bacnet::enums::{AbortReason, RejectReason, Segmentation};
use buildwire_bacnet::network::Npdu;
use buildwire_bacnet::network::npdu::{MacAddress, NpduBody, RemoteAddress};
use buildwire_bacnet::services::{
    ComplexAckParameters, IAm, InstanceRange, WriteAccessSpecification,
};
use buildwire_bacnet::tsm::{SendError, TsmConfig};
use buildwire_bacnet::{ObjectIdentifier, PropertyIdentifier as P, PropertyValue, Reader};
use profiles::{large_profile, stress_profile};
use proptest::prelude::*;

const SERVER: SocketAddrV4 = SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 1), 47808);
const CLIENT: SocketAddrV4 = SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 2), 47808);

fn server() -> DeviceServer {
    let database = stress_profile().build().expect("the stress profile builds");
    DeviceServer::new(database, TsmConfig::default())
}

fn id(text: &str) -> ObjectIdentifier {
    text.parse().expect("a valid identifier")
}

fn drain(server: &mut DeviceServer) -> Vec<Transmit> {
    std::iter::from_fn(|| server.poll_transmit()).collect()
}

/// The APDU bytes inside an NPDU, with the decoded NPDU's destination.
fn apdu_of(npdu: &[u8]) -> (Option<RemoteAddress>, Vec<u8>) {
    let decoded = Npdu::decode(&mut Reader::new(npdu)).expect("NPDUs we send decode");
    match decoded.body {
        NpduBody::Apdu(apdu) => (decoded.destination, apdu.to_vec()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn who_is_broadcast_is_answered_with_these_exact_i_am_bytes() {
    let mut server = server();
    // Who-Is without range (Clause 16.10): NPDU 01 00, APDU 10 08.
    server.handle_npdu(Instant::now(), CLIENT, &[0x01, 0x00, 0x10, 0x08], true);
    let sent = drain(&mut server);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].destination, Destination::Broadcast);
    // I-Am device,400, max APDU 1476, segmented-both, vendor 0 (Clause 16.10.3 / 20.1.3).
    assert_eq!(
        sent[0].npdu,
        [
            0x01, 0x00, 0x10, 0x00, 0xC4, 0x02, 0x00, 0x01, 0x90, 0x22, 0x05, 0xC4, 0x91, 0x00,
            0x21, 0x00
        ]
    );
    // A directed Who-Is gets a directed I-Am; one out of range gets nothing.
    server.handle_npdu(Instant::now(), CLIENT, &[0x01, 0x00, 0x10, 0x08], false);
    assert_eq!(
        drain(&mut server)[0].destination,
        Destination::Unicast(CLIENT)
    );
    // Who-Is 500..600: context 0 = 500 (0A 01 F4), context 1 = 600 (1A 02 58).
    let out_of_range = [0x01, 0x00, 0x10, 0x08, 0x0A, 0x01, 0xF4, 0x1A, 0x02, 0x58];
    server.handle_npdu(Instant::now(), CLIENT, &out_of_range, true);
    assert!(drain(&mut server).is_empty());
    assert_eq!(server.stats().announcements, 2);
    assert_eq!(server.stats().unconfirmed_ignored, 1);
}

#[test]
fn i_am_at_start_up_matches_the_device_object() {
    let mut server = server();
    server.i_am();
    let sent = drain(&mut server);
    assert!(sent[0].is_broadcast());
    let i_am = server.i_am_parameters();
    assert_eq!(i_am.device, id("device,400"));
    assert_eq!(i_am.segmentation_supported, Segmentation::SegmentedBoth);
    // The Device object says what the TSM does (segmented-both = 0).
    let segmentation = server
        .database()
        .read_property(id("device,400"), P::SegmentationSupported, None)
        .expect("present");
    assert_eq!(
        segmentation,
        [Element::Application(ApplicationValue::Enumerated(0))]
    );
}

/// ReadProperty ai,1 present-value wrapped in an NPDU with SNET 7 / SADR 0x42, as a router
/// delivers it.
fn routed_read_property() -> Vec<u8> {
    let mut apdu = Vec::new();
    Apdu::ConfirmedRequest {
        segmented_response_accepted: false,
        max_segments: MaxSegments::Unspecified,
        max_apdu: MaxApdu::Up1476,
        invoke_id: 3,
        segment: None,
        service: ConfirmedServiceChoice::ReadProperty,
        payload: &[0x0C, 0x00, 0x00, 0x00, 0x01, 0x19, 0x55],
    }
    .encode(&mut apdu);
    // Version, control (SNET present, expecting reply), SNET 7, SLEN 1, SADR 0x42.
    let mut npdu = vec![0x01, 0x0C, 0x00, 0x07, 0x01, 0x42];
    npdu.extend_from_slice(&apdu);
    npdu
}

#[test]
fn routed_requests_are_answered_through_the_router_with_dnet_dadr() {
    let mut server = server();
    let router = SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 254), 47808);
    server.handle_npdu(Instant::now(), router, &routed_read_property(), false);
    let sent = drain(&mut server);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].destination, Destination::Unicast(router));
    let (destination, apdu) = apdu_of(&sent[0].npdu);
    assert_eq!(
        destination,
        Some(RemoteAddress {
            network: 7,
            mac: MacAddress::new(&[0x42]).expect("one octet")
        })
    );
    // Clause 6.2.2: control 0x20 (DNET present), DNET 7, DLEN 1, DADR 0x42, hop count 255.
    assert_eq!(
        sent[0].npdu[..7],
        [0x01, 0x20, 0x00, 0x07, 0x01, 0x42, 0xFF]
    );
    assert!(matches!(
        Apdu::decode(&mut Reader::new(&apdu)),
        Ok(Apdu::ComplexAck { invoke_id: 3, .. })
    ));
}

#[test]
fn network_messages_and_other_networks_are_dropped() {
    let mut server = server();
    // Who-Is-Router-To-Network (network message type 0).
    server.handle_npdu(Instant::now(), CLIENT, &[0x01, 0x80, 0x00], true);
    // Who-Is for DNET 5 (not a global broadcast): control 0x20, DNET 5, DLEN 0, hop 255.
    let for_network_5 = [0x01, 0x20, 0x00, 0x05, 0x00, 0xFF, 0x10, 0x08];
    server.handle_npdu(Instant::now(), CLIENT, &for_network_5, true);
    assert!(drain(&mut server).is_empty());
    // The same Who-Is as a global broadcast (DNET 0xFFFF) is answered.
    let global = [0x01, 0x20, 0xFF, 0xFF, 0x00, 0xFF, 0x10, 0x08];
    server.handle_npdu(Instant::now(), CLIENT, &global, true);
    assert_eq!(drain(&mut server).len(), 1);
    // Garbage is counted, not answered.
    server.handle_npdu(Instant::now(), CLIENT, &[0x02, 0x00], false);
    let stats = server.stats();
    assert_eq!(
        (stats.network_messages, stats.not_for_us, stats.malformed),
        (1, 1, 1)
    );
}

/// Moves every queued NPDU between the two sides until both are quiet.
fn pump(now: Instant, client: &mut ClientCore, server: &mut DeviceServer) {
    for _ in 0..10_000 {
        let mut moved = false;
        while let Some(t) = client.poll_transmit() {
            server.handle_npdu(now, CLIENT, &t.npdu, t.is_broadcast());
            moved = true;
        }
        while let Some(t) = server.poll_transmit() {
            client.handle_npdu(now, SERVER, &t.npdu);
            moved = true;
        }
        if !moved {
            return;
        }
    }
    panic!("the exchange does not settle");
}

fn completion(client: &mut ClientCore) -> Completion {
    client.poll_completion().expect("the request completed")
}

#[test]
fn a_segmented_object_list_crosses_in_memory_at_max_apdu_480() {
    let small = TsmConfig {
        max_apdu: MaxApdu::Up480,
        max_segments: MaxSegments::MoreThanSixtyFour,
        ..TsmConfig::default()
    };
    let database = large_profile(1500).build().expect("builds");
    let mut server = DeviceServer::new(database, small.clone());
    let mut client = ClientCore::new(small);
    let now = Instant::now();
    let invoke_id = client
        .read_property(now, SERVER, id("device,500"), P::ObjectList, None)
        .expect("sent");
    pump(now, &mut client, &mut server);
    let done = completion(&mut client);
    assert_eq!(done.invoke_id, invoke_id);
    let Ok(Reply::ComplexAck(ComplexAckParameters::ReadProperty(ack))) = done.result else {
        panic!("{done:?}");
    };
    assert_eq!(ack.value.len(), 1501);
    assert!(server.tsm_stats().segments_sent >= 16);
}

#[test]
fn errors_rejects_and_timeouts_become_typed_client_errors() {
    let mut server = server();
    let mut client = ClientCore::new(TsmConfig::default());
    let now = Instant::now();
    client
        .read_property(now, SERVER, id("ai,77"), P::PresentValue, None)
        .expect("sent");
    pump(now, &mut client, &mut server);
    let error = completion(&mut client).result.expect_err("unknown object");
    assert!(
        matches!(&error, ClientError::Error { service: ConfirmedServiceChoice::ReadProperty, error }
            if error.code.to_string() == "unknown-object"),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("object:unknown-object"),
        "{error}"
    );

    // WriteProperty av,1 present-value REAL 42.0 with priority 17 (context tag 4 = 0x49 0x11):
    // the priority is out of range, so the request is rejected (Clause 15.9.1.1.5).
    let mut apdu = Vec::new();
    Apdu::ConfirmedRequest {
        segmented_response_accepted: false,
        max_segments: MaxSegments::Unspecified,
        max_apdu: MaxApdu::Up1476,
        invoke_id: 9,
        segment: None,
        service: ConfirmedServiceChoice::WriteProperty,
        payload: &[
            0x0C, 0x00, 0x80, 0x00, 0x01, 0x19, 0x55, 0x3E, 0x44, 0x42, 0x28, 0x00, 0x00, 0x3F,
            0x49, 0x11,
        ],
    }
    .encode(&mut apdu);
    let mut npdu = Vec::new();
    Npdu::local_apdu(&apdu, true).encode(&mut npdu);
    server.handle_npdu(now, CLIENT, &npdu, false);
    let (_, answer) = apdu_of(&drain(&mut server)[0].npdu);
    let decoded = Apdu::decode(&mut Reader::new(&answer)).expect("decodes");
    assert!(
        matches!(decoded, Apdu::Reject { invoke_id: 9, reason } if reason == RejectReason::ParameterOutOfRange),
        "{decoded:?}"
    );

    // Silence: the TSM retries, then the client reports a timeout.
    let mut lonely = ClientCore::new(TsmConfig {
        apdu_timeout: Duration::from_millis(100),
        retries: 1,
        ..TsmConfig::default()
    });
    lonely
        .read_property(now, SERVER, id("ai,1"), P::PresentValue, None)
        .expect("sent");
    let mut clock = now;
    while let Some(deadline) = lonely.poll_timeout() {
        clock = deadline;
        lonely.handle_timeout(clock);
    }
    assert_eq!(completion(&mut lonely).result, Err(ClientError::Timeout));
    assert_eq!(clock - now, Duration::from_millis(200));
    let sent: Vec<_> = std::iter::from_fn(|| lonely.poll_transmit()).collect();
    assert_eq!(sent.len(), 2, "first attempt and one retry");
}

#[test]
fn client_errors_say_what_to_do_next() {
    let reject = ClientError::Reject(RejectReason::UnrecognizedService);
    assert!(reject.to_string().contains("unrecognized-service"));
    let abort = ClientError::Abort {
        reason: AbortReason::SegmentationNotSupported,
        by_server: true,
    };
    assert!(abort.to_string().contains("ask for less"), "{abort}");
    assert!(
        ClientError::Timeout
            .to_string()
            .contains("check its address")
    );
}

#[test]
fn i_am_teaches_the_peer_limits() {
    let mut client = ClientCore::new(TsmConfig::default());
    let now = Instant::now();
    // I-Am from a device that takes 480 octets and cannot receive segments.
    let i_am = IAm {
        device: id("device,9"),
        max_apdu_length_accepted: 480,
        segmentation_supported: Segmentation::NoSegmentation,
        vendor_id: 7,
    };
    let mut payload = Vec::new();
    i_am.encode(&mut payload);
    let mut apdu = Vec::new();
    Apdu::UnconfirmedRequest {
        service: buildwire_bacnet::apdu::UnconfirmedServiceChoice::IAm,
        payload: &payload,
    }
    .encode(&mut apdu);
    let mut npdu = Vec::new();
    Npdu::local_apdu(&apdu, false).encode(&mut npdu);
    client.handle_npdu(now, SERVER, &npdu);
    assert_eq!(
        client.poll_announcement(),
        Some(Announcement::IAm(PeerAddress::local(SERVER), i_am))
    );
    // A 600-octet WritePropertyMultiple no longer fits and cannot be segmented.
    let long = WriteAccessSpecification {
        object: id("av,1"),
        properties: vec![PropertyValue {
            property: P::Description,
            array_index: None,
            value: vec![Element::Application(ApplicationValue::CharacterString(
                "x".repeat(600),
            ))],
            priority: None,
        }],
    };
    assert_eq!(
        client.write_property_multiple(now, SERVER, vec![long]),
        Err(ClientError::Send(SendError::SegmentationNotSupported))
    );
    // Who-Is 1..10 goes out as asked: context 0 = 1 (09 01), context 1 = 10 (19 0A).
    client.who_is(InstanceRange::new(1, 10), Destination::Broadcast);
    let sent = client.poll_transmit().expect("queued");
    assert_eq!(sent.npdu, [0x01, 0x00, 0x10, 0x08, 0x09, 0x01, 0x19, 0x0A]);
}

/// Every NPDU the server sends decodes as an NPDU and an APDU, and re-encodes identically.
fn check_output(transmits: &[Transmit]) {
    for t in transmits {
        let npdu = Npdu::decode(&mut Reader::new(&t.npdu)).expect("server output decodes");
        let mut again = Vec::new();
        npdu.encode(&mut again);
        assert_eq!(again, t.npdu);
        let NpduBody::Apdu(apdu) = npdu.body else {
            panic!("the server sends only APDUs");
        };
        let decoded = Apdu::decode(&mut Reader::new(apdu)).expect("server APDUs decode");
        let mut again = Vec::new();
        decoded.encode(&mut again);
        assert_eq!(again, apdu);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_server_survives_arbitrary_npdus(data in proptest::collection::vec(any::<u8>(), 0..200)) {
        let mut server = server();
        server.handle_npdu(Instant::now(), CLIENT, &data, false);
        check_output(&drain(&mut server));
    }

    #[test]
    fn every_confirmed_request_gets_one_answer(
        service in 0u8..40,
        payload in proptest::collection::vec(any::<u8>(), 0..120),
    ) {
        let mut server = server();
        // NPDU 01 04 (expecting reply), APDU 00 05 (max 1476) invoke 1, service, payload.
        let mut npdu = vec![0x01, 0x04, 0x00, 0x05, 0x01, service];
        npdu.extend_from_slice(&payload);
        server.handle_npdu(Instant::now(), CLIENT, &npdu, false);
        let sent = drain(&mut server);
        prop_assert_eq!(sent.len(), 1);
        check_output(&sent);
    }

    #[test]
    fn the_client_survives_arbitrary_npdus(data in proptest::collection::vec(any::<u8>(), 0..200)) {
        let mut client = ClientCore::new(TsmConfig::default());
        let now = Instant::now();
        client
            .read_property(now, SERVER, id("ai,1"), P::PresentValue, None)
            .expect("sent");
        client.handle_npdu(now, SERVER, &data);
        while client.poll_completion().is_some() {}
        while client.poll_announcement().is_some() {}
        prop_assert!(client.poll_transmit().is_some(), "the request itself is queued");
    }
}
