//! Clause 20.2.9 CharacterString: a character-set octet followed by the encoded text.
//!
//! Decodes UTF-8 (X'00'), UCS-4 (X'03'), UCS-2 big-endian (X'04') and ISO 8859-1 (X'05')
//! into a Rust `String`; always encodes UTF-8. DBCS (X'01') and JIS X 0208 (X'02') give
//! [`DecodeErrorKind::InvalidCharacterSet`].

use super::error::{DecodeError, DecodeErrorKind};
use super::primitive::{ApplicationTag, PrimitiveValue};
use super::reader::Reader;

/// Character-set octet values (`BACnetCharacterSet`, Clause 20.2.9).
pub mod character_set {
    /// ISO 10646 UTF-8 (formerly ANSI X3.4).
    pub const UTF_8: u8 = 0x00;
    /// IBM/Microsoft DBCS.
    pub const DBCS: u8 = 0x01;
    /// JIS X 0208.
    pub const JIS_X_0208: u8 = 0x02;
    /// ISO 10646 UCS-4, big-endian.
    pub const UCS_4: u8 = 0x03;
    /// ISO 10646 UCS-2, big-endian.
    pub const UCS_2: u8 = 0x04;
    /// ISO 8859-1 (Latin-1).
    pub const ISO_8859_1: u8 = 0x05;
}

impl PrimitiveValue for String {
    const TAG: ApplicationTag = ApplicationTag::CharacterString;

    fn content_len(&self) -> usize {
        1 + self.len()
    }

    fn encode_content(&self, buf: &mut Vec<u8>) {
        buf.push(character_set::UTF_8);
        buf.extend_from_slice(self.as_bytes());
    }

    fn decode_content(content: &mut Reader<'_>) -> Result<Self, DecodeError> {
        if content.is_empty() {
            return Err(content.error(DecodeErrorKind::InvalidLength { length: 0 }));
        }
        let set_offset = content.position();
        let set = content.read_u8()?;
        let text_offset = content.position();
        let text = content.read_rest();
        let invalid = |what| DecodeError::new(text_offset, DecodeErrorKind::InvalidValue(what));
        match set {
            character_set::UTF_8 => std::str::from_utf8(text)
                .map(str::to_owned)
                .map_err(|_| invalid("character string is not valid UTF-8")),
            character_set::ISO_8859_1 => Ok(text.iter().map(|&b| char::from(b)).collect()),
            character_set::UCS_2 => {
                if !text.len().is_multiple_of(2) {
                    return Err(invalid("UCS-2 string has an odd number of octets"));
                }
                let units = text
                    .chunks_exact(2)
                    .map(|pair| u16::from_be_bytes([pair[0], pair[1]]));
                char::decode_utf16(units)
                    .collect::<Result<String, _>>()
                    .map_err(|_| invalid("UCS-2 string holds an unpaired surrogate"))
            }
            character_set::UCS_4 => {
                if !text.len().is_multiple_of(4) {
                    return Err(invalid("UCS-4 string length is not a multiple of 4"));
                }
                text.chunks_exact(4)
                    .map(|quad| {
                        char::from_u32(u32::from_be_bytes([quad[0], quad[1], quad[2], quad[3]]))
                    })
                    .collect::<Option<String>>()
                    .ok_or_else(|| invalid("UCS-4 string holds an invalid code point"))
            }
            other => Err(DecodeError::new(
                set_offset,
                DecodeErrorKind::InvalidCharacterSet { set: other },
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(bytes: &[u8]) -> Result<String, DecodeError> {
        String::decode_application(&mut Reader::new(bytes))
    }

    #[test]
    fn decodes_each_supported_set() {
        assert_eq!(decode(&[0x73, 0x00, b'h', b'i']).unwrap(), "hi");
        assert_eq!(decode(&[0x73, 0x05, 0xE9, b'a']).unwrap(), "\u{e9}a");
        assert_eq!(
            decode(&[0x75, 0x05, 0x04, 0x00, 0xE9, 0x20, 0xAC]).unwrap(),
            "\u{e9}\u{20ac}"
        );
        assert_eq!(
            decode(&[0x75, 0x09, 0x03, 0, 0x01, 0xF6, 0x00, 0, 0, 0, b'x']).unwrap(),
            "\u{1F600}x"
        );
        assert_eq!(decode(&[0x71, 0x00]).unwrap(), "");
    }

    #[test]
    fn encodes_utf8() {
        let mut buf = Vec::new();
        "\u{e9}".to_owned().encode_application(&mut buf);
        assert_eq!(buf, [0x73, 0x00, 0xC3, 0xA9]);
    }

    #[test]
    fn rejects_unsupported_and_malformed() {
        assert_eq!(
            decode(&[0x72, 0x01, 0x41]).unwrap_err(),
            DecodeError::new(1, DecodeErrorKind::InvalidCharacterSet { set: 1 })
        );
        assert_eq!(
            decode(&[0x72, 0x02, 0x41]).unwrap_err().kind,
            DecodeErrorKind::InvalidCharacterSet { set: 2 }
        );
        assert_eq!(
            decode(&[0x72, 0x00, 0xFF]).unwrap_err(),
            DecodeError::new(
                2,
                DecodeErrorKind::InvalidValue("character string is not valid UTF-8")
            )
        );
        assert_eq!(
            decode(&[0x73, 0x04, 0xD8, 0x00]).unwrap_err().kind,
            DecodeErrorKind::InvalidValue("UCS-2 string holds an unpaired surrogate")
        );
        assert_eq!(
            decode(&[0x70]).unwrap_err().kind,
            DecodeErrorKind::InvalidLength { length: 0 }
        );
    }
}
