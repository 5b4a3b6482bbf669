//! The sans-IO router (Clause 6): routing between ports, network-layer messages, rejects
//! with their reasons, hop counts, loops, congestion; and on loopback the tokio router
//! between a client on network 1 and the stress server on network 2 (B/IP to B/IP and
//! B/IP to B/IPv6), every object read and written through it.
#![allow(clippy::unwrap_used)]

mod support_network;

#[allow(dead_code)]
#[path = "../../bench/src/bacnet/profiles.rs"]
mod profiles;

use std::time::{Duration, Instant};

use buildwire_bacnet::Reader;
use buildwire_bacnet::network::message::{NetworkMessage, NetworkRejectReason, RoutingTablePort};
use buildwire_bacnet::network::npdu::{MacAddress, Npdu, NpduBody, RemoteAddress};
use buildwire_bacnet::router::{
    DISCOVERY_ATTEMPTS, PortConfig, Router, RouterConfig, RouterTransmit, StaticRoute,
};

fn mac(octets: &[u8]) -> MacAddress {
    MacAddress::new(octets).unwrap()
}

const ROUTER1: [u8; 6] = [10, 0, 1, 1, 0xBA, 0xC0];
const ROUTER2: [u8; 6] = [10, 0, 2, 1, 0xBA, 0xC0];
const CLIENT: [u8; 6] = [10, 0, 1, 7, 0xBA, 0xC0];
const SERVER: [u8; 6] = [10, 0, 2, 9, 0xBA, 0xC0];
const OTHER_ROUTER: [u8; 6] = [10, 0, 2, 254, 0xBA, 0xC0];

fn two_port_config() -> RouterConfig {
    RouterConfig::new(vec![
        PortConfig {
            network: 1,
            mac: mac(&ROUTER1),
            max_npdu: 1497,
            mac_length: Some(6),
        },
        PortConfig {
            network: 2,
            mac: mac(&ROUTER2),
            max_npdu: 1497,
            mac_length: Some(6),
        },
    ])
}

/// A router with its start-up announcements checked and drained.
fn router(config: RouterConfig) -> Router {
    let mut router = Router::new(config).unwrap();
    let startup = drain(&mut router);
    // Each port announces the networks behind the other ports.
    assert_eq!(startup.len(), router.config().ports.len());
    for transmit in &startup {
        let expected = router.reachable_except(transmit.port);
        assert_eq!(transmit.destination, None);
        assert_eq!(
            message(&transmit.npdu),
            NetworkMessage::IAmRouterToNetwork(expected)
        );
    }
    router
}

fn drain(router: &mut Router) -> Vec<RouterTransmit> {
    std::iter::from_fn(|| router.poll_transmit()).collect()
}

fn decode(npdu: &[u8]) -> Npdu<'_> {
    Npdu::decode(&mut Reader::new(npdu)).unwrap()
}

fn message(npdu: &[u8]) -> NetworkMessage {
    NetworkMessage::from_body(&decode(npdu).body)
        .unwrap()
        .unwrap()
}

fn routed_apdu(
    destination: Option<RemoteAddress>,
    source: Option<RemoteAddress>,
    hop: u8,
) -> Vec<u8> {
    let mut bytes = Vec::new();
    Npdu {
        destination,
        source,
        hop_count: hop,
        expecting_reply: true,
        priority: Default::default(),
        body: NpduBody::Apdu(&[
            0x00, 0x05, 0x01, 0x0C, 0x0C, 0x00, 0x00, 0x00, 0x01, 0x19, 0x55,
        ]),
    }
    .encode(&mut bytes);
    bytes
}

fn remote(network: u16, octets: &[u8]) -> RemoteAddress {
    RemoteAddress {
        network,
        mac: mac(octets),
    }
}

