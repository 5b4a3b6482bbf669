//! Where the parts of the BACnet/SC scenario run (this process, processes of their own on
//! 127.0.0.1, network namespaces, or a peer's hub and echo nodes), one run, the `--max`
//! curve, the tables and the verdict. The CLI maps its options to [`ScRunConfig`] and
//! [`ScPlacement`] and prints.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use buildwire_bacnet::link::sc::Vmac;
use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};

use super::orchestrate::{
    OrchestrateError, StatusFn, ThresholdExceeded, answer_counts_until_stdin_closes, best_of,
    doubling_until_plateau, phase_status, threshold_verdict,
};
use super::peer::{self, BACPY_SC_SCRIPT, PeerError, StressProcess, script_command};
use super::render::{error_line, failed_row, latency_row, measured_line, opt, phase_table, right};
use super::sc::{
    ECHO_VMACS, EchoNode, ScOutcome, ScProbes, ScRunConfig, ScTarget, node_tls, run_sc, start_hub,
    write_certificates,
};
use crate::netns::{End, NetnsLab};
use crate::report::MachineInfo;

/// Whose hub and echo nodes run beside ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScPeer {
    /// bac-py's hub and two bac-py echo nodes, each its own process.
    BacPy,
    /// bac-py's hub with buildwire's echo nodes (in their own processes): the hub alone.
    BacPyHub,
}

impl ScPeer {
    /// Its name in tables and reports.
    pub const fn name(self) -> &'static str {
        match self {
            Self::BacPy => "bac-py",
            Self::BacPyHub => "bac-py hub",
        }
    }
}

/// The role of an SC process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScRole {
    /// The hub.
    Hub,
    /// An echo node.
    Echo,
}

/// Where our hub and echo nodes run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ScPlacement {
    /// In this process (or at the run's `target`).
    #[default]
    InProcess,
    /// Each in its own process on 127.0.0.1.
    Processes,
    /// The hub and the echo nodes each in a network namespace of their own.
    Netns,
}

/// The certificates of a run: none (plaintext), a given folder, or a folder made for the
/// run and removed when this is dropped.
#[derive(Debug)]
pub struct ScCertificates {
    dir: Option<PathBuf>,
    temporary: bool,
}

impl ScCertificates {
    /// No certificates without `tls`; else `given`, or new ones (with the addresses of
    /// `--netns` among their names) in a temporary folder.
    pub fn prepare(given: Option<&Path>, tls: bool) -> Result<Self, super::BacnetBenchError> {
        match (given, tls) {
            (_, false) => Ok(Self {
                dir: None,
                temporary: false,
            }),
            (Some(dir), true) => Ok(Self {
                dir: Some(dir.to_path_buf()),
                temporary: false,
            }),
            (None, true) => {
                let dir =
                    std::env::temp_dir().join(format!("buildwire-bench-sc-{}", std::process::id()));
                let extra: Vec<String> = [NETNS_HUB_1, NETNS_HUB_2]
                    .iter()
                    .map(ToString::to_string)
                    .collect();
                // Removed on drop even when writing fails half-way.
                let certs = Self {
                    dir: Some(dir.clone()),
                    temporary: true,
                };
                write_certificates(&dir, &extra)?;
                Ok(certs)
            }
        }
    }

    /// The folder, `None` for plaintext.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }
}

