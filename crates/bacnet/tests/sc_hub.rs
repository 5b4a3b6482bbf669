//! The BACnet/SC hub function (Annex AB.5.3), sans-IO: nodes connect with the Annex AB
//! handshake, unicasts are relayed by destination VMAC with the originating VMAC added,
//! broadcasts go to every other node, and non-conforming or hostile input gets the annex's
//! answer. No sockets: the hub and the nodes' connections exchange bytes directly.

use std::time::{Duration, Instant};

use buildwire_bacnet::enums::ErrorCode;
use buildwire_bacnet::link::sc::bvlc::{
    BvlcMessage, Payload, ResultOutcome, encode_encapsulated_npdu,
};
use buildwire_bacnet::link::sc::connection::Handled;
use buildwire_bacnet::link::sc::hub::ConnectionId;
use buildwire_bacnet::link::sc::{
    ConnectionConfig, DeviceUuid, Hub, HubConfig, HubEvent, HubOutput, LocalIdentity, ScConnection,
    Vmac,
};

fn vmac(last: u8) -> Vmac {
    Vmac::new([0x02, 0, 0, 0, 0, last])
}

fn identity(last: u8, uuid: u8) -> LocalIdentity {
    LocalIdentity {
        vmac: vmac(last),
        uuid: DeviceUuid::new([uuid; 16]),
        max_bvlc_length: 1600,
        max_npdu_length: 1497,
    }
}

fn hub() -> Hub {
    Hub::new(HubConfig::new(vmac(0xFE), DeviceUuid::new([0xFE; 16])), 1)
}

/// Every frame the hub wants to send, by connection; closes as `None`.
fn outputs(hub: &mut Hub) -> Vec<(ConnectionId, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    while let Some(output) = hub.poll_output() {
        match output {
            HubOutput::Send { connection, frame } => out.push((connection, Some(frame.to_vec()))),
            HubOutput::Close { connection } => out.push((connection, None)),
        }
    }
    out
}

fn events(hub: &mut Hub) -> Vec<HubEvent> {
    std::iter::from_fn(|| hub.poll_event()).collect()
}

/// A node that completed the handshake with the hub.
struct Node {
    id: ConnectionId,
    connection: ScConnection,
}

fn connect(hub: &mut Hub, now: Instant, last: u8, uuid: u8) -> Node {
    let id = hub.open_connection(now).expect("the hub has room");
    let mut connection =
        ScConnection::initiate(now, identity(last, uuid), ConnectionConfig::default(), 100);
    while let Some(frame) = connection.poll_transmit() {
        hub.handle_message(now, id, &frame);
    }
    // Answers to this connection; a replaced older connection of the same device may get
    // its Disconnect-Request and close here too.
    for (to, frame) in outputs(hub) {
        if to == id {
            let frame = frame.expect("no close during a good handshake");
            connection.handle_message(now, &frame);
        }
    }
    assert!(
        connection.is_connected(),
        "handshake with the hub did not complete"
    );
    Node { id, connection }
}

fn npdu_to(destination: Vmac, npdu: &[u8], originating: Option<Vmac>) -> Vec<u8> {
    let mut frame = Vec::new();
    encode_encapsulated_npdu(&mut frame, 7, originating, Some(destination), npdu);
    frame
}

#[test]
fn unicast_is_relayed_to_its_destination_with_the_originating_vmac_added() {
    let now = Instant::now();
    let mut hub = hub();
    let a = connect(&mut hub, now, 1, 1);
    let mut b = connect(&mut hub, now, 2, 2);
    let _c = connect(&mut hub, now, 3, 3);
    assert_eq!(hub.node_count(), 3);
    let _ = events(&mut hub);

    hub.handle_message(now, a.id, &npdu_to(vmac(2), b"\x01\x00hello", None));
    let sent = outputs(&mut hub);
    assert_eq!(sent.len(), 1, "{sent:?}");
    let (to, frame) = &sent[0];
    assert_eq!(*to, b.id);
    let frame = frame.as_deref().expect("a frame");
    let relayed = BvlcMessage::decode(frame).expect("the relayed frame decodes");
    // Annex AB.5.3: the hub adds the originator and drops the destination of a unicast.
    assert_eq!(relayed.originating, Some(vmac(1)));
    assert_eq!(relayed.destination, None);
    assert_eq!(relayed.message_id, 7);
    assert_eq!(relayed.payload, Payload::EncapsulatedNpdu(b"\x01\x00hello"));
    // The destination node's connection hands it over as a message from node 1.
    match b.connection.handle_message(now, frame) {
        Handled::Message(message) => assert_eq!(message.originating, Some(vmac(1))),
        other => panic!("node 2 did not take the relayed NPDU: {other:?}"),
    }
}

