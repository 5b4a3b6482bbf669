//! The Error message (OPC 10000-6 §7.1.2.5): a StatusCode and a reason, sent before the
//! connection is closed.

use super::connection_message::ConnectionMessage;
use super::hello::MAX_URL_LENGTH;
use super::message_header::MessageType;
use crate::encoding::{BinaryEncodable, DecodeError, Reader, UaString};
use crate::types::StatusCode;

/// `ERR`: a fatal connection error.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorMessage {
    /// Why the connection is closed.
    pub error: StatusCode,
    /// Human-readable detail (at most 4096 bytes on the wire).
    pub reason: UaString,
}

impl ErrorMessage {
    /// An Error message; `reason` is cut to 4096 bytes at a character boundary.
    pub fn new(error: StatusCode, reason: &str) -> Self {
        let mut end = reason.len().min(MAX_URL_LENGTH);
        while !reason.is_char_boundary(end) {
            end -= 1;
        }
        Self {
            error,
            reason: UaString::from(reason.get(..end).unwrap_or_default()),
        }
    }
}

impl BinaryEncodable for ErrorMessage {
    fn encode(&self, buf: &mut Vec<u8>) {
        self.error.encode(buf);
        self.reason.encode(buf);
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            error: StatusCode::decode(reader)?,
            reason: UaString::decode(reader)?,
        })
    }

    fn encoded_len(&self) -> usize {
        4 + self.reason.encoded_len()
    }
}

impl ConnectionMessage for ErrorMessage {
    const MESSAGE_TYPE: MessageType = MessageType::Error;
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn message_layout() {
        let message = ErrorMessage::new(StatusCode::BAD_TCP_MESSAGE_TOO_LARGE, "big");
        assert_eq!(
            message.to_message_bytes(),
            [
                b'E', b'R', b'R', b'F', 19, 0, 0, 0, 0x00, 0x00, 0x80, 0x80, 3, 0, 0, 0, b'b',
                b'i', b'g'
            ]
        );
    }

    #[test]
    fn reason_is_truncated_on_a_char_boundary() {
        let long = "é".repeat(3000);
        let message = ErrorMessage::new(StatusCode::BAD, &long);
        assert_eq!(message.reason.as_str().map(str::len), Some(4096));
    }

    proptest! {
        #[test]
        fn round_trip(code: u32, reason: Option<String>) {
            let message = ErrorMessage { error: StatusCode::from_u32(code), reason: UaString(reason) };
            prop_assert_eq!(ErrorMessage::from_bytes(&message.to_bytes()).unwrap(), message);
        }
    }
}
