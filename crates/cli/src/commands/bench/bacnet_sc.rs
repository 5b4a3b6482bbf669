//! `buildwire bench bacnet sc`: bac-py's BACnet/SC scenario (a hub, two echo nodes, unicast
//! and broadcast workers, payloads of 25 to 1,400 octets) over TLS 1.3 or plaintext, every
//! echo checked byte for byte; with `--peer bac-py`, bac-py's hub and echo nodes under the
//! same load in the same run.

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::time::Duration;

use buildwire_bacnet::link::sc::Vmac;
use buildwire_bench::bacnet::sc::{ECHO_VMACS, PAYLOAD_MIX, ScRunConfig, ScTarget};
use buildwire_bench::bacnet::sc_run::{
    self, ScCertificates, ScPlacement, ScProcessConfig, comparison, max_table, place, ratio,
    run_once, run_peer, sc_table, serve_sc_process, verdict,
};
use buildwire_bench::report::{CpuProfile, write_throughput_and_cdf};
use clap::{Args, ValueEnum};
use serde_json::json;

use crate::commands::bench::scenario::scenario_start;
use crate::commands::common::duration::parse_duration;
use crate::commands::common::output::print_table_and_report;
use crate::commands::common::program::peers_dir;
use crate::commands::common::result::CommandResult;
use crate::commands::common::signals::ignore_sigpipe;

pub const AFTER_HELP: &str = "Messages are BVLC-SC Encapsulated-NPDUs (a proprietary \
    network-layer message holding a 6-octet id and filler) from client nodes through the hub \
    to the echo nodes' VMACs, or to the broadcast VMAC (then both echo nodes answer). A worker \
    sends its next message when the last one's echoes came back and matched what was sent, \
    octet for octet; anything else is an error. Certificates (EC P-256, one CA) are made in a \
    temporary folder unless --certs names one. The exit status is 1 when the error rate is \
    above 0.5 %.\n\nExamples:\n  buildwire bench bacnet sc\n  \
    buildwire bench bacnet sc --no-tls --warmup 2 --sustain 8\n  \
    buildwire bench bacnet sc --processes --json > sc.json\n  \
    buildwire bench bacnet sc --peer bac-py --warmup 2 --sustain 8 \\\n      # needs scripts/peers.sh py313\n  \
    buildwire bench bacnet sc --target-hub wss://10.0.0.5:4443 --certs DIR";

/// Whose hub and echo nodes run beside ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScPeer {
    /// bac-py's hub and two bac-py echo nodes, each its own process.
    BacPy,
    /// bac-py's hub with buildwire's echo nodes (in their own processes): the hub alone.
    BacPyHub,
}

impl From<ScPeer> for sc_run::ScPeer {
    fn from(peer: ScPeer) -> Self {
        match peer {
            ScPeer::BacPy => Self::BacPy,
            ScPeer::BacPyHub => Self::BacPyHub,
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
    #[arg(long, default_value = "5s", value_name = "DURATION", value_parser = parse_duration)]
    warmup: Duration,
    /// Seconds measured.
    #[arg(long, default_value = "30s", value_name = "DURATION", value_parser = parse_duration)]
    sustain: Duration,
    /// TCP port of the hub (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Seconds a worker pauses after an error.
    #[arg(long, default_value = "50ms", value_name = "DURATION", value_parser = parse_duration)]
    error_backoff: Duration,
    /// Seconds a worker waits for its echoes before counting an error.
    #[arg(long, default_value = "5s", value_name = "DURATION", value_parser = parse_duration)]
    echo_timeout: Duration,
    /// Seconds a broadcast worker pauses after each round (bac-py's own benchmark sends a
    /// broadcast every 0.5 s); 0 sends back to back.
    #[arg(long, default_value = "0", value_name = "DURATION", value_parser = parse_duration)]
    broadcast_interval: Duration,
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

pub fn run(args: &ScBenchArgs) -> CommandResult {
    ignore_sigpipe();
    let (runtime, progress, machine) = scenario_start(args.plot.as_ref(), args.json)?;
    let status = |line| progress.set(line);
    let peers_dir = peers_dir(args.peers.as_ref());
    let program = std::env::current_exe()?;
    let certs = ScCertificates::prepare(args.certs.as_deref(), !args.no_tls)?;
    let mut config = ScRunConfig {
        unicast: args.unicast,
        broadcast: args.broadcast,
        client_nodes: args.client_nodes,
        tls: certs.dir().is_some(),
        warmup: args.warmup.as_secs_f64(),
        sustain: args.sustain.as_secs_f64(),
        error_backoff: args.error_backoff.as_secs_f64(),
        echo_timeout: args.echo_timeout.as_secs_f64(),
        broadcast_interval: args.broadcast_interval.as_secs_f64(),
        port: args.port,
        payload_mix: PAYLOAD_MIX.to_vec(),
        target: args.target_hub.as_ref().map(|hub| ScTarget {
            hub: hub.clone(),
            echo_nodes: ECHO_VMACS,
            echo_nodes_running: false,
        }),
        certs: certs.dir().map(PathBuf::from),
    };
    let placement = if args.netns {
        ScPlacement::Netns
    } else if args.processes || args.peer.is_some() {
        ScPlacement::Processes
    } else {
        ScPlacement::InProcess
    };
    let ours = place(&program, placement, &peers_dir, certs.dir(), args.port)?.map(
        |(processes, target)| {
            config.target = Some(target);
            processes
        },
    );
    if args.max {
        let curve = sc_run::run_max(&runtime, &config, ours.as_ref(), &status)?;
        progress.finish();
        let report = json!({
            "benchmark": "bacnet sc --max",
            "machine": machine,
            "curve": curve,
        });
        return print_table_and_report(&max_table(&curve, &machine), &report, args.json);
    }
    let profile = match &args.profile {
        Some(_) => Some(CpuProfile::start()?),
        None => None,
    };
    let outcome = run_once(&runtime, &config, ours.as_ref(), "buildwire", &status);
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
            return Err(error.into());
        }
    };
    let theirs = args.peer.map(|peer| {
        let peer = sc_run::ScPeer::from(peer);
        let result = run_peer(&runtime, &config, peer, &program, &peers_dir, &status)
            .map_err(|e| e.to_string());
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
    let mut text = sc_table(&outcome, &machine);
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
    print_table_and_report(&text, &report, args.json)?;
    Ok(verdict(&outcome)?)
}

/// `sc-process`: the hub or an echo node until stdin closes.
pub fn process(args: &ScProcessArgs) -> CommandResult {
    ignore_sigpipe();
    Ok(serve_sc_process(&ScProcessConfig {
        role: match args.role {
            ScRole::Hub => sc_run::ScRole::Hub,
            ScRole::Echo => sc_run::ScRole::Echo,
        },
        port: args.port,
        bind: args.bind,
        hub: args.hub.clone(),
        vmac: args.vmac,
        name: args.name.clone(),
        certs: args.certs.clone(),
    })?)
}
