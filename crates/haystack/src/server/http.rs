//! The HTTP driver: accepts connections (TLS optional), serves HTTP/1.1 with hyper, reads
//! bounded bodies, authenticates with the `Authorization` header, and hands each request to
//! [`crate::ops::Engine::handle_http`].

use std::convert::Infallible;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::http::Extensions;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;

use crate::auth::{AuthHeader, AuthResponse, Session};
use crate::ops::{CallContext, HttpRequest};

use super::body_budget::{BudgetExceeded, Reservation};
use super::{Shared, now_ms, stopped, ws};

/// Largest request head (request line and headers) read, in bytes.
const MAX_HEAD_BYTES: usize = 128 * 1024;

/// The body of a response made from shared text, without copying it.
struct SharedText(Arc<str>);

impl AsRef<[u8]> for SharedText {
    fn as_ref(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

pub(crate) type Body = Full<Bytes>;

pub(crate) fn text_response(
    status: u16,
    content_type: &'static str,
    body: Bytes,
) -> Response<Body> {
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

pub(crate) fn plain(status: u16, message: &str) -> Response<Body> {
    text_response(
        status,
        "text/plain; charset=utf-8",
        Bytes::from(message.to_owned()),
    )
}

fn header_value(text: &str) -> HeaderValue {
    HeaderValue::from_str(text).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// Accepts connections until shutdown, then waits (up to the grace period) for the
/// connections to finish their requests.
pub(crate) async fn accept_loop(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    shared: Arc<Shared>,
    max_connections: usize,
) {
    let slots = Arc::new(Semaphore::new(max_connections));
    let mut shutdown = shared.shutdown.clone();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stopped(&mut shutdown) => break,
        };
        let (stream, peer) = match accepted {
            Ok(pair) => pair,
            Err(_) => {
                // Out of descriptors or a connection reset before accept: back off briefly.
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            continue; // over the connection limit: the stream is dropped (closed)
        };
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            let _slot = slot;
            match tls {
                None => serve(stream, shared, peer.ip()).await,
                Some(acceptor) => {
                    let handshake = acceptor.accept(stream);
                    if let Ok(Ok(stream)) =
                        tokio::time::timeout(shared.timeouts.tls_handshake, handshake).await
                    {
                        serve(stream, shared, peer.ip()).await;
                    }
                }
            }
        });
    }
    drop(listener);
    // Every connection holds a slot until it ends: wait for all of them to come back.
    let all = u32::try_from(max_connections).unwrap_or(u32::MAX);
    let grace = shared.timeouts.shutdown_grace + std::time::Duration::from_secs(1);
    let _ = tokio::time::timeout(grace, slots.acquire_many(all)).await;
}

/// The address a request came from, put in its extensions by [`serve`]: logins in progress
/// are bounded per address ([`crate::auth::AuthServer::handle_from`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ClientAddress(pub IpAddr);

/// The address of the client that sent `req`.
pub(crate) fn client_address(req: &Request<Incoming>) -> Option<IpAddr> {
    req.extensions().get::<ClientAddress>().map(|a| a.0)
}

/// Serves one connection from `peer`; at shutdown, finishes the request in progress and
/// closes.
async fn serve<S>(stream: S, shared: Arc<Shared>, peer: IpAddr)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let header_timeout = shared.timeouts.header_read;
    let grace = shared.timeouts.shutdown_grace;
    let mut shutdown = shared.shutdown.clone();
    let cases = HEADER_CASES.get_or_init(header_case_template).await.clone();
    let service = service_fn(move |mut req: Request<Incoming>| {
        req.extensions_mut().insert(ClientAddress(peer));
        let shared = shared.clone();
        let cases = cases.clone();
        async move {
            let started = Instant::now();
            let method = req.method().clone();
            let op = op_of(req.uri().path(), &shared.prefix).to_owned();
            let mut user = String::new();
            let mut response = handle(shared, req, &mut user).await;
            log_request(peer, &method, &op, &user, response.status(), started);
            response.extensions_mut().extend(cases);
            Ok::<_, Infallible>(response)
        }
    });
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        // Title-Case header names (`Content-Type`), and the exact case of the auth headers
        // from `HEADER_CASES`: one older client reads them case-sensitively.
        .title_case_headers(true)
        .header_read_timeout(header_timeout)
        .max_buf_size(MAX_HEAD_BYTES)
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    tokio::pin!(connection);
    tokio::select! {
        _ = connection.as_mut() => return,
        _ = stopped(&mut shutdown) => {}
    }
    connection.as_mut().graceful_shutdown();
    let _ = tokio::time::timeout(grace, connection).await;
}

