//! `bench haystack http` and `... ws`: the published load against buildwire's server (once
//! per storage backend), haystack-py's server and the `limit` (answers recorded from the
//! first server, served with no Haystack work), one target after the other on the same data.
//! The CLI maps its options to [`CompareConfig`] and prints [`results_table`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use buildwire_haystack::codec::Format;
use bytes::Bytes;
use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};

use super::http::{
    self, HAYSTACK_PY_SERVER_SCRIPT, HttpLoadConfig, HttpLoadOutcome, LimitServer, MixOp,
    ServerProcess, ServerProcessError, buildwire_serve_command,
};
use super::ws::{self, WsLimitServer, WsLoadConfig};
use crate::report::TargetResult;

/// The user every server of the run is given, and its password.
pub const USER: &str = "bench";
/// The password of [`USER`].
pub const PASSWORD: &str = "bench-password";

/// Which API a run loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// HTTP GETs on keep-alive connections.
    Http,
    /// JSON envelopes over one WebSocket per connection.
    Ws,
}

/// Why the run could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum HaystackBenchError {
    /// A building's Zinc file could not be read.
    #[error("cannot read {}: {source} (pass --data DIR)", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why not.
        source: std::io::Error,
    },
    /// A building's Zinc file did not decode.
    #[error("{0}")]
    Decode(#[from] buildwire_haystack::codec::DecodeError),
}

/// Where a status line goes (the CLI's progress line); called from the load's threads.
pub type Status = Arc<dyn Fn(String) + Send + Sync>;

/// The buildings of a run: the JSON files the servers load and the published mix with the
/// row counts of their points and sites (read from the Zinc files beside them).
pub fn buildings_mix(
    data: &Path,
    buildings: &[String],
) -> Result<(Vec<PathBuf>, Vec<MixOp>), HaystackBenchError> {
    let mut files = Vec::new();
    let (mut points, mut sites) = (0, 0);
    for building in buildings {
        let zinc = data.join(format!("{building}.zinc"));
        let text = std::fs::read_to_string(&zinc).map_err(|source| HaystackBenchError::Read {
            path: zinc.clone(),
            source,
        })?;
        let grid = Format::Zinc.decode_grid(&text)?;
        let has = |tag: &str| {
            (0..grid.row_count())
                .filter(|r| grid.get(*r, tag).is_some())
                .count()
        };
        points += has("point");
        sites += has("site");
        files.push(data.join(format!("{building}.json")));
    }
    Ok((files, http::published_mix(points, sites)))
}

/// What a run loads, against which targets.
#[derive(Clone, Debug)]
pub struct CompareConfig {
    /// HTTP or WebSocket.
    pub api: Api,
    /// The buildings' JSON files every server loads.
    pub files: Vec<PathBuf>,
    /// The ops every connection loops over.
    pub mix: Vec<MixOp>,
    /// Concurrent connections.
    pub connections: usize,
    /// Not measured.
    pub warmup: Duration,
    /// Measured.
    pub duration: Duration,
    /// Response format (HTTP).
    pub format: Format,
    /// Targets in order: `buildwire`, `haystack-py`, `limit`.
    pub targets: Vec<String>,
    /// Storage backends of the buildwire target (`memory`, `redis://...`, `postgres://...`).
    pub backends: Vec<String>,
    /// Where scripts/peers.sh installed the peers.
    pub peers_dir: PathBuf,
    /// This program, started again as `haystack serve` for the buildwire target.
    pub program: PathBuf,
}

/// One target's result.
pub type TargetOutcome = TargetResult<HttpLoadOutcome>;

/// What a run measured.
#[derive(Debug)]
pub struct CompareReport {
    /// The targets in order.
    pub results: Vec<TargetOutcome>,
    /// The target whose answers the limit served.
    pub limit_recorded_from: Option<String>,
}

/// Answers recorded from a real server for the limit target.
#[derive(Clone)]
enum Recorded {
    Http(HashMap<String, Bytes>),
    Ws(HashMap<String, String>),
}

