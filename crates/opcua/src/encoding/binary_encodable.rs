//! The `BinaryEncodable` trait and its implementations for the fixed-size built-in types
//! (Boolean, integers, Float, Double, StatusCode) and for arrays (OPC 10000-6 §5.2.2.1-§5.2.2.3,
//! §5.2.2.11, §5.2.5).

use super::error::DecodeError;
use super::reader::Reader;
use crate::types::StatusCode;

/// A value with a UA Binary encoding.
pub trait BinaryEncodable: Sized {
    /// Appends the encoding of `self` to `buf`.
    fn encode(&self, buf: &mut Vec<u8>);

    /// Decodes one value from `reader`, enforcing its limits.
    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError>;

    /// Exact number of bytes [`encode`](Self::encode) appends.
    fn encoded_len(&self) -> usize;

    /// Encodes into a new vector of exactly the right capacity.
    fn to_bytes(&self) -> Vec<u8> {
        let mut buf = Vec::with_capacity(self.encoded_len());
        self.encode(&mut buf);
        buf
    }

    /// Decodes a value that must fill all of `bytes`, with default limits.
    fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut reader = Reader::new(bytes);
        let value = Self::decode(&mut reader)?;
        reader.expect_end()?;
        Ok(value)
    }
}

/// Writes an Int32 length prefix; lengths beyond `i32::MAX` cannot be represented in UA Binary
/// and are clamped (such values exceed every message size limit anyway).
pub(crate) fn encode_length(length: usize, buf: &mut Vec<u8>) {
    let length = i32::try_from(length).unwrap_or(i32::MAX);
    buf.extend_from_slice(&length.to_le_bytes());
}

/// Writes the null length prefix (-1).
pub(crate) fn encode_null_length(buf: &mut Vec<u8>) {
    buf.extend_from_slice(&(-1i32).to_le_bytes());
}

macro_rules! little_endian_number {
    ($($ty:ty),* $(,)?) => {$(
        impl BinaryEncodable for $ty {
            fn encode(&self, buf: &mut Vec<u8>) {
                buf.extend_from_slice(&self.to_le_bytes());
            }

            fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
                Ok(<$ty>::from_le_bytes(reader.read_array()?))
            }

            fn encoded_len(&self) -> usize {
                size_of::<$ty>()
            }
        }
    )*};
}

// SByte, Byte, Int16, UInt16, Int32, UInt32, Int64, UInt64 (§5.2.2.2) and Float, Double
// (§5.2.2.3, IEEE 754 little-endian).
little_endian_number!(i8, u8, i16, u16, i32, u32, i64, u64, f32, f64);

/// Boolean (§5.2.2.1): one byte; any non-zero value decodes as true, true encodes as 1.
impl BinaryEncodable for bool {
    fn encode(&self, buf: &mut Vec<u8>) {
        buf.push(u8::from(*self));
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(reader.read_u8()? != 0)
    }

    fn encoded_len(&self) -> usize {
        1
    }
}

/// StatusCode (§5.2.2.11): a UInt32.
impl BinaryEncodable for StatusCode {
    fn encode(&self, buf: &mut Vec<u8>) {
        self.bits().encode(buf);
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(StatusCode::from_u32(u32::decode(reader)?))
    }

    fn encoded_len(&self) -> usize {
        4
    }
}

/// Array (§5.2.5): Int32 length then the elements. A null array (-1) decodes as empty; use
/// `Option<Vec<T>>` where null and empty must stay distinct.
impl<T: BinaryEncodable> BinaryEncodable for Vec<T> {
    fn encode(&self, buf: &mut Vec<u8>) {
        encode_length(self.len(), buf);
        for element in self {
            element.encode(buf);
        }
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Option::<Vec<T>>::decode(reader)?.unwrap_or_default())
    }

    fn encoded_len(&self) -> usize {
        4 + self.iter().map(BinaryEncodable::encoded_len).sum::<usize>()
    }
}

/// Array (§5.2.5) that keeps null (`None`, length -1) apart from empty.
impl<T: BinaryEncodable> BinaryEncodable for Option<Vec<T>> {
    fn encode(&self, buf: &mut Vec<u8>) {
        match self {
            Some(elements) => elements.encode(buf),
            None => encode_null_length(buf),
        }
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let Some(length) = reader.read_array_length()? else {
            return Ok(None);
        };
        let mut elements = Vec::with_capacity(length);
        for _ in 0..length {
            elements.push(T::decode(reader)?);
        }
        Ok(Some(elements))
    }

