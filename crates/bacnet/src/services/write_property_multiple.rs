//! WritePropertyMultiple (Clause 15.10): write several properties of several objects.
//!
//! ```text
//! WritePropertyMultiple-Request ::= SEQUENCE OF WriteAccessSpecification
//! WriteAccessSpecification ::= SEQUENCE {
//!     object-identifier  [0] BACnetObjectIdentifier,
//!     list-of-properties [1] SEQUENCE OF BACnetPropertyValue
//! }
//! WritePropertyMultiple-Error ::= SEQUENCE {
//!     error-type                 [0] Error,
//!     first-failed-write-attempt [1] BACnetObjectPropertyReference
//! }
//! ```
//!
//! Success is a SimpleACK (no parameters); failure an Error PDU whose parameters are a
//! [`WritePropertyMultipleError`].

use super::error::ServiceError;
use super::sequence_of::{
    MAX_ACCESS_SPECIFICATIONS, MAX_PROPERTIES_PER_OBJECT, decode_enclosed_list, decode_list_to_end,
};
use crate::encoding::context::{encode_closing, encode_opening, expect_closing, expect_opening};
use crate::encoding::{
    DecodeError, ObjectIdentifier, ObjectPropertyReference, PrimitiveValue, PropertyValue, Reader,
};

/// `WriteAccessSpecification`: one object and the property values to write into it.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteAccessSpecification {
    /// [0] the object.
    pub object: ObjectIdentifier,
    /// [1] the properties, values and priorities (at most [`MAX_PROPERTIES_PER_OBJECT`]
    /// when decoded).
    pub properties: Vec<PropertyValue>,
}

impl WriteAccessSpecification {
    /// Appends the sequence.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.object.encode_context(0, buf);
        encode_opening(1, buf);
        for property in &self.properties {
            property.encode(buf);
        }
        encode_closing(1, buf);
    }

    /// Decodes the sequence; a priority outside 1..=16 is an `InvalidValue`.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            object: ObjectIdentifier::decode_context(reader, 0)?,
            properties: decode_enclosed_list(
                reader,
                1,
                MAX_PROPERTIES_PER_OBJECT,
                PropertyValue::decode,
            )?,
        })
    }
}

/// WritePropertyMultiple-Request: one or more write access specifications.
#[derive(Debug, Clone, PartialEq)]
pub struct WritePropertyMultipleRequest {
    /// The objects and values to write (at least one; at most
    /// [`MAX_ACCESS_SPECIFICATIONS`] when decoded).
    pub specifications: Vec<WriteAccessSpecification>,
}

impl WritePropertyMultipleRequest {
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
                WriteAccessSpecification::decode,
            )?,
        })
    }
}

/// WritePropertyMultiple-Error (Clause 15.10.1.3): why the writes stopped and the first
/// write that failed (earlier writes in the request took effect).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WritePropertyMultipleError {
    /// [0] error class and code.
    pub error: ServiceError,
    /// [1] the property whose write failed.
    pub first_failed_write_attempt: ObjectPropertyReference,
}

impl WritePropertyMultipleError {
    /// Appends the Error-PDU parameters.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        encode_opening(0, buf);
        self.error.encode(buf);
        encode_closing(0, buf);
        encode_opening(1, buf);
        self.first_failed_write_attempt.encode(buf);
        encode_closing(1, buf);
    }

    /// Decodes the Error-PDU parameters.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        expect_opening(reader, 0)?;
        let error = ServiceError::decode(reader)?;
        expect_closing(reader, 0)?;
        expect_opening(reader, 1)?;
        let first_failed_write_attempt = ObjectPropertyReference::decode(reader)?;
        expect_closing(reader, 1)?;
        Ok(Self {
            error,
            first_failed_write_attempt,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::{DecodeErrorKind, TagSpec};
    use crate::enums::{ErrorClass, ErrorCode, ObjectType, PropertyIdentifier};

    #[test]
    fn error_parameters() {
        let error = WritePropertyMultipleError {
            error: ServiceError {
                class: ErrorClass::Property,
                code: ErrorCode::WriteAccessDenied,
            },
            first_failed_write_attempt: ObjectPropertyReference {
                object: ObjectIdentifier::new(ObjectType::AnalogValue, 6),
                property: PropertyIdentifier::PresentValue,
                array_index: None,
            },
        };
        let mut buf = Vec::new();
        error.encode(&mut buf);
        // [0]{ property(2), write-access-denied(40) } [1]{ [0] av,6 [1] pv }
        assert_eq!(
            buf,
            [
                0x0E, 0x91, 0x02, 0x91, 0x28, 0x0F, 0x1E, 0x0C, 0x00, 0x80, 0x00, 0x06, 0x19, 0x55,
                0x1F
            ]
        );
        assert_eq!(
            WritePropertyMultipleError::decode(&mut Reader::new(&buf)).unwrap(),
            error
        );
        // The same bytes without the [1] closing tag.
        let err = WritePropertyMultipleError::decode(&mut Reader::new(&buf[..14])).unwrap_err();
        assert_eq!(err.offset, 14);
        assert!(matches!(err.kind, DecodeErrorKind::Truncated { .. }));
    }

    #[test]
    fn plain_error_pair_is_not_a_wpm_error() {
        let err = WritePropertyMultipleError::decode(&mut Reader::new(&[0x91, 0x02, 0x91, 0x28]))
            .unwrap_err();
        assert_eq!(
            err.kind,
            DecodeErrorKind::UnexpectedTag {
                expected: TagSpec::Opening(0),
                found: TagSpec::Application(9)
            }
        );
    }
}
