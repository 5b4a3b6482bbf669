//! `buildwire opcua serve` killed and started again on the same port under a polling
//! `buildwire opcua read --repeat --json` client (all real processes on 127.0.0.1): the client
//! reports the loss, reconnects by itself with one new session, and reads the restarted
//! server's value.
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

fn setpoint(round: &Value) -> Option<f64> {
    round["results"][0]["value"].as_f64()
}

#[test]
fn a_polling_client_survives_a_server_restart() {
    let port = free_port();
    let endpoint = format!("opc.tcp://127.0.0.1:{port}/");
    let mut server = serve(port);

    let mut client = buildwire()
        .args([
            "opcua",
            "read",
            &endpoint,
            "ns=1;s=Setpoint",
            "--repeat",
            "80",
            "--interval",
            "100",
            "--reconnect-timeout",
            "20000",
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(client.stdout.take().unwrap()).lines();
    let client = Running(client);

    let first = until(&mut lines, |v| v.get("round").is_some());
    assert_eq!(first[0]["event"], "connected");
    assert!(first[0]["session_id"].as_str().is_some());
    assert_eq!(setpoint(first.last().unwrap()), Some(0.0));

    // Kill the server (SIGKILL: no goodbye) and start a new one on the same port, with
    // another value to tell them apart.
    server.0.kill().unwrap();
    server.0.wait().unwrap();
    let _restarted = serve(port);
    let wrote = buildwire()
        .args([
            "opcua",
            "write",
            &endpoint,
            "ns=1;s=Setpoint",
            "42.5",
            "--type",
            "double",
        ])
        .output()
        .unwrap();
    assert!(wrote.status.success(), "{wrote:?}");

    let resumed = until(&mut lines, |v| setpoint(v) == Some(42.5));
    let events: Vec<&str> = resumed.iter().filter_map(|v| v["event"].as_str()).collect();
    assert!(events.contains(&"lost"), "{resumed:#?}");
    assert!(events.contains(&"reconnecting"), "{resumed:#?}");
    let reconnected: Vec<&Value> = resumed
        .iter()
        .filter(|v| v["event"] == "reconnected")
        .collect();
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