/// Extensions that make hyper write the auth headers as `WWW-Authenticate` and
/// `Authentication-Info` (title case alone gives `Www-Authenticate`).
///
/// hyper keeps the case of header names only through a private extension that it records
/// when it reads a request with `preserve_header_case`, and that it honours on a response
/// (the documented use is a proxy passing a request's case on). So the template is the
/// extensions of a request hyper reads once, in memory, with those names spelt right.
static HEADER_CASES: tokio::sync::OnceCell<Extensions> = tokio::sync::OnceCell::const_new();

async fn header_case_template() -> Extensions {
    const REQUEST: &[u8] = b"GET / HTTP/1.1\r\nHost: localhost\r\nWWW-Authenticate: x\r\n\
        Authentication-Info: x\r\nConnection: close\r\n\r\n";
    let (mut client, server) = tokio::io::duplex(1024);
    let seen = Arc::new(std::sync::Mutex::new(None));
    let keep = seen.clone();
    let service = service_fn(move |req: Request<Incoming>| {
        if let Ok(mut slot) = keep.lock() {
            *slot = Some(req.extensions().clone());
        }
        async { Ok::<_, Infallible>(Response::new(Body::default())) }
    });
    let connection = http1::Builder::new()
        .preserve_header_case(true)
        .serve_connection(TokioIo::new(server), service);
    let exchange = async {
        let _ = client.write_all(REQUEST).await;
        let _ = client.read_to_end(&mut Vec::new()).await;
    };
    let timeout = std::time::Duration::from_secs(5);
    let _ = tokio::time::timeout(timeout, async { tokio::join!(connection, exchange) }).await;
    let template = seen.lock().ok().and_then(|mut slot| slot.take());
    template.unwrap_or_default()
}

/// What the `Authorization` header allows.
pub(crate) enum Authorized {
    /// Serve the request as this caller.
    Caller(CallContext),
    /// The login's last step: serve as this caller and send `Authentication-Info`.
    LoggedIn(CallContext, String),
    /// Answer with this response instead.
    Refused(Response<Body>),
}

/// [`authorize`], plus what a store shared with other server processes adds: a login's
/// session is recorded there (before the answer goes out, so the token works on the other
/// processes at once), and a bearer token unknown here but recorded there is adopted.
pub(crate) async fn authorize_shared(
    shared: &Shared,
    authorization: Option<&str>,
    source: Option<IpAddr>,
) -> Authorized {
    let answer = authorize(shared, authorization, source);
    let backend = shared.engine.backend().clone();
    let Some(store) = backend.shared_auth() else {
        return answer;
    };
    match answer {
        Authorized::LoggedIn(ctx, info) => {
            let token = AuthHeader::parse(&info, false)
                .ok()
                .and_then(|h| h.param("authToken").map(str::to_owned));
            let idle = shared.auth().map(|a| a.token_idle_timeout());
            if let (Some(token), Some(idle)) = (token, idle) {
                let expires =
                    now_ms().saturating_add(i64::try_from(idle.as_millis()).unwrap_or(i64::MAX));
                let key = crate::auth::session_key_hex(&token);
                if let Err(e) = store
                    .put_session(&key, &ctx.owner, ctx.role.name(), expires)
                    .await
                {
                    // The login still holds on this process.
                    tracing::warn!(
                        user = %ctx.owner,
                        "could not share the session with the other servers: {e}"
                    );
                }
            }
            Authorized::LoggedIn(ctx, info)
        }
        Authorized::Refused(response) => {
            let Some(token) = bearer_token(authorization) else {
                return Authorized::Refused(response);
            };
            let key = crate::auth::session_key_hex(&token);
            let Ok(Some((user, role))) = store.session(&key, now_ms()).await else {
                return Authorized::Refused(response);
            };
            let Ok(role) = role.parse::<crate::auth::Role>() else {
                return Authorized::Refused(response);
            };
            let adopted = shared.auth().is_some_and(|mut auth| {
                auth.adopt_session(&token, Session { user, role }, Instant::now())
            });
            if adopted {
                authorize(shared, authorization, source)
            } else {
                Authorized::Refused(response)
            }
        }
        other => other,
    }
}

