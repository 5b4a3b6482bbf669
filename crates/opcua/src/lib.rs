//! OPC UA protocol core for buildwire: sans-IO codecs, from the bottom layer up.
//!
//! - [`types`]: table-generated shared types ([`StatusCode`]).
//! - [`encoding`]: UA Binary (OPC 10000-6 §5.2) for every built-in type, with limits.
//! - [`transport`]: UA TCP connection protocol (OPC 10000-6 §7.1): headers, Hello/Acknowledge
//!   negotiation and a frame decoder for partial reads.
//! - [`secure_channel`]: security, sequence headers for SecurityPolicy None (OPC 10000-6 §6.7).
//! - [`security`]: the secured policies: keys, chunk signing and encryption, certificates,
//!   trust list and the PKI store (OPC 10000-6 §6.7, OPC 10000-7).
//!
//! Nothing here opens sockets, sleeps or reads the clock.
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

pub mod channel;
pub mod client;
pub mod driver;
pub mod encoding;
pub mod inspect;
pub mod secure_channel;
pub mod security;
pub mod server;
pub mod services;
pub mod transport;
pub mod types;

pub use encoding::{
    BinaryEncodable, ByteString, DataValue, DateTime, DecodeError, DecodeErrorKind, DecodingLimits,
    DiagnosticInfo, ExpandedNodeId, ExtensionObject, Guid, LocalizedText, NodeId, QualifiedName,
    Reader, UaString, Variant, VariantType, XmlElement,
};
pub use transport::{FrameDecoder, TransportError};
pub use types::StatusCode;
