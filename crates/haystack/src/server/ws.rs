//! The WebSocket API at `{prefix}/ws`: the ops over one connection, and watch changes
//! pushed by the server.
//!
//! The messages are [`crate::ops::ws`] envelopes (haystack-py's WebSocket API, JSON text,
//! subprotocol `haystack`): requests answered in order, batches, watch pushes for the
//! watches opened on this connection, and login — a bearer token from an HTTP login in the
//! upgrade request's `Authorization` header, or as a first message `{"authToken": "..."}`,
//! or SCRAM in `hello`/`scram` messages, which go through the same
//! [`crate::auth::AuthServer`] as HTTP logins (the messages become header values).
//! `{"type":"capabilities", ...}` (haystack-py's v2 negotiation) is answered with version
//! 1, no compression, no chunking: binary frames are not supported.

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use futures_util::{SinkExt, StreamExt};
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::{Role as WsRole, WebSocketConfig};

use crate::auth::{AuthHeader, AuthResponse};
use crate::ops::ws::{
    self as wire, Envelope, encode_auth_err as auth_err, json_string as json_str,
};
use crate::ops::{CallContext, Op, WireFormat};

use super::http::{Authorized, Body, authorize, bearer_token, client_address, plain};
use super::{Shared, now_ms, stopped};

/// Pending pushes per connection.
const PUSH_QUEUE: usize = 256;

