//! `buildwire gateway` as processes against our BACnet stress device (in this test) on
//! 127.0.0.1:
//! - `gateway discover` writes a model file with every point, and refuses bad input with
//!   exit status 1 or 2 and a message;
//! - `gateway run` on a throw-away PostgreSQL, and on Redis: values changed on the device
//!   are acknowledged (visible through the gateway's Haystack API), the gateway is killed
//!   with SIGKILL and started again, more values change; afterwards the history holds
//!   every acknowledged value exactly once, in order, and the model has the same records;
//! - two gateways (two sites) on one PostgreSQL, served by a third process.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../haystack/tests/storage_support/mod.rs"]
mod storage_support;

#[allow(dead_code)]
#[path = "../../bench/src/bacnet/profiles.rs"]
mod profiles;

mod processes;

use std::net::{Ipv4Addr, SocketAddrV4};
use std::process::Command;
use std::time::Duration;

use buildwire_bacnet::PropertyIdentifier as P;
use buildwire_bacnet::driver::{BacnetServer, BacnetServerConfig};
use buildwire_bacnet::encoding::ApplicationValue;
use buildwire_bacnet::objects::PropertyData;
use buildwire_haystack::client::{ClientOptions, HaystackApi, HaystackClient};
use buildwire_haystack::{Number, Ref, Value};
use processes::Running;
use storage_support::{TempPostgres, TempRedis};

async fn stress_device() -> BacnetServer {
    device_of(profiles::stress_profile()).await
}

async fn device_of(profile: buildwire_bacnet::DeviceProfile) -> BacnetServer {
    let mut config = BacnetServerConfig::new(
        SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0),
        profile.build().unwrap(),
    );
    config.announce = false;
    BacnetServer::start(config).await.unwrap()
}

fn buildwire() -> Command {
    Command::new(env!("CARGO_BIN_EXE_buildwire"))
}

/// `buildwire gateway run` on `store` for the device; returns it and its Haystack URL.
fn run_gateway(device: SocketAddrV4, store: &str) -> (Running, String) {
    run_site_gateway(device, store, "hq:UTC")
}

/// `buildwire gateway run` for site `site` (ID:TZ).
fn run_site_gateway(device: SocketAddrV4, store: &str, site: &str) -> (Running, String) {
    let device = device.to_string();
    let (running, line) = processes::start(&[
        "gateway",
        "run",
        "--bacnet",
        "127.0.0.1:0",
        "--device",
        &device,
        "--who-is-wait",
        "300ms",
        "--site",
        site,
        "--store",
        store,
        "--haystack",
        "127.0.0.1:0",
        "--report",
        "1h",
    ]);
    assert!(line.starts_with("serving Haystack on "), "{line}");
    let url = line.split_whitespace().nth(3).expect("a URL").to_owned();
    (running, url)
}

/// Sets av,3 on the device and waits until the gateway's Haystack API shows it: the value
/// is then acknowledged (committed to the store).
async fn change_and_wait(device: &BacnetServer, haystack: &HaystackClient, value: f32) {
    change_and_wait_on(device, haystack, "av,3", "bacnet.dev400.av3", value, "°F").await;
}

