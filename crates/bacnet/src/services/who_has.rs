//! Who-Has and I-Have (Clause 16.9): finding the device that holds an object.
//!
//! ```text
//! Who-Has-Request ::= SEQUENCE {
//!     limits SEQUENCE {
//!         device-instance-range-low-limit  [0] Unsigned (0..4194303),
//!         device-instance-range-high-limit [1] Unsigned (0..4194303)
//!     } OPTIONAL,
//!     object CHOICE {
//!         object-identifier [2] BACnetObjectIdentifier,
//!         object-name       [3] CharacterString
//!     }
//! }
//! I-Have-Request ::= SEQUENCE {
//!     device-identifier BACnetObjectIdentifier,
//!     object-identifier BACnetObjectIdentifier,
//!     object-name CharacterString
//! }
//! ```

use super::who_is::InstanceRange;
use crate::encoding::{
    DecodeError, DecodeErrorKind, ObjectIdentifier, PrimitiveValue, Reader, Tag, TagSpec,
};

/// The object a Who-Has asks about: by identifier or by name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum WhoHasObject {
    /// [2] the object identifier.
    Identifier(ObjectIdentifier),
    /// [3] the object name.
    Name(String),
}

/// Who-Has-Request: asks devices (optionally only those in `range`) whether they hold an
/// object; holders answer with I-Have.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WhoHas {
    /// [0], [1] device instance limits; `None` asks every device.
    pub range: Option<InstanceRange>,
    /// [2] or [3] the object searched for.
    pub object: WhoHasObject,
}

impl WhoHas {
    /// Appends the service parameters.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        if let Some(range) = &self.range {
            range.encode(buf);
        }
        match &self.object {
            WhoHasObject::Identifier(id) => id.encode_context(2, buf),
            WhoHasObject::Name(name) => name.encode_context(3, buf),
        }
    }

    /// Decodes the service parameters. A missing object choice is a `Truncated` error (so
    /// a server rejects with missing-required-parameter); another tag in its place is an
    /// `UnexpectedTag`.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let range = InstanceRange::decode_optional(reader)?;
        if reader.is_empty() {
            return Err(reader.error(DecodeErrorKind::Truncated {
                needed: 1,
                remaining: 0,
            }));
        }
        let tag = Tag::peek(reader)?;
        let object = if tag.is_context(2) {
            WhoHasObject::Identifier(ObjectIdentifier::decode_context(reader, 2)?)
        } else if tag.is_context(3) {
            WhoHasObject::Name(String::decode_context(reader, 3)?)
        } else {
            return Err(wrong_choice(reader, &tag));
        };
        Ok(Self { range, object })
    }
}

fn wrong_choice(reader: &Reader<'_>, tag: &Tag) -> DecodeError {
    reader.error(DecodeErrorKind::UnexpectedTag {
        expected: TagSpec::Context(2),
        found: tag.spec(),
    })
}

/// I-Have-Request: a device announces that it holds an object.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IHave {
    /// The answering device.
    pub device: ObjectIdentifier,
    /// The object it holds.
    pub object: ObjectIdentifier,
    /// That object's name.
    pub object_name: String,
}

impl IHave {
    /// Appends the service parameters (all application tagged).
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.device.encode_application(buf);
        self.object.encode_application(buf);
        self.object_name.encode_application(buf);
    }

    /// Decodes the service parameters.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            device: ObjectIdentifier::decode_application(reader)?,
            object: ObjectIdentifier::decode_application(reader)?,
            object_name: String::decode_application(reader)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_object_choice_is_truncation() {
        // Limits 1..=2 and nothing else.
        let err = WhoHas::decode(&mut Reader::new(&[0x09, 0x01, 0x19, 0x02])).unwrap_err();
        assert_eq!(
            err,
            DecodeError::new(
                4,
                DecodeErrorKind::Truncated {
                    needed: 1,
                    remaining: 0
                }
            )
        );
    }

    #[test]
    fn wrong_object_choice_tag() {
        let err = WhoHas::decode(&mut Reader::new(&[0x49, 0x01])).unwrap_err();
        assert_eq!(
            err.kind,
            DecodeErrorKind::UnexpectedTag {
                expected: TagSpec::Context(2),
                found: TagSpec::Context(4)
            }
        );
    }

    #[test]
    fn malformed_header_in_choice_position() {
        // 0x3D: context tag 3, extended length, but the length octet is missing.
        let err = WhoHas::decode(&mut Reader::new(&[0x3D])).unwrap_err();
        assert_eq!(err.offset, 1);
        assert!(matches!(err.kind, DecodeErrorKind::Truncated { .. }));
    }
}
