//! `buildwire bench haystack http` and `... ws`: the published Haystack HTTP load (50
//! connections) and WebSocket load (20 connections), each connection logged in once with
//! SCRAM and looping about / ops / read site / read point / nav, against buildwire's server,
//! haystack-py's server and the `limit` (recorded answers through the same HTTP or WebSocket
//! stack), in one run on the same data.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use buildwire_bench::haystack::compare::{
    Api, CompareConfig, Status, buildings_mix, results_table, run_compare,
};
use buildwire_bench::report::MachineInfo;
use buildwire_haystack::codec::Format;
use clap::Args;

use crate::commands::common::duration::parse_duration;
use crate::commands::common::output::print_table_and_report;
use crate::commands::common::program::{peers_dir, self_program};
use crate::commands::common::result::CommandResult;
use crate::progress::ProgressLine;

#[derive(Debug, Args)]
pub struct HaystackHttpArgs {
    /// Folder holding the buildings' files.
    #[arg(long, default_value = "../shared/data/haystack")]
    data: PathBuf,
    /// Buildings to load (the published run loads both; `alpha` alone gives the 1,846-row
    /// `read point` of the published figures).
    #[arg(long, value_delimiter = ',', default_value = "alpha,bravo")]
    buildings: Vec<String>,
    /// Concurrent connections, each logged in once with SCRAM (default: 50 for HTTP, 20 for
    /// WebSocket, as published).
    #[arg(long)]
    connections: Option<usize>,
    /// Seconds of warm-up (not measured).
    #[arg(long, default_value = "3s", value_name = "DURATION", value_parser = parse_duration)]
    warmup: Duration,
    /// Seconds measured.
    #[arg(long, default_value = "15s", value_name = "DURATION", value_parser = parse_duration)]
    seconds: Duration,
    /// Response format: json (what haystack-py's clients use) or zinc.
    #[arg(long, default_value = "json")]
    format: Format,
    /// Targets to run, in this order (default: all): buildwire, haystack-py, limit.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "buildwire,haystack-py,limit"
    )]
    targets: Vec<String>,
    /// Storage of the buildwire server: memory, redis://HOST:PORT or
    /// postgres://USER@HOST:PORT/DB. Repeat (or separate with commas) to run the buildwire
    /// target once per backend in the same run.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "memory",
        value_name = "URL"
    )]
    backend: Vec<String>,
    /// Where scripts/peers.sh installed the peers (default: $BUILDWIRE_PEERS or ./.peers).
    #[arg(long)]
    peers: Option<PathBuf>,
    /// Print the report as JSON on stdout (the table goes to stderr).
    #[arg(long)]
    json: bool,
}

pub const AFTER_HELP: &str = "Each target runs alone, one after the other, on the same data; \
    the limit target serves the bytes recorded from buildwire's (or else haystack-py's) answers \
    through hyper, with no Haystack work. Every reply is checked before it is counted.\n\n\
    Examples:\n  buildwire bench haystack http\n  \
    buildwire bench haystack http --seconds 5 --targets buildwire,limit --json\n  \
    buildwire bench haystack http --targets buildwire --backend \\\n      memory,redis://127.0.0.1:6379,\\\n      \
    postgres://postgres@127.0.0.1:5432/bench";

pub const WS_AFTER_HELP: &str = "The same mix as `bench haystack http`, as JSON envelopes over \
    one WebSocket per connection (haystack-py's WebSocket API, which buildwire's server also \
    speaks), one request in flight per connection. Each target runs alone on the same data; the \
    limit target answers with the grids recorded from buildwire's (or else haystack-py's) \
    answers through tokio-tungstenite, with no Haystack work. Every reply's id and bytes are \
    checked before it is counted.\n\n\
    Examples:\n  buildwire bench haystack ws\n  \
    buildwire bench haystack ws --buildings alpha --seconds 5 --json";

/// `buildwire bench haystack http`.
pub fn run(args: HaystackHttpArgs) -> CommandResult {
    run_api(args, Api::Http)
}

/// `buildwire bench haystack ws`.
pub fn run_ws(args: HaystackHttpArgs) -> CommandResult {
    run_api(args, Api::Ws)
}

fn run_api(args: HaystackHttpArgs, api: Api) -> CommandResult {
    let connections = args
        .connections
        .unwrap_or(if api == Api::Http { 50 } else { 20 })
        .max(1);
    let warmup = args.warmup;
    let duration = args.seconds;
    let format = match args.format {
        Format::Zinc if api == Api::Ws => {
            return Err("--format zinc: the WebSocket API speaks JSON only".into());
        }
        Format::Json | Format::Zinc => args.format,
        other => {
            return Err(format!(
                "--format {other} is not served by both servers; use json or zinc"
            )
            .into());
        }
    };
    let (files, mix) = buildings_mix(&args.data, &args.buildings)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let progress = ProgressLine::new(args.json);
    let line = progress.clone();
    let status: Status = Arc::new(move |text| line.set(text));
    let wants_buildwire = args.targets.iter().any(|t| t == "buildwire");
    let config = CompareConfig {
        api,
        files,
        mix,
        connections,
        warmup,
        duration,
        format,
        targets: args.targets.clone(),
        backends: args.backend.clone(),
        peers_dir: peers_dir(args.peers.as_ref()),
        program: if wants_buildwire {
            self_program()?
        } else {
            PathBuf::new()
        },
    };
    let compared = run_compare(&runtime, &config, &status);
    progress.finish();
    let table = results_table(&compared.results);
    let report = serde_json::json!({
        "benchmark": if api == Api::Http { "haystack http" } else { "haystack ws" },
        "machine": MachineInfo::detect(),
        "config": {
            "buildings": args.buildings, "connections": connections,
            "warmup_s": args.warmup.as_secs_f64(), "seconds": args.seconds.as_secs_f64(), "format": format.name(),
            "limit_recorded_from": compared.limit_recorded_from, "backends": args.backend,
        },
        "results": compared.results,
    });
    print_table_and_report(&table, &report, args.json)
}