/// Sets `object` on the device and waits until the Haystack server shows it on `id`.
async fn change_and_wait_on(
    device: &BacnetServer,
    haystack: &HaystackClient,
    object: &str,
    id: &str,
    value: f32,
    unit: &str,
) {
    device.with_database(|db| {
        db.set_local(
            object.parse().unwrap(),
            P::PresentValue,
            PropertyData::Single(ApplicationValue::Real(value)),
        )
        .unwrap();
    });
    let wanted = Value::Number(Number::with_unit(f64::from(value), unit));
    for _ in 0..100 {
        let grid = haystack.read_ids(&[Ref::new(id)]).await.unwrap();
        if grid.get(0, "curVal") == Some(&wanted) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the Haystack server never showed {value} on @{id}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_on_postgres_loses_and_duplicates_nothing_across_kill_9() {
    let pg = TempPostgres::start();
    survives_kill_9(&pg.create_database("site")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_on_redis_loses_and_duplicates_nothing_across_kill_9() {
    let redis = TempRedis::start();
    survives_kill_9(&redis.url()).await;
}

/// Values acknowledged by the gateway on `store`, a SIGKILL and a restart, more values:
/// the history holds each acknowledged value once, in order, and the records are the same.
async fn survives_kill_9(store: &str) {
    let store = store.to_owned();
    let device = stress_device().await;
    let (gateway, url) = run_gateway(device.local_addr(), &store);
    let haystack = HaystackClient::connect(&url, ClientOptions::default())
        .await
        .unwrap();
    let records = haystack.read("id", None).await.unwrap().row_count();
    assert_eq!(records, 1 + 2 + 36, "site, conn, equip and the 36 points");
    let mut acknowledged = Vec::new();
    for step in 0..5 {
        let value = 80.0 + step as f32;
        change_and_wait(&device, &haystack, value).await;
        acknowledged.push(value);
    }
    // SIGKILL: no shutdown, no flush.
    drop(gateway);
    let (_gateway, url) = run_gateway(device.local_addr(), &store);
    let haystack = HaystackClient::connect(&url, ClientOptions::default())
        .await
        .unwrap();
    assert_eq!(
        haystack.read("id", None).await.unwrap().row_count(),
        records,
        "same ids after the restart, no duplicate record"
    );
    for step in 0..5 {
        let value = 90.0 + step as f32;
        change_and_wait(&device, &haystack, value).await;
        acknowledged.push(value);
    }
    let history = haystack
        .his_read(&Ref::new("bacnet.dev400.av3"), "today")
        .await
        .unwrap();
    let values: Vec<f64> = (0..history.row_count())
        .filter_map(|i| match history.get(i, "val") {
            Some(Value::Number(n)) => Some(n.value),
            _ => None,
        })
        .collect();
    let expected: Vec<f64> = acknowledged.iter().map(|v| f64::from(*v)).collect();
    assert_eq!(values, expected, "every acknowledged value once, in order");
    device.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_gateways_share_one_postgres_that_a_haystack_server_reads() {
    let pg = TempPostgres::start();
    let store = pg.create_database("shared");
    let east_device = stress_device().await; // device 400, 36 points
    let west_device = device_of(profiles::large_profile(20)).await; // device 500, 20 points
    let (east, _) = run_site_gateway(east_device.local_addr(), &store, "east:UTC");
    let (_west, _) = run_site_gateway(west_device.local_addr(), &store, "west:UTC");
    let (_server, line) = processes::start(&[
        "haystack",
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--backend",
        &store,
    ]);
    let url = processes::served_at(&line);
    let haystack = HaystackClient::connect(&url, ClientOptions::default())
        .await
        .unwrap();
    let all = haystack.read("id", None).await.unwrap();
    let ids: Vec<String> = (0..all.row_count())
        .filter_map(|i| match all.get(i, "id") {
            Some(Value::Ref(r)) if !r.id.contains(".ai") && !r.id.contains(".av") => {
                Some(r.id.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        haystack.read("site", None).await.unwrap().row_count(),
        2,
        "{ids:?}"
    );
    assert_eq!(
        haystack
            .read("point and siteRef==@east", None)
            .await
            .unwrap()
            .row_count(),
        36
    );
    assert_eq!(
        haystack
            .read("point and siteRef==@west", None)
            .await
            .unwrap()
            .row_count(),
        20
    );
    // A restart of one gateway touches its own site only.
    drop(east);
    let (_east, _) = run_site_gateway(east_device.local_addr(), &store, "east:UTC");
    assert_eq!(haystack.read("point", None).await.unwrap().row_count(), 56);
    // A change on the west device reaches the shared store through the west gateway.
    change_and_wait_on(
        &west_device,
        &haystack,
        "av,7",
        "bacnet.dev500.av7",
        42.5,
        "°C",
    )
    .await;
    east_device.shutdown().await;
    west_device.shutdown().await;
}

#[test]
fn discover_writes_the_model_and_refuses_bad_input() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let device = runtime.block_on(stress_device());
    let out = std::env::temp_dir().join(format!("buildwire-gw-{}.trio", std::process::id()));
    let result = buildwire()
        .args(["gateway", "discover", "--bacnet", "127.0.0.1:0", "--device"])
        .arg(device.local_addr().to_string())
        .args(["--who-is-wait", "300ms", "--json", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&result.stdout).unwrap();
    assert_eq!(report["devices"], 1);
    assert_eq!(report["points"], 36);
    assert_eq!(report["invalid"].as_array().map(Vec::len), Some(0));
    let trio = std::fs::read_to_string(&out).unwrap();
    assert_eq!(trio.matches("bacnetCur:").count(), 36);
    assert!(trio.contains("id:@bacnet.dev400.ai1"));
    let _ = std::fs::remove_file(&out);
    // No way to find devices: a user mistake, status 1 and what to do.
    let result = buildwire()
        .args(["gateway", "discover", "--out", "x.trio"])
        .output()
        .unwrap();
    assert_eq!(result.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&result.stderr).contains("--broadcast"));
    // A model file name without a known extension.
    let result = buildwire()
        .args([
            "gateway",
            "discover",
            "--device",
            "127.0.0.1:47808",
            "--out",
            "x.txt",
        ])
        .output()
        .unwrap();
    assert_eq!(result.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&result.stderr).contains(".trio"));
    // A bad configuration file names the line and the key.
    let config = std::env::temp_dir().join(format!("buildwire-gw-{}.toml", std::process::id()));
    std::fs::write(
        &config,
        "[bacnet]\nbroadcast = \"192.168.1.255\"\nrange = 5\n",
    )
    .unwrap();
    let result = buildwire()
        .args(["gateway", "discover", "--out", "x.trio", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&config);
    assert_eq!(result.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(
        stderr.contains("line 3") && stderr.contains("range"),
        "{stderr}"
    );
    // A bad option value is a usage error.
    let result = buildwire()
        .args(["gateway", "run", "--haystack", "nowhere"])
        .output()
        .unwrap();
    assert_eq!(result.status.code(), Some(2));
    runtime.block_on(device.shutdown());
}
