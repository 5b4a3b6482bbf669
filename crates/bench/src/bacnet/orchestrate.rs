//! Where the parts of a BACnet/IP scenario run and how a run goes from start to verdict:
//! in this process, as processes of their own on 127.0.0.1 (`--processes`), or each in a
//! network namespace of its own (`--netns`); one run with its UDP limit, the `--max` curve,
//! and the error-rate verdict. The CLI maps its options to [`ScenarioRunConfig`] and prints.
//!
//! The processes are this same program started again with a hidden command that speaks the
//! launcher protocol of [`super::peer`] ([`serve_stress_process`], [`serve_router_process`]).

use std::io::BufRead;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::{Path, PathBuf};

use buildwire_bacnet::driver::{BacnetServer, BacnetServerConfig, BipConfig};

use super::peer::{self, PeerError, StressProcess};
use super::{
    BacnetBenchError, BacnetOutcome, BacnetProgress, BacnetRunConfig, ClientSide, PhaseReport,
    Scenario, bbmd_role, measure_limit, run_scenario, start_router, start_router_on,
};
use crate::limit::{LimitError, Phase, UdpPath};
use crate::netns::{End, NetnsError, NetnsLab, broadcast_24};

/// Where a status line goes (the CLI's progress line).
pub type StatusFn<'a> = &'a (dyn Fn(String) + Sync);

/// Why a scenario could not be run.
#[derive(Debug, thiserror::Error)]
pub enum OrchestrateError {
    /// A server, router or peer process could not be started.
    #[error(transparent)]
    Peer(#[from] PeerError),
    /// The namespaces of `--netns` could not be made.
    #[error(transparent)]
    Netns(#[from] NetnsError),
    /// The scenario itself failed to start or run.
    #[error(transparent)]
    Run(#[from] BacnetBenchError),
    /// The raw UDP limit failed.
    #[error(transparent)]
    Limit(#[from] LimitError),
    /// A socket, a pipe or the runtime failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// `--processes` with `--target`.
    #[error("--processes starts its own server; leave out --target")]
    ProcessesWithTarget,
    /// A `compare` target that is neither ours nor a known peer.
    #[error(
        "unknown target `{0}`: buildwire, buildwire-process, rusty-bacnet, bacpypes3 or bac-py"
    )]
    UnknownTarget(String),
}

/// The error rate of a run was above its scenario's threshold.
#[derive(Debug, thiserror::Error)]
#[error(
    "error rate {error_percent:.3} % is above the {threshold_percent} % threshold of the {mode} \
     scenario (first error: {first}); {hint}"
)]
pub struct ThresholdExceeded {
    /// The sustained error rate, percent.
    pub error_percent: f64,
    /// The threshold, percent.
    pub threshold_percent: f64,
    /// The scenario.
    pub mode: String,
    /// The first error seen (`OPERATION: ERROR`), or that nothing was answered.
    pub first: String,
    /// What to try.
    pub hint: String,
}

/// Where the server (and in the router scenario the router) runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ServerPlacement {
    /// In this process (or the device of `target`).
    #[default]
    InProcess,
    /// Each in its own OS process on 127.0.0.1.
    Processes,
    /// Each in its own process and Linux network namespace, on port 47808.
    Netns,
}

/// One scenario run: the run itself, where its parts go and the limit after it.
#[derive(Clone, Debug)]
pub struct ScenarioRunConfig {
    /// The scenario, the mix and the timings.
    pub run: BacnetRunConfig,
    /// Seconds of the raw UDP limit after the run (0 skips it).
    pub limit_seconds: f64,
    /// Where the server and router run.
    pub placement: ServerPlacement,
    /// This program, started again for the server and router processes.
    pub program: PathBuf,
}

/// The parts started outside this process: the stress server and, in the router scenario,
/// the router. Dropping them stops the processes.
#[derive(Debug)]
struct OwnProcesses {
    server: StressProcess,
    router: Option<StressProcess>,
    /// The namespaces of `--netns`, deleted after the processes in them stopped (fields
    /// drop in order).
    lab: Option<NetnsLab>,
    /// Where the raw UDP limit runs: 127.0.0.1, or across the clients' veth link into the
    /// first namespace with `--netns`, so that `limit` prices the same path.
    limit_path: UdpPath,
}

