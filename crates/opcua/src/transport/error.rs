//! Transport-level errors and the StatusCode each one is reported with.

use super::message_header::MessageType;
use crate::encoding::DecodeError;
use crate::types::StatusCode;

/// A UA TCP framing or message error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    /// The three message type bytes name no UA TCP message.
    #[error("invalid message type {0:?}")]
    MessageTypeInvalid([u8; 3]),
    /// The chunk type byte is not `F`, `C` or `A`, or is not `F` for a connection message.
    #[error("invalid chunk type 0x{chunk_type:02X} for {message_type:?}")]
    ChunkTypeInvalid {
        /// The message the chunk belongs to.
        message_type: MessageType,
        /// The rejected byte.
        chunk_type: u8,
    },
    /// The announced size is smaller than the header itself.
    #[error("message size {0} is smaller than the 8-byte header")]
    MessageTooSmall(u32),
    /// The announced size exceeds the negotiated receive buffer size.
    #[error("message size {size} exceeds the limit of {limit}")]
    MessageTooLarge {
        /// Announced size.
        size: u32,
        /// Receive buffer size in force.
        limit: u32,
    },
    /// A frame of another type arrived where a specific message was expected.
    #[error("expected {expected:?}, received {received:?}")]
    UnexpectedMessage {
        /// The awaited message type.
        expected: MessageType,
        /// The type that came.
        received: MessageType,
    },
    /// The body of a message could not be decoded (offsets are relative to the body).
    #[error("message body: {0}")]
    Decode(#[from] DecodeError),
}

impl TransportError {
    /// The StatusCode to report (and to send in an Error message).
    pub const fn status_code(&self) -> StatusCode {
        match self {
            Self::MessageTypeInvalid(_)
            | Self::ChunkTypeInvalid { .. }
            | Self::UnexpectedMessage { .. } => StatusCode::BAD_TCP_MESSAGE_TYPE_INVALID,
            Self::MessageTooLarge { .. } => StatusCode::BAD_TCP_MESSAGE_TOO_LARGE,
            Self::MessageTooSmall(_) => StatusCode::BAD_DECODING_ERROR,
            Self::Decode(error) => error.status_code(),
        }
    }
}
