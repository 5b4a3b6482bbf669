//! The Haystack HTTP load benchmark, as haystack-py publishes it: every connection logs in
//! once with SCRAM, then loops over a fixed mix of ops (`about`, `ops`, read `site`, read
//! `point`, `nav`) for a warm-up and a measured phase; requests per second and latency per
//! op and overall.
//!
//! Every reply is checked before it is counted: status 200, and a body that is the same as
//! the first checked reply of that op (whose grid was decoded and its row count checked), or,
//! for `about` (whose `serverTime` changes), a body that decodes to one row with a
//! `haystackVersion`.
//!
//! The `limit` target ([`LimitServer`]) serves the bytes recorded from a real server through
//! the same HTTP stack (hyper, HTTP/1.1) with no Haystack work at all: the ceiling for this
//! machine, client and HTTP stack.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use buildwire_haystack::client::{ClientOptions, HaystackClient};
use buildwire_haystack::codec::Format;
use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde::Serialize;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::stats::{LatencyHistogram, LatencySummary};

/// One op of the mix: a GET of `/api/{path}` (Zinc-encoded query, as the spec allows for
/// ops without side effects) and what its answer must hold.
#[derive(Clone, Debug)]
pub struct MixOp {
    /// Name in the report (`about`, `read site` ...).
    pub name: &'static str,
    /// Path and query below the API base, e.g. `read?filter=%22site%22`.
    pub path: &'static str,
    /// Rows the answer must have, when known.
    pub rows: Option<usize>,
}

/// The published mix: about, ops, read `site`, read `point`, nav.
pub fn published_mix(points: usize, sites: usize) -> Vec<MixOp> {
    vec![
        MixOp {
            name: "about",
            path: "about",
            rows: Some(1),
        },
        MixOp {
            name: "ops",
            path: "ops",
            rows: None,
        },
        MixOp {
            name: "read site",
            path: "read?filter=%22site%22",
            rows: Some(sites),
        },
        MixOp {
            name: "read point",
            path: "read?filter=%22point%22",
            rows: Some(points),
        },
        MixOp {
            name: "nav",
            path: "nav",
            rows: None,
        },
    ]
}

/// What to load and how.
#[derive(Clone, Debug)]
pub struct HttpLoadConfig {
    /// API base URL, e.g. `http://127.0.0.1:8080/api`.
    pub url: String,
    /// User and password for the SCRAM login (none: the server has no auth).
    pub login: Option<(String, String)>,
    /// Concurrent connections, each with its own login and its own keep-alive connection.
    pub connections: usize,
    /// Not measured.
    pub warmup: Duration,
    /// Measured.
    pub duration: Duration,
    /// Response format asked for (Accept).
    pub format: Format,
    /// The ops, looped in order by every connection.
    pub mix: Vec<MixOp>,
}

/// Results of one op (or of all, for the overall line).
#[derive(Clone, Debug, Serialize)]
pub struct OpOutcome {
    /// Op name, or `overall`.
    pub name: String,
    /// Requests sent in the measured phase.
    pub sent: u64,
    /// Checked-correct replies in the measured phase.
    pub answered: u64,
    /// Failed or wrong replies in the measured phase.
    pub errors: u64,
    /// Answered per second.
    pub rps: f64,
    /// Response body bytes per second.
    pub bytes_per_sec: f64,
    /// Latency of answered requests.
    pub latency_ms: LatencySummary,
    /// The first error seen, if any.
    pub first_error: Option<String>,
}

/// A whole load run against one server.
#[derive(Clone, Debug, Serialize)]
pub struct HttpLoadOutcome {
    /// Seconds of the measured phase.
    pub seconds: f64,
    /// Logins that failed (their connections did not run).
    pub login_failures: usize,
    /// Per op, then `overall`.
    pub ops: Vec<OpOutcome>,
}

