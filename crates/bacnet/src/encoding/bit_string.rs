//! Clause 20.2.10 BitString: an unused-bits octet followed by the bits, first bit in the
//! most significant position of the first octet.

use super::error::{DecodeError, DecodeErrorKind};
use super::primitive::{ApplicationTag, PrimitiveValue};
use super::reader::Reader;

/// A BACnet bit string of arbitrary length.
///
/// Invariant: bits past [`BitString::len`] in the last octet are zero, so equal bit
/// sequences compare equal.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct BitString {
    bytes: Vec<u8>,
    len: usize,
}

impl BitString {
    /// An empty bit string.
    pub const fn new() -> Self {
        Self {
            bytes: Vec::new(),
            len: 0,
        }
    }

    /// `len` bits, all clear.
    pub fn with_len(len: usize) -> Self {
        Self {
            bytes: vec![0; len.div_ceil(8)],
            len,
        }
    }

    /// Builds a bit string from booleans, bit 0 first.
    pub fn from_bits(bits: &[bool]) -> Self {
        let mut out = Self::with_len(bits.len());
        for (i, &bit) in bits.iter().enumerate() {
            out.set(i, bit);
        }
        out
    }

    /// Number of bits.
    pub const fn len(&self) -> usize {
        self.len
    }

    /// True when there are no bits.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bit `index`; bits past the end read as `false`.
    pub fn get(&self, index: usize) -> bool {
        index < self.len
            && self
                .bytes
                .get(index / 8)
                .is_some_and(|byte| byte & (0x80 >> (index % 8)) != 0)
    }

    /// Sets bit `index`, growing the string when `index` is past the end.
    pub fn set(&mut self, index: usize, value: bool) {
        if index >= self.len {
            self.len = index + 1;
            self.bytes.resize(self.len.div_ceil(8), 0);
        }
        let mask = 0x80 >> (index % 8);
        if let Some(byte) = self.bytes.get_mut(index / 8) {
            if value {
                *byte |= mask;
            } else {
                *byte &= !mask;
            }
        }
    }

    /// The packed octets (unused trailing bits are zero).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Number of unused bits in the last octet (0..=7).
    pub fn unused_bits(&self) -> u8 {
        ((8 - self.len % 8) % 8) as u8
    }
}

impl PrimitiveValue for BitString {
    const TAG: ApplicationTag = ApplicationTag::BitString;

    fn content_len(&self) -> usize {
        1 + self.bytes.len()
    }

    fn encode_content(&self, buf: &mut Vec<u8>) {
        buf.push(self.unused_bits());
        buf.extend_from_slice(&self.bytes);
    }

    fn decode_content(content: &mut Reader<'_>) -> Result<Self, DecodeError> {
        if content.is_empty() {
            return Err(content.error(DecodeErrorKind::InvalidLength { length: 0 }));
        }
        let unused_offset = content.position();
        let unused = content.read_u8()?;
        let bytes = content.read_rest();
        if unused > 7 || (bytes.is_empty() && unused != 0) {
            return Err(DecodeError::new(
                unused_offset,
                DecodeErrorKind::InvalidValue("bit string unused-bits count out of range"),
            ));
        }
        let len = bytes.len() * 8 - usize::from(unused);
        let mut bytes = bytes.to_vec();
        if let Some(last) = bytes.last_mut() {
            *last &= 0xFFu8 << unused;
        }
        Ok(Self { bytes, len })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clause_20_2_10_example() {
        // Clause 20.2.10: B'10101' is X'82 03 A8'.
        let bits = BitString::from_bits(&[true, false, true, false, true]);
        let mut buf = Vec::new();
        bits.encode_application(&mut buf);
        assert_eq!(buf, [0x82, 0x03, 0xA8]);
        assert_eq!(
            BitString::decode_application(&mut Reader::new(&buf)).unwrap(),
            bits
        );
    }

    #[test]
    fn get_set_and_growth() {
        let mut bits = BitString::new();
        assert!(bits.is_empty());
        bits.set(9, true);
        assert_eq!(bits.len(), 10);
        assert_eq!(bits.unused_bits(), 6);
        assert!(bits.get(9));
        assert!(!bits.get(8));
        assert!(!bits.get(100));
        bits.set(9, false);
        assert_eq!(bits.as_bytes(), [0, 0]);
    }

    #[test]
    fn decode_clears_unused_bits_and_checks_count() {
        let decoded = BitString::decode_application(&mut Reader::new(&[0x82, 0x04, 0xFF])).unwrap();
        assert_eq!(decoded.as_bytes(), [0xF0]);
        assert_eq!(decoded.len(), 4);
        let err = BitString::decode_application(&mut Reader::new(&[0x82, 0x08, 0xFF])).unwrap_err();
        assert_eq!(
            err,
            DecodeError::new(
                1,
                DecodeErrorKind::InvalidValue("bit string unused-bits count out of range")
            )
        );
        let err = BitString::decode_application(&mut Reader::new(&[0x81, 0x01])).unwrap_err();
        assert_eq!(err.offset, 1);
    }
}
