//! Shared helpers of the BACnet/SC integration tests: a certificate directory, hubs and
//! nodes on 127.0.0.1 with short timeouts.
#![allow(clippy::unwrap_used, dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use buildwire_bacnet::driver::sc::certs::write_pki;
use buildwire_bacnet::driver::sc::tls::{ScTlsFiles, client_config, server_config};
use buildwire_bacnet::driver::{ScHub, ScHubConfig, ScNodeConfig, ScTransport, random_vmac};
use buildwire_bacnet::link::sc::{
    ConnectionConfig, DeviceUuid, HubConfig, LocalIdentity, NodeConfig,
};

/// A fresh directory under the system temporary directory.
pub fn temp_dir(tag: &str) -> PathBuf {
    let unique = format!(
        "buildwire-sc-{tag}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let dir = std::env::temp_dir().join(unique);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A CA and operational certificates for `names` in a new directory.
pub fn pki(tag: &str, names: &[&str]) -> PathBuf {
    let dir = temp_dir(tag);
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    write_pki(&dir, &names, &[], 30).unwrap();
    dir
}

pub fn files(dir: &Path, name: &str) -> ScTlsFiles {
    ScTlsFiles::in_directory(dir, name)
}

pub fn timeouts() -> ConnectionConfig {
    ConnectionConfig {
        connect_wait: Duration::from_secs(3),
        disconnect_wait: Duration::from_secs(2),
        heartbeat: Duration::from_secs(300),
    }
}

fn uuid() -> DeviceUuid {
    DeviceUuid::random_v4(rand_bytes())
}

fn rand_bytes<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    getrandom::fill(&mut out).unwrap();
    out
}

/// A TLS hub on 127.0.0.1 with the certificate `name` of `dir`.
pub async fn hub(dir: &Path, name: &str) -> ScHub {
    let mut config = HubConfig::new(random_vmac(), uuid());
    config.connection = timeouts();
    ScHub::start(ScHubConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        tls: Some(server_config(&files(dir, name)).unwrap()),
        hub: config,
    })
    .await
    .unwrap()
}

/// A node's configuration: certificate `name` of `dir`, the given hubs, fast reconnects.
pub fn node_config(dir: &Path, name: &str, primary: &str, failover: Option<&str>) -> ScNodeConfig {
    let identity = LocalIdentity {
        vmac: random_vmac(),
        uuid: uuid(),
        max_bvlc_length: 1600,
        max_npdu_length: 1497,
    };
    let mut node = NodeConfig::new(identity, primary);
    node.failover_hub = failover.map(str::to_owned);
    node.connection = timeouts();
    node.reconnect_min = Duration::from_millis(100);
    node.reconnect_max = Duration::from_secs(1);
    let mut config = ScNodeConfig::new(node, Some(client_config(&files(dir, name)).unwrap()));
    config.connect_timeout = Duration::from_secs(5);
    config
}

pub async fn node(
    dir: &Path,
    name: &str,
    primary: &str,
    failover: Option<&str>,
) -> Arc<ScTransport> {
    Arc::new(
        ScTransport::start(node_config(dir, name, primary, failover))
            .await
            .unwrap(),
    )
}