/// Runs every target of `config` one after the other; a target that cannot be measured is
/// reported with its error and the others go on.
pub fn run_compare(
    runtime: &tokio::runtime::Runtime,
    config: &CompareConfig,
    status: &Status,
) -> CompareReport {
    let login = || Some((USER.to_owned(), PASSWORD.to_owned()));
    let load = |url: &str, target: &str, login: Option<(String, String)>| {
        let line = Arc::clone(status);
        let name = target.to_owned();
        let report = move |elapsed: Duration, answered: u64| {
            line(format!(
                "{name}: {:.0} s, {answered} answers",
                elapsed.as_secs_f64()
            ));
        };
        match config.api {
            Api::Http => runtime
                .block_on(http::run(
                    HttpLoadConfig {
                        url: url.to_owned(),
                        login,
                        connections: config.connections,
                        warmup: config.warmup,
                        duration: config.duration,
                        format: config.format,
                        mix: config.mix.clone(),
                    },
                    report,
                ))
                .map_err(|e| e.to_string()),
            Api::Ws => runtime
                .block_on(ws::run(
                    WsLoadConfig {
                        url: url.to_owned(),
                        login,
                        connections: config.connections,
                        warmup: config.warmup,
                        duration: config.duration,
                        mix: config.mix.clone(),
                    },
                    report,
                ))
                .map_err(|e| e.to_string()),
        }
    };
    // What the limit serves; a server whose answers cannot be recorded leaves it to the next.
    let record = |url: &str| match config.api {
        Api::Http => runtime
            .block_on(http::record_answers(
                url,
                login(),
                config.format,
                &config.mix,
            ))
            .ok()
            .map(Recorded::Http),
        Api::Ws => runtime
            .block_on(ws::record_ws_answers(url, login(), &config.mix))
            .ok()
            .map(Recorded::Ws),
    };
    let mut results = Vec::new();
    let mut recorded_from: Option<String> = None;
    let mut recorded = None;
    for (name, target, backend) in runs(config) {
        status(format!("{name}: starting"));
        let outcome = match target.as_str() {
            "buildwire" | "haystack-py" => {
                let server = if target == "buildwire" {
                    start_buildwire(
                        &config.program,
                        &config.files,
                        backend.as_deref().unwrap_or("memory"),
                    )
                } else {
                    start_haystack_py(&config.peers_dir, &config.files)
                };
                server.map_err(|e| e.to_string()).and_then(|server| {
                    // The limit serves the first server's answers (buildwire's when it runs).
                    if recorded.is_none() {
                        recorded = record(&server.url);
                        recorded_from = recorded.as_ref().map(|_| target.clone());
                    }
                    load(&server.url, &name, login())
                })
            }
            "limit" => match recorded.clone() {
                Some(Recorded::Http(answers)) => LimitServer::start(answers, config.format.mime())
                    .map_err(|e| e.to_string())
                    .and_then(|server| load(&server.url(), &target, None)),
                Some(Recorded::Ws(answers)) => WsLimitServer::start(answers)
                    .map_err(|e| e.to_string())
                    .and_then(|server| load(&server.url(), &target, None)),
                None => Err("no server answered to record the limit's responses from".into()),
            },
            other => Err(format!(
                "unknown target `{other}`: buildwire, haystack-py or limit"
            )),
        };
        results.push(TargetOutcome::new(name, outcome));
    }
    CompareReport {
        results,
        limit_recorded_from: recorded_from,
    }
}

/// The runs in order, `(name, target, backend)`: the buildwire target once per backend,
/// named after it, when there is more than the default one.
fn runs(config: &CompareConfig) -> Vec<(String, String, Option<String>)> {
    let mut runs = Vec::new();
    let default_backend = config.backends.len() == 1 && config.backends[0] == "memory";
    for target in &config.targets {
        if target == "buildwire" && !default_backend {
            for backend in &config.backends {
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
    runs
}

/// `PROGRAM haystack serve` on 127.0.0.1 with the run's user, `files` and `backend`.
pub fn start_buildwire(
    program: &Path,
    files: &[PathBuf],
    backend: &str,
) -> Result<ServerProcess, ServerProcessError> {
    let mut command = buildwire_serve_command(program, backend);
    command.arg("--user");
    command.arg(format!("{USER}:{PASSWORD}:admin"));
    for file in files {
        command.arg("--data").arg(file);
    }
    ServerProcess::start(command, Duration::from_secs(60))
}

/// haystack-py's server (the peers folder's py313) with the run's user and `files`.
fn start_haystack_py(peers: &Path, files: &[PathBuf]) -> Result<ServerProcess, ServerProcessError> {
    let python = peers.join("py313/bin/python");
    if !python.is_file() {
        return Err(ServerProcessError::MissingPython(python));
    }
    let dir = std::env::temp_dir().join(format!("buildwire-bench-haystack-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let script = dir.join("haystackpy_server.py");
    std::fs::write(&script, HAYSTACK_PY_SERVER_SCRIPT)?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
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

/// Per target and op: rate, MiB/s, latency and errors.
pub fn results_table(results: &[TargetOutcome]) -> String {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED);
    table.set_header([
        "target", "op", "rps", "MiB/s", "p50 ms", "p95 ms", "p99 ms", "errors",
    ]);
    for result in results {
        let target = &result.target;
        match (&result.outcome, &result.error) {
            (Some(outcome), _) => {
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
            (None, error) => {
                table.add_row([
                    target.clone(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    error.clone().unwrap_or_default(),
                ]);
            }
        }
    }
    format!("{table}\n")
}