    fn encoded_len(&self) -> usize {
        self.as_ref().map_or(4, BinaryEncodable::encoded_len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::{DecodeErrorKind, DecodingLimits};
    use proptest::prelude::*;

    fn round_trip<T: BinaryEncodable + PartialEq + std::fmt::Debug>(value: &T) {
        let bytes = value.to_bytes();
        assert_eq!(bytes.len(), value.encoded_len());
        assert_eq!(&T::from_bytes(&bytes).unwrap(), value);
    }

    #[test]
    fn integers_are_little_endian() {
        // §5.2.2.2: Int32 1 000 000 000 is 00 CA 9A 3B.
        assert_eq!(1_000_000_000i32.to_bytes(), [0x00, 0xCA, 0x9A, 0x3B]);
        assert_eq!(0x0102u16.to_bytes(), [0x02, 0x01]);
        assert_eq!((-2i8).to_bytes(), [0xFE]);
        // §5.2.2.3: Float -6.5 is 00 00 D0 C0.
        assert_eq!((-6.5f32).to_bytes(), [0x00, 0x00, 0xD0, 0xC0]);
    }

    #[test]
    fn boolean_non_zero_is_true() {
        assert!(bool::from_bytes(&[0x7F]).unwrap());
        assert!(!bool::from_bytes(&[0]).unwrap());
        assert_eq!(true.to_bytes(), [1]);
    }

    #[test]
    fn truncated_number() {
        let error = u32::from_bytes(&[1, 2, 3]).unwrap_err();
        assert_eq!(error.offset, 0);
        assert_eq!(
            error.kind,
            DecodeErrorKind::UnexpectedEnd {
                needed: 4,
                available: 3
            }
        );
    }

    #[test]
    fn arrays_null_empty_and_limits() {
        assert_eq!(Option::<Vec<u16>>::from_bytes(&[0xFF; 4]).unwrap(), None);
        assert_eq!(
            Vec::<u16>::from_bytes(&[0xFF; 4]).unwrap(),
            Vec::<u16>::new()
        );
        assert_eq!(
            Some(Vec::<u16>::new()).to_bytes(),
            [0, 0, 0, 0],
            "empty array has length 0"
        );
        assert_eq!(vec![1u16, 2].to_bytes(), [2, 0, 0, 0, 1, 0, 2, 0]);
        assert_eq!(
            Vec::<u8>::from_bytes(&[0xFD, 0xFF, 0xFF, 0xFF])
                .unwrap_err()
                .kind,
            DecodeErrorKind::NegativeLength(-3)
        );
        let limits = DecodingLimits {
            max_array_length: 2,
            ..DecodingLimits::default()
        };
        let mut reader = Reader::with_limits(&[3, 0, 0, 0, 1, 2, 3], limits);
        assert_eq!(
            Vec::<u8>::decode(&mut reader).unwrap_err().kind,
            DecodeErrorKind::ArrayTooLong {
                length: 3,
                limit: 2
            }
        );
    }

    #[test]
    fn trailing_bytes_rejected_by_from_bytes() {
        let error = u8::from_bytes(&[1, 2]).unwrap_err();
        assert_eq!(error.offset, 1);
        assert_eq!(error.kind, DecodeErrorKind::TrailingBytes(1));
    }

    proptest! {
        #[test]
        fn numbers_round_trip(a: i8, b: u8, c: i16, d: u16, e: i32, f: u32, g: i64, h: u64, flag: bool) {
            round_trip(&a); round_trip(&b); round_trip(&c); round_trip(&d);
            round_trip(&e); round_trip(&f); round_trip(&g); round_trip(&h); round_trip(&flag);
        }

        #[test]
        fn floats_round_trip_bit_exact(x: f32, y: f64) {
            prop_assert_eq!(f32::from_bytes(&x.to_bytes()).unwrap().to_bits(), x.to_bits());
            prop_assert_eq!(f64::from_bytes(&y.to_bytes()).unwrap().to_bits(), y.to_bits());
        }

        #[test]
        fn arrays_round_trip(values: Vec<i32>, maybe: Option<Vec<u16>>) {
            round_trip(&values);
            round_trip(&maybe);
        }

        #[test]
        fn status_code_round_trip(bits: u32) {
            round_trip(&StatusCode::from_u32(bits));
        }
    }
}
