//! The Acknowledge message (OPC 10000-6 §7.1.2.4): the server's answer to a Hello with the
//! revised protocol version, buffer sizes and limits.

use super::connection_message::ConnectionMessage;
use super::message_header::MessageType;
use crate::encoding::{BinaryEncodable, DecodeError, Reader};

/// `ACK`: the server accepts the connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Acknowledge {
    /// UACP version the server will use (at most the one the client asked for).
    pub protocol_version: u32,
    /// Largest chunk the server can receive (at most the client's send buffer size).
    pub receive_buffer_size: u32,
    /// Largest chunk the server will send (at most the client's receive buffer size).
    pub send_buffer_size: u32,
    /// Largest request message the server accepts; 0 = no limit.
    pub max_message_size: u32,
    /// Most chunks per request message; 0 = no limit.
    pub max_chunk_count: u32,
}

impl BinaryEncodable for Acknowledge {
    fn encode(&self, buf: &mut Vec<u8>) {
        for value in [
            self.protocol_version,
            self.receive_buffer_size,
            self.send_buffer_size,
            self.max_message_size,
            self.max_chunk_count,
        ] {
            value.encode(buf);
        }
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            protocol_version: u32::decode(reader)?,
            receive_buffer_size: u32::decode(reader)?,
            send_buffer_size: u32::decode(reader)?,
            max_message_size: u32::decode(reader)?,
            max_chunk_count: u32::decode(reader)?,
        })
    }

    fn encoded_len(&self) -> usize {
        20
    }
}

impl ConnectionMessage for Acknowledge {
    const MESSAGE_TYPE: MessageType = MessageType::Acknowledge;
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn message_layout() {
        // A 28-byte ACK: header, version 0, 64 KiB buffers, no limits.
        let ack = Acknowledge {
            protocol_version: 0,
            receive_buffer_size: 65_536,
            send_buffer_size: 65_536,
            max_message_size: 0,
            max_chunk_count: 0,
        };
        let expected = [
            b'A', b'C', b'K', b'F', 28, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0,
            0, 0, 0,
        ];
        assert_eq!(ack.to_message_bytes(), expected);
    }

    proptest! {
        #[test]
        fn round_trip(numbers: [u32; 5]) {
            let ack = Acknowledge {
                protocol_version: numbers[0],
                receive_buffer_size: numbers[1],
                send_buffer_size: numbers[2],
                max_message_size: numbers[3],
                max_chunk_count: numbers[4],
            };
            prop_assert_eq!(Acknowledge::from_bytes(&ack.to_bytes()).unwrap(), ack);
        }
    }
}
