//! `ClientConfig`: what a client asks for (endpoint, identity, limits, lifetimes, timeouts),
//! with defaults that allow the 100 MiB benchmark responses.

use std::time::Duration;

use super::identity::ClientIdentity;
use crate::encoding::DecodingLimits;
use crate::transport::ConnectionLimits;

/// Default largest response we accept, in bytes: 256 MiB (the largest benchmark payload) plus
/// room for the headers around it.
pub const DEFAULT_MAX_RESPONSE_SIZE: u32 = 256 * 1024 * 1024 + 64 * 1024;
/// Default most chunks per response (256 MiB in 65535-byte chunks needs about 4100).
pub const DEFAULT_MAX_RESPONSE_CHUNKS: u32 = 8192;
/// Default receive and send buffer size (largest chunk) in bytes.
pub const DEFAULT_CLIENT_BUFFER_SIZE: u32 = 65_535;
/// Default secure channel token lifetime requested, in milliseconds (one hour).
pub const DEFAULT_TOKEN_LIFETIME_MS: u32 = 3_600_000;
/// Default session timeout requested, in milliseconds (one hour).
pub const DEFAULT_SESSION_TIMEOUT_MS: f64 = 3_600_000.0;
/// Default time a request may take before it fails with Bad_Timeout.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Default time from the Hello to an activated session.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Share of the token lifetime after which the channel is renewed (OPC 10000-4 §5.5.2.1
/// asks clients to renew once 75 % of the lifetime has passed).
pub const RENEW_AT_PERCENT: u32 = 75;

/// The configuration of a [`ClientConnection`](super::ClientConnection).
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// The URL sent in the Hello and CreateSession (`opc.tcp://host:port/path`).
    pub endpoint_url: String,
    /// Who the session is activated as.
    pub identity: ClientIdentity,
    /// Our side of the Hello: buffer sizes, largest response and chunk count.
    pub connection_limits: ConnectionLimits,
    /// Limits for decoding responses (ByteStrings as large as the largest response).
    pub decoding_limits: DecodingLimits,
    /// Requested secure channel token lifetime, in milliseconds.
    pub token_lifetime_ms: u32,
    /// Requested session timeout, in milliseconds.
    pub session_timeout_ms: f64,
    /// Time each request may take (unless its header carries a `timeout_hint`).
    pub request_timeout: Duration,
    /// Time from the Hello to an activated session.
    pub connect_timeout: Duration,
    /// The session name sent in CreateSession.
    pub session_name: String,
    /// Our application URI.
    pub application_uri: String,
    /// Security policy, mode and certificates of the channel (default: None).
    pub security: super::security::ClientSecurity,
    /// Open the channel only, without a session: for GetEndpoints and FindServers (the
    /// connection becomes active once the channel is open).
    pub discovery_only: bool,
    /// Send a UserName password in clear when neither the server's UserName token policy
    /// nor the channel encrypts it (default: false, and such a login fails with
    /// Bad_SecurityModeInsufficient before the password leaves).
    pub allow_cleartext_password: bool,
}

impl ClientConfig {
    /// Defaults for `endpoint_url`, anonymous.
    pub fn new(endpoint_url: &str) -> Self {
        let max_response = DEFAULT_MAX_RESPONSE_SIZE as usize;
        Self {
            endpoint_url: endpoint_url.to_owned(),
            identity: ClientIdentity::Anonymous,
            connection_limits: ConnectionLimits {
                receive_buffer_size: DEFAULT_CLIENT_BUFFER_SIZE,
                send_buffer_size: DEFAULT_CLIENT_BUFFER_SIZE,
                max_message_size: DEFAULT_MAX_RESPONSE_SIZE,
                max_chunk_count: DEFAULT_MAX_RESPONSE_CHUNKS,
                ..ConnectionLimits::default()
            },
            decoding_limits: DecodingLimits {
                max_string_length: max_response,
                max_byte_string_length: max_response,
                ..DecodingLimits::default()
            },
            token_lifetime_ms: DEFAULT_TOKEN_LIFETIME_MS,
            session_timeout_ms: DEFAULT_SESSION_TIMEOUT_MS,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            session_name: "buildwire client".into(),
            application_uri: "urn:buildwire:opcua:client".into(),
            security: super::security::ClientSecurity::default(),
            discovery_only: false,
            allow_cleartext_password: false,
        }
    }
}
