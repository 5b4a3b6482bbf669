//! The sequence header (OPC 10000-6 §6.7.2.4): the chunk's sequence number and the request id
//! that ties the chunks of one request or response together.

use crate::encoding::{BinaryEncodable, DecodeError, Reader};

/// Sequence number and request id of a secure channel chunk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SequenceHeader {
    /// Increases by one for every chunk sent on the channel.
    pub sequence_number: u32,
    /// Chosen by the client per request; the response carries the same id.
    pub request_id: u32,
}

impl BinaryEncodable for SequenceHeader {
    fn encode(&self, buf: &mut Vec<u8>) {
        self.sequence_number.encode(buf);
        self.request_id.encode(buf);
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            sequence_number: u32::decode(reader)?,
            request_id: u32::decode(reader)?,
        })
    }

    fn encoded_len(&self) -> usize {
        8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn layout() {
        let header = SequenceHeader {
            sequence_number: 51,
            request_id: 1,
        };
        assert_eq!(header.to_bytes(), [51, 0, 0, 0, 1, 0, 0, 0]);
    }

    proptest! {
        #[test]
        fn round_trip(sequence_number: u32, request_id: u32) {
            let header = SequenceHeader { sequence_number, request_id };
            prop_assert_eq!(SequenceHeader::from_bytes(&header.to_bytes()).unwrap(), header);
        }
    }
}
