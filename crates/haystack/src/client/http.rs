//! [`HaystackClient`]: the Haystack HTTP API from the client side (reqwest over rustls):
//! SCRAM login, every standard op, content negotiation, watches as streams.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, WWW_AUTHENTICATE};

use crate::auth::ScramClient;
use crate::codec::{Format, MAX_INPUT_BYTES, zinc};
use crate::value::{Grid, Ref, Value};

use super::api::HaystackApi;
use super::error::ClientError;
use super::request;

/// Most 401 challenges a login answers before giving up (HELLO, client-first, client-final).
const MAX_LOGIN_ROUND_TRIPS: usize = 4;

/// How a [`HaystackClient`] connects and talks.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// User name for SCRAM login; `None` talks to a server without authentication.
    pub username: Option<String>,
    /// Password for SCRAM login.
    pub password: Option<String>,
    /// Encoding of requests and of the responses asked for (Zinc, the spec's default, or
    /// JSON v4).
    pub format: Format,
    /// Limit on each request, from connecting to the last byte of the answer.
    pub timeout: Duration,
    /// Extra trusted CA certificates (PEM) for `https` servers with a private CA.
    pub root_certificates_pem: Vec<Vec<u8>>,
    /// Client certificate and key (one PEM) for servers that want mutual TLS.
    pub identity_pem: Option<Vec<u8>>,
    /// Largest response body accepted.
    pub max_response_bytes: usize,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            username: None,
            password: None,
            format: Format::Zinc,
            timeout: Duration::from_secs(30),
            root_certificates_pem: Vec::new(),
            identity_pem: None,
            max_response_bytes: MAX_INPUT_BYTES,
        }
    }
}

impl ClientOptions {
    /// Options that log in as `username` with `password`.
    pub fn login(username: &str, password: &str) -> Self {
        Self {
            username: Some(username.to_owned()),
            password: Some(password.to_owned()),
            ..Self::default()
        }
    }
}

/// A Haystack HTTP client for one server (base URL such as `http://host:8080/api/`).
///
/// Cheap to clone: clones share the connection pool and the auth token.
#[derive(Debug, Clone)]
pub struct HaystackClient {
    http: reqwest::Client,
    api: String,
    options: ClientOptions,
    bearer: Option<String>,
}

impl HaystackClient {
    /// Connects to the API at `url` (with or without the trailing `/`) and logs in when
    /// the options carry a user name.
    pub async fn connect(url: &str, options: ClientOptions) -> Result<Self, ClientError> {
        let api = if url.ends_with('/') {
            url.to_owned()
        } else {
            format!("{url}/")
        };
        if !(api.starts_with("http://") || api.starts_with("https://")) {
            return Err(ClientError::Config(format!(
                "`{url}` is not an http:// or https:// URL (e.g. http://127.0.0.1:8080/api)"
            )));
        }
        let mut builder = reqwest::Client::builder()
            .timeout(options.timeout)
            .tcp_nodelay(true)
            .use_rustls_tls();
        for pem in &options.root_certificates_pem {
            let certificate = reqwest::Certificate::from_pem(pem)
                .map_err(|e| ClientError::Config(format!("CA certificate: {e}")))?;
            builder = builder.add_root_certificate(certificate);
        }
        if let Some(pem) = &options.identity_pem {
            let identity = reqwest::Identity::from_pem(pem)
                .map_err(|e| ClientError::Config(format!("client certificate: {e}")))?;
            builder = builder.identity(identity);
        }
        let http = builder
            .build()
            .map_err(|e| ClientError::Config(e.to_string()))?;
        let mut client = Self {
            http,
            api,
            options,
            bearer: None,
        };
        if client.options.username.is_some() {
            client.login().await?;
        }
        Ok(client)
    }

    /// The API's base URL.
    pub fn url(&self) -> &str {
        &self.api
    }

