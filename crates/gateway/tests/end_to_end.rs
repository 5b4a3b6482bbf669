//! The gateway end to end on 127.0.0.1: our BACnet device server (the `stress` profile of
//! the benchmarks) discovered, modelled, collected and served; a value changed on the
//! device reaches a Haystack watch and hisRead; a pointWrite at level 8 reaches the
//! device's priority-array; a device that stops answering in the middle of discovery does
//! not stop the gateway; a restart on the same backend keeps ids and hand edits; a gateway
//! registered as a foreign device finds a device behind a BBMD; a device that restarts goes
//! down, comes back and is subscribed again; an object-list that changes.
#![allow(clippy::unwrap_used)]

#[allow(dead_code)]
#[path = "../../bench/src/bacnet/profiles.rs"]
mod profiles;

use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use buildwire_bacnet::driver::{BacnetClient, BacnetServer, BacnetServerConfig};
use buildwire_bacnet::encoding::{ApplicationValue, Element, ObjectIdentifier};
use buildwire_bacnet::objects::PropertyData;
use buildwire_bacnet::{DeviceProfile, PropertyIdentifier as P};
use buildwire_gateway::model::Model;
use buildwire_gateway::rules::Rules;
use buildwire_gateway::{Config, Gateway};
use buildwire_haystack::backends::{Backend, MemoryBackend};
use buildwire_haystack::client::{ClientOptions, HaystackApi, Transport, connect};
use buildwire_haystack::server::HaystackServerConfig;
use buildwire_haystack::store::{CommitOp, EntityUpdate};
use buildwire_haystack::value::{Dict, Number, Ref, Value};
use tokio::net::UdpSocket;

const LOCALHOST: Ipv4Addr = Ipv4Addr::LOCALHOST;

async fn device(profile: DeviceProfile) -> BacnetServer {
    let mut config =
        BacnetServerConfig::new(SocketAddrV4::new(LOCALHOST, 0), profile.build().unwrap());
    config.announce = false;
    BacnetServer::start(config).await.unwrap()
}

fn config(devices: &[SocketAddrV4]) -> Config {
    let list: Vec<String> = devices.iter().map(|d| format!("\"{d}\"")).collect();
    Config::from_toml(&format!(
        "[site]\nid = \"hq\"\ndis = \"HQ\"\n\
         [bacnet]\nbind = \"127.0.0.1:0\"\ndevices = [{}]\nwho_is_wait_seconds = 0.4\n\
         apdu_timeout_seconds = 0.3\nretries = 1\n\
         [collect]\npoll_interval_seconds = 0.3\nhealth_interval_seconds = 0.3\n\
         [haystack]\nbind = \"127.0.0.1:0\"\n",
        list.join(", ")
    ))
    .unwrap()
}

async fn start(config: Config, store: Arc<dyn Backend>, imported: Option<Model>) -> Gateway {
    let client = Arc::new(buildwire_gateway::run::bind_client(&config).await.unwrap());
    Gateway::start_with(
        config,
        Rules::default_set(),
        HaystackServerConfig::new(),
        store,
        client,
        imported,
    )
    .await
    .unwrap()
}

async fn haystack(gateway: &Gateway) -> buildwire_haystack::client::ApiClient {
    connect(
        &gateway.haystack_url(),
        ClientOptions::default(),
        Transport::Http,
    )
    .await
    .unwrap()
}

/// How many points of the stress device the Haystack server has.
async fn stress_points(client: &buildwire_haystack::client::ApiClient) -> usize {
    client
        .read("point and equipRef==@bacnet.dev400", None)
        .await
        .unwrap()
        .row_count()
}

/// A gateway over `devices` on a fresh memory store.
async fn start_in_memory(devices: &[SocketAddrV4]) -> Gateway {
    start(config(devices), Arc::new(MemoryBackend::new()), None).await
}

/// Sets a REAL present-value on the device locally (as its controller would).
fn set_value(server: &BacnetServer, object: &str, value: f32) {
    server.with_database(|db| {
        db.set_local(
            oid(object),
            P::PresentValue,
            PropertyData::Single(ApplicationValue::Real(value)),
        )
        .unwrap();
    });
}

fn oid(text: &str) -> ObjectIdentifier {
    text.parse().unwrap()
}

