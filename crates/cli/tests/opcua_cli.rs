//! The OPC UA client commands as a user meets them, against `buildwire opcua serve
//! --bench-methods` on an ephemeral port (real processes on 127.0.0.1): `endpoints`,
//! typed `write` (the node's DataType, out-of-range numbers refused), `call` with bare
//! arguments typed by InputArguments, `read` of standard structures and its exit status,
//! and `status-code` (with `status` kept as its other name).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod processes;

use std::process::{Command, Output};

use processes::{Running, served_at, start};
use serde_json::Value;

/// `buildwire opcua serve --bench-methods` on port 0; returns it and its endpoint.
fn serve() -> (Running, String) {
    let (running, first) = start(&["opcua", "serve", "--bind", "127.0.0.1:0", "--bench-methods"]);
    (running, served_at(&first))
}

fn opcua(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_buildwire"))
        .arg("opcua")
        .args(args)
        .output()
        .unwrap()
}

fn json(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON output")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn endpoints_show_policies_tokens_status_and_namespaces() {
    let (_server, endpoint) = serve();
    let out = json(&opcua(&["endpoints", &endpoint, "--json"]));
    let first = &out["endpoints"][0];
    assert_eq!(first["security_policy"], "None");
    assert_eq!(first["security_mode"], "None");
    assert_eq!(first["user_tokens"][0]["type"], "Anonymous");
    assert_eq!(out["server_status"]["state"], "Running");
    assert_eq!(
        out["server_status"]["build_info"]["product_uri"],
        "urn:buildwire:opcua"
    );
    assert_eq!(out["namespaces"][1], "urn:buildwire:opcua:throughput");

    let text = opcua(&["endpoints", &endpoint]);
    assert!(text.status.success());
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    assert!(text.contains("None None (level 0)"), "{text}");
    assert!(text.contains("state: Running"), "{text}");
    assert!(
        text.contains("ns=1: urn:buildwire:opcua:throughput"),
        "{text}"
    );

    let only = json(&opcua(&["endpoints", &endpoint, "--no-session", "--json"]));
    assert!(only.get("server_status").is_none());
    assert_eq!(only["endpoints"][0]["security_policy"], "None");
}

#[test]
fn write_uses_the_data_type_and_refuses_numbers_out_of_range() {
    let (_server, endpoint) = serve();
    // Setpoint is a Double: no --type needed.
    let written = json(&opcua(&[
        "write",
        &endpoint,
        "ns=1;s=Setpoint",
        "42",
        "--json",
    ]));
    assert_eq!(written["value"], 42.0);
    let read = json(&opcua(&["read", &endpoint, "ns=1;s=Setpoint", "--json"]));
    assert_eq!(read["results"][0]["type"], "Double");
    assert_eq!(read["results"][0]["value"], 42.0);

    let refused = opcua(&["write", &endpoint, "ns=1;s=Setpoint", "1e400"]);
    assert_eq!(refused.status.code(), Some(1));
    let message = stderr(&refused);
    assert!(
        message.contains("1e400 is out of range for double"),
        "{message}"
    );
    assert!(message.contains("DataType is Double"), "{message}");

    let forced = opcua(&[
        "write",
        &endpoint,
        "ns=1;s=Setpoint",
        "3.4e39",
        "--type",
        "float",
    ]);
    assert_eq!(forced.status.code(), Some(1));
    assert!(stderr(&forced).contains("out of range for float"));
}

#[test]
fn call_types_bare_arguments_by_the_input_arguments() {
    let (_server, endpoint) = serve();
    // setSize declares one UInt32: a bare 2 is sent as UInt32, not Int32.
    let called = json(&opcua(&[
        "call",
        &endpoint,
        "ns=1;i=5000",
        "ns=1;i=6000",
        "2",
        "--json",
    ]));
    assert!(called["status"].as_str().unwrap().starts_with("Good"));
    let data = json(&opcua(&[
        "call",
        &endpoint,
        "ns=1;i=5000",
        "ns=1;i=6001",
        "--json",
    ]));
    assert_eq!(data["outputs"][0]["length"], 2048);
    // A forced type the method does not declare is the server's type mismatch.
    let forced = opcua(&["call", &endpoint, "ns=1;i=5000", "ns=1;i=6000", "int32:2"]);
    assert_eq!(forced.status.code(), Some(1));
    assert!(
        stderr(&forced).contains("BadInvalidArgument"),
        "{}",
        stderr(&forced)
    );
}

#[test]
fn read_decodes_standard_structures_and_fails_when_every_read_fails() {
    let (_server, endpoint) = serve();
    let out = json(&opcua(&[
        "read",
        &endpoint,
        "i=2256",
        "ns=1;s=6000.InputArguments",
        "--json",
    ]));
    let status = &out["results"][0]["value"];
    assert_eq!(status["state"], "Running");
    assert_eq!(status["build_info"]["manufacturer_name"], "buildwire");
    let argument = &out["results"][1]["value"][0];
    assert_eq!(argument["name"], "size");
    assert_eq!(argument["data_type"], "UInt32");

    let range = json(&opcua(&[
        "read",
        &endpoint,
        "ns=1;s=Setpoint.EURange",
        "--json",
    ]));
    let value = &range["results"][0]["value"];
    assert_eq!(
        (value["low"].clone(), value["high"].clone()),
        (0.0.into(), 100.0.into())
    );

    let text = opcua(&["read", &endpoint, "i=2256"]);
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    assert!(text.contains("state: Running"), "{text}");

    let missing = opcua(&["read", &endpoint, "ns=1;s=Missing"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("BadNodeIdUnknown"));
    let both_missing = opcua(&["read", &endpoint, "ns=1;s=Missing", "ns=1;s=Gone", "--json"]);
    assert_eq!(both_missing.status.code(), Some(1));
    assert!(stderr(&both_missing).contains("all 2 reads failed"));
    // One good read among bad ones: the output shows each, the command succeeded.
    let mixed = json(&opcua(&[
        "read",
        &endpoint,
        "ns=1;s=Missing",
        "i=2258",
        "--json",
    ]));
    assert_eq!(mixed["results"][1]["type"], "DateTime");
}

#[test]
fn status_code_looks_up_codes_and_status_points_to_endpoints() {
    let looked_up = json(&opcua(&["status-code", "0x80340000", "--json"]));
    assert_eq!(looked_up["name"], "BadNodeIdUnknown");
    let alias = json(&opcua(&["status", "BadNodeIdUnknown", "--json"]));
    assert_eq!(alias["value"], "0x80340000");
    let server = opcua(&["status", "opc.tcp://127.0.0.1:4840"]);
    assert_eq!(server.status.code(), Some(1));
    assert!(stderr(&server).contains("buildwire opcua endpoints opc.tcp://127.0.0.1:4840"));
}
