//! `buildwire bench bacnet bip|router|bbmd`: bac-py's published BACnet scenarios against
//! buildwire's 40-object stress server (or any device at `--target`), with every answer
//! checked, executed requests counted on the server and the raw UDP limit in the same run.

use std::net::SocketAddrV4;
use std::path::PathBuf;
use std::time::Duration;

use buildwire_bench::bacnet::compare::{CompareConfig, compare_table, run_compare};
use buildwire_bench::bacnet::orchestrate::{
    PlacedScenario, RouterProcessConfig, ScenarioRunConfig, ServerPlacement, StressProcessConfig,
    run_max, serve_router_process, serve_stress_process, verdict,
};
use buildwire_bench::bacnet::render::{max_table, scenario_table};
use buildwire_bench::bacnet::{BacnetRunConfig, Mix, Scenario};
use buildwire_bench::report::{CpuProfile, write_throughput_and_cdf};
use clap::{Args, Subcommand};
use serde_json::json;

use crate::commands::bench::scenario::scenario_start;
use crate::commands::common::duration::parse_duration;
use crate::commands::common::output::print_table_and_report;
use crate::commands::common::program::peers_dir;
use crate::commands::common::result::CommandResult;
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
    #[command(after_help = crate::commands::bench::bacnet_sc::AFTER_HELP)]
    Sc(crate::commands::bench::bacnet_sc::ScBenchArgs),
    /// (internal) the SC scenario's hub or an echo node in its own process: prints
    /// `ready PORT` (0 for an echo node), answers `count` with `executed N` (messages the
    /// hub relayed, echoes the node sent), runs until stdin closes.
    #[command(hide = true)]
    ScProcess(crate::commands::bench::bacnet_sc::ScProcessArgs),
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
    buildwire bench bacnet bip --target 127.0.0.1:47808 \\\n      # any device with the stress objects";

#[derive(Debug, Args)]
pub struct BacnetBenchArgs {
    /// Seconds of warm-up (not measured).
    #[arg(long, default_value = "5s", value_name = "DURATION", value_parser = parse_duration)]
    warmup: Duration,
    /// Seconds measured.
    #[arg(long, default_value = "30s", value_name = "DURATION", value_parser = parse_duration)]
    sustain: Duration,
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
    #[arg(long, default_value = "50ms", value_name = "DURATION", value_parser = parse_duration)]
    error_backoff: Duration,
    /// Aim at this device (HOST:PORT) instead of the in-process server; it must serve the
    /// stress objects (device 400). Executed requests are then not known.
    #[arg(long, value_name = "HOST:PORT")]
    target: Option<SocketAddrV4>,
    /// Seconds of the raw UDP limit run (0 skips it).
    #[arg(long, default_value = "5s", value_name = "DURATION", value_parser = parse_duration)]
    limit_seconds: Duration,
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
        BacnetBench::Sc(args) => crate::commands::bench::bacnet_sc::run(&args),
        BacnetBench::ScProcess(args) => crate::commands::bench::bacnet_sc::process(&args),
    }
}

/// The run the options describe, with `pools` pools.
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
        warmup: args.warmup.as_secs_f64(),
        sustain: args.sustain.as_secs_f64(),
        error_backoff: args.error_backoff.as_secs_f64(),
        port: args.port,
        target: args.target,
        via_router: None,
        clients: None,
    }
}

fn stress_server(args: &StressServerArgs) -> CommandResult {
    Ok(serve_stress_process(StressProcessConfig {
        bind: args.bind,
        port: args.port,
        bbmd: args.bbmd,
    })?)
}

fn router_process(args: &RouterProcessArgs) -> CommandResult {
    Ok(serve_router_process(RouterProcessConfig {
        port: args.port,
        networks: args.network_1.zip(args.network_2),
    })?)
}

fn compare(args: &CompareArgs) -> CommandResult {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let progress = ProgressLine::new(args.run.json);
    let machine = buildwire_bench::report::MachineInfo::detect();
    let config = CompareConfig {
        run: run_config(Scenario::Bip, &args.run, args.run.pools),
        limit_seconds: args.run.limit_seconds.as_secs_f64(),
        targets: args.targets.clone(),
        peers_dir: peers_dir(args.peers.as_ref()),
        program: std::env::current_exe()?,
    };
    let compared = run_compare(&runtime, &config, &|line| progress.set(line));
    progress.finish();
    let table = compare_table(&compared, &machine);
    let report = json!({
        "benchmark": "bacnet compare",
        "machine": machine,
        "limit": compared.limit,
        "results": compared.results,
    });
    print_table_and_report(&table, &report, args.run.json)
}

fn run(scenario: Scenario, args: &BacnetBenchArgs) -> CommandResult {
    let (runtime, progress, machine) = scenario_start(args.plot.as_ref(), args.json)?;
    let status = |line| progress.set(line);
    if args.max {
        let curve = run_max(&runtime, &run_config(scenario, args, args.pools), &status)?;
        progress.finish();
        let report = json!({
            "benchmark": format!("bacnet {} --max", scenario.name()),
            "machine": machine,
            "curve": curve,
        });
        return print_table_and_report(&max_table(scenario, &curve, &machine), &report, args.json);
    }
    let placement = if args.processes {
        ServerPlacement::Processes
    } else if args.netns {
        ServerPlacement::Netns
    } else {
        ServerPlacement::InProcess
    };
    let placed = PlacedScenario::start(&ScenarioRunConfig {
        run: run_config(scenario, args, args.pools),
        limit_seconds: args.limit_seconds.as_secs_f64(),
        placement,
        program: std::env::current_exe()?,
    })?;
    let profile = match &args.profile {
        Some(_) => Some(CpuProfile::start()?),
        None => None,
    };
    let outcome = placed.run(&runtime, &status);
    progress.finish();
    if let (Some(profile), Some(path)) = (profile, &args.profile) {
        let samples = profile.write_flame_graph(path)?;
        eprintln!(
            "CPU flame graph ({samples} samples) written to {}",
            path.display()
        );
    }
    let outcome = outcome?;
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
    let table = scenario_table(&outcome, &machine);
    let mut report = serde_json::to_value(&outcome)?;
    if let Some(object) = report.as_object_mut() {
        object.insert("machine".into(), serde_json::to_value(&machine)?);
        object.insert(
            "benchmark".into(),
            json!(format!("bacnet {}", scenario.name())),
        );
    }
    print_table_and_report(&table, &report, args.json)?;
    Ok(verdict(&outcome)?)
}
