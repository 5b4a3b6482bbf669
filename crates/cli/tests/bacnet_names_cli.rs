//! Values by name (issue 25): `buildwire bacnet read/rpm` print units, object types,
//! binary values, multi-state states, status flags and the other enumerations and
//! constructed datatypes by name in text, with name and number in `--json`; `bacnet
//! decode` shows service parameters as named fields. Against `buildwire bacnet serve` on
//! an ephemeral loopback port.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod processes;

use processes::{Running, output, served_at, start};
use serde_json::Value;

/// A served stress device: the process, its address and its device identifier.
fn device() -> (Running, String, String) {
    let (running, first) = start(&["bacnet", "serve", "--bind", "127.0.0.1:0"]);
    let address = served_at(&first);
    let device = first
        .split_whitespace()
        .find(|word| word.starts_with("device,"))
        .unwrap_or_else(|| panic!("no device in {first:?}"))
        .to_owned();
    (running, address, device)
}

/// `buildwire bacnet read ADDRESS OBJECT PROPERTY EXTRA...`; its stdout.
fn read_with(address: &str, object: &str, property: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "bacnet",
        "read",
        address,
        object,
        property,
        "--bind",
        "127.0.0.1:0",
    ];
    args.extend_from_slice(extra);
    output(&args)
}

fn read(address: &str, object: &str, property: &str) -> String {
    read_with(address, object, property, &[])
}

fn read_json(address: &str, object: &str, property: &str) -> Value {
    serde_json::from_str(&read_with(address, object, property, &["--json"])).unwrap()
}

#[test]
fn read_prints_enumerations_by_name_and_json_has_both() {
    let (_server, address, device) = device();
    assert_eq!(
        read(&address, "ai,1", "units"),
        "analog-input,1 units: degrees-fahrenheit\n"
    );
    let units = read_json(&address, "ai,1", "units");
    assert_eq!(
        units["value"],
        serde_json::json!([{"type": "enumerated", "value": 64, "name": "degrees-fahrenheit",
                            "enumeration": "engineering-units"}])
    );
    assert_eq!(
        read(&address, "ai,1", "object-type"),
        "analog-input,1 object-type: analog-input\n"
    );
    assert_eq!(
        read(&address, "ai,1", "event-state"),
        "analog-input,1 event-state: normal\n"
    );
    assert_eq!(
        read(&address, "bi,1", "reliability"),
        "binary-input,1 reliability: no-fault-detected\n"
    );
    // A binary present-value is active/inactive, its number in --json.
    let text = read(&address, "bv,1", "pv");
    assert!(
        text == "binary-value,1 present-value: inactive\n"
            || text == "binary-value,1 present-value: active\n",
        "{text}"
    );
    let pv = read_json(&address, "bv,1", "pv");
    assert_eq!(pv["value"][0]["enumeration"], "binary-pv");
    assert!(pv["value"][0]["value"].is_u64());
    assert_eq!(
        read(&address, &device, "segmentation-supported"),
        format!("{device} segmentation-supported: segmented-both\n")
    );
    assert_eq!(
        read(&address, &device, "system-status"),
        format!("{device} system-status: operational\n")
    );
    let services = read(&address, &device, "protocol-services-supported");
    assert!(
        services.contains("read-property-multiple") && services.contains("subscribe-cov"),
        "{services}"
    );
    let types = read_json(&address, &device, "protocol-object-types-supported");
    let names = types["value"][0]["value"].as_array().unwrap();
    assert!(names.contains(&Value::from("analog-input")), "{types}");
}

#[test]
fn multi_state_status_flags_and_priority_arrays_are_decoded() {
    let (_server, address, _) = device();
    // The present-value of a multi-state object shows its state-text.
    let pv = read_json(&address, "msv,1", "pv");
    let state = &pv["value"][0];
    let number = state["value"].as_u64().unwrap();
    assert_eq!(state["name"], format!("State {number}"));
    assert_eq!(
        read(&address, "msv,1", "pv"),
        format!("multi-state-value,1 present-value: State {number}\n")
    );
    // Status flags: the ones set, or none.
    assert_eq!(
        read(&address, "ai,1", "status-flags"),
        "analog-input,1 status-flags: none\n"
    );
    let flags = read_json(&address, "ai,1", "status-flags");
    assert_eq!(flags["value"][0]["type"], "status-flags");
    assert_eq!(flags["value"][0]["value"]["out-of-service"], false);
    output(&[
        "bacnet",
        "write",
        &address,
        "bv,1",
        "pv",
        "active",
        "--priority",
        "8",
        "--bind",
        "127.0.0.1:0",
    ]);
    assert_eq!(
        read(&address, "bv,1", "priority-array"),
        "binary-value,1 priority-array: {8: active}\n"
    );
    let list = read(&address, "ai,1", "property-list");
    assert!(
        list.contains("present-value") && list.contains("units"),
        "{list}"
    );
}

