//! The Haystack WebSocket load benchmark, as haystack-py publishes it: 20 connections, each
//! logged in once (SCRAM over HTTP, then the bearer token on the WebSocket), each looping
//! over the same mix of ops as the HTTP benchmark (`about`, `ops`, read `site`, read `point`,
//! `nav`) with one request in flight, for a warm-up and a measured phase.
//!
//! The messages are the JSON envelopes of haystack-py's WebSocket API, which buildwire's
//! server also speaks: `{"id":"7","op":"read","grid":<Hayson grid>}` answered by
//! `{"id":"7","grid":<Hayson grid>}` (haystack-py puts the id last; both are accepted).
//!
//! Every reply is checked before it counts: its id is the request's, and the rest of the
//! message is byte for byte the first checked reply of that op on that connection (whose grid
//! was decoded and its rows counted); `about` (whose `serverTime` changes) is decoded every
//! time.
//!
//! The `limit` target ([`WsLimitServer`]) answers every request with the grid recorded from
//! a real server, through the same WebSocket library (tokio-tungstenite) and with the same
//! envelope, doing no Haystack work: the ceiling of this machine, client and stack.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use buildwire_haystack::client::{ClientOptions, HaystackClient, websocket_url};
use buildwire_haystack::codec::Format;
use buildwire_haystack::ops::query_to_grid;
use buildwire_haystack::ops::ws::{
    self as wire, Envelope, MAX_MESSAGE_BYTES, SUBPROTOCOL, encode_request_json,
};
use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use serde_json::value::RawValue;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::handshake::server::{
    Request as WsRequest, Response as WsResponse,
};
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::http::{
    Expected, HttpLoadOutcome, LoadError, MixOp, OpTally, Phase, Phases, first_check,
};

/// How long one request may take before it counts as an error.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// What to load and how.
#[derive(Clone, Debug)]
pub struct WsLoadConfig {
    /// HTTP API base URL (the login goes there), e.g. `http://127.0.0.1:8080/api`; the
    /// WebSocket is `{url}/ws`.
    pub url: String,
    /// User and password for the SCRAM login (none: the server has no auth).
    pub login: Option<(String, String)>,
    /// Concurrent WebSocket connections, each with its own login.
    pub connections: usize,
    /// Not measured.
    pub warmup: Duration,
    /// Measured.
    pub duration: Duration,
    /// The ops, looped in order by every connection.
    pub mix: Vec<MixOp>,
}

