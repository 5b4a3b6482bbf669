//! `BACnetPropertyValue` (Clause 21): property [0], array index [1] OPTIONAL,
//! value [2] (any tagged data), priority [3] OPTIONAL.

use super::abstract_syntax::{Element, decode_until_closing, encode_elements};
use super::context::{
    decode_optional_context, encode_closing, encode_opening, encode_optional_context,
    expect_opening,
};
use super::error::{DecodeError, DecodeErrorKind};
use super::primitive::PrimitiveValue;
use super::reader::Reader;
use crate::enums::PropertyIdentifier;

/// One property and its value, as carried by WritePropertyMultiple, CreateObject, COV
/// notifications and others.
#[derive(Debug, Clone, PartialEq)]
pub struct PropertyValue {
    /// [0] property-identifier.
    pub property: PropertyIdentifier,
    /// [1] property-array-index.
    pub array_index: Option<u32>,
    /// [2] value: the enclosed tagged data.
    pub value: Vec<Element>,
    /// [3] priority (1..=16).
    pub priority: Option<u8>,
}

impl PropertyValue {
    /// Appends the sequence.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.property.encode_context(0, buf);
        encode_optional_context(self.array_index.as_ref(), 1, buf);
        encode_opening(2, buf);
        encode_elements(&self.value, buf);
        encode_closing(2, buf);
        encode_optional_context(self.priority.as_ref(), 3, buf);
    }

    /// Decodes the sequence; a priority outside 1..=16 is an `InvalidValue`.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let property = PropertyIdentifier::decode_context(reader, 0)?;
        let array_index = decode_optional_context(reader, 1)?;
        expect_opening(reader, 2)?;
        let value = decode_until_closing(reader, 2)?;
        let priority_offset = reader.position();
        let priority: Option<u8> = decode_optional_context(reader, 3)?;
        if priority.is_some_and(|p| !(1..=16).contains(&p)) {
            return Err(DecodeError::new(
                priority_offset,
                DecodeErrorKind::InvalidValue("priority must be 1..=16"),
            ));
        }
        Ok(Self {
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

    #[test]
    fn present_value_at_priority_8() {
        let pv = PropertyValue {
            property: PropertyIdentifier::PresentValue,
            array_index: None,
            value: vec![Element::Application(ApplicationValue::Real(180.0))],
            priority: Some(8),
        };
        let mut buf = Vec::new();
        pv.encode(&mut buf);
        // [0] 85, [2]{ REAL 180.0 }, [3] 8
        assert_eq!(
            buf,
            [
                0x09, 0x55, 0x2E, 0x44, 0x43, 0x34, 0x00, 0x00, 0x2F, 0x39, 0x08
            ]
        );
        assert_eq!(PropertyValue::decode(&mut Reader::new(&buf)).unwrap(), pv);
    }

    #[test]
    fn rejects_priority_zero() {
        let bytes = [0x09, 0x55, 0x1A, 0x01, 0x00, 0x2E, 0x00, 0x2F, 0x39, 0x00];
        let err = PropertyValue::decode(&mut Reader::new(&bytes)).unwrap_err();
        assert_eq!(
            err,
            DecodeError::new(8, DecodeErrorKind::InvalidValue("priority must be 1..=16"))
        );
    }
}
