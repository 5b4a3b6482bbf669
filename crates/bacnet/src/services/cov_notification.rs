//! ConfirmedCOVNotification and UnconfirmedCOVNotification (Clauses 13.7 and 13.6): the
//! same parameters, sent to a subscriber when a monitored value changes.
//!
//! ```text
//! COVNotification-Request ::= SEQUENCE {
//!     subscriber-process-identifier [0] Unsigned32,
//!     initiating-device-identifier  [1] BACnetObjectIdentifier,
//!     monitored-object-identifier   [2] BACnetObjectIdentifier,
//!     time-remaining                [3] Unsigned,
//!     list-of-values                [4] SEQUENCE OF BACnetPropertyValue
//! }
//! ```

use super::sequence_of::{MAX_PROPERTIES_PER_OBJECT, decode_enclosed_list};
use crate::encoding::context::{encode_closing, encode_opening};
use crate::encoding::{DecodeError, ObjectIdentifier, PrimitiveValue, PropertyValue, Reader};

/// COV notification parameters (confirmed and unconfirmed alike).
#[derive(Debug, Clone, PartialEq)]
pub struct CovNotificationRequest {
    /// [0] the process identifier the subscriber gave.
    pub subscriber_process_identifier: u32,
    /// [1] the device sending the notification.
    pub initiating_device: ObjectIdentifier,
    /// [2] the object whose values changed.
    pub monitored_object: ObjectIdentifier,
    /// [3] seconds left in the subscription (0 for an indefinite one).
    pub time_remaining: u32,
    /// [4] the values (present-value and status-flags for SubscribeCOV; the monitored
    /// property and status-flags for SubscribeCOVProperty).
    pub values: Vec<PropertyValue>,
}

impl CovNotificationRequest {
    /// Appends the service parameters.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.subscriber_process_identifier.encode_context(0, buf);
        self.initiating_device.encode_context(1, buf);
        self.monitored_object.encode_context(2, buf);
        self.time_remaining.encode_context(3, buf);
        encode_opening(4, buf);
        for value in &self.values {
            value.encode(buf);
        }
        encode_closing(4, buf);
    }

    /// Decodes the service parameters.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            subscriber_process_identifier: u32::decode_context(reader, 0)?,
            initiating_device: ObjectIdentifier::decode_context(reader, 1)?,
            monitored_object: ObjectIdentifier::decode_context(reader, 2)?,
            time_remaining: u32::decode_context(reader, 3)?,
            values: decode_enclosed_list(
                reader,
                4,
                MAX_PROPERTIES_PER_OBJECT,
                PropertyValue::decode,
            )?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::{ApplicationValue, BitString, Element};
    use crate::enums::{ObjectType, PropertyIdentifier};

    #[test]
    fn notification_round_trip() {
        // The example of Clause F.1.4 (ConfirmedCOVNotification), parameters only.
        let request = CovNotificationRequest {
            subscriber_process_identifier: 18,
            initiating_device: ObjectIdentifier::new(ObjectType::Device, 4),
            monitored_object: ObjectIdentifier::new(ObjectType::AnalogInput, 10),
            time_remaining: 0,
            values: vec![
                PropertyValue {
                    property: PropertyIdentifier::PresentValue,
                    array_index: None,
                    value: vec![Element::Application(ApplicationValue::Real(65.0))],
                    priority: None,
                },
                PropertyValue {
                    property: PropertyIdentifier::StatusFlags,
                    array_index: None,
                    value: vec![Element::Application(ApplicationValue::BitString(
                        BitString::from_bits(&[false; 4]),
                    ))],
                    priority: None,
                },
            ],
        };
        let mut buf = Vec::new();
        request.encode(&mut buf);
        assert_eq!(
            buf,
            [
                0x09, 0x12, 0x1C, 0x02, 0x00, 0x00, 0x04, 0x2C, 0x00, 0x00, 0x00, 0x0A, 0x39, 0x00,
                0x4E, 0x09, 0x55, 0x2E, 0x44, 0x42, 0x82, 0x00, 0x00, 0x2F, 0x09, 0x6F, 0x2E, 0x82,
                0x04, 0x00, 0x2F, 0x4F
            ]
        );
        assert_eq!(
            CovNotificationRequest::decode(&mut Reader::new(&buf)).unwrap(),
            request
        );
    }
}
