//! Issue 25: `bacnet points`, `bacnet epics`, `rpm ... :all` with its fallback,
//! `read --repeat`, COV timestamps, and the safe inputs and honest exits of the BACnet
//! commands, against devices served by `buildwire bacnet serve` on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod processes;

use std::process::{Command, Output};

use processes::{Running, served_at, start};
use serde_json::Value;

/// Serves a device and gives its address.
fn device(extra: &[&str]) -> (Running, String) {
    let mut args = vec!["bacnet", "serve", "--bind", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    let (running, first) = start(&args);
    (running, served_at(&first))
}

/// Runs `buildwire ARGS` to its end, whatever its exit status.
fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_buildwire"))
        .args(args)
        .output()
        .expect("buildwire runs")
}

/// How many objects the device's object-list names (read with `bacnet read`).
fn object_count(address: &str, device: &str) -> usize {
    let json: Value = serde_json::from_str(&ok(&[
        "bacnet",
        "read",
        address,
        device,
        "object-list",
        "--json",
    ]))
    .unwrap();
    json["value"].as_array().expect("a list").len()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs a command that must succeed; its stdout.
fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?}: {}\n{}",
        stderr(&out),
        stdout(&out)
    );
    stdout(&out)
}

#[test]
fn points_lists_every_object_as_table_csv_and_json() {
    // The stress profile; every object but the device is a point.
    let (_server, address) = device(&[]);
    let objects = object_count(&address, "device,400");
    assert!(objects > 30, "{objects}");
    let json: Value = serde_json::from_str(&ok(&["bacnet", "points", &address, "--json"])).unwrap();
    let points = json.as_array().unwrap();
    assert_eq!(points.len(), objects - 1, "{json:#}");
    let av1 = points
        .iter()
        .find(|p| p["object"] == "analog-value,1")
        .expect("analog-value,1 listed");
    assert_eq!(av1["device"], "device,400");
    assert_eq!(av1["type"], "analog-value");
    assert!(av1["name"].as_str().is_some_and(|n| !n.is_empty()), "{av1}");
    assert!(av1["present_value"].is_string(), "{av1}");
    assert!(av1["units"].is_string(), "{av1}");
    assert_eq!(av1["status_flags"], "normal", "{av1}");
    assert_eq!(av1["out_of_service"], false, "{av1}");
    assert!(av1["commandable"].is_boolean(), "{av1}");
    assert_eq!(av1["errors"], Value::Array(Vec::new()), "{av1}");
    // No device object among the points.
    assert!(points.iter().all(|p| p["type"] != "device"));

    let csv = ok(&["bacnet", "points", &address, "--csv"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "device,address,object,type,name,description,present_value,units,status_flags,\
         out_of_service,commandable"
    );
    assert_eq!(lines.len(), objects, "{csv}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("\"device,400\",") && l.contains("\"analog-value,1\"")),
        "{csv}"
    );

    let table = ok(&["bacnet", "points", &address]);
    assert!(
        table.starts_with(&format!("device,400 at {address}\n")),
        "{table}"
    );
    assert!(table.contains("OBJECT"), "{table}");
    assert!(
        table
            .trim_end()
            .ends_with(&format!("{} point(s)", objects - 1)),
        "{table}"
    );
}

#[test]
fn points_reads_a_device_that_cannot_segment_element_by_element() {
    // 600 objects: the object-list needs segmentation the device does not do.
    let (_server, address) = device(&[
        "--objects",
        "large:600",
        "--max-apdu",
        "480",
        "--no-segmentation",
        "--device-id",
        "77",
    ]);
    let csv = ok(&["bacnet", "points", &address, "--csv"]);
    assert_eq!(csv.lines().count(), 601, "{}", &csv[..csv.len().min(2000)]);
    // rpm of the whole object-list: the device aborts it (it cannot segment), and rpm
    // falls back to reading it element by element, as `read` does.
    let json: Value = serde_json::from_str(&ok(&[
        "bacnet",
        "rpm",
        &address,
        "device,77:object-list",
        "--json",
    ]))
    .unwrap();
    let list = json[0]["results"][0]["value"].as_array().expect("the list");
    assert_eq!(list.len(), 601);
}

