//! SubscribeCOVProperty (Clause 13.15): change-of-value notifications for one property,
//! with an optional COV increment of the subscriber's choosing.
//!
//! ```text
//! SubscribeCOVProperty-Request ::= SEQUENCE {
//!     subscriber-process-identifier [0] Unsigned32,
//!     monitored-object-identifier   [1] BACnetObjectIdentifier,
//!     issue-confirmed-notifications [2] BOOLEAN OPTIONAL,
//!     lifetime                      [3] Unsigned OPTIONAL,
//!     monitored-property-identifier [4] BACnetPropertyReference,
//!     cov-increment                 [5] REAL OPTIONAL
//! }
//! ```

use super::read_property_multiple::PropertyReference;
use crate::encoding::context::{
    decode_optional_context, encode_closing, encode_opening, encode_optional_context,
    expect_closing, expect_opening,
};
use crate::encoding::{DecodeError, DecodeErrorKind, ObjectIdentifier, PrimitiveValue, Reader};

/// SubscribeCOVProperty-Request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SubscribeCovPropertyRequest {
    /// [0] the subscriber's process.
    pub subscriber_process_identifier: u32,
    /// [1] the object.
    pub monitored_object: ObjectIdentifier,
    /// [2] confirmed or unconfirmed notifications; absent with [3] for a cancellation.
    pub issue_confirmed_notifications: Option<bool>,
    /// [3] lifetime in seconds (0 indefinite); absent with [2] for a cancellation.
    pub lifetime: Option<u32>,
    /// [4] the property (and array element) to watch.
    pub monitored_property: PropertyReference,
    /// [5] the change of a REAL value that triggers a notification.
    pub cov_increment: Option<f32>,
}

impl SubscribeCovPropertyRequest {
    /// True when both optional parameters [2] and [3] are absent.
    pub const fn is_cancellation(&self) -> bool {
        self.issue_confirmed_notifications.is_none() && self.lifetime.is_none()
    }

    /// Appends the service parameters.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.subscriber_process_identifier.encode_context(0, buf);
        self.monitored_object.encode_context(1, buf);
        encode_optional_context(self.issue_confirmed_notifications.as_ref(), 2, buf);
        encode_optional_context(self.lifetime.as_ref(), 3, buf);
        encode_opening(4, buf);
        self.monitored_property.encode(buf);
        encode_closing(4, buf);
        encode_optional_context(self.cov_increment.as_ref(), 5, buf);
    }

    /// Decodes the service parameters; a negative or NaN COV increment is an
    /// `InvalidValue`.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let subscriber_process_identifier = u32::decode_context(reader, 0)?;
        let monitored_object = ObjectIdentifier::decode_context(reader, 1)?;
        let issue_confirmed_notifications = decode_optional_context(reader, 2)?;
        let lifetime = decode_optional_context(reader, 3)?;
        expect_opening(reader, 4)?;
        let monitored_property = PropertyReference::decode(reader)?;
        expect_closing(reader, 4)?;
        let start = reader.position();
        let cov_increment: Option<f32> = decode_optional_context(reader, 5)?;
        if cov_increment.is_some_and(|step| step.is_nan() || step < 0.0) {
            return Err(DecodeError::new(
                start,
                DecodeErrorKind::InvalidValue("cov-increment must be a number >= 0"),
            ));
        }
        Ok(Self {
            subscriber_process_identifier,
            monitored_object,
            issue_confirmed_notifications,
            lifetime,
            monitored_property,
            cov_increment,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::enums::{ObjectType, PropertyIdentifier};

    #[test]
    fn round_trip_with_increment_and_index() {
        let request = SubscribeCovPropertyRequest {
            subscriber_process_identifier: 7,
            monitored_object: ObjectIdentifier::new(ObjectType::AnalogValue, 2),
            issue_confirmed_notifications: Some(false),
            lifetime: Some(60),
            monitored_property: PropertyReference {
                property: PropertyIdentifier::PriorityArray,
                array_index: Some(8),
            },
            cov_increment: Some(0.5),
        };
        let mut buf = Vec::new();
        request.encode(&mut buf);
        assert_eq!(
            buf,
            [
                0x09, 0x07, 0x1C, 0x00, 0x80, 0x00, 0x02, 0x29, 0x00, 0x39, 0x3C, 0x4E, 0x09, 0x57,
                0x19, 0x08, 0x4F, 0x5C, 0x3F, 0x00, 0x00, 0x00
            ]
        );
        assert_eq!(
            SubscribeCovPropertyRequest::decode(&mut Reader::new(&buf)).unwrap(),
            request
        );
    }

    #[test]
    fn negative_increment_is_out_of_range() {
        let request = SubscribeCovPropertyRequest {
            subscriber_process_identifier: 7,
            monitored_object: ObjectIdentifier::new(ObjectType::AnalogValue, 2),
            issue_confirmed_notifications: None,
            lifetime: None,
            monitored_property: PropertyReference {
                property: PropertyIdentifier::PresentValue,
                array_index: None,
            },
            cov_increment: Some(-1.0),
        };
        let mut buf = Vec::new();
        request.encode(&mut buf);
        let err = SubscribeCovPropertyRequest::decode(&mut Reader::new(&buf)).unwrap_err();
        assert_eq!(
            err.kind,
            DecodeErrorKind::InvalidValue("cov-increment must be a number >= 0")
        );
        assert!(request.is_cancellation());
    }
}
