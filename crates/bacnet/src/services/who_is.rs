//! Who-Is and I-Am (Clause 16.10): device discovery.
//!
//! ```text
//! Who-Is-Request ::= SEQUENCE {
//!     device-instance-range-low-limit  [0] Unsigned (0..4194303) OPTIONAL, -- both or neither
//!     device-instance-range-high-limit [1] Unsigned (0..4194303) OPTIONAL
//! }
//! I-Am-Request ::= SEQUENCE {
//!     i-am-device-identifier BACnetObjectIdentifier,
//!     max-apdu-length-accepted Unsigned,
//!     segmentation-supported BACnetSegmentation,
//!     vendor-id Unsigned16
//! }
//! ```

use crate::encoding::context::next_is_context;
use crate::encoding::object_identifier::MAX_INSTANCE;
use crate::encoding::{
    DecodeError, DecodeErrorKind, ObjectIdentifier, PrimitiveValue, Reader, TagSpec,
};
use crate::enums::Segmentation;

/// An inclusive range of device instance numbers, as used by Who-Is and Who-Has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InstanceRange {
    low: u32,
    high: u32,
}

impl InstanceRange {
    /// A range from `low` to `high`, or `None` when a limit exceeds 4194303.
    /// `low > high` is allowed on the wire (it simply matches no device).
    pub const fn new(low: u32, high: u32) -> Option<Self> {
        if low > MAX_INSTANCE || high > MAX_INSTANCE {
            None
        } else {
            Some(Self { low, high })
        }
    }

    /// The low limit.
    pub const fn low(&self) -> u32 {
        self.low
    }

    /// The high limit.
    pub const fn high(&self) -> u32 {
        self.high
    }

    /// True when `instance` lies within the limits.
    pub const fn contains(&self, instance: u32) -> bool {
        self.low <= instance && instance <= self.high
    }

    /// Appends the limits with context tags 0 and 1.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.low.encode_context(0, buf);
        self.high.encode_context(1, buf);
    }

    /// Decodes the optional pair of limits at tags [0] and [1]: both or neither.
    /// A high limit without a low limit is an `UnexpectedTag`; a limit above 4194303 an
    /// `InvalidValue`.
    pub fn decode_optional(reader: &mut Reader<'_>) -> Result<Option<Self>, DecodeError> {
        if next_is_context(reader, 1) {
            return Err(reader.error(DecodeErrorKind::UnexpectedTag {
                expected: TagSpec::Context(0),
                found: TagSpec::Context(1),
            }));
        }
        if !next_is_context(reader, 0) {
            return Ok(None);
        }
        let low = decode_limit(reader, 0)?;
        let high = decode_limit(reader, 1)?;
        Ok(Some(Self { low, high }))
    }
}

fn decode_limit(reader: &mut Reader<'_>, number: u8) -> Result<u32, DecodeError> {
    let start = reader.position();
    let limit = u32::decode_context(reader, number)?;
    if limit > MAX_INSTANCE {
        return Err(DecodeError::new(
            start,
            DecodeErrorKind::InvalidValue("device instance limit exceeds 4194303"),
        ));
    }
    Ok(limit)
}

/// Who-Is-Request: asks every device (or those whose instance lies in `range`) to answer
/// with I-Am.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct WhoIs {
    /// Device instance limits; `None` asks every device.
    pub range: Option<InstanceRange>,
}

impl WhoIs {
    /// Appends the service parameters.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        if let Some(range) = &self.range {
            range.encode(buf);
        }
    }

    /// Decodes the service parameters.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            range: InstanceRange::decode_optional(reader)?,
        })
    }

    /// True when a device with this instance number must answer.
    pub fn matches(&self, instance: u32) -> bool {
        self.range.is_none_or(|range| range.contains(instance))
    }
}

/// I-Am-Request: a device announces its identifier and communication capabilities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IAm {
    /// The device object identifier.
    pub device: ObjectIdentifier,
    /// Largest APDU the device accepts, in octets.
    pub max_apdu_length_accepted: u32,
    /// Which segmentation the device supports.
    pub segmentation_supported: Segmentation,
    /// ASHRAE-assigned vendor identifier.
    pub vendor_id: u16,
}

impl IAm {
    /// Appends the service parameters (all application tagged).
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.device.encode_application(buf);
        self.max_apdu_length_accepted.encode_application(buf);
        self.segmentation_supported.encode_application(buf);
        self.vendor_id.encode_application(buf);
    }

    /// Decodes the service parameters.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            device: ObjectIdentifier::decode_application(reader)?,
            max_apdu_length_accepted: u32::decode_application(reader)?,
            segmentation_supported: Segmentation::decode_application(reader)?,
            vendor_id: u16::decode_application(reader)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_bounds() {
        assert!(InstanceRange::new(0, MAX_INSTANCE).is_some());
        assert!(InstanceRange::new(0, MAX_INSTANCE + 1).is_none());
        let who_is = WhoIs {
            range: InstanceRange::new(3, 5),
        };
        assert!(who_is.matches(3) && who_is.matches(5) && !who_is.matches(6));
        assert!(WhoIs::default().matches(MAX_INSTANCE));
    }

    #[test]
    fn high_limit_without_low_limit() {
        let err = WhoIs::decode(&mut Reader::new(&[0x19, 0x03])).unwrap_err();
        assert_eq!(
            err,
            DecodeError::new(
                0,
                DecodeErrorKind::UnexpectedTag {
                    expected: TagSpec::Context(0),
                    found: TagSpec::Context(1)
                }
            )
        );
    }
}
