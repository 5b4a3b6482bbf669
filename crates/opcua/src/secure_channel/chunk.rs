//! `SecureChannelChunk`: an OPN, MSG or CLO frame under SecurityPolicy None, split into the
//! secure channel id, security header, sequence header and the (plain) body.

use bytes::Bytes;

use super::security_header::{AsymmetricSecurityHeader, SymmetricSecurityHeader};
use super::sequence_header::SequenceHeader;
use crate::encoding::{BinaryEncodable, DecodeError, Reader};
use crate::transport::{ChunkType, Frame, HEADER_LENGTH, MessageHeader, MessageType};
use crate::types::StatusCode;

/// Why a frame is not a well-formed secure channel chunk.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecureChannelError {
    /// The frame is a connection message (HEL, ACK, ERR, RHE), not OPN / MSG / CLO.
    #[error("{0:?} is not a secure channel message")]
    NotSecureChannelMessage(MessageType),
    /// The headers could not be decoded (offsets are relative to the frame body).
    #[error("secure channel chunk: {0}")]
    Decode(#[from] DecodeError),
}

impl SecureChannelError {
    /// The StatusCode to report.
    pub const fn status_code(&self) -> StatusCode {
        match self {
            Self::NotSecureChannelMessage(_) => StatusCode::BAD_TCP_MESSAGE_TYPE_INVALID,
            Self::Decode(error) => error.status_code(),
        }
    }
}

/// The security header of a chunk: asymmetric for OPN, symmetric for MSG and CLO.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SecurityHeader {
    /// OpenSecureChannel.
    Asymmetric(AsymmetricSecurityHeader),
    /// Message and CloseSecureChannel.
    Symmetric(SymmetricSecurityHeader),
}

impl SecurityHeader {
    fn encode(&self, buf: &mut Vec<u8>) {
        match self {
            Self::Asymmetric(header) => header.encode(buf),
            Self::Symmetric(header) => header.encode(buf),
        }
    }

    fn encoded_len(&self) -> usize {
        match self {
            Self::Asymmetric(header) => header.encoded_len(),
            Self::Symmetric(header) => header.encoded_len(),
        }
    }
}

/// One secure channel chunk with no signature and no encryption (SecurityPolicy None).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecureChannelChunk {
    /// OPN, MSG or CLO.
    pub message_type: MessageType,
    /// Final, intermediate or abort.
    pub chunk_type: ChunkType,
    /// Id of the channel (0 in the first OpenSecureChannel request).
    pub secure_channel_id: u32,
    /// Security header matching `message_type`.
    pub security_header: SecurityHeader,
    /// Sequence number and request id.
    pub sequence_header: SequenceHeader,
    /// The (part of the) encoded service message carried by this chunk: a slice of the
    /// frame, not a copy.
    pub body: Bytes,
}

impl SecureChannelChunk {
    /// Splits a frame from the [`FrameDecoder`](crate::transport::FrameDecoder); the body
    /// shares the frame's buffer.
    pub fn from_frame(frame: &Frame) -> Result<Self, SecureChannelError> {
        let message_type = frame.header.message_type;
        if !message_type.is_secure_channel() {
            return Err(SecureChannelError::NotSecureChannelMessage(message_type));
        }
        let mut reader = Reader::new(&frame.body);
        let secure_channel_id = u32::decode(&mut reader)?;
        let security_header = if message_type == MessageType::OpenSecureChannel {
            SecurityHeader::Asymmetric(AsymmetricSecurityHeader::decode(&mut reader)?)
        } else {
            SecurityHeader::Symmetric(SymmetricSecurityHeader::decode(&mut reader)?)
        };
        let sequence_header = SequenceHeader::decode(&mut reader)?;
        Ok(Self {
            message_type,
            chunk_type: frame.header.chunk_type,
            secure_channel_id,
            security_header,
            sequence_header,
            // The reader never moves past its input; min() keeps slice() panic-free anyway.
            body: frame.body.slice(reader.position().min(frame.body.len())..),
        })
    }

