//! `buildwire opcua serve` killed and started again on the same port under a polling
//! `buildwire opcua read --repeat --json` client, and under a subscribed `buildwire opcua
//! subscribe --json` client (all real processes on 127.0.0.1): each client reports the loss,
//! reconnects by itself with one new session, and goes on with the restarted server's value
//! (the subscriber after creating its subscription again).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Lines};
use std::process::{Child, ChildStdout, Command, Stdio};

use serde_json::Value;

struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn buildwire() -> Command {
    Command::new(env!("CARGO_BIN_EXE_buildwire"))
}

/// A port that was free a moment ago.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `buildwire opcua serve` on `port`; returns once it listens.
fn serve(port: u16) -> Running {
    let mut child = buildwire()
        .args(["opcua", "serve", "--bind", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("buildwire opcua serve starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("listening on "), "{line}");
    Running(child)
}

/// JSON lines of the client until `done` accepts one; returns all lines read.
fn until(lines: &mut Lines<BufReader<ChildStdout>>, done: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let value: Value = serde_json::from_str(&line.unwrap()).expect("a JSON line");
        let stop = done(&value);
        seen.push(value);
        if stop {
            return seen;
        }
    }
    panic!("the client ended before the expected line; it printed {seen:#?}");
}

/// Kills the server (SIGKILL: no goodbye), starts a new one on the same port and writes
/// 42.5 to its Setpoint (the old one had 0.0), to tell the two apart.
fn kill_restart_and_write(server: &mut Running, port: u16, endpoint: &str) -> Running {
    server.0.kill().unwrap();
    server.0.wait().unwrap();
    let restarted = serve(port);
    let wrote = buildwire()
        .args([
            "opcua",
            "write",
            endpoint,
            "ns=1;s=Setpoint",
            "42.5",
            "--type",
            "double",
        ])
        .output()
        .unwrap();
    assert!(wrote.status.success(), "{wrote:?}");
    restarted
}

/// Starts `buildwire ARGS` with its JSON lines readable.
fn spawn_json(args: &[&str]) -> (Lines<BufReader<ChildStdout>>, Running) {
    let mut child = buildwire()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    (lines, Running(child))
}

/// The lines that report connection event `name`.
fn events_named<'a>(lines: &'a [Value], name: &str) -> Vec<&'a Value> {
    lines.iter().filter(|v| v["event"] == name).collect()
}

fn setpoint(round: &Value) -> Option<f64> {
    round["results"][0]["value"].as_f64()
}

#[test]
fn a_polling_client_survives_a_server_restart() {
    let port = free_port();
    let endpoint = format!("opc.tcp://127.0.0.1:{port}/");
    let mut server = serve(port);

    let (mut lines, client) = spawn_json(&[
        "opcua",
        "read",
        &endpoint,
        "ns=1;s=Setpoint",
        "--repeat",
        "80",
        "--interval",
        "100ms",
        "--reconnect-timeout",
        "20",
        "--json",
    ]);

    let first = until(&mut lines, |v| v.get("round").is_some());
    assert_eq!(first[0]["event"], "connected");
    assert!(first[0]["session_id"].as_str().is_some());
    assert_eq!(setpoint(first.last().unwrap()), Some(0.0));

    let _restarted = kill_restart_and_write(&mut server, port, &endpoint);

    let resumed = until(&mut lines, |v| setpoint(v) == Some(42.5));
    let events: Vec<&str> = resumed.iter().filter_map(|v| v["event"].as_str()).collect();
    assert!(events.contains(&"lost"), "{resumed:#?}");
    assert!(events.contains(&"reconnecting"), "{resumed:#?}");
    let reconnected = events_named(&resumed, "reconnected");
    // One reconnect, and the restarted server had to give a new session.
    assert_eq!(reconnected.len(), 1, "{resumed:#?}");
    assert_eq!(reconnected[0]["session_reactivated"], false);
    assert_eq!(resumed.last().unwrap()["reconnects"], 1);

    // The remaining rounds succeed and the process exits 0.
    let rest: Vec<Value> = lines
        .map(|line| serde_json::from_str(&line.unwrap()).unwrap())
        .collect();
    let rounds: Vec<&Value> = rest.iter().filter(|v| v.get("round").is_some()).collect();
    assert!(!rounds.is_empty());
    assert!(
        rounds.iter().all(|v| setpoint(v) == Some(42.5)),
        "{rest:#?}"
    );
    let mut client = client;
    let status = client.0.wait().unwrap();
    assert!(status.success());
}

#[test]
fn a_subscribed_client_resumes_after_a_server_restart() {
    let port = free_port();
    let endpoint = format!("opc.tcp://127.0.0.1:{port}/");
    let mut server = serve(port);
    let (mut lines, client) = spawn_json(&[
        "opcua",
        "subscribe",
        &endpoint,
        "ns=1;s=Setpoint",
        "--interval",
        "50ms",
        "--duration",
        "60",
        "--reconnect-timeout",
        "20",
        "--json",
    ]);
    let value = |v: &Value| v["value"].as_f64();
    let first = until(&mut lines, |v| value(v).is_some());
    assert_eq!(value(first.last().unwrap()), Some(0.0), "{first:#?}");

    let _restarted = kill_restart_and_write(&mut server, port, &endpoint);

    // The subscriber finds the server gone, reconnects, gets a new session, creates its
    // subscription again and reports the value written to the restarted server.
    let resumed = until(&mut lines, |v| value(v) == Some(42.5));
    let events: Vec<&str> = resumed.iter().filter_map(|v| v["event"].as_str()).collect();
    assert!(events.contains(&"lost"), "{resumed:#?}");
    let restored = events_named(&resumed, "subscriptions_restored");
    assert_eq!(restored.len(), 1, "{resumed:#?}");
    assert_eq!(restored[0]["recreated"], 1);
    let reconnected = events_named(&resumed, "reconnected");
    assert_eq!(reconnected.len(), 1, "{resumed:#?}");
    assert_eq!(reconnected[0]["session_reactivated"], false);
    assert_eq!(resumed.last().unwrap()["node"], "ns=1;s=Setpoint");
    drop(client);
}

/// `bench opcua subscriptions` for a second: our server with simulated points as a child
/// process, every data change checked (no speed asserted).
#[test]
fn the_monitored_items_soak_checks_every_change() {
    let output = buildwire()
        .args([
            "bench",
            "opcua",
            "subscriptions",
            "--items",
            "50",
            "--sampling",
            "100ms",
            "--duration",
            "1.5",
            "--sample-every",
            "0.5",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    let report = &report["report"];
    assert_eq!(report["items"], 50);
    assert!(report["changes"].as_u64().unwrap() >= 50, "{report}");
    assert_eq!(report["wrong_values"], 0, "{report}");
    assert_eq!(report["silent_items"], 0, "{report}");
    assert!(report["samples"].as_array().unwrap().len() >= 3, "{report}");
}

/// `bench opcua soak` for a few cycles against our server as a child process: every cycle
/// connects, reads and closes, and no session is left behind.
#[test]
fn the_connect_soak_runs_its_cycles() {
    let output = buildwire()
        .args([
            "bench",
            "opcua",
            "soak",
            "--cycles",
            "30",
            "--sample-every",
            "10",
            "--spawn-server",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(report["report"]["cycles"], 30, "{report}");
    assert_eq!(report["report"]["failures"], 0, "{report}");
    assert_eq!(report["report"]["samples"].as_array().unwrap().len(), 4);
}
