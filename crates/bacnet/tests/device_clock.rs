//! The device server's clock-driven work starts with the server, over UDP on 127.0.0.1:
//! a Trend Log samples from the start, before any request reaches the device.
#![allow(clippy::unwrap_used)]

use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::Duration;

use buildwire_bacnet::driver::{BacnetClient, BacnetServer, BacnetServerConfig};
use buildwire_bacnet::encoding::{ApplicationValue, Element};
use buildwire_bacnet::objects::profile::DeviceProfile;
use buildwire_bacnet::{ObjectIdentifier, PropertyIdentifier as P};

const PROFILE: &str = r#"{
    "device": {"instance": 420, "name": "logging-device"},
    "objects": [
        {"type": "analog-input", "instance": 1, "name": "Zone-Temp", "present_value": 20.5},
        {"type": "trend-log", "instance": 1, "name": "Zone-Temp-Log",
         "log": "ai,1:present-value", "log_interval": 0.5, "buffer_size": 100}
    ]
}"#;

#[tokio::test]
async fn a_trend_log_samples_before_any_request() {
    let database = DeviceProfile::from_json(PROFILE).unwrap().build().unwrap();
    let mut config = BacnetServerConfig::new(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0), database);
    config.announce = false;
    let server = BacnetServer::start(config).await.unwrap();
    // Nothing reaches the device for 1.2 s: samples at 0, 0.5 and 1.0 s.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let client = BacnetClient::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0), None)
        .await
        .unwrap();
    let log: ObjectIdentifier = "trend-log,1".parse().unwrap();
    let count = client
        .read(server.local_addr(), log, P::RecordCount, None)
        .await
        .unwrap();
    let [Element::Application(ApplicationValue::Unsigned(n))] = count.as_slice() else {
        panic!("record-count {count:?}");
    };
    assert!(*n >= 2, "{n} records after 1.2 s");
    server.shutdown().await;
}
