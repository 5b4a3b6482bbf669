//! `buildwire bench bacnet bip|router|bbmd`: bac-py's published BACnet scenarios against
//! buildwire's 40-object stress server (or any device at `--target`), with every answer
//! checked, executed requests counted on the server and the raw UDP limit in the same run.

use std::net::SocketAddrV4;
use std::path::PathBuf;

use buildwire_bench::bacnet::peer::{self, StressProcess};
use buildwire_bench::bacnet::{
    BacnetOutcome, BacnetRunConfig, ClientSide, Mix, Scenario, measure_limit, run_scenario,
};
use buildwire_bench::limit::{Phase, UdpPath};
use buildwire_bench::netns::{End, NetnsLab, broadcast_24};
use buildwire_bench::report::{CpuProfile, MachineInfo, write_throughput_and_cdf};
use clap::{Args, Subcommand};
use comfy_table::{Cell, CellAlignment, Table, presets::UTF8_FULL_CONDENSED};
use serde_json::json;

use super::CommandResult;
use crate::progress::ProgressLine;

#[derive(Debug, Subcommand)]
pub enum BacnetBench {
    /// BACnet/IP: per pool 2 ReadProperty readers, 1 WriteProperty writer, 1 RPM, 1 WPM;
    /// plus 1 object-list reader and 1 COV subscriber.
    #[command(after_help = AFTER_HELP)]
    Bip(BacnetBenchArgs),
    /// The same mix without COV, from network 1 through buildwire's router to the server
    /// on network 2, plus a Who-Is-Router-To-Network health check every 10 s.
    #[command(after_help = AFTER_HELP)]
    Router(BacnetBenchArgs),
    /// The same mix from clients registered as foreign devices with the server, which is a
    /// BBMD, plus 1 Read-FDT and 1 Read-BDT reader.
    #[command(after_help = AFTER_HELP)]
    Bbmd(BacnetBenchArgs),
    /// The BACnet/IP mix against buildwire (in-process and as its own process) and every
    /// installed peer's stress server (rusty-bacnet, BACpypes3, bac-py), one after the
    /// other in one run: throughput, latency and executed/answered as ratios to ours.
    #[command(after_help = COMPARE_HELP)]
    Compare(CompareArgs),
    /// BACnet/SC: a hub, two echo nodes, 8 unicast and 2 broadcast workers sending
    /// payloads of 25/200/800/1,400 octets (30/30/25/15 %) over TLS 1.3, every echo checked
    /// byte for byte; `--peer bac-py` runs the same load through bac-py's hub and echo
    /// nodes in the same run.
    #[command(after_help = super::bench_bacnet_sc::AFTER_HELP)]
    Sc(super::bench_bacnet_sc::ScBenchArgs),
    /// (internal) the SC scenario's hub or an echo node in its own process: prints
    /// `ready PORT` (0 for an echo node), answers `count` with `executed N` (messages the
    /// hub relayed, echoes the node sent), runs until stdin closes.
    #[command(hide = true)]
    ScProcess(super::bench_bacnet_sc::ScProcessArgs),
    /// (internal) buildwire's stress server in its own process, speaking the launcher
    /// protocol: prints `ready PORT`, answers `count` on stdin with `executed N`.
    #[command(hide = true)]
    StressServer(StressServerArgs),
    /// (internal) the router scenario's router in its own process: network 1 and network 2
    /// on B/IP; prints `ready PORT` (its network-1 port) and runs until stdin closes.
    #[command(hide = true)]
    RouterProcess(RouterProcessArgs),
}

const COMPARE_HELP: &str = "Peers come from scripts/peers.sh (py311: rusty-bacnet, BACpypes3; \
    py313: bac-py); a missing one is reported and skipped. Each peer's launcher \
    (crates/bench/peers/bacnet_stress_*.py) serves the same 40 objects as device 400 and counts \
    the requests it executes: bac-py answers a reused invoke id from its transaction cache, so \
    compare executed, not answered.\n\nExample:\n  \
    buildwire bench bacnet compare --warmup 3 --sustain 15 --json > compare.json";

