//! haystack-py's HTTP and WebSocket clients (Python 3.13 venv in `.peers/py313`) against our
//! server: SCRAM login, about, read, nav, hisWrite/hisRead, pointWrite, a watch, and the
//! WebSocket ops. The venv is installed by scripts/peers.sh when missing.
#![allow(clippy::unwrap_used)]

mod server_support;

use std::path::PathBuf;
use std::process::Command;

use server_support::*;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[tokio::test]
async fn haystack_py_clients_work_against_our_server() {
    // The peers' venv comes from scripts/peers.sh (idempotent), as for the other interop
    // tests, so that a fresh clone runs this test rather than skipping it.
    let installed = Command::new(repo_root().join("scripts/peers.sh"))
        .arg("py313")
        .status()
        .unwrap();
    assert!(installed.success(), "scripts/peers.sh py313 failed");
    let python = repo_root().join(".peers/py313/bin/python");
    let server = start().await;
    let url = server.url();
    let script = repo_root().join("tests/peers/haystackpy_client.py");
    let output = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .arg(script)
            .args([url.as_str(), "op", PASSWORD, "--point", "bw-sp"])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    eprintln!("haystack-py said: {stdout}");
    let out: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(out["about"]["haystackVersion"], "4.0");
    assert_eq!(out["sites"], 1);
    assert_eq!(out["points_limited"], 5);
    assert_eq!(out["read_by_ids"], 2);
    assert_eq!(out["nav_root"], 1);
    assert!(out["nav_site"].as_u64().unwrap() > 10);
    assert!(out["nav_equip"].as_u64().unwrap() > 0);
    assert_eq!(out["his_today"], 3);
    assert_eq!(out["his_meta_id"], "bw-sp");
    assert_eq!(out["priority_levels"], 17);
    assert_eq!(out["level8"]["who"], "haystack-py");
    assert_eq!(out["watch_sub_rows"], 1);
    assert!(out["watch_changes"].as_u64().unwrap() >= 1);
    assert_eq!(out["watch_refresh"], 1);
    assert_eq!(out["ws_about"], "buildwire");
    assert_eq!(out["ws_sites"], 1);
    assert_eq!(out["ws_points_limited"], 3);
    assert_eq!(out["ws_nav_root"], 1);
    assert_eq!(out["ops"].as_array().unwrap().len(), 15);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn our_client_works_against_our_server() {
    use buildwire_haystack::client::{ClientOptions, HaystackApi, HaystackClient, WsClient};
    use buildwire_haystack::{Ref, Value};
    let server = start().await;
    let client = HaystackClient::connect(&server.url(), ClientOptions::login("op", PASSWORD))
        .await
        .unwrap();
    let about = client.about().await.unwrap();
    assert_eq!(about.get("userName"), Some(&Value::Str("op".into())));
    assert_eq!(client.read("point", None).await.unwrap().row_count(), 1848);
    let sp = Ref::new("bw-sp");
    client
        .point_write(
            &sp,
            8,
            Value::number_with_unit(67.0, "°F"),
            Some("rust"),
            None,
        )
        .await
        .unwrap();
    let array = client.point_write_array(&sp).await.unwrap();
    assert_eq!(array.get(7, "who"), Some(&Value::Str("rust".into())));
    let token = client.auth_token().unwrap().to_owned();
    let ws = WsClient::connect(
        &server.ws_url(),
        Some(&token),
        std::time::Duration::from_secs(10),
    )
    .await
    .unwrap();
    assert_eq!(ws.read("site", None).await.unwrap().row_count(), 1);
    let nav = ws.nav(Some(&Ref::new("a-0000"))).await.unwrap();
    assert!(nav.row_count() > 10);
    server.stop().await.unwrap();
}
