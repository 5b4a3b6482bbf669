//! `buildwire bench bacnet sc`: bac-py's BACnet/SC scenario (a hub, two echo nodes, unicast
//! and broadcast workers, payloads of 25 to 1,400 octets) over TLS 1.3 or plaintext, every
//! echo checked byte for byte; with `--peer bac-py`, bac-py's hub and echo nodes under the
//! same load in the same run.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use buildwire_bacnet::link::sc::Vmac;
use buildwire_bench::bacnet::peer::{self, BACPY_SC_SCRIPT, StressProcess, script_command};
use buildwire_bench::bacnet::sc::{
    ECHO_VMACS, EchoNode, ScOutcome, ScProbes, ScRunConfig, ScTarget, node_tls, run_sc, start_hub,
    write_certificates,
};
use buildwire_bench::netns::{End, NetnsLab};
use buildwire_bench::report::{CpuProfile, MachineInfo, write_throughput_and_cdf};
use clap::{Args, ValueEnum};
use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use serde_json::json;

use super::CommandResult;
use super::bench_bacnet::{
    error_line, failed_row, latency_row, measured_line, opt, phase_progress, phase_table, right,
    scenario_start, threshold_verdict,
};
use crate::progress::ProgressLine;

pub const AFTER_HELP: &str = "Messages are BVLC-SC Encapsulated-NPDUs (a proprietary \
    network-layer message holding a 6-octet id and filler) from client nodes through the hub \
    to the echo nodes' VMACs, or to the broadcast VMAC (then both echo nodes answer). A worker \
    sends its next message when the last one's echoes came back and matched what was sent, \
    octet for octet; anything else is an error. Certificates (EC P-256, one CA) are made in a \
    temporary folder unless --certs names one. The exit status is 1 when the error rate is \
    above 0.5 %.\n\nExamples:\n  buildwire bench bacnet sc\n  \
    buildwire bench bacnet sc --no-tls --warmup 2 --sustain 8\n  \
    buildwire bench bacnet sc --processes --json > sc.json\n  \
    buildwire bench bacnet sc --peer bac-py --warmup 2 --sustain 8   (needs scripts/peers.sh py313)\n  \
    buildwire bench bacnet sc --target-hub wss://10.0.0.5:4443 --certs DIR";

/// Whose hub and echo nodes run beside ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScPeer {
    /// bac-py's hub and two bac-py echo nodes, each its own process.
    BacPy,
    /// bac-py's hub with buildwire's echo nodes (in their own processes): the hub alone.
    BacPyHub,
}

impl ScPeer {
    const fn name(self) -> &'static str {
        match self {
            Self::BacPy => "bac-py",
            Self::BacPyHub => "bac-py hub",
        }
    }
}

