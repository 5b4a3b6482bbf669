//! The `ConnectionMessage` trait shared by Hello, Acknowledge, Error and ReverseHello: each is a
//! single final chunk whose body is the message's UA Binary encoding.

use super::error::TransportError;
use super::frame_decoder::Frame;
use super::message_header::{ChunkType, HEADER_LENGTH, MessageHeader, MessageType};
use crate::encoding::{BinaryEncodable, Reader};

/// Encodes `body` behind a message header of the given types, with the size filled in.
pub fn encode_message(
    message_type: MessageType,
    chunk_type: ChunkType,
    body: &impl BinaryEncodable,
) -> Vec<u8> {
    let size = HEADER_LENGTH + body.encoded_len();
    let mut buf = Vec::with_capacity(size);
    MessageHeader {
        message_type,
        chunk_type,
        message_size: u32::try_from(size).unwrap_or(u32::MAX),
    }
    .encode(&mut buf);
    body.encode(&mut buf);
    buf
}

/// A UA TCP connection-level message (one final chunk, no secure channel).
pub trait ConnectionMessage: BinaryEncodable {
    /// The header message type of this message.
    const MESSAGE_TYPE: MessageType;

    /// The complete message: header and body.
    fn to_message_bytes(&self) -> Vec<u8> {
        encode_message(Self::MESSAGE_TYPE, ChunkType::Final, self)
    }

    /// Decodes the message from a frame, checking its type and that the body is fully used.
    fn from_frame(frame: &Frame) -> Result<Self, TransportError> {
        if frame.header.message_type != Self::MESSAGE_TYPE {
            return Err(TransportError::UnexpectedMessage {
                expected: Self::MESSAGE_TYPE,
                received: frame.header.message_type,
            });
        }
        let mut reader = Reader::new(&frame.body);
        let message = Self::decode(&mut reader)?;
        reader.expect_end()?;
        Ok(message)
    }
}