    /// The bearer token of the login, for other channels (the WebSocket API) to reuse.
    pub fn auth_token(&self) -> Option<&str> {
        self.bearer
            .as_deref()
            .and_then(|header| header.split_once("authToken="))
            .map(|(_, token)| token.trim())
    }

    /// The HELLO / SCRAM / BEARER exchange of the Haystack auth spec, against `about`.
    async fn login(&mut self) -> Result<(), ClientError> {
        let user = self.options.username.clone().unwrap_or_default();
        let password = self.options.password.clone().unwrap_or_default();
        let mut scram = ScramClient::new(&user, &password)?;
        let url = format!("{}about", self.api);
        let mut authorization = scram.hello_header();
        // The steps are logged by name and status only: the headers carry the SCRAM
        // nonces, proofs and finally the bearer token.
        let mut step = "hello";
        for _ in 0..MAX_LOGIN_ROUND_TRIPS {
            tracing::debug!(user = %user, step, "login: sending");
            let response = self
                .http
                .get(&url)
                .header(AUTHORIZATION, &authorization)
                .send()
                .await
                .map_err(|e| transport(&url, &e))?;
            let status = response.status();
            tracing::debug!(user = %user, step, status = status.as_u16(), "login: answered");
            match status {
                StatusCode::UNAUTHORIZED => {
                    let Some(challenge) = header_text(response.headers(), WWW_AUTHENTICATE) else {
                        tracing::info!(user = %user, step, status = 401, "login refused");
                        return Err(ClientError::LoginRefused { user, status: 401 });
                    };
                    authorization = scram.on_challenge(&challenge).inspect_err(|e| {
                        tracing::info!(user = %user, step, error = %e, "login refused");
                    })?;
                    step = if step == "hello" {
                        "scram-first"
                    } else {
                        "scram-final"
                    };
                }
                StatusCode::OK => {
                    let Some(info) = header_text(response.headers(), "authentication-info") else {
                        // A server without authentication answers `about` at once.
                        tracing::debug!(user = %user, "login: the server wants none");
                        return Ok(());
                    };
                    let token = scram.on_success(&info).inspect_err(|e| {
                        tracing::info!(user = %user, step, error = %e, "login refused");
                    })?;
                    self.bearer = Some(format!("BEARER authToken={token}"));
                    tracing::debug!(user = %user, "login: authenticated");
                    return Ok(());
                }
                // A wrong path is no refused login: say where to look.
                StatusCode::NOT_FOUND => {
                    return Err(ClientError::NotFound {
                        url: self.api.clone(),
                    });
                }
                status => {
                    tracing::info!(user = %user, step, status = status.as_u16(), "login refused");
                    return Err(ClientError::LoginRefused {
                        user,
                        status: status.as_u16(),
                    });
                }
            }
        }
        tracing::info!(user = %user, step, status = 401, "login refused: too many challenges");
        Err(ClientError::LoginRefused { user, status: 401 })
    }

    /// POSTs `request` to `op` and returns the response grid (error grids become
    /// [`ClientError::Server`]); [`HaystackApi`] gives every op on top of it.
    pub async fn post(&self, op: &str, request: &Grid) -> Result<Grid, ClientError> {
        let url = format!("{}{}", self.api, op);
        let body = self.options.format.encode_grid(request);
        let mut builder = self
            .http
            .post(&url)
            .header(CONTENT_TYPE, content_type(self.options.format))
            .header(ACCEPT, self.options.format.mime())
            .body(body);
        if let Some(bearer) = &self.bearer {
            builder = builder.header(AUTHORIZATION, bearer);
        }
        self.send_logged("POST", op, &url, builder).await
    }

