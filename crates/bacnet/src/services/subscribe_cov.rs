//! SubscribeCOV (Clause 13.14): subscribe to, renew or cancel change-of-value
//! notifications of one object's standard COV properties.
//!
//! ```text
//! SubscribeCOV-Request ::= SEQUENCE {
//!     subscriber-process-identifier [0] Unsigned32,
//!     monitored-object-identifier   [1] BACnetObjectIdentifier,
//!     issue-confirmed-notifications [2] BOOLEAN OPTIONAL,
//!     lifetime                      [3] Unsigned OPTIONAL
//! }
//! ```
//!
//! Both optional parameters absent is a cancellation. A lifetime of 0 (or an absent
//! lifetime with issue-confirmed-notifications present) is an indefinite subscription.
//! The answer is a SimpleACK or an Error PDU.

use crate::encoding::context::{decode_optional_context, encode_optional_context};
use crate::encoding::{DecodeError, ObjectIdentifier, PrimitiveValue, Reader};

/// SubscribeCOV-Request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SubscribeCovRequest {
    /// [0] the subscriber's process (chosen by the subscriber, echoed in notifications).
    pub subscriber_process_identifier: u32,
    /// [1] the object to watch.
    pub monitored_object: ObjectIdentifier,
    /// [2] confirmed (true) or unconfirmed notifications; absent with [3] for a cancellation.
    pub issue_confirmed_notifications: Option<bool>,
    /// [3] lifetime in seconds, 0 for indefinite; absent with [2] for a cancellation.
    pub lifetime: Option<u32>,
}

impl SubscribeCovRequest {
    /// A subscription (or renewal): `lifetime` 0 is indefinite.
    pub const fn subscribe(
        subscriber_process_identifier: u32,
        monitored_object: ObjectIdentifier,
        confirmed: bool,
        lifetime: u32,
    ) -> Self {
        Self {
            subscriber_process_identifier,
            monitored_object,
            issue_confirmed_notifications: Some(confirmed),
            lifetime: Some(lifetime),
        }
    }

    /// The cancellation of a subscription.
    pub const fn cancel(
        subscriber_process_identifier: u32,
        monitored_object: ObjectIdentifier,
    ) -> Self {
        Self {
            subscriber_process_identifier,
            monitored_object,
            issue_confirmed_notifications: None,
            lifetime: None,
        }
    }

    /// True when both optional parameters are absent.
    pub const fn is_cancellation(&self) -> bool {
        self.issue_confirmed_notifications.is_none() && self.lifetime.is_none()
    }

    /// Appends the service parameters.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.subscriber_process_identifier.encode_context(0, buf);
        self.monitored_object.encode_context(1, buf);
        encode_optional_context(self.issue_confirmed_notifications.as_ref(), 2, buf);
        encode_optional_context(self.lifetime.as_ref(), 3, buf);
    }

    /// Decodes the service parameters.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            subscriber_process_identifier: u32::decode_context(reader, 0)?,
            monitored_object: ObjectIdentifier::decode_context(reader, 1)?,
            issue_confirmed_notifications: decode_optional_context(reader, 2)?,
            lifetime: decode_optional_context(reader, 3)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::enums::ObjectType;

    #[test]
    fn subscription_and_cancellation_bytes() {
        let object = ObjectIdentifier::new(ObjectType::AnalogInput, 10);
        let request = SubscribeCovRequest::subscribe(18, object, true, 0);
        let mut buf = Vec::new();
        request.encode(&mut buf);
        // Clause F.1.x style: [0] 18, [1] ai,10, [2] TRUE, [3] 0
        assert_eq!(
            buf,
            [
                0x09, 0x12, 0x1C, 0x00, 0x00, 0x00, 0x0A, 0x29, 0x01, 0x39, 0x00
            ]
        );
        assert_eq!(
            SubscribeCovRequest::decode(&mut Reader::new(&buf)).unwrap(),
            request
        );
        let cancel = SubscribeCovRequest::cancel(18, object);
        let mut buf = Vec::new();
        cancel.encode(&mut buf);
        assert_eq!(buf, [0x09, 0x12, 0x1C, 0x00, 0x00, 0x00, 0x0A]);
        let decoded = SubscribeCovRequest::decode(&mut Reader::new(&buf)).unwrap();
        assert!(decoded.is_cancellation());
    }
}