#[test]
fn rpm_names_values_and_uses_state_text_it_read() {
    let (_server, address, _) = device();
    let text = output(&[
        "bacnet",
        "rpm",
        &address,
        "ai,2:units,event-state",
        "msi,1:state-text,pv",
        "--bind",
        "127.0.0.1:0",
    ]);
    assert!(text.contains("  units: degrees-celsius\n"), "{text}");
    assert!(text.contains("  event-state: normal\n"), "{text}");
    assert!(text.contains("  present-value: State "), "{text}");
    let json: Value = serde_json::from_str(&output(&[
        "bacnet",
        "rpm",
        &address,
        "ai,2:units",
        "ai,99:pv",
        "--bind",
        "127.0.0.1:0",
        "--json",
    ]))
    .unwrap();
    let units = &json[0]["results"][0]["value"][0];
    assert_eq!(units["value"], 62);
    assert_eq!(units["name"], "degrees-celsius");
    // Errors: class and code by name, and their numbers.
    assert_eq!(
        json[1]["results"][0]["error"],
        serde_json::json!({"class": "object", "code": "unknown-object",
                           "class_number": 1, "code_number": 31})
    );
}

#[test]
fn decode_shows_service_parameters_as_named_fields() {
    // ReadProperty(analog-input,5, present-value), confirmed request invoke 1.
    let text = output(&["bacnet", "decode", "810a001101040005010c0c000000051955"]);
    assert!(text.contains("  object: analog-input,5\n"), "{text}");
    assert!(text.contains("  property: present-value\n"), "{text}");
    // WriteProperty(binary-value,1, present-value, enumerated 1, priority 8).
    let json: Value = serde_json::from_str(&output(&[
        "bacnet",
        "decode",
        "810a0017010400050f0f0c014000011955 3e91013f 4908",
        "--json",
    ]))
    .unwrap();
    assert_eq!(json["apdu"]["service"], "write-property");
    assert_eq!(json["payload"]["object"], "binary-value,1");
    assert_eq!(json["payload"]["value"][0]["name"], "active");
    assert_eq!(json["payload"]["priority"], 8);
}

#[test]
fn name_looks_up_values_of_enumerations() {
    assert_eq!(
        output(&["bacnet", "name", "62", "--enum", "engineering-units"]),
        "enumeration: engineering-units\nname: degrees-celsius\nnumber: 62\n"
    );
    let found: Value =
        serde_json::from_str(&output(&["bacnet", "name", "degrees-fahrenheit", "--json"])).unwrap();
    assert_eq!(
        found,
        serde_json::json!({"enumeration": "engineering-units", "name": "degrees-fahrenheit",
                           "number": 64})
    );
    assert!(output(&["bacnet", "name", "unknown-object"]).contains("number: 31\n"));
    // A name the enumeration does not have is the user's mistake: exit status 1.
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_buildwire"))
        .args(["bacnet", "name", "warm", "--enum", "event-state"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not a value of event-state"));
}

#[test]
fn subscribe_names_binary_and_multi_state_values() {
    let (_server, address, _) = device();
    let subscribe = |object: &str, json: bool| {
        let mut args = vec![
            "bacnet",
            "subscribe",
            &address,
            object,
            "--count",
            "1",
            "--bind",
            "127.0.0.1:0",
        ];
        if json {
            args.push("--json");
        }
        output(&args)
    };
    let text = subscribe("msv,1", false);
    // Each line starts with the time it arrived, then the object and its values.
    assert!(
        text.contains(" multi-state-value,1 present-value=State "),
        "{text}"
    );
    assert!(text.contains(" status-flags=none "), "{text}");
    let json: Value = serde_json::from_str(subscribe("bv,1", true).trim()).unwrap();
    let pv = &json["values"]["present-value"][0];
    assert_eq!(pv["enumeration"], "binary-pv");
    assert!(pv["name"] == "active" || pv["name"] == "inactive", "{json}");
    assert_eq!(json["values"]["status-flags"][0]["type"], "status-flags");
    let json: Value = serde_json::from_str(subscribe("msv,1", true).trim()).unwrap();
    let state = &json["values"]["present-value"][0];
    assert_eq!(state["name"], format!("State {}", state["value"]));
}

#[test]
fn whois_gives_segmentation_by_name_and_number() {
    let (_server, address, device) = device();
    let found: Value = serde_json::from_str(&output(&[
        "bacnet",
        "whois",
        "--to",
        &address,
        "--bind",
        "127.0.0.1:0",
        "--timeout",
        "1s",
        "--json",
    ]))
    .unwrap();
    assert_eq!(found[0]["device"], device);
    assert_eq!(found[0]["segmentation"], "segmented-both");
    assert_eq!(found[0]["segmentation_number"], 0);
}
