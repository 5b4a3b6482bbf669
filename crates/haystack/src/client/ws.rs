//! [`WsClient`]: the Haystack ops over one WebSocket, many requests in flight.
//!
//! The messages are [`crate::ops::ws`] envelopes (haystack-py's WebSocket API): a request
//! `{"id": "7", "op": "read", "grid": <Hayson grid>}`, its answer `{"id": "7", "grid":
//! <Hayson grid>}`, and pushes from the server without an id, `{"type": "watch",
//! "watchId": "...", "grid": ...}`. The subprotocol is `haystack`. After an HTTP SCRAM login, the bearer token goes in the
//! upgrade request (`Authorization: BEARER authToken=...`) and in a first message
//! `{"authToken": "..."}`, which is what haystack-py's server waits for.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::sync::{Mutex, mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;

use crate::ops::ws::{self as wire, Envelope, MAX_MESSAGE_BYTES, SUBPROTOCOL};
use crate::value::{Grid, Value};

use super::api::HaystackApi;
use super::error::ClientError;
use super::request;

/// Requests in flight on one connection; more wait for a free slot.
const MAX_IN_FLIGHT: usize = 1024;
/// Server pushes kept until read; older ones are dropped past this.
const MAX_QUEUED_PUSHES: usize = 4096;

/// The WebSocket URL of an HTTP API base URL: `http://h:p/api/` → `ws://h:p/api/ws`
/// (`https` → `wss`); `None` for other schemes.
pub fn websocket_url(api: &str) -> Option<String> {
    let api = if api.ends_with('/') {
        api.to_owned()
    } else {
        format!("{api}/")
    };
    api.strip_prefix("http://")
        .map(|rest| format!("ws://{rest}ws"))
        .or_else(|| {
            api.strip_prefix("https://")
                .map(|rest| format!("wss://{rest}ws"))
        })
}

/// A message the server sent without being asked (a watch's changes).
#[derive(Debug, Clone, PartialEq)]
pub struct WsPush {
    /// The envelope's `type` (`watch`).
    pub kind: String,
    /// The watch it belongs to, for `watch` pushes.
    pub watch_id: Option<String>,
    /// The changed entities.
    pub grid: Grid,
}

/// Where the answer to one request goes.
type Answer = oneshot::Sender<Result<Grid, ClientError>>;
/// One request for the connection task: its id, the message, and where the answer goes.
type Outgoing = (String, String, Answer);
type Pending = HashMap<String, Answer>;

/// A Haystack client over one WebSocket connection. Every op of [`HaystackApi`] works;
/// calls from several tasks share the connection.
#[derive(Debug)]
pub struct WsClient {
    outgoing: mpsc::Sender<Outgoing>,
    pushes: Mutex<mpsc::Receiver<WsPush>>,
    next_id: AtomicU64,
    timeout: Duration,
}

impl WsClient {
    /// Connects to `url` (`ws://host:port/api/ws`), sending `auth_token` (from
    /// [`super::HaystackClient::auth_token`]) when the server wants a login.
    pub async fn connect(
        url: &str,
        auth_token: Option<&str>,
        timeout: Duration,
    ) -> Result<Self, ClientError> {
        let mut upgrade = url
            .into_client_request()
            .map_err(|e| ClientError::Config(format!("`{url}`: {e}")))?;
        let headers = upgrade.headers_mut();
        headers.insert(
            "Sec-WebSocket-Protocol",
            HeaderValue::from_static(SUBPROTOCOL),
        );
        if let Some(token) = auth_token {
            let bearer = HeaderValue::from_str(&format!("BEARER authToken={token}"))
                .map_err(|_| ClientError::Config("auth token is not header text".into()))?;
            headers.insert("Authorization", bearer);
        }
        let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE_BYTES))
            .max_frame_size(Some(MAX_MESSAGE_BYTES));
        let connecting = tokio_tungstenite::connect_async_with_config(upgrade, Some(config), true);
        let (mut socket, _) = tokio::time::timeout(timeout, connecting)
            .await
            .map_err(|_| ClientError::Transport {
                url: url.to_owned(),
                message: "timed out".into(),
            })?
            .map_err(|e| ClientError::Transport {
                url: url.to_owned(),
                message: e.to_string(),
            })?;
        tracing::debug!(
            url,
            token_sent = auth_token.is_some(),
            "websocket connected"
        );
        if let Some(token) = auth_token {
            let hello = serde_json::json!({ "authToken": token }).to_string();
            socket
                .send(Message::text(hello))
                .await
                .map_err(|e| ClientError::WebSocket(e.to_string()))?;
        }
        let (outgoing, requests) = mpsc::channel(MAX_IN_FLIGHT);
        let (push_sender, pushes) = mpsc::channel(MAX_QUEUED_PUSHES);
        tokio::spawn(run(socket, requests, push_sender));
        Ok(Self {
            outgoing,
            pushes: Mutex::new(pushes),
            next_id: AtomicU64::new(1),
            timeout,
        })
    }

    /// The next push from the server (watch changes), or `None` once the connection closed.
    pub async fn next_push(&self) -> Option<WsPush> {
        self.pushes.lock().await.recv().await
    }
}

