//! `buildwire bench haystack http` and `... ws`: the published Haystack HTTP load (50
//! connections) and WebSocket load (20 connections), each connection logged in once with
//! SCRAM and looping about / ops / read site / read point / nav, against buildwire's server,
//! haystack-py's server and the `limit` (recorded answers through the same HTTP or WebSocket
//! stack), in one run on the same data.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use std::collections::HashMap;

use buildwire_bench::haystack::http::{
    self, HAYSTACK_PY_SERVER_SCRIPT, HttpLoadConfig, HttpLoadOutcome, LimitServer, ServerProcess,
};
use buildwire_bench::haystack::ws::{self, WsLimitServer, WsLoadConfig};
use buildwire_bench::report::MachineInfo;
use buildwire_haystack::codec::Format;
use bytes::Bytes;
use clap::Args;
use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};

use crate::commands::common::result::CommandResult;
use crate::progress::ProgressLine;

const USER: &str = "bench";
const PASSWORD: &str = "bench-password";

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
    #[arg(long, default_value_t = 3.0)]
    warmup: f64,
    /// Seconds measured.
    #[arg(long, default_value_t = 15.0)]
    seconds: f64,
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
    buildwire bench haystack http --targets buildwire --backend memory,redis://127.0.0.1:6379,\\\n      \
    postgres://postgres@127.0.0.1:5432/bench";

pub const WS_AFTER_HELP: &str = "The same mix as `bench haystack http`, as JSON envelopes over \
    one WebSocket per connection (haystack-py's WebSocket API, which buildwire's server also \
    speaks), one request in flight per connection. Each target runs alone on the same data; the \
    limit target answers with the grids recorded from buildwire's (or else haystack-py's) \
    answers through tokio-tungstenite, with no Haystack work. Every reply's id and bytes are \
    checked before it is counted.\n\n\
    Examples:\n  buildwire bench haystack ws\n  \
    buildwire bench haystack ws --buildings alpha --seconds 5 --json";

/// Which API a run loads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Api {
    Http,
    Ws,
}

/// Answers recorded from a real server for the limit target.
#[derive(Clone)]
enum Recorded {
    Http(HashMap<String, Bytes>),
    Ws(HashMap<String, String>),
}

fn seconds(value: f64, flag: &str) -> Result<Duration, String> {
    Duration::try_from_secs_f64(value)
        .map_err(|_| format!("{flag} {value} is not a number of seconds"))
}

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
    let warmup = seconds(args.warmup, "--warmup")?;
    let duration = seconds(args.seconds, "--seconds")?;
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
    let mut files = Vec::new();
    let (mut points, mut sites) = (0, 0);
    for building in &args.buildings {
        let zinc = args.data.join(format!("{building}.zinc"));
        let text = std::fs::read_to_string(&zinc)
            .map_err(|e| format!("cannot read {}: {e} (pass --data DIR)", zinc.display()))?;
        let grid = Format::Zinc.decode_grid(&text)?;
        let has = |tag: &str| {
            (0..grid.row_count())
                .filter(|r| grid.get(*r, tag).is_some())
                .count()
        };
        points += has("point");
        sites += has("site");
        files.push(args.data.join(format!("{building}.json")));
    }
    let mix = http::published_mix(points, sites);
    let peers = crate::commands::common::program::peers_dir(args.peers.as_ref());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let progress = ProgressLine::new(args.json);
    let mut results: Vec<(String, Result<HttpLoadOutcome, String>)> = Vec::new();
    let mut recorded_from: Option<String> = None;
    let mut recorded = None;
    let login = || Some((USER.to_owned(), PASSWORD.to_owned()));
    let load = |url: &str, target: &str, login: Option<(String, String)>| {
        let line = progress.clone();
        let name = target.to_owned();
        let report = move |elapsed: Duration, answered: u64| {
            line.set(format!(
                "{name}: {:.0} s, {answered} answers",
                elapsed.as_secs_f64()
            ));
        };
        match api {
            Api::Http => {
                let config = HttpLoadConfig {
                    url: url.to_owned(),
                    login,
                    connections,
                    warmup,
                    duration,
                    format,
                    mix: mix.clone(),
                };
                runtime.block_on(http::run(config, report))
            }
            Api::Ws => {
                let config = WsLoadConfig {
                    url: url.to_owned(),
                    login,
                    connections,
                    warmup,
                    duration,
                    mix: mix.clone(),
                };
                runtime.block_on(ws::run(config, report))
            }
        }
    };
    let record = |url: &str| match api {
        Api::Http => runtime
            .block_on(http::record_answers(url, login(), format, &mix))
            .map(Recorded::Http),
        Api::Ws => runtime
            .block_on(ws::record_ws_answers(url, login(), &mix))
            .map(Recorded::Ws),
    };
    // The buildwire target once per backend, named after it when there are several.
    let mut runs: Vec<(String, String, Option<String>)> = Vec::new();
    for target in &args.targets {
        if target == "buildwire" && (args.backend.len() > 1 || args.backend[0] != "memory") {
            for backend in &args.backend {
                let kind = backend.split(':').next().unwrap_or(backend);
                runs.push((
                    format!("buildwire ({kind})"),
                    target.clone(),
                    Some(backend.clone()),
                ));
            }
        } else {
            runs.push((target.clone(), target.clone(), None));
        }
    }
    for (name, target, backend) in &runs {
        progress.set(format!("{name}: starting"));
        let outcome = match target.as_str() {
            "buildwire" | "haystack-py" => {
                let server = if target == "buildwire" {
                    start_buildwire(&files, backend.as_deref().unwrap_or("memory"))
                } else {
                    start_haystack_py(&peers, &files)
                };
                server.and_then(|server| {
                    // The limit serves the first server's answers (buildwire's when it runs).
                    if recorded.is_none() {
                        recorded = record(&server.url).ok();
                        recorded_from = recorded.as_ref().map(|_| target.clone());
                    }
                    load(&server.url, name, login())
                })
            }
            "limit" => match recorded.clone() {
                Some(Recorded::Http(answers)) => LimitServer::start(answers, format.mime())
                    .map_err(|e| e.to_string())
                    .and_then(|server| load(&server.url(), target, None)),
                Some(Recorded::Ws(answers)) => WsLimitServer::start(answers)
                    .map_err(|e| e.to_string())
                    .and_then(|server| load(&server.url(), target, None)),
                None => Err("no server answered to record the limit's responses from".into()),
            },
            other => Err(format!(
                "unknown target `{other}`: buildwire, haystack-py or limit"
            )),
        };
        results.push((name.clone(), outcome));
    }
    progress.finish();
    let table = render(&results);
    let report = serde_json::json!({
        "benchmark": if api == Api::Http { "haystack http" } else { "haystack ws" },
        "machine": MachineInfo::detect(),
        "config": {
            "buildings": args.buildings, "connections": connections,
            "warmup_s": args.warmup, "seconds": args.seconds, "format": format.name(),
            "limit_recorded_from": recorded_from, "backends": args.backend,
        },
        "results": results.iter().map(|(target, outcome)| match outcome {
            Ok(outcome) => serde_json::json!({"target": target, "outcome": outcome}),
            Err(error) => serde_json::json!({"target": target, "error": error}),
        }).collect::<Vec<_>>(),
    });
    crate::commands::common::output::print_table_and_report(&table, &report, args.json)
}