#[derive(Debug, Args)]
pub struct ScBenchArgs {
    /// Unicast workers.
    #[arg(long, default_value_t = 8)]
    unicast: usize,
    /// Broadcast workers.
    #[arg(long, default_value_t = 2)]
    broadcast: usize,
    /// Client nodes the workers are spread over (each its own hub connection).
    #[arg(long, default_value_t = 1)]
    client_nodes: usize,
    /// Plaintext ws:// instead of TLS 1.3 (wss://).
    #[arg(long)]
    no_tls: bool,
    /// Seconds of warm-up (not measured).
    #[arg(long, default_value_t = 5.0)]
    warmup: f64,
    /// Seconds measured.
    #[arg(long, default_value_t = 30.0)]
    sustain: f64,
    /// TCP port of the hub (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Seconds a worker pauses after an error.
    #[arg(long, default_value_t = 0.05)]
    error_backoff: f64,
    /// Seconds a worker waits for its echoes before counting an error.
    #[arg(long, default_value_t = 5.0)]
    echo_timeout: f64,
    /// Seconds a broadcast worker pauses after each round (bac-py's own benchmark sends a
    /// broadcast every 0.5 s); 0 sends back to back.
    #[arg(long, default_value_t = 0.0)]
    broadcast_interval: f64,
    /// Run the hub and each echo node as their own OS processes, with the clients in this
    /// one.
    #[arg(long, conflicts_with = "target_hub")]
    processes: bool,
    /// Like --processes, with the hub on a host of its own and the echo nodes on another:
    /// Linux network namespaces joined by veth pairs (root and iproute2; addresses from
    /// 198.18.0.0/15). The clients stay in this namespace.
    #[arg(long, conflicts_with_all = ["processes", "target_hub"])]
    netns: bool,
    /// Also run the same load through a peer's hub (and echo nodes), in the same run, and
    /// print the ratios; ours then runs with --processes too, so that both have the same
    /// shape.
    #[arg(long, value_enum, conflicts_with_all = ["netns", "target_hub"])]
    peer: Option<ScPeer>,
    /// Where scripts/peers.sh installed the peers (default: $BUILDWIRE_PEERS or ./.peers).
    #[arg(long)]
    peers: Option<PathBuf>,
    /// Use this hub (wss://HOST:PORT) instead of starting one; the echo nodes run in this
    /// process. With TLS the hub must trust the CA of --certs.
    #[arg(long, value_name = "URI")]
    target_hub: Option<String>,
    /// Folder with ca.crt and hub, echo1, echo2 and client .crt/.key (as `buildwire bacnet
    /// sc-certs DIR --names hub,echo1,echo2,client` writes them) instead of new ones.
    #[arg(long, value_name = "DIR")]
    certs: Option<PathBuf>,
    /// Print the report as JSON on stdout (the table goes to stderr).
    #[arg(long)]
    json: bool,
    /// Draw throughput over time and the latency CDF to this file (.png or .svg).
    #[arg(long, value_name = "FILE.png")]
    plot: Option<PathBuf>,
    /// Raise the number of workers step by step (the unicast and broadcast counts times 1, 2,
    /// 4, ...) until throughput rises less than 5 %, and print the curve.
    #[arg(long, conflicts_with = "peer")]
    max: bool,
    /// Write a CPU flame graph (SVG) of this process while buildwire's load runs: the hub,
    /// the echo nodes and the clients when all run in-process (the default), only the
    /// clients with --processes, --netns or --target-hub.
    #[arg(long, value_name = "FILE.svg")]
    profile: Option<PathBuf>,
}

/// The role of a hidden `sc-process`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScRole {
    /// The hub.
    Hub,
    /// An echo node.
    Echo,
}

#[derive(Debug, Args)]
pub struct ScProcessArgs {
    role: ScRole,
    /// Hub: the TCP port (0 picks one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Hub: the address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    bind: Ipv4Addr,
    /// Echo node: the hub's URI.
    #[arg(long, default_value = "")]
    hub: String,
    /// Echo node: its VMAC.
    #[arg(long, default_value = "02:ec:40:00:00:01")]
    vmac: Vmac,
    /// Echo node: its certificate's name in --certs.
    #[arg(long, default_value = "echo1")]
    name: String,
    /// The certificates folder; plaintext without it.
    #[arg(long)]
    certs: Option<PathBuf>,
}

/// A certificates folder made for the run, removed at the end.
struct TempCerts(PathBuf);

