//! AddListElement and RemoveListElement (Clauses 15.1 and 15.2): add items to, or remove
//! them from, a list property; both share their parameters and their error type.
//!
//! ```text
//! AddListElement-Request ::= SEQUENCE {      -- RemoveListElement-Request is the same
//!     object-identifier    [0] BACnetObjectIdentifier,
//!     property-identifier  [1] BACnetPropertyIdentifier,
//!     property-array-index [2] Unsigned OPTIONAL,
//!     list-of-elements     [3] ABSTRACT-SYNTAX.&Type
//! }
//! ChangeList-Error ::= SEQUENCE {
//!     error-type                  [0] Error,
//!     first-failed-element-number [1] Unsigned
//! }
//! ```

use crate::encoding::abstract_syntax::{decode_until_closing, encode_elements};
use crate::encoding::context::{
    decode_optional_context, encode_closing, encode_opening, encode_optional_context,
    expect_closing, expect_opening,
};
use crate::encoding::{DecodeError, Element, ObjectIdentifier, PrimitiveValue, Reader};
use crate::enums::PropertyIdentifier;

use super::ServiceError;

/// The parameters of AddListElement and RemoveListElement.
#[derive(Debug, Clone, PartialEq)]
pub struct ListElementRequest {
    /// [0] the object.
    pub object: ObjectIdentifier,
    /// [1] the list property.
    pub property: PropertyIdentifier,
    /// [2] for an array of lists, the element whose list changes.
    pub array_index: Option<u32>,
    /// [3] the items to add or remove, one after another.
    pub elements: Vec<Element>,
}

impl ListElementRequest {
    /// Appends the service parameters.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.object.encode_context(0, buf);
        self.property.encode_context(1, buf);
        encode_optional_context(self.array_index.as_ref(), 2, buf);
        encode_opening(3, buf);
        encode_elements(&self.elements, buf);
        encode_closing(3, buf);
    }

    /// Decodes the service parameters.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let object = ObjectIdentifier::decode_context(reader, 0)?;
        let property = PropertyIdentifier::decode_context(reader, 1)?;
        let array_index = decode_optional_context(reader, 2)?;
        expect_opening(reader, 3)?;
        let elements = decode_until_closing(reader, 3)?;
        Ok(Self {
            object,
            property,
            array_index,
            elements,
        })
    }
}

/// `ChangeList-Error`: why an AddListElement or RemoveListElement failed and at which
/// item (1-based; 0 when the failure is not about one item).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangeListError {
    /// [0] error class and code.
    pub error: ServiceError,
    /// [1] the first item that could not be added or removed.
    pub first_failed_element_number: u32,
}

impl ChangeListError {
    /// Appends the error parameters.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        encode_opening(0, buf);
        self.error.encode(buf);
        encode_closing(0, buf);
        self.first_failed_element_number.encode_context(1, buf);
    }

    /// Decodes the error parameters.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        expect_opening(reader, 0)?;
        let error = ServiceError::decode(reader)?;
        expect_closing(reader, 0)?;
        Ok(Self {
            error,
            first_failed_element_number: u32::decode_context(reader, 1)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::enums::{ErrorClass, ErrorCode, ObjectType};

    #[test]
    fn request_and_error_round_trip() {
        let request = ListElementRequest {
            object: ObjectIdentifier::new(ObjectType::Calendar, 1),
            property: PropertyIdentifier::DateList,
            array_index: None,
            elements: vec![Element::Context {
                tag: 0,
                data: vec![125, 12, 25, 255],
            }],
        };
        let mut buf = Vec::new();
        request.encode(&mut buf);
        assert_eq!(
            buf,
            [
                0x0C, 0x01, 0x80, 0x00, 0x01, 0x19, 0x17, 0x3E, 0x0C, 125, 12, 25, 255, 0x3F
            ]
        );
        assert_eq!(
            ListElementRequest::decode(&mut Reader::new(&buf)).unwrap(),
            request
        );

        let error = ChangeListError {
            error: ServiceError {
                class: ErrorClass::Services,
                code: ErrorCode::ListElementNotFound,
            },
            first_failed_element_number: 2,
        };
        let mut buf = Vec::new();
        error.encode(&mut buf);
        assert_eq!(buf, [0x0E, 0x91, 0x05, 0x91, 0x51, 0x0F, 0x19, 0x02]);
        assert_eq!(
            ChangeListError::decode(&mut Reader::new(&buf)).unwrap(),
            error
        );
    }
}