impl HaystackApi for WsClient {
    async fn call(&self, op: &str, grid: &Grid) -> Result<Grid, ClientError> {
        let started = std::time::Instant::now();
        let result = self.call_unlogged(op, grid).await;
        let duration_ms = started.elapsed().as_secs_f64() * 1000.0;
        match &result {
            Ok(_) => tracing::debug!(op, duration_ms, "websocket op"),
            Err(error) => tracing::info!(op, error = %error, duration_ms, "websocket op failed"),
        }
        result
    }
}

impl WsClient {
    /// One op over the WebSocket, without its log line (see [`HaystackApi::call`]).
    async fn call_unlogged(&self, op: &str, grid: &Grid) -> Result<Grid, ClientError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed).to_string();
        let message = wire::encode_request(&id, op, grid);
        let (answer, receiver) = oneshot::channel();
        self.outgoing
            .send((id, message, answer))
            .await
            .map_err(|_| ClientError::WebSocket("the connection is closed".into()))?;
        match tokio::time::timeout(self.timeout, receiver).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(ClientError::WebSocket("the connection closed".into())),
            Err(_) => Err(ClientError::Transport {
                url: format!("WebSocket op {op}"),
                message: "timed out".into(),
            }),
        }
    }
}

/// Moves requests out and answers in until either side closes.
async fn run<S>(
    socket: tokio_tungstenite::WebSocketStream<S>,
    mut requests: mpsc::Receiver<Outgoing>,
    pushes: mpsc::Sender<WsPush>,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let (mut sink, mut stream) = socket.split();
    let pending: Arc<std::sync::Mutex<Pending>> = Arc::default();
    loop {
        tokio::select! {
            request = requests.recv() => {
                let Some((id, message, answer)) = request else { break };
                if let Ok(mut table) = pending.lock() {
                    table.insert(id, answer);
                }
                if sink.send(Message::text(message)).await.is_err() {
                    break;
                }
            }
            incoming = stream.next() => {
                let text = match incoming {
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(Message::Binary(_) | Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
                    Some(Ok(Message::Close(_)) | Err(_)) | None => break,
                };
                dispatch(text.as_str(), &pending, &pushes);
            }
        }
    }
    // Whoever still waits learns that the connection is gone.
    if let Ok(mut table) = pending.lock() {
        for (_, answer) in table.drain() {
            let _ = answer.send(Err(ClientError::WebSocket("the connection closed".into())));
        }
    }
}

/// Routes one message: an answer to its waiting caller, a push to the push queue.
fn dispatch(text: &str, pending: &std::sync::Mutex<Pending>, pushes: &mpsc::Sender<WsPush>) {
    let Ok(envelope) = Envelope::decode(text, MAX_MESSAGE_BYTES) else {
        return; // not an envelope: nothing can be routed
    };
    let grid = envelope.grid().map_err(ClientError::from);
    match envelope.id {
        Some(_) => {
            // Ids are sent as strings; a server echoing them as numbers is accepted too.
            let Some(id) = envelope.id_text() else { return };
            let answer = pending.lock().ok().and_then(|mut table| table.remove(&id));
            if let Some(answer) = answer {
                let result = match grid {
                    Ok(Some(grid)) => request::check_response(grid),
                    Ok(None) => Err(ClientError::WebSocket(format!("answer {id} has no grid"))),
                    Err(e) => Err(e),
                };
                let _ = answer.send(result);
            }
        }
        None => {
            if let Ok(Some(grid)) = grid {
                let watch_id = envelope
                    .watch_id
                    .or_else(|| match grid.meta.get("watchId") {
                        Some(Value::Str(id)) => Some(id.clone()),
                        _ => None,
                    });
                let push = WsPush {
                    kind: envelope.kind.unwrap_or_else(|| "watch".to_owned()),
                    watch_id,
                    grid,
                };
                let _ = pushes.try_send(push);
            }
        }
    }
}