#[test]
fn request_and_answer_cross_the_router_with_snet_and_dnet_rewritten() {
    let now = Instant::now();
    let mut router = router(two_port_config());
    // Client on network 1 asks the server on network 2: DNET 2, DADR server.
    let request = routed_apdu(Some(remote(2, &SERVER)), None, 255);
    router.handle_npdu(now, 0, mac(&CLIENT), &request, false);
    let out = drain(&mut router);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].port, out[0].destination), (1, Some(mac(&SERVER))));
    let delivered = decode(&out[0].npdu);
    assert_eq!(delivered.destination, None, "DNET removed on the last hop");
    assert_eq!(
        delivered.source,
        Some(remote(1, &CLIENT)),
        "SNET/SADR added"
    );
    assert!(delivered.expecting_reply);
    assert_eq!(delivered.body, decode(&request).body);
    // The answer: DNET 1 / DADR client, from the server on network 2.
    let answer = routed_apdu(Some(remote(1, &CLIENT)), None, 255);
    router.handle_npdu(now, 1, mac(&SERVER), &answer, false);
    let out = drain(&mut router);
    assert_eq!((out[0].port, out[0].destination), (0, Some(mac(&CLIENT))));
    let delivered = decode(&out[0].npdu);
    assert_eq!(delivered.destination, None);
    assert_eq!(delivered.source, Some(remote(2, &SERVER)));
    assert_eq!(router.stats().routed, 2);
}

#[test]
fn remote_broadcast_and_global_broadcast() {
    let now = Instant::now();
    let mut router = router(two_port_config());
    // A broadcast on network 2 (DLEN 0).
    let request = routed_apdu(Some(remote(2, &[])), None, 255);
    router.handle_npdu(now, 0, mac(&CLIENT), &request, true);
    let out = drain(&mut router);
    assert_eq!((out[0].port, out[0].destination), (1, None));
    assert_eq!(decode(&out[0].npdu).destination, None);
    // A global broadcast keeps DNET X'FFFF', gains SNET, loses one hop.
    let global = routed_apdu(Some(remote(0xFFFF, &[])), None, 255);
    router.handle_npdu(now, 0, mac(&CLIENT), &global, true);
    let out = drain(&mut router);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].port, out[0].destination), (1, None));
    let forwarded = decode(&out[0].npdu);
    assert_eq!(forwarded.destination, Some(remote(0xFFFF, &[])));
    assert_eq!(forwarded.source, Some(remote(1, &CLIENT)));
    assert_eq!(forwarded.hop_count, 254);
    // Its last hop: not forwarded.
    let tired = routed_apdu(Some(remote(0xFFFF, &[])), None, 1);
    router.handle_npdu(now, 0, mac(&CLIENT), &tired, true);
    assert!(drain(&mut router).is_empty());
    assert_eq!(router.stats().hop_count_exhausted, 1);
}

#[test]
fn who_is_router_and_i_am_router_build_the_table() {
    let now = Instant::now();
    let mut router = router(two_port_config());
    // Who-Is-Router-To-Network with no network: every network behind the other ports.
    let who = NetworkMessage::WhoIsRouterToNetwork(None).to_local_npdu();
    router.handle_npdu(now, 0, mac(&CLIENT), &who, true);
    let out = drain(&mut router);
    assert_eq!((out[0].port, out[0].destination), (0, None));
    assert_eq!(
        message(&out[0].npdu),
        NetworkMessage::IAmRouterToNetwork(vec![2])
    );
    // Another router on network 2 serves 5 and 6: learned, and announced on port 1.
    let i_am = NetworkMessage::IAmRouterToNetwork(vec![5, 6]).to_local_npdu();
    router.handle_npdu(now, 1, mac(&OTHER_ROUTER), &i_am, true);
    let out = drain(&mut router);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].port, 0);
    assert_eq!(
        message(&out[0].npdu),
        NetworkMessage::IAmRouterToNetwork(vec![5, 6])
    );
    let route = router.table().get(5).copied().unwrap();
    assert_eq!((route.port, route.next_hop), (1, Some(mac(&OTHER_ROUTER))));
    // The same announcement again changes nothing and is not repeated: no echo loop.
    router.handle_npdu(now, 1, mac(&OTHER_ROUTER), &i_am, true);
    assert!(drain(&mut router).is_empty());
    // Who-Is-Router for 6 on port 1 is answered; on port 2 (where 6 is) it is not.
    let who6 = NetworkMessage::WhoIsRouterToNetwork(Some(6)).to_local_npdu();
    router.handle_npdu(now, 0, mac(&CLIENT), &who6, true);
    assert_eq!(
        message(&drain(&mut router)[0].npdu),
        NetworkMessage::IAmRouterToNetwork(vec![6])
    );
    router.handle_npdu(now, 1, mac(&SERVER), &who6, true);
    assert!(drain(&mut router).is_empty());
    // Traffic for 5 goes to the next router with DNET kept and one hop fewer.
    let request = routed_apdu(Some(remote(5, &[0x21])), None, 255);
    router.handle_npdu(now, 0, mac(&CLIENT), &request, false);
    let out = drain(&mut router);
    assert_eq!(
        (out[0].port, out[0].destination),
        (1, Some(mac(&OTHER_ROUTER)))
    );
    let forwarded = decode(&out[0].npdu);
    assert_eq!(forwarded.destination, Some(remote(5, &[0x21])));
    assert_eq!(forwarded.source, Some(remote(1, &CLIENT)));
    assert_eq!(forwarded.hop_count, 254);
    // A hop count of 1 ends here.
    let tired = routed_apdu(Some(remote(5, &[0x21])), None, 1);
    router.handle_npdu(now, 0, mac(&CLIENT), &tired, false);
    assert!(drain(&mut router).is_empty());
}