/// A scenario whose processes (if any) are running, ready to be measured.
#[derive(Debug)]
pub struct PlacedScenario {
    config: BacnetRunConfig,
    limit_seconds: f64,
    own: Option<OwnProcesses>,
}

impl PlacedScenario {
    /// Starts the parts `config.placement` puts outside this process and aims the run at
    /// them.
    pub fn start(config: &ScenarioRunConfig) -> Result<Self, OrchestrateError> {
        let mut run = config.run.clone();
        let own = match config.placement {
            ServerPlacement::InProcess => None,
            ServerPlacement::Processes => {
                if run.target.is_some() {
                    return Err(OrchestrateError::ProcessesWithTarget);
                }
                Some(start_processes(&config.program, run.port, &mut run)?)
            }
            ServerPlacement::Netns => Some(start_netns(&config.program, &mut run)?),
        };
        Ok(Self {
            config: run,
            limit_seconds: config.limit_seconds,
            own,
        })
    }

    /// Runs the scenario and its limit; with processes, the outcome names them and their
    /// resident memory.
    pub fn run(
        &self,
        runtime: &tokio::runtime::Runtime,
        status: StatusFn<'_>,
    ) -> Result<BacnetOutcome, OrchestrateError> {
        let own = self.own.as_ref();
        let probe = || own.and_then(|o| o.server.executed());
        let limit_path = own.map(|o| o.limit_path.clone()).unwrap_or_default();
        let mut outcome = run_once(
            runtime,
            &self.config,
            self.limit_seconds,
            &limit_path,
            status,
            own.map(|_| &probe as &(dyn Fn() -> Option<u64> + Sync)),
        )?;
        if let Some(own) = own {
            outcome.server = if own.lab.is_some() {
                format!(
                    "own process in its own network namespace {}",
                    outcome.server
                )
            } else {
                format!("own process {}", outcome.server)
            };
            outcome.server_resident_mib = own.server.resident_mib();
            if let Some(router) = &own.router {
                outcome.router_resident_mib = router.resident_mib();
            }
        }
        Ok(outcome)
    }
}

/// Starts buildwire's stress server as a child process (`program`); with `bbmd`, as the
/// BBMD scenario's server.
pub fn start_own_process(
    program: &Path,
    port: u16,
    bbmd: bool,
) -> Result<StressProcess, PeerError> {
    let mut command = std::process::Command::new(program);
    command.args([
        "bench",
        "bacnet",
        "stress-server",
        "--port",
        &port.to_string(),
    ]);
    if bbmd {
        command.arg("--bbmd");
    }
    let process = StressProcess::start(command, "buildwire stress-server")?;
    std::thread::sleep(peer::SETTLE);
    Ok(process)
}

/// Starts the router scenario's router as a child process (`program`).
fn start_router_process(program: &Path, port: u16) -> Result<StressProcess, PeerError> {
    let mut command = std::process::Command::new(program);
    command.args([
        "bench",
        "bacnet",
        "router-process",
        "--port",
        &port.to_string(),
    ]);
    let process = StressProcess::start(command, "buildwire router-process")?;
    std::thread::sleep(peer::SETTLE);
    Ok(process)
}

