//! `buildwire bacnet sc-certs`, `sc-hub` and `serve --transport sc` as processes: the
//! certificates they make are accepted with mutual TLS 1.3, and a client node (the library's
//! BACnet/SC transport) finds the served device through the hub and reads and writes it.
//! A node without a certificate from the CA is refused.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod processes;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use buildwire_bacnet::driver::sc::tls::{ScTlsFiles, client_config};
use buildwire_bacnet::driver::{BacnetClient, ScNodeConfig, ScTransport, random_uuid, random_vmac};
use buildwire_bacnet::encoding::{ApplicationValue, Element};
use buildwire_bacnet::link::sc::node::NodeConfig;
use buildwire_bacnet::link::sc::{HubConnectionStatus, LocalIdentity};
use buildwire_bacnet::network::DeviceAddress;
use buildwire_bacnet::tsm::TsmConfig;
use buildwire_bacnet::{ObjectIdentifier, PropertyIdentifier};
use processes::{Running, spawn};

/// Starts `buildwire ARGS...` and returns it with the first stdout line containing `ready`.
fn start(args: &[&str], ready: &str) -> (Running, String) {
    let (running, mut lines) = spawn(args);
    loop {
        let line = lines
            .next()
            .expect("the process printed its ready line before it ended")
            .expect("readable stdout");
        if line.contains(ready) {
            return (running, line);
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn client_node_config(dir: &Path, name: &str, hub: &str) -> ScNodeConfig {
    let identity = LocalIdentity {
        vmac: random_vmac(),
        uuid: random_uuid(),
        max_bvlc_length: 1600,
        max_npdu_length: 1497,
    };
    let tls = client_config(&ScTlsFiles::in_directory(dir, name)).unwrap();
    let mut config = ScNodeConfig::new(NodeConfig::new(identity, hub), Some(tls));
    config.connect_timeout = Duration::from_secs(5);
    config
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificates_hub_and_device_from_the_cli_work_together() {
    let dir = std::env::temp_dir().join(format!("bw-sc-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let pki = dir.to_str().unwrap();
    let made = Command::new(env!("CARGO_BIN_EXE_buildwire"))
        .args([
            "bacnet",
            "sc-certs",
            pki,
            "--names",
            "hub,device,client",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let listed: serde_json::Value = serde_json::from_slice(&made.stdout).unwrap();
    assert_eq!(
        listed["files"].as_array().map(Vec::len),
        Some(8),
        "{listed}"
    );

    // A second CA's certificate, to be refused.
    let other = dir.join("other");
    let made = Command::new(env!("CARGO_BIN_EXE_buildwire"))
        .args([
            "bacnet",
            "sc-certs",
            other.to_str().unwrap(),
            "--names",
            "stranger",
        ])
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");

    let port = free_port();
    let bind = format!("127.0.0.1:{port}");
    let file = |name: &str| format!("{pki}/{name}");
    let (_hub, line) = start(
        &[
            "bacnet",
            "sc-hub",
            "--bind",
            &bind,
            "--cert",
            &file("hub.crt"),
            "--key",
            &file("hub.key"),
            "--ca",
            &file("ca.crt"),
        ],
        "BACnet/SC hub on",
    );
    let uri = format!("wss://127.0.0.1:{port}");
    assert!(line.contains(&uri), "{line}");
    let (_device, line) = start(
        &[
            "bacnet",
            "serve",
            "--transport",
            "sc",
            "--hub",
            &uri,
            "--cert",
            &file("device.crt"),
            "--key",
            &file("device.key"),
            "--ca",
            &file("ca.crt"),
            "--device-id",
            "4242",
            "--objects",
            "stress",
        ],
        "serving",
    );
    assert!(
        line.contains("device,4242") && line.contains("40 objects"),
        "{line}"
    );

    let transport = ScTransport::start(client_node_config(&dir, "client", &uri))
        .await
        .unwrap();
    let client = BacnetClient::start_on(transport, TsmConfig::default(), true).unwrap();
    let mut found = Vec::new();
    for _ in 0..10 {
        found = client.who_is(None, Duration::from_secs(1)).await.unwrap();
        if !found.is_empty() {
            break;
        }
    }
    let (address, i_am) = found
        .into_iter()
        .find(|(_, i_am)| i_am.device.instance() == 4242)
        .expect("the device served by the CLI answers Who-Is through the hub");
    assert_eq!(i_am.device.instance(), 4242);
    let DeviceAddress::Local(_) = address else {
        panic!("a device on the same SC network is local: {address:?}");
    };
    let value = client.read_str(address, "av,1", "pv").await.unwrap();
    assert!(format!("{value:?}").contains("Real"), "{value:?}");
    let av1: ObjectIdentifier = "av,1".parse().unwrap();
    client
        .write(
            address,
            av1,
            PropertyIdentifier::PresentValue,
            vec![Element::Application(ApplicationValue::Real(12.5))],
            Some(8),
            None,
        )
        .await
        .unwrap();
    let back = client.read_str(address, "av,1", "pv").await.unwrap();
    assert_eq!(
        back,
        vec![Element::Application(ApplicationValue::Real(12.5))]
    );

    // The CLI's client commands over SC: whois finds the device's VMAC, read and write use it.
    let sc_client = |args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_buildwire"));
        command.args(["bacnet"]).args(args).args([
            "--transport",
            "sc",
            "--hub",
            &uri,
            "--cert",
            &file("client.crt"),
            "--key",
            &file("client.key"),
            "--ca",
            &file("ca.crt"),
            "--json",
        ]);
        let out = command.output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let found = sc_client(&["whois", "--timeout", "2"]);
    let vmac = found
        .as_array()
        .and_then(|list| list.iter().find(|d| d["instance"] == 4242))
        .and_then(|d| d["address"].as_str())
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("whois over SC did not find device 4242: {found}"));
    sc_client(&["write", &vmac, "av,2", "pv", "33.5", "--priority", "8"]);
    let read = sc_client(&["read", &vmac, "av,2", "pv"]);
    assert_eq!(read["value"][0]["value"], 33.5, "{read}");
    assert_eq!(read["address"], vmac.as_str());
    sc_client(&["wpm", &vmac, "av,3:pv=44.25", "--priority", "9"]);
    let rpm = sc_client(&["rpm", &vmac, "av,2:pv", "av,3:pv"]);
    let values: Vec<f64> = rpm
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| o["results"][0]["value"][0]["value"].as_f64())
        .collect();
    assert_eq!(values, vec![33.5, 44.25], "{rpm}");
    // points and epics over SC (issue 25): one device by VMAC, and every device a Who-Is
    // through the hub finds.
    let points = sc_client(&["points", &vmac]);
    let list = points.as_array().unwrap();
    assert!(
        list.iter()
            .any(|p| p["object"] == "analog-value,2" && p["present_value"] == "33.5"),
        "{points}"
    );
    assert!(
        list.iter().all(|p| p["device"] == "device,4242"),
        "{points}"
    );
    let everywhere = sc_client(&["points", "--all", "--wait", "2s", "--no-routers"]);
    assert!(
        everywhere
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["device"] == "device,4242" && p["address"] == vmac.as_str()),
        "{everywhere}"
    );
    let epics = sc_client(&["epics", &vmac]);
    assert_eq!(epics[0]["device"], "device,4242", "{epics}");
    assert_eq!(
        epics[0]["objects"].as_array().map(Vec::len),
        Some(list.len() + 1)
    );
    // COV over SC: the initial notification carries the value written above.
    let cov = sc_client(&[
        "subscribe",
        &vmac,
        "av,3",
        "--count",
        "1",
        "--duration",
        "10",
    ]);
    assert!(cov.to_string().contains("44.25"), "{cov}");

    // Our router with a B/IP port and an SC port: a B/IP client reads the SC device.
    let router_port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let sc_port = format!(
        "2=sc:{uri},cert={},key={},ca={}",
        file("client.crt"),
        file("client.key"),
        file("ca.crt")
    );
    let (_router, _) = start(
        &[
            "bacnet",
            "router",
            "--port",
            &format!("1=bip:127.0.0.1:{router_port}"),
            "--port",
            &sc_port,
        ],
        "routing",
    );
    let routed = format!("2:{}", vmac.replace(':', ""));
    let out = Command::new(env!("CARGO_BIN_EXE_buildwire"))
        .args(["bacnet", "read", &routed, "av,2", "pv", "--json"])
        .args(["--router", &format!("127.0.0.1:{router_port}")])
        .args(["--bind", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let through: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(through["value"][0]["value"], 33.5, "{through}");

    // A node whose certificate comes from another CA never gets connected.
    let mut stranger = client_node_config(&other, "stranger", &uri);
    stranger.connect_timeout = Duration::from_secs(2);
    // The transport starts and keeps trying; after its wait it is still not connected.
    let refused = ScTransport::start(stranger).await.unwrap();
    assert_eq!(
        refused.status(),
        HubConnectionStatus::NoHubConnection,
        "a certificate from another CA was accepted"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