impl Drop for TempCerts {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The hub and echo nodes in processes (ours or a peer's). Fields drop in order: the
/// processes stop before their namespaces go.
struct ScProcesses {
    hub: StressProcess,
    /// True when the hub counts what it relays (ours; bac-py's hub counts nothing).
    hub_counts: bool,
    echo: Vec<StressProcess>,
    lab: Option<NetnsLab>,
}

impl ScProcesses {
    fn echoed(&self) -> Option<u64> {
        self.echo.iter().map(StressProcess::executed).sum()
    }

    fn echo_resident_mib(&self) -> Option<f64> {
        self.echo.iter().map(StressProcess::resident_mib).sum()
    }
}

/// How the hub and an echo node are started: by this program, or by a peer's launcher.
fn sc_process_command(
    peer: Option<ScPeer>,
    peers_dir: &Path,
    role: ScRole,
) -> Result<std::process::Command, String> {
    match (peer, role) {
        (Some(_), ScRole::Hub) | (Some(ScPeer::BacPy), ScRole::Echo) => {
            let mut command =
                script_command("py313", BACPY_SC_SCRIPT, "sc_bacpy_launcher.py", peers_dir)?;
            command.arg(match role {
                ScRole::Hub => "hub",
                ScRole::Echo => "echo",
            });
            Ok(command)
        }
        _ => {
            let mut command =
                std::process::Command::new(std::env::current_exe().map_err(|e| e.to_string())?);
            command.args(["bench", "bacnet", "sc-process"]);
            command.arg(match role {
                ScRole::Hub => "hub",
                ScRole::Echo => "echo",
            });
            Ok(command)
        }
    }
}

fn free_tcp_port() -> Result<u16, String> {
    std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

fn tls_args(command: &mut std::process::Command, certs: Option<&Path>, peer: bool) {
    match certs {
        Some(dir) => {
            command.arg("--certs").arg(dir);
        }
        // bac-py's launcher asks for plaintext explicitly; ours is plaintext without certs.
        None if peer => {
            command.arg("--no-tls");
        }
        None => {}
    }
}

fn start_echo_processes(
    peer: Option<ScPeer>,
    peers_dir: &Path,
    certs: Option<&Path>,
    hub_uri: &str,
    namespace: Option<&str>,
) -> Result<Vec<StressProcess>, String> {
    let bacpy = peer == Some(ScPeer::BacPy);
    let mut echo = Vec::new();
    for (vmac, name) in ECHO_VMACS.iter().zip(["echo1", "echo2"]) {
        let base = sc_process_command(peer, peers_dir, ScRole::Echo)?;
        let mut command = match namespace {
            Some(ns) => {
                let mut wrapped = NetnsLab::command_in(ns, Path::new(base.get_program()));
                wrapped.args(base.get_args());
                wrapped
            }
            None => base,
        };
        let vmac_text = if bacpy {
            vmac.as_bytes().iter().map(|b| format!("{b:02x}")).collect()
        } else {
            vmac.to_string()
        };
        command.args(["--hub", hub_uri, "--vmac", &vmac_text, "--name", name]);
        tls_args(&mut command, certs, bacpy);
        let what = format!(
            "{} echo node {vmac}",
            peer.map_or("buildwire", ScPeer::name)
        );
        echo.push(StressProcess::start_any(command, &what)?.0);
    }
    Ok(echo)
}

/// Starts the hub and both echo nodes as processes on 127.0.0.1 (ours, or a peer's).
fn start_processes(
    peer: Option<ScPeer>,
    peers_dir: &Path,
    certs: Option<&Path>,
    port: u16,
) -> Result<(ScProcesses, ScTarget), String> {
    let port = if port == 0 { free_tcp_port()? } else { port };
    let mut command = sc_process_command(peer, peers_dir, ScRole::Hub)?;
    command.args(["--port", &port.to_string()]);
    tls_args(&mut command, certs, peer.is_some());
    let what = format!("{} hub", peer.map_or("buildwire", ScPeer::name));
    let hub = StressProcess::start(command, &what)?;
    let scheme = if certs.is_some() { "wss" } else { "ws" };
    let uri = format!("{scheme}://127.0.0.1:{}", hub.port);
    let echo = start_echo_processes(peer, peers_dir, certs, &uri, None)?;
    std::thread::sleep(peer::SETTLE);
    Ok((
        ScProcesses {
            hub,
            hub_counts: peer.is_none(),
            echo,
            lab: None,
        },
        ScTarget {
            hub: uri,
            echo_nodes: ECHO_VMACS,
            echo_nodes_running: true,
        },
    ))
}

/// The clients' side of `--netns` (198.18.1.1) and the hub's two addresses.
const NETNS_CLIENTS: Ipv4Addr = Ipv4Addr::new(198, 18, 1, 1);
const NETNS_HUB_1: Ipv4Addr = Ipv4Addr::new(198, 18, 1, 2);
const NETNS_HUB_2: Ipv4Addr = Ipv4Addr::new(198, 18, 2, 1);
const NETNS_ECHO: Ipv4Addr = Ipv4Addr::new(198, 18, 2, 2);
const NETNS_PORT: u16 = 4443;

/// `--netns`: the hub in a namespace of its own, reached from here on 198.18.1.0/24, the
/// echo nodes in another, reaching the hub on 198.18.2.0/24.
fn start_netns(certs: Option<&Path>) -> Result<(ScProcesses, ScTarget), String> {
    let program = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut lab = NetnsLab::new();
    let hub_ns = lab.namespace("h").map_err(|e| e.to_string())?;
    let echo_ns = lab.namespace("e").map_err(|e| e.to_string())?;
    lab.link((End::Here, NETNS_CLIENTS), (End::In(&hub_ns), NETNS_HUB_1))
        .map_err(|e| e.to_string())?;
    lab.link(
        (End::In(&echo_ns), NETNS_ECHO),
        (End::In(&hub_ns), NETNS_HUB_2),
    )
    .map_err(|e| e.to_string())?;
    let mut command = NetnsLab::command_in(&hub_ns, &program);
    command.args(["bench", "bacnet", "sc-process", "hub", "--bind", "0.0.0.0"]);
    command.args(["--port", &NETNS_PORT.to_string()]);
    tls_args(&mut command, certs, false);
    let hub = StressProcess::start(command, &format!("hub in namespace {hub_ns}"))?;
    let scheme = if certs.is_some() { "wss" } else { "ws" };
    let echo = start_echo_processes(
        None,
        Path::new("."),
        certs,
        &format!("{scheme}://{NETNS_HUB_2}:{NETNS_PORT}"),
        Some(&echo_ns),
    )?;
    std::thread::sleep(peer::SETTLE);
    Ok((
        ScProcesses {
            hub,
            hub_counts: true,
            echo,
            lab: Some(lab),
        },
        ScTarget {
            hub: format!("{scheme}://{NETNS_HUB_1}:{NETNS_PORT}"),
            echo_nodes: ECHO_VMACS,
            echo_nodes_running: true,
        },
    ))
}

/// One run against `processes` (or in this process when `None`).
fn run_once(
    runtime: &tokio::runtime::Runtime,
    config: &ScRunConfig,
    processes: Option<&ScProcesses>,
    label: &str,
    progress: &ProgressLine,
) -> Result<ScOutcome, Box<dyn std::error::Error>> {
    let tls = if config.tls { "TLS" } else { "plaintext" };
    let report = phase_progress(
        progress,
        format!("bacnet sc {label} ({tls})"),
        "echoed rounds",
    );
    let echoed = || processes.and_then(ScProcesses::echoed);
    let relayed = || {
        processes
            .filter(|p| p.hub_counts)
            .and_then(|p| p.hub.executed())
    };
    let probes = ScProbes {
        echoed: Some(&echoed),
        relayed: Some(&relayed),
    };
    let mut outcome = runtime.block_on(run_sc(config, &report, probes))?;
    if let Some(p) = processes {
        outcome.server = match &p.lab {
            Some(_) => format!(
                "{label} processes in their own network namespaces, {}",
                outcome.server
            ),
            None => format!("{label} processes, {}", outcome.server),
        };
        outcome.server_resident_mib = p.hub.resident_mib();
        outcome.echo_resident_mib = p.echo_resident_mib();
    }
    Ok(outcome)
}

/// `--max`: the same run with the workers doubled each step until throughput rises less than
/// 5 % (or 64 times the workers asked for).
fn run_max(
    runtime: &tokio::runtime::Runtime,
    config: &ScRunConfig,
    processes: Option<&ScProcesses>,
    progress: &ProgressLine,
    machine: &MachineInfo,
    json: bool,
) -> CommandResult {
    let mut curve: Vec<ScOutcome> = Vec::new();
    let mut factor = 1;
    loop {
        let mut step = config.clone();
        step.unicast = config.unicast * factor;
        step.broadcast = config.broadcast * factor;
        let label = format!("buildwire x{factor}");
        let outcome = run_once(runtime, &step, processes, &label, progress)?;
        let rising = curve.last().is_none_or(|prev| {
            outcome.sustained.throughput_rps > prev.sustained.throughput_rps * 1.05
        });
        curve.push(outcome);
        if !rising || factor >= 64 {
            break;
        }
        factor *= 2;
    }
    progress.finish();
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "unicast",
        "broadcast",
        "rounds/s",
        "echoes checked/s",
        "p50 ms",
        "p99 ms",
        "errors",
    ]);
    for o in &curve {
        let s = &o.sustained;
        table.add_row(vec![
            right(o.config.unicast.to_string()),
            right(o.config.broadcast.to_string()),
            right(format!("{:.0}", s.throughput_rps)),
            right(format!(
                "{:.0}",
                s.confirmed_answered as f64 / s.duration_s.max(f64::EPSILON)
            )),
            right(format!("{:.3}", s.latency_ms.p50)),
            right(format!("{:.3}", s.latency_ms.p99)),
            right(s.total_errors.to_string()),
        ]);
    }
    let best = curve.iter().max_by(|a, b| {
        a.sustained
            .throughput_rps
            .total_cmp(&b.sustained.throughput_rps)
    });
    let text = format!(
        "bacnet sc --max: throughput by workers (stops when it rises less than 5 %)\n\
         machine: {}\n{table}\nbest: {}\n",
        machine.one_line(),
        best.map_or_else(
            || "-".to_owned(),
            |b| format!(
                "{:.0} rounds/s with {} unicast and {} broadcast workers",
                b.sustained.throughput_rps, b.config.unicast, b.config.broadcast
            )
        )
    );
    let report = json!({
        "benchmark": "bacnet sc --max",
        "machine": machine,
        "curve": curve,
    });
    super::bench::print_table_and_report(&text, &report, json)
}

pub fn run(args: &ScBenchArgs) -> CommandResult {
    super::ignore_sigpipe();
    let (runtime, progress, machine) = scenario_start(args.plot.as_ref(), args.json)?;
    let peers_dir = super::bench::peers_dir(args.peers.as_ref());
    // Certificates: none without TLS, the given folder, or new ones for this run.
    let (certs, _temp) = match (&args.certs, args.no_tls) {
        (_, true) => (None, None),
        (Some(dir), false) => (Some(dir.clone()), None),
        (None, false) => {
            let dir =
                std::env::temp_dir().join(format!("buildwire-bench-sc-{}", std::process::id()));
            let extra: Vec<String> = [NETNS_HUB_1, NETNS_HUB_2]
                .iter()
                .map(ToString::to_string)
                .collect();
            write_certificates(&dir, &extra)?;
            (Some(dir.clone()), Some(TempCerts(dir)))
        }
    };
    let mut config = ScRunConfig {
        unicast: args.unicast,
        broadcast: args.broadcast,
        client_nodes: args.client_nodes,
        tls: certs.is_some(),
        warmup: args.warmup,
        sustain: args.sustain,
        error_backoff: args.error_backoff,
        echo_timeout: args.echo_timeout,
        broadcast_interval: args.broadcast_interval,
        port: args.port,
        payload_mix: buildwire_bench::bacnet::sc::PAYLOAD_MIX.to_vec(),
        target: args.target_hub.as_ref().map(|hub| ScTarget {
            hub: hub.clone(),
            echo_nodes: ECHO_VMACS,
            echo_nodes_running: false,
        }),
        certs: certs.clone(),
    };
    let ours = if args.netns {
        let (processes, target) = start_netns(certs.as_deref())?;
        config.target = Some(target);
        Some(processes)
    } else if args.processes || args.peer.is_some() {
        let (processes, target) = start_processes(None, &peers_dir, certs.as_deref(), args.port)?;
        config.target = Some(target);
        Some(processes)
    } else {
        None
    };
    if args.max {
        return run_max(
            &runtime,
            &config,
            ours.as_ref(),
            &progress,
            &machine,
            args.json,
        );
    }
    let profile = match &args.profile {
        Some(_) => Some(CpuProfile::start()?),
        None => None,
    };
    let outcome = run_once(&runtime, &config, ours.as_ref(), "buildwire", &progress);
    drop(ours);
    if let (Some(profile), Some(path)) = (profile, &args.profile) {
        let samples = profile.write_flame_graph(path)?;
        eprintln!(
            "CPU flame graph ({samples} samples) written to {}",
            path.display()
        );
    }
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(error) => {
            progress.finish();
            return Err(error);
        }
    };
    let theirs = args.peer.map(|peer| {
        progress.set(format!("{}: starting", peer.name()));
        let result = start_processes(Some(peer), &peers_dir, certs.as_deref(), 0).and_then(
            |(processes, target)| {
                let mut config = config.clone();
                config.target = Some(target);
                run_once(&runtime, &config, Some(&processes), peer.name(), &progress)
                    .map_err(|e| e.to_string())
            },
        );
        (peer, result)
    });
    progress.finish();
    if let Some(path) = &args.plot {
        let mut series = vec![(
            "buildwire",
            outcome.throughput_timeline.as_slice(),
            &outcome.histogram,
        )];
        if let Some((peer, Ok(o))) = &theirs {
            series.push((peer.name(), o.throughput_timeline.as_slice(), &o.histogram));
        }
        write_throughput_and_cdf(path, "bacnet sc", &series)?;
        eprintln!("throughput and latency CDF written to {}", path.display());
    }
    let mut text = render(&outcome, &machine);
    let mut report = serde_json::to_value(&outcome)?;
    if let Some(object) = report.as_object_mut() {
        object.insert("machine".into(), serde_json::to_value(&machine)?);
        object.insert("benchmark".into(), json!("bacnet sc"));
        if let Some((peer, result)) = &theirs {
            text.push_str(&comparison(&outcome, peer.name(), result));
            let entry = match result {
                Ok(o) => json!({
                    "target": peer.name(),
                    "outcome": o,
                    "ours_over_theirs_throughput": ratio(outcome.sustained.throughput_rps, o.sustained.throughput_rps),
                }),
                Err(error) => json!({"target": peer.name(), "error": error}),
            };
            object.insert("comparison".into(), json!([entry]));
        }
    }
    super::bench::print_table_and_report(&text, &report, args.json)?;
    threshold_verdict(
        &outcome.mode,
        outcome.passed,
        outcome.error_threshold,
        &outcome.sustained,
        "lower the load (--unicast, --broadcast) or raise --echo-timeout",
    )
}

