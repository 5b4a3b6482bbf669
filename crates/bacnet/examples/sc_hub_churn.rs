//! BACnet/SC hub under churn: 1,000 nodes (by default) connect with mutual TLS 1.3, are
//! seen by the hub, and disconnect, one after the other; the resident memory of this process
//! (hub and nodes) is printed every 100 cycles. Flat numbers mean the hub keeps nothing of
//! nodes that left. Not a test (it takes a while); run it by hand:
//!
//!     cargo run --release -p buildwire-bacnet --example sc_hub_churn -- 1000
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::time::{Duration, Instant};

use buildwire_bacnet::driver::sc::certs::write_pki;
use buildwire_bacnet::driver::sc::tls::{ScTlsFiles, client_config, server_config};
use buildwire_bacnet::driver::{
    ScHub, ScHubConfig, ScNodeConfig, ScTransport, random_uuid, random_vmac,
};
use buildwire_bacnet::link::sc::node::NodeConfig;
use buildwire_bacnet::link::sc::{HubConfig, LocalIdentity};

fn resident_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let cycles: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    let dir = std::env::temp_dir().join(format!("bw-sc-churn-{}", std::process::id()));
    write_pki(&dir, &["hub".into(), "node".into()], &[], 1).unwrap();
    let hub = ScHub::start(ScHubConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        tls: Some(server_config(&ScTlsFiles::in_directory(&dir, "hub")).unwrap()),
        hub: HubConfig::new(random_vmac(), random_uuid()),
    })
    .await
    .unwrap();
    let uri = hub.uri();
    let tls = client_config(&ScTlsFiles::in_directory(&dir, "node")).unwrap();
    let started = Instant::now();
    println!("cycle  resident_kib  hub_nodes  hub_connections  seconds");
    for cycle in 1..=cycles {
        let identity = LocalIdentity {
            vmac: random_vmac(),
            uuid: random_uuid(),
            max_bvlc_length: 1600,
            max_npdu_length: 1497,
        };
        let mut config =
            ScNodeConfig::new(NodeConfig::new(identity, uri.clone()), Some(tls.clone()));
        config.connect_timeout = Duration::from_secs(5);
        let node = ScTransport::start(config).await.unwrap();
        node.shutdown(Duration::from_secs(1)).await;
        if cycle % 100 == 0 || cycle == 1 {
            // Let the hub see the last disconnect.
            tokio::time::sleep(Duration::from_millis(50)).await;
            let stats = hub.stats();
            println!(
                "{cycle:>5}  {:>12}  {:>9}  {:>15}  {:>7.1}",
                resident_kib(),
                stats.nodes,
                stats.connections,
                started.elapsed().as_secs_f64()
            );
        }
    }
    hub.shutdown(Duration::from_secs(1)).await;
    let _ = std::fs::remove_dir_all(dir);
}
