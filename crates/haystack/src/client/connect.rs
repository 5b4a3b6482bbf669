//! [`connect`]: one call that logs in and opens the chosen transport, giving one client
//! type ([`ApiClient`]) whatever the transport.

use std::time::Duration;

use crate::value::Grid;

use super::api::HaystackApi;
use super::error::ClientError;
use super::http::{ClientOptions, HaystackClient};
use super::ws::{WsClient, websocket_url};

/// How the ops travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Transport {
    /// One HTTP request per op.
    #[default]
    Http,
    /// One WebSocket for every op, opened after the HTTP login (`{url}/ws`).
    WebSocket,
}

/// A logged-in client over HTTP or WebSocket: every op of [`HaystackApi`] goes over the
/// chosen transport; [`ApiClient::http`] is the HTTP client the login went through (for
/// HTTP watches and the auth token).
#[derive(Debug)]
pub enum ApiClient {
    /// Ops over HTTP.
    Http(HaystackClient),
    /// Ops over a WebSocket, after a login over HTTP.
    WebSocket {
        /// The HTTP client that logged in.
        http: HaystackClient,
        /// The WebSocket the ops go over.
        ws: WsClient,
    },
}

impl ApiClient {
    /// The HTTP client (the one that logged in).
    pub fn http(&self) -> &HaystackClient {
        match self {
            ApiClient::Http(http) | ApiClient::WebSocket { http, .. } => http,
        }
    }

    /// The WebSocket client, when the ops go over a WebSocket.
    pub fn websocket(&self) -> Option<&WsClient> {
        match self {
            ApiClient::Http(_) => None,
            ApiClient::WebSocket { ws, .. } => Some(ws),
        }
    }

    /// The transport the ops go over.
    pub fn transport(&self) -> Transport {
        match self {
            ApiClient::Http(_) => Transport::Http,
            ApiClient::WebSocket { .. } => Transport::WebSocket,
        }
    }

    /// The API base URL.
    pub fn url(&self) -> &str {
        self.http().url()
    }
}

impl HaystackApi for ApiClient {
    async fn call(&self, op: &str, request: &Grid) -> Result<Grid, ClientError> {
        match self {
            ApiClient::Http(http) => http.call(op, request).await,
            ApiClient::WebSocket { ws, .. } => ws.call(op, request).await,
        }
    }
}

/// Connects to the API at `url` (logging in with SCRAM when `options` name a user) and,
/// for [`Transport::WebSocket`], opens the WebSocket with the login's token.
///
/// ```no_run
/// # async fn example() -> Result<(), buildwire_haystack::client::ClientError> {
/// use buildwire_haystack::client::{ClientOptions, HaystackApi, Transport, connect};
///
/// let client = connect(
///     "http://127.0.0.1:8080/api",
///     ClientOptions::login("admin", "secret"),
///     Transport::WebSocket,
/// )
/// .await?;
/// let sites = client.read("site", None).await?;
/// # Ok(()) }
/// ```
pub async fn connect(
    url: &str,
    options: ClientOptions,
    transport: Transport,
) -> Result<ApiClient, ClientError> {
    let timeout: Duration = options.timeout;
    let http = HaystackClient::connect(url, options).await?;
    match transport {
        Transport::Http => Ok(ApiClient::Http(http)),
        Transport::WebSocket => {
            let ws_url = websocket_url(http.url()).ok_or_else(|| {
                ClientError::Config(format!("cannot derive a WebSocket URL from {}", http.url()))
            })?;
            let ws = WsClient::connect(&ws_url, http.auth_token(), timeout).await?;
            Ok(ApiClient::WebSocket { http, ws })
        }
    }
}