fn context_of(session: &Session) -> CallContext {
    CallContext::user(&session.user, session.role, now_ms())
}

/// Runs the `Authorization` header of a request from `source` through the auth state
/// machine.
pub(crate) fn authorize(
    shared: &Shared,
    authorization: Option<&str>,
    source: Option<IpAddr>,
) -> Authorized {
    let Some(mut auth) = shared.auth() else {
        let role = shared.anonymous.unwrap_or(crate::auth::Role::Viewer);
        return Authorized::Caller(CallContext::anonymous(role, now_ms()));
    };
    if authorization.is_none()
        && let Some(role) = shared.anonymous
    {
        return Authorized::Caller(CallContext::anonymous(role, now_ms()));
    }
    let answer = auth.handle_from(authorization, source, Instant::now());
    drop(auth);
    match answer {
        AuthResponse::Authorized(session) => Authorized::Caller(context_of(&session)),
        AuthResponse::LoggedIn {
            authentication_info,
            session,
        } => Authorized::LoggedIn(context_of(&session), authentication_info),
        AuthResponse::Challenge { www_authenticate } => {
            let mut r = plain(401, "authentication continues");
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, header_value(&www_authenticate));
            Authorized::Refused(r)
        }
        AuthResponse::Unauthorized(message) => {
            let mut r = plain(401, &message);
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("HELLO"));
            Authorized::Refused(r)
        }
        AuthResponse::BadRequest(message) => Authorized::Refused(plain(400, &message)),
        AuthResponse::Forbidden(message) => Authorized::Refused(plain(403, &message)),
        AuthResponse::Throttled { retry_after } => Authorized::Refused(retry_later(
            429,
            "too many failed logins: wait and try again",
            retry_after,
        )),
        AuthResponse::TooManyLogins { retry_after } => Authorized::Refused(retry_later(
            429,
            "too many logins in progress from this address: wait and try again",
            retry_after,
        )),
        AuthResponse::Busy => Authorized::Refused(plain(503, "too many logins in progress")),
    }
}

/// The bearer token of an `Authorization` header, in the Auth chapter's form or RFC 6750's
/// (see [`crate::auth::bearer_token`]).
pub(crate) fn bearer_token(authorization: Option<&str>) -> Option<String> {
    authorization.and_then(crate::auth::bearer_token)
}

/// Reads a body of at most `max` bytes, reserving each chunk from the budget first.
async fn receive_body(
    mut body: Incoming,
    max: usize,
    reservation: &mut Reservation,
) -> Result<Bytes, Response<Body>> {
    let mut data = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| plain(400, "the request body could not be read"))?;
        let Ok(chunk) = frame.into_data() else {
            continue; // trailers
        };
        if data.len() + chunk.len() > max {
            return Err(plain(413, &format!("request body exceeds {max} bytes")));
        }
        let needed = data.len() + chunk.len();
        reservation.at_least(needed).map_err(over_budget)?;
        data.extend_from_slice(&chunk);
    }
    Ok(data.freeze())
}

/// The answer to a body the budgets cannot hold: 503 when the server's is spent, 429 when
/// the user's is, each with a Retry-After.
fn over_budget(exceeded: BudgetExceeded) -> Response<Body> {
    let status = match exceeded {
        BudgetExceeded::Server(_) => 503,
        BudgetExceeded::User(_) => 429,
    };
    retry_later(
        status,
        &exceeded.to_string(),
        std::time::Duration::from_secs(1),
    )
}

/// A refusal that says when to come back: `status` with `message` and a Retry-After of
/// `after` (whole seconds, at least 1).
fn retry_later(status: u16, message: &str, after: std::time::Duration) -> Response<Body> {
    let mut r = plain(status, message);
    let secs = after.as_secs().max(1).to_string();
    r.headers_mut()
        .insert(header::RETRY_AFTER, header_value(&secs));
    r
}