    /// GETs `op` with Zinc-encoded query parameters (ops without side effects).
    pub async fn call_get(&self, op: &str, params: &[(&str, Value)]) -> Result<Grid, ClientError> {
        let url = format!("{}{}", self.api, op);
        let query: Vec<(&str, String)> = params
            .iter()
            .map(|(name, value)| (*name, zinc::encode_value(value)))
            .collect();
        let mut builder = self
            .http
            .get(&url)
            .query(&query)
            .header(ACCEPT, self.options.format.mime());
        if let Some(bearer) = &self.bearer {
            builder = builder.header(AUTHORIZATION, bearer);
        }
        self.send_logged("GET", op, &url, builder).await
    }

    /// Sends one request and reads its grid, logging it: at debug level the `request` with
    /// `method`, `op`, `status` and `duration_ms`; a failure at info level. Neither the
    /// headers (the bearer token) nor the bodies are logged.
    async fn send_logged(
        &self,
        method: &'static str,
        op: &str,
        url: &str,
        builder: reqwest::RequestBuilder,
    ) -> Result<Grid, ClientError> {
        let started = Instant::now();
        let duration_ms = || started.elapsed().as_secs_f64() * 1000.0;
        let response = match builder.send().await {
            Ok(response) => response,
            Err(e) => {
                let error = transport(url, &e);
                let duration_ms = duration_ms();
                tracing::info!(method, op, error = %error, duration_ms, "request failed");
                return Err(error);
            }
        };
        let status = response.status().as_u16();
        let result = self.read_grid(url, response).await;
        let duration_ms = duration_ms();
        match &result {
            Ok(_) => tracing::debug!(method, op, status, duration_ms, "request"),
            // A 405 is answered by trying the other method (see `call`).
            Err(ClientError::Http { status: 405, .. }) => {
                tracing::debug!(
                    method,
                    op,
                    status,
                    duration_ms,
                    "request: method not allowed"
                );
            }
            Err(error) => {
                tracing::info!(method, op, status, error = %error, duration_ms, "request failed");
            }
        }
        result
    }

    async fn read_grid(&self, url: &str, response: reqwest::Response) -> Result<Grid, ClientError> {
        let status = response.status();
        let format = header_text(response.headers(), CONTENT_TYPE)
            .and_then(|mime| Format::from_mime(&mime))
            .unwrap_or(self.options.format);
        let body = read_limited(url, response, self.options.max_response_bytes).await?;
        if status != StatusCode::OK {
            let text = String::from_utf8_lossy(&body);
            return Err(ClientError::Http {
                status: status.as_u16(),
                url: url.to_owned(),
                body: text.chars().take(200).collect(),
            });
        }
        let text = std::str::from_utf8(&body).map_err(|e| ClientError::Http {
            status: status.as_u16(),
            url: url.to_owned(),
            body: format!("body is not UTF-8: {e}"),
        })?;
        request::check_response(format.decode_grid(text)?)
    }

    /// Opens a watch and returns it as a [`Watch`] that polls every `interval`.
    pub async fn watch(
        &self,
        dis: &str,
        ids: &[Ref],
        lease_seconds: Option<f64>,
        interval: Duration,
    ) -> Result<Watch, ClientError> {
        let first = self.watch_open(dis, ids, lease_seconds).await?;
        let watch_id = match first.meta.get("watchId") {
            Some(Value::Str(id)) => id.clone(),
            _ => {
                return Err(ClientError::Server {
                    dis: "watchSub answer has no watchId".into(),
                    trace: None,
                });
            }
        };
        Ok(Watch {
            client: self.clone(),
            watch_id,
            interval,
            pending: Some(first),
            closed: false,
        })
    }
}

/// Ops the spec marks `noSideEffects`: the client sends them as GET with Zinc-encoded query
/// parameters when the request fits in one row, since every server must accept that, while
/// some (haystack-py) refuse POST for `about`, `ops` and `formats`.
const NO_SIDE_EFFECTS: [&str; 9] = [
    "about",
    "ops",
    "formats",
    "filetypes",
    "defs",
    "libs",
    "read",
    "nav",
    "hisRead",
];