#[test]
fn unknown_network_is_searched_then_rejected_to_the_originator() {
    let t0 = Instant::now();
    let mut router = router(two_port_config());
    // From a device behind another router on network 1 (SNET 7).
    let request = routed_apdu(Some(remote(9, &[0x33])), Some(remote(7, &[0x44])), 200);
    router.handle_npdu(t0, 0, mac(&[10, 0, 1, 254, 0xBA, 0xC0]), &request, false);
    let mut asked = 0;
    let reject = loop {
        let out = drain(&mut router);
        if let Some(reject) = out.iter().find(|t| {
            matches!(
                message_or_none(&t.npdu),
                Some(NetworkMessage::RejectMessageToNetwork { .. })
            )
        }) {
            break reject.clone();
        }
        for transmit in &out {
            assert_eq!(transmit.port, 1, "asked only on the other port");
            assert_eq!(
                message(&transmit.npdu),
                NetworkMessage::WhoIsRouterToNetwork(Some(9))
            );
            asked += 1;
        }
        let now = router.poll_timeout().unwrap();
        router.handle_timeout(now);
        assert!(now - t0 < Duration::from_secs(10));
    };
    assert_eq!(asked, usize::from(DISCOVERY_ATTEMPTS));
    // The reject goes back through the router it came from, to SNET/SADR.
    assert_eq!(
        (reject.port, reject.destination),
        (0, Some(mac(&[10, 0, 1, 254, 0xBA, 0xC0])))
    );
    let decoded = decode(&reject.npdu);
    assert_eq!(decoded.destination, Some(remote(7, &[0x44])));
    assert_eq!(
        message(&reject.npdu),
        NetworkMessage::RejectMessageToNetwork {
            reason: NetworkRejectReason::UnknownNetwork,
            network: 9
        }
    );
    assert_eq!(router.poll_timeout(), None);
}

fn message_or_none(npdu: &[u8]) -> Option<NetworkMessage> {
    NetworkMessage::from_body(&decode(npdu).body).and_then(Result::ok)
}

#[test]
fn a_held_message_goes_out_when_the_route_is_learned() {
    let now = Instant::now();
    let mut router = router(two_port_config());
    let request = routed_apdu(Some(remote(9, &[0x33])), None, 255);
    router.handle_npdu(now, 0, mac(&CLIENT), &request, false);
    assert_eq!(
        drain(&mut router).len(),
        1,
        "one Who-Is-Router-To-Network on port 2"
    );
    let i_am = NetworkMessage::IAmRouterToNetwork(vec![9]).to_local_npdu();
    router.handle_npdu(now, 1, mac(&OTHER_ROUTER), &i_am, true);
    let out = drain(&mut router);
    let forwarded = out
        .iter()
        .find(|t| t.port == 1 && t.destination == Some(mac(&OTHER_ROUTER)))
        .unwrap();
    assert_eq!(
        decode(&forwarded.npdu).destination,
        Some(remote(9, &[0x33]))
    );
    assert_eq!(router.poll_timeout(), None);
}

