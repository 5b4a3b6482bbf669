//! `BACnetObjectPropertyReference` and `BACnetDeviceObjectPropertyReference` (Clause 21).

use super::context::{decode_optional_context, encode_optional_context};
use super::error::DecodeError;
use super::object_identifier::ObjectIdentifier;
use super::primitive::PrimitiveValue;
use super::reader::Reader;
use crate::enums::PropertyIdentifier;

/// object-identifier [0], property-identifier [1], property-array-index [2] OPTIONAL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ObjectPropertyReference {
    /// [0] the object.
    pub object: ObjectIdentifier,
    /// [1] the property.
    pub property: PropertyIdentifier,
    /// [2] the array index.
    pub array_index: Option<u32>,
}

impl ObjectPropertyReference {
    /// Appends the sequence.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.object.encode_context(0, buf);
        self.property.encode_context(1, buf);
        encode_optional_context(self.array_index.as_ref(), 2, buf);
    }

    /// Decodes the sequence.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            object: ObjectIdentifier::decode_context(reader, 0)?,
            property: PropertyIdentifier::decode_context(reader, 1)?,
            array_index: decode_optional_context(reader, 2)?,
        })
    }
}

/// object-identifier [0], property-identifier [1], property-array-index [2] OPTIONAL,
/// device-identifier [3] OPTIONAL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DeviceObjectPropertyReference {
    /// [0] the object.
    pub object: ObjectIdentifier,
    /// [1] the property.
    pub property: PropertyIdentifier,
    /// [2] the array index.
    pub array_index: Option<u32>,
    /// [3] the device holding the object (absent: the local device).
    pub device: Option<ObjectIdentifier>,
}

impl DeviceObjectPropertyReference {
    /// Appends the sequence.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.object.encode_context(0, buf);
        self.property.encode_context(1, buf);
        encode_optional_context(self.array_index.as_ref(), 2, buf);
        encode_optional_context(self.device.as_ref(), 3, buf);
    }

    /// Decodes the sequence.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            object: ObjectIdentifier::decode_context(reader, 0)?,
            property: PropertyIdentifier::decode_context(reader, 1)?,
            array_index: decode_optional_context(reader, 2)?,
            device: decode_optional_context(reader, 3)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::error::{DecodeErrorKind, TagSpec};
    use crate::enums::ObjectType;

    #[test]
    fn device_reference_with_all_fields() {
        let reference = DeviceObjectPropertyReference {
            object: ObjectIdentifier::new(ObjectType::AnalogInput, 5),
            property: PropertyIdentifier::PresentValue,
            array_index: Some(2),
            device: Some(ObjectIdentifier::new(ObjectType::Device, 9)),
        };
        let mut buf = Vec::new();
        reference.encode(&mut buf);
        assert_eq!(
            buf,
            [
                0x0C, 0x00, 0x00, 0x00, 0x05, 0x19, 0x55, 0x29, 0x02, 0x3C, 0x02, 0x00, 0x00, 0x09
            ]
        );
        assert_eq!(
            DeviceObjectPropertyReference::decode(&mut Reader::new(&buf)).unwrap(),
            reference
        );
    }

    #[test]
    fn object_reference_without_index_and_missing_property() {
        let reference = ObjectPropertyReference {
            object: ObjectIdentifier::new(ObjectType::BinaryValue, 1),
            property: PropertyIdentifier::StatusFlags,
            array_index: None,
        };
        let mut buf = Vec::new();
        reference.encode(&mut buf);
        assert_eq!(buf, [0x0C, 0x01, 0x40, 0x00, 0x01, 0x19, 0x6F]);
        assert_eq!(
            ObjectPropertyReference::decode(&mut Reader::new(&buf)).unwrap(),
            reference
        );
        let err = ObjectPropertyReference::decode(&mut Reader::new(&buf[..5])).unwrap_err();
        assert_eq!(err.offset, 5);
        assert!(matches!(err.kind, DecodeErrorKind::Truncated { .. }));
        let err =
            ObjectPropertyReference::decode(&mut Reader::new(&[0x1C, 0, 0, 0, 1])).unwrap_err();
        assert_eq!(
            err.kind,
            DecodeErrorKind::UnexpectedTag {
                expected: TagSpec::Context(0),
                found: TagSpec::Context(1)
            }
        );
    }
}
