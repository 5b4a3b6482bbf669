//! The ReverseHello message (OPC 10000-6 §7.1.2.6): a server that connects out to a client
//! announces its ApplicationUri and the endpoint the client should use.

use super::connection_message::ConnectionMessage;
use super::message_header::MessageType;
use crate::encoding::{BinaryEncodable, DecodeError, Reader, UaString};

/// `RHE`: sent by a server over a connection it opened to a client.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReverseHello {
    /// ApplicationUri of the server (at most 4096 bytes).
    pub server_uri: UaString,
    /// Endpoint URL the client should name in its Hello (at most 4096 bytes).
    pub endpoint_url: UaString,
}

impl BinaryEncodable for ReverseHello {
    fn encode(&self, buf: &mut Vec<u8>) {
        self.server_uri.encode(buf);
        self.endpoint_url.encode(buf);
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            server_uri: UaString::decode(reader)?,
            endpoint_url: UaString::decode(reader)?,
        })
    }

    fn encoded_len(&self) -> usize {
        self.server_uri.encoded_len() + self.endpoint_url.encoded_len()
    }
}

impl ConnectionMessage for ReverseHello {
    const MESSAGE_TYPE: MessageType = MessageType::ReverseHello;
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn message_layout() {
        let message = ReverseHello {
            server_uri: UaString::from("urn:s"),
            endpoint_url: UaString::NULL,
        };
        assert_eq!(
            message.to_message_bytes(),
            [
                b'R', b'H', b'E', b'F', 21, 0, 0, 0, 5, 0, 0, 0, b'u', b'r', b'n', b':', b's',
                0xFF, 0xFF, 0xFF, 0xFF
            ]
        );
    }

    proptest! {
        #[test]
        fn round_trip(server_uri: Option<String>, endpoint_url: Option<String>) {
            let message = ReverseHello {
                server_uri: UaString(server_uri),
                endpoint_url: UaString(endpoint_url),
            };
            prop_assert_eq!(ReverseHello::from_bytes(&message.to_bytes()).unwrap(), message);
        }
    }
}