/// Starts the scenario's server (and router) as processes and aims `config` at them.
fn start_processes(
    program: &Path,
    port: u16,
    config: &mut BacnetRunConfig,
) -> Result<OwnProcesses, OrchestrateError> {
    let loopback = Ipv4Addr::LOCALHOST;
    let scenario = config.scenario;
    match scenario {
        Scenario::Bip | Scenario::Bbmd => {
            let server = start_own_process(program, port, scenario == Scenario::Bbmd)?;
            config.target = Some(SocketAddrV4::new(loopback, server.port));
            Ok(OwnProcesses {
                server,
                router: None,
                lab: None,
                limit_path: UdpPath::default(),
            })
        }
        Scenario::Router => {
            // The port is the router's network-1 port, as in-process.
            let server = start_own_process(program, 0, false)?;
            let router = start_router_process(program, port)?;
            config.target = Some(SocketAddrV4::new(loopback, server.port));
            config.via_router = Some(SocketAddrV4::new(loopback, router.port));
            Ok(OwnProcesses {
                server,
                router: Some(router),
                lab: None,
                limit_path: UdpPath::default(),
            })
        }
    }
}

/// `--netns`: the server (and router) as processes in namespaces of their own, joined to
/// this one by veth pairs. Network 1 is 198.18.1.0/24 (clients .1, route check .3, the
/// server or the router .2); the router scenario's network 2 is 198.18.2.0/24 (router .1,
/// server .2). Every device uses the standard port 47808.
fn start_netns(
    program: &Path,
    config: &mut BacnetRunConfig,
) -> Result<OwnProcesses, OrchestrateError> {
    const PORT: u16 = 47808;
    let scenario = config.scenario;
    let (client, first, check) = (
        Ipv4Addr::new(198, 18, 1, 1),
        Ipv4Addr::new(198, 18, 1, 2),
        Ipv4Addr::new(198, 18, 1, 3),
    );
    let (router_2, server_2) = (Ipv4Addr::new(198, 18, 2, 1), Ipv4Addr::new(198, 18, 2, 2));
    let mut lab = NetnsLab::new();
    let server_ns = lab.namespace("s")?;
    let stress = |ns: &str, at: Ipv4Addr, bbmd: bool| {
        let mut command = NetnsLab::command_in(ns, program);
        command.args(["bench", "bacnet", "stress-server", "--bind"]);
        command
            .arg(at.to_string())
            .args(["--port", &PORT.to_string()]);
        if bbmd {
            command.arg("--bbmd");
        }
        StressProcess::start(command, &format!("stress server in namespace {ns}"))
    };
    config.clients = Some(ClientSide {
        ip: client,
        check_ip: check,
        broadcast: broadcast_24(client),
    });
    let mut limit_path = UdpPath {
        client,
        server: first,
        server_namespace: Some(server_ns.clone()),
    };
    let (server, router) = match scenario {
        Scenario::Bip | Scenario::Bbmd => {
            lab.link((End::Here, client), (End::In(&server_ns), first))?;
            let server = stress(&server_ns, first, scenario == Scenario::Bbmd)?;
            config.target = Some(SocketAddrV4::new(first, PORT));
            (server, None)
        }
        Scenario::Router => {
            let router_ns = lab.namespace("r")?;
            // The limit crosses the clients' link, to the router's namespace.
            limit_path.server_namespace = Some(router_ns.clone());
            lab.link((End::Here, client), (End::In(&router_ns), first))?;
            lab.add_address_here(client, check)?;
            lab.link(
                (End::In(&router_ns), router_2),
                (End::In(&server_ns), server_2),
            )?;
            let server = stress(&server_ns, server_2, false)?;
            let mut command = NetnsLab::command_in(&router_ns, program);
            command.args([
                "bench",
                "bacnet",
                "router-process",
                "--port",
                &PORT.to_string(),
            ]);
            command.args([
                "--network-1",
                &first.to_string(),
                "--network-2",
                &router_2.to_string(),
            ]);
            let router =
                StressProcess::start(command, &format!("router in namespace {router_ns}"))?;
            config.target = Some(SocketAddrV4::new(server_2, PORT));
            config.via_router = Some(SocketAddrV4::new(first, PORT));
            (server, Some(router))
        }
    };
    std::thread::sleep(peer::SETTLE);
    Ok(OwnProcesses {
        server,
        router,
        lab: Some(lab),
        limit_path,
    })
}