#[test]
fn loops_are_dropped_never_sent_back() {
    let now = Instant::now();
    let mut router = router(two_port_config());
    // SNET 2 arriving on port 1: it went round a loop (or is forged).
    let looped = routed_apdu(Some(remote(2, &SERVER)), Some(remote(2, &[9])), 100);
    router.handle_npdu(now, 0, mac(&CLIENT), &looped, false);
    // A route whose next hop is on the arrival port is never used back out of it.
    let i_am = NetworkMessage::IAmRouterToNetwork(vec![5]).to_local_npdu();
    router.handle_npdu(now, 1, mac(&OTHER_ROUTER), &i_am, true);
    drain(&mut router);
    let back = routed_apdu(Some(remote(5, &[1])), None, 100);
    router.handle_npdu(now, 1, mac(&SERVER), &back, false);
    assert!(drain(&mut router).is_empty());
    assert_eq!(router.stats().loops, 2);
}

#[test]
fn reject_reasons_for_message_type_length_address_and_busy() {
    let now = Instant::now();
    let mut config = two_port_config();
    config.ports[1].max_npdu = 64;
    let mut router = router(config);
    let reasons = |router: &mut Router| -> Vec<NetworkRejectReason> {
        drain(router)
            .iter()
            .filter_map(|t| match message_or_none(&t.npdu) {
                Some(NetworkMessage::RejectMessageToNetwork { reason, .. }) => Some(reason),
                _ => None,
            })
            .collect()
    };
    // An unknown (reserved) network message type addressed to the router.
    let unknown = [0x01, 0x80, 0x40, 0x00];
    router.handle_npdu(now, 0, mac(&CLIENT), &unknown, false);
    assert_eq!(
        reasons(&mut router),
        [NetworkRejectReason::UnknownMessageType]
    );
    // Too long for port 2.
    let mut long = Vec::new();
    Npdu {
        destination: Some(remote(2, &SERVER)),
        source: None,
        hop_count: 255,
        expecting_reply: false,
        priority: Default::default(),
        body: NpduBody::Apdu(&[0u8; 100]),
    }
    .encode(&mut long);
    router.handle_npdu(now, 0, mac(&CLIENT), &long, false);
    assert_eq!(reasons(&mut router), [NetworkRejectReason::MessageTooLong]);
    // A 3-octet DADR on a B/IP network.
    let bad_mac = routed_apdu(Some(remote(2, &[1, 2, 3])), None, 255);
    router.handle_npdu(now, 0, mac(&CLIENT), &bad_mac, false);
    assert_eq!(reasons(&mut router), [NetworkRejectReason::AddressingError]);
    // Busy: announced on every port, then traffic is rejected.
    router.set_busy(true);
    let announced = drain(&mut router);
    assert_eq!(announced.len(), 2);
    assert!(matches!(
        message(&announced[0].npdu),
        NetworkMessage::RouterBusyToNetwork(_)
    ));
    let request = routed_apdu(Some(remote(2, &SERVER)), None, 255);
    router.handle_npdu(now, 0, mac(&CLIENT), &request, false);
    assert_eq!(reasons(&mut router), [NetworkRejectReason::RouterBusy]);
    router.set_busy(false);
    assert!(matches!(
        message(&drain(&mut router)[0].npdu),
        NetworkMessage::RouterAvailableToNetwork(_)
    ));
    // A reject is never answered with a reject.
    let reject = NetworkMessage::RejectMessageToNetwork {
        reason: NetworkRejectReason::Other,
        network: 77,
    };
    let mut bytes = Vec::new();
    reject.encode_npdu(Some(remote(77, &[1])), None, 255, &mut bytes);
    router.handle_npdu(now, 0, mac(&CLIENT), &bytes, false);
    router.handle_timeout(now + Duration::from_secs(5));
    router.handle_timeout(now + Duration::from_secs(10));
    assert!(reasons(&mut router).is_empty());
}

#[test]
fn rejects_are_rate_limited() {
    let now = Instant::now();
    let mut config = two_port_config();
    config.reject_rate = 10;
    let mut router = router(config);
    let unknown = [0x01, 0x80, 0x40];
    for _ in 0..1000 {
        router.handle_npdu(now, 0, mac(&CLIENT), &unknown, false);
    }
    assert_eq!(drain(&mut router).len(), 10);
    assert_eq!(router.stats().rejects_suppressed, 990);
}

