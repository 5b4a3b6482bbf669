//! LocalizedText (OPC 10000-6 §5.2.2.14): an encoding mask (0x01 locale, 0x02 text) followed by
//! the fields that are present.

use super::binary_encodable::BinaryEncodable;
use super::error::{DecodeError, DecodeErrorKind};
use super::reader::Reader;
use super::string::UaString;

const LOCALE_BIT: u8 = 0x01;
const TEXT_BIT: u8 = 0x02;

/// Human-readable text with an optional locale such as `en-US`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalizedText {
    /// The locale; null when absent.
    pub locale: UaString,
    /// The text; null when absent.
    pub text: UaString,
}

impl LocalizedText {
    /// Text with a locale.
    pub fn new(locale: &str, text: &str) -> Self {
        Self {
            locale: UaString::from(locale),
            text: UaString::from(text),
        }
    }

    fn mask(&self) -> u8 {
        let mut mask = 0;
        if !self.locale.is_null() {
            mask |= LOCALE_BIT;
        }
        if !self.text.is_null() {
            mask |= TEXT_BIT;
        }
        mask
    }
}

impl BinaryEncodable for LocalizedText {
    fn encode(&self, buf: &mut Vec<u8>) {
        buf.push(self.mask());
        if !self.locale.is_null() {
            self.locale.encode(buf);
        }
        if !self.text.is_null() {
            self.text.encode(buf);
        }
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let offset = reader.position();
        let mask = reader.read_u8()?;
        if mask & !(LOCALE_BIT | TEXT_BIT) != 0 {
            return Err(reader.error_at(
                offset,
                DecodeErrorKind::InvalidEncodingByte {
                    field: "LocalizedText mask",
                    value: mask,
                },
            ));
        }
        let locale = if mask & LOCALE_BIT != 0 {
            UaString::decode(reader)?
        } else {
            UaString::NULL
        };
        let text = if mask & TEXT_BIT != 0 {
            UaString::decode(reader)?
        } else {
            UaString::NULL
        };
        Ok(Self { locale, text })
    }

    fn encoded_len(&self) -> usize {
        let field = |s: &UaString| if s.is_null() { 0 } else { s.encoded_len() };
        1 + field(&self.locale) + field(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn mask_layout() {
        assert_eq!(LocalizedText::default().to_bytes(), [0x00]);
        let text_only = LocalizedText {
            locale: UaString::NULL,
            text: UaString::from("Hi"),
        };
        assert_eq!(text_only.to_bytes(), [0x02, 2, 0, 0, 0, b'H', b'i']);
        assert_eq!(
            LocalizedText::new("en", "Hi").to_bytes(),
            [0x03, 2, 0, 0, 0, b'e', b'n', 2, 0, 0, 0, b'H', b'i']
        );
    }

    #[test]
    fn reserved_mask_bits_rejected() {
        assert_eq!(
            LocalizedText::from_bytes(&[0x04]).unwrap_err().kind,
            DecodeErrorKind::InvalidEncodingByte {
                field: "LocalizedText mask",
                value: 0x04
            }
        );
    }

    proptest! {
        #[test]
        fn round_trip(locale: Option<String>, text: Option<String>) {
            let value = LocalizedText { locale: UaString(locale), text: UaString(text) };
            prop_assert_eq!(value.to_bytes().len(), value.encoded_len());
            prop_assert_eq!(LocalizedText::from_bytes(&value.to_bytes()).unwrap(), value);
        }
    }
}
