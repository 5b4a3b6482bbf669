//! String, ByteString and XmlElement (OPC 10000-6 §5.2.2.4, §5.2.2.7, §5.2.2.8): an Int32 byte
//! length (-1 = null) followed by the bytes. Null and empty stay distinct.

use std::fmt;

use bytes::Bytes;

use super::binary_encodable::{BinaryEncodable, encode_length, encode_null_length};
use super::error::{DecodeError, DecodeErrorKind};
use super::reader::Reader;

/// Reads a length-prefixed byte run bounded by `limit`; `None` for null.
fn read_bounded_bytes<'a>(
    reader: &mut Reader<'a>,
    limit: usize,
) -> Result<Option<&'a [u8]>, DecodeError> {
    let start = reader.position();
    let Some(length) = reader.read_length()? else {
        return Ok(None);
    };
    if length > limit {
        return Err(reader.error_at(start, DecodeErrorKind::StringTooLong { length, limit }));
    }
    reader.read_bytes(length).map(Some)
}

/// Reads a length-prefixed UTF-8 string bounded by the string limit; `None` for null.
fn read_utf8(reader: &mut Reader<'_>) -> Result<Option<String>, DecodeError> {
    let limit = reader.limits().max_string_length;
    let start = reader.position() + 4;
    match read_bounded_bytes(reader, limit)? {
        None => Ok(None),
        Some(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) => Ok(Some(text.to_owned())),
            Err(error) => {
                Err(reader.error_at(start + error.valid_up_to(), DecodeErrorKind::InvalidUtf8))
            }
        },
    }
}

fn encode_optional_bytes(bytes: Option<&[u8]>, buf: &mut Vec<u8>) {
    match bytes {
        Some(bytes) => {
            encode_length(bytes.len(), buf);
            buf.extend_from_slice(bytes);
        }
        None => encode_null_length(buf),
    }
}

/// A UA String: UTF-8 text that may be null (`None`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UaString(pub Option<String>);

impl UaString {
    /// The null string.
    pub const NULL: UaString = UaString(None);

    /// The text, or `None` for null.
    pub fn as_str(&self) -> Option<&str> {
        self.0.as_deref()
    }

    /// True for the null string (not for the empty one).
    pub fn is_null(&self) -> bool {
        self.0.is_none()
    }
}

impl From<&str> for UaString {
    fn from(text: &str) -> Self {
        Self(Some(text.to_owned()))
    }
}

impl From<String> for UaString {
    fn from(text: String) -> Self {
        Self(Some(text))
    }
}

impl fmt::Display for UaString {
    /// The text; null displays as nothing.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str().unwrap_or_default())
    }
}

impl BinaryEncodable for UaString {
    fn encode(&self, buf: &mut Vec<u8>) {
        encode_optional_bytes(self.as_str().map(str::as_bytes), buf);
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        read_utf8(reader).map(Self)
    }

    fn encoded_len(&self) -> usize {
        4 + self.as_str().map_or(0, str::len)
    }
}

/// A UA ByteString: opaque bytes that may be null (`None`).
///
/// The bytes are a reference-counted [`Bytes`]: cloning is cheap, and a ByteString decoded by a
/// [`Reader::from_shared`] reader may be a slice of the received message (no copy).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ByteString(pub Option<Bytes>);

impl ByteString {
    /// The null byte string.
    pub const NULL: ByteString = ByteString(None);

    /// The bytes, or `None` for null.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        self.0.as_deref()
    }

    /// True for the null byte string (not for the empty one).
    pub fn is_null(&self) -> bool {
        self.0.is_none()
    }

    /// The bytes as a vector (empty for null); no copy when this was their only reference.
    pub fn into_vec(self) -> Vec<u8> {
        self.0.map(Vec::from).unwrap_or_default()
    }
}

impl From<Vec<u8>> for ByteString {
    fn from(bytes: Vec<u8>) -> Self {
        Self(Some(Bytes::from(bytes)))
    }
}

impl From<&[u8]> for ByteString {
    fn from(bytes: &[u8]) -> Self {
        Self(Some(Bytes::copy_from_slice(bytes)))
    }
}

impl From<Bytes> for ByteString {
    fn from(bytes: Bytes) -> Self {
        Self(Some(bytes))
    }
}

impl From<Option<Vec<u8>>> for ByteString {
    fn from(bytes: Option<Vec<u8>>) -> Self {
        Self(bytes.map(Bytes::from))
    }
}

impl BinaryEncodable for ByteString {
    fn encode(&self, buf: &mut Vec<u8>) {
        encode_optional_bytes(self.as_bytes(), buf);
    }

    /// Copies the payload once, straight from the input slice, or shares it when the reader
    /// has a shared input and the payload is long (see [`Reader::read_shared`]).
    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let limit = reader.limits().max_byte_string_length;
        let start = reader.position();
        let Some(length) = reader.read_length()? else {
            return Ok(Self::NULL);
        };
        if length > limit {
            return Err(reader.error_at(start, DecodeErrorKind::StringTooLong { length, limit }));
        }
        reader.read_shared(length).map(|bytes| Self(Some(bytes)))
    }

    fn encoded_len(&self) -> usize {
        4 + self.as_bytes().map_or(0, <[u8]>::len)
    }
}

/// A UA XmlElement: an XML fragment carried as a UTF-8 string, may be null. The content is not
/// parsed here.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct XmlElement(pub Option<String>);