#[derive(Default)]
pub(crate) struct OpTally {
    pub(crate) sent: u64,
    pub(crate) answered: u64,
    pub(crate) errors: u64,
    pub(crate) bytes: u64,
    pub(crate) latency: LatencyHistogram,
    pub(crate) first_error: Option<String>,
}

impl OpTally {
    pub(crate) fn add(&mut self, other: &OpTally) {
        self.sent += other.sent;
        self.answered += other.answered;
        self.errors += other.errors;
        self.bytes += other.bytes;
        self.latency.merge(&other.latency);
        if self.first_error.is_none() {
            self.first_error.clone_from(&other.first_error);
        }
    }
}

/// What a checked reply must look like.
pub(crate) enum Expected {
    /// Equal bytes to this first reply.
    Bytes(Bytes),
    /// Decodes to one row with `haystackVersion` (`about`).
    About,
}

/// Why a load request, the check of its answer, or recording answers failed.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The answer is not UTF-8.
    #[error("{op}: body not UTF-8: {source}")]
    NotUtf8 {
        /// The op.
        op: &'static str,
        /// Where it went wrong.
        source: std::str::Utf8Error,
    },
    /// The answer does not decode as the format asked for.
    #[error("{op}: answer does not decode: {source}")]
    Undecodable {
        /// The op.
        op: &'static str,
        /// Where it went wrong.
        source: buildwire_haystack::codec::DecodeError,
    },
    /// The server answered with an error grid.
    #[error("{op}: error grid: {dis}")]
    ErrorGrid {
        /// The op.
        op: &'static str,
        /// The grid's `dis`, as debug text.
        dis: String,
    },
    /// The answer has another number of rows than the data holds.
    #[error("{op}: {rows} rows, expected {expected}")]
    Rows {
        /// The op.
        op: &'static str,
        /// Rows answered.
        rows: usize,
        /// Rows the buildings hold.
        expected: usize,
    },
    /// `about` answered without `haystackVersion`.
    #[error("about: no haystackVersion")]
    NoVersion,
    /// A later answer differs from the op's first one.
    #[error("{op}: answer differs from the first one")]
    Differs {
        /// The op.
        op: &'static str,
    },
    /// No answer in time.
    #[error("{op}: no answer in {} s", after.as_secs())]
    Timeout {
        /// The op.
        op: &'static str,
        /// How long it waited.
        after: Duration,
    },
    /// An op's request failed.
    #[error("{op}: {source}")]
    Op {
        /// The op.
        op: &'static str,
        /// Why.
        source: Box<LoadError>,
    },
    /// No connection could log in (the first error).
    #[error("every login failed: {0}")]
    EveryLoginFailed(String),
    /// A load worker task failed.
    #[error("{0}")]
    Worker(#[from] tokio::task::JoinError),
    /// The URL is not plain `http://`.
    #[error("{0}: the load generator speaks plain http:// (loopback benchmarks)")]
    NotHttp(String),
    /// The TCP connection could not be made.
    #[error("connect {authority}: {source}")]
    Connect {
        /// `host:port`.
        authority: String,
        /// Why not.
        source: std::io::Error,
    },
    /// The HTTP/1.1 handshake failed.
    #[error("HTTP handshake with {authority}: {source}")]
    Handshake {
        /// `host:port`.
        authority: String,
        /// Why.
        source: hyper::Error,
    },
    /// The connection was not there after it was made.
    #[error("no connection")]
    NoConnection,
    /// hyper failed on the connection.
    #[error("{0}")]
    Hyper(#[from] hyper::Error),
    /// The request could not be built.
    #[error("{0}")]
    Request(#[from] hyper::http::Error),
    /// The server answered another status than 200.
    #[error("HTTP {0}")]
    Status(hyper::StatusCode),
    /// Logging in with the Haystack client failed.
    #[error("{0}")]
    Client(#[from] buildwire_haystack::client::ClientError),
    /// Recording an answer failed.
    #[error("{0}")]
    Recording(#[from] reqwest::Error),
    /// Recording: the server answered an op with another status than 200.
    #[error("{op}: HTTP {status}")]
    OpStatus {
        /// The op.
        op: &'static str,
        /// Its status.
        status: reqwest::StatusCode,
    },
}

/// Checks the first reply of an op and returns what later replies must be.
pub(crate) fn first_check(op: &MixOp, format: Format, body: &Bytes) -> Result<Expected, LoadError> {
    let text = std::str::from_utf8(body).map_err(|source| LoadError::NotUtf8 {
        op: op.name,
        source,
    })?;
    let grid = format
        .decode_grid(text)
        .map_err(|source| LoadError::Undecodable {
            op: op.name,
            source,
        })?;
    if grid.meta.contains("err") {
        return Err(LoadError::ErrorGrid {
            op: op.name,
            dis: format!("{:?}", grid.meta.get("dis")),
        });
    }
    if let Some(rows) = op.rows
        && grid.row_count() != rows
    {
        return Err(LoadError::Rows {
            op: op.name,
            rows: grid.row_count(),
            expected: rows,
        });
    }
    if op.name == "about" {
        if !grid.columns().iter().any(|c| c.name == "haystackVersion") {
            return Err(LoadError::NoVersion);
        }
        return Ok(Expected::About);
    }
    Ok(Expected::Bytes(body.clone()))
}

fn later_check(
    op: &MixOp,
    format: Format,
    expected: &Expected,
    body: &Bytes,
) -> Result<(), LoadError> {
    match expected {
        Expected::Bytes(first) if first == body => Ok(()),
        Expected::Bytes(_) => Err(LoadError::Differs { op: op.name }),
        Expected::About => first_check(op, format, body).map(|_| ()),
    }
}

/// Runs the load against `config.url`; `progress` is called about once a second with the
/// elapsed time and the answers so far.
pub async fn run(
    config: HttpLoadConfig,
    progress: impl Fn(Duration, u64) + Send + 'static,
) -> Result<HttpLoadOutcome, LoadError> {
    let base = if config.url.ends_with('/') {
        config.url.clone()
    } else {
        format!("{}/", config.url)
    };
    // Logins first, one per connection, so that SCRAM's cost is not in the measurement.
    let mut logins = Vec::with_capacity(config.connections);
    for _ in 0..config.connections {
        let options = match &config.login {
            Some((user, password)) => ClientOptions::login(user, password),
            None => ClientOptions::default(),
        };
        logins.push(HaystackClient::connect(&base, options));
    }
    let mut tokens = Vec::new();
    let mut login_failures = 0;
    let mut first_login_error = None;
    for login in logins {
        match login.await {
            Ok(client) => tokens.push(client.auth_token().map(str::to_owned)),
            Err(e) => {
                login_failures += 1;
                first_login_error.get_or_insert(e.to_string());
            }
        }
    }
    if tokens.is_empty() {
        return Err(LoadError::EveryLoginFailed(
            first_login_error.unwrap_or_default(),
        ));
    }
    let mix = Arc::new(config.mix.clone());
    let phases = Phases {
        warmup: config.warmup,
        duration: config.duration,
    };
    let format = config.format;
    let outcome = phases
        .run(&config.mix, progress, |phase, answered| {
            tokens
                .into_iter()
                .map(|token| {
                    tokio::spawn(worker(
                        base.clone(),
                        token,
                        format,
                        Arc::clone(&mix),
                        phase.clone(),
                        Arc::clone(&answered),
                    ))
                })
                .collect()
        })
        .await?;
    Ok(HttpLoadOutcome {
        login_failures,
        ..outcome
    })
}

/// The warm-up and measured phases of a load run, shared by the HTTP and WebSocket loads.
pub(crate) struct Phases {
    pub(crate) warmup: Duration,
    pub(crate) duration: Duration,
}

impl Phases {
    /// Starts the workers (`spawn` gets the phase to watch and the shared answer counter),
    /// runs the warm-up and the measured phase with `progress`, stops the workers and adds up
    /// their tallies per op of `mix` and overall.
    pub(crate) async fn run(
        &self,
        mix: &[MixOp],
        progress: impl Fn(Duration, u64) + Send + 'static,
        spawn: impl FnOnce(
            watch::Receiver<Phase>,
            Arc<AtomicU64>,
        ) -> Vec<tokio::task::JoinHandle<Vec<OpTally>>>,
    ) -> Result<HttpLoadOutcome, LoadError> {
        let (phase_sender, phase) = watch::channel(Phase::Warmup);
        let answered = Arc::new(AtomicU64::new(0));
        let workers = spawn(phase, Arc::clone(&answered));
        let start = Instant::now();
        sleep_with_progress(self.warmup, start, &progress, &answered).await;
        let _ = phase_sender.send(Phase::Measure);
        let measure_start = Instant::now();
        sleep_with_progress(self.duration, start, &progress, &answered).await;
        let _ = phase_sender.send(Phase::Stop);
        let seconds = measure_start.elapsed().as_secs_f64();
        let mut tallies: Vec<OpTally> = mix.iter().map(|_| OpTally::default()).collect();
        for worker in workers {
            let worker_tallies = worker.await?;
            for (total, part) in tallies.iter_mut().zip(&worker_tallies) {
                total.add(part);
            }
        }
        let mut overall = OpTally::default();
        let mut ops = Vec::new();
        for (op, tally) in mix.iter().zip(&tallies) {
            overall.add(tally);
            ops.push(outcome(op.name, tally, seconds));
        }
        ops.push(outcome("overall", &overall, seconds));
        Ok(HttpLoadOutcome {
            seconds,
            login_failures: 0,
            ops,
        })
    }
}

fn outcome(name: &str, tally: &OpTally, seconds: f64) -> OpOutcome {
    OpOutcome {
        name: name.to_owned(),
        sent: tally.sent,
        answered: tally.answered,
        errors: tally.errors,
        rps: tally.answered as f64 / seconds,
        bytes_per_sec: tally.bytes as f64 / seconds,
        latency_ms: tally.latency.summary(),
        first_error: tally.first_error.clone(),
    }
}

async fn sleep_with_progress(
    length: Duration,
    start: Instant,
    progress: &(impl Fn(Duration, u64) + Send),
    answered: &AtomicU64,
) {
    let end = Instant::now() + length;
    while Instant::now() < end {
        let step = (end - Instant::now()).min(Duration::from_secs(1));
        tokio::time::sleep(step).await;
        progress(start.elapsed(), answered.load(Ordering::Relaxed));
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    Warmup,
    Measure,
    Stop,
}

/// One keep-alive HTTP/1.1 connection of the load generator: hyper's client connection
/// with nothing on top (no pool, redirects or decompression), reopened when it breaks.
/// Bodies are compared with the expected answer frame by frame as they arrive, so the
/// checking client copies nothing: on two cores shared with the server, every cycle the
/// client spends is one the server does not get.
struct LoadConnection {
    /// `host:port` to connect to.
    authority: String,
    sender: Option<hyper::client::conn::http1::SendRequest<Empty<Bytes>>>,
}

/// What a reply's body was, as read.
enum Body {
    /// The whole body (no expected bytes yet, or an op decoded every time).
    Collected(Bytes),
    /// Compared with the expected bytes while reading: its length and whether it matched.
    Compared { length: usize, same: bool },
}

impl LoadConnection {
    fn new(base: &str) -> Result<Self, LoadError> {
        let rest = base
            .strip_prefix("http://")
            .ok_or_else(|| LoadError::NotHttp(base.to_owned()))?;
        let authority = rest.split('/').next().unwrap_or(rest).to_owned();
        Ok(Self {
            authority,
            sender: None,
        })
    }

    async fn sender(
        &mut self,
    ) -> Result<&mut hyper::client::conn::http1::SendRequest<Empty<Bytes>>, LoadError> {
        if self.sender.as_ref().is_none_or(|s| s.is_closed()) {
            let stream = tokio::net::TcpStream::connect(&self.authority)
                .await
                .map_err(|source| LoadError::Connect {
                    authority: self.authority.clone(),
                    source,
                })?;
            let _ = stream.set_nodelay(true);
            let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
                .await
                .map_err(|source| LoadError::Handshake {
                    authority: self.authority.clone(),
                    source,
                })?;
            tokio::spawn(connection);
            self.sender = Some(sender);
        }
        let sender = self.sender.as_mut().ok_or(LoadError::NoConnection)?;
        sender.ready().await?;
        Ok(sender)
    }

    /// GETs `path` and reads the body, comparing it with `compare_with` when given.
    async fn get(
        &mut self,
        path: &str,
        accept: &str,
        bearer: Option<&str>,
        compare_with: Option<&Bytes>,
    ) -> Result<Body, LoadError> {
        let mut request = Request::get(path)
            .header("Host", self.authority.as_str())
            .header("Accept", accept);
        if let Some(bearer) = bearer {
            request = request.header("Authorization", bearer);
        }
        let request = request.body(Empty::new())?;
        let sender = self.sender().await?;
        let response = sender.send_request(request).await?;
        if response.status() != 200 {
            return Err(LoadError::Status(response.status()));
        }
        let mut body = response.into_body();
        let mut collected = Vec::new();
        let mut length = 0;
        let mut same = true;
        while let Some(frame) = body.frame().await {
            let Ok(data) = frame?.into_data() else {
                continue;
            };
            match compare_with {
                Some(expected) => {
                    same = same
                        && expected
                            .get(length..length + data.len())
                            .is_some_and(|part| part == data.as_ref());
                    length += data.len();
                }
                None => collected.extend_from_slice(&data),
            }
        }
        Ok(match compare_with {
            Some(expected) => Body::Compared {
                length,
                same: same && length == expected.len(),
            },
            None => Body::Collected(Bytes::from(collected)),
        })
    }
}

/// One connection's loop over the mix until told to stop.
async fn worker(
    base: String,
    token: Option<String>,
    format: Format,
    mix: Arc<Vec<MixOp>>,
    phase: watch::Receiver<Phase>,
    answered: Arc<AtomicU64>,
) -> Vec<OpTally> {
    let mut tallies: Vec<OpTally> = mix.iter().map(|_| OpTally::default()).collect();
    let mut expected: Vec<Option<Expected>> = mix.iter().map(|_| None).collect();
    let bearer = token.map(|t| format!("BEARER authToken={t}"));
    let mut connection = match LoadConnection::new(&base) {
        Ok(connection) => connection,
        Err(error) => {
            if let Some(tally) = tallies.first_mut() {
                tally.errors += 1;
                tally.first_error = Some(error.to_string());
            }
            return tallies;
        }
    };
    // The request path of each op: the base URL's path and the op's.
    let base_path = base
        .strip_prefix("http://")
        .and_then(|rest| rest.find('/').map(|i| rest[i..].to_owned()))
        .unwrap_or_else(|| "/".to_owned());
    let paths: Vec<String> = mix
        .iter()
        .map(|op| format!("{base_path}{}", op.path))
        .collect();
    'run: loop {
        for (index, op) in mix.iter().enumerate() {
            let current = *phase.borrow();
            if current == Phase::Stop {
                break 'run;
            }
            let measuring = current == Phase::Measure;
            let compare_with = match &expected[index] {
                Some(Expected::Bytes(bytes)) => Some(bytes),
                _ => None,
            };
            let sent = Instant::now();
            let result = match tokio::time::timeout(
                Duration::from_secs(30),
                connection.get(
                    &paths[index],
                    format.mime(),
                    bearer.as_deref(),
                    compare_with,
                ),
            )
            .await
            {
                Ok(result) => result.map_err(|source| LoadError::Op {
                    op: op.name,
                    source: Box::new(source),
                }),
                Err(_) => {
                    // The connection's state is unknown after a timeout: open a new one.
                    connection.sender = None;
                    Err(LoadError::Timeout {
                        op: op.name,
                        after: Duration::from_secs(30),
                    })
                }
            };
            let elapsed = sent.elapsed();
            let checked = result.and_then(|body| match body {
                Body::Compared { length, same: true } => Ok(length),
                Body::Compared { same: false, .. } => Err(LoadError::Differs { op: op.name }),
                Body::Collected(body) => {
                    let check = match &expected[index] {
                        Some(expected) => later_check(op, format, expected, &body),
                        None => first_check(op, format, &body).map(|first| {
                            expected[index] = Some(first);
                        }),
                    };
                    check.map(|()| body.len())
                }
            });
            if checked.is_ok() {
                answered.fetch_add(1, Ordering::Relaxed);
            }
            if !measuring {
                continue;
            }
            let tally = &mut tallies[index];
            tally.sent += 1;
            match checked {
                Ok(bytes) => {
                    tally.answered += 1;
                    tally.bytes += bytes as u64;
                    tally.latency.record(elapsed);
                }
                Err(error) => {
                    tally.errors += 1;
                    tally.first_error.get_or_insert(error.to_string());
                    // Back off a little so a failing server is not hammered in a tight loop.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }
    tallies
}

/// Records the answer of every op of `mix` from a running server (after logging in), for
/// [`LimitServer`] to serve.
pub async fn record_answers(
    url: &str,
    login: Option<(String, String)>,
    format: Format,
    mix: &[MixOp],
) -> Result<HashMap<String, Bytes>, LoadError> {
    let base = if url.ends_with('/') {
        url.to_owned()
    } else {
        format!("{url}/")
    };
    let options = match login {
        Some((user, password)) => ClientOptions::login(&user, &password),
        None => ClientOptions::default(),
    };
    let client = HaystackClient::connect(&base, options).await?;
    let http = reqwest::Client::new();
    let mut answers = HashMap::new();
    for op in mix {
        let mut request = http
            .get(format!("{base}{}", op.path))
            .header("Accept", format.mime());
        if let Some(token) = client.auth_token() {
            request = request.header("Authorization", format!("BEARER authToken={token}"));
        }
        let response = request.send().await?;
        if response.status() != 200 {
            return Err(LoadError::OpStatus {
                op: op.name,
                status: response.status(),
            });
        }
        let body = response.bytes().await?;
        first_check(op, format, &body)?;
        answers.insert(format!("/api/{}", op.path), body);
    }
    Ok(answers)
}

/// An HTTP/1.1 server (hyper, like buildwire's) that answers each recorded path with its
/// recorded bytes: the same responses with no Haystack work, the `limit` column.
pub struct LimitServer {
    address: SocketAddr,
    stop: watch::Sender<bool>,
}

impl LimitServer {
    /// Starts serving `answers` (path with query → body) as `content_type` on 127.0.0.1,
    /// on a runtime of its own (two worker threads, like a server process) so that it does
    /// not share the load generator's.
    pub fn start(
        answers: HashMap<String, Bytes>,
        content_type: &'static str,
    ) -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0"))?;
        let address = listener.local_addr()?;
        let answers = Arc::new(answers);
        let (stop, stopped) = watch::channel(false);
        std::thread::spawn(move || {
            runtime.block_on(serve_recorded(listener, answers, content_type, stopped))
        });
        Ok(Self { address, stop })
    }

    /// The API base URL to load.
    pub fn url(&self) -> String {
        format!("http://{}/api", self.address)
    }
}

async fn serve_recorded(
    listener: TcpListener,
    answers: Arc<HashMap<String, Bytes>>,
    content_type: &'static str,
    mut stopped: watch::Receiver<bool>,
) {
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stopped.changed() => break,
        };
        let Ok((stream, _)) = accepted else { continue };
        let _ = stream.set_nodelay(true);
        let answers = Arc::clone(&answers);
        tokio::spawn(async move {
            let service = service_fn(move |request: Request<Incoming>| {
                let answers = Arc::clone(&answers);
                async move {
                    let key = request
                        .uri()
                        .path_and_query()
                        .map(|pq| pq.as_str().to_owned())
                        .unwrap_or_default();
                    let response = match answers.get(&key) {
                        Some(body) => Response::builder()
                            .header("Content-Type", content_type)
                            .body(Full::new(body.clone())),
                        None => Response::builder()
                            .status(404)
                            .body(Full::new(Bytes::new())),
                    };
                    Ok::<_, Infallible>(response.unwrap_or_default())
                }
            });
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

impl Drop for LimitServer {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// haystack-py's server script, embedded so the binary needs no source tree.
pub const HAYSTACK_PY_SERVER_SCRIPT: &str = include_str!("../../peers/haystackpy_server.py");

/// `PROGRAM haystack serve --bind 127.0.0.1:0 --backend BACKEND --log-level warn`:
/// buildwire's server (this same program) for [`ServerProcess::start`], without its line per
/// request (measured, not logged).
pub fn buildwire_serve_command(program: &std::path::Path, backend: &str) -> std::process::Command {
    let mut command = std::process::Command::new(program);
    command.args([
        "haystack",
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--backend",
        backend,
        "--log-level",
        "warn",
    ]);
    command
}

/// Why a server process could not be started.
#[derive(Debug, thiserror::Error)]
pub enum ServerProcessError {
    /// The program could not be run.
    #[error("cannot start {command}: {source}")]
    Spawn {
        /// The command line.
        command: String,
        /// Why not.
        source: std::io::Error,
    },
    /// Its stdout could not be taken.
    #[error("no stdout from the server process")]
    NoStdout,
    /// It printed no URL in time (or ended first).
    #[error("the server did not print its URL within {0} s")]
    NoUrl(u64),
    /// The peers folder has no Python for the peer's server.
    #[error("{} is missing: run scripts/peers.sh py313", .0.display())]
    MissingPython(std::path::PathBuf),
    /// Its script or a free port could not be had.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// A server in a child process, killed when dropped.
pub struct ServerProcess {
    child: std::process::Child,
    /// The API base URL it printed.
    pub url: String,
}

impl ServerProcess {
    /// Starts `command` and waits (up to `timeout`) for a stdout line holding
    /// `http://HOST:PORT/api` (buildwire's "listening on ..." or the peer's "ready ... URL").
    pub fn start(
        mut command: std::process::Command,
        timeout: Duration,
    ) -> Result<Self, ServerProcessError> {
        use std::io::{BufRead, BufReader};
        command
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit());
        let mut child = command
            .spawn()
            .map_err(|source| ServerProcessError::Spawn {
                command: format!("{command:?}"),
                source,
            })?;
        let Some(stdout) = child.stdout.take() else {
            let _ = child.kill();
            return Err(ServerProcessError::NoStdout);
        };
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            loop {
                line.clear();
                match reader.read_line(&mut line) {
                    Ok(0) | Err(_) => {
                        let _ = sender.send(None);
                        return;
                    }
                    Ok(_) => {
                        if let Some(start) = line.find("http://") {
                            let url = line[start..].split_whitespace().next().unwrap_or("");
                            let _ = sender.send(Some(url.to_owned()));
                            // Keep draining so the child never blocks on a full pipe.
                            let mut sink = String::new();
                            while reader.read_line(&mut sink).is_ok_and(|n| n > 0) {
                                sink.clear();
                            }
                            return;
                        }
                    }
                }
            }
        });
        match receiver.recv_timeout(timeout) {
            Ok(Some(url)) => Ok(Self { child, url }),
            Ok(None) | Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(ServerProcessError::NoUrl(timeout.as_secs()))
            }
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