fn ratio(ours: f64, theirs: f64) -> Option<f64> {
    (theirs > 0.0).then(|| ours / theirs)
}

fn render(outcome: &ScOutcome, machine: &MachineInfo) -> String {
    let s = &outcome.sustained;
    let table = phase_table(s, "rounds/s");
    let echoes = format!(
        "echoes checked: {} ({:.0}/s); sent by the echo nodes: {}; relayed by the hub: {}",
        s.confirmed_answered,
        if s.duration_s > 0.0 {
            s.confirmed_answered as f64 / s.duration_s
        } else {
            0.0
        },
        s.executed
            .map_or_else(|| "unknown".to_owned(), |n| n.to_string()),
        match (outcome.hub_relayed, outcome.hub_relayed_per_s) {
            (Some(n), Some(rate)) => format!("{n} ({rate:.0}/s)"),
            _ => "unknown".to_owned(),
        }
    );
    format!(
        "bacnet sc ({} unicast + {} broadcast workers on {} client node(s), {}, {}): \
         {}\n{table}\n{echoes}\n{}\nresident memory (MiB): this process {}, \
         the hub's own process {}, the echo nodes' {}\n",
        outcome.config.unicast,
        outcome.config.broadcast,
        outcome.config.client_nodes.max(1),
        if outcome.config.tls {
            "TLS 1.3"
        } else {
            "plaintext"
        },
        outcome.server,
        measured_line(s, &outcome.warmup, machine),
        error_line(s, outcome.error_threshold, outcome.passed),
        opt(outcome.resident_mib, 1),
        opt(outcome.server_resident_mib, 1),
        opt(outcome.echo_resident_mib, 1),
    )
}