/// The live line of a scenario's phases: `LABEL PHASE: S s, N UNIT, R/s`.
pub fn phase_status<'a>(
    status: StatusFn<'a>,
    label: String,
    unit: &'static str,
) -> impl Fn(&str, f64, u64) + Sync + 'a {
    move |phase: &str, secs: f64, answered: u64| {
        let rate = if secs > 0.0 {
            answered as f64 / secs
        } else {
            0.0
        };
        status(format!(
            "{label} {phase}: {secs:.0} s, {answered} {unit}, {rate:.0}/s"
        ));
    }
}

/// One scenario run with its limit (none when `limit_seconds` is 0).
pub fn run_once(
    runtime: &tokio::runtime::Runtime,
    config: &BacnetRunConfig,
    limit_seconds: f64,
    limit_path: &UdpPath,
    status: StatusFn<'_>,
    executed_probe: Option<&(dyn Fn() -> Option<u64> + Sync)>,
) -> Result<BacnetOutcome, OrchestrateError> {
    let report = phase_status(
        status,
        format!(
            "bacnet {} ({} pools)",
            config.scenario.name(),
            config.mix.pools
        ),
        "answers",
    );
    let progress: BacnetProgress<'_> = &report;
    let mut outcome = runtime.block_on(run_scenario(config, progress, executed_probe))?;
    if limit_seconds > 0.0 {
        let limit_progress = |phase: Phase, answered: u64, secs: f64| {
            let phase = match phase {
                Phase::Warmup => "warmup",
                Phase::Sustain => "sustain",
            };
            status(format!(
                "udp limit {phase}: {secs:.0} s, {answered} replies"
            ));
        };
        measure_limit(&mut outcome, limit_seconds, limit_path, &limit_progress)?;
    } else {
        outcome.limit = None;
    }
    Ok(outcome)
}

/// `--max`: the run (in this process or at its target, without the limit) with the pools
/// doubled each step from `base.mix.pools` until throughput rises less than 5 % (or 256
/// pools); the curve in order.
pub fn run_max(
    runtime: &tokio::runtime::Runtime,
    base: &BacnetRunConfig,
    status: StatusFn<'_>,
) -> Result<Vec<BacnetOutcome>, OrchestrateError> {
    doubling_until_plateau(
        base.mix.pools.max(1),
        256,
        |pools| {
            let mut config = base.clone();
            config.mix.pools = pools;
            run_once(runtime, &config, 0.0, &UdpPath::default(), status, None)
        },
        |outcome| &outcome.sustained,
    )
}

/// The `--max` curve: `step(n)` for n = `start`, 2 `start`, 4 `start` ... until the
/// sustained throughput rises less than 5 % over the step before, or n reaches `most`.
pub fn doubling_until_plateau<T, E>(
    start: usize,
    most: usize,
    mut step: impl FnMut(usize) -> Result<T, E>,
    sustained: impl Fn(&T) -> &PhaseReport,
) -> Result<Vec<T>, E> {
    let mut curve: Vec<T> = Vec::new();
    let mut n = start;
    loop {
        let outcome = step(n)?;
        let rising = curve.last().is_none_or(|prev| {
            sustained(&outcome).throughput_rps > sustained(prev).throughput_rps * 1.05
        });
        curve.push(outcome);
        if !rising || n >= most {
            break;
        }
        n *= 2;
    }
    Ok(curve)
}

/// The run of the curve with the highest throughput.
pub fn best_of<T>(curve: &[T], sustained: impl Fn(&T) -> &PhaseReport) -> Option<&T> {
    curve.iter().max_by(|a, b| {
        sustained(a)
            .throughput_rps
            .total_cmp(&sustained(b).throughput_rps)
    })
}

/// Passes when the error rate is at or below the published threshold.
pub fn verdict(outcome: &BacnetOutcome) -> Result<(), ThresholdExceeded> {
    threshold_verdict(
        &outcome.mode,
        outcome.passed,
        outcome.error_threshold,
        &outcome.sustained,
        "lower the load (--pools) or look at the server",
    )
}

