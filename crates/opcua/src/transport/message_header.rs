//! The UA TCP message header (OPC 10000-6 §7.1.2.2): three ASCII bytes of message type, one
//! chunk type byte and a UInt32 message size that includes the header.

use super::error::TransportError;

/// Size of the message header in bytes.
pub const HEADER_LENGTH: usize = 8;

/// The message types, with their three-byte codes: the single table for both directions.
const MESSAGE_TYPES: [(MessageType, [u8; 3]); 7] = [
    (MessageType::Hello, *b"HEL"),
    (MessageType::Acknowledge, *b"ACK"),
    (MessageType::Error, *b"ERR"),
    (MessageType::ReverseHello, *b"RHE"),
    (MessageType::OpenSecureChannel, *b"OPN"),
    (MessageType::Message, *b"MSG"),
    (MessageType::CloseSecureChannel, *b"CLO"),
];

/// A UA TCP message type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MessageType {
    /// `HEL`: client opens the connection.
    Hello,
    /// `ACK`: server accepts the Hello.
    Acknowledge,
    /// `ERR`: fatal error, the connection closes.
    Error,
    /// `RHE`: server-initiated connection (reverse connect).
    ReverseHello,
    /// `OPN`: OpenSecureChannel request or response.
    OpenSecureChannel,
    /// `MSG`: a service message over a secure channel.
    Message,
    /// `CLO`: CloseSecureChannel request.
    CloseSecureChannel,
}

impl MessageType {
    /// The three ASCII bytes on the wire.
    pub fn code(self) -> [u8; 3] {
        MESSAGE_TYPES
            .iter()
            .find(|(kind, _)| *kind == self)
            .map_or(*b"???", |(_, code)| *code)
    }

    /// The type for three wire bytes.
    pub fn from_code(code: [u8; 3]) -> Option<Self> {
        MESSAGE_TYPES
            .iter()
            .find(|(_, known)| *known == code)
            .map(|(kind, _)| *kind)
    }

    /// True for the types carried by a secure channel (OPN, MSG, CLO), which may be chunked.
    pub fn is_secure_channel(self) -> bool {
        matches!(
            self,
            Self::OpenSecureChannel | Self::Message | Self::CloseSecureChannel
        )
    }
}

/// Position of a chunk within its message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChunkType {
    /// `F`: the final (or only) chunk.
    Final,
    /// `C`: an intermediate chunk.
    Intermediate,
    /// `A`: the sender aborts the message.
    Abort,
}

impl ChunkType {
    /// The ASCII byte on the wire.
    pub const fn code(self) -> u8 {
        match self {
            Self::Final => b'F',
            Self::Intermediate => b'C',
            Self::Abort => b'A',
        }
    }

    /// The chunk type for a wire byte.
    pub const fn from_code(code: u8) -> Option<Self> {
        match code {
            b'F' => Some(Self::Final),
            b'C' => Some(Self::Intermediate),
            b'A' => Some(Self::Abort),
            _ => None,
        }
    }
}

/// The 8-byte header in front of every UA TCP message (chunk).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MessageHeader {
    /// What the message is.
    pub message_type: MessageType,
    /// Where the chunk sits in its message (always `Final` for connection messages).
    pub chunk_type: ChunkType,
    /// Size of the whole chunk, header included.
    pub message_size: u32,
}

impl MessageHeader {
    /// Appends the 8 header bytes.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        buf.extend_from_slice(&self.message_type.code());
        buf.push(self.chunk_type.code());
        buf.extend_from_slice(&self.message_size.to_le_bytes());
    }

    /// Checks the message type (needs at least 3 bytes of `prefix`) and, when present, the chunk
    /// type; used to reject garbage before a whole header has arrived.
    pub(crate) fn check_prefix(prefix: &[u8]) -> Result<(), TransportError> {
        let Some(&[a, b, c]) = prefix.get(..3) else {
            return Ok(());
        };
        let message_type = MessageType::from_code([a, b, c])
            .ok_or(TransportError::MessageTypeInvalid([a, b, c]))?;
        if let Some(&chunk_type) = prefix.get(3) {
            let valid = match ChunkType::from_code(chunk_type) {
                Some(ChunkType::Final) => true,
                Some(_) => message_type.is_secure_channel(),
                None => false,
            };
            if !valid {
                return Err(TransportError::ChunkTypeInvalid {
                    message_type,
                    chunk_type,
                });
            }
        }
        Ok(())
    }

    /// Parses a complete header. Connection messages (HEL, ACK, ERR, RHE) must be final
    /// chunks; the size must cover at least the header.
    pub fn decode(bytes: [u8; HEADER_LENGTH]) -> Result<Self, TransportError> {
        Self::check_prefix(&bytes)?;
        let [a, b, c, chunk, s0, s1, s2, s3] = bytes;
        let message_type = MessageType::from_code([a, b, c])
            .ok_or(TransportError::MessageTypeInvalid([a, b, c]))?;
        let chunk_type = ChunkType::from_code(chunk).ok_or(TransportError::ChunkTypeInvalid {
            message_type,
            chunk_type: chunk,
        })?;
        let message_size = u32::from_le_bytes([s0, s1, s2, s3]);
        if (message_size as usize) < HEADER_LENGTH {
            return Err(TransportError::MessageTooSmall(message_size));
        }
        Ok(Self {
            message_type,
            chunk_type,
            message_size,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::StatusCode;

    #[test]
    fn header_layout() {
        let header = MessageHeader {
            message_type: MessageType::Message,
            chunk_type: ChunkType::Intermediate,
            message_size: 0x0102,
        };
        let mut buf = Vec::new();
        header.encode(&mut buf);
        assert_eq!(buf, *b"MSGC\x02\x01\x00\x00");
        assert_eq!(
            MessageHeader::decode(*b"MSGC\x02\x01\x00\x00").unwrap(),
            header
        );
    }

    #[test]
    fn codes_round_trip() {
        for (kind, code) in MESSAGE_TYPES {
            assert_eq!(kind.code(), code);
            assert_eq!(MessageType::from_code(code), Some(kind));
        }
        for chunk in [ChunkType::Final, ChunkType::Intermediate, ChunkType::Abort] {
            assert_eq!(ChunkType::from_code(chunk.code()), Some(chunk));
        }
    }

    #[test]
    fn invalid_headers() {
        let error = MessageHeader::decode(*b"GET \x20\x00\x00\x00").unwrap_err();
        assert_eq!(error, TransportError::MessageTypeInvalid(*b"GET"));
        assert_eq!(
            error.status_code(),
            StatusCode::BAD_TCP_MESSAGE_TYPE_INVALID
        );
        // Connection messages are never chunked.
        assert_eq!(
            MessageHeader::decode(*b"HELC\x20\x00\x00\x00").unwrap_err(),
            TransportError::ChunkTypeInvalid {
                message_type: MessageType::Hello,
                chunk_type: b'C'
            }
        );
        assert!(matches!(
            MessageHeader::decode(*b"MSGX\x20\x00\x00\x00").unwrap_err(),
            TransportError::ChunkTypeInvalid {
                chunk_type: b'X',
                ..
            }
        ));
        assert_eq!(
            MessageHeader::decode(*b"MSGF\x07\x00\x00\x00").unwrap_err(),
            TransportError::MessageTooSmall(7)
        );
    }
}