#[test]
fn epics_lists_every_property_and_rpm_all_reads_them() {
    let (_server, address) = device(&["--device-id", "4194302"]);
    let text = ok(&["bacnet", "epics", &address]);
    assert!(text.contains("List of Objects in Test Device:"), "{text}");
    assert!(text.contains("object-identifier: device,4194302"), "{text}");
    assert!(text.contains("object-identifier: analog-value,1"), "{text}");
    let objects = object_count(&address, "device,4194302");
    let blocks = text.matches("  {\n").count();
    assert_eq!(blocks, objects, "{text}");
    let json: Value = serde_json::from_str(&ok(&["bacnet", "epics", &address, "--json"])).unwrap();
    let listed = json[0]["objects"].as_array().unwrap();
    assert_eq!(listed.len(), objects);
    let device = &listed[0];
    let names: Vec<&str> = device["properties"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["property"].as_str().unwrap())
        .collect();
    for wanted in [
        "object-name",
        "object-list",
        "vendor-identifier",
        "protocol-revision",
    ] {
        assert!(names.contains(&wanted), "{names:?}");
    }

    let json: Value =
        serde_json::from_str(&ok(&["bacnet", "rpm", &address, "av,1:all", "--json"])).unwrap();
    let results = json[0]["results"].as_array().unwrap();
    assert!(results.len() > 5, "{json:#}");
    assert!(results.iter().any(|r| r["property"] == "present-value"));
}

#[test]
fn epics_falls_back_when_all_cannot_be_sent() {
    // The device object's `all` (with a 300-entry object-list) does not fit one 480-byte
    // APDU and the device cannot segment: property-list, then one read per property.
    let (_server, address) = device(&[
        "--objects",
        "large:300",
        "--max-apdu",
        "480",
        "--no-segmentation",
        "--device-id",
        "12",
    ]);
    let json: Value =
        serde_json::from_str(&ok(&["bacnet", "rpm", &address, "device,12:all", "--json"])).unwrap();
    let results = json[0]["results"].as_array().unwrap();
    let list = results
        .iter()
        .find(|r| r["property"] == "object-list")
        .expect("object-list read");
    assert_eq!(list["value"].as_array().map(Vec::len), Some(301), "{list}");
}