/// The request as query parameters, if it has no meta and at most one row.
fn query_params(request: &Grid) -> Option<Vec<(&str, Value)>> {
    if !request.meta.is_empty() || request.row_count() > 1 {
        return None;
    }
    let Some(row) = request.row(0) else {
        return Some(Vec::new());
    };
    Some(
        request
            .columns()
            .iter()
            .zip(row)
            .filter_map(|(column, cell)| cell.map(|value| (column.name.as_str(), value.clone())))
            .collect(),
    )
}

fn is_method_not_allowed(result: &Result<Grid, ClientError>) -> bool {
    matches!(result, Err(ClientError::Http { status: 405, .. }))
}

impl HaystackApi for HaystackClient {
    /// GET for `noSideEffects` ops whose request fits the query string, POST otherwise; a
    /// server that answers 405 to one method gets the other.
    async fn call(&self, op: &str, request: &Grid) -> Result<Grid, ClientError> {
        let params = query_params(request);
        match params {
            Some(params) if NO_SIDE_EFFECTS.contains(&op) => {
                let result = self.call_get(op, &params).await;
                if is_method_not_allowed(&result) {
                    tracing::info!(op, "GET not allowed: retrying with POST");
                    return self.post(op, request).await;
                }
                result
            }
            params => {
                let result = self.post(op, request).await;
                match params {
                    Some(params) if is_method_not_allowed(&result) => {
                        tracing::info!(op, "POST not allowed: retrying with GET");
                        self.call_get(op, &params).await
                    }
                    _ => result,
                }
            }
        }
    }
}

/// A watch opened with [`HaystackClient::watch`]: each [`Watch::next`] gives the entities
/// that changed (the first gives the current values of every watched entity).
#[derive(Debug)]
pub struct Watch {
    client: HaystackClient,
    watch_id: String,
    interval: Duration,
    pending: Option<Grid>,
    closed: bool,
}

impl Watch {
    /// The server's id of this watch.
    pub fn id(&self) -> &str {
        &self.watch_id
    }

    /// The next non-empty set of changes (waits `interval` between polls), or `None` once
    /// closed.
    pub async fn next(&mut self) -> Option<Result<Grid, ClientError>> {
        if self.closed {
            return None;
        }
        if let Some(first) = self.pending.take() {
            return Some(Ok(first));
        }
        loop {
            tokio::time::sleep(self.interval).await;
            match self.client.watch_poll(&self.watch_id, false).await {
                Ok(grid) if grid.row_count() == 0 => continue,
                other => return Some(other),
            }
        }
    }

    /// Closes the watch on the server.
    pub async fn close(&mut self) -> Result<(), ClientError> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        self.client
            .watch_unsub(&self.watch_id, &[], true)
            .await
            .map(|_| ())
    }
}

fn content_type(format: Format) -> String {
    format!("{}; charset=utf-8", format.mime())
}

fn header_text(headers: &HeaderMap, name: impl reqwest::header::AsHeaderName) -> Option<String> {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
}

fn transport(url: &str, error: &reqwest::Error) -> ClientError {
    let message = if error.is_timeout() {
        "timed out".to_owned()
    } else {
        // The source chain says what failed (refused, DNS, TLS) more usefully than the top.
        let mut text = error.to_string();
        let mut source = std::error::Error::source(error);
        while let Some(inner) = source {
            text = format!("{text}: {inner}");
            source = inner.source();
        }
        text
    };
    ClientError::Transport {
        url: url.to_owned(),
        message,
    }
}

/// Reads a body chunk by chunk, refusing to hold more than `limit` bytes.
async fn read_limited(
    url: &str,
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, ClientError> {
    if response
        .content_length()
        .is_some_and(|length| length > limit as u64)
    {
        return Err(ClientError::TooLarge { limit });
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| transport(url, &e))? {
        if body.len() + chunk.len() > limit {
            return Err(ClientError::TooLarge { limit });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
