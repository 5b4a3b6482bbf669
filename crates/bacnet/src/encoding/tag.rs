//! Clause 20.2.1 tag headers: tag number (extended above 14), class, and
//! length/value/type (extended lengths, opening tag 6, closing tag 7).

use super::error::{DecodeError, DecodeErrorKind, TagSpec};
use super::reader::Reader;

/// Largest tag number a header can carry; 255 is reserved (Clause 20.2.1.2).
pub const MAX_TAG_NUMBER: u8 = 254;

/// Tag class bit of the initial octet (Clause 20.2.1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagClass {
    /// Application tag: the number names the primitive data type.
    Application,
    /// Context-specific tag: the number is a field position in a constructed type.
    Context,
}

/// What the L/V/T field of a tag says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagKind {
    /// Primitive data of this many octets (for an application BOOLEAN: the value 0 or 1).
    Value(u32),
    /// Opening tag of constructed data (context class, L/V/T 6).
    Opening,
    /// Closing tag of constructed data (context class, L/V/T 7).
    Closing,
}

/// A decoded tag header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tag {
    /// Application or context class.
    pub class: TagClass,
    /// Tag number, 0..=254.
    pub number: u8,
    /// Length, opening or closing.
    pub kind: TagKind,
}

impl Tag {
    /// An application tag header for `length` octets of data type `number`.
    pub const fn application(number: u8, length: u32) -> Self {
        Self {
            class: TagClass::Application,
            number,
            kind: TagKind::Value(length),
        }
    }

    /// A context tag header for `length` octets.
    pub const fn context(number: u8, length: u32) -> Self {
        Self {
            class: TagClass::Context,
            number,
            kind: TagKind::Value(length),
        }
    }

    /// An opening tag.
    pub const fn opening(number: u8) -> Self {
        Self {
            class: TagClass::Context,
            number,
            kind: TagKind::Opening,
        }
    }

    /// A closing tag.
    pub const fn closing(number: u8) -> Self {
        Self {
            class: TagClass::Context,
            number,
            kind: TagKind::Closing,
        }
    }

    /// True for an opening tag with this number.
    pub fn is_opening(&self, number: u8) -> bool {
        self.kind == TagKind::Opening && self.number == number
    }

    /// True for a closing tag with this number.
    pub fn is_closing(&self, number: u8) -> bool {
        self.kind == TagKind::Closing && self.number == number
    }

    /// True for a context primitive tag with this number.
    pub fn is_context(&self, number: u8) -> bool {
        self.class == TagClass::Context
            && self.number == number
            && matches!(self.kind, TagKind::Value(_))
    }

    /// This tag described for error messages.
    pub fn spec(&self) -> TagSpec {
        match (self.class, self.kind) {
            (TagClass::Application, _) => TagSpec::Application(self.number),
            (TagClass::Context, TagKind::Value(_)) => TagSpec::Context(self.number),
            (TagClass::Context, TagKind::Opening) => TagSpec::Opening(self.number),
            (TagClass::Context, TagKind::Closing) => TagSpec::Closing(self.number),
        }
    }

    /// The length of a primitive tag, or an `UnexpectedTag` error naming `expected`.
    pub fn value_length(&self, offset: usize, expected: TagSpec) -> Result<u32, DecodeError> {
        match self.kind {
            TagKind::Value(length) => Ok(length),
            _ => Err(DecodeError::new(
                offset,
                DecodeErrorKind::UnexpectedTag {
                    expected,
                    found: self.spec(),
                },
            )),
        }
    }

    /// Appends the header using the shortest form (Clause 20.2.1.3).
    pub fn encode(&self, buf: &mut Vec<u8>) {
        let class_bit = match self.class {
            TagClass::Application => 0x00,
            TagClass::Context => 0x08,
        };
        let number_bits = if self.number <= 14 {
            self.number << 4
        } else {
            0xF0
        };
        let (lvt, length) = match self.kind {
            TagKind::Opening => (6, None),
            TagKind::Closing => (7, None),
            TagKind::Value(length) if length <= 4 => (length as u8, None),
            TagKind::Value(length) => (5, Some(length)),
        };
        buf.push(number_bits | class_bit | lvt);
        if self.number > 14 {
            buf.push(self.number);
        }
        if let Some(length) = length {
            if length <= 253 {
                buf.push(length as u8);
            } else if let Ok(short) = u16::try_from(length) {
                buf.push(254);
                buf.extend_from_slice(&short.to_be_bytes());
            } else {
                buf.push(255);
                buf.extend_from_slice(&length.to_be_bytes());
            }
        }
    }

