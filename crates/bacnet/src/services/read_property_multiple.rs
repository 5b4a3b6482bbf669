//! ReadPropertyMultiple (Clause 15.7): read several properties of several objects.
//!
//! ```text
//! ReadPropertyMultiple-Request ::= SEQUENCE OF ReadAccessSpecification
//! ReadAccessSpecification ::= SEQUENCE {
//!     object-identifier         [0] BACnetObjectIdentifier,
//!     list-of-property-references [1] SEQUENCE OF BACnetPropertyReference
//! }
//! BACnetPropertyReference ::= SEQUENCE {
//!     property-identifier  [0] BACnetPropertyIdentifier,
//!     property-array-index [1] Unsigned OPTIONAL
//! }
//! ReadPropertyMultiple-ACK ::= SEQUENCE OF ReadAccessResult
//! ReadAccessResult ::= SEQUENCE {
//!     object-identifier [0] BACnetObjectIdentifier,
//!     list-of-results   [1] SEQUENCE OF SEQUENCE {
//!         property-identifier  [2] BACnetPropertyIdentifier,
//!         property-array-index [3] Unsigned OPTIONAL,
//!         read-result CHOICE {
//!             property-value        [4] ABSTRACT-SYNTAX.&Type,
//!             property-access-error [5] Error
//!         }
//!     } OPTIONAL
//! }
//! ```
//!
//! The special property identifiers `all` (8), `required` (105) and `optional` (80) are
//! ordinary [`PropertyIdentifier`] values here; expanding them is the server's job.

use super::error::ServiceError;
use super::sequence_of::{
    MAX_ACCESS_SPECIFICATIONS, MAX_PROPERTIES_PER_OBJECT, decode_enclosed_list, decode_list_to_end,
};
use crate::encoding::abstract_syntax::{decode_until_closing, encode_elements};
use crate::encoding::context::{
    decode_optional_context, encode_closing, encode_opening, encode_optional_context,
    expect_closing, expect_opening, next_is_opening,
};
use crate::encoding::{
    DecodeError, DecodeErrorKind, Element, ObjectIdentifier, PrimitiveValue, Reader, Tag, TagSpec,
};
use crate::enums::PropertyIdentifier;

/// `BACnetPropertyReference`: a property of an implied object, optionally one array element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PropertyReference {
    /// [0] the property (may be `all`, `required` or `optional`).
    pub property: PropertyIdentifier,
    /// [1] the array element, if any.
    pub array_index: Option<u32>,
}

impl PropertyReference {
    /// Appends the sequence.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.property.encode_context(0, buf);
        encode_optional_context(self.array_index.as_ref(), 1, buf);
    }

    /// Decodes the sequence.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            property: PropertyIdentifier::decode_context(reader, 0)?,
            array_index: decode_optional_context(reader, 1)?,
        })
    }
}

/// `ReadAccessSpecification`: one object and the properties to read from it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReadAccessSpecification {
    /// [0] the object.
    pub object: ObjectIdentifier,
    /// [1] the properties (at most [`MAX_PROPERTIES_PER_OBJECT`] when decoded).
    pub properties: Vec<PropertyReference>,
}

impl ReadAccessSpecification {
    /// Appends the sequence.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.object.encode_context(0, buf);
        encode_opening(1, buf);
        for property in &self.properties {
            property.encode(buf);
        }
        encode_closing(1, buf);
    }

    /// Decodes the sequence.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            object: ObjectIdentifier::decode_context(reader, 0)?,
            properties: decode_enclosed_list(
                reader,
                1,
                MAX_PROPERTIES_PER_OBJECT,
                PropertyReference::decode,
            )?,
        })
    }
}

/// ReadPropertyMultiple-Request: one or more access specifications.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReadPropertyMultipleRequest {
    /// The objects and properties to read (at least one; at most
    /// [`MAX_ACCESS_SPECIFICATIONS`] when decoded).
    pub specifications: Vec<ReadAccessSpecification>,
}

impl ReadPropertyMultipleRequest {
    /// Appends the service parameters.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        for specification in &self.specifications {
            specification.encode(buf);
        }
    }

    /// Decodes the service parameters, which fill the rest of the input. An empty payload
    /// is a `Truncated` error (missing required parameter).
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            specifications: decode_list_to_end(
                reader,
                MAX_ACCESS_SPECIFICATIONS,
                ReadAccessSpecification::decode,
            )?,
        })
    }
}

/// The outcome of reading one property: its value or the reason it could not be read.
#[derive(Debug, Clone, PartialEq)]
pub enum ReadResult {
    /// [4] the value: the items between opening and closing tag 4.
    Value(Vec<Element>),
    /// [5] the access error.
    Error(ServiceError),
}

/// One element of a `list-of-results`: a property and its [`ReadResult`].
#[derive(Debug, Clone, PartialEq)]
pub struct PropertyReadResult {
    /// [2] the property.
    pub property: PropertyIdentifier,
    /// [3] the array element, if any.
    pub array_index: Option<u32>,
    /// [4] value or [5] error.
    pub result: ReadResult,
}

