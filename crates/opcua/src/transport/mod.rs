//! UA TCP connection protocol (OPC 10000-6 §7.1), sans-IO: the 8-byte message header, the
//! Hello / Acknowledge / Error / ReverseHello messages, the Hello negotiation and a
//! [`FrameDecoder`] that turns arbitrary byte slices into complete frames, and the
//! [`TransmitBuffer`] gather list that outgoing chunks are written into.

mod acknowledge;
mod connection_message;
mod error;
mod error_message;
mod frame_decoder;
mod hello;
mod message_header;
mod negotiation;
mod reverse_hello;
mod transmit_buffer;

pub use acknowledge::Acknowledge;
pub use connection_message::{ConnectionMessage, encode_message};
pub use error::TransportError;
pub use error_message::ErrorMessage;
pub use frame_decoder::{Frame, FrameDecoder, MIN_READ_ROOM};
pub use hello::{Hello, MAX_URL_LENGTH};
pub use message_header::{ChunkType, HEADER_LENGTH, MessageHeader, MessageType};
pub use negotiation::{
    ConnectionLimits, MIN_BUFFER_SIZE, NegotiatedLimits, NegotiationError, PROTOCOL_VERSION,
    accept_acknowledge, acknowledge_hello,
};
pub use reverse_hello::ReverseHello;
pub use transmit_buffer::{ChunkSink, INLINE_COPY_MAX, TransmitBuffer};