fn start_buildwire(files: &[PathBuf], backend: &str) -> Result<ServerProcess, String> {
    let program = crate::commands::common::program::self_program()?;
    let mut command = Command::new(program);
    command.args([
        "haystack",
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--backend",
        backend,
    ]);
    command.arg("--user");
    command.arg(format!("{USER}:{PASSWORD}:admin"));
    for file in files {
        command.arg("--data").arg(file);
    }
    ServerProcess::start(command, Duration::from_secs(60))
}

fn start_haystack_py(peers: &std::path::Path, files: &[PathBuf]) -> Result<ServerProcess, String> {
    let python = peers.join("py313/bin/python");
    if !python.is_file() {
        return Err(format!(
            "{} is missing: run scripts/peers.sh py313",
            python.display()
        ));
    }
    let dir = std::env::temp_dir().join(format!("buildwire-bench-haystack-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let script = dir.join("haystackpy_server.py");
    std::fs::write(&script, HAYSTACK_PY_SERVER_SCRIPT).map_err(|e| e.to_string())?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| e.to_string())?
        .port();
    let mut command = Command::new(python);
    command.arg(&script).args([
        "--port",
        &port.to_string(),
        "--user",
        USER,
        "--password",
        PASSWORD,
    ]);
    command.args(files);
    ServerProcess::start(command, Duration::from_secs(120))
}

fn render(results: &[(String, Result<HttpLoadOutcome, String>)]) -> String {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED);
    table.set_header([
        "target", "op", "rps", "MiB/s", "p50 ms", "p95 ms", "p99 ms", "errors",
    ]);
    for (target, outcome) in results {
        match outcome {
            Ok(outcome) => {
                for op in &outcome.ops {
                    table.add_row([
                        target.clone(),
                        op.name.clone(),
                        format!("{:.0}", op.rps),
                        format!("{:.1}", op.bytes_per_sec / (1024.0 * 1024.0)),
                        format!("{:.2}", op.latency_ms.p50_ms),
                        format!("{:.2}", op.latency_ms.p95_ms),
                        format!("{:.2}", op.latency_ms.p99_ms),
                        match &op.first_error {
                            Some(error) => format!("{} ({error})", op.errors),
                            None => op.errors.to_string(),
                        },
                    ]);
                }
            }
            Err(error) => {
                table.add_row([
                    target.clone(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    error.clone(),
                ]);
            }
        }
    }
    format!("{table}\n")
}