#[test]
fn broadcast_reaches_every_other_node_and_not_its_sender() {
    let now = Instant::now();
    let mut hub = hub();
    let a = connect(&mut hub, now, 1, 1);
    let b = connect(&mut hub, now, 2, 2);
    let c = connect(&mut hub, now, 3, 3);
    hub.handle_message(now, a.id, &npdu_to(Vmac::BROADCAST, b"\x01\x20who", None));
    let mut to: Vec<ConnectionId> = outputs(&mut hub)
        .into_iter()
        .map(|(id, frame)| {
            let frame = frame.expect("a frame");
            let message = BvlcMessage::decode(&frame).expect("decodes");
            assert_eq!(message.originating, Some(vmac(1)));
            // A relayed broadcast keeps the broadcast destination.
            assert_eq!(message.destination, Some(Vmac::BROADCAST));
            id
        })
        .collect();
    to.sort_unstable();
    let mut expected = vec![b.id, c.id];
    expected.sort_unstable();
    assert_eq!(to, expected);
}

#[test]
fn an_originating_vmac_from_a_node_is_replaced_by_its_registered_one() {
    // bac-py's node sends an Originating Virtual Address to its hub, which Annex AB.5.3 says
    // it must not; trusting it would let a node speak as another.
    let now = Instant::now();
    let mut hub = hub();
    let a = connect(&mut hub, now, 1, 1);
    let b = connect(&mut hub, now, 2, 2);
    let _ = events(&mut hub);
    for _ in 0..3 {
        hub.handle_message(now, a.id, &npdu_to(vmac(2), b"\x01\x00x", Some(vmac(9))));
    }
    let sent = outputs(&mut hub);
    assert_eq!(sent.len(), 3);
    for (to, frame) in sent {
        assert_eq!(to, b.id);
        let frame = frame.expect("a frame");
        let message = BvlcMessage::decode(&frame).expect("decodes");
        assert_eq!(
            message.originating,
            Some(vmac(1)),
            "the claimed VMAC was kept"
        );
    }
    let replaced: Vec<_> = events(&mut hub)
        .into_iter()
        .filter(|e| matches!(e, HubEvent::OriginatingVmacReplaced { .. }))
        .collect();
    assert_eq!(
        replaced.len(),
        1,
        "reported once per connection: {replaced:?}"
    );
    assert_eq!(hub.stats().originating_replaced, 3);
}

#[test]
fn a_vmac_in_use_by_another_device_is_refused_with_node_duplicate_vmac() {
    let now = Instant::now();
    let mut hub = hub();
    let _a = connect(&mut hub, now, 1, 1);
    let id = hub.open_connection(now).expect("room");
    // Same VMAC, another device UUID.
    let mut intruder = ScConnection::initiate(now, identity(1, 7), ConnectionConfig::default(), 1);
    while let Some(frame) = intruder.poll_transmit() {
        hub.handle_message(now, id, &frame);
    }
    let answers = outputs(&mut hub);
    let nak = answers
        .iter()
        .find_map(|(to, frame)| {
            (*to == id).then_some(())?;
            let frame = frame.as_deref()?;
            match BvlcMessage::decode(frame).ok()?.payload {
                Payload::Result(result) => match result.outcome {
                    ResultOutcome::Nak { error_code, .. } => Some(error_code),
                    ResultOutcome::Ack => None,
                },
                _ => None,
            }
        })
        .expect("a NAK for the duplicate VMAC");
    assert_eq!(nak, ErrorCode::NodeDuplicateVmac);
    assert_eq!(hub.node_count(), 1);
    assert!(
        events(&mut hub)
            .iter()
            .any(|e| matches!(e, HubEvent::DuplicateVmacRefused { .. }))
    );
    // The same device (same UUID) reconnecting replaces its old connection.
    let b = connect(&mut hub, now, 2, 2);
    let again = connect(&mut hub, now, 1, 1);
    assert_eq!(hub.node_count(), 2);
    hub.handle_message(now, b.id, &npdu_to(vmac(1), b"\x01\x00", None));
    let to: Vec<_> = outputs(&mut hub).into_iter().map(|(to, _)| to).collect();
    assert_eq!(
        to,
        vec![again.id],
        "unicast to the VMAC goes to the new connection"
    );
}

#[test]
fn messages_before_the_handshake_are_not_relayed() {
    let now = Instant::now();
    let mut hub = hub();
    let b = connect(&mut hub, now, 2, 2);
    let early = hub.open_connection(now).expect("room");
    hub.handle_message(now, early, &npdu_to(vmac(2), b"\x01\x00sneak", None));
    for (to, _) in outputs(&mut hub) {
        assert_ne!(to, b.id, "a message before Connect-Request was relayed");
    }
    assert_eq!(hub.node_count(), 1);
}

