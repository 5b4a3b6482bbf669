//! [`ClientError`]: why a Haystack client call failed, worded to say what to do next.

use crate::auth::ClientError as AuthError;
use crate::codec::DecodeError;
use crate::value::GridError;

/// Why a Haystack client call failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server answered with an error grid (the request was read and refused or failed).
    #[error("server error: {dis}")]
    Server {
        /// The grid's `dis`.
        dis: String,
        /// The grid's `errTrace`, when the server sent one.
        trace: Option<String>,
    },
    /// The server answered with an HTTP status other than 200.
    #[error("HTTP {status} from {url}: {body}")]
    Http {
        /// The status code.
        status: u16,
        /// The URL asked.
        url: String,
        /// The start of the body, for the message.
        body: String,
    },
    /// Nothing answers at the URL (HTTP 404): most likely the API path is wrong.
    #[error(
        "HTTP 404 from {url}: no Haystack API at this URL; check its path (most servers \
         serve the API under /api, e.g. http://host:8080/api)"
    )]
    NotFound {
        /// The URL asked.
        url: String,
    },
    /// The login was refused (wrong user name or password, or locked out).
    #[error("login refused for user {user:?} (HTTP {status}): check the user name and password")]
    LoginRefused {
        /// The user name tried.
        user: String,
        /// The status of the refusal (403, or 401 without a challenge).
        status: u16,
    },
    /// The SCRAM exchange failed.
    #[error("login failed: {0}")]
    Auth(#[from] AuthError),
    /// The connection failed or timed out.
    #[error("cannot reach {url}: {message} (is the server running, and is the URL right?)")]
    Transport {
        /// The URL asked.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// The response did not decode.
    #[error("response from the server does not decode: {0}")]
    Decode(#[from] DecodeError),
    /// The response is larger than the client accepts.
    #[error("response larger than {limit} bytes; raise max_response_bytes if this is expected")]
    TooLarge {
        /// The limit.
        limit: usize,
    },
    /// A request grid could not be built (an invalid tag name, say).
    #[error("invalid request: {0}")]
    Request(#[from] GridError),
    /// The client was configured wrongly (a bad URL, an unreadable certificate).
    #[error("client setup: {0}")]
    Config(String),
    /// A rollup's interval or fold is invalid, or a raw answer could not be folded.
    #[error("rollup: {0}")]
    Rollup(String),
    /// The WebSocket connection closed or broke.
    #[error("WebSocket: {0}")]
    WebSocket(String),
}

impl From<crate::ops::ws::WsError> for ClientError {
    fn from(e: crate::ops::ws::WsError) -> Self {
        match e {
            crate::ops::ws::WsError::Grid(e) => ClientError::Decode(e),
            other => ClientError::WebSocket(other.to_string()),
        }
    }
}
