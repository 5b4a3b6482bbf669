//! ReadRange (Clause 15.8): read part of a list or array property, by position, by
//! sequence number or by time (the last two for log buffers).
//!
//! ```text
//! ReadRange-Request ::= SEQUENCE {
//!     object-identifier    [0] BACnetObjectIdentifier,
//!     property-identifier  [1] BACnetPropertyIdentifier,
//!     property-array-index [2] Unsigned OPTIONAL,
//!     range CHOICE {
//!         by-position        [3] SEQUENCE { reference-index Unsigned, count INTEGER },
//!         by-sequence-number [6] SEQUENCE { reference-sequence-number Unsigned32, count INTEGER },
//!         by-time            [7] SEQUENCE { reference-time BACnetDateTime, count INTEGER }
//!     } OPTIONAL
//! }
//! ReadRange-ACK ::= SEQUENCE {
//!     object-identifier     [0] BACnetObjectIdentifier,
//!     property-identifier   [1] BACnetPropertyIdentifier,
//!     property-array-index  [2] Unsigned OPTIONAL,
//!     result-flags          [3] BACnetResultFlags,
//!     item-count            [4] Unsigned,
//!     item-data             [5] SEQUENCE OF ABSTRACT-SYNTAX.&Type,
//!     first-sequence-number [6] Unsigned32 OPTIONAL
//! }
//! ```
//!
//! Context tags 4 and 5 of the range choice were removed from the standard (135-2004) and
//! are refused here like any other wrong tag. A count of 0 is refused as out of range.

use crate::encoding::abstract_syntax::{decode_until_closing, encode_elements};
use crate::encoding::calendar::wrong_choice;
use crate::encoding::context::{
    decode_optional_context, encode_closing, encode_opening, encode_optional_context,
    expect_closing, expect_opening, next_is_opening, peek_tag,
};
use crate::encoding::{
    BitString, DateTime, DecodeError, DecodeErrorKind, Element, ObjectIdentifier, PrimitiveValue,
    Reader, TagSpec,
};
use crate::enums::PropertyIdentifier;

/// Which items a ReadRange asks for. A positive count reads forward from the reference,
/// a negative one backward (the reference included for position and sequence number;
/// strictly after / before the reference time for time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeSpec {
    /// [3] by position: 1-based reference index.
    ByPosition {
        /// The first (count > 0) or last (count < 0) item read.
        reference_index: u32,
        /// How many items, and in which direction.
        count: i32,
    },
    /// [6] by sequence number (log buffers).
    BySequenceNumber {
        /// The first (count > 0) or last (count < 0) sequence number read.
        reference_sequence_number: u32,
        /// How many items, and in which direction.
        count: i32,
    },
    /// [7] by time (log buffers).
    ByTime {
        /// Records newer (count > 0) or older (count < 0) than this time are read.
        reference_time: DateTime,
        /// How many items, and in which direction.
        count: i32,
    },
}

impl RangeSpec {
    /// The count of any form.
    pub const fn count(&self) -> i32 {
        match self {
            Self::ByPosition { count, .. }
            | Self::BySequenceNumber { count, .. }
            | Self::ByTime { count, .. } => *count,
        }
    }

    fn encode(&self, buf: &mut Vec<u8>) {
        let (tag, count) = match self {
            Self::ByPosition {
                reference_index,
                count,
            } => {
                encode_opening(3, buf);
                reference_index.encode_application(buf);
                (3, count)
            }
            Self::BySequenceNumber {
                reference_sequence_number,
                count,
            } => {
                encode_opening(6, buf);
                reference_sequence_number.encode_application(buf);
                (6, count)
            }
            Self::ByTime {
                reference_time,
                count,
            } => {
                encode_opening(7, buf);
                reference_time.encode(buf);
                (7, count)
            }
        };
        i64::from(*count).encode_application(buf);
        encode_closing(tag, buf);
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let Some(tag) = peek_tag(reader).filter(|tag| [3, 6, 7].iter().any(|n| tag.is_opening(*n)))
        else {
            return Err(wrong_choice(reader, TagSpec::Opening(3)));
        };
        expect_opening(reader, tag.number)?;
        let range = match tag.number {
            3 => {
                let reference_index = u32::decode_application(reader)?;
                Self::ByPosition {
                    reference_index,
                    count: decode_count(reader)?,
                }
            }
            6 => {
                let reference_sequence_number = u32::decode_application(reader)?;
                Self::BySequenceNumber {
                    reference_sequence_number,
                    count: decode_count(reader)?,
                }
            }
            _ => {
                let reference_time = DateTime::decode(reader)?;
                Self::ByTime {
                    reference_time,
                    count: decode_count(reader)?,
                }
            }
        };
        expect_closing(reader, tag.number)?;
        Ok(range)
    }
}