#[derive(Debug, Args)]
pub struct CompareArgs {
    #[command(flatten)]
    run: BacnetBenchArgs,
    /// Targets in order (default: all): buildwire, buildwire-process, rusty-bacnet,
    /// bacpypes3, bac-py.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "buildwire,buildwire-process,rusty-bacnet,bacpypes3,bac-py"
    )]
    targets: Vec<String>,
    /// Where scripts/peers.sh installed the peers (default: $BUILDWIRE_PEERS or ./.peers).
    #[arg(long)]
    peers: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct StressServerArgs {
    /// UDP port (0 picks one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Address to serve on.
    #[arg(long, default_value = "127.0.0.1")]
    bind: std::net::Ipv4Addr,
    /// Serve as the BBMD scenario's server: a BBMD whose BDT holds itself.
    #[arg(long)]
    bbmd: bool,
}

#[derive(Debug, Args)]
pub struct RouterProcessArgs {
    /// UDP port of network 1 (0 picks one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Network 1's address, with `--network-2` (a /24 each; default: both on 127.0.0.1).
    #[arg(long, requires = "network_2")]
    network_1: Option<std::net::Ipv4Addr>,
    /// Network 2's address (the router uses `--port` there too).
    #[arg(long, requires = "network_1")]
    network_2: Option<std::net::Ipv4Addr>,
}

const AFTER_HELP: &str = "Every answer is checked (object, property, datatype, the value last \
    written) before it counts; the server counts the requests it executed; the raw UDP limit \
    runs after, with the same concurrency and the mix's mean packet sizes. The exit status is 1 \
    when the error rate is above the published threshold (0.5 %, 1 % for the router).\n\n\
    Examples:\n  buildwire bench bacnet bip\n  \
    buildwire bench bacnet router --sustain 10 --json > router.json\n  \
    buildwire bench bacnet bip --pools 4 --plot bip.png\n  \
    buildwire bench bacnet bip --sustain 10 --profile bip-flame.svg\n  \
    buildwire bench bacnet bip --max --sustain 5\n  \
    buildwire bench bacnet bip --target 127.0.0.1:47808   (any device with the stress objects)";