/// A scenario's verdict: an error rate above `threshold` fails, with the first error and
/// `hint` in the error.
pub fn threshold_verdict(
    mode: &str,
    passed: bool,
    threshold: f64,
    sustained: &PhaseReport,
    hint: &str,
) -> Result<(), ThresholdExceeded> {
    if passed {
        return Ok(());
    }
    let first = sustained
        .operations
        .iter()
        .find_map(|(op, r)| r.first_error.as_ref().map(|e| format!("{op}: {e}")))
        .unwrap_or_else(|| "nothing was answered".to_owned());
    Err(ThresholdExceeded {
        error_percent: sustained.error_rate * 100.0,
        threshold_percent: threshold * 100.0,
        mode: mode.to_owned(),
        first,
        hint: hint.to_owned(),
    })
}

/// Answers `count` on stdin with `executed N` (from `count`) until stdin closes: the
/// launcher protocol's end of a process, after it printed `ready PORT`.
pub fn answer_counts_until_stdin_closes(count: impl Fn() -> u64) -> std::io::Result<()> {
    for line in std::io::stdin().lock().lines() {
        if line?.trim() == "count" {
            println!("executed {}", count());
        }
    }
    Ok(())
}

/// The stress server process of `--processes` and `--netns`.
#[derive(Clone, Copy, Debug)]
pub struct StressProcessConfig {
    /// The address to serve on.
    pub bind: Ipv4Addr,
    /// Its UDP port (0 picks one).
    pub port: u16,
    /// Serve as the BBMD scenario's server: a BBMD whose BDT holds itself.
    pub bbmd: bool,
}

/// Serves the stress objects, prints `ready PORT`, answers `count` with the requests the
/// server executed, and stops when stdin closes (the benchmark ended or died).
pub fn serve_stress_process(config: StressProcessConfig) -> Result<(), OrchestrateError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let database = super::profiles::stress_profile()
        .build()
        .map_err(|e| BacnetBenchError::Config(e.to_string()))?;
    let bind = SocketAddrV4::new(config.bind, config.port);
    let mut server_config = BacnetServerConfig::new(bind, database);
    server_config.broadcast = None;
    server_config.announce = false;
    if config.bbmd {
        // A BBMD's BDT names its own address, so the port is fixed before it starts.
        let port = if config.port == 0 {
            std::net::UdpSocket::bind(bind)?.local_addr()?.port()
        } else {
            config.port
        };
        server_config.bind = SocketAddrV4::new(config.bind, port);
        server_config.role = bbmd_role(server_config.bind);
    }
    let server = runtime.block_on(BacnetServer::start(server_config))?;
    println!("ready {}", server.local_addr().port());
    answer_counts_until_stdin_closes(|| server.stats().0.requests)?;
    runtime.block_on(server.shutdown());
    Ok(())
}

/// The router process of the router scenario.
#[derive(Clone, Copy, Debug)]
pub struct RouterProcessConfig {
    /// UDP port of network 1 (0 picks one), and of network 2 with `networks`.
    pub port: u16,
    /// Network 1's and network 2's addresses (a /24 each); `None`: both on 127.0.0.1.
    pub networks: Option<(Ipv4Addr, Ipv4Addr)>,
}

/// Routes between network 1 and network 2 on B/IP, prints `ready PORT` (its network-1 port)
/// and stops when stdin closes.
pub fn serve_router_process(config: RouterProcessConfig) -> Result<(), OrchestrateError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let (router, at) = match config.networks {
        Some((one, two)) => runtime.block_on(start_router_on(
            BipConfig {
                bind: SocketAddrV4::new(one, config.port),
                broadcast: Some(broadcast_24(one)),
            },
            BipConfig {
                bind: SocketAddrV4::new(two, config.port),
                broadcast: Some(broadcast_24(two)),
            },
        ))?,
        None => runtime.block_on(start_router(config.port))?,
    };
    println!("ready {}", at.port());
    // The router executes no requests of its own; `count` is answered for the protocol.
    answer_counts_until_stdin_closes(|| 0)?;
    runtime.block_on(router.shutdown());
    Ok(())
}