/// INTEGER count: non-zero and within i32.
fn decode_count(reader: &mut Reader<'_>) -> Result<i32, DecodeError> {
    let start = reader.position();
    let count = i64::decode_application(reader)?;
    match i32::try_from(count) {
        Ok(0) => Err(DecodeError::new(
            start,
            DecodeErrorKind::InvalidValue("read-range count must not be 0"),
        )),
        Ok(count) => Ok(count),
        Err(_) => Err(DecodeError::new(
            start,
            DecodeErrorKind::InvalidValue("read-range count out of range"),
        )),
    }
}

/// ReadRange-Request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadRangeRequest {
    /// [0] the object.
    pub object: ObjectIdentifier,
    /// [1] the list or array property.
    pub property: PropertyIdentifier,
    /// [2] for an array of lists, the element whose list is read.
    pub array_index: Option<u32>,
    /// The items wanted; `None` reads them all.
    pub range: Option<RangeSpec>,
}

impl ReadRangeRequest {
    /// Appends the service parameters.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.object.encode_context(0, buf);
        self.property.encode_context(1, buf);
        encode_optional_context(self.array_index.as_ref(), 2, buf);
        if let Some(range) = &self.range {
            range.encode(buf);
        }
    }

    /// Decodes the service parameters.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let object = ObjectIdentifier::decode_context(reader, 0)?;
        let property = PropertyIdentifier::decode_context(reader, 1)?;
        let array_index = decode_optional_context(reader, 2)?;
        let range = if reader.is_empty() {
            None
        } else {
            Some(RangeSpec::decode(reader)?)
        };
        Ok(Self {
            object,
            property,
            array_index,
            range,
        })
    }
}

/// `BACnetResultFlags`: where the returned items sit in the whole list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ResultFlags {
    /// The first item returned is the first of the list.
    pub first_item: bool,
    /// The last item returned is the last of the list.
    pub last_item: bool,
    /// More items matched than were returned (the answer had to be cut short).
    pub more_items: bool,
}

impl ResultFlags {
    /// As the 3-bit BIT STRING.
    pub fn bits(&self) -> BitString {
        BitString::from_bits(&[self.first_item, self.last_item, self.more_items])
    }

    /// From the BIT STRING (missing bits read as false).
    pub fn from_bits(bits: &BitString) -> Self {
        Self {
            first_item: bits.get(0),
            last_item: bits.get(1),
            more_items: bits.get(2),
        }
    }
}

/// ReadRange-ACK.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadRangeAck {
    /// [0] the object.
    pub object: ObjectIdentifier,
    /// [1] the property.
    pub property: PropertyIdentifier,
    /// [2] the array element, when one was asked for.
    pub array_index: Option<u32>,
    /// [3] where the items sit in the list.
    pub result_flags: ResultFlags,
    /// [4] how many items `item_data` holds.
    pub item_count: u32,
    /// [5] the items, one after another.
    pub item_data: Vec<Element>,
    /// [6] the sequence number of the first item (by sequence number or time, when
    /// items were returned).
    pub first_sequence_number: Option<u32>,
}