fn comparison(ours: &ScOutcome, peer: &str, theirs: &Result<ScOutcome, String>) -> String {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "hub and echo nodes",
        "rounds",
        "errors",
        "rounds/s",
        "mean ms",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "max ms",
        "hub relayed/s",
        "hub RSS MiB",
    ]);
    let mut row = |name: &str, o: &ScOutcome| {
        let s = &o.sustained;
        let mut cells = latency_row(
            name,
            s.answered,
            s.total_errors,
            s.throughput_rps,
            &s.latency_ms,
        );
        cells.push(right(opt(o.hub_relayed_per_s, 0)));
        cells.push(right(opt(o.server_resident_mib, 1)));
        table.add_row(cells);
    };
    row("buildwire", ours);
    let verdict = match theirs {
        Ok(o) => {
            row(peer, o);
            let s = &o.sustained;
            format!(
                "buildwire / {peer}: {} rounds/s, p50 latency {peer} / buildwire {}",
                ratio(ours.sustained.throughput_rps, s.throughput_rps)
                    .map_or_else(|| "-".to_owned(), |r| format!("{r:.1}x")),
                ratio(s.latency_ms.p50, ours.sustained.latency_ms.p50)
                    .map_or_else(|| "-".to_owned(), |r| format!("{r:.1}x")),
            )
        }
        Err(error) => {
            table.add_row(failed_row(peer, error, 11));
            format!("{peer} could not be measured: {error}")
        }
    };
    format!(
        "\nthe same load through {peer} (hub and echo nodes as processes on 127.0.0.1, one \
         after the other, same clients):\n{table}\n{verdict}\n"
    )
}

/// `sc-process`: the hub or an echo node until stdin closes.
pub fn process(args: &ScProcessArgs) -> CommandResult {
    use std::io::BufRead;
    super::ignore_sigpipe();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let certs = args.certs.as_deref();
    let count: Box<dyn Fn() -> u64> = match args.role {
        ScRole::Hub => {
            let bind = SocketAddr::from((args.bind, args.port));
            let hub = runtime.block_on(start_hub(bind, certs))?;
            println!("ready {}", hub.local_addr().port());
            Box::new(move || {
                let stats = hub.stats().hub;
                stats.unicast_relayed + stats.broadcast_copies
            })
        }
        ScRole::Echo => {
            let tls = node_tls(certs, &args.name)?;
            let node = runtime.block_on(EchoNode::start(&args.hub, tls, args.vmac))?;
            println!("ready 0");
            Box::new(move || node.echoed())
        }
    };
    for line in std::io::stdin().lock().lines() {
        if line?.trim() == "count" {
            println!("executed {}", count());
        }
    }
    Ok(())
}
