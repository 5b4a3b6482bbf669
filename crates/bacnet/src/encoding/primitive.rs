//! Clause 20.2.2 to 20.2.14 primitive data: the [`PrimitiveValue`] codec trait, its
//! implementations for the numeric types, and the [`ApplicationValue`] enum of every
//! application-tagged datum.
//!
//! Integers are encoded in the fewest octets the standard allows; decoders accept any
//! length from 1 to 8 octets for Unsigned/Signed and 1 to 4 for Enumerated.

use super::bit_string::BitString;
use super::date_time::{Date, Time};
use super::error::{DecodeError, DecodeErrorKind, TagSpec};
use super::object_identifier::ObjectIdentifier;
use super::reader::Reader;
use super::tag::{Tag, TagClass, TagKind};
use crate::enums::{
    AbortReason, BinaryPv, EnableDisable, EngineeringUnits, ErrorClass, ErrorCode, EventState,
    LoggingType, ObjectType, Polarity, PropertyIdentifier, ReinitializedState, RejectReason,
    Reliability, Segmentation,
};

/// Application tag numbers of the primitive data types (Clause 20.2.1.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ApplicationTag {
    /// NULL
    Null = 0,
    /// BOOLEAN
    Boolean = 1,
    /// Unsigned Integer
    Unsigned = 2,
    /// Signed Integer (two's complement)
    Signed = 3,
    /// REAL (IEEE-754 single)
    Real = 4,
    /// Double (IEEE-754 double)
    Double = 5,
    /// Octet String
    OctetString = 6,
    /// Character String
    CharacterString = 7,
    /// Bit String
    BitString = 8,
    /// Enumerated
    Enumerated = 9,
    /// Date
    Date = 10,
    /// Time
    Time = 11,
    /// BACnetObjectIdentifier
    ObjectIdentifier = 12,
}

impl ApplicationTag {
    /// The tag for a header number; 13..=15 are reserved and give `None`.
    pub const fn from_number(number: u8) -> Option<Self> {
        Some(match number {
            0 => Self::Null,
            1 => Self::Boolean,
            2 => Self::Unsigned,
            3 => Self::Signed,
            4 => Self::Real,
            5 => Self::Double,
            6 => Self::OctetString,
            7 => Self::CharacterString,
            8 => Self::BitString,
            9 => Self::Enumerated,
            10 => Self::Date,
            11 => Self::Time,
            12 => Self::ObjectIdentifier,
            _ => return None,
        })
    }
}

/// A primitive datum that can be encoded with an application tag or a context tag.
///
/// Implementors only describe their content octets; the provided methods add and check tags.
pub trait PrimitiveValue: Sized {
    /// The application tag of this data type.
    const TAG: ApplicationTag;

    /// Number of content octets [`Self::encode_content`] writes.
    fn content_len(&self) -> usize;

    /// Appends the content octets (no tag).
    fn encode_content(&self, buf: &mut Vec<u8>);