#[derive(Debug, Args)]
pub struct BacnetBenchArgs {
    /// Seconds of warm-up (not measured).
    #[arg(long, default_value_t = 5.0)]
    warmup: f64,
    /// Seconds measured.
    #[arg(long, default_value_t = 30.0)]
    sustain: f64,
    /// Pools: each is one client (its own socket and invoke ids) with its workers.
    #[arg(long, default_value_t = 1)]
    pools: usize,
    /// ReadProperty workers per pool.
    #[arg(long, default_value_t = 2)]
    readers: usize,
    /// WriteProperty workers per pool.
    #[arg(long, default_value_t = 1)]
    writers: usize,
    /// ReadPropertyMultiple workers per pool.
    #[arg(long, default_value_t = 1)]
    rpm: usize,
    /// WritePropertyMultiple workers per pool.
    #[arg(long, default_value_t = 1)]
    wpm: usize,
    /// Object-list readers.
    #[arg(long, default_value_t = 1)]
    objlist: usize,
    /// COV subscribers (default: 1 for bip, 0 otherwise).
    #[arg(long)]
    cov: Option<usize>,
    /// Read-FDT workers (default: 1 for bbmd, 0 otherwise).
    #[arg(long)]
    fdt_workers: Option<usize>,
    /// Read-BDT workers (default: 1 for bbmd, 0 otherwise).
    #[arg(long)]
    bdt_workers: Option<usize>,
    /// UDP port of the in-process server (bip, bbmd) or the router's network-1 port
    /// (router); 0 picks a free one.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Seconds a worker pauses after an error.
    #[arg(long, default_value_t = 0.05)]
    error_backoff: f64,
    /// Aim at this device (HOST:PORT) instead of the in-process server; it must serve the
    /// stress objects (device 400). Executed requests are then not known.
    #[arg(long, value_name = "HOST:PORT")]
    target: Option<SocketAddrV4>,
    /// Seconds of the raw UDP limit run (0 skips it).
    #[arg(long, default_value_t = 5.0)]
    limit_seconds: f64,
    /// Run the stress server (and in the router scenario the router) as their own OS
    /// processes, with the clients in this one: the published "Docker" variant without
    /// Docker. The BBMD scenario's server process is the BBMD.
    #[arg(long)]
    processes: bool,
    /// Like --processes, with each process on a host of its own: Linux network namespaces
    /// joined by veth pairs, every device on port 47808 (root and iproute2; addresses from
    /// the benchmarking range 198.18.0.0/15). The clients stay in this namespace.
    #[arg(long, conflicts_with_all = ["processes", "target"])]
    netns: bool,
    /// Raise the pools (1, 2, 4, 8...) until throughput stops rising by 5 %; print the curve.
    #[arg(long)]
    max: bool,
    /// Print the report as JSON on stdout (the table goes to stderr).
    #[arg(long)]
    json: bool,
    /// Draw throughput over time and the latency CDF to this file (.png or .svg).
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Write a CPU flame graph (SVG) of this process (the in-process server and the
    /// clients) sampled during the run; with --processes only the clients are in it.
    #[arg(long, value_name = "FILE.svg")]
    profile: Option<PathBuf>,
}

pub fn execute(cmd: BacnetBench) -> CommandResult {
    match cmd {
        BacnetBench::Bip(args) => run(Scenario::Bip, &args),
        BacnetBench::Router(args) => run(Scenario::Router, &args),
        BacnetBench::Bbmd(args) => run(Scenario::Bbmd, &args),
        BacnetBench::Compare(args) => compare(&args),
        BacnetBench::StressServer(args) => stress_server(&args),
        BacnetBench::RouterProcess(args) => router_process(&args),
        BacnetBench::Sc(args) => super::bench_bacnet_sc::run(&args),
        BacnetBench::ScProcess(args) => super::bench_bacnet_sc::process(&args),
    }
}

/// Starts buildwire's stress server as a child process (this same program); with `bbmd`,
/// as the BBMD scenario's server.
fn start_own_process(port: u16, bbmd: bool) -> Result<StressProcess, String> {
    let program = std::env::current_exe().map_err(|e| e.to_string())?;
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

/// Starts the router scenario's router as a child process (this same program).
fn start_router_process(port: u16) -> Result<StressProcess, String> {
    let program = std::env::current_exe().map_err(|e| e.to_string())?;
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

/// The parts `--processes` started: the stress server and, in the router scenario, the
/// router. Dropping them stops the processes.
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

/// Starts the scenario's server (and router) as processes and aims `config` at them.
fn start_processes(
    scenario: Scenario,
    port: u16,
    config: &mut BacnetRunConfig,
) -> Result<OwnProcesses, String> {
    let loopback = std::net::Ipv4Addr::LOCALHOST;
    match scenario {
        Scenario::Bip | Scenario::Bbmd => {
            let server = start_own_process(port, scenario == Scenario::Bbmd)?;
            config.target = Some(SocketAddrV4::new(loopback, server.port));
            Ok(OwnProcesses {
                server,
                router: None,
                lab: None,
                limit_path: UdpPath::default(),
            })
        }
        Scenario::Router => {
            // --port is the router's network-1 port, as in-process.
            let server = start_own_process(0, false)?;
            let router = start_router_process(port)?;
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
fn start_netns(scenario: Scenario, config: &mut BacnetRunConfig) -> Result<OwnProcesses, String> {
    use std::net::Ipv4Addr;
    const PORT: u16 = 47808;
    let (client, first, check) = (
        Ipv4Addr::new(198, 18, 1, 1),
        Ipv4Addr::new(198, 18, 1, 2),
        Ipv4Addr::new(198, 18, 1, 3),
    );
    let (router_2, server_2) = (Ipv4Addr::new(198, 18, 2, 1), Ipv4Addr::new(198, 18, 2, 2));
    let program = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut lab = NetnsLab::new();
    let server_ns = lab.namespace("s").map_err(|e| e.to_string())?;
    let stress = |ns: &str, at: Ipv4Addr, bbmd: bool| {
        let mut command = NetnsLab::command_in(ns, &program);
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
            lab.link((End::Here, client), (End::In(&server_ns), first))
                .map_err(|e| e.to_string())?;
            let server = stress(&server_ns, first, scenario == Scenario::Bbmd)?;
            config.target = Some(SocketAddrV4::new(first, PORT));
            (server, None)
        }
        Scenario::Router => {
            let router_ns = lab.namespace("r").map_err(|e| e.to_string())?;
            // The limit crosses the clients' link, to the router's namespace.
            limit_path.server_namespace = Some(router_ns.clone());
            lab.link((End::Here, client), (End::In(&router_ns), first))
                .map_err(|e| e.to_string())?;
            lab.add_address_here(client, check)
                .map_err(|e| e.to_string())?;
            lab.link(
                (End::In(&router_ns), router_2),
                (End::In(&server_ns), server_2),
            )
            .map_err(|e| e.to_string())?;
            let server = stress(&server_ns, server_2, false)?;
            let mut command = NetnsLab::command_in(&router_ns, &program);
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

fn stress_server(args: &StressServerArgs) -> CommandResult {
    use std::io::BufRead;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let database = buildwire_bench::bacnet::profiles::stress_profile().build()?;
    let bind = SocketAddrV4::new(args.bind, args.port);
    let mut config = buildwire_bacnet::driver::BacnetServerConfig::new(bind, database);
    config.broadcast = None;
    config.announce = false;
    if args.bbmd {
        // A BBMD's BDT names its own address, so the port is fixed before it starts.
        let port = if args.port == 0 {
            std::net::UdpSocket::bind(bind)?.local_addr()?.port()
        } else {
            args.port
        };
        config.bind = SocketAddrV4::new(args.bind, port);
        config.role = buildwire_bench::bacnet::bbmd_role(config.bind);
    }
    let server = runtime.block_on(buildwire_bacnet::driver::BacnetServer::start(config))?;
    println!("ready {}", server.local_addr().port());
    // Answer `count` until stdin closes (the benchmark ended or died).
    for line in std::io::stdin().lock().lines() {
        if line?.trim() == "count" {
            println!("executed {}", server.stats().0.requests);
        }
    }
    runtime.block_on(server.shutdown());
    Ok(())
}

fn router_process(args: &RouterProcessArgs) -> CommandResult {
    use std::io::BufRead;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let (router, at) = match (args.network_1, args.network_2) {
        (Some(one), Some(two)) => {
            use buildwire_bacnet::driver::BipConfig;
            runtime.block_on(buildwire_bench::bacnet::start_router_on(
                BipConfig {
                    bind: SocketAddrV4::new(one, args.port),
                    broadcast: Some(broadcast_24(one)),
                },
                BipConfig {
                    bind: SocketAddrV4::new(two, args.port),
                    broadcast: Some(broadcast_24(two)),
                },
            ))?
        }
        _ => runtime.block_on(buildwire_bench::bacnet::start_router(args.port))?,
    };
    println!("ready {}", at.port());
    // The router executes no requests of its own; `count` is answered for the protocol.
    for line in std::io::stdin().lock().lines() {
        if line?.trim() == "count" {
            println!("executed 0");
        }
    }
    runtime.block_on(router.shutdown());
    Ok(())
}

fn compare(args: &CompareArgs) -> CommandResult {
    let peers_dir = super::bench::peers_dir(args.peers.as_ref());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let progress = ProgressLine::new(args.run.json);
    let machine = MachineInfo::detect();
    let mut results: Vec<(String, Result<BacnetOutcome, String>)> = Vec::new();
    for target in &args.targets {
        progress.set(format!("{target}: starting"));
        let mut config = run_config(Scenario::Bip, &args.run, args.run.pools);
        let outcome = match target.as_str() {
            // Ours with the limit, measured right after it with the same concurrency.
            "buildwire" => run_once(
                &runtime,
                &config,
                args.run.limit_seconds,
                &UdpPath::default(),
                &progress,
                None,
            )
            .map_err(|e| e.to_string()),
            name => {
                let process = if name == "buildwire-process" {
                    start_own_process(0, false)
                } else if let Some(kind) = peer::PEERS.iter().find(|p| p.name == name) {
                    free_port().and_then(|port| {
                        let p = StressProcess::start_peer(*kind, &peers_dir, port)?;
                        std::thread::sleep(peer::SETTLE);
                        Ok(p)
                    })
                } else {
                    Err(format!(
                        "unknown target `{name}`: buildwire, buildwire-process, rusty-bacnet, \
                         bacpypes3 or bac-py"
                    ))
                };
                process.and_then(|process| {
                    config.target = Some(SocketAddrV4::new(
                        std::net::Ipv4Addr::LOCALHOST,
                        process.port,
                    ));
                    let probe = || process.executed();
                    let mut outcome = run_once(
                        &runtime,
                        &config,
                        0.0,
                        &UdpPath::default(),
                        &progress,
                        Some(&probe),
                    )
                    .map_err(|e| e.to_string())?;
                    outcome.server_resident_mib = process.resident_mib();
                    Ok(outcome)
                })
            }
        };
        results.push((target.clone(), outcome));
    }
    // The limit once, with the concurrency and sizes of our run.
    let limit = results.iter().find_map(|(t, r)| match r {
        Ok(o) if t == "buildwire" => o.limit.clone(),
        _ => None,
    });
    progress.finish();
    let table = compare_table(&results, limit.as_ref(), &machine);
    let report = json!({
        "benchmark": "bacnet compare",
        "machine": machine,
        "limit": limit,
        "results": results.iter().map(|(target, r)| match r {
            Ok(outcome) => json!({"target": target, "outcome": outcome}),
            Err(error) => json!({"target": target, "error": error}),
        }).collect::<Vec<_>>(),
    });
    super::bench::print_table_and_report(&table, &report, args.run.json)
}

fn free_port() -> Result<u16, String> {
    std::net::UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

fn compare_table(
    results: &[(String, Result<BacnetOutcome, String>)],
    limit: Option<&buildwire_bench::bacnet::LimitReport>,
    machine: &MachineInfo,
) -> String {
    let ours = results.iter().find_map(|(t, r)| match r {
        Ok(o) if t == "buildwire" => Some(o),
        _ => None,
    });
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "target",
        "answered/s",
        "executed/s",
        "executed/answered",
        "p50 ms",
        "p99 ms",
        "errors",
        "server RSS MiB",
        "ours/theirs answered",
        "ours/theirs executed",
        "theirs/ours p50",
    ]);
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.1}x", a / b),
        _ => "-".to_owned(),
    };
    for (target, result) in results {
        match result {
            Ok(o) => {
                let s = &o.sustained;
                let executed_fraction = s
                    .executed
                    .filter(|_| s.confirmed_answered > 0)
                    .map(|e| e as f64 / s.confirmed_answered as f64);
                let ours_s = ours.map(|o| &o.sustained);
                table.add_row(vec![
                    Cell::new(target),
                    right(format!("{:.0}", s.throughput_rps)),
                    right(opt(s.executed_rps, 0)),
                    right(
                        executed_fraction
                            .map_or_else(|| "-".into(), |f| format!("{:.1} %", f * 100.0)),
                    ),
                    right(format!("{:.3}", s.latency_ms.p50)),
                    right(format!("{:.3}", s.latency_ms.p99)),
                    right(format!(
                        "{} ({:.2} %)",
                        s.total_errors,
                        s.error_rate * 100.0
                    )),
                    right(opt(o.server_resident_mib.or(o.resident_mib), 1)),
                    right(ratio(
                        ours_s.map(|o| o.throughput_rps),
                        Some(s.throughput_rps),
                    )),
                    right(ratio(ours_s.and_then(|o| o.executed_rps), s.executed_rps)),
                    right(ratio(
                        Some(s.latency_ms.p50),
                        ours_s.map(|o| o.latency_ms.p50),
                    )),
                ]);
            }
            Err(error) => {
                table.add_row(failed_row(target, error, 11));
            }
        }
    }
    if let Some(l) = limit {
        let mut row = vec![
            Cell::new(format!(
                "limit (udp {}/{} B x{})",
                l.request_size, l.response_size, l.in_flight
            )),
            right(format!("{:.0}", l.throughput_rps)),
            Cell::new("-"),
            Cell::new("-"),
            right(format!("{:.3}", l.latency_ms.p50)),
            right(format!("{:.3}", l.latency_ms.p99)),
        ];
        row.extend((0..5).map(|_| Cell::new("-")));
        table.add_row(row);
    }
    format!(
        "bacnet compare (BACnet/IP mix, one target at a time, same machine)\nmachine: {}\n{table}\n",
        machine.one_line()
    )
}

/// A table line for a target that could not be measured: its name, the first line of the
/// error, and `-` up to `columns`.
pub(super) fn failed_row(target: &str, error: &str, columns: usize) -> Vec<Cell> {
    let mut row = vec![
        Cell::new(target),
        Cell::new(error.lines().next().unwrap_or_default()),
    ];
    row.extend((2..columns).map(|_| Cell::new("-")));
    row
}

fn run_config(scenario: Scenario, args: &BacnetBenchArgs, pools: usize) -> BacnetRunConfig {
    let published = Mix::published(scenario, pools);
    BacnetRunConfig {
        scenario,
        mix: Mix {
            pools,
            readers: args.readers,
            writers: args.writers,
            rpm: args.rpm,
            wpm: args.wpm,
            objlist: args.objlist,
            cov: args.cov.unwrap_or(published.cov),
            fdt: args.fdt_workers.unwrap_or(published.fdt),
            bdt: args.bdt_workers.unwrap_or(published.bdt),
        },
        warmup: args.warmup,
        sustain: args.sustain,
        error_backoff: args.error_backoff,
        port: args.port,
        target: args.target,
        via_router: None,
        clients: None,
    }
}

/// The live line of a scenario's phases: `LABEL PHASE: S s, N UNIT, R/s`.
pub(super) fn phase_progress<'a>(
    progress: &'a ProgressLine,
    label: String,
    unit: &'static str,
) -> impl Fn(&str, f64, u64) + Sync + 'a {
    move |phase: &str, secs: f64, answered: u64| {
        let rate = if secs > 0.0 {
            answered as f64 / secs
        } else {
            0.0
        };
        progress.set(format!(
            "{label} {phase}: {secs:.0} s, {answered} {unit}, {rate:.0}/s"
        ));
    }
}

/// One scenario run with its limit.
fn run_once(
    runtime: &tokio::runtime::Runtime,
    config: &BacnetRunConfig,
    limit_seconds: f64,
    limit_path: &UdpPath,
    progress: &ProgressLine,
    executed_probe: Option<&(dyn Fn() -> Option<u64> + Sync)>,
) -> Result<BacnetOutcome, Box<dyn std::error::Error>> {
    let report = phase_progress(
        progress,
        format!(
            "bacnet {} ({} pools)",
            config.scenario.name(),
            config.mix.pools
        ),
        "answers",
    );
    let mut outcome = runtime.block_on(run_scenario(config, &report, executed_probe))?;
    if limit_seconds > 0.0 {
        let limit_progress = |phase: Phase, answered: u64, secs: f64| {
            let phase = match phase {
                Phase::Warmup => "warmup",
                Phase::Sustain => "sustain",
            };
            progress.set(format!(
                "udp limit {phase}: {secs:.0} s, {answered} replies"
            ));
        };
        measure_limit(&mut outcome, limit_seconds, limit_path, &limit_progress)?;
    } else {
        outcome.limit = None;
    }
    Ok(outcome)
}

/// What every scenario starts with: `--plot` checked, the runtime (2 threads), the
/// progress line (hidden with `--json`) and the machine's description.
pub(super) fn scenario_start(
    plot: Option<&PathBuf>,
    json: bool,
) -> Result<(tokio::runtime::Runtime, ProgressLine, MachineInfo), Box<dyn std::error::Error>> {
    if let Some(plot) = plot {
        let ext = plot
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        if !matches!(ext.as_deref(), Some("png" | "svg")) {
            return Err(format!(
                "--plot {}: the chart format comes from the file name; end it in .png or .svg",
                plot.display()
            )
            .into());
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    Ok((runtime, ProgressLine::new(json), MachineInfo::detect()))
}

fn run(scenario: Scenario, args: &BacnetBenchArgs) -> CommandResult {
    let (runtime, progress, machine) = scenario_start(args.plot.as_ref(), args.json)?;
    if args.max {
        return run_max(scenario, args, &runtime, &progress, &machine);
    }
    let mut config = run_config(scenario, args, args.pools);
    let own = if args.processes {
        if args.target.is_some() {
            return Err("--processes starts its own server; leave out --target".into());
        }
        Some(start_processes(scenario, args.port, &mut config)?)
    } else if args.netns {
        Some(start_netns(scenario, &mut config)?)
    } else {
        None
    };
    let probe = || own.as_ref().and_then(|o| o.server.executed());
    let profile = match &args.profile {
        Some(_) => Some(CpuProfile::start()?),
        None => None,
    };
    let limit_path = own
        .as_ref()
        .map(|o| o.limit_path.clone())
        .unwrap_or_default();
    let outcome = run_once(
        &runtime,
        &config,
        args.limit_seconds,
        &limit_path,
        &progress,
        own.as_ref()
            .map(|_| &probe as &(dyn Fn() -> Option<u64> + Sync)),
    );
    progress.finish();
    if let (Some(profile), Some(path)) = (profile, &args.profile) {
        let samples = profile.write_flame_graph(path)?;
        eprintln!(
            "CPU flame graph ({samples} samples) written to {}",
            path.display()
        );
    }
    let mut outcome = outcome?;
    if let Some(own) = &own {
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
    if let Some(path) = &args.plot {
        write_throughput_and_cdf(
            path,
            &format!("bacnet {}", scenario.name()),
            &[(
                "buildwire",
                outcome.throughput_timeline.as_slice(),
                &outcome.histogram,
            )],
        )?;
        eprintln!("throughput and latency CDF written to {}", path.display());
    }
    let table = render(&outcome, &machine);
    let mut report = serde_json::to_value(&outcome)?;
    if let Some(object) = report.as_object_mut() {
        object.insert("machine".into(), serde_json::to_value(&machine)?);
        object.insert(
            "benchmark".into(),
            json!(format!("bacnet {}", scenario.name())),
        );
    }
    super::bench::print_table_and_report(&table, &report, args.json)?;
    verdict(&outcome)
}

/// Exit status: an error above the published threshold.
fn verdict(outcome: &BacnetOutcome) -> CommandResult {
    threshold_verdict(
        &outcome.mode,
        outcome.passed,
        outcome.error_threshold,
        &outcome.sustained,
        "lower the load (--pools) or look at the server",
    )
}

/// Exit status of a scenario: an error rate above `threshold` fails, with the first error
/// and `hint` in the message.
pub(super) fn threshold_verdict(
    mode: &str,
    passed: bool,
    threshold: f64,
    sustained: &buildwire_bench::bacnet::PhaseReport,
    hint: &str,
) -> CommandResult {
    if passed {
        return Ok(());
    }
    let first = sustained
        .operations
        .iter()
        .find_map(|(op, r)| r.first_error.as_ref().map(|e| format!("{op}: {e}")))
        .unwrap_or_else(|| "nothing was answered".to_owned());
    Err(format!(
        "error rate {:.3} % is above the {} % threshold of the {mode} scenario (first error: \
         {first}); {hint}",
        sustained.error_rate * 100.0,
        threshold * 100.0,
    )
    .into())
}

fn run_max(
    scenario: Scenario,
    args: &BacnetBenchArgs,
    runtime: &tokio::runtime::Runtime,
    progress: &ProgressLine,
    machine: &MachineInfo,
) -> CommandResult {
    let mut curve: Vec<BacnetOutcome> = Vec::new();
    let mut pools = args.pools.max(1);
    loop {
        let config = run_config(scenario, args, pools);
        let outcome = run_once(runtime, &config, 0.0, &UdpPath::default(), progress, None)?;
        let rising = curve.last().is_none_or(|prev| {
            outcome.sustained.throughput_rps > prev.sustained.throughput_rps * 1.05
        });
        curve.push(outcome);
        if !rising || pools >= 256 {
            break;
        }
        pools *= 2;
    }
    progress.finish();
    let best = curve.iter().max_by(|a, b| {
        a.sustained
            .throughput_rps
            .total_cmp(&b.sustained.throughput_rps)
    });
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "pools",
        "workers",
        "req/s",
        "executed/s",
        "p50 ms",
        "p99 ms",
        "errors",
    ]);
    for o in &curve {
        let s = &o.sustained;
        table.add_row(vec![
            right(o.config.mix.pools.to_string()),
            right(o.concurrency.to_string()),
            right(format!("{:.0}", s.throughput_rps)),
            right(opt(s.executed_rps, 0)),
            right(format!("{:.3}", s.latency_ms.p50)),
            right(format!("{:.3}", s.latency_ms.p99)),
            right(s.total_errors.to_string()),
        ]);
    }
    let text = format!(
        "bacnet {} --max: throughput by concurrency (stops when it rises less than 5 %)\n\
         machine: {}\n{table}\nbest: {}\n",
        scenario.name(),
        machine.one_line(),
        best.map_or_else(
            || "-".to_owned(),
            |b| format!(
                "{:.0} req/s with {} pools ({} workers)",
                b.sustained.throughput_rps, b.config.mix.pools, b.concurrency
            )
        )
    );
    let report = json!({
        "benchmark": format!("bacnet {} --max", scenario.name()),
        "machine": machine,
        "curve": curve,
    });
    super::bench::print_table_and_report(&text, &report, args.json)
}

pub(super) fn right(text: String) -> Cell {
    Cell::new(text).set_alignment(CellAlignment::Right)
}

pub(super) fn opt(value: Option<f64>, digits: usize) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.digits$}"))
}

/// A line of the operations table: counts, rate and latency.
pub(super) fn latency_row(
    name: &str,
    answered: u64,
    errors: u64,
    rps: f64,
    l: &buildwire_bench::bacnet::Latency,
) -> Vec<Cell> {
    vec![
        Cell::new(name),
        right(answered.to_string()),
        right(errors.to_string()),
        right(format!("{rps:.0}")),
        right(format!("{:.3}", l.mean)),
        right(format!("{:.3}", l.p50)),
        right(format!("{:.3}", l.p95)),
        right(format!("{:.3}", l.p99)),
        right(format!("{:.3}", l.max)),
    ]
}

/// The operations of a phase and their total, one line each.
pub(super) fn phase_table(s: &buildwire_bench::bacnet::PhaseReport, rate: &str) -> Table {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "operation",
        "answered",
        "errors",
        rate,
        "mean ms",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "max ms",
    ]);
    for (name, op) in &s.operations {
        table.add_row(latency_row(
            name,
            op.answered,
            op.errors,
            op.throughput_rps,
            &op.latency_ms,
        ));
    }
    table.add_row(latency_row(
        "all",
        s.answered,
        s.total_errors,
        s.throughput_rps,
        &s.latency_ms,
    ));
    table
}

