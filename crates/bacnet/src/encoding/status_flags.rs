//! `BACnetStatusFlags`: the four-bit bit string {in-alarm, fault, overridden, out-of-service}.

use super::bit_string::BitString;
use super::error::DecodeError;
use super::primitive::{ApplicationTag, PrimitiveValue};
use super::reader::Reader;

/// Status flags of an object (Clause 12, `BACnetStatusFlags`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct StatusFlags {
    /// Bit 0: event state is not normal.
    pub in_alarm: bool,
    /// Bit 1: reliability is not no-fault-detected.
    pub fault: bool,
    /// Bit 2: the value is overridden locally.
    pub overridden: bool,
    /// Bit 3: out-of-service is true.
    pub out_of_service: bool,
}

impl StatusFlags {
    fn to_bit_string(self) -> BitString {
        BitString::from_bits(&[
            self.in_alarm,
            self.fault,
            self.overridden,
            self.out_of_service,
        ])
    }

    /// Reads the first four bits of a bit string; missing bits count as clear.
    pub fn from_bit_string(bits: &BitString) -> Self {
        Self {
            in_alarm: bits.get(0),
            fault: bits.get(1),
            overridden: bits.get(2),
            out_of_service: bits.get(3),
        }
    }
}

impl PrimitiveValue for StatusFlags {
    const TAG: ApplicationTag = ApplicationTag::BitString;
    fn content_len(&self) -> usize {
        2
    }
    fn encode_content(&self, buf: &mut Vec<u8>) {
        self.to_bit_string().encode_content(buf);
    }
    fn decode_content(content: &mut Reader<'_>) -> Result<Self, DecodeError> {
        BitString::decode_content(content).map(|bits| Self::from_bit_string(&bits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_four_bits() {
        let flags = StatusFlags {
            in_alarm: true,
            out_of_service: true,
            ..StatusFlags::default()
        };
        let mut buf = Vec::new();
        flags.encode_application(&mut buf);
        assert_eq!(buf, [0x82, 0x04, 0x90]);
        assert_eq!(
            StatusFlags::decode_application(&mut Reader::new(&buf)).unwrap(),
            flags
        );
    }
}