#[test]
fn garbage_and_unknown_functions_never_reach_other_nodes() {
    let now = Instant::now();
    let mut hub = hub();
    let a = connect(&mut hub, now, 1, 1);
    let b = connect(&mut hub, now, 2, 2);
    let inputs: [&[u8]; 6] = [
        b"",
        b"\x01",
        b"\x01\x04\x00",         // truncated destination VMAC
        b"\x7f\x00\x00\x01",     // unknown function
        b"\x01\x0c\x00\x01\x02", // option flags with no options
        &[0x01, 0x04, 0, 9, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
    ];
    for input in inputs {
        hub.handle_message(now, a.id, input);
        for (to, _) in outputs(&mut hub) {
            assert_ne!(to, b.id, "{input:?} was relayed");
        }
    }
    // The sender is still connected and still relayed.
    hub.handle_message(now, a.id, &npdu_to(vmac(2), b"\x01\x00ok", None));
    assert!(outputs(&mut hub).iter().any(|(to, _)| *to == b.id));
}

#[test]
fn a_silent_node_is_disconnected_after_twice_the_heartbeat_timeout() {
    // The accepting side (the hub) closes a connection silent for twice the heartbeat
    // timeout (Annex AB.6.3); the node would have sent a Heartbeat-Request after one.
    let start = Instant::now();
    let mut config = HubConfig::new(vmac(0xFE), DeviceUuid::new([0xFE; 16]));
    config.connection.heartbeat = Duration::from_secs(10);
    let mut hub = Hub::new(config, 1);
    let a = connect(&mut hub, start, 1, 1);
    assert_eq!(hub.node_count(), 1);
    let mut closed_at = None;
    for second in 1..=60 {
        let now = start + Duration::from_secs(second);
        hub.handle_timeout(now);
        if outputs(&mut hub)
            .iter()
            .any(|(to, frame)| *to == a.id && frame.is_none())
        {
            closed_at = Some(second);
            break;
        }
    }
    assert_eq!(
        closed_at,
        Some(20),
        "closed after {closed_at:?} s of silence"
    );
    assert_eq!(hub.node_count(), 0);
    assert!(events(&mut hub).iter().any(|e| matches!(
        e,
        HubEvent::NodeDisconnected {
            vmac: Some(v),
            ..
        } if *v == vmac(1)
    )));
}

#[test]
fn a_thousand_nodes_connecting_and_leaving_leave_no_trace() {
    let now = Instant::now();
    let mut hub = hub();
    for round in 0..1000u32 {
        let last = (round % 200) as u8 + 1;
        let node = connect(&mut hub, now, last, last);
        hub.connection_closed(node.id);
        let _ = outputs(&mut hub);
        let _ = events(&mut hub);
    }
    assert_eq!(hub.node_count(), 0);
    assert_eq!(hub.connection_count(), 0);
}

mod properties {
    use buildwire_bacnet::link::sc::bvlc::{BvlcMessage, ConnectInfo, HeaderOption, Payload};
    use buildwire_bacnet::link::sc::{DeviceUuid, Vmac};
    use proptest::prelude::*;

    fn vmac() -> impl Strategy<Value = Vmac> {
        any::<[u8; 6]>().prop_map(Vmac::new)
    }

    fn connect_info() -> impl Strategy<Value = ConnectInfo> {
        (vmac(), any::<[u8; 16]>(), any::<u16>(), any::<u16>()).prop_map(|(v, u, b, n)| {
            ConnectInfo {
                vmac: v,
                uuid: DeviceUuid::new(u),
                max_bvlc_length: b,
                max_npdu_length: n,
            }
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Any bytes: a value or an error, never a panic; a value encodes back to itself.
        #[test]
        fn arbitrary_bytes_decode_or_fail_cleanly(data in proptest::collection::vec(any::<u8>(), 0..96)) {
            if let Ok(message) = BvlcMessage::decode(&data) {
                let again = message.to_bytes();
                prop_assert_eq!(BvlcMessage::decode(&again).ok(), Some(message));
            }
        }

        /// Messages built from parts round-trip, with or without VMACs and options.
        #[test]
        fn built_messages_round_trip(
            id in any::<u16>(),
            originating in proptest::option::of(vmac()),
            destination in proptest::option::of(vmac()),
            npdu in proptest::collection::vec(any::<u8>(), 1..64),
            info in connect_info(),
            secure_path in any::<bool>(),
            which in 0u8..6,
        ) {
            let payload = match which {
                0 => Payload::EncapsulatedNpdu(&npdu),
                1 => Payload::ConnectRequest(info),
                2 => Payload::ConnectAccept(info),
                3 => Payload::HeartbeatRequest,
                4 => Payload::AddressResolution,
                _ => Payload::DisconnectRequest,
            };
            let mut message = BvlcMessage::new(id, payload);
            // Connection-level messages carry no VMACs (Annex AB.2.2).
            if which == 0 || which == 4 {
                message.originating = originating;
                message.destination = destination;
            }
            if secure_path && which == 0 {
                message.data_options.push(HeaderOption::secure_path());
            }
            let bytes = message.to_bytes();
            prop_assert_eq!(BvlcMessage::decode(&bytes), Ok(message));
        }
    }
}
