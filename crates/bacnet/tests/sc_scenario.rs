//! The BACnet/SC scenario of the bac-py SC benchmark, over mutual TLS 1.3 on 127.0.0.1: a
//! hub, two echo nodes and a client node sending unicast and broadcast NPDUs; failover to
//! the secondary hub when the primary stops; direct connections; and untrusted, expired or
//! wrongly purposed certificates refused on both sides.
#![allow(clippy::unwrap_used)]

mod log_capture;
mod sc_support;
mod support_network;

#[allow(dead_code)]
#[path = "../../bench/src/bacnet/profiles.rs"]
mod profiles;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use buildwire_bacnet::driver::sc::certs::{
    ExtendedKeyUsage, KeyUsage, OperationalSpec, ScPki, write_issued,
};
use buildwire_bacnet::driver::{ScTransport, Transport};
use buildwire_bacnet::link::sc::{HubConnectionStatus, Vmac};
use sc_support::{hub, node, node_config, pki};
use tokio::task::JoinHandle;

/// An echo node: every unicast NPDU comes back prefixed with `ECHO:`; broadcasts are counted.
fn echo(node: Arc<ScTransport>, broadcasts: Arc<AtomicU64>) -> JoinHandle<()> {
    tokio::spawn(async move {
        while let Ok(delivery) = node.receive().await {
            if delivery.broadcast {
                broadcasts.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            let mut reply = b"ECHO:".to_vec();
            reply.extend_from_slice(&delivery.npdu);
            let _ = node.send_unicast(delivery.source, &reply).await;
        }
    })
}

/// Sends `count` tagged unicasts to `target` and checks every echo.
async fn round_trips(client: &ScTransport, target: Vmac, count: u32) {
    for seq in 0..count {
        let payload = format!("payload {seq} to {target}").into_bytes();
        client.send_unicast(target, &payload).await.unwrap();
        let delivery = tokio::time::timeout(Duration::from_secs(5), client.receive())
            .await
            .expect("an echo within 5 s")
            .unwrap();
        assert_eq!(delivery.source, target);
        assert!(!delivery.broadcast);
        assert_eq!(&delivery.npdu[..5], b"ECHO:");
        assert_eq!(&delivery.npdu[5..], &payload[..]);
    }
}

async fn wait_for(what: &str, mut condition: impl FnMut() -> bool) {
    for _ in 0..500 {
        if condition() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hub_echo_nodes_broadcast_failover_and_direct_connections() {
    let dir = pki("scenario", &["hub", "failover", "node1", "node2", "client"]);
    let primary = hub(&dir, "hub").await;
    let secondary = hub(&dir, "failover").await;
    let (primary_uri, failover_uri) = (primary.uri(), secondary.uri());
    assert!(primary_uri.starts_with("wss://127.0.0.1:"));

    let node1 = node(&dir, "node1", &primary_uri, Some(&failover_uri)).await;
    // node2 also accepts direct connections.
    let mut config = node_config(&dir, "node2", &primary_uri, Some(&failover_uri));
    config.direct_listener = Some((
        "127.0.0.1:0".parse().unwrap(),
        Some(
            buildwire_bacnet::driver::sc::tls::server_config(&sc_support::files(&dir, "node2"))
                .unwrap(),
        ),
    ));
    let node2 = Arc::new(ScTransport::start(config).await.unwrap());
    let client = node(&dir, "client", &primary_uri, Some(&failover_uri)).await;
    for n in [&node1, &node2, &client] {
        assert_eq!(n.status(), HubConnectionStatus::ConnectedToPrimaryHub);
    }
    assert_eq!(primary.stats().nodes, 3);

    let (b1, b2) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let echo1 = echo(Arc::clone(&node1), Arc::clone(&b1));
    let echo2 = echo(Arc::clone(&node2), Arc::clone(&b2));

    // Unicast through the hub, with payload sizes of the benchmark (25..1400 octets).
    round_trips(&client, node1.vmac(), 20).await;
    round_trips(&client, node2.vmac(), 20).await;
    let big = vec![0xA5u8; 1400];
    client.send_unicast(node1.vmac(), &big).await.unwrap();
    let reply = client.receive().await.unwrap();
    assert_eq!(reply.npdu.len(), 1405);
    assert!(primary.stats().hub.unicast_relayed >= 82);

    // A broadcast reaches both echo nodes, not the sender.
    client
        .send_broadcast(b"\x01\x20\xff\xff\x00\xff")
        .await
        .unwrap();
    wait_for("both broadcasts", || {
        b1.load(Ordering::Relaxed) == 1 && b2.load(Ordering::Relaxed) == 1
    })
    .await;
    assert_eq!(primary.stats().hub.broadcast_copies, 2);

    // Direct connection: resolve node2's URI through the hub, then connect to it.
    client.connect_direct(node2.vmac()).unwrap();
    wait_for("the direct connection", || {
        client.direct_peers() == vec![node2.vmac()]
    })
    .await;
    let relayed_before = primary.stats().hub.unicast_relayed;
    round_trips(&client, node2.vmac(), 10).await;
    assert_eq!(client.stats().sent_direct, 10);
    // The client's requests went direct; only node2's echoes (not direct: node2 has no
    // direct connection of its own to the client... it answers on the one it accepted).
    assert!(primary.stats().hub.unicast_relayed - relayed_before <= 10);

    // The primary hub stops: every node moves to the failover hub.
    primary.abort();
    for n in [&node1, &node2, &client] {
        assert!(
            n.wait_status(Duration::from_secs(10), |s| {
                s == HubConnectionStatus::ConnectedToFailoverHub
            })
            .await,
            "{} did not fail over",
            n.vmac()
        );
    }
    wait_for("3 nodes on the failover hub", || {
        secondary.stats().nodes == 3
    })
    .await;
    round_trips(&client, node1.vmac(), 10).await;
    client
        .send_broadcast(b"\x01\x20\xff\xff\x00\xfe")
        .await
        .unwrap();
    wait_for("broadcasts through the failover hub", || {
        b1.load(Ordering::Relaxed) == 2 && b2.load(Ordering::Relaxed) == 2
    })
    .await;

    echo1.abort();
    echo2.abort();
    let _ = (echo1.await, echo2.await);
    for n in [node1, node2, client] {
        Arc::into_inner(n)
            .unwrap()
            .shutdown(Duration::from_secs(2))
            .await;
    }
    wait_for("graceful disconnects", || {
        secondary.stats().connections == 0
    })
    .await;
    secondary.shutdown(Duration::from_secs(1)).await;
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn untrusted_expired_and_misused_certificates_are_refused() {
    log_capture::capture_logs();
    let dir = pki("refusals", &["hub", "node1"]);
    let rogue = pki("rogue", &["node1", "hub"]);
    let hub = hub(&dir, "hub").await;
    let uri = hub.uri();

    // Certificates from the right CA but unusable: expired, no digitalSignature, and a
    // server-only purpose used by a client.
    let ca = ScPki::generate("second CA", 30).unwrap();
    let bad = sc_support::temp_dir("bad");
    std::fs::write(bad.join("ca.crt"), ca.certificate_pem()).unwrap();
    let now = SystemTime::now();
    let mut expired = OperationalSpec::new("expired", 30);
    expired.not_before = now - Duration::from_secs(86_400 * 10);
    expired.not_after = now - Duration::from_secs(86_400);
    let mut no_signature = OperationalSpec::new("nosig", 30);
    no_signature.key_usage = KeyUsage::KeyEnciphermentOnly;
    let mut server_only = OperationalSpec::new("serveronly", 30);
    server_only.extended_key_usage = ExtendedKeyUsage::ServerOnly;
    for spec in [&expired, &no_signature, &server_only] {
        write_issued(&bad, &spec.name, &ca.issue(spec).unwrap()).unwrap();
    }
    // The hub trusts both CAs for this part, so only the defect itself can be the reason.
    let mut hub_files = sc_support::files(&dir, "hub");
    hub_files.issuers.push(bad.join("ca.crt"));
    let mut config = buildwire_bacnet::link::sc::HubConfig::new(
        buildwire_bacnet::driver::random_vmac(),
        buildwire_bacnet::link::sc::DeviceUuid::new([3; 16]),
    );
    config.connection = sc_support::timeouts();
    let lenient = buildwire_bacnet::driver::ScHub::start(buildwire_bacnet::driver::ScHubConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        tls: Some(buildwire_bacnet::driver::sc::tls::server_config(&hub_files).unwrap()),
        hub: config,
    })
    .await
    .unwrap();

    // A node whose certificate comes from another CA (it trusts the hub's CA, so the
    // refusal is the hub's).
    let before = hub.stats().handshake_refused;
    let mut config = node_config(&dir, "node1", &uri, None);
    let files = buildwire_bacnet::driver::sc::tls::ScTlsFiles {
        certificate: rogue.join("node1.crt"),
        private_key: rogue.join("node1.key"),
        issuers: vec![dir.join("ca.crt")],
    };
    config.tls = Some(buildwire_bacnet::driver::sc::tls::client_config(&files).unwrap());
    config.connect_timeout = Duration::from_millis(1500);
    let node = ScTransport::start(config).await.unwrap();
    assert_eq!(node.status(), HubConnectionStatus::NoHubConnection);
    node.shutdown(Duration::from_millis(100)).await;
    assert!(hub.stats().handshake_refused > before);
    assert_eq!(hub.stats().nodes, 0);

    // Each defective certificate against the hub that trusts its CA: refused by the hub.
    for name in ["expired", "nosig", "serveronly"] {
        let before = lenient.stats().handshake_refused;
        let mut config = node_config(&dir, "node1", &lenient.uri(), None);
        let files = buildwire_bacnet::driver::sc::tls::ScTlsFiles {
            certificate: bad.join(format!("{name}.crt")),
            private_key: bad.join(format!("{name}.key")),
            issuers: vec![dir.join("ca.crt")],
        };
        config.tls = Some(buildwire_bacnet::driver::sc::tls::client_config(&files).unwrap());
        config.connect_timeout = Duration::from_millis(1500);
        let node = ScTransport::start(config).await.unwrap();
        assert_eq!(
            node.status(),
            HubConnectionStatus::NoHubConnection,
            "{name} was accepted"
        );
        node.shutdown(Duration::from_millis(100)).await;
        assert!(lenient.stats().handshake_refused > before, "{name}");
    }
    assert_eq!(lenient.stats().nodes, 0);

    // The node refuses a hub whose certificate it cannot trust.
    let rogue_hub = sc_support::hub(&rogue, "hub").await;
    let mut config = node_config(&dir, "node1", &rogue_hub.uri(), None);
    config.connect_timeout = Duration::from_millis(1500);
    let node = ScTransport::start(config).await.unwrap();
    assert_eq!(node.status(), HubConnectionStatus::NoHubConnection);
    assert_eq!(rogue_hub.stats().nodes, 0);
    node.shutdown(Duration::from_millis(100)).await;

    // One clear line per refusal, naming the certificate and what is wrong with it.
    for (who, reason) in [
        ("CN=node1", "not signed by a trusted issuer"),
        ("CN=expired", "it expired at"),
        ("CN=nosig", "lacks digitalSignature"),
        ("CN=serveronly", "does not allow TLS client authentication"),
    ] {
        let lines = log_capture::logged(reason);
        assert!(
            lines.iter().any(
                |l| l.contains("BACnet/SC hub: connection refused peer=127.0.0.1:")
                    && l.contains(who)
            ),
            "no refusal line for {who}: {lines:?}"
        );
    }
    assert!(
        log_capture::logged("BACnet/SC node")
            .iter()
            .any(|l| l.contains("TLS handshake") && l.contains("not signed by a trusted issuer")),
        "the node does not say why it refused the rogue hub"
    );

    // And the same node with its own CA connects fine, so the refusals were the certificates.
    let good = sc_support::node(&dir, "node1", &uri, None).await;
    assert_eq!(good.status(), HubConnectionStatus::ConnectedToPrimaryHub);
    for dir in [dir, rogue, bad] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Any device runs over BACnet/SC: the 40-object stress server on a node of a TLS hub, and a
/// client on another node reads every property of every object and writes every
/// present-value, each checked against the server's own database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stress_server_serves_every_object_over_sc() {
    use buildwire_bacnet::driver::{BacnetClient, BacnetServer, BacnetServerConfig};
    use buildwire_bacnet::network::DeviceAddress;
    use buildwire_bacnet::tsm::TsmConfig;
    use profiles::stress_profile;

    let dir = pki("stress", &["hub", "server", "client"]);
    let hub = hub(&dir, "hub").await;
    let uri = hub.uri();
    let server_node = ScTransport::start(node_config(&dir, "server", &uri, None))
        .await
        .unwrap();
    let client_node = ScTransport::start(node_config(&dir, "client", &uri, None))
        .await
        .unwrap();
    wait_for("both nodes on the hub", || hub.stats().nodes == 2).await;
    let server_vmac = server_node.vmac();
    let mut config = BacnetServerConfig::new(
        "0.0.0.0:0".parse().unwrap(),
        stress_profile().build().unwrap(),
    );
    config.announce = false;
    let server = BacnetServer::start_on(server_node, config).await.unwrap();
    assert_eq!(server.local_addr(), server_vmac);
    let client = BacnetClient::start_on(client_node, TsmConfig::default(), true).unwrap();
    // Who-Is over the hub's broadcast finds the device by its VMAC.
    let found = client.who_is(None, Duration::from_secs(2)).await.unwrap();
    assert!(
        found.iter().any(
            |(address, i_am)| *address == DeviceAddress::Local(server_vmac)
                && i_am.device.instance() == 400
        ),
        "{found:?}"
    );
    let reference = support_network::Reference::Sc(server);
    support_network::check_every_stress_object(
        &client,
        DeviceAddress::Local(server_vmac),
        &reference,
    )
    .await;
    hub.shutdown(Duration::from_secs(1)).await;
    let _ = std::fs::remove_dir_all(dir);
}

/// A BACnet/IP client on network 1 reads and writes every object of the stress server, a
/// BACnet/SC device on network 2, through our router: a B/IP port and an SC port (the
/// router is a node of the hub).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bip_client_reaches_an_sc_device_through_the_router() {
    use std::net::{Ipv4Addr, SocketAddrV4};

    use crate::profiles::stress_profile;
    use buildwire_bacnet::driver::{
        BacnetClient, BacnetRouter, BacnetServer, BacnetServerConfig, BipConfig, BipTransport,
        RouterOptions, RouterPort,
    };
    use buildwire_bacnet::network::{DeviceAddress, MacAddress, RoutedAddress};

    let dir = pki("routed", &["hub", "router", "server"]);
    let hub = hub(&dir, "hub").await;
    let uri = hub.uri();
    let router_node = ScTransport::start(node_config(&dir, "router", &uri, None))
        .await
        .unwrap();
    let server_node = ScTransport::start(node_config(&dir, "server", &uri, None))
        .await
        .unwrap();
    wait_for("router and server on the hub", || hub.stats().nodes == 2).await;
    let server_vmac = server_node.vmac();
    let mut config = BacnetServerConfig::new(
        "0.0.0.0:0".parse().unwrap(),
        stress_profile().build().unwrap(),
    );
    config.announce = false;
    let server = BacnetServer::start_on(server_node, config).await.unwrap();

    let network_1 = BipTransport::bind(&BipConfig {
        bind: SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0),
        broadcast: None,
    })
    .await
    .unwrap();
    let router_at = network_1.local_addr();
    let router = BacnetRouter::start(
        vec![
            RouterPort::Bip {
                network: 1,
                transport: network_1,
            },
            RouterPort::Sc {
                network: 2,
                transport: router_node,
            },
        ],
        RouterOptions::default(),
    )
    .await
    .unwrap();
    let client = BacnetClient::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0), None)
        .await
        .unwrap();
    let target = DeviceAddress::Via {
        router: router_at,
        remote: RoutedAddress {
            network: 2,
            mac: MacAddress::new(server_vmac.as_bytes()).unwrap(),
        },
    };
    let name = client
        .read_str(target, "device,400", "object-name")
        .await
        .unwrap();
    assert!(!name.is_empty());
    let reference = support_network::Reference::Sc(server);
    support_network::check_every_stress_object(&client, target, &reference).await;
    router.shutdown().await;
    hub.shutdown(Duration::from_secs(1)).await;
    let _ = std::fs::remove_dir_all(dir);
}

