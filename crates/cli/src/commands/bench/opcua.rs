//! `buildwire bench opcua throughput`: the open62541 throughput benchmark against any OPC UA
//! server (or ours, started in-process with `--with-server`). Prints the original's rate line
//! every 2 s, then calls/s and latency; `--json` adds the final report as JSON.

use std::time::Duration;

use buildwire_bench::opcua::{ThroughputConfig, ThroughputReport, run_throughput};
use buildwire_opcua::NodeId;
use buildwire_opcua::driver::{OpcuaServer, OpcuaServerConfig};
use buildwire_opcua::server::{ServerConfig, bench_methods};
use clap::{Args, Subcommand};
use serde_json::json;

use crate::commands::bench::opcua_soak::{ItemSoakArgs, SoakArgs};
use crate::commands::common::duration::parse_duration;
use crate::commands::common::result::CommandResult;

#[derive(Debug, Subcommand)]
pub enum OpcuaBench {
    /// setSize once, then getData one after another (or N in flight): payload rate, calls/s,
    /// latency. The first response is not counted.
    #[command(after_help = "Examples:\n  \
        buildwire bench opcua throughput --with-server --size-kib 1024 --seconds 10\n  \
        buildwire bench opcua throughput --endpoint opc.tcp://127.0.0.1:4840 \\\n      --size-kib 1 --json")]
    Throughput(ThroughputArgs),
    /// Connect / CreateSession / ActivateSession / Read / CloseSession / CloseSecureChannel
    /// cycles, sampling the resident memory (VmRSS) of client and server every N cycles:
    /// prints the memory curve, asserts nothing.
    #[command(after_help = "Examples:\n  \
        buildwire bench opcua soak --cycles 5000 --spawn-server\n  \
        buildwire bench opcua soak --cycles 5000 --json\n  \
        buildwire bench opcua soak --target opc.tcp://127.0.0.1:4840 --server-pid \\\n      1234\n\n\
        By default our server runs in this process, so one RSS covers client and server; \
        --spawn-server runs it as a child process (`buildwire opcua serve`) so the two \
        curves are apart.")]
    Soak(SoakArgs),
    /// One session with N monitored items sampled every --sampling on points that all
    /// change at that rate (`buildwire opcua serve --simulate N` as a child process): counts
    /// and checks every data change, samples client and server RSS every second; asserts
    /// nothing.
    #[command(after_help = "Examples:\n  \
        buildwire bench opcua subscriptions --items 10000 --sampling 100ms \\\n      --duration 60\n  \
        buildwire bench opcua subscriptions --items 1000 --duration 10 --json")]
    Subscriptions(ItemSoakArgs),
}

#[derive(Debug, Args)]
pub struct ThroughputArgs {
    /// The server (`opc.tcp://HOST:PORT`); not needed with --with-server.
    #[arg(long, required_unless_present = "with_server")]
    endpoint: Option<String>,
    /// Payload per getData call, in KiB (1, 1024 and 102400 are the usual sizes).
    #[arg(long)]
    size_kib: u32,
    /// Seconds of getData calls after the first response.
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = parse_duration)]
    seconds: Duration,
    /// The Throughput object (its methods are setSize ns=1;i=6000 and getData ns=1;i=6001).
    #[arg(long, default_value = "ns=1;i=5000")]
    object: String,
    /// getData requests kept outstanding.
    #[arg(long, default_value_t = 1)]
    in_flight: usize,
    /// Largest chunk the client offers to receive (Hello ReceiveBufferSize, at least 8192);
    /// the server sends chunks of at most this and of at most its own send buffer size.
    /// Default: the client's 65535.
    #[arg(long, value_name = "BYTES")]
    receive_buffer: Option<u32>,
    /// Start our server in this process on 127.0.0.1:0 and measure against it.
    #[arg(long)]
    with_server: bool,
    /// Print the final report as JSON on the last line.
    #[arg(long)]
    json: bool,
}

pub fn execute(cmd: OpcuaBench) -> CommandResult {
    match cmd {
        OpcuaBench::Throughput(args) => throughput(args),
        OpcuaBench::Soak(args) => crate::commands::bench::opcua_soak::soak(args),
        OpcuaBench::Subscriptions(args) => crate::commands::bench::opcua_soak::items(args),
    }
}

fn print_report(report: &ThroughputReport) {
    println!("{}", report.rate_line());
    println!("{}", report.calls_line());
}

fn throughput(args: ThroughputArgs) -> CommandResult {
    if args.seconds.is_zero() {
        return Err("--seconds must be longer than 0".into());
    }
    let object: NodeId = args
        .object
        .parse()
        .map_err(|e| format!("--object `{}`: {e}", args.object))?;
    // One thread: the client loop and (with --with-server) the server share a core, which is
    // what the latency-bound small-payload loop wants on small machines.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let server = if args.with_server {
            let config = ServerConfig {
                endpoint_url: String::new(),
                ..ServerConfig::default()
            };
            Some(
                OpcuaServer::start(
                    OpcuaServerConfig::new("127.0.0.1:0", config)
                        .with_setup(bench_methods::install),
                )
                .await?,
            )
        } else {
            None
        };
        let endpoint = match (&server, &args.endpoint) {
            (Some(server), _) => server.endpoint_url().to_owned(),
            (None, Some(endpoint)) => endpoint.clone(),
            (None, None) => return Err("--endpoint or --with-server is required".into()),
        };
        let mut config = ThroughputConfig::new(&endpoint, args.size_kib, args.seconds);
        config.object = object;
        config.in_flight = args.in_flight.max(1);
        config.receive_buffer_size = args.receive_buffer;
        let report = run_throughput(&config, print_report).await?;
        print_report(&report);
        if args.json {
            println!(
                "{}",
                json!({"benchmark": "opcua throughput", "endpoint": endpoint, "report": report})
            );
        }
        if let Some(server) = server {
            server.shutdown().await;
        }
        Ok::<(), Box<dyn std::error::Error>>(())
    })
}
