//! ReadProperty (Clause 15.5): read one property, or one element of an array property.
//!
//! ```text
//! ReadProperty-Request ::= SEQUENCE {
//!     object-identifier   [0] BACnetObjectIdentifier,
//!     property-identifier [1] BACnetPropertyIdentifier,
//!     property-array-index [2] Unsigned OPTIONAL
//! }
//! ReadProperty-ACK ::= SEQUENCE {
//!     object-identifier   [0] BACnetObjectIdentifier,
//!     property-identifier [1] BACnetPropertyIdentifier,
//!     property-array-index [2] Unsigned OPTIONAL,
//!     property-value      [3] ABSTRACT-SYNTAX.&Type
//! }
//! ```

use crate::encoding::abstract_syntax::{decode_until_closing, encode_elements};
use crate::encoding::context::{
    decode_optional_context, encode_closing, encode_opening, encode_optional_context,
    expect_opening,
};
use crate::encoding::{
    DecodeError, Element, ObjectIdentifier, ObjectPropertyReference, PrimitiveValue, Reader,
};
use crate::enums::PropertyIdentifier;

/// ReadProperty-Request: which property of which object to read. Its parameters are exactly
/// the BACnetObjectPropertyReference sequence (object [0], property [1], array index [2]
/// OPTIONAL, where index 0 reads the array length and `None` the whole value), so it is that
/// type and shares its codec.
pub type ReadPropertyRequest = ObjectPropertyReference;

/// ReadProperty-ACK: the property read and its value as generic tagged data, so that
/// constructed values (lists, arrays, sequences) decode losslessly.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadPropertyAck {
    /// [0] the object.
    pub object: ObjectIdentifier,
    /// [1] the property.
    pub property: PropertyIdentifier,
    /// [2] the array element read, if any.
    pub array_index: Option<u32>,
    /// [3] the value: the items between opening and closing tag 3.
    pub value: Vec<Element>,
}

impl ReadPropertyAck {
    /// Appends the service parameters.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.object.encode_context(0, buf);
        self.property.encode_context(1, buf);
        encode_optional_context(self.array_index.as_ref(), 2, buf);
        encode_opening(3, buf);
        encode_elements(&self.value, buf);
        encode_closing(3, buf);
    }

    /// Decodes the service parameters.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let object = ObjectIdentifier::decode_context(reader, 0)?;
        let property = PropertyIdentifier::decode_context(reader, 1)?;
        let array_index = decode_optional_context(reader, 2)?;
        expect_opening(reader, 3)?;
        let value = decode_until_closing(reader, 3)?;
        Ok(Self {
            object,
            property,
            array_index,
            value,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::{ApplicationValue, DecodeErrorKind, TagSpec};
    use crate::enums::ObjectType;

    #[test]
    fn array_index_round_trip() {
        let request = ReadPropertyRequest {
            object: ObjectIdentifier::new(ObjectType::Device, 1),
            property: PropertyIdentifier::ObjectList,
            array_index: Some(0),
        };
        let mut buf = Vec::new();
        request.encode(&mut buf);
        // [0] device,1  [1] object-list (76)  [2] 0
        assert_eq!(buf, [0x0C, 0x02, 0x00, 0x00, 0x01, 0x19, 0x4C, 0x29, 0x00]);
        assert_eq!(
            ReadPropertyRequest::decode(&mut Reader::new(&buf)).unwrap(),
            request
        );
    }

    #[test]
    fn ack_without_value_is_rejected() {
        // [0] ai,5 [1] pv and then [4] instead of opening tag 3.
        let bytes = [0x0C, 0x00, 0x00, 0x00, 0x05, 0x19, 0x55, 0x49, 0x01];
        let err = ReadPropertyAck::decode(&mut Reader::new(&bytes)).unwrap_err();
        assert_eq!(err.offset, 7);
        assert_eq!(
            err.kind,
            DecodeErrorKind::UnexpectedTag {
                expected: TagSpec::Opening(3),
                found: TagSpec::Context(4)
            }
        );
        let ack = ReadPropertyAck {
            object: ObjectIdentifier::new(ObjectType::AnalogInput, 5),
            property: PropertyIdentifier::PresentValue,
            array_index: None,
            value: vec![Element::Application(ApplicationValue::Null)],
        };
        let mut buf = Vec::new();
        ack.encode(&mut buf);
        assert_eq!(
            ReadPropertyAck::decode(&mut Reader::new(&buf)).unwrap(),
            ack
        );
    }
}
