//! Smoke test of `buildwire bench bacnet bip|router|bbmd`: each scenario runs for about two
//! seconds on 127.0.0.1 with its published mix, and its JSON report must have bac-py's shape
//! (a superset of `{mode, transport, config, warmup, sustained{error_rate, throughput_rps,
//! latency_ms{mean,p50,p95,p99}}}`), no errors, and every operation of the mix answered.
//! Each also runs with `--processes` (server, and router, as their own OS processes) and,
//! where network namespaces can be made, with `--netns` (each process on a host of its own).
//! `bench bacnet sc` (BACnet/SC: hub, two echo nodes, unicast and broadcast workers) runs
//! the same way over TLS and plaintext, in-process, with `--processes` and with `--netns`:
//! every echo matched what was sent, octet for octet.
//! No speed is asserted: benchmarks are never timed tests.

use std::process::Command;

use serde_json::Value;

fn run(scenario: &str) -> Value {
    run_with(scenario, &[])
}

fn run_with(scenario: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "bench",
        "bacnet",
        scenario,
        "--warmup",
        "0.5",
        "--sustain",
        "2",
        "--limit-seconds",
        "0.5",
    ];
    args.extend(extra);
    run_buildwire(&args)
}

/// `buildwire ARGS --json`: must succeed; its report.
fn run_buildwire(args: &[&str]) -> Value {
    let output = Command::new(env!("CARGO_BIN_EXE_buildwire"))
        .args(args)
        .arg("--json")
        .output()
        .expect("the buildwire binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{args:?} failed: {stderr}");
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: JSON on stdout: {e}\n{stderr}"))
}

fn number(value: &Value, path: &[&str]) -> f64 {
    let mut at = value;
    for key in path {
        at = &at[*key];
    }
    at.as_f64()
        .unwrap_or_else(|| panic!("{} is not a number: {at}", path.join(".")))
}

/// bac-py's phase keys: counts, rates and latency, in the warm-up and the measured phase.
fn check_phases(report: &Value) {
    for phase in ["warmup", "sustained"] {
        for key in [
            "error_rate",
            "throughput_rps",
            "total_requests",
            "total_errors",
        ] {
            number(report, &[phase, key]);
        }
        for key in ["mean", "p50", "p95", "p99", "max"] {
            number(report, &[phase, "latency_ms", key]);
        }
    }
}

fn check(report: &Value, mode: &str, operations: &[&str]) {
    assert_eq!(report["mode"], mode);
    assert_eq!(report["transport"], "udp");
    assert!(report["config"].is_object());
    check_phases(report);
    let sustained = &report["sustained"];
    // No errors: every answer was checked (the server once replayed kept answers to reads
    // whose invoke id had wrapped, which the RPM check caught; reads are no longer kept).
    for (op, line) in sustained["operations"].as_object().expect("operations") {
        assert_eq!(line["errors"], 0, "{op}: {line}");
    }
    assert!(number(report, &["sustained", "throughput_rps"]) > 0.0);
    // The server's own count of what it executed sits beside what was answered.
    assert!(
        number(report, &["sustained", "executed"]) > 0.0,
        "{sustained}"
    );
    for op in operations {
        let answered = number(report, &["sustained", "operations", op, "answered"]);
        assert!(answered > 0.0, "{op} was never answered: {sustained}");
    }
    assert_eq!(report["passed"], true);
    assert!(number(report, &["limit", "throughput_rps"]) > 0.0);
    assert!(number(report, &["limit", "in_flight"]) >= 7.0);
}

const MIX: [&str; 5] = [
    "readProperty",
    "writeProperty",
    "readPropertyMultiple",
    "writePropertyMultiple",
    "objectList",
];