impl Drop for ScCertificates {
    fn drop(&mut self) {
        if let (Some(dir), true) = (&self.dir, self.temporary) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The hub and echo nodes in processes (ours or a peer's). Fields drop in order: the
/// processes stop before their namespaces go.
#[derive(Debug)]
pub struct ScProcesses {
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
    program: &Path,
    peer: Option<ScPeer>,
    peers_dir: &Path,
    role: ScRole,
) -> Result<std::process::Command, PeerError> {
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
            let mut command = std::process::Command::new(program);
            command.args(["bench", "bacnet", "sc-process"]);
            command.arg(match role {
                ScRole::Hub => "hub",
                ScRole::Echo => "echo",
            });
            Ok(command)
        }
    }
}

fn free_tcp_port() -> Result<u16, PeerError> {
    Ok(std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()?
        .port())
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
    program: &Path,
    peer: Option<ScPeer>,
    peers_dir: &Path,
    certs: Option<&Path>,
    hub_uri: &str,
    namespace: Option<&str>,
) -> Result<Vec<StressProcess>, PeerError> {
    let bacpy = peer == Some(ScPeer::BacPy);
    let mut echo = Vec::new();
    for (vmac, name) in ECHO_VMACS.iter().zip(["echo1", "echo2"]) {
        let base = sc_process_command(program, peer, peers_dir, ScRole::Echo)?;
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
pub fn start_processes(
    program: &Path,
    peer: Option<ScPeer>,
    peers_dir: &Path,
    certs: Option<&Path>,
    port: u16,
) -> Result<(ScProcesses, ScTarget), PeerError> {
    let port = if port == 0 { free_tcp_port()? } else { port };
    let mut command = sc_process_command(program, peer, peers_dir, ScRole::Hub)?;
    command.args(["--port", &port.to_string()]);
    tls_args(&mut command, certs, peer.is_some());
    let what = format!("{} hub", peer.map_or("buildwire", ScPeer::name));
    let hub = StressProcess::start(command, &what)?;
    let scheme = if certs.is_some() { "wss" } else { "ws" };
    let uri = format!("{scheme}://127.0.0.1:{}", hub.port);
    let echo = start_echo_processes(program, peer, peers_dir, certs, &uri, None)?;
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
pub fn start_netns(
    program: &Path,
    certs: Option<&Path>,
) -> Result<(ScProcesses, ScTarget), OrchestrateError> {
    let mut lab = NetnsLab::new();
    let hub_ns = lab.namespace("h")?;
    let echo_ns = lab.namespace("e")?;
    lab.link((End::Here, NETNS_CLIENTS), (End::In(&hub_ns), NETNS_HUB_1))?;
    lab.link(
        (End::In(&echo_ns), NETNS_ECHO),
        (End::In(&hub_ns), NETNS_HUB_2),
    )?;
    let mut command = NetnsLab::command_in(&hub_ns, program);
    command.args(["bench", "bacnet", "sc-process", "hub", "--bind", "0.0.0.0"]);
    command.args(["--port", &NETNS_PORT.to_string()]);
    tls_args(&mut command, certs, false);
    let hub = StressProcess::start(command, &format!("hub in namespace {hub_ns}"))?;
    let scheme = if certs.is_some() { "wss" } else { "ws" };
    let echo = start_echo_processes(
        program,
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

/// Starts what `placement` puts outside this process (our hub and echo nodes) and returns
/// them with the target the run aims at; `None` in this process.
pub fn place(
    program: &Path,
    placement: ScPlacement,
    peers_dir: &Path,
    certs: Option<&Path>,
    port: u16,
) -> Result<Option<(ScProcesses, ScTarget)>, OrchestrateError> {
    Ok(match placement {
        ScPlacement::InProcess => None,
        ScPlacement::Processes => Some(start_processes(program, None, peers_dir, certs, port)?),
        ScPlacement::Netns => Some(start_netns(program, certs)?),
    })
}

/// One run against `processes` (or in this process when `None`).
pub fn run_once(
    runtime: &tokio::runtime::Runtime,
    config: &ScRunConfig,
    processes: Option<&ScProcesses>,
    label: &str,
    status: StatusFn<'_>,
) -> Result<ScOutcome, OrchestrateError> {
    let tls = if config.tls { "TLS" } else { "plaintext" };
    let report = phase_status(
        status,
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
pub fn run_max(
    runtime: &tokio::runtime::Runtime,
    config: &ScRunConfig,
    processes: Option<&ScProcesses>,
    status: StatusFn<'_>,
) -> Result<Vec<ScOutcome>, OrchestrateError> {
    doubling_until_plateau(
        1,
        64,
        |factor| {
            let mut step = config.clone();
            step.unicast = config.unicast * factor;
            step.broadcast = config.broadcast * factor;
            let label = format!("buildwire x{factor}");
            run_once(runtime, &step, processes, &label, status)
        },
        |outcome| &outcome.sustained,
    )
}

/// `--max`: the curve of throughput by workers, and the best run.
pub fn max_table(curve: &[ScOutcome], machine: &MachineInfo) -> String {
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
    for o in curve {
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
    let best = best_of(curve, |o| &o.sustained);
    format!(
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
    )
}

/// Passes when the error rate is at or below 0.5 %.
pub fn verdict(outcome: &ScOutcome) -> Result<(), ThresholdExceeded> {
    threshold_verdict(
        &outcome.mode,
        outcome.passed,
        outcome.error_threshold,
        &outcome.sustained,
        "lower the load (--unicast, --broadcast) or raise --echo-timeout",
    )
}

/// The same load through `peer`'s hub (and echo nodes), as processes on 127.0.0.1.
pub fn run_peer(
    runtime: &tokio::runtime::Runtime,
    config: &ScRunConfig,
    peer: ScPeer,
    program: &Path,
    peers_dir: &Path,
    status: StatusFn<'_>,
) -> Result<ScOutcome, OrchestrateError> {
    status(format!("{}: starting", peer.name()));
    let (processes, target) =
        start_processes(program, Some(peer), peers_dir, config.certs.as_deref(), 0)?;
    let mut config = config.clone();
    config.target = Some(target);
    run_once(runtime, &config, Some(&processes), peer.name(), status)
}

/// `ours / theirs`, none when theirs is 0.
pub fn ratio(ours: f64, theirs: f64) -> Option<f64> {
    (theirs > 0.0).then(|| ours / theirs)
}

/// One SC run: its operations, the echoes checked and relayed, the verdict and memory.
pub fn sc_table(outcome: &ScOutcome, machine: &MachineInfo) -> String {
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

/// Ours beside `peer`'s hub and echo nodes under the same load.
pub fn comparison(ours: &ScOutcome, peer: &str, theirs: &Result<ScOutcome, String>) -> String {
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

/// An SC process of `--processes` and `--netns`.
#[derive(Debug, Clone)]
pub struct ScProcessConfig {
    /// Hub or echo node.
    pub role: ScRole,
    /// Hub: the TCP port (0 picks one).
    pub port: u16,
    /// Hub: the address to listen on.
    pub bind: Ipv4Addr,
    /// Echo node: the hub's URI.
    pub hub: String,
    /// Echo node: its VMAC.
    pub vmac: Vmac,
    /// Echo node: its certificate's name in `certs`.
    pub name: String,
    /// The certificates folder; plaintext without it.
    pub certs: Option<PathBuf>,
}

/// The hub or an echo node: prints `ready PORT` (0 for an echo node), answers `count` with
/// `executed N` (messages the hub relayed, echoes the node sent), runs until stdin closes.
pub fn serve_sc_process(config: &ScProcessConfig) -> Result<(), OrchestrateError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let certs = config.certs.as_deref();
    let count: Box<dyn Fn() -> u64> = match config.role {
        ScRole::Hub => {
            let bind = SocketAddr::from((config.bind, config.port));
            let hub = runtime.block_on(start_hub(bind, certs))?;
            println!("ready {}", hub.local_addr().port());
            Box::new(move || {
                let stats = hub.stats().hub;
                stats.unicast_relayed + stats.broadcast_copies
            })
        }
        ScRole::Echo => {
            let tls = node_tls(certs, &config.name)?;
            let node = runtime.block_on(EchoNode::start(&config.hub, tls, config.vmac))?;
            println!("ready 0");
            Box::new(move || node.echoed())
        }
    };
    answer_counts_until_stdin_closes(count)?;
    Ok(())
}
