//! Every long-running command stops cleanly on SIGTERM (exit status 0) and on Ctrl-C
//! (SIGINT, status 130), a second signal ends a shutdown at once, and `opcua serve`
//! announces its shutdown to clients (ServerStatus State and SecondsTillShutdown) before it
//! closes their sessions. The commands run as processes on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod processes;

use std::process::ExitStatus;
use std::time::{Duration, Instant};

use processes::{Running, output, served_at, spawn, start};

fn free_udp_port() -> u16 {
    let probe = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    probe.local_addr().unwrap().port()
}

fn send(running: &Running, signal: libc::c_int) {
    let pid = libc::pid_t::try_from(running.0.id()).unwrap();
    // SAFETY: sends a signal to the child process this test started.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
}

/// Waits for the command to end (at most `limit`); its status and how long it took.
fn wait_at_most(running: &mut Running, limit: Duration) -> (ExitStatus, Duration) {
    let start = Instant::now();
    loop {
        if let Some(status) = running.0.try_wait().unwrap() {
            return (status, start.elapsed());
        }
        assert!(start.elapsed() < limit, "still running after {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn every_server_stops_cleanly_on_sigterm() {
    let bbmd = format!("127.0.0.1:{}", free_udp_port());
    let port_one = format!("1=bip:127.0.0.1:{}", free_udp_port());
    let port_two = format!("2=bip:127.0.0.2:{}", free_udp_port());
    let commands: Vec<Vec<&str>> = vec![
        vec!["bacnet", "serve", "--bind", "127.0.0.1:0"],
        vec!["bacnet", "bbmd", "--bind", &bbmd],
        vec!["bacnet", "router", "--port", &port_one, "--port", &port_two],
        vec!["bacnet", "sc-hub", "--bind", "127.0.0.1:0", "--no-tls"],
        vec![
            "opcua",
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--shutdown-notice",
            "0.2",
        ],
        vec!["haystack", "serve", "--bind", "127.0.0.1:0"],
    ];
    for args in &commands {
        let (mut running, _) = start(args);
        send(&running, libc::SIGTERM);
        let (status, took) = wait_at_most(&mut running, Duration::from_secs(30));
        assert_eq!(status.code(), Some(0), "{args:?} after SIGTERM: {status:?}");
        eprintln!("{args:?}: stopped in {took:?}");
    }
}

#[test]
fn ctrl_c_stops_a_server_cleanly_with_status_130() {
    let (mut running, first) = start(&["bacnet", "serve", "--bind", "127.0.0.1:0"]);
    assert!(first.starts_with("serving device,"), "{first}");
    send(&running, libc::SIGINT);
    let (status, _) = wait_at_most(&mut running, Duration::from_secs(30));
    assert_eq!(status.code(), Some(130), "{status:?}");
}

#[test]
fn a_second_signal_ends_the_shutdown_at_once() {
    // A long shutdown notice keeps the first stop going.
    let (mut running, _) = start(&[
        "opcua",
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--shutdown-notice",
        "20",
    ]);
    send(&running, libc::SIGTERM);
    std::thread::sleep(Duration::from_millis(300));
    send(&running, libc::SIGTERM);
    let (status, took) = wait_at_most(&mut running, Duration::from_secs(10));
    assert_eq!(status.code(), Some(143), "{status:?}");
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[test]
fn opcua_serve_announces_its_shutdown_to_clients() {
    let (mut running, first) = start(&[
        "opcua",
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--shutdown-notice",
        "8",
    ]);
    let endpoint = first
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
        .trim()
        .to_owned();
    send(&running, libc::SIGTERM);
    // ServerStatus: State (i=2259), SecondsTillShutdown (i=2992), ShutdownReason (i=2993).
    let read = output(&[
        "opcua", "read", &endpoint, "i=2259", "i=2992", "i=2993", "--json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&read).unwrap();
    let rows = &report["results"];
    let values: Vec<&serde_json::Value> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|row| &row["value"])
        .collect();
    assert_eq!(values[0], 4, "ServerState Shutdown: {rows}");
    let left = values[1].as_u64().unwrap();
    assert!(
        (1..=8).contains(&left),
        "SecondsTillShutdown {left}: {rows}"
    );
    assert!(
        values[2].as_str().is_some_and(|reason| !reason.is_empty()),
        "{rows}"
    );
    let (status, _) = wait_at_most(&mut running, Duration::from_secs(30));
    assert_eq!(status.code(), Some(0), "{status:?}");
}

#[test]
fn ctrl_c_ends_subscriptions_and_repeated_reads_with_status_130() {
    let (_bacnet, first) = start(&["bacnet", "serve", "--bind", "127.0.0.1:0"]);
    let device = served_at(&first);
    let (_opcua, first) = start(&["opcua", "serve", "--bind", "127.0.0.1:0"]);
    let endpoint = served_at(&first);
    let clients: Vec<Vec<&str>> = vec![
        vec!["bacnet", "subscribe", &device, "av,1", "--json"],
        vec![
            "opcua",
            "subscribe",
            &endpoint,
            "i=2258",
            "--interval",
            "100ms",
        ],
        vec![
            "opcua",
            "read",
            &endpoint,
            "i=2258",
            "--repeat",
            "1000",
            "--interval",
            "100ms",
        ],
    ];
    for args in &clients {
        // Its stdout is kept open: a closed one would end the command with SIGPIPE instead.
        let (mut running, mut lines) = spawn(args);
        // A line that comes once the command waits for Ctrl-C: the initial notification,
        // a data change, a round.
        let line = lines
            .find(|line| !line.as_ref().unwrap().starts_with('#'))
            .unwrap_or_else(|| panic!("{args:?} printed nothing"))
            .unwrap();
        eprintln!("{args:?}: {line}");
        send(&running, libc::SIGINT);
        let (status, took) = wait_at_most(&mut running, Duration::from_secs(20));
        assert_eq!(
            status.code(),
            Some(130),
            "{args:?} after Ctrl-C: {status:?}"
        );
        eprintln!("{args:?}: stopped in {took:?}");
        drop(lines);
    }
}

/// A server outlives the reader of its stdout (`buildwire bacnet router ... | head -1`):
/// the lines it prints after that are dropped, it goes on serving, and it still stops
/// cleanly. (The router used to die of SIGPIPE there.)
#[test]
fn a_server_outlives_the_reader_of_its_stdout() {
    let port_one = format!("1=bip:127.0.0.1:{}", free_udp_port());
    let port_two = format!("2=bip:127.0.0.2:{}", free_udp_port());
    let args = ["bacnet", "router", "--port", &port_one, "--port", &port_two];
    let (mut running, mut lines) = spawn(&args);
    assert!(lines.next().is_some(), "the router printed its first port");
    drop(lines);
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        running.0.try_wait().unwrap().is_none(),
        "the router ended when its reader left"
    );
    send(&running, libc::SIGTERM);
    let (status, _) = wait_at_most(&mut running, Duration::from_secs(30));
    assert_eq!(status.code(), Some(0), "{status:?}");
}