    /// Decodes content octets; `content` holds exactly the tagged length.
    fn decode_content(content: &mut Reader<'_>) -> Result<Self, DecodeError>;

    /// Appends application tag and content.
    fn encode_application(&self, buf: &mut Vec<u8>) {
        Tag::application(Self::TAG as u8, content_length_u32(self.content_len())).encode(buf);
        self.encode_content(buf);
    }

    /// Appends context tag `number` and content.
    fn encode_context(&self, number: u8, buf: &mut Vec<u8>) {
        Tag::context(number, content_length_u32(self.content_len())).encode(buf);
        self.encode_content(buf);
    }

    /// Decodes an application-tagged value of this type.
    fn decode_application(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let expected = TagSpec::Application(Self::TAG as u8);
        let start = reader.position();
        let tag = Tag::decode(reader)?;
        if tag.class != TagClass::Application || tag.number != Self::TAG as u8 {
            return Err(unexpected(start, expected, &tag));
        }
        decode_tagged_content(reader, start, &tag, expected)
    }

    /// Decodes a value of this type carrying context tag `number`.
    fn decode_context(reader: &mut Reader<'_>, number: u8) -> Result<Self, DecodeError> {
        let expected = TagSpec::Context(number);
        let start = reader.position();
        let tag = Tag::decode(reader)?;
        if !tag.is_context(number) {
            return Err(unexpected(start, expected, &tag));
        }
        decode_tagged_content(reader, start, &tag, expected)
    }
}

/// Content lengths come from in-memory values, which never approach 4 GiB in practice;
/// saturating keeps the encoder total.
fn content_length_u32(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}

pub(crate) fn unexpected(offset: usize, expected: TagSpec, found: &Tag) -> DecodeError {
    DecodeError::new(
        offset,
        DecodeErrorKind::UnexpectedTag {
            expected,
            found: found.spec(),
        },
    )
}

fn decode_tagged_content<T: PrimitiveValue>(
    reader: &mut Reader<'_>,
    start: usize,
    tag: &Tag,
    expected: TagSpec,
) -> Result<T, DecodeError> {
    let length = tag.value_length(start, expected)?;
    let length = usize::try_from(length).map_err(|_| {
        DecodeError::new(
            start,
            DecodeErrorKind::LengthTooLarge {
                length: u64::from(length),
                limit: usize::MAX as u64,
            },
        )
    })?;
    let mut content = reader.sub_reader(length)?;
    let value = T::decode_content(&mut content)?;
    content.expect_end()?;
    Ok(value)
}

fn invalid_length(content: &Reader<'_>) -> DecodeError {
    content.error(DecodeErrorKind::InvalidLength {
        length: content_length_u32(content.remaining()),
    })
}

/// Reads a big-endian unsigned integer of 1..=`max` octets (the whole content).
fn read_unsigned_content(content: &mut Reader<'_>, max: usize) -> Result<u64, DecodeError> {
    let len = content.remaining();
    if len == 0 || len > max {
        return Err(invalid_length(content));
    }
    Ok(content
        .read_rest()
        .iter()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
}

/// Octets needed for `value` as a minimal Unsigned (at least one).
fn unsigned_len(value: u64) -> usize {
    let bits = 64 - value.leading_zeros() as usize;
    bits.div_ceil(8).max(1)
}

fn encode_unsigned_content(value: u64, buf: &mut Vec<u8>) {
    let len = unsigned_len(value);
    buf.extend_from_slice(&value.to_be_bytes()[8 - len..]);
}

/// Octets needed for `value` as a minimal two's-complement Signed.
fn signed_len(value: i64) -> usize {
    let significant = if value < 0 {
        64 - value.leading_ones() as usize
    } else {
        64 - value.leading_zeros() as usize
    };
    // One more bit for the sign.
    (significant + 1).div_ceil(8).max(1)
}

impl PrimitiveValue for () {
    const TAG: ApplicationTag = ApplicationTag::Null;
    fn content_len(&self) -> usize {
        0
    }
    fn encode_content(&self, _buf: &mut Vec<u8>) {}
    fn decode_content(content: &mut Reader<'_>) -> Result<Self, DecodeError> {
        if content.is_empty() {
            Ok(())
        } else {
            Err(invalid_length(content))
        }
    }
}

impl PrimitiveValue for bool {
    const TAG: ApplicationTag = ApplicationTag::Boolean;
    fn content_len(&self) -> usize {
        1
    }
    fn encode_content(&self, buf: &mut Vec<u8>) {
        buf.push(u8::from(*self));
    }
    /// Context-tagged BOOLEAN: one content octet (Clause 20.2.3).
    fn decode_content(content: &mut Reader<'_>) -> Result<Self, DecodeError> {
        if content.remaining() != 1 {
            return Err(invalid_length(content));
        }
        match content.read_u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(DecodeError::new(
                content.position() - 1,
                DecodeErrorKind::InvalidValue("boolean octet must be 0 or 1"),
            )),
        }
    }
    /// Application-tagged BOOLEAN keeps its value in L/V/T and has no content.
    fn encode_application(&self, buf: &mut Vec<u8>) {
        Tag::application(ApplicationTag::Boolean as u8, u32::from(*self)).encode(buf);
    }
    fn decode_application(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let expected = TagSpec::Application(ApplicationTag::Boolean as u8);
        let start = reader.position();
        let tag = Tag::decode(reader)?;
        if tag.class != TagClass::Application || tag.number != ApplicationTag::Boolean as u8 {
            return Err(unexpected(start, expected, &tag));
        }
        match tag.kind {
            TagKind::Value(0) => Ok(false),
            TagKind::Value(1) => Ok(true),
            _ => Err(DecodeError::new(
                start,
                DecodeErrorKind::InvalidValue("application boolean L/V/T must be 0 or 1"),
            )),
        }
    }
}

impl PrimitiveValue for u64 {
    const TAG: ApplicationTag = ApplicationTag::Unsigned;
    fn content_len(&self) -> usize {
        unsigned_len(*self)
    }
    fn encode_content(&self, buf: &mut Vec<u8>) {
        encode_unsigned_content(*self, buf);
    }
    fn decode_content(content: &mut Reader<'_>) -> Result<Self, DecodeError> {
        read_unsigned_content(content, 8)
    }
}

macro_rules! narrow_unsigned {
    ($($ty:ty),*) => {$(
        impl PrimitiveValue for $ty {
            const TAG: ApplicationTag = ApplicationTag::Unsigned;
            fn content_len(&self) -> usize {
                unsigned_len(u64::from(*self))
            }
            fn encode_content(&self, buf: &mut Vec<u8>) {
                encode_unsigned_content(u64::from(*self), buf);
            }
            fn decode_content(content: &mut Reader<'_>) -> Result<Self, DecodeError> {
                let start = content.position();
                let wide = read_unsigned_content(content, 8)?;
                <$ty>::try_from(wide).map_err(|_| {
                    DecodeError::new(
                        start,
                        DecodeErrorKind::InvalidValue(concat!("unsigned value exceeds ", stringify!($ty))),
                    )
                })
            }
        }
    )*};
}
narrow_unsigned!(u8, u16, u32);

impl PrimitiveValue for i64 {
    const TAG: ApplicationTag = ApplicationTag::Signed;
    fn content_len(&self) -> usize {
        signed_len(*self)
    }
    fn encode_content(&self, buf: &mut Vec<u8>) {
        let len = signed_len(*self);
        buf.extend_from_slice(&self.to_be_bytes()[8 - len..]);
    }
    fn decode_content(content: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let len = content.remaining();
        if len == 0 || len > 8 {
            return Err(invalid_length(content));
        }
        let bytes = content.read_rest();
        let fill = if bytes[0] & 0x80 != 0 { 0xFF } else { 0x00 };
        let mut wide = [fill; 8];
        wide[8 - len..].copy_from_slice(bytes);
        Ok(i64::from_be_bytes(wide))
    }
}

impl PrimitiveValue for f32 {
    const TAG: ApplicationTag = ApplicationTag::Real;
    fn content_len(&self) -> usize {
        4
    }
    fn encode_content(&self, buf: &mut Vec<u8>) {
        buf.extend_from_slice(&self.to_be_bytes());
    }
    fn decode_content(content: &mut Reader<'_>) -> Result<Self, DecodeError> {
        if content.remaining() != 4 {
            return Err(invalid_length(content));
        }
        Ok(f32::from_be_bytes(content.read_array()?))
    }
}

impl PrimitiveValue for f64 {
    const TAG: ApplicationTag = ApplicationTag::Double;
    fn content_len(&self) -> usize {
        8
    }
    fn encode_content(&self, buf: &mut Vec<u8>) {
        buf.extend_from_slice(&self.to_be_bytes());
    }
    fn decode_content(content: &mut Reader<'_>) -> Result<Self, DecodeError> {
        if content.remaining() != 8 {
            return Err(invalid_length(content));
        }
        Ok(f64::from_be_bytes(content.read_array()?))
    }
}

/// OCTET STRING: allocation is bounded by the tagged length, itself checked against the input.
impl PrimitiveValue for Vec<u8> {
    const TAG: ApplicationTag = ApplicationTag::OctetString;
    fn content_len(&self) -> usize {
        self.len()
    }
    fn encode_content(&self, buf: &mut Vec<u8>) {
        buf.extend_from_slice(self);
    }
    fn decode_content(content: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(content.read_rest().to_vec())
    }
}

/// An ENUMERATED value whose enumeration is not known statically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Enumerated(pub u32);

impl PrimitiveValue for Enumerated {
    const TAG: ApplicationTag = ApplicationTag::Enumerated;
    fn content_len(&self) -> usize {
        unsigned_len(u64::from(self.0))
    }
    fn encode_content(&self, buf: &mut Vec<u8>) {
        encode_unsigned_content(u64::from(self.0), buf);
    }
    fn decode_content(content: &mut Reader<'_>) -> Result<Self, DecodeError> {
        // At most 4 octets, so the value always fits in u32.
        let value = read_unsigned_content(content, 4)?;
        Ok(Enumerated(u32::try_from(value).unwrap_or(u32::MAX)))
    }
}

macro_rules! enumerated_codec {
    ($($ty:ty),*) => {$(
        /// Encoded as ENUMERATED; unlisted numbers decode to the unknown variant.
        impl PrimitiveValue for $ty {
            const TAG: ApplicationTag = ApplicationTag::Enumerated;
            fn content_len(&self) -> usize {
                Enumerated(self.to_u32()).content_len()
            }
            fn encode_content(&self, buf: &mut Vec<u8>) {
                Enumerated(self.to_u32()).encode_content(buf);
            }
            fn decode_content(content: &mut Reader<'_>) -> Result<Self, DecodeError> {
                Enumerated::decode_content(content).map(|e| <$ty>::from_u32(e.0))
            }
        }
    )*};
}
enumerated_codec!(
    ObjectType,
    PropertyIdentifier,
    EngineeringUnits,
    ErrorClass,
    ErrorCode,
    RejectReason,
    AbortReason,
    Segmentation,
    EventState,
    Reliability,
    Polarity,
    BinaryPv,
    EnableDisable,
    ReinitializedState,
    LoggingType
);

/// Any application-tagged primitive datum.
#[derive(Debug, Clone, PartialEq)]
pub enum ApplicationValue {
    /// NULL
    Null,
    /// BOOLEAN
    Boolean(bool),
    /// Unsigned Integer
    Unsigned(u64),
    /// Signed Integer
    Signed(i64),
    /// REAL
    Real(f32),
    /// Double
    Double(f64),
    /// Octet String
    OctetString(Vec<u8>),
    /// Character String (decoded to Unicode; always re-encoded as UTF-8)
    CharacterString(String),
    /// Bit String
    BitString(BitString),
    /// Enumerated
    Enumerated(u32),
    /// Date
    Date(Date),
    /// Time
    Time(Time),
    /// BACnetObjectIdentifier
    ObjectIdentifier(ObjectIdentifier),
}

impl ApplicationValue {
    /// The application tag of this value.
    pub const fn tag(&self) -> ApplicationTag {
        match self {
            Self::Null => ApplicationTag::Null,
            Self::Boolean(_) => ApplicationTag::Boolean,
            Self::Unsigned(_) => ApplicationTag::Unsigned,
            Self::Signed(_) => ApplicationTag::Signed,
            Self::Real(_) => ApplicationTag::Real,
            Self::Double(_) => ApplicationTag::Double,
            Self::OctetString(_) => ApplicationTag::OctetString,
            Self::CharacterString(_) => ApplicationTag::CharacterString,
            Self::BitString(_) => ApplicationTag::BitString,
            Self::Enumerated(_) => ApplicationTag::Enumerated,
            Self::Date(_) => ApplicationTag::Date,
            Self::Time(_) => ApplicationTag::Time,
            Self::ObjectIdentifier(_) => ApplicationTag::ObjectIdentifier,
        }
    }