impl ReadRangeAck {
    /// Appends the service parameters.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.object.encode_context(0, buf);
        self.property.encode_context(1, buf);
        encode_optional_context(self.array_index.as_ref(), 2, buf);
        self.result_flags.bits().encode_context(3, buf);
        self.item_count.encode_context(4, buf);
        encode_opening(5, buf);
        encode_elements(&self.item_data, buf);
        encode_closing(5, buf);
        encode_optional_context(self.first_sequence_number.as_ref(), 6, buf);
    }

    /// Decodes the service parameters.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let object = ObjectIdentifier::decode_context(reader, 0)?;
        let property = PropertyIdentifier::decode_context(reader, 1)?;
        let array_index = decode_optional_context(reader, 2)?;
        let result_flags = ResultFlags::from_bits(&BitString::decode_context(reader, 3)?);
        let item_count = u32::decode_context(reader, 4)?;
        if !next_is_opening(reader, 5) {
            return Err(wrong_choice(reader, TagSpec::Opening(5)));
        }
        expect_opening(reader, 5)?;
        let item_data = decode_until_closing(reader, 5)?;
        let first_sequence_number = decode_optional_context(reader, 6)?;
        Ok(Self {
            object,
            property,
            array_index,
            result_flags,
            item_count,
            item_data,
            first_sequence_number,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::{ApplicationValue, Date, Time};
    use crate::enums::ObjectType;

    fn trend_log() -> ObjectIdentifier {
        ObjectIdentifier::new(ObjectType::TrendLog, 1)
    }

    #[test]
    fn each_range_form_round_trips() {
        for range in [
            None,
            Some(RangeSpec::ByPosition {
                reference_index: 1,
                count: 10,
            }),
            Some(RangeSpec::BySequenceNumber {
                reference_sequence_number: 1000,
                count: -5,
            }),
            Some(RangeSpec::ByTime {
                reference_time: DateTime {
                    date: Date::new(2025, 3, 1, 6),
                    time: Time::new(8, 0, 0, 0),
                },
                count: 3,
            }),
        ] {
            let request = ReadRangeRequest {
                object: trend_log(),
                property: PropertyIdentifier::LogBuffer,
                array_index: None,
                range,
            };
            let mut buf = Vec::new();
            request.encode(&mut buf);
            let mut reader = Reader::new(&buf);
            assert_eq!(ReadRangeRequest::decode(&mut reader).unwrap(), request);
            assert!(reader.is_empty());
        }
    }

    #[test]
    fn by_position_bytes_and_zero_count() {
        let request = ReadRangeRequest {
            object: trend_log(),
            property: PropertyIdentifier::LogBuffer,
            array_index: None,
            range: Some(RangeSpec::ByPosition {
                reference_index: 1,
                count: -2,
            }),
        };
        let mut buf = Vec::new();
        request.encode(&mut buf);
        assert_eq!(
            buf,
            [
                0x0C, 0x05, 0x00, 0x00, 0x01, 0x19, 0x83, 0x3E, 0x21, 0x01, 0x31, 0xFE, 0x3F
            ]
        );
        // The same with a count of 0.
        let mut zero = buf.clone();
        zero[11] = 0x00;
        let err = ReadRangeRequest::decode(&mut Reader::new(&zero)).unwrap_err();
        assert_eq!(
            err,
            DecodeError::new(
                10,
                DecodeErrorKind::InvalidValue("read-range count must not be 0")
            )
        );
        // The removed [4] form.
        let mut old = buf;
        old[7] = 0x4E;
        old[12] = 0x4F;
        let err = ReadRangeRequest::decode(&mut Reader::new(&old)).unwrap_err();
        assert!(matches!(err.kind, DecodeErrorKind::UnexpectedTag { .. }));
    }

    #[test]
    fn ack_round_trip() {
        let ack = ReadRangeAck {
            object: trend_log(),
            property: PropertyIdentifier::LogBuffer,
            array_index: None,
            result_flags: ResultFlags {
                first_item: true,
                last_item: false,
                more_items: true,
            },
            item_count: 2,
            item_data: vec![
                Element::Application(ApplicationValue::Unsigned(1)),
                Element::Application(ApplicationValue::Unsigned(2)),
            ],
            first_sequence_number: Some(77),
        };
        let mut buf = Vec::new();
        ack.encode(&mut buf);
        let mut reader = Reader::new(&buf);
        assert_eq!(ReadRangeAck::decode(&mut reader).unwrap(), ack);
        assert!(reader.is_empty());
    }
}
