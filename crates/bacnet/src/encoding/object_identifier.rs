//! Clause 20.2.14 BACnetObjectIdentifier (10-bit object type, 22-bit instance) and its
//! text shorthand `"ai,1"`, `"analog-input,1"` or `"analog-input:1"`.

use std::fmt;
use std::str::FromStr;

use super::error::{DecodeError, DecodeErrorKind};
use super::primitive::{ApplicationTag, PrimitiveValue};
use super::reader::Reader;
use crate::enums::ObjectType;

/// Largest instance number; 4194303 also serves as the "unspecified instance" wildcard.
pub const MAX_INSTANCE: u32 = (1 << 22) - 1;
/// Largest object type number that fits the 10-bit field.
pub const MAX_OBJECT_TYPE: u32 = (1 << 10) - 1;

/// An object identifier: type and instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ObjectIdentifier {
    object_type: ObjectType,
    instance: u32,
}

impl ObjectIdentifier {
    /// Builds an identifier; `instance` is masked to 22 bits and the type to 10 bits.
    /// Use [`ObjectIdentifier::try_new`] to reject out-of-range parts instead.
    pub const fn new(object_type: ObjectType, instance: u32) -> Self {
        Self {
            object_type: ObjectType::from_u32(object_type.to_u32() & MAX_OBJECT_TYPE),
            instance: instance & MAX_INSTANCE,
        }
    }

    /// Builds an identifier, or `None` when a part does not fit its field.
    pub const fn try_new(object_type: ObjectType, instance: u32) -> Option<Self> {
        if object_type.to_u32() > MAX_OBJECT_TYPE || instance > MAX_INSTANCE {
            None
        } else {
            Some(Self::new(object_type, instance))
        }
    }

    /// The object type.
    pub const fn object_type(&self) -> ObjectType {
        self.object_type
    }

    /// The instance number (0..=4194303).
    pub const fn instance(&self) -> u32 {
        self.instance
    }

    /// The packed 32-bit wire value.
    pub const fn to_u32(&self) -> u32 {
        (self.object_type.to_u32() << 22) | self.instance
    }

    /// Unpacks a 32-bit wire value.
    pub const fn from_u32(raw: u32) -> Self {
        Self {
            object_type: ObjectType::from_u32(raw >> 22),
            instance: raw & MAX_INSTANCE,
        }
    }
}

impl PrimitiveValue for ObjectIdentifier {
    const TAG: ApplicationTag = ApplicationTag::ObjectIdentifier;
    fn content_len(&self) -> usize {
        4
    }
    fn encode_content(&self, buf: &mut Vec<u8>) {
        buf.extend_from_slice(&self.to_u32().to_be_bytes());
    }
    fn decode_content(content: &mut Reader<'_>) -> Result<Self, DecodeError> {
        if content.remaining() != 4 {
            return Err(content.error(DecodeErrorKind::InvalidLength {
                length: content.remaining() as u32,
            }));
        }
        Ok(Self::from_u32(content.read_u32()?))
    }
}

impl fmt::Display for ObjectIdentifier {
    /// Writes `type,instance`, e.g. `analog-input,1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{}", self.object_type, self.instance)
    }
}

/// Error from parsing an object identifier shorthand.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseObjectIdentifierError {
    /// No `,` or `:` between type and instance.
    #[error("expected \"type,instance\", got {0:?}")]
    MissingSeparator(String),
    /// The type part names no object type.
    #[error("unknown object type {0:?}")]
    UnknownType(String),
    /// The instance is not a number in 0..=4194303, or the type number exceeds 1023.
    #[error("object identifier part out of range in {0:?}")]
    OutOfRange(String),
}

impl FromStr for ObjectIdentifier {
    type Err = ParseObjectIdentifierError;

    /// Parses `"ai,1"`, `"analog-input,1"`, `"analog-input:1"` or `"8,1234"`.
    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let (kind, instance) = input
            .split_once([',', ':'])
            .ok_or_else(|| ParseObjectIdentifierError::MissingSeparator(input.to_owned()))?;
        let object_type = ObjectType::from_str(kind)
            .map_err(|_| ParseObjectIdentifierError::UnknownType(kind.trim().to_owned()))?;
        let instance: u32 = instance
            .trim()
            .parse()
            .map_err(|_| ParseObjectIdentifierError::OutOfRange(input.to_owned()))?;
        Self::try_new(object_type, instance)
            .ok_or_else(|| ParseObjectIdentifierError::OutOfRange(input.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorthand_parsing_and_display() {
        let ai1 = ObjectIdentifier::new(ObjectType::AnalogInput, 1);
        assert_eq!("ai,1".parse::<ObjectIdentifier>().unwrap(), ai1);
        assert_eq!("analog-input,1".parse::<ObjectIdentifier>().unwrap(), ai1);
        assert_eq!("analog-input:1".parse::<ObjectIdentifier>().unwrap(), ai1);
        assert_eq!(" AI , 1 ".parse::<ObjectIdentifier>().unwrap(), ai1);
        assert_eq!(ai1.to_string(), "analog-input,1");
        let dev = "dev,4194303".parse::<ObjectIdentifier>().unwrap();
        assert_eq!(dev.object_type(), ObjectType::Device);
        let proprietary = "600,7".parse::<ObjectIdentifier>().unwrap();
        assert_eq!(proprietary.to_string(), "600,7");
        assert!(proprietary.object_type().is_proprietary());
    }

    #[test]
    fn shorthand_errors() {
        assert_eq!(
            "ai".parse::<ObjectIdentifier>().unwrap_err(),
            ParseObjectIdentifierError::MissingSeparator("ai".into())
        );
        assert_eq!(
            "bogus,1".parse::<ObjectIdentifier>().unwrap_err(),
            ParseObjectIdentifierError::UnknownType("bogus".into())
        );
        assert_eq!(
            "ai,4194304".parse::<ObjectIdentifier>().unwrap_err(),
            ParseObjectIdentifierError::OutOfRange("ai,4194304".into())
        );
        assert_eq!(
            "1024,1".parse::<ObjectIdentifier>().unwrap_err(),
            ParseObjectIdentifierError::OutOfRange("1024,1".into())
        );
    }

    #[test]
    fn packing() {
        let id = ObjectIdentifier::new(ObjectType::Device, 1234);
        assert_eq!(id.to_u32(), (8 << 22) | 1234);
        assert_eq!(ObjectIdentifier::from_u32(id.to_u32()), id);
    }
}
