//! The Hello message (OPC 10000-6 §7.1.2.3): the client's protocol version, buffer sizes,
//! message limits and the endpoint URL it wants.

use super::connection_message::ConnectionMessage;
use super::message_header::MessageType;
use crate::encoding::{BinaryEncodable, DecodeError, Reader, UaString};

/// Longest EndpointUrl, ServerUri or Error reason, in bytes (OPC 10000-6 §7.1.2).
pub const MAX_URL_LENGTH: usize = 4096;

/// `HEL`: sent by the client right after the TCP connection opens.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hello {
    /// UACP version the client asks for (0 for this version of the standard).
    pub protocol_version: u32,
    /// Largest chunk the client can receive.
    pub receive_buffer_size: u32,
    /// Largest chunk the client will send.
    pub send_buffer_size: u32,
    /// Largest response message the client accepts; 0 = no limit.
    pub max_message_size: u32,
    /// Most chunks per response message; 0 = no limit.
    pub max_chunk_count: u32,
    /// The endpoint the client wants, e.g. `opc.tcp://host:4840/path`. Its length is checked
    /// by the negotiation, not by the decoder, so that it can answer Bad_TcpEndpointUrlInvalid.
    pub endpoint_url: UaString,
}

impl BinaryEncodable for Hello {
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
        self.endpoint_url.encode(buf);
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            protocol_version: u32::decode(reader)?,
            receive_buffer_size: u32::decode(reader)?,
            send_buffer_size: u32::decode(reader)?,
            max_message_size: u32::decode(reader)?,
            max_chunk_count: u32::decode(reader)?,
            endpoint_url: UaString::decode(reader)?,
        })
    }

    fn encoded_len(&self) -> usize {
        20 + self.endpoint_url.encoded_len()
    }
}

impl ConnectionMessage for Hello {
    const MESSAGE_TYPE: MessageType = MessageType::Hello;
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::encoding::DecodeErrorKind;
    use crate::transport::{FrameDecoder, TransportError};
    use proptest::prelude::*;

    pub(crate) fn sample_hello() -> Hello {
        Hello {
            protocol_version: 0,
            receive_buffer_size: 65_536,
            send_buffer_size: 65_536,
            max_message_size: 0,
            max_chunk_count: 0,
            endpoint_url: UaString::from("opc.tcp://h:4840"),
        }
    }

    #[test]
    fn message_layout() {
        let bytes = sample_hello().to_message_bytes();
        let mut expected = b"HELF".to_vec();
        expected.extend_from_slice(&(8u32 + 20 + 4 + 16).to_le_bytes());
        expected.extend_from_slice(&[0, 0, 0, 0]);
        expected.extend_from_slice(&[0x00, 0x00, 0x01, 0x00]);
        expected.extend_from_slice(&[0x00, 0x00, 0x01, 0x00]);
        expected.extend_from_slice(&[0; 8]);
        expected.extend_from_slice(&[16, 0, 0, 0]);
        expected.extend_from_slice(b"opc.tcp://h:4840");
        assert_eq!(bytes, expected);

        let mut decoder = FrameDecoder::new(8192);
        decoder.push(&bytes);
        let frame = decoder.next_frame().unwrap().unwrap();
        assert_eq!(Hello::from_frame(&frame).unwrap(), sample_hello());
    }

    #[test]
    fn truncated_and_trailing_bodies() {
        let mut bytes = sample_hello().to_message_bytes();
        bytes.truncate(bytes.len() - 1);
        bytes[4] -= 1;
        let mut decoder = FrameDecoder::new(8192);
        decoder.push(&bytes);
        let frame = decoder.next_frame().unwrap().unwrap();
        let error = Hello::from_frame(&frame).unwrap_err();
        assert_eq!(
            error,
            TransportError::Decode(DecodeError {
                offset: 24,
                kind: DecodeErrorKind::UnexpectedEnd {
                    needed: 16,
                    available: 15
                }
            })
        );
    }

    proptest! {
        #[test]
        fn round_trip(
            numbers: [u32; 5],
            url: Option<String>,
        ) {
            let hello = Hello {
                protocol_version: numbers[0],
                receive_buffer_size: numbers[1],
                send_buffer_size: numbers[2],
                max_message_size: numbers[3],
                max_chunk_count: numbers[4],
                endpoint_url: UaString(url),
            };
            prop_assert_eq!(hello.to_bytes().len(), hello.encoded_len());
            prop_assert_eq!(Hello::from_bytes(&hello.to_bytes()).unwrap(), hello);
        }
    }
}
