//! `BACnetLogRecord` (Clause 21): one entry of a Trend Log's log-buffer.
//!
//! ```text
//! BACnetLogRecord ::= SEQUENCE {
//!     timestamp [0] BACnetDateTime,
//!     log-datum [1] CHOICE { log-status [0] BACnetLogStatus, boolean-value [1] BOOLEAN,
//!         real-value [2] REAL, enumerated-value [3] ENUMERATED, unsigned-value [4] Unsigned,
//!         integer-value [5] INTEGER, bitstring-value [6] BIT STRING, null-value [7] NULL,
//!         failure [8] Error, time-change [9] REAL, any-value [10] ABSTRACT-SYNTAX.&Type },
//!     status-flags [2] BACnetStatusFlags OPTIONAL
//! }
//! ```

use super::abstract_syntax::{Element, decode_until_closing, encode_elements};
use super::bit_string::BitString;
use super::calendar::wrong_choice;
use super::context::{
    encode_closing, encode_opening, expect_closing, expect_opening, next_is_context,
    next_is_opening, peek_tag,
};
use super::date_time::DateTime;
use super::error::{DecodeError, TagSpec};
use super::primitive::{Enumerated, PrimitiveValue};
use super::reader::Reader;
use crate::enums::{ErrorClass, ErrorCode};

/// The value (or event) a log record holds.
#[derive(Debug, Clone, PartialEq)]
pub enum LogDatum {
    /// [0] `BACnetLogStatus`: log-disabled, buffer-purged, log-interrupted.
    LogStatus(BitString),
    /// [1]
    Boolean(bool),
    /// [2]
    Real(f32),
    /// [3]
    Enumerated(u32),
    /// [4]
    Unsigned(u64),
    /// [5]
    Signed(i64),
    /// [6]
    BitString(BitString),
    /// [7]
    Null,
    /// [8] reading the logged property failed with this error.
    Failure(ErrorClass, ErrorCode),
    /// [9] the clock was changed by this many seconds.
    TimeChange(f32),
    /// [10] a value of another datatype.
    Any(Vec<Element>),
}

impl LogDatum {
    /// Appends the choice.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        match self {
            Self::LogStatus(bits) => bits.encode_context(0, buf),
            Self::Boolean(value) => value.encode_context(1, buf),
            Self::Real(value) => value.encode_context(2, buf),
            Self::Enumerated(value) => Enumerated(*value).encode_context(3, buf),
            Self::Unsigned(value) => value.encode_context(4, buf),
            Self::Signed(value) => value.encode_context(5, buf),
            Self::BitString(bits) => bits.encode_context(6, buf),
            Self::Null => ().encode_context(7, buf),
            Self::Failure(class, code) => {
                encode_opening(8, buf);
                class.encode_application(buf);
                code.encode_application(buf);
                encode_closing(8, buf);
            }
            Self::TimeChange(seconds) => seconds.encode_context(9, buf),
            Self::Any(elements) => {
                encode_opening(10, buf);
                encode_elements(elements, buf);
                encode_closing(10, buf);
            }
        }
    }

    /// Decodes the choice.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        if next_is_opening(reader, 8) {
            expect_opening(reader, 8)?;
            let class = ErrorClass::decode_application(reader)?;
            let code = ErrorCode::decode_application(reader)?;
            expect_closing(reader, 8)?;
            return Ok(Self::Failure(class, code));
        }
        if next_is_opening(reader, 10) {
            expect_opening(reader, 10)?;
            return Ok(Self::Any(decode_until_closing(reader, 10)?));
        }
        let Some(tag) = peek_tag(reader).filter(|_| (0..=9).any(|n| next_is_context(reader, n)))
        else {
            return Err(wrong_choice(reader, TagSpec::Context(0)));
        };
        Ok(match tag.number {
            0 => Self::LogStatus(BitString::decode_context(reader, 0)?),
            1 => Self::Boolean(bool::decode_context(reader, 1)?),
            2 => Self::Real(f32::decode_context(reader, 2)?),
            3 => Self::Enumerated(Enumerated::decode_context(reader, 3)?.0),
            4 => Self::Unsigned(u64::decode_context(reader, 4)?),
            5 => Self::Signed(i64::decode_context(reader, 5)?),
            6 => Self::BitString(BitString::decode_context(reader, 6)?),
            7 => {
                <()>::decode_context(reader, 7)?;
                Self::Null
            }
            _ => Self::TimeChange(f32::decode_context(reader, 9)?),
        })
    }
}

/// One entry of a Trend Log's log-buffer.
#[derive(Debug, Clone, PartialEq)]
pub struct LogRecord {
    /// [0] when the record was taken (device local time).
    pub timestamp: DateTime,
    /// [1] what was logged.
    pub datum: LogDatum,
    /// [2] the logged object's status-flags, when known.
    pub status_flags: Option<BitString>,
}

impl LogRecord {
    /// Appends the sequence.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        encode_opening(0, buf);
        self.timestamp.encode(buf);
        encode_closing(0, buf);
        encode_opening(1, buf);
        self.datum.encode(buf);
        encode_closing(1, buf);
        if let Some(flags) = &self.status_flags {
            flags.encode_context(2, buf);
        }
    }

    /// Decodes the sequence.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        expect_opening(reader, 0)?;
        let timestamp = DateTime::decode(reader)?;
        expect_closing(reader, 0)?;
        expect_opening(reader, 1)?;
        let datum = LogDatum::decode(reader)?;
        expect_closing(reader, 1)?;
        let status_flags = super::context::decode_optional_context(reader, 2)?;
        Ok(Self {
            timestamp,
            datum,
            status_flags,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::{ApplicationValue, Date, Time};

    #[test]
    fn every_datum_round_trips() {
        let timestamp = DateTime {
            date: Date::new(2025, 6, 1, 7),
            time: Time::new(12, 0, 0, 0),
        };
        for datum in [
            LogDatum::LogStatus(BitString::from_bits(&[false, true, false])),
            LogDatum::Boolean(true),
            LogDatum::Real(21.5),
            LogDatum::Enumerated(3),
            LogDatum::Unsigned(70_000),
            LogDatum::Signed(-5),
            LogDatum::BitString(BitString::from_bits(&[true, false])),
            LogDatum::Null,
            LogDatum::Failure(ErrorClass::Property, ErrorCode::UnknownProperty),
            LogDatum::TimeChange(-3600.0),
            LogDatum::Any(vec![Element::Application(ApplicationValue::Date(
                Date::new(2025, 1, 1, 3),
            ))]),
        ] {
            let record = LogRecord {
                timestamp,
                datum,
                status_flags: Some(BitString::from_bits(&[false; 4])),
            };
            let mut buf = Vec::new();
            record.encode(&mut buf);
            let mut reader = Reader::new(&buf);
            assert_eq!(LogRecord::decode(&mut reader).unwrap(), record);
            assert!(reader.is_empty());
        }
    }

    #[test]
    fn real_record_bytes() {
        let record = LogRecord {
            timestamp: DateTime {
                date: Date::new(2025, 6, 1, 7),
                time: Time::new(12, 0, 0, 0),
            },
            datum: LogDatum::Real(1.0),
            status_flags: None,
        };
        let mut buf = Vec::new();
        record.encode(&mut buf);
        assert_eq!(
            buf,
            [
                0x0E, 0xA4, 125, 6, 1, 7, 0xB4, 12, 0, 0, 0, 0x0F, // [0] timestamp
                0x1E, 0x2C, 0x3F, 0x80, 0x00, 0x00, 0x1F, // [1] { [2] 1.0 }
            ]
        );
    }
}