#[test]
fn downstream_busy_marks_routes_and_is_relayed() {
    let now = Instant::now();
    let mut router = router(two_port_config());
    let i_am = NetworkMessage::IAmRouterToNetwork(vec![5]).to_local_npdu();
    router.handle_npdu(now, 1, mac(&OTHER_ROUTER), &i_am, true);
    drain(&mut router);
    let busy = NetworkMessage::RouterBusyToNetwork(vec![]).to_local_npdu();
    router.handle_npdu(now, 1, mac(&OTHER_ROUTER), &busy, true);
    let relayed = drain(&mut router);
    assert_eq!(relayed.len(), 1);
    assert_eq!(relayed[0].port, 0);
    assert_eq!(
        message(&relayed[0].npdu),
        NetworkMessage::RouterBusyToNetwork(vec![5])
    );
    let request = routed_apdu(Some(remote(5, &[1])), None, 255);
    router.handle_npdu(now, 0, mac(&CLIENT), &request, false);
    let out = drain(&mut router);
    assert!(matches!(
        message(&out[0].npdu),
        NetworkMessage::RejectMessageToNetwork {
            reason: NetworkRejectReason::RouterBusy,
            network: 5
        }
    ));
    // After the 30-second busy period the route is usable again without Available.
    router.handle_npdu(
        now + Duration::from_secs(31),
        0,
        mac(&CLIENT),
        &request,
        false,
    );
    let out = drain(&mut router);
    assert_eq!(out[0].destination, Some(mac(&OTHER_ROUTER)));
}

#[test]
fn initialize_routing_table_query_and_guarded_update() {
    let now = Instant::now();
    let mut config = two_port_config();
    config.static_routes.push(StaticRoute {
        network: 30,
        port: 1,
        next_hop: Some(mac(&OTHER_ROUTER)),
    });
    let mut router = router(config);
    let query = NetworkMessage::InitializeRoutingTable(vec![]).to_local_npdu();
    router.handle_npdu(now, 0, mac(&CLIENT), &query, false);
    let out = drain(&mut router);
    assert_eq!(out[0].destination, Some(mac(&CLIENT)));
    let port = |network, port_id| RoutingTablePort {
        network,
        port_id,
        port_info: vec![],
    };
    assert_eq!(
        message(&out[0].npdu),
        NetworkMessage::InitializeRoutingTableAck(vec![port(1, 1), port(2, 2), port(30, 2)])
    );
    // Updates are refused unless configured.
    let update = NetworkMessage::InitializeRoutingTable(vec![port(40, 2)]).to_local_npdu();
    router.handle_npdu(now, 0, mac(&CLIENT), &update, false);
    assert!(matches!(
        message(&drain(&mut router)[0].npdu),
        NetworkMessage::RejectMessageToNetwork {
            reason: NetworkRejectReason::Other,
            ..
        }
    ));
    assert!(router.table().get(40).is_none());
    let mut config = two_port_config();
    config.accept_routing_table_updates = true;
    let mut router = self::router(config);
    router.handle_npdu(now, 0, mac(&CLIENT), &update, false);
    assert_eq!(
        message(&drain(&mut router)[0].npdu),
        NetworkMessage::InitializeRoutingTableAck(vec![])
    );
    assert_eq!(router.table().get(40).unwrap().port, 1);
    // Port id 0 purges.
    let purge = NetworkMessage::InitializeRoutingTable(vec![port(40, 0)]).to_local_npdu();
    router.handle_npdu(now, 0, mac(&CLIENT), &purge, false);
    drain(&mut router);
    assert!(router.table().get(40).is_none());
}

#[test]
fn what_is_network_number_is_answered_only_locally() {
    let now = Instant::now();
    let mut router = router(two_port_config());
    let ask = NetworkMessage::WhatIsNetworkNumber.to_local_npdu();
    router.handle_npdu(now, 1, mac(&SERVER), &ask, true);
    let out = drain(&mut router);
    assert_eq!((out[0].port, out[0].destination), (1, None));
    assert_eq!(
        message(&out[0].npdu),
        NetworkMessage::NetworkNumberIs {
            network: 2,
            configured: true
        }
    );
    let mut routed = Vec::new();
    NetworkMessage::WhatIsNetworkNumber.encode_npdu(None, Some(remote(7, &[1])), 255, &mut routed);
    router.handle_npdu(now, 1, mac(&OTHER_ROUTER), &routed, true);
    assert!(drain(&mut router).is_empty());
}

