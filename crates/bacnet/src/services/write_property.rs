//! WriteProperty (Clause 15.9): write one property, optionally at a command priority.
//!
//! ```text
//! WriteProperty-Request ::= SEQUENCE {
//!     object-identifier   [0] BACnetObjectIdentifier,
//!     property-identifier [1] BACnetPropertyIdentifier,
//!     property-array-index [2] Unsigned OPTIONAL,
//!     property-value      [3] ABSTRACT-SYNTAX.&Type,
//!     priority            [4] Unsigned (1..16) OPTIONAL
//! }
//! ```
//!
//! The answer is a SimpleACK (no parameters) or an Error PDU.

use crate::encoding::abstract_syntax::{decode_until_closing, encode_elements};
use crate::encoding::context::{
    decode_optional_context, encode_closing, encode_opening, encode_optional_context,
    expect_opening,
};
use crate::encoding::{
    DecodeError, DecodeErrorKind, Element, ObjectIdentifier, PrimitiveValue, Reader,
};
use crate::enums::PropertyIdentifier;

/// Lowest command priority (Clause 19.2).
pub const MIN_PRIORITY: u8 = 1;
/// Highest (least urgent) command priority (Clause 19.2).
pub const MAX_PRIORITY: u8 = 16;
/// Priority reserved for minimum on/off time (Clause 19.2.3). Accepted on the wire; the
/// server decides whether a write at this priority is allowed.
pub const MINIMUM_ON_OFF_PRIORITY: u8 = 6;

/// WriteProperty-Request: the property to write, its new value and the priority.
#[derive(Debug, Clone, PartialEq)]
pub struct WritePropertyRequest {
    /// [0] the object.
    pub object: ObjectIdentifier,
    /// [1] the property.
    pub property: PropertyIdentifier,
    /// [2] the array element to write, if any.
    pub array_index: Option<u32>,
    /// [3] the new value: the items between opening and closing tag 3.
    pub value: Vec<Element>,
    /// [4] the command priority, 1..=16; `None` means the lowest (16) for commandable
    /// properties.
    pub priority: Option<u8>,
}

impl WritePropertyRequest {
    /// Appends the service parameters.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.object.encode_context(0, buf);
        self.property.encode_context(1, buf);
        encode_optional_context(self.array_index.as_ref(), 2, buf);
        encode_opening(3, buf);
        encode_elements(&self.value, buf);
        encode_closing(3, buf);
        encode_optional_context(self.priority.as_ref(), 4, buf);
    }

    /// Decodes the service parameters; a priority outside 1..=16 is an `InvalidValue`
    /// (a server rejects it with parameter-out-of-range).
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let object = ObjectIdentifier::decode_context(reader, 0)?;
        let property = PropertyIdentifier::decode_context(reader, 1)?;
        let array_index = decode_optional_context(reader, 2)?;
        expect_opening(reader, 3)?;
        let value = decode_until_closing(reader, 3)?;
        let priority_offset = reader.position();
        let priority: Option<u8> = decode_optional_context(reader, 4)?;
        if priority.is_some_and(|p| !(MIN_PRIORITY..=MAX_PRIORITY).contains(&p)) {
            return Err(DecodeError::new(
                priority_offset,
                DecodeErrorKind::InvalidValue("priority must be 1..=16"),
            ));
        }
        Ok(Self {
            object,
            property,
            array_index,
            value,
            priority,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::ApplicationValue;
    use crate::enums::ObjectType;

    fn binary_output_write(priority: Option<u8>) -> WritePropertyRequest {
        WritePropertyRequest {
            object: ObjectIdentifier::new(ObjectType::BinaryOutput, 3),
            property: PropertyIdentifier::PresentValue,
            array_index: None,
            value: vec![Element::Application(ApplicationValue::Enumerated(1))],
            priority,
        }
    }

    #[test]
    fn minimum_on_off_priority_is_accepted() {
        let request = binary_output_write(Some(MINIMUM_ON_OFF_PRIORITY));
        let mut buf = Vec::new();
        request.encode(&mut buf);
        assert_eq!(
            buf,
            [
                0x0C, 0x01, 0x00, 0x00, 0x03, 0x19, 0x55, 0x3E, 0x91, 0x01, 0x3F, 0x49, 0x06
            ]
        );
        assert_eq!(
            WritePropertyRequest::decode(&mut Reader::new(&buf)).unwrap(),
            request
        );
    }

    #[test]
    fn priority_17_is_out_of_range() {
        let mut buf = Vec::new();
        binary_output_write(Some(17)).encode(&mut buf);
        let err = WritePropertyRequest::decode(&mut Reader::new(&buf)).unwrap_err();
        assert_eq!(
            err,
            DecodeError::new(11, DecodeErrorKind::InvalidValue("priority must be 1..=16"))
        );
    }
}