impl PropertyReadResult {
    /// Appends the sequence.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.property.encode_context(2, buf);
        encode_optional_context(self.array_index.as_ref(), 3, buf);
        match &self.result {
            ReadResult::Value(value) => {
                encode_opening(4, buf);
                encode_elements(value, buf);
                encode_closing(4, buf);
            }
            ReadResult::Error(error) => {
                encode_opening(5, buf);
                error.encode(buf);
                encode_closing(5, buf);
            }
        }
    }

    /// Decodes the sequence; anything but opening tag 4 or 5 after the property is an
    /// `UnexpectedTag` naming opening tag 4.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let property = PropertyIdentifier::decode_context(reader, 2)?;
        let array_index = decode_optional_context(reader, 3)?;
        let result = if next_is_opening(reader, 5) {
            expect_opening(reader, 5)?;
            let error = ServiceError::decode(reader)?;
            expect_closing(reader, 5)?;
            ReadResult::Error(error)
        } else {
            let start = reader.position();
            let tag = Tag::decode(reader)?;
            if !tag.is_opening(4) {
                return Err(DecodeError::new(
                    start,
                    DecodeErrorKind::UnexpectedTag {
                        expected: TagSpec::Opening(4),
                        found: tag.spec(),
                    },
                ));
            }
            ReadResult::Value(decode_until_closing(reader, 4)?)
        };
        Ok(Self {
            property,
            array_index,
            result,
        })
    }
}

/// `ReadAccessResult`: the results for one object.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadAccessResult {
    /// [0] the object.
    pub object: ObjectIdentifier,
    /// [1] the results (the list is OPTIONAL on the wire; absent and empty both decode
    /// to an empty vector, and an empty vector encodes as an absent list).
    pub results: Vec<PropertyReadResult>,
}

impl ReadAccessResult {
    /// Appends the sequence.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.object.encode_context(0, buf);
        if !self.results.is_empty() {
            encode_opening(1, buf);
            for result in &self.results {
                result.encode(buf);
            }
            encode_closing(1, buf);
        }
    }

    /// Decodes the sequence.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let object = ObjectIdentifier::decode_context(reader, 0)?;
        let results = if next_is_opening(reader, 1) {
            decode_enclosed_list(
                reader,
                1,
                MAX_PROPERTIES_PER_OBJECT,
                PropertyReadResult::decode,
            )?
        } else {
            Vec::new()
        };
        Ok(Self { object, results })
    }
}

/// ReadPropertyMultiple-ACK: the results for every object asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadPropertyMultipleAck {
    /// One entry per object (at least one; at most [`MAX_ACCESS_SPECIFICATIONS`] when
    /// decoded).
    pub results: Vec<ReadAccessResult>,
}

impl ReadPropertyMultipleAck {
    /// Appends the service parameters.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        for result in &self.results {
            result.encode(buf);
        }
    }

    /// Decodes the service parameters, which fill the rest of the input.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            results: decode_list_to_end(
                reader,
                MAX_ACCESS_SPECIFICATIONS,
                ReadAccessResult::decode,
            )?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::enums::{ErrorClass, ErrorCode, ObjectType};

    #[test]
    fn special_property_identifiers_round_trip() {
        let request = ReadPropertyMultipleRequest {
            specifications: vec![ReadAccessSpecification {
                object: ObjectIdentifier::new(ObjectType::Device, 7),
                properties: [
                    PropertyIdentifier::All,
                    PropertyIdentifier::Required,
                    PropertyIdentifier::Optional,
                ]
                .into_iter()
                .map(|property| PropertyReference {
                    property,
                    array_index: None,
                })
                .collect(),
            }],
        };
        let mut buf = Vec::new();
        request.encode(&mut buf);
        assert_eq!(
            buf,
            [
                0x0C, 0x02, 0x00, 0x00, 0x07, 0x1E, 0x09, 0x08, 0x09, 0x69, 0x09, 0x50, 0x1F
            ]
        );
        let mut reader = Reader::new(&buf);
        assert_eq!(
            ReadPropertyMultipleRequest::decode(&mut reader).unwrap(),
            request
        );
        assert!(reader.is_empty());
    }

    #[test]
    fn result_without_value_or_error() {
        // [2] pv then [6] opening: neither [4] nor [5].
        let bytes = [0x29, 0x55, 0x6E, 0x6F];
        let err = PropertyReadResult::decode(&mut Reader::new(&bytes)).unwrap_err();
        assert_eq!(
            err,
            DecodeError::new(
                2,
                DecodeErrorKind::UnexpectedTag {
                    expected: TagSpec::Opening(4),
                    found: TagSpec::Opening(6)
                }
            )
        );
    }

    #[test]
    fn absent_result_list() {
        let result = ReadAccessResult {
            object: ObjectIdentifier::new(ObjectType::AnalogInput, 1),
            results: Vec::new(),
        };
        let mut buf = Vec::new();
        result.encode(&mut buf);
        assert_eq!(buf, [0x0C, 0x00, 0x00, 0x00, 0x01]);
        assert_eq!(
            ReadAccessResult::decode(&mut Reader::new(&buf)).unwrap(),
            result
        );
        let error = PropertyReadResult {
            property: PropertyIdentifier::PresentValue,
            array_index: Some(1),
            result: ReadResult::Error(ServiceError {
                class: ErrorClass::Property,
                code: ErrorCode::UnknownProperty,
            }),
        };
        let mut buf = Vec::new();
        error.encode(&mut buf);
        assert_eq!(
            buf,
            [0x29, 0x55, 0x39, 0x01, 0x5E, 0x91, 0x02, 0x91, 0x20, 0x5F]
        );
        assert_eq!(
            PropertyReadResult::decode(&mut Reader::new(&buf)).unwrap(),
            error
        );
    }
}