/// Whether a request asks to open the WebSocket.
pub(crate) fn is_upgrade(req: &Request<Incoming>, prefix: &str) -> bool {
    req.uri().path().strip_prefix(prefix) == Some("/ws")
        && req
            .headers()
            .get(header::UPGRADE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

/// The logged-in caller of a connection (with the bearer token it used, which `close`
/// ends).
struct Login {
    ctx: CallContext,
}

/// Answers the upgrade request (101) and starts the connection task.
pub(crate) fn upgrade(shared: Arc<Shared>, mut req: Request<Incoming>) -> Response<Body> {
    let headers = req.headers();
    let version_ok = headers
        .get(header::SEC_WEBSOCKET_VERSION)
        .is_some_and(|v| v.as_bytes() == b"13");
    let Some(key) = headers
        .get(header::SEC_WEBSOCKET_KEY)
        .map(|k| k.as_bytes().to_vec())
    else {
        return plain(400, "WebSocket upgrade without Sec-WebSocket-Key");
    };
    if req.method() != hyper::Method::GET {
        return plain(400, "WebSocket upgrade must be a GET");
    }
    if !version_ok {
        let mut r = plain(426, "WebSocket version 13 only");
        r.headers_mut().insert(
            header::SEC_WEBSOCKET_VERSION,
            HeaderValue::from_static("13"),
        );
        return r;
    }
    let haystack_protocol = headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|p| p.trim() == "haystack");
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let source = client_address(&req);
    // A bearer token in the upgrade request logs the connection in; without one, the
    // client logs in with messages (or is anonymous where that is allowed).
    let login = if shared.auth.is_none() || authorization.is_some() {
        match authorize(&shared, authorization.as_deref(), source) {
            Authorized::Caller(mut ctx) | Authorized::LoggedIn(mut ctx, _) => {
                ctx.token = bearer_token(authorization.as_deref());
                Some(Login { ctx })
            }
            Authorized::Refused(response) => return response,
        }
    } else {
        shared.anonymous.map(|role| Login {
            ctx: CallContext::anonymous(role, now_ms()),
        })
    };
    let Ok(slot) = shared.ws_slots.clone().try_acquire_owned() else {
        return plain(503, "too many WebSocket connections");
    };
    let on_upgrade = hyper::upgrade::on(&mut req);
    tokio::spawn(async move {
        let _slot = slot;
        if let Ok(upgraded) = on_upgrade.await {
            let max = shared.engine.limits().max_body_bytes;
            let config = WebSocketConfig::default()
                .max_message_size(Some(max))
                .max_frame_size(Some(max));
            let socket = WebSocketStream::from_raw_socket(
                TokioIo::new(upgraded),
                WsRole::Server,
                Some(config),
            )
            .await;
            run(shared, socket, login, source).await;
        }
    });
    let mut response = Response::new(Body::default());
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let h = response.headers_mut();
    h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    h.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    if let Ok(accept) = HeaderValue::from_str(&derive_accept_key(&key)) {
        h.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
    }
    if haystack_protocol {
        h.insert(
            header::SEC_WEBSOCKET_PROTOCOL,
            HeaderValue::from_static("haystack"),
        );
    }
    response
}

/// What to do after a message.
enum Reply {
    Nothing,
    Send(String),
    /// Send this, then close the connection.
    SendAndClose(String),
}

/// One connection's state.
struct Connection {
    shared: Arc<Shared>,
    id: u64,
    login: Option<Login>,
    /// The client's address: its logins in progress are bounded per address.
    source: Option<IpAddr>,
}

impl Connection {
    /// Runs a hello or scram message through the auth state machine.
    fn scram(&mut self, envelope: &Envelope<'_>, hello: bool) -> Reply {
        let Some(mut auth) = self.shared.auth() else {
            // No logins on this server: say so the way a login succeeds.
            return Reply::Send("{\"type\":\"authOk\",\"authToken\":\"\"}".into());
        };
        let header = if hello {
            format!(
                "HELLO username={}",
                envelope.username.as_deref().unwrap_or("")
            )
        } else {
            format!(
                "SCRAM handshakeToken={}, data={}",
                envelope.handshake_token.as_deref().unwrap_or(""),
                envelope.data.as_deref().unwrap_or("")
            )
        };
        let answer = auth.handle_from(Some(&header), self.source, Instant::now());
        drop(auth);
        match answer {
            AuthResponse::Challenge { www_authenticate } => {
                let Ok(h) = AuthHeader::parse(&www_authenticate, true) else {
                    return Reply::SendAndClose(auth_err("login failed"));
                };
                let mut out = format!(
                    "{{\"type\":{},\"handshakeToken\":{},\"hash\":{}",
                    if hello { "\"hello\"" } else { "\"scram\"" },
                    json_str(h.param("handshakeToken").unwrap_or("")),
                    json_str(h.param("hash").unwrap_or("SHA-256")),
                );
                if let Some(data) = h.param("data") {
                    out.push_str(",\"data\":");
                    out.push_str(&json_str(data));
                }
                out.push('}');
                Reply::Send(out)
            }
            AuthResponse::LoggedIn {
                authentication_info,
                session,
            } => {
                let h = AuthHeader::parse(&authentication_info, false).ok();
                let param = |name: &str| {
                    h.as_ref()
                        .and_then(|h| h.param(name))
                        .unwrap_or("")
                        .to_owned()
                };
                let token = param("authToken");
                let reply = format!(
                    "{{\"type\":\"authOk\",\"authToken\":{},\"data\":{}}}",
                    json_str(&token),
                    json_str(&param("data"))
                );
                let mut ctx = CallContext::user(&session.user, session.role, now_ms());
                ctx.connection = Some(self.id);
                ctx.token = Some(token);
                self.login = Some(Login { ctx });
                Reply::Send(reply)
            }
            AuthResponse::Forbidden(m)
            | AuthResponse::BadRequest(m)
            | AuthResponse::Unauthorized(m) => Reply::SendAndClose(auth_err(&m)),
            AuthResponse::Throttled { .. } => {
                Reply::SendAndClose(auth_err("too many failed logins: wait and try again"))
            }
            AuthResponse::TooManyLogins { .. } => Reply::SendAndClose(auth_err(
                "too many logins in progress from this address: wait and try again",
            )),
            AuthResponse::Busy | AuthResponse::Authorized(_) => {
                Reply::SendAndClose(auth_err("login failed"))
            }
        }
    }

    /// Checks a token sent as `{"authToken": ...}`.
    fn token(&mut self, token: &str) -> Reply {
        let Some(mut auth) = self.shared.auth() else {
            return Reply::Nothing;
        };
        let answer = auth.handle(Some(&format!("BEARER authToken={token}")), Instant::now());
        drop(auth);
        match answer {
            AuthResponse::Authorized(session) => {
                let mut ctx = CallContext::user(&session.user, session.role, now_ms());
                ctx.connection = Some(self.id);
                ctx.token = Some(token.to_owned());
                self.login = Some(Login { ctx });
                Reply::Nothing
            }
            _ => Reply::SendAndClose(auth_err("invalid or expired auth token")),
        }
    }

    /// Answers one envelope; `None` for messages that get no answer.
    async fn envelope(&mut self, text: &str) -> Reply {
        let limit = self.shared.engine.limits().max_body_bytes;
        let Ok(envelope) = Envelope::decode(text, limit) else {
            return Reply::Nothing; // not a JSON object: ignored, as haystack-py does
        };
        match (envelope.kind.as_deref(), &envelope.op, &envelope.auth_token) {
            (Some("hello"), None, _) => return self.scram(&envelope, true),
            (Some("scram"), None, _) => return self.scram(&envelope, false),
            (Some("capabilities"), None, _) => return Reply::Send(wire::CAPABILITIES.into()),
            (_, None, Some(token)) => return self.token(token),
            (_, None, None) => {
                return Reply::Send(wire::encode_error(
                    envelope.id,
                    envelope.ch,
                    "WebSocket message without `op`",
                ));
            }
            _ => {}
        }
        let op_name = envelope.op.as_deref().unwrap_or("");
        let error = |dis: &str| wire::encode_error(envelope.id, envelope.ch, dis);
        let Some(login) = &mut self.login else {
            return Reply::Send(error(
                "log in first (hello/scram messages or an auth token)",
            ));
        };
        let Some(op) = Op::from_name(op_name) else {
            return Reply::Send(error(&format!("unknown op `{op_name}`")));
        };
        let grid = match envelope.request_grid() {
            Ok(grid) => grid,
            Err(e) => return Reply::Send(error(&e.to_string())),
        };
        login.ctx.now_ms = now_ms();
        let started = std::time::Instant::now();
        let (error_grid, text) = self
            .shared
            .engine
            .call_encoded(&login.ctx, op, &grid, WireFormat::Json)
            .await;
        // One line per op, as for HTTP requests; never the grids or the auth token.
        let duration_ms = (started.elapsed().as_secs_f64() * 1_000_000.0).round() / 1000.0;
        let user = login.ctx.owner.as_str();
        tracing::info!(op = op_name, user, error_grid, duration_ms, "websocket op");
        let reply = wire::encode_answer(envelope.id, envelope.ch, &text);
        if op == Op::Close {
            // The engine ended the session; the connection ends with it.
            return Reply::SendAndClose(reply);
        }
        Reply::Send(reply)
    }

    /// Answers a text message: one envelope or a batch (a JSON array of envelopes).
    async fn message(&mut self, text: &str) -> Reply {
        if !wire::is_batch(text) {
            return self.envelope(text).await;
        }
        let limit = self.shared.engine.limits().max_body_bytes;
        let Ok(items) = wire::decode_batch(text, limit) else {
            return Reply::Nothing;
        };
        let mut out = String::from("[");
        let mut close = false;
        for item in &items {
            let (text, last) = match self.envelope(item.get()).await {
                Reply::Nothing => continue,
                Reply::Send(s) => (s, false),
                Reply::SendAndClose(s) => (s, true),
            };
            if out.len() > 1 {
                out.push(',');
            }
            out.push_str(&text);
            if last {
                close = true;
                break;
            }
        }
        out.push(']');
        if close {
            Reply::SendAndClose(out)
        } else {
            Reply::Send(out)
        }
    }
}

async fn run<S>(
    shared: Arc<Shared>,
    mut socket: WebSocketStream<S>,
    login: Option<Login>,
    source: Option<IpAddr>,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let id = shared.next_connection.fetch_add(1, Ordering::Relaxed);
    let login = login.map(|mut l| {
        l.ctx.connection = Some(id);
        l
    });
    let (push_tx, mut pushes) = mpsc::channel::<String>(PUSH_QUEUE);
    if let Ok(mut pushers) = shared.pushers.lock() {
        pushers.insert(id, push_tx);
    }
    let mut conn = Connection {
        shared: shared.clone(),
        id,
        login,
        source,
    };
    let mut shutdown = shared.shutdown.clone();
    let login_deadline = tokio::time::Instant::now() + shared.timeouts.ws_auth;
    let idle = shared.timeouts.ws_idle;
    loop {
        let logged_in = conn.login.is_some();
        let reply = tokio::select! {
            incoming = tokio::time::timeout(idle, socket.next()) => {
                let message = match incoming {
                    Ok(Some(Ok(message))) => message,
                    // Idle too long, closed, or a protocol error (e.g. an oversized message).
                    _ => break,
                };
                match message {
                    Message::Text(text) => conn.message(text.as_str()).await,
                    Message::Close(_) => break,
                    Message::Binary(_) => Reply::Send(wire::encode_error(
                        None,
                        None,
                        "binary frames are not supported: send JSON text envelopes",
                    )),
                    Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => Reply::Nothing,
                }
            }
            Some(watch_id) = pushes.recv() => match &mut conn.login {
                Some(login) => {
                    login.ctx.now_ms = now_ms();
                    match shared.engine.push_changes(&login.ctx, &watch_id).await {
                        Some(grid) => Reply::Send(wire::encode_push(&watch_id, &grid)),
                        None => Reply::Nothing,
                    }
                }
                None => Reply::Nothing,
            },
            _ = tokio::time::sleep_until(login_deadline), if !logged_in => {
                Reply::SendAndClose(auth_err("no login in time"))
            }
            _ = stopped(&mut shutdown) => break,
        };
        match reply {
            Reply::Nothing => {}
            Reply::Send(text) => {
                if socket.send(Message::text(text)).await.is_err() {
                    break;
                }
            }
            Reply::SendAndClose(text) => {
                let _ = socket.send(Message::text(text)).await;
                break;
            }
        }
    }
    let _ = socket.close(None).await;
    if let Ok(mut pushers) = shared.pushers.lock() {
        pushers.remove(&id);
    }
    shared.engine.close_connection(id);
}