    /// Appends the application-tagged encoding.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        match self {
            Self::Null => ().encode_application(buf),
            Self::Boolean(v) => v.encode_application(buf),
            Self::Unsigned(v) => v.encode_application(buf),
            Self::Signed(v) => v.encode_application(buf),
            Self::Real(v) => v.encode_application(buf),
            Self::Double(v) => v.encode_application(buf),
            Self::OctetString(v) => v.encode_application(buf),
            Self::CharacterString(v) => v.encode_application(buf),
            Self::BitString(v) => v.encode_application(buf),
            Self::Enumerated(v) => Enumerated(*v).encode_application(buf),
            Self::Date(v) => v.encode_application(buf),
            Self::Time(v) => v.encode_application(buf),
            Self::ObjectIdentifier(v) => v.encode_application(buf),
        }
    }

    /// Decodes one application-tagged value of any type.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let start = reader.position();
        let tag = Tag::peek(reader)?;
        if tag.class != TagClass::Application {
            return Err(unexpected(start, TagSpec::AnyApplication, &tag));
        }
        let Some(application_tag) = ApplicationTag::from_number(tag.number) else {
            return Err(DecodeError::new(start, DecodeErrorKind::InvalidTag));
        };
        Ok(match application_tag {
            ApplicationTag::Null => {
                <()>::decode_application(reader)?;
                Self::Null
            }
            ApplicationTag::Boolean => Self::Boolean(bool::decode_application(reader)?),
            ApplicationTag::Unsigned => Self::Unsigned(u64::decode_application(reader)?),
            ApplicationTag::Signed => Self::Signed(i64::decode_application(reader)?),
            ApplicationTag::Real => Self::Real(f32::decode_application(reader)?),
            ApplicationTag::Double => Self::Double(f64::decode_application(reader)?),
            ApplicationTag::OctetString => Self::OctetString(Vec::decode_application(reader)?),
            ApplicationTag::CharacterString => {
                Self::CharacterString(String::decode_application(reader)?)
            }
            ApplicationTag::BitString => Self::BitString(BitString::decode_application(reader)?),
            ApplicationTag::Enumerated => {
                Self::Enumerated(Enumerated::decode_application(reader)?.0)
            }
            ApplicationTag::Date => Self::Date(Date::decode_application(reader)?),
            ApplicationTag::Time => Self::Time(Time::decode_application(reader)?),
            ApplicationTag::ObjectIdentifier => {
                Self::ObjectIdentifier(ObjectIdentifier::decode_application(reader)?)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(value: &ApplicationValue) -> Vec<u8> {
        let mut buf = Vec::new();
        value.encode(&mut buf);
        buf
    }

    fn decode(bytes: &[u8]) -> Result<ApplicationValue, DecodeError> {
        let mut r = Reader::new(bytes);
        let v = ApplicationValue::decode(&mut r)?;
        r.expect_end()?;
        Ok(v)
    }

    #[test]
    fn clause_20_2_examples() {
        // Each pair is an example encoding from Clause 20.2.2 to 20.2.14.
        let cases: Vec<(ApplicationValue, Vec<u8>)> = vec![
            (ApplicationValue::Null, vec![0x00]),
            (ApplicationValue::Boolean(false), vec![0x10]),
            (ApplicationValue::Boolean(true), vec![0x11]),
            (ApplicationValue::Unsigned(72), vec![0x21, 0x48]),
            (ApplicationValue::Signed(72), vec![0x31, 0x48]),
            (
                ApplicationValue::Real(72.0),
                vec![0x44, 0x42, 0x90, 0x00, 0x00],
            ),
            (
                ApplicationValue::Double(72.0),
                vec![0x55, 0x08, 0x40, 0x52, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00],
            ),
            (
                ApplicationValue::OctetString(vec![0x12, 0x34, 0xFF]),
                vec![0x63, 0x12, 0x34, 0xFF],
            ),
            (
                ApplicationValue::CharacterString("This is a BACnet string!".into()),
                [&[0x75, 0x19, 0x00][..], b"This is a BACnet string!"].concat(),
            ),
            (ApplicationValue::Enumerated(0), vec![0x91, 0x00]),
            (
                ApplicationValue::Date(Date::new(1991, 1, 24, 4)),
                vec![0xA4, 0x5B, 0x01, 0x18, 0x04],
            ),
            (
                ApplicationValue::Time(Time::new(17, 35, 45, 17)),
                vec![0xB4, 0x11, 0x23, 0x2D, 0x11],
            ),
            (
                ApplicationValue::ObjectIdentifier(ObjectIdentifier::new(
                    ObjectType::BinaryInput,
                    15,
                )),
                vec![0xC4, 0x00, 0xC0, 0x00, 0x0F],
            ),
        ];
        for (value, bytes) in cases {
            assert_eq!(encode(&value), bytes, "encoding {value:?}");
            assert_eq!(decode(&bytes).unwrap(), value, "decoding {bytes:02X?}");
        }
    }

    #[test]
    fn minimal_integer_lengths() {
        assert_eq!(encode(&ApplicationValue::Unsigned(0)), [0x21, 0x00]);
        assert_eq!(encode(&ApplicationValue::Unsigned(256)), [0x22, 0x01, 0x00]);
        assert_eq!(
            encode(&ApplicationValue::Unsigned(u64::MAX)),
            [0x25, 0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        );
        assert_eq!(encode(&ApplicationValue::Signed(-1)), [0x31, 0xFF]);
        assert_eq!(encode(&ApplicationValue::Signed(127)), [0x31, 0x7F]);
        assert_eq!(encode(&ApplicationValue::Signed(128)), [0x32, 0x00, 0x80]);
        assert_eq!(encode(&ApplicationValue::Signed(-128)), [0x31, 0x80]);
        assert_eq!(encode(&ApplicationValue::Signed(-129)), [0x32, 0xFF, 0x7F]);
    }

    #[test]
    fn accepts_non_minimal_integers() {
        assert_eq!(
            decode(&[0x24, 0, 0, 0, 5]).unwrap(),
            ApplicationValue::Unsigned(5)
        );
        assert_eq!(
            decode(&[0x33, 0xFF, 0xFF, 0xFE]).unwrap(),
            ApplicationValue::Signed(-2)
        );
    }

    #[test]
    fn rejects_bad_lengths() {
        assert_eq!(
            decode(&[0x20]).unwrap_err(),
            DecodeError::new(1, DecodeErrorKind::InvalidLength { length: 0 })
        );
        let nine = [0x25, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9];
        assert_eq!(
            decode(&nine).unwrap_err().kind,
            DecodeErrorKind::InvalidLength { length: 9 }
        );
        assert_eq!(
            decode(&[0x43, 0, 0, 0]).unwrap_err().kind,
            DecodeErrorKind::InvalidLength { length: 3 }
        );
        assert_eq!(
            decode(&[0x95, 5, 0, 0, 0, 0, 1]).unwrap_err().kind,
            DecodeErrorKind::InvalidLength { length: 5 }
        );
        assert_eq!(
            decode(&[0x01, 0x00]).unwrap_err().kind,
            DecodeErrorKind::InvalidLength { length: 1 }
        );
        assert_eq!(
            decode(&[0x12]).unwrap_err().kind,
            DecodeErrorKind::InvalidValue("application boolean L/V/T must be 0 or 1")
        );
    }

    #[test]
    fn rejects_truncation_reserved_tags_and_context_tags() {
        assert_eq!(
            decode(&[0x44, 0x42, 0x90]).unwrap_err(),
            DecodeError::new(
                1,
                DecodeErrorKind::Truncated {
                    needed: 4,
                    remaining: 2
                }
            )
        );
        assert_eq!(
            decode(&[0xD1, 0x00]).unwrap_err(),
            DecodeError::new(0, DecodeErrorKind::InvalidTag)
        );
        assert_eq!(
            decode(&[0x09, 0x01]).unwrap_err().kind,
            DecodeErrorKind::UnexpectedTag {
                expected: TagSpec::AnyApplication,
                found: TagSpec::Context(0)
            }
        );
        // A huge declared length must fail before any allocation.
        assert_eq!(
            decode(&[0x65, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
                .unwrap_err()
                .kind,
            DecodeErrorKind::Truncated {
                needed: u32::MAX as usize,
                remaining: 0
            }
        );
    }

    #[test]
    fn context_tagged_values() {
        let mut buf = Vec::new();
        72u32.encode_context(1, &mut buf);
        true.encode_context(2, &mut buf);
        PropertyIdentifier::PresentValue.encode_context(3, &mut buf);
        assert_eq!(buf, [0x19, 0x48, 0x29, 0x01, 0x39, 0x55]);
        let mut r = Reader::new(&buf);
        assert_eq!(u32::decode_context(&mut r, 1).unwrap(), 72);
        assert!(bool::decode_context(&mut r, 2).unwrap());
        assert_eq!(
            PropertyIdentifier::decode_context(&mut r, 3).unwrap(),
            PropertyIdentifier::PresentValue
        );
        let err = u8::decode_context(&mut Reader::new(&[0x1A, 0x01, 0x00]), 1).unwrap_err();
        assert_eq!(
            err.kind,
            DecodeErrorKind::InvalidValue("unsigned value exceeds u8")
        );
        let err = u8::decode_context(&mut Reader::new(&[0x29, 0x01]), 1).unwrap_err();
        assert_eq!(
            err.kind,
            DecodeErrorKind::UnexpectedTag {
                expected: TagSpec::Context(1),
                found: TagSpec::Context(2)
            }
        );
    }
}