#[test]
fn rpm_exits_non_zero_when_every_read_failed() {
    let (_server, address) = device(&[]);
    let out = run(&["bacnet", "rpm", &address, "av,9999:pv"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stderr(&out).contains("failed"), "{}", stderr(&out));
    // One good read among failures: 0.
    let out = run(&["bacnet", "rpm", &address, "av,1:pv", "av,9999:pv"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// `bacnet read ADDRESS av,1 pv --repeat N --interval INTERVAL FORMAT`.
fn read_repeat(address: &str, n: &str, interval: &str, format: &str) -> String {
    ok(&[
        "bacnet",
        "read",
        address,
        "av,1",
        "pv",
        "--repeat",
        n,
        "--interval",
        interval,
        format,
    ])
}

#[test]
fn read_repeat_prints_timed_rounds_and_cov_lines_carry_time() {
    let (_server, address) = device(&[]);
    let csv = read_repeat(&address, "3", "100ms", "--csv");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "round,time,address,object,property,value,error");
    assert_eq!(lines.len(), 4, "{csv}");
    for (round, line) in lines[1..].iter().enumerate() {
        let fields: Vec<&str> = line.split(',').collect();
        assert_eq!(fields[0], (round + 1).to_string(), "{line}");
        assert!(
            fields[1].ends_with('Z') && fields[1].contains('T'),
            "{line}"
        );
        assert!(fields.last().is_some_and(|e| e.is_empty()), "{line}");
    }
    let json = read_repeat(&address, "2", "50ms", "--json");
    let rows: Vec<Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1]["round"], 2);
    assert!(rows[0]["time"].as_str().is_some_and(|t| t.ends_with('Z')));
    assert!(
        rows[0]["value"].is_object() || rows[0]["value"].is_array(),
        "{}",
        rows[0]
    );

    let line = ok(&[
        "bacnet",
        "subscribe",
        &address,
        "av,1",
        "--count",
        "1",
        "--json",
    ]);
    let notification: Value = serde_json::from_str(line.trim()).unwrap();
    assert!(
        notification["time"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z')),
        "{notification}"
    );
}

#[test]
fn out_of_range_inputs_are_refused_with_clear_messages() {
    let (_server, address) = device(&[]);
    for too_big in ["1e400", "3.4e39"] {
        let out = run(&["bacnet", "write", &address, "av,1", "pv", too_big]);
        assert_eq!(out.status.code(), Some(1), "{too_big}: {}", stdout(&out));
        assert!(
            stderr(&out).contains("out of range for a real"),
            "{}",
            stderr(&out)
        );
    }
    let out = run(&[
        "bacnet",
        "subscribe",
        &address,
        "av,1",
        "--property",
        "pv",
        "--increment",
        "1e400",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("out of range for a real"),
        "{}",
        stderr(&out)
    );
    // The value stayed what it was (never infinity).
    let pv = ok(&["bacnet", "read", &address, "av,1", "pv"]);
    assert!(!pv.to_lowercase().contains("inf"), "{pv}");

    // Device instances end at 4194302 (4194303 is the "any device" wildcard): usage errors.
    for instance in ["4194304", "4194303"] {
        let out = run(&[
            "bacnet",
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--device-id",
            instance,
        ]);
        assert_eq!(out.status.code(), Some(2), "{instance}");
        assert!(stderr(&out).contains(instance), "{}", stderr(&out));
    }
    let out = run(&["bacnet", "read", &address, "av,4194304", "pv"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("av,4194304"), "{}", stderr(&out));
}

#[test]
fn whois_to_one_device_binds_a_free_port() {
    let (_server, address) = device(&["--device-id", "321"]);
    let json: Value = serde_json::from_str(&ok(&[
        "bacnet",
        "whois",
        "--to",
        &address,
        "--timeout",
        "1s",
        "--json",
    ]))
    .unwrap();
    let found = json.as_array().unwrap();
    assert_eq!(found.len(), 1, "{json}");
    assert_eq!(found[0]["instance"], 321);
}

#[test]
fn a_loopback_device_answers_a_broadcast_who_is_without_broadcast_options() {
    let (_server, address) = device(&["--device-id", "654"]);
    let port = address.rsplit_once(':').unwrap().1;
    let json: Value = serde_json::from_str(&ok(&[
        "bacnet",
        "whois",
        "--bind",
        &format!("127.0.0.2:{port}"),
        "--timeout",
        "1s",
        "--json",
    ]))
    .unwrap();
    let found = json.as_array().unwrap();
    assert!(
        found
            .iter()
            .any(|d| d["instance"] == 654 && d["address"] == address),
        "{json}"
    );
}

#[test]
fn a_broadcast_who_is_from_another_port_gets_a_unicast_i_am() {
    // A tool on an ephemeral port broadcasts Who-Is to the device's port: it cannot hear
    // the broadcast I-Am (that goes to the device's port), so the answer comes to it.
    let (_server, address) = device(&["--device-id", "777"]);
    let port: u16 = address.rsplit_once(':').unwrap().1.parse().unwrap();
    let tool = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    tool.set_broadcast(true).unwrap();
    tool.set_read_timeout(Some(std::time::Duration::from_secs(2)))
        .unwrap();
    // Original-Broadcast-NPDU, NPDU version 1 without addresses, unconfirmed Who-Is.
    let who_is = [0x81, 0x0b, 0x00, 0x08, 0x01, 0x00, 0x10, 0x08];
    tool.send_to(&who_is, ("127.255.255.255", port)).unwrap();
    let mut buffer = [0u8; 1500];
    let (n, from) = tool.recv_from(&mut buffer).expect("an I-Am comes back");
    assert_eq!(from.to_string(), address);
    let text = ok(&["bacnet", "decode", &hex(&buffer[..n]), "--json"]);
    assert!(text.contains("i-am") || text.contains("I-Am"), "{text}");
    assert!(text.contains("device,777"), "{text}");
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn points_all_finds_every_device_by_who_is_and_reports_a_duplicate_instance() {
    // Three devices on one port of three loopback addresses; two share instance 61.
    let (_a, first) = device(&["--device-id", "61", "--objects", "large:2"]);
    let port = first.rsplit_once(':').unwrap().1.to_owned();
    let other = |host: &str, id: &str| {
        let bind = format!("{host}:{port}");
        start(&[
            "bacnet",
            "serve",
            "--bind",
            &bind,
            "--device-id",
            id,
            "--objects",
            "large:3",
        ])
        .0
    };
    let _b = other("127.0.0.3", "63");
    let _c = other("127.0.0.4", "61");
    let out = run(&[
        "bacnet",
        "points",
        "--all",
        "--bind",
        &format!("127.0.0.2:{port}"),
        "--low",
        "50",
        "--high",
        "69",
        "--range-size",
        "5",
        "--pause",
        "20ms",
        "--wait",
        "1s",
        "--no-routers",
        "--csv",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let csv = stdout(&out);
    let devices: std::collections::BTreeSet<&str> = csv
        .lines()
        .skip(1)
        .map(|line| line.split("\",").next().unwrap())
        .collect();
    assert_eq!(
        devices.into_iter().collect::<Vec<_>>(),
        vec!["\"device,61", "\"device,63"],
        "{csv}"
    );
    let message = stderr(&out);
    assert!(
        message.contains("2 device(s) answered 4 Who-Is"),
        "{message}"
    );
    assert!(
        message.contains("warning: device,61 answered from"),
        "{message}"
    );
}

#[test]
fn a_taken_port_says_what_to_do() {
    let (_server, address) = device(&[]);
    let out = run(&["bacnet", "serve", "--bind", &address]);
    assert_eq!(out.status.code(), Some(1));
    let message = stderr(&out);
    assert!(message.contains("in use"), "{message}");
    assert!(message.contains("--bind"), "{message}");
}

#[test]
fn serve_password_guards_device_communication_control() {
    use buildwire_bacnet::driver::BacnetClient;
    use buildwire_bacnet::enums::EnableDisable;
    use buildwire_bacnet::services::{ConfirmedRequest, DeviceCommunicationControlRequest};
    use buildwire_bacnet::{ClientError, app::Reply};

    let (_server, address) = device(&["--password", "s3cret"]);
    let to: std::net::SocketAddrV4 = address.parse().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let client = BacnetClient::bind("127.0.0.1:0".parse().unwrap(), None)
            .await
            .unwrap();
        let dcc = |password: Option<&str>| {
            ConfirmedRequest::DeviceCommunicationControl(DeviceCommunicationControlRequest {
                time_duration: Some(1),
                enable_disable: EnableDisable::Enable,
                password: password.map(str::to_owned),
            })
        };
        let wrong = client.request(to, dcc(Some("guess"))).await;
        assert!(
            matches!(&wrong, Err(ClientError::Error { error, .. })
                if error.code.to_string() == "password-failure"),
            "{wrong:?}"
        );
        let right = client.request(to, dcc(Some("s3cret"))).await;
        assert!(matches!(right, Ok(Reply::SimpleAck)), "{right:?}");
    });
    let out = run(&["bacnet", "serve", "--bind", "127.0.0.1:0", "--password", ""]);
    assert_eq!(out.status.code(), Some(1));
}