fn header_str(req: &Request<Incoming>, name: header::HeaderName) -> Option<&str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

/// The op a request path names: what follows the prefix (`/api/read` -> `read`), else the
/// path itself.
fn op_of<'a>(path: &'a str, prefix: &str) -> &'a str {
    path.strip_prefix(prefix)
        .map_or(path, |rest| rest.trim_start_matches('/'))
}

/// The log line of one request: who asked what, and the answer. Headers (the
/// `Authorization` with its SCRAM proofs and tokens) and bodies are never logged.
fn log_request(
    peer: IpAddr,
    method: &hyper::Method,
    op: &str,
    user: &str,
    status: StatusCode,
    started: Instant,
) {
    // Milliseconds to the microsecond.
    let duration_ms = (started.elapsed().as_secs_f64() * 1_000_000.0).round() / 1000.0;
    let status = status.as_u16();
    if status >= 500 {
        tracing::warn!(%peer, method = %method, op, user, status, duration_ms, "request");
    } else {
        tracing::info!(%peer, method = %method, op, user, status, duration_ms, "request");
    }
}

/// Serves one request; `user` is set to the caller's name once known (empty: anonymous or
/// not logged in yet).
async fn handle(shared: Arc<Shared>, req: Request<Incoming>, user: &mut String) -> Response<Body> {
    if ws::is_upgrade(&req, &shared.prefix) {
        return ws::upgrade(shared, req);
    }
    let authorization = header_str(&req, header::AUTHORIZATION).map(str::to_owned);
    let source = client_address(&req);
    let (mut ctx, login) = match authorize_shared(&shared, authorization.as_deref(), source).await {
        Authorized::Caller(ctx) => (ctx, None),
        Authorized::LoggedIn(ctx, info) => (ctx, Some(info)),
        Authorized::Refused(response) => return response,
    };
    user.clone_from(&ctx.owner);
    // The engine's `close` ends this token's session.
    ctx.token = bearer_token(authorization.as_deref());
    let max = shared.engine.limits().max_body_bytes;
    let declared = header_str(&req, header::CONTENT_LENGTH).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return plain(413, &format!("request body exceeds {max} bytes"));
    }
    // The body's bytes come out of the server's and the user's budgets as they arrive
    // (a declared length at once); they go back when this request is done.
    let budget_key = match source {
        Some(ip) if ctx.owner.is_empty() => ip.to_string(),
        _ => ctx.owner.clone(),
    };
    let mut reservation = shared.bodies.reservation(&budget_key);
    if let Some(n) = declared
        && let Err(e) = reservation.at_least(usize::try_from(n).unwrap_or(usize::MAX))
    {
        return over_budget(e);
    }
    let (parts, body) = req.into_parts();
    let received = tokio::time::timeout(
        shared.timeouts.body_read,
        receive_body(body, max, &mut reservation),
    )
    .await;
    let body = match received {
        Ok(Ok(body)) => body,
        Ok(Err(refusal)) => return refusal,
        Err(_) => return plain(408, "the request body took too long"),
    };
    let get = |name: header::HeaderName| parts.headers.get(name).and_then(|v| v.to_str().ok());
    let request = HttpRequest {
        method: parts.method.as_str(),
        path: parts.uri.path(),
        query: parts.uri.query(),
        content_type: get(header::CONTENT_TYPE),
        accept: get(header::ACCEPT),
        body: &body,
    };
    let answer = shared
        .engine
        .handle_http(&shared.prefix, &request, &ctx)
        .await;
    let body = Bytes::from_owner(SharedText(answer.body));
    let mut response = text_response(answer.status, answer.content_type, body);
    if answer.status == 405
        && let Some(op) = answer.op
    {
        // HEAD goes wherever GET does (hyper sends the headers of the GET answer only).
        let allow = if op.allows_get() {
            "GET, HEAD, POST"
        } else {
            "POST"
        };
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static(allow));
    }
    if let Some(info) = login {
        response
            .headers_mut()
            .insert("Authentication-Info", header_value(&info));
    }
    response
}