#[test]
fn bip_scenario_reports_the_published_shape() {
    let dir = std::env::temp_dir().join(format!("bw-bench-bacnet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (plot, flame) = (dir.join("bip.png"), dir.join("bip-flame.svg"));
    let report = run_with(
        "bip",
        &[
            "--plot",
            plot.to_str().unwrap_or_default(),
            "--profile",
            flame.to_str().unwrap_or_default(),
        ],
    );
    let mut ops = MIX.to_vec();
    ops.push("subscribeCOV");
    check(&report, "bip", &ops);
    assert_eq!(report["error_threshold"], 0.005);
    // The chart (PNG: its signature and a 1400x540 header) and the flame graph (SVG, with
    // the server's frames in it).
    let chart = std::fs::read(&plot).expect("the --plot PNG was written");
    assert!(chart.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert_eq!(
        chart.get(16..24),
        Some(&[0, 0, 5, 120, 0, 0, 2, 28][..]),
        "1400 x 540"
    );
    let flames = std::fs::read_to_string(&flame).expect("the --profile SVG was written");
    assert!(flames.contains("<svg"));
    assert!(
        flames.contains("buildwire_bacnet::app::server"),
        "no server frames"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn router_scenario_goes_through_the_router() {
    let report = run("router");
    check(&report, "router", &MIX);
    assert_eq!(report["error_threshold"], 0.01);
    // The route health check ran (its first round is at the start, in the warm-up).
    let check = &report["warmup"]["operations"]["whoIsRouterToNetwork"];
    assert_eq!(check["answered"], 1, "{check}");
    assert!(report["sustained"]["operations"]["subscribeCOV"].is_null());
}

#[test]
fn bbmd_scenario_reads_the_tables() {
    let report = run("bbmd");
    let mut ops = MIX.to_vec();
    ops.extend(["readFDT", "readBDT"]);
    check(&report, "bbmd", &ops);
}

#[test]
fn every_scenario_runs_with_its_parts_in_their_own_processes() {
    for (scenario, extra) in [
        ("bip", &["subscribeCOV"][..]),
        ("router", &[][..]),
        ("bbmd", &["readFDT", "readBDT"][..]),
    ] {
        let report = run_with(scenario, &["--processes"]);
        let mut ops = MIX.to_vec();
        ops.extend(extra);
        check(&report, scenario, &ops);
        let server = report["server"].as_str().unwrap_or_default();
        assert!(server.starts_with("own process"), "{scenario}: {server}");
        assert!(
            number(&report, &["server_resident_mib"]) > 0.0,
            "{scenario}: {report}"
        );
        if scenario == "router" {
            assert!(server.contains("via router"), "{server}");
            assert!(number(&report, &["router_resident_mib"]) > 0.0);
            let check = &report["warmup"]["operations"]["whoIsRouterToNetwork"];
            assert_eq!(check["answered"], 1, "{check}");
        }
    }
}

/// Why namespaces cannot be made here, if they cannot.
fn netns_unavailable() -> Option<String> {
    let probe = format!("bwprobe{}", std::process::id());
    match Command::new("ip").args(["netns", "add", &probe]).output() {
        Err(e) => Some(format!("iproute2's `ip` cannot run: {e}")),
        Ok(out) if !out.status.success() => Some(format!(
            "cannot make a network namespace: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Ok(_) => {
            let _ = Command::new("ip").args(["netns", "del", &probe]).output();
            None
        }
    }
}

#[test]
fn every_scenario_runs_across_network_namespaces() {
    if let Some(reason) = netns_unavailable() {
        println!("skipped: {reason}");
        return;
    }
    for (scenario, extra) in [
        ("bip", &["subscribeCOV"][..]),
        ("router", &[][..]),
        ("bbmd", &["readFDT", "readBDT"][..]),
    ] {
        let report = run_with(scenario, &["--netns"]);
        let mut ops = MIX.to_vec();
        ops.extend(extra);
        check(&report, scenario, &ops);
        let server = report["server"].as_str().unwrap_or_default();
        assert!(server.contains("network namespace 198.18."), "{server}");
        // The raw UDP limit crossed the same veth link, into the first namespace.
        let limit = &report["limit"];
        let path = limit["path"].as_str().unwrap_or_default();
        assert!(
            path.starts_with("198.18.1.1 to 198.18.1.2 in network namespace"),
            "{limit}"
        );
        assert!(
            number(&report, &["limit", "throughput_rps"]) > 0.0,
            "{limit}"
        );
        if scenario == "router" {
            assert!(server.contains("via router 198.18.1.2:47808"), "{server}");
            let check = &report["warmup"]["operations"]["whoIsRouterToNetwork"];
            assert_eq!(check["answered"], 1, "{check}");
        }
    }
}

/// `bench bacnet sc` for two seconds with `extra` options.
fn run_sc(extra: &[&str]) -> Value {
    let mut args = vec!["bench", "bacnet", "sc", "--warmup", "0.5", "--sustain", "2"];
    args.extend(extra);
    run_buildwire(&args)
}

/// The SC report: the other scenarios' shape, no errors (every echo matched what was sent,
/// octet for octet), both kinds of worker echoed, and the echo nodes' own count beside the
/// echoes checked.
fn check_sc(report: &Value, tls: bool) {
    assert_eq!(report["mode"], "sc");
    assert_eq!(report["transport"], "sc");
    assert_eq!(report["config"]["tls"], tls);
    assert_eq!(report["config"]["unicast"], 8);
    assert_eq!(report["config"]["broadcast"], 2);
    let scheme = if tls { "wss://" } else { "ws://" };
    assert!(
        report["hub"]
            .as_str()
            .unwrap_or_default()
            .starts_with(scheme),
        "{}",
        report["hub"]
    );
    check_phases(report);
    let sustained = &report["sustained"];
    assert_eq!(sustained["total_errors"], 0, "{sustained}");
    let mut checked = 0.0;
    for (op, echoes) in [("unicast", 1.0), ("broadcast", 2.0)] {
        let line = &sustained["operations"][op];
        assert_eq!(line["errors"], 0, "{op}: {line}");
        let answered = number(report, &["sustained", "operations", op, "answered"]);
        assert!(answered > 0.0, "{op} was never echoed: {sustained}");
        checked += answered * echoes;
    }
    assert_eq!(
        number(report, &["sustained", "confirmed_answered"]),
        checked
    );
    // The echo nodes count what they sent; rounds that straddle the phase boundaries
    // (at most one per worker at each end) make the two differ a little.
    let executed = number(report, &["sustained", "executed"]);
    assert!(
        (executed - checked).abs() <= 40.0,
        "executed {executed}, checked {checked}"
    );
    assert!(number(report, &["hub_relayed"]) >= checked, "{report}");
    assert_eq!(report["passed"], true);
}

#[test]
fn sc_scenario_echoes_every_payload_over_tls_and_plaintext() {
    check_sc(&run_sc(&[]), true);
    check_sc(&run_sc(&["--no-tls"]), false);
}

#[test]
fn sc_scenario_runs_with_hub_and_echo_nodes_in_their_own_processes() {
    for (extra, tls) in [
        (&["--processes"][..], true),
        (&["--processes", "--no-tls"][..], false),
    ] {
        let report = run_sc(extra);
        check_sc(&report, tls);
        let server = report["server"].as_str().unwrap_or_default();
        assert!(server.starts_with("buildwire processes"), "{server}");
        assert!(number(&report, &["server_resident_mib"]) > 0.0, "{report}");
        assert!(number(&report, &["echo_resident_mib"]) > 0.0, "{report}");
    }
}

#[test]
fn sc_scenario_runs_across_network_namespaces() {
    if let Some(reason) = netns_unavailable() {
        println!("skipped: {reason}");
        return;
    }
    let report = run_sc(&["--netns"]);
    check_sc(&report, true);
    assert!(
        report["hub"]
            .as_str()
            .unwrap_or_default()
            .contains("198.18.1.2"),
        "{}",
        report["hub"]
    );
    let server = report["server"].as_str().unwrap_or_default();
    assert!(server.contains("network namespaces"), "{server}");
}

#[test]
fn sc_scenario_draws_a_chart_and_a_flame_graph() {
    let dir = std::env::temp_dir().join(format!("bw-bench-sc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (plot, flame) = (dir.join("sc.png"), dir.join("sc-flame.svg"));
    let report = run_sc(&[
        "--no-tls",
        "--plot",
        plot.to_str().unwrap_or_default(),
        "--profile",
        flame.to_str().unwrap_or_default(),
    ]);
    check_sc(&report, false);
    let chart = std::fs::read(&plot).expect("the --plot PNG was written");
    assert!(chart.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    let flames = std::fs::read_to_string(&flame).expect("the --profile SVG was written");
    assert!(
        flames.contains("buildwire_bacnet"),
        "no BACnet frames in the flame graph"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--target-hub`: the load aimed at a hub this test started on its own (buildwire's hub as
/// a separate process, plaintext), with the echo nodes in the benchmark's process.
#[test]
fn sc_scenario_runs_against_a_hub_given_by_address() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let mut hub = Command::new(env!("CARGO_BIN_EXE_buildwire"))
        .args(["bench", "bacnet", "sc-process", "hub"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the hub");
    let mut line = String::new();
    let stdout = hub.stdout.take().expect("hub stdout");
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the hub's ready line");
    let port = line
        .trim()
        .strip_prefix("ready ")
        .and_then(|p| p.parse::<u16>().ok())
        .unwrap_or_else(|| panic!("hub said {line:?}"));
    let uri = format!("ws://127.0.0.1:{port}");
    let report = run_sc(&["--no-tls", "--target-hub", &uri]);
    drop(hub.stdin.take());
    let _ = hub.wait();
    assert_eq!(report["hub"], uri.as_str(), "{report}");
    let sustained = &report["sustained"];
    assert_eq!(sustained["total_errors"], 0, "{sustained}");
    for op in ["unicast", "broadcast"] {
        let answered = number(&report, &["sustained", "operations", op, "answered"]);
        assert!(answered > 0.0, "{op} was never echoed: {sustained}");
    }
}

/// `sc --max`: the curve has at least two steps, workers doubling, every echo checked.
#[test]
fn sc_scenario_max_prints_the_curve() {
    let report = run_buildwire(&[
        "bench",
        "bacnet",
        "sc",
        "--max",
        "--no-tls",
        "--warmup",
        "0.2",
        "--sustain",
        "1",
        "--unicast",
        "1",
        "--broadcast",
        "1",
    ]);
    assert_eq!(report["benchmark"], "bacnet sc --max");
    let curve = report["curve"].as_array().expect("a curve");
    assert!(curve.len() >= 2, "{report}");
    for (i, step) in curve.iter().enumerate() {
        assert_eq!(step["config"]["unicast"], 1 << i, "{step}");
        assert_eq!(step["sustained"]["total_errors"], 0, "{step}");
        assert!(number(step, &["sustained", "confirmed_answered"]) > 0.0);
    }
}
