//! OPC UA (OPC 10000-4 services, OPC 10000-6 mappings) for buildwire: sans-IO codecs and
//! state machines, from the bottom layer up, with thin tokio drivers on top.
//!
//! - [`types`]: table-generated shared types ([`StatusCode`]).
//! - [`encoding`]: UA Binary (OPC 10000-6 §5.2) for every built-in type, with limits.
//! - [`transport`]: UA TCP connection protocol (OPC 10000-6 §7.1): headers, Hello/Acknowledge
//!   negotiation and a frame decoder for partial reads.
//! - [`secure_channel`]: security and sequence headers, chunk reassembly (OPC 10000-6 §6.7).
//! - [`services`]: the Part 4 request and response structures and their encoding ids.
//! - [`security`]: the secured policies: keys, chunk signing and encryption, certificates,
//!   trust list and the PKI store (OPC 10000-6 §6.7, OPC 10000-7).
//! - [`channel`]: the secure channel as both sides run it: sequence numbers, tokens, the
//!   outgoing queue, secured chunks, and [`ChannelEndpoint`] with the one send path.
//! - [`server`]: the server core ([`Server`], [`ServerConnection`]): address space, sessions,
//!   service handlers, subscriptions.
//! - [`client`]: the client core ([`ClientConnection`]): channel, session, request
//!   correlation, subscriptions.
//! - [`inspect`]: dissection of captured streams.
//! - `driver` (feature `tokio`, on by default): [`OpcuaServer::start`] with an
//!   [`OpcuaServerConfig`], [`OpcuaClient`] and [`ReconnectingClient`] on tokio TCP sockets.
//!
//! Everything but `driver` is sans-IO: nothing opens sockets, sleeps or reads the clock, and
//! it builds without tokio (`--no-default-features`), as the fuzz targets use it. The most
//! used types are re-exported here; the modules stay public for the rest.
//!
//! Features (both on by default):
//! - `tokio`: the `driver` module.
//! - `crypto`: RSA from aws-lc-rs and certificate creation with rcgen, i.e. the secured
//!   policies. Without it nothing links aws-lc and only SecurityPolicy None is usable. The
//!   security API keeps its shape, but [`security::PrivateKey`] and
//!   [`security::PublicKey`] have no values: keys and certificates fail to load, parse or
//!   be created with [`security::CryptoError::Unavailable`] ("this build has no crypto"); a
//!   server therefore has no certificate and answers a secured OpenSecureChannel with
//!   Bad_SecurityPolicyRejected, an encrypted UserName token with Bad_IdentityTokenInvalid,
//!   and an X509 user token (which needs a secured channel) likewise. Random nonces, SHA-1
//!   thumbprints (trust list), HMAC and AES-CBC are pure Rust (getrandom, RustCrypto) in
//!   every build.
//!
//! ```
//! use buildwire_opcua::{BinaryEncodable, DecodeErrorKind, StatusCode, Variant};
//!
//! let bytes = Variant::Int32(-1).to_bytes();
//! assert_eq!(bytes, [0x06, 0xFF, 0xFF, 0xFF, 0xFF]);
//! assert_eq!(Variant::from_bytes(&bytes).unwrap(), Variant::Int32(-1));
//!
//! // Malformed input reports where it went wrong and which StatusCode to send.
//! let error = Variant::from_bytes(&[0x1A]).unwrap_err();
//! assert_eq!((error.offset, error.kind.clone()), (0, DecodeErrorKind::UnknownVariantType(26)));
//! assert_eq!(error.status_code(), StatusCode::BAD_DECODING_ERROR);
//! ```

#![forbid(unsafe_code)]

pub mod channel;
pub mod client;
#[cfg(feature = "tokio")]
pub mod driver;
pub mod encoding;
pub mod inspect;
pub mod secure_channel;
pub mod security;
pub mod server;
pub mod services;
pub mod transport;
pub mod types;

pub use channel::{ChannelEndpoint, CloseReason};
pub use client::{
    ClientConfig, ClientConnection, ClientEvent, ClientIdentity, ClientSecurity, ClientState,
    SendError,
};
#[cfg(feature = "tokio")]
pub use driver::{
    ClientError, ConnectionEvent, OpcuaClient, OpcuaServer, OpcuaServerConfig, ReconnectHook,
    ReconnectPolicy, ReconnectingClient, ServerStartError,
};
pub use encoding::{
    BinaryEncodable, ByteString, DataValue, DateTime, DecodeError, DecodeErrorKind, DecodingLimits,
    DiagnosticInfo, ExpandedNodeId, ExtensionObject, Guid, LocalizedText, NodeId, QualifiedName,
    Reader, UaString, Variant, VariantType, XmlElement,
};
pub use security::{
    Certificate, LocalIdentity, MessageSecurityMode, Pki, SecurityPolicy, TrustList,
};
pub use server::{
    AddressSpace, OperationLimits, Server, ServerConfig, ServerConnection, ServerSecurity,
    UserAccount,
};
pub use services::{AttributeId, ServiceRequest, ServiceResponse};
pub use transport::{FrameDecoder, TransportError};
pub use types::StatusCode;