/// A frame longer than the hub accepts (its max-BVLC-length) closes that WebSocket without
/// touching the hub's other nodes; here on a plaintext hub with a raw WebSocket client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_frame_closes_only_its_connection() {
    use buildwire_bacnet::driver::{ScHub, ScHubConfig, random_uuid, random_vmac};
    use buildwire_bacnet::link::sc::HubConfig;
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;

    let hub = ScHub::start(ScHubConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        tls: None,
        hub: HubConfig::new(random_vmac(), random_uuid()),
    })
    .await
    .unwrap();
    let uri = hub.uri();
    assert!(uri.starts_with("ws://"), "{uri}");
    // A well-behaved node stays connected throughout.
    let mut config = node_config(&pki("oversize", &["node"]), "node", &uri, None);
    config.tls = None;
    let node = ScTransport::start(config).await.unwrap();
    wait_for("the node on the hub", || hub.stats().nodes == 1).await;

    let mut request = uri.as_str().into_client_request().unwrap();
    request.headers_mut().insert(
        "Sec-WebSocket-Protocol",
        "hub.bsc.bacnet.org".parse().unwrap(),
    );
    let tcp = tokio::net::TcpStream::connect(uri.trim_start_matches("ws://"))
        .await
        .unwrap();
    let (mut ws, _) = tokio_tungstenite::client_async(request, tcp).await.unwrap();
    wait_for("two connections", || hub.stats().connections == 2).await;
    // 20,000 octets: far above the default max-BVLC-length of 1,600.
    let _ = ws.send(Message::binary(vec![0x01u8; 20_000])).await;
    let closed = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(message) = ws.next().await {
            if message.is_err() || matches!(message, Ok(Message::Close(_))) {
                return;
            }
        }
    })
    .await;
    assert!(
        closed.is_ok(),
        "the hub kept the oversized sender's connection"
    );
    wait_for("the oversized connection gone", || {
        hub.stats().connections == 1
    })
    .await;
    assert_eq!(hub.stats().nodes, 1);
    assert_eq!(node.status(), HubConnectionStatus::ConnectedToPrimaryHub);
    hub.shutdown(Duration::from_secs(1)).await;
}