    /// Decodes a header. Does not check the announced length against the input;
    /// value decoders do that before reading.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let start = reader.position();
        let initial = reader.read_u8()?;
        let class = if initial & 0x08 != 0 {
            TagClass::Context
        } else {
            TagClass::Application
        };
        let mut number = initial >> 4;
        if number == 15 {
            number = reader.read_u8()?;
            if number == 255 {
                return Err(DecodeError::new(start, DecodeErrorKind::InvalidTag));
            }
        }
        let lvt = initial & 0x07;
        let kind = match (lvt, class) {
            (0..=4, _) => TagKind::Value(u32::from(lvt)),
            (5, _) => {
                let first = reader.read_u8()?;
                let length = match first {
                    254 => u32::from(reader.read_u16()?),
                    255 => reader.read_u32()?,
                    short => u32::from(short),
                };
                TagKind::Value(length)
            }
            (6, TagClass::Context) => TagKind::Opening,
            (7, TagClass::Context) => TagKind::Closing,
            _ => return Err(DecodeError::new(start, DecodeErrorKind::InvalidTag)),
        };
        Ok(Self {
            class,
            number,
            kind,
        })
    }

    /// Decodes the next header without consuming it.
    pub fn peek(reader: &Reader<'_>) -> Result<Self, DecodeError> {
        Self::decode(&mut reader.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(tag: Tag) -> Vec<u8> {
        let mut buf = Vec::new();
        tag.encode(&mut buf);
        buf
    }

    #[test]
    fn short_forms() {
        // Clause 20.2.3: application BOOLEAN true is X'11'.
        assert_eq!(encoded(Tag::application(1, 1)), [0x11]);
        // Clause 20.2.4: Unsigned 72 is X'21 48', so the header is X'21'.
        assert_eq!(encoded(Tag::application(2, 1)), [0x21]);
        assert_eq!(encoded(Tag::context(0, 4)), [0x0C]);
        assert_eq!(encoded(Tag::opening(3)), [0x3E]);
        assert_eq!(encoded(Tag::closing(3)), [0x3F]);
    }

    #[test]
    fn extended_number_and_lengths() {
        // Clause 20.2.1.2: tag number 15..=254 goes in a second octet after X'F?'.
        assert_eq!(encoded(Tag::context(20, 1)), [0xF9, 20]);
        assert_eq!(encoded(Tag::application(6, 5)), [0x65, 5]);
        assert_eq!(encoded(Tag::application(6, 253)), [0x65, 253]);
        assert_eq!(encoded(Tag::application(6, 254)), [0x65, 254, 0x00, 0xFE]);
        assert_eq!(encoded(Tag::application(6, 65535)), [0x65, 254, 0xFF, 0xFF]);
        assert_eq!(
            encoded(Tag::application(6, 65536)),
            [0x65, 255, 0x00, 0x01, 0x00, 0x00]
        );
        assert_eq!(
            encoded(Tag::opening(200)),
            [0xFE, 200],
            "opening tag with an extended number"
        );
    }

    #[test]
    fn decode_round_trip_of_each_form() {
        for tag in [
            Tag::application(12, 4),
            Tag::context(14, 0),
            Tag::context(15, 300),
            Tag::context(254, 70_000),
            Tag::opening(0),
            Tag::closing(254),
        ] {
            let bytes = encoded(tag);
            let mut r = Reader::new(&bytes);
            assert_eq!(Tag::decode(&mut r).unwrap(), tag);
            assert!(r.is_empty());
        }
    }

    #[test]
    fn rejects_reserved_and_malformed_headers() {
        let err = Tag::decode(&mut Reader::new(&[0xF9, 0xFF])).unwrap_err();
        assert_eq!(err, DecodeError::new(0, DecodeErrorKind::InvalidTag));
        // Application class with L/V/T 6 is not an opening tag.
        let err = Tag::decode(&mut Reader::new(&[0x26])).unwrap_err();
        assert_eq!(err.kind, DecodeErrorKind::InvalidTag);
        let err = Tag::decode(&mut Reader::new(&[0x65, 254, 0x01])).unwrap_err();
        assert_eq!(
            err,
            DecodeError::new(
                2,
                DecodeErrorKind::Truncated {
                    needed: 2,
                    remaining: 1
                }
            )
        );
    }
}
