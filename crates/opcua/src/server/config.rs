//! `ServerConfig`: everything a deployment chooses about the server (identity, endpoint, user
//! accounts, connection and operation limits), with defaults suited to the benchmarks.

use super::subscriptions::SubscriptionLimits;
pub use crate::channel::TOKEN_LIFETIME_RANGE_MS;
use crate::encoding::DateTime;
use crate::transport::ConnectionLimits;

/// Default largest message (request or response body) in bytes: 100 MiB plus room for the
/// headers around a 100 MiB ByteString.
pub const DEFAULT_MAX_MESSAGE_SIZE: u32 = 100 * 1024 * 1024 + 64 * 1024;
/// Default most chunks per message we accept (100 MiB in 65535-byte chunks needs ~1602).
pub const DEFAULT_MAX_CHUNK_COUNT: u32 = 4096;
/// Default receive buffer size (largest chunk accepted) in bytes.
pub const DEFAULT_BUFFER_SIZE: u32 = 65_535;
/// Default send buffer size (largest chunk sent) in bytes. Chunks are never larger than the
/// client's ReceiveBufferSize, so clients offering 65535 get 65535-byte chunks; a client that
/// offers more gets fewer, larger chunks, which it can take without reassembling (the
/// getData payload of a one-chunk response is a slice of the client's receive buffer).
pub const DEFAULT_SEND_BUFFER_SIZE: u32 = 16 * 1024 * 1024;
/// Shortest and longest session timeout granted, in milliseconds.
pub const SESSION_TIMEOUT_RANGE_MS: (f64, f64) = (10_000.0, 3_600_000.0);

/// A user name and its password, checked by ActivateSession.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserAccount {
    /// The user name.
    pub user_name: String,
    /// The password (compared in plain text under SecurityPolicy None).
    pub password: String,
}

/// Limits on the number of operations per service call and of per-session resources.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OperationLimits {
    /// Most nodes in one Read.
    pub max_nodes_per_read: u32,
    /// Most nodes in one Write.
    pub max_nodes_per_write: u32,
    /// Most nodes in one Browse or BrowseNext.
    pub max_nodes_per_browse: u32,
    /// Most methods in one Call.
    pub max_nodes_per_method_call: u32,
    /// Most paths in one TranslateBrowsePathsToNodeIds.
    pub max_nodes_per_translate: u32,
    /// Most references returned per node when the client sets no lower limit.
    pub max_references_per_node: u32,
    /// Most browse continuation points a session holds at once.
    pub max_browse_continuation_points: usize,
}

impl Default for OperationLimits {
    fn default() -> Self {
        Self {
            max_nodes_per_read: 10_000,
            max_nodes_per_write: 10_000,
            max_nodes_per_browse: 1_000,
            max_nodes_per_method_call: 1_000,
            max_nodes_per_translate: 1_000,
            max_references_per_node: 1_000,
            max_browse_continuation_points: 16,
        }
    }
}

/// The server's build information, reported in ServerStatus.BuildInfo (the structure of
/// OPC 10000-5 §12.4, shared with the client's decoder).
pub use crate::services::BuildInfo;

/// The build's date: `SOURCE_DATE_EPOCH` at build time, else when the crate was built (see
/// `build.rs`), in seconds since the Unix epoch.
fn build_date() -> DateTime {
    let seconds = env!("BUILDWIRE_OPCUA_BUILD_EPOCH")
        .parse::<i64>()
        .unwrap_or_default();
    DateTime::from_unix_millis(seconds.saturating_mul(1000))
}

impl Default for BuildInfo {
    fn default() -> Self {
        Self {
            product_uri: "urn:buildwire:opcua".into(),
            manufacturer_name: "buildwire".into(),
            product_name: "buildwire OPC UA server".into(),
            software_version: env!("CARGO_PKG_VERSION").into(),
            build_number: "0".into(),
            build_date: build_date(),
        }
    }
}

/// The configuration of a [`Server`](super::Server).
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// URL clients connect to (`opc.tcp://host:port/path`).
    pub endpoint_url: String,
    /// Globally unique URI of this server instance.
    pub application_uri: String,
    /// Human-readable server name.
    pub application_name: String,
    /// Build information.
    pub build_info: BuildInfo,
    /// Accepted user names and passwords (UserName identity tokens).
    pub users: Vec<UserAccount>,
    /// Whether the Anonymous identity token is offered.
    pub allow_anonymous: bool,
    /// Accept UserName passwords sent in clear on a SecurityPolicy None channel. Off by
    /// default: with a certificate the None endpoint's UserName policy names
    /// Basic256Sha256 and a clear password is refused (Bad_IdentityTokenRejected); without a
    /// certificate the None endpoint offers no UserName policy at all. With this option a
    /// server without certificate offers UserName with an empty securityPolicyUri (the
    /// password crosses the network readable), and one with a certificate also accepts
    /// clear passwords from clients that ignore the policy.
    pub allow_cleartext_passwords: bool,
    /// Our side of the Hello / Acknowledge negotiation.
    pub connection_limits: ConnectionLimits,
    /// Operation limits.
    pub operation_limits: OperationLimits,
    /// Bounds on subscriptions, monitored items and Publish requests.
    pub subscription_limits: SubscriptionLimits,
    /// Most sessions on the whole server.
    pub max_sessions: usize,
    /// Most sessions created through one connection.
    pub max_sessions_per_connection: usize,
    /// Most TCP connections served at once; one more is answered with an Error message
    /// (Bad_MaxConnectionsReached) and closed.
    pub max_connections: usize,
    /// A connection that has not sent its Hello and opened a secure channel this long after
    /// it was accepted is closed (Bad_Timeout): idle or trickling connections cannot hold
    /// the connection slots (issue 30).
    pub opening_timeout: std::time::Duration,
    /// Wall-clock time (UTC) at the `Instant` the server was created with: CurrentTime is
    /// this plus the time elapsed since.
    pub start_time: DateTime,
    /// Security endpoints, certificate and trust list (default: SecurityPolicy None only).
    pub security: super::security::ServerSecurity,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            endpoint_url: "opc.tcp://localhost:4840/".into(),
            application_uri: "urn:buildwire:opcua:server".into(),
            application_name: "buildwire OPC UA server".into(),
            build_info: BuildInfo::default(),
            users: Vec::new(),
            allow_anonymous: true,
            allow_cleartext_passwords: false,
            connection_limits: ConnectionLimits {
                receive_buffer_size: DEFAULT_BUFFER_SIZE,
                send_buffer_size: DEFAULT_SEND_BUFFER_SIZE,
                max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
                max_chunk_count: DEFAULT_MAX_CHUNK_COUNT,
                ..ConnectionLimits::default()
            },
            operation_limits: OperationLimits::default(),
            subscription_limits: SubscriptionLimits::default(),
            max_sessions: 100,
            max_sessions_per_connection: 10,
            max_connections: 256,
            opening_timeout: std::time::Duration::from_secs(5),
            start_time: DateTime::MIN,
            security: super::security::ServerSecurity::default(),
        }
    }
}