    /// The whole chunk, message header included, ready to send.
    pub fn to_bytes(&self) -> Vec<u8> {
        let size = HEADER_LENGTH
            + 4
            + self.security_header.encoded_len()
            + self.sequence_header.encoded_len()
            + self.body.len();
        let mut buf = Vec::with_capacity(size);
        MessageHeader {
            message_type: self.message_type,
            chunk_type: self.chunk_type,
            message_size: u32::try_from(size).unwrap_or(u32::MAX),
        }
        .encode(&mut buf);
        self.secure_channel_id.encode(&mut buf);
        self.security_header.encode(&mut buf);
        self.sequence_header.encode(&mut buf);
        buf.extend_from_slice(&self.body);
        buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::DecodeErrorKind;
    use crate::transport::{Acknowledge, ConnectionMessage, FrameDecoder};

    fn decode_frame(bytes: &[u8]) -> Frame {
        let mut decoder = FrameDecoder::new(65_536);
        decoder.push(bytes);
        decoder.next_frame().unwrap().unwrap()
    }

    #[test]
    fn open_secure_channel_chunk() {
        let chunk = SecureChannelChunk {
            message_type: MessageType::OpenSecureChannel,
            chunk_type: ChunkType::Final,
            secure_channel_id: 0,
            security_header: SecurityHeader::Asymmetric(AsymmetricSecurityHeader::none()),
            sequence_header: SequenceHeader {
                sequence_number: 1,
                request_id: 1,
            },
            body: Bytes::from_static(&[0x01, 0x00, 0xBE, 0x01]),
        };
        let bytes = chunk.to_bytes();
        assert_eq!(&bytes[..4], b"OPNF");
        assert_eq!(
            u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]) as usize,
            bytes.len()
        );
        assert_eq!(bytes.len(), 8 + 4 + 59 + 8 + 4);
        assert_eq!(
            SecureChannelChunk::from_frame(&decode_frame(&bytes)).unwrap(),
            chunk
        );
    }

    #[test]
    fn message_chunk() {
        let chunk = SecureChannelChunk {
            message_type: MessageType::Message,
            chunk_type: ChunkType::Intermediate,
            secure_channel_id: 7,
            security_header: SecurityHeader::Symmetric(SymmetricSecurityHeader { token_id: 3 }),
            sequence_header: SequenceHeader {
                sequence_number: 52,
                request_id: 2,
            },
            body: Bytes::from_static(&[9, 9]),
        };
        let bytes = chunk.to_bytes();
        assert_eq!(
            bytes,
            [
                b'M', b'S', b'G', b'C', 26, 0, 0, 0, 7, 0, 0, 0, 3, 0, 0, 0, 52, 0, 0, 0, 2, 0, 0,
                0, 9, 9
            ]
        );
        assert_eq!(
            SecureChannelChunk::from_frame(&decode_frame(&bytes)).unwrap(),
            chunk
        );
    }

    #[test]
    fn chunk_body_shares_the_frame_buffer() {
        let chunk = SecureChannelChunk {
            message_type: MessageType::Message,
            chunk_type: ChunkType::Final,
            secure_channel_id: 7,
            security_header: SecurityHeader::Symmetric(SymmetricSecurityHeader { token_id: 3 }),
            sequence_header: SequenceHeader {
                sequence_number: 52,
                request_id: 2,
            },
            body: Bytes::from(vec![4u8; 5000]),
        };
        let frame = decode_frame(&chunk.to_bytes());
        let split = SecureChannelChunk::from_frame(&frame).unwrap();
        assert_eq!(split, chunk);
        // 4 (channel id) + 4 (token id) + 8 (sequence header) bytes into the frame body.
        assert_eq!(split.body.as_ptr(), frame.body[16..].as_ptr());
    }

    #[test]
    fn malformed_chunks() {
        let ack = decode_frame(&Acknowledge::default().to_message_bytes());
        let error = SecureChannelChunk::from_frame(&ack).unwrap_err();
        assert_eq!(
            error,
            SecureChannelError::NotSecureChannelMessage(MessageType::Acknowledge)
        );
        assert_eq!(
            error.status_code(),
            StatusCode::BAD_TCP_MESSAGE_TYPE_INVALID
        );
        // A CLO frame that stops inside the sequence header.
        let short = decode_frame(b"CLOF\x12\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00\x03\x00");
        assert_eq!(
            SecureChannelChunk::from_frame(&short).unwrap_err(),
            SecureChannelError::Decode(DecodeError {
                offset: 8,
                kind: DecodeErrorKind::UnexpectedEnd {
                    needed: 4,
                    available: 2
                }
            })
        );
    }
}