fn record<'a>(model: &'a Model, id: &str) -> &'a Dict {
    model
        .records
        .iter()
        .find(|r| matches!(r.get("id"), Some(Value::Ref(r)) if r.id == id))
        .unwrap_or_else(|| panic!("no record @{id}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_models_every_object_of_the_stress_device() {
    let server = device(profiles::stress_profile()).await;
    let gateway = start_in_memory(&[server.local_addr()]).await;
    let report = gateway.report().clone();
    // 10 AI, 5 AO, 5 AV, 5 BI, 3 BO, 3 BV, 3 MSI, 2 MSV; schedule, calendar, NC are not points.
    assert_eq!(report.devices, 1);
    assert_eq!(report.points, 36, "{report:?}");
    assert_eq!(report.other_objects, 3);
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert!(
        report.validation.invalid.is_empty(),
        "{:?}",
        report.validation.invalid
    );
    // "BI-1" matches no rule: listed as untagged, and still a valid point.
    assert!(
        report
            .validation
            .untagged
            .contains(&"bacnet.dev400.bi1".to_owned())
    );
    let model = gateway.model();
    let ai1 = record(model, "bacnet.dev400.ai1");
    assert_eq!(ai1.get("dis"), Some(&Value::Str("AI-1".into())));
    assert_eq!(ai1.get("unit"), Some(&Value::Str("°F".into())));
    assert_eq!(ai1.get("kind"), Some(&Value::Str("Number".into())));
    assert_eq!(ai1.get("bacnetCur"), Some(&Value::Str("AI1".into())));
    assert_eq!(
        ai1.get("curVal"),
        Some(&Value::Number(Number::with_unit(61.5, "°F")))
    );
    assert_eq!(ai1.get("curStatus"), Some(&Value::Str("ok".into())));
    for tag in ["point", "sensor", "cur", "his", "temp"] {
        assert_eq!(ai1.get(tag), Some(&Value::Marker), "{tag}");
    }
    assert!(!ai1.contains("writable"));
    let av1 = record(model, "bacnet.dev400.av1");
    assert!(av1.contains("sp") && av1.contains("writable"));
    assert_eq!(av1.get("bacnetWrite"), Some(&Value::Str("AV1".into())));
    let msv1 = record(model, "bacnet.dev400.msv1");
    assert_eq!(msv1.get("kind"), Some(&Value::Str("Str".into())));
    assert!(matches!(msv1.get("enum"), Some(Value::Str(e)) if e.split(',').count() == 3));
    let bi1 = record(model, "bacnet.dev400.bi1");
    assert_eq!(bi1.get("kind"), Some(&Value::Str("Bool".into())));
    let conn = record(model, "bacnet.dev400.conn");
    assert_eq!(
        conn.get("uri"),
        Some(&Value::Uri(format!("bacnet://{}/400", server.local_addr())))
    );
    let equip = record(model, "bacnet.dev400");
    assert_eq!(
        equip.get("dis"),
        Some(&Value::Str("Docker-Stress-400".into()))
    );
    // The Haystack server serves the model: nav from the site to the equip to its points.
    let client = haystack(&gateway).await;
    assert_eq!(stress_points(&client).await, 36);
    let roots = client.nav(None).await.unwrap();
    assert_eq!(roots.row_count(), 1);
    // Round trip of the model through Trio, as a person would edit it.
    let trio = model
        .encode(buildwire_haystack::codec::Format::Trio)
        .unwrap();
    let back = Model::decode(&trio, buildwire_haystack::codec::Format::Trio).unwrap();
    assert_eq!(back.records.len(), model.records.len());
    gateway.stop().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_change_reaches_a_watch_and_the_history_and_writes_reach_the_device() {
    let server = device(profiles::stress_profile()).await;
    let gateway = start_in_memory(&[server.local_addr()]).await;
    // The collector subscribes in the background once the device answers its health check.
    for _ in 0..100 {
        if gateway.stats().cov_points.load(Ordering::Relaxed) == 36 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(gateway.stats().cov_points.load(Ordering::Relaxed), 36);
    let client = haystack(&gateway).await;
    let av2 = Ref::new("bacnet.dev400.av2");
    let opened = client
        .watch_open("test", std::slice::from_ref(&av2), None)
        .await
        .unwrap();
    let watch_id = match opened.meta.get("watchId") {
        Some(Value::Str(id)) => id.clone(),
        other => panic!("no watchId: {other:?}"),
    };
    // The device's value changes locally (as a controller would): COV notifies the gateway.
    set_value(&server, "av,2", 77.25);
    let wanted = Value::Number(Number::with_unit(77.25, "°F"));
    let mut seen = None;
    for _ in 0..50 {
        let changes = client.watch_poll(&watch_id, false).await.unwrap();
        if let Some(val) = changes.get(0, "curVal") {
            seen = Some(val.clone());
            if *val == wanted {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(seen, Some(wanted.clone()), "the watch saw the change");
    let history = client.his_read(&av2, "today").await.unwrap();
    let values: Vec<Value> = (0..history.row_count())
        .filter_map(|i| history.get(i, "val").cloned())
        .collect();
    assert!(
        values.contains(&wanted),
        "hisRead has the change: {values:?}"
    );

    // pointWrite level 8 lands in the device's priority-array slot 8.
    client
        .point_write(
            &av2,
            8,
            Value::Number(Number::with_unit(55.0, "°F")),
            Some("test"),
            None,
        )
        .await
        .unwrap();
    let reader = BacnetClient::bind(SocketAddrV4::new(LOCALHOST, 0), None)
        .await
        .unwrap();
    let slot = reader
        .read(server.local_addr(), oid("av,2"), P::PriorityArray, Some(8))
        .await
        .unwrap();
    assert_eq!(
        slot,
        vec![Element::Application(ApplicationValue::Real(55.0))]
    );
    let array = client.point_write_array(&av2).await.unwrap();
    assert_eq!(
        array.get(7, "val"),
        Some(&Value::Number(Number::with_unit(55.0, "°F")))
    );
    // null relinquishes the level on the device too.
    client
        .point_write(&av2, 8, Value::Null, Some("test"), None)
        .await
        .unwrap();
    let slot = reader
        .read(server.local_addr(), oid("av,2"), P::PriorityArray, Some(8))
        .await
        .unwrap();
    assert_eq!(slot, vec![Element::Application(ApplicationValue::Null)]);
    // Level 17 writes relinquish-default.
    client
        .point_write(
            &av2,
            17,
            Value::Number(Number::new(60.0)),
            Some("test"),
            None,
        )
        .await
        .unwrap();
    let default = reader
        .read(server.local_addr(), oid("av,2"), P::RelinquishDefault, None)
        .await
        .unwrap();
    assert_eq!(
        default,
        vec![Element::Application(ApplicationValue::Real(60.0))]
    );
    // A value of the wrong kind is refused with an error grid, and the device is untouched.
    assert!(
        client
            .point_write(&av2, 8, Value::Str("hot".into()), Some("test"), None)
            .await
            .is_err()
    );
    // An input is not writable.
    assert!(
        client
            .point_write(
                &Ref::new("bacnet.dev400.ai1"),
                8,
                Value::Number(Number::new(1.0)),
                None,
                None
            )
            .await
            .is_err()
    );
    reader.shutdown();
    gateway.stop().await;
    server.shutdown().await;
}

/// A UDP relay in front of a device that forwards `budget` datagrams from the client and
/// then drops everything: the device stops answering in the middle of discovery.
async fn failing_relay(device: SocketAddrV4, budget: usize) -> SocketAddrV4 {
    let front = Arc::new(UdpSocket::bind((LOCALHOST, 0)).await.unwrap());
    let back = Arc::new(UdpSocket::bind((LOCALHOST, 0)).await.unwrap());
    let address = match front.local_addr().unwrap() {
        std::net::SocketAddr::V4(a) => a,
        other => panic!("{other}"),
    };
    let client = Arc::new(tokio::sync::Mutex::new(None));
    let forwarded = Arc::new(AtomicUsize::new(0));
    {
        let (front, back, client, forwarded) = (
            Arc::clone(&front),
            Arc::clone(&back),
            Arc::clone(&client),
            Arc::clone(&forwarded),
        );
        tokio::spawn(async move {
            let mut buf = vec![0u8; 2048];
            while let Ok((n, from)) = front.recv_from(&mut buf).await {
                *client.lock().await = Some(from);
                if forwarded.fetch_add(1, Ordering::SeqCst) < budget {
                    let _ = back.send_to(&buf[..n], device).await;
                }
            }
        });
    }
    tokio::spawn(async move {
        let mut buf = vec![0u8; 2048];
        while let Ok((n, _)) = back.recv_from(&mut buf).await {
            if let Some(to) = *client.lock().await {
                let _ = front.send_to(&buf[..n], to).await;
            }
        }
    });
    address
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_that_stops_answering_mid_discovery_does_not_stop_the_gateway() {
    let good = device(profiles::stress_profile()).await;
    let bad_device = device(profiles::large_profile(200)).await;
    // Who-Is, the device head and part of the object-list get through, then silence.
    let bad = failing_relay(bad_device.local_addr(), 3).await;
    let gateway = start_in_memory(&[good.local_addr(), bad]).await;
    let report = gateway.report().clone();
    assert_eq!(report.devices, 2, "{report:?}");
    assert!(
        report.problems.iter().any(|p| p.contains("500")),
        "the silent device is reported: {:?}",
        report.problems
    );
    // The good device is modelled completely and served.
    let client = haystack(&gateway).await;
    assert_eq!(stress_points(&client).await, 36);
    // The silent device's equip exists; whatever points it has are `down` once the health
    // check times out.
    let equip = client
        .read("equip and id==@bacnet.dev500", None)
        .await
        .unwrap();
    assert_eq!(equip.row_count(), 1);
    gateway.stop().await;
    good.shutdown().await;
    bad_device.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_on_the_same_backend_keeps_ids_hand_edits_and_history() {
    let server = device(profiles::stress_profile()).await;
    let store: Arc<dyn Backend> = Arc::new(MemoryBackend::new());
    let first = start(config(&[server.local_addr()]), Arc::clone(&store), None).await;
    let records = first.model().records.len();
    first.stop().await;
    // A person edits a point: a new marker, a rule's marker removed, a new dis.
    let mut diff = Dict::new();
    diff.insert("id", Value::Ref(Ref::new("bacnet.dev400.ai1")))
        .unwrap();
    diff.insert("dis", Value::Str("Lobby temperature".into()))
        .unwrap();
    diff.insert("zone", Value::Marker).unwrap();
    diff.insert("temp", Value::Remove).unwrap();
    store
        .commit(CommitOp::Update(vec![EntityUpdate {
            diff,
            expected_version: None,
        }]))
        .await
        .unwrap();
    let second = start(config(&[server.local_addr()]), Arc::clone(&store), None).await;
    assert_eq!(second.model().records.len(), records, "no duplicate record");
    let ai1 = record(second.model(), "bacnet.dev400.ai1");
    assert_eq!(
        ai1.get("dis"),
        Some(&Value::Str("Lobby temperature".into()))
    );
    assert_eq!(ai1.get("zone"), Some(&Value::Marker));
    assert!(!ai1.contains("temp"), "a removed rule marker stays removed");
    assert_eq!(ai1.get("bacnetCur"), Some(&Value::Str("AI1".into())));
    second.stop().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_device_gateway_finds_the_device_behind_a_bbmd() {
    use buildwire_bacnet::driver::{BacnetBbmd, BipConfig};
    use buildwire_bacnet::link::{BbmdConfig, BdtEntry};
    // A BBMD on 127.0.0.1:P and a device on 127.0.0.3:P share the port, as one subnet
    // does: the BBMD's local broadcasts reach the device. The gateway on 127.0.0.4 is not
    // on that subnet; it registers as a foreign device and its Who-Is goes through the BBMD.
    let port = std::net::UdpSocket::bind((LOCALHOST, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let loopback_broadcast = Ipv4Addr::new(127, 255, 255, 255);
    let bbmd_address = SocketAddrV4::new(LOCALHOST, port);
    let bbmd = BacnetBbmd::start(
        &BipConfig {
            bind: bbmd_address,
            broadcast: Some(loopback_broadcast),
        },
        BbmdConfig {
            bdt: vec![BdtEntry {
                address: bbmd_address,
                mask: Ipv4Addr::new(255, 255, 255, 255),
            }],
            ..BbmdConfig::default()
        },
    )
    .await
    .unwrap();
    let mut device_config = BacnetServerConfig::new(
        SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 3), port),
        profiles::stress_profile().build().unwrap(),
    );
    device_config.broadcast = Some(loopback_broadcast);
    device_config.announce = false;
    let server = BacnetServer::start(device_config).await.unwrap();
    let config = Config::from_toml(&format!(
        "[bacnet]\nbind = \"127.0.0.4:0\"\nbbmd = \"{bbmd_address}\"\nforeign_ttl_seconds = 60\n\
         who_is_wait_seconds = 1.0\napdu_timeout_seconds = 0.3\nretries = 1\n\
         instance_ranges = [[0, 1000]]\n[haystack]\nbind = \"127.0.0.1:0\"\n"
    ))
    .unwrap();
    let gateway = start(config, Arc::new(MemoryBackend::new()), None).await;
    let report = gateway.report().clone();
    assert_eq!(report.devices, 1, "{report:?}");
    assert_eq!(report.points, 36, "{report:?}");
    gateway.stop().await;
    server.shutdown().await;
    drop(bbmd);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_object_list_that_changes_between_discoveries() {
    use buildwire_bacnet::ObjectType;
    use buildwire_bacnet::objects::profile::ObjectSpec;
    let server = device(profiles::stress_profile()).await;
    let store: Arc<dyn Backend> = Arc::new(MemoryBackend::new());
    let first = start(config(&[server.local_addr()]), Arc::clone(&store), None).await;
    first.stop().await;
    // The device gains a zone temperature and loses BI-5.
    server.with_database(|db| {
        let mut spec = ObjectSpec::new(ObjectType::AnalogInput, 11, "ZN-T");
        spec.present_value = Some(21.5);
        spec.units = buildwire_bacnet::EngineeringUnits::DegreesCelsius;
        db.add(spec.build()).unwrap();
        db.remove(oid("bi,5")).unwrap();
    });
    let second = start(config(&[server.local_addr()]), Arc::clone(&store), None).await;
    let zone = record(second.model(), "bacnet.dev400.ai11");
    assert_eq!(
        zone.get("curVal"),
        Some(&Value::Number(Number::with_unit(21.5, "°C")))
    );
    assert!(
        zone.contains("zone") && zone.contains("temp"),
        "tagged by the rules"
    );
    // The vanished object's record is kept (its history and edits stay); reading it fails,
    // so its status becomes fault.
    let client = haystack(&second).await;
    let bi5 = Ref::new("bacnet.dev400.bi5");
    let mut status = None;
    for _ in 0..50 {
        let grid = client.read_ids(std::slice::from_ref(&bi5)).await.unwrap();
        status = grid.get(0, "curStatus").cloned();
        if status == Some(Value::Str("fault".into())) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status, Some(Value::Str("fault".into())));
    second.stop().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_device_restart_points_go_down_come_back_and_cov_flows_again() {
    let server = device(profiles::stress_profile()).await;
    let address = server.local_addr();
    let gateway = start_in_memory(&[address]).await;
    let client = haystack(&gateway).await;
    let av4 = Ref::new("bacnet.dev400.av4");
    let wait_for = |tag: &'static str, wanted: Value| {
        let client = &client;
        let av4 = av4.clone();
        async move {
            let mut seen = None;
            for _ in 0..400 {
                let grid = client.read_ids(std::slice::from_ref(&av4)).await.unwrap();
                seen = grid.get(0, tag).cloned();
                if seen.as_ref() == Some(&wanted) {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            panic!("{tag} never became {wanted:?} (last {seen:?})");
        }
    };
    wait_for("curStatus", Value::Str("ok".into())).await;
    server.shutdown().await;
    wait_for("curStatus", Value::Str("down".into())).await;
    // The device comes back on the same address, having forgotten every subscription.
    let mut config = BacnetServerConfig::new(address, profiles::stress_profile().build().unwrap());
    config.announce = false;
    let server = BacnetServer::start(config).await.unwrap();
    wait_for("curStatus", Value::Str("ok".into())).await;
    // Subscribed again, every point.
    for _ in 0..100 {
        if gateway.stats().cov_points.load(Ordering::Relaxed) == 36 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(gateway.stats().cov_points.load(Ordering::Relaxed), 36);
    // A change now arrives by COV (the next poll of a COV point is minutes away).
    set_value(&server, "av,4", 12.5);
    wait_for("curVal", Value::Number(Number::with_unit(12.5, "°F"))).await;
    gateway.stop().await;
    server.shutdown().await;
}
