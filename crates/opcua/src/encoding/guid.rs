//! Guid (OPC 10000-6 §5.2.2.6): Data1 (UInt32), Data2 and Data3 (UInt16) little-endian, then
//! the 8 bytes of Data4 in order (the "mixed-endian" layout).

use std::fmt;

use super::binary_encodable::BinaryEncodable;
use super::error::DecodeError;
use super::reader::Reader;

/// A 16-byte globally unique identifier.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Guid {
    /// First group (8 hex digits).
    pub data1: u32,
    /// Second group (4 hex digits).
    pub data2: u16,
    /// Third group (4 hex digits).
    pub data3: u16,
    /// Last two groups (4 + 12 hex digits).
    pub data4: [u8; 8],
}

impl Guid {
    /// Builds a Guid from its 128-bit textual value, e.g. `0x72962B91_FA75_4AE6_8D28_B404DC7DAF63`.
    pub const fn from_u128(value: u128) -> Self {
        let bytes = value.to_be_bytes();
        Self {
            data1: u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
            data2: u16::from_be_bytes([bytes[4], bytes[5]]),
            data3: u16::from_be_bytes([bytes[6], bytes[7]]),
            data4: [
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14],
                bytes[15],
            ],
        }
    }

    /// The 16 bytes in UA Binary order.
    pub fn to_wire_bytes(&self) -> [u8; 16] {
        let mut out = [0u8; 16];
        out[..4].copy_from_slice(&self.data1.to_le_bytes());
        out[4..6].copy_from_slice(&self.data2.to_le_bytes());
        out[6..8].copy_from_slice(&self.data3.to_le_bytes());
        out[8..].copy_from_slice(&self.data4);
        out
    }

    /// Reads the 16 bytes in UA Binary order.
    pub fn from_wire_bytes(bytes: [u8; 16]) -> Self {
        let [a0, a1, a2, a3, b0, b1, c0, c1, d @ ..] = bytes;
        Self {
            data1: u32::from_le_bytes([a0, a1, a2, a3]),
            data2: u16::from_le_bytes([b0, b1]),
            data3: u16::from_le_bytes([c0, c1]),
            data4: d,
        }
    }
}

impl fmt::Display for Guid {
    /// Canonical form `72962B91-FA75-4AE6-8D28-B404DC7DAF63`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &self.data4;
        write!(
            f,
            "{:08X}-{:04X}-{:04X}-{:02X}{:02X}-{:02X}{:02X}{:02X}{:02X}{:02X}{:02X}",
            self.data1, self.data2, self.data3, d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]
        )
    }
}

impl BinaryEncodable for Guid {
    fn encode(&self, buf: &mut Vec<u8>) {
        buf.extend_from_slice(&self.to_wire_bytes());
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self::from_wire_bytes(reader.read_array()?))
    }

    fn encoded_len(&self) -> usize {
        16
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn spec_example_guid() {
        // OPC 10000-6 §5.2.2.6 example: {72962B91-FA75-4AE6-8D28-B404DC7DAF63}.
        let guid = Guid::from_u128(0x72962B91_FA75_4AE6_8D28_B404DC7DAF63);
        let wire = [
            0x91, 0x2B, 0x96, 0x72, 0x75, 0xFA, 0xE6, 0x4A, 0x8D, 0x28, 0xB4, 0x04, 0xDC, 0x7D,
            0xAF, 0x63,
        ];
        assert_eq!(guid.to_bytes(), wire);
        assert_eq!(Guid::from_bytes(&wire).unwrap(), guid);
        assert_eq!(guid.to_string(), "72962B91-FA75-4AE6-8D28-B404DC7DAF63");
    }

    proptest! {
        #[test]
        fn round_trip(value: u128) {
            let guid = Guid::from_u128(value);
            prop_assert_eq!(Guid::from_bytes(&guid.to_bytes()).unwrap(), guid);
        }
    }
}