/// `N s measured after M s warm-up` and the machine, under a scenario's title.
pub(super) fn measured_line(
    sustained: &buildwire_bench::bacnet::PhaseReport,
    warmup: &buildwire_bench::bacnet::PhaseReport,
    machine: &MachineInfo,
) -> String {
    format!(
        "{:.1} s measured after {:.1} s warm-up\nmachine: {}",
        sustained.duration_s,
        warmup.duration_s,
        machine.one_line()
    )
}

/// The error rate against the threshold, and the verdict.
pub(super) fn error_line(
    sustained: &buildwire_bench::bacnet::PhaseReport,
    threshold: f64,
    passed: bool,
) -> String {
    format!(
        "error rate {:.3} % (threshold {} %): {}",
        sustained.error_rate * 100.0,
        threshold * 100.0,
        if passed { "passed" } else { "FAILED" }
    )
}

fn render(outcome: &BacnetOutcome, machine: &MachineInfo) -> String {
    let s = &outcome.sustained;
    let mut table = phase_table(s, "req/s");
    if let Some(limit) = &outcome.limit {
        table.add_row(latency_row(
            &format!(
                "limit (udp {}/{} B x{})",
                limit.request_size, limit.response_size, limit.in_flight
            ),
            0,
            0,
            limit.throughput_rps,
            &limit.latency_ms,
        ));
    }
    let executed = match (s.executed, s.executed_rps) {
        (Some(n), Some(rate)) => format!(
            "executed by the server: {n} ({rate:.0}/s) for {} confirmed requests answered; \
             answers replayed from its response cache: {}",
            s.confirmed_answered,
            s.replayed_from_cache
                .map_or_else(|| "unknown".to_owned(), |r| r.to_string())
        ),
        _ => "executed by the server: unknown (a foreign target)".to_owned(),
    };
    let limit = outcome.limit.as_ref().map_or_else(String::new, |l| {
        format!(
            "\nlimit ({}): {:.0} req/s; buildwire answered {:.1} % of it",
            l.path,
            l.throughput_rps,
            l.fraction_of_limit * 100.0
        )
    });
    format!(
        "bacnet {} ({} workers, {} pools, server {}): {}\n{table}\n{executed}{limit}\n{}\
         \nresident memory: this process {}, the server's own process {}{}\n",
        outcome.mode,
        outcome.concurrency,
        outcome.config.mix.pools,
        outcome.server,
        measured_line(s, &outcome.warmup, machine),
        error_line(s, outcome.error_threshold, outcome.passed),
        outcome
            .resident_mib
            .map_or_else(|| "-".to_owned(), |m| format!("{m:.1} MiB")),
        outcome
            .server_resident_mib
            .map_or_else(|| "-".to_owned(), |m| format!("{m:.1} MiB")),
        outcome
            .router_resident_mib
            .map_or_else(String::new, |m| format!(
                ", the router's own process {m:.1} MiB"
            )),
    )
}