impl XmlElement {
    /// The XML text, or `None` for null.
    pub fn as_str(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

impl From<&str> for XmlElement {
    fn from(text: &str) -> Self {
        Self(Some(text.to_owned()))
    }
}

impl BinaryEncodable for XmlElement {
    fn encode(&self, buf: &mut Vec<u8>) {
        encode_optional_bytes(self.as_str().map(str::as_bytes), buf);
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        read_utf8(reader).map(Self)
    }

    fn encoded_len(&self) -> usize {
        4 + self.as_str().map_or(0, str::len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::DecodingLimits;
    use proptest::prelude::*;

    #[test]
    fn spec_example_string() {
        // OPC 10000-6 §5.2.2.4 example: "水Boy" is 06 00 00 00 E6 B0 B4 42 6F 79.
        let bytes = [0x06, 0, 0, 0, 0xE6, 0xB0, 0xB4, 0x42, 0x6F, 0x79];
        assert_eq!(UaString::from("水Boy").to_bytes(), bytes);
        assert_eq!(
            UaString::from_bytes(&bytes).unwrap(),
            UaString::from("水Boy")
        );
    }

    #[test]
    fn null_and_empty_are_distinct() {
        assert_eq!(UaString::NULL.to_bytes(), [0xFF; 4]);
        assert_eq!(UaString::from("").to_bytes(), [0; 4]);
        assert_eq!(UaString::from_bytes(&[0xFF; 4]).unwrap(), UaString::NULL);
        assert_eq!(
            ByteString::from_bytes(&[0xFF; 4]).unwrap(),
            ByteString::NULL
        );
        assert_eq!(
            ByteString::from_bytes(&[0; 4]).unwrap(),
            ByteString::from(Vec::new())
        );
    }

    #[test]
    fn malformed_strings() {
        assert_eq!(
            UaString::from_bytes(&[0xFE, 0xFF, 0xFF, 0xFF])
                .unwrap_err()
                .kind,
            DecodeErrorKind::NegativeLength(-2)
        );
        let truncated = UaString::from_bytes(&[5, 0, 0, 0, b'a']).unwrap_err();
        assert_eq!(truncated.offset, 4);
        assert_eq!(
            truncated.kind,
            DecodeErrorKind::UnexpectedEnd {
                needed: 5,
                available: 1
            }
        );
        let invalid = UaString::from_bytes(&[3, 0, 0, 0, b'a', 0xFF, b'b']).unwrap_err();
        assert_eq!(invalid.offset, 5);
        assert_eq!(invalid.kind, DecodeErrorKind::InvalidUtf8);
        let limits = DecodingLimits {
            max_byte_string_length: 2,
            ..DecodingLimits::default()
        };
        let mut reader = Reader::with_limits(&[3, 0, 0, 0, 1, 2, 3], limits);
        assert_eq!(
            ByteString::decode(&mut reader).unwrap_err().kind,
            DecodeErrorKind::StringTooLong {
                length: 3,
                limit: 2
            }
        );
    }

    #[test]
    fn long_byte_strings_share_the_input_buffer() {
        use crate::encoding::SHARE_MIN_LENGTH;
        let payload: Vec<u8> = (0..SHARE_MIN_LENGTH + 5).map(|i| i as u8).collect();
        let mut encoded = ByteString::from(vec![1u8, 2]).to_bytes();
        ByteString::from(payload.clone()).encode(&mut encoded);
        let input = bytes::Bytes::from(encoded);
        let mut reader = Reader::from_shared(&input, DecodingLimits::default());
        let short = ByteString::decode(&mut reader).unwrap();
        let long = ByteString::decode(&mut reader).unwrap();
        reader.expect_end().unwrap();
        assert_eq!(short.as_bytes(), Some([1u8, 2].as_slice()));
        assert_eq!(long.as_bytes(), Some(payload.as_slice()));
        let inside = input.as_ptr_range();
        assert!(!inside.contains(&short.as_bytes().unwrap().as_ptr()));
        assert_eq!(long.as_bytes().unwrap().as_ptr(), input[10..].as_ptr());
        // The limit is checked before any slice is taken.
        let limits = DecodingLimits {
            max_byte_string_length: SHARE_MIN_LENGTH,
            ..DecodingLimits::default()
        };
        let mut reader = Reader::from_shared(&input, limits);
        ByteString::decode(&mut reader).unwrap();
        assert_eq!(
            ByteString::decode(&mut reader).unwrap_err(),
            DecodeError {
                offset: 6,
                kind: DecodeErrorKind::StringTooLong {
                    length: SHARE_MIN_LENGTH + 5,
                    limit: SHARE_MIN_LENGTH
                }
            }
        );
        assert_eq!(long.into_vec(), payload);
    }

    proptest! {
        #[test]
        fn strings_round_trip(text: Option<String>, bytes: Option<Vec<u8>>, xml: Option<String>) {
            let value = UaString(text);
            let encoded = value.to_bytes();
            prop_assert_eq!(encoded.len(), value.encoded_len());
            prop_assert_eq!(UaString::from_bytes(&encoded).unwrap(), value);
            let value = ByteString::from(bytes);
            let encoded = value.to_bytes();
            prop_assert_eq!(encoded.len(), value.encoded_len());
            prop_assert_eq!(ByteString::from_bytes(&encoded).unwrap(), value);
            let value = XmlElement(xml);
            prop_assert_eq!(XmlElement::from_bytes(&value.to_bytes()).unwrap(), value);
        }
    }
}