/// Why the WebSocket load, a request of it, or recording its answers failed.
#[derive(Debug, thiserror::Error)]
pub enum WsError {
    /// A check shared with the HTTP load (the answer's grid), or its phases.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The op's query is not a request grid.
    #[error("{op}: {source}")]
    Query {
        /// The op.
        op: &'static str,
        /// What the query parser said.
        source: buildwire_haystack::ops::QueryError,
    },
    /// The answer is not a JSON envelope.
    #[error("{op}: answer is not an envelope: {source}")]
    NotEnvelope {
        /// The op.
        op: &'static str,
        /// Why.
        source: wire::WsError,
    },
    /// The answer carries another id than the request's.
    #[error("{op}: answer id {got}, expected {expected}")]
    WrongId {
        /// The op.
        op: &'static str,
        /// The id answered (debug text).
        got: String,
        /// The id sent, as JSON.
        expected: String,
    },
    /// The id's text could not be found in the answer.
    #[error("{op}: cannot place the id in the answer")]
    NoIdPlace {
        /// The op.
        op: &'static str,
    },
    /// Logging in over HTTP failed.
    #[error("login: {0}")]
    Login(#[source] buildwire_haystack::client::ClientError),
    /// The URL is not http:// or https://.
    #[error("{0} is not an http:// or https:// URL")]
    NotHttpUrl(String),
    /// The WebSocket URL is not a request.
    #[error("{url}: {source}")]
    Url {
        /// The URL.
        url: String,
        /// Why.
        source: tokio_tungstenite::tungstenite::Error,
    },
    /// The bearer header could not be made.
    #[error("{0}")]
    Header(#[from] tokio_tungstenite::tungstenite::http::header::InvalidHeaderValue),
    /// The WebSocket could not be opened, or its first message not sent.
    #[error("WebSocket {url}: {source}")]
    WebSocket {
        /// The URL.
        url: String,
        /// Why.
        source: tokio_tungstenite::tungstenite::Error,
    },
    /// Sending or receiving on the WebSocket failed.
    #[error("{0}")]
    Socket(#[from] tokio_tungstenite::tungstenite::Error),
    /// A binary message came instead of text.
    #[error("binary message")]
    Binary,
    /// The server closed the WebSocket (its close frame, debug text).
    #[error("closed by the server: {0}")]
    ClosedByServer(String),
    /// The connection ended.
    #[error("connection closed")]
    ConnectionClosed,
    /// No connection could be opened (the first error).
    #[error("every connection failed: {0}")]
    EveryConnectionFailed(String),
    /// An op's exchange failed.
    #[error("{op}: {source}")]
    Op {
        /// The op.
        op: &'static str,
        /// Why.
        source: Box<WsError>,
    },
    /// No answer in time.
    #[error("{op}: no answer in {after:?}")]
    Timeout {
        /// The op.
        op: &'static str,
        /// How long it waited.
        after: Duration,
    },
    /// A recorded answer is not JSON.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
}

/// One op as a WebSocket request: the op name and its request grid (Hayson).
#[derive(Clone, Debug, PartialEq)]
pub struct WsOp {
    /// Op name (`read`).
    pub op: String,
    /// Request grid as Hayson JSON text.
    pub grid: String,
}

/// The WebSocket request of a mix op, from its GET path: `read?filter=%22site%22` becomes op
/// `read` with a one-row grid `{filter: "site"}`, as the server reads a GET's query (a
/// column per parameter, each value Zinc).
pub fn ws_op(op: &MixOp) -> Result<WsOp, WsError> {
    let (name, query) = op.path.split_once('?').unwrap_or((op.path, ""));
    let grid = query_to_grid(Some(query)).map_err(|source| WsError::Query {
        op: op.name,
        source,
    })?;
    Ok(WsOp {
        op: name.to_owned(),
        grid: Format::Json.encode_grid(&grid),
    })
}

/// The request message with id `id`.
fn request_text(op: &WsOp, id: u64) -> String {
    encode_request_json(&id.to_string(), &op.op, &op.grid)
}

/// The envelope of an answer, borrowed from the message, and its grid (raw JSON).
fn answer_of(message: &str) -> Result<(Envelope<'_>, &RawValue), wire::WsError> {
    let answer = Envelope::decode(message, MAX_MESSAGE_BYTES)?;
    let grid = answer.grid.ok_or(wire::WsError::NoGrid)?;
    Ok((answer, grid))
}

/// What later answers of one op must be, learned from its first answer.
enum WsExpected {
    /// The message before the id's JSON text and after it.
    Around { before: String, after: String },
    /// Decode every time (`about`).
    Decode,
}

/// Checks the first answer of `op` to the request with id `id`; returns what later answers
/// must be.
fn first_answer(op: &MixOp, message: &str, id: u64) -> Result<WsExpected, WsError> {
    let (answer, grid) = answer_of(message).map_err(|source| WsError::NotEnvelope {
        op: op.name,
        source,
    })?;
    let id_json = format!("\"{id}\"");
    let Some(raw_id) = answer.id.filter(|raw| raw.get() == id_json) else {
        return Err(WsError::WrongId {
            op: op.name,
            got: format!("{:?}", answer.id.map(RawValue::get)),
            expected: id_json,
        });
    };
    let grid = Bytes::copy_from_slice(grid.get().as_bytes());
    match first_check(op, Format::Json, &grid)? {
        Expected::About => Ok(WsExpected::Decode),
        Expected::Bytes(_) => {
            // The id's text is a slice of `message`: split the message around it.
            let offset = (raw_id.get().as_ptr() as usize).wrapping_sub(message.as_ptr() as usize);
            let before = message
                .get(..offset)
                .ok_or(WsError::NoIdPlace { op: op.name })?;
            let after = message
                .get(offset + raw_id.get().len()..)
                .ok_or(WsError::NoIdPlace { op: op.name })?;
            Ok(WsExpected::Around {
                before: before.to_owned(),
                after: after.to_owned(),
            })
        }
    }
}

fn later_answer(op: &MixOp, expected: &WsExpected, message: &str, id: u64) -> Result<(), WsError> {
    match expected {
        WsExpected::Decode => first_answer(op, message, id).map(|_| ()),
        WsExpected::Around { before, after } => {
            let id_json = format!("\"{id}\"");
            let same = message.len() == before.len() + id_json.len() + after.len()
                && message.starts_with(before.as_str())
                && message[before.len()..].starts_with(&id_json)
                && message.ends_with(after.as_str());
            if same {
                Ok(())
            } else {
                Err(LoadError::Differs { op: op.name }.into())
            }
        }
    }
}

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Logs in over HTTP (when `login` is given) and opens the WebSocket with the token.
async fn open(url: &str, login: Option<&(String, String)>) -> Result<Socket, WsError> {
    let base = if url.ends_with('/') {
        url.to_owned()
    } else {
        format!("{url}/")
    };
    let token = match login {
        Some((user, password)) => {
            HaystackClient::connect(&base, ClientOptions::login(user, password))
                .await
                .map_err(WsError::Login)?
                .auth_token()
                .map(str::to_owned)
        }
        None => None,
    };
    let ws_url = websocket_url(&base).ok_or_else(|| WsError::NotHttpUrl(url.to_owned()))?;
    let mut request = ws_url
        .as_str()
        .into_client_request()
        .map_err(|source| WsError::Url {
            url: ws_url.clone(),
            source,
        })?;
    request.headers_mut().insert(
        "Sec-WebSocket-Protocol",
        HeaderValue::from_static(SUBPROTOCOL),
    );
    if let Some(token) = &token {
        let bearer = HeaderValue::from_str(&format!("BEARER authToken={token}"))?;
        request.headers_mut().insert("Authorization", bearer);
    }
    let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE_BYTES))
        .max_frame_size(Some(MAX_MESSAGE_BYTES));
    let (mut socket, _) = tokio_tungstenite::connect_async_with_config(request, Some(config), true)
        .await
        .map_err(|source| WsError::WebSocket {
            url: ws_url.clone(),
            source,
        })?;
    if let Some(token) = token {
        // haystack-py's server waits for the token as a first message.
        let hello = serde_json::json!({ "authToken": token }).to_string();
        socket
            .send(Message::Text(hello.into()))
            .await
            .map_err(|source| WsError::WebSocket {
                url: ws_url.clone(),
                source,
            })?;
    }
    Ok(socket)
}

/// Sends `text` and waits for the answer carrying an id (skipping pushes and control frames).
async fn exchange(socket: &mut Socket, text: String) -> Result<Utf8Bytes, WsError> {
    socket.send(Message::Text(text.into())).await?;
    loop {
        match socket.next().await {
            Some(Ok(Message::Text(answer))) => {
                // Pushes (watch changes) carry no id; none are expected here.
                if answer.as_str().contains("\"id\"") {
                    return Ok(answer);
                }
            }
            Some(Ok(Message::Binary(_))) => return Err(WsError::Binary),
            Some(Ok(Message::Close(frame))) => {
                return Err(WsError::ClosedByServer(format!("{frame:?}")));
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(e.into()),
            None => return Err(WsError::ConnectionClosed),
        }
    }
}

/// Runs the WebSocket load against `config.url`; `progress` is called about once a second
/// with the elapsed time and the answers so far.
pub async fn run(
    config: WsLoadConfig,
    progress: impl Fn(Duration, u64) + Send + 'static,
) -> Result<HttpLoadOutcome, WsError> {
    let requests: Vec<WsOp> = config.mix.iter().map(ws_op).collect::<Result<_, _>>()?;
    let mut sockets = Vec::with_capacity(config.connections);
    let mut login_failures = 0;
    let mut first_login_error = None;
    // Logins first, so that SCRAM's cost is not in the measurement.
    for _ in 0..config.connections.max(1) {
        match open(&config.url, config.login.as_ref()).await {
            Ok(socket) => sockets.push(socket),
            Err(e) => {
                login_failures += 1;
                first_login_error.get_or_insert(e.to_string());
            }
        }
    }
    if sockets.is_empty() {
        return Err(WsError::EveryConnectionFailed(
            first_login_error.unwrap_or_default(),
        ));
    }
    let mix = Arc::new(config.mix.clone());
    let requests = Arc::new(requests);
    let phases = Phases {
        warmup: config.warmup,
        duration: config.duration,
    };
    let outcome = phases
        .run(&config.mix, progress, |phase, answered| {
            sockets
                .into_iter()
                .map(|socket| {
                    tokio::spawn(worker(
                        socket,
                        Arc::clone(&mix),
                        Arc::clone(&requests),
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

/// One connection's loop over the mix, one request in flight, until told to stop.
async fn worker(
    mut socket: Socket,
    mix: Arc<Vec<MixOp>>,
    requests: Arc<Vec<WsOp>>,
    phase: watch::Receiver<Phase>,
    answered: Arc<AtomicU64>,
) -> Vec<OpTally> {
    let mut tallies: Vec<OpTally> = mix.iter().map(|_| OpTally::default()).collect();
    let mut expected: Vec<Option<WsExpected>> = mix.iter().map(|_| None).collect();
    // Ids count up and wrap, as a long-lived client's would.
    let mut next_id: u64 = 0;
    'run: loop {
        for (index, (op, request)) in mix.iter().zip(requests.iter()).enumerate() {
            let current = *phase.borrow();
            if current == Phase::Stop {
                break 'run;
            }
            let measuring = current == Phase::Measure;
            next_id = (next_id + 1) % 1_000_000;
            let id = next_id;
            let sent = Instant::now();
            let result = match tokio::time::timeout(
                REQUEST_TIMEOUT,
                exchange(&mut socket, request_text(request, id)),
            )
            .await
            {
                Ok(result) => result.map_err(|source| WsError::Op {
                    op: op.name,
                    source: Box::new(source),
                }),
                Err(_) => Err(WsError::Timeout {
                    op: op.name,
                    after: REQUEST_TIMEOUT,
                }),
            };
            let elapsed = sent.elapsed();
            let broken = result.is_err();
            let checked = result.and_then(|message| {
                let check = match &expected[index] {
                    Some(expected) => later_answer(op, expected, message.as_str(), id),
                    None => first_answer(op, message.as_str(), id).map(|first| {
                        expected[index] = Some(first);
                    }),
                };
                check.map(|()| message.len())
            });
            if checked.is_ok() {
                answered.fetch_add(1, Ordering::Relaxed);
            }
            if measuring {
                let tally = &mut tallies[index];
                tally.sent += 1;
                match &checked {
                    Ok(bytes) => {
                        tally.answered += 1;
                        tally.bytes += *bytes as u64;
                        tally.latency.record(elapsed);
                    }
                    Err(error) => {
                        tally.errors += 1;
                        tally.first_error.get_or_insert_with(|| error.to_string());
                    }
                }
            }
            if broken {
                // A failed exchange leaves the connection's state unknown: stop this one.
                break 'run;
            }
            if checked.is_err() {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
    let _ = socket.close(None).await;
    tallies
}

/// Records the answer grid (Hayson text) of every op of `mix` from a running server, keyed
/// by op name, for [`WsLimitServer`] to serve.
pub async fn record_ws_answers(
    url: &str,
    login: Option<(String, String)>,
    mix: &[MixOp],
) -> Result<HashMap<String, String>, WsError> {
    let mut socket = open(url, login.as_ref()).await?;
    let mut answers = HashMap::new();
    for (index, op) in mix.iter().enumerate() {
        let request = ws_op(op)?;
        let id = index as u64 + 1;
        let message = exchange(&mut socket, request_text(&request, id)).await?;
        first_answer(op, message.as_str(), id)?;
        let (_, grid) = answer_of(message.as_str()).map_err(|source| WsError::NotEnvelope {
            op: op.name,
            source,
        })?;
        answers.insert(request_key(&request), grid.get().to_owned());
    }
    let _ = socket.close(None).await;
    Ok(answers)
}

/// The key a recorded answer is found by: op and request grid.
fn request_key(request: &WsOp) -> String {
    format!("{} {}", request.op, request.grid)
}

/// A WebSocket server (tokio-tungstenite, like buildwire's) that answers each request with
/// the grid recorded for it, in the same envelope: the `limit` column.
pub struct WsLimitServer {
    address: SocketAddr,
    stop: watch::Sender<bool>,
}

impl WsLimitServer {
    /// Starts serving `answers` (from [`record_ws_answers`]) on 127.0.0.1, on a runtime of
    /// its own with two worker threads, like a server process.
    pub fn start(answers: HashMap<String, String>) -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0"))?;
        let address = listener.local_addr()?;
        let answers = Arc::new(answers);
        let (stop, stopped) = watch::channel(false);
        std::thread::spawn(move || runtime.block_on(serve_recorded(listener, answers, stopped)));
        Ok(Self { address, stop })
    }

    /// The API base URL to load (no login).
    pub fn url(&self) -> String {
        format!("http://{}/api", self.address)
    }
}

impl Drop for WsLimitServer {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

async fn serve_recorded(
    listener: TcpListener,
    answers: Arc<HashMap<String, String>>,
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
            // The callback's error type is tungstenite's, large by its design.
            #[allow(clippy::result_large_err)]
            let with_subprotocol = |_: &WsRequest, mut response: WsResponse| {
                response.headers_mut().insert(
                    "Sec-WebSocket-Protocol",
                    HeaderValue::from_static(SUBPROTOCOL),
                );
                Ok(response)
            };
            let Ok(mut socket) =
                tokio_tungstenite::accept_hdr_async(stream, with_subprotocol).await
            else {
                return;
            };
            while let Some(Ok(message)) = socket.next().await {
                let Message::Text(text) = message else {
                    continue;
                };
                let Ok(request) = Envelope::decode(text.as_str(), MAX_MESSAGE_BYTES) else {
                    continue;
                };
                let (Some(id), Some(op), Some(grid)) = (request.id, &request.op, request.grid)
                else {
                    continue;
                };
                let key = format!("{op} {}", grid.get());
                let grid = answers.get(&key).map_or(
                    r#"{"_kind":"grid","meta":{"ver":"3.0","err":{"_kind":"marker"},"dis":"not recorded"},"cols":[{"name":"empty"}],"rows":[]}"#,
                    String::as_str,
                );
                let reply = wire::encode_answer(Some(id), None, grid);
                if socket.send(Message::Text(reply.into())).await.is_err() {
                    break;
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(path: &'static str) -> MixOp {
        MixOp {
            name: "test",
            path,
            rows: None,
        }
    }

    #[test]
    fn get_paths_become_request_grids() {
        let read = ws_op(&op("read?filter=%22point%22")).expect("read");
        assert_eq!(read.op, "read");
        let grid: serde_json::Value = serde_json::from_str(&read.grid).expect("json");
        assert_eq!(grid["rows"][0]["filter"], "point");
        assert_eq!(grid["cols"][0]["name"], "filter");
        let about = ws_op(&op("about")).expect("about");
        assert_eq!(about.op, "about");
        assert!(ws_op(&op("read?filter=%2")).is_err());
    }

    #[test]
    fn answers_are_checked_around_their_id_in_either_order() {
        let op = MixOp {
            name: "nav",
            path: "nav",
            rows: Some(1),
        };
        let grid =
            r#"{"_kind":"grid","meta":{"ver":"3.0"},"cols":[{"name":"dis"}],"rows":[{"dis":"A"}]}"#;
        for (first, later, wrong) in [
            (
                format!(r#"{{"id":"1","grid":{grid}}}"#),
                format!(r#"{{"id":"12345","grid":{grid}}}"#),
                format!(r#"{{"id":"12346","grid":{grid}}}"#),
            ),
            (
                format!(r#"{{"grid":{grid},"id":"1"}}"#),
                format!(r#"{{"grid":{grid},"id":"12345"}}"#),
                format!(r#"{{"grid":{},"id":"12345"}}"#, grid.replace('A', "B")),
            ),
        ] {
            let expected = first_answer(&op, &first, 1).expect("first");
            later_answer(&op, &expected, &later, 12345).expect("later");
            assert!(later_answer(&op, &expected, &wrong, 12345).is_err());
        }
        let error = format!(r#"{{"id":"2","grid":{grid}}}"#);
        assert!(first_answer(&op, &error, 1).is_err(), "wrong id");
    }
}