#[test]
fn configuration_errors_are_explained() {
    let mut duplicate = two_port_config();
    duplicate.ports[1].network = 1;
    assert!(Router::new(duplicate).unwrap_err().0.contains("two ports"));
    let mut bad = two_port_config();
    bad.static_routes.push(StaticRoute {
        network: 2,
        port: 0,
        next_hop: None,
    });
    assert!(
        Router::new(bad)
            .unwrap_err()
            .0
            .contains("directly connected")
    );
    assert!(Router::new(RouterConfig::new(vec![])).is_err());
}

#[test]
fn garbage_never_panics_nor_amplifies() {
    // Deterministic pseudo-random inputs (the fuzz target does this at scale).
    let now = Instant::now();
    let mut router = router(two_port_config());
    let mut state = 0x1234_5678_u32;
    let mut sent = 0usize;
    for _ in 0..20_000 {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let len = (state % 24) as usize;
        let mut bytes: Vec<u8> = (0..len)
            .map(|i| (state.rotate_left(i as u32 * 3) & 0xFF) as u8)
            .collect();
        if let Some(first) = bytes.first_mut() {
            *first = 1;
        }
        router.handle_npdu(
            now,
            (state % 2) as usize,
            mac(&CLIENT),
            &bytes,
            state.is_multiple_of(3),
        );
        sent += drain(&mut router).len();
        while router.poll_local().is_some() {}
    }
    // Each input causes at most a couple of datagrams (a forward or an answer, or a
    // Who-Is-Router per other port).
    assert!(sent < 40_000, "{sent}");
}

// ---- tokio router on loopback ----------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_on_network_1_reads_and_writes_every_stress_object_on_network_2_bip_to_bip() {
    let setup = support_network::LoopbackBipToBip::start().await;
    support_network::check_every_stress_object(
        &setup.client,
        setup.server_address(),
        &setup.reference,
    )
    .await;
    setup.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_on_network_1_reads_and_writes_every_stress_object_on_network_2_bip_to_bip6() {
    let setup = support_network::LoopbackBipToBip6::start().await;
    support_network::check_every_stress_object(
        &setup.client,
        setup.server_address(),
        &setup.reference,
    )
    .await;
    setup.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn global_who_is_through_the_router_finds_the_remote_device_with_its_network() {
    let setup = support_network::LoopbackBipToBip::start().await;
    let found = setup
        .client
        .who_is(None, Duration::from_millis(800))
        .await
        .unwrap();
    let remote: Vec<_> = found
        .iter()
        .filter(|(address, _)| address.to_string().starts_with("2:"))
        .collect();
    assert_eq!(remote.len(), 1, "{found:?}");
    assert_eq!(remote[0].1.device.instance(), 400);
    assert_eq!(remote[0].0, setup.server_address());
    setup.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_network_fails_with_no_route() {
    let setup = support_network::LoopbackBipToBip::start().await;
    let target: buildwire_bacnet::network::DeviceAddress = "77:0a000001bac0".parse().unwrap();
    let started = std::time::Instant::now();
    let got = setup
        .client
        .read_str(target, "device,400", "object-name")
        .await;
    // The router rejects (unknown network) after its own search; the client's search
    // found the router, so the request goes out and the reject makes the TSM time out,
    // or the client finds no router at all.
    assert!(got.is_err(), "{got:?}");
    assert!(started.elapsed() < Duration::from_secs(20));
    setup.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_router_hosts_a_device_reachable_from_both_networks() {
    let setup = support_network::LoopbackBipToBip::start_with_router_device().await;
    // Locally on network 1: the router's own address on that network.
    let name = setup
        .client
        .read_str(setup.router_port1(), "device,500", "object-name")
        .await
        .unwrap();
    assert!(format!("{name:?}").contains("Router-500"), "{name:?}");
    // Through the router, as a node of network 2.
    let as_remote = setup.router_on_network2();
    let name = setup
        .client
        .read_str(as_remote, "device,500", "object-name")
        .await
        .unwrap();
    assert!(format!("{name:?}").contains("Router-500"));
    setup.shutdown().await;
}
