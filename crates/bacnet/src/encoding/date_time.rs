//! Clause 20.2.12 Date, 20.2.13 Time and the constructed `BACnetDateTime`, with the
//! standard's "unspecified" (255) and pattern values (odd/even months, last day...).

use super::error::{DecodeError, DecodeErrorKind};
use super::primitive::{ApplicationTag, PrimitiveValue};
use super::reader::Reader;

/// Octet value meaning "unspecified" (any) in every Date and Time field.
pub const UNSPECIFIED: u8 = 255;
/// Month value for odd months.
pub const MONTH_ODD: u8 = 13;
/// Month value for even months.
pub const MONTH_EVEN: u8 = 14;
/// Day value for the last day of the month.
pub const DAY_LAST: u8 = 32;
/// Day value for odd days of the month.
pub const DAY_ODD: u8 = 33;
/// Day value for even days of the month.
pub const DAY_EVEN: u8 = 34;

/// A BACnet Date: four octets, each possibly [`UNSPECIFIED`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Date {
    /// Year minus 1900 (0..=254), or 255.
    pub year_since_1900: u8,
    /// 1..=12, [`MONTH_ODD`], [`MONTH_EVEN`] or 255.
    pub month: u8,
    /// 1..=31, [`DAY_LAST`], [`DAY_ODD`], [`DAY_EVEN`] or 255.
    pub day: u8,
    /// 1 (Monday) ..= 7 (Sunday) or 255.
    pub weekday: u8,
}

impl Date {
    /// A date from a calendar year (1900..=2154, anything else is unspecified).
    pub fn new(year: u16, month: u8, day: u8, weekday: u8) -> Self {
        let year_since_1900 = year
            .checked_sub(1900)
            .and_then(|y| u8::try_from(y).ok())
            .filter(|&y| y != UNSPECIFIED)
            .unwrap_or(UNSPECIFIED);
        Self {
            year_since_1900,
            month,
            day,
            weekday,
        }
    }

    /// Every field unspecified (matches any date).
    pub const ANY: Self = Self {
        year_since_1900: UNSPECIFIED,
        month: UNSPECIFIED,
        day: UNSPECIFIED,
        weekday: UNSPECIFIED,
    };

    /// The calendar year, or `None` when unspecified.
    pub fn year(&self) -> Option<u16> {
        (self.year_since_1900 != UNSPECIFIED).then(|| 1900 + u16::from(self.year_since_1900))
    }

    /// Checks each field against its allowed values.
    pub fn validate(&self) -> Result<(), &'static str> {
        if !matches!(self.month, 1..=14 | UNSPECIFIED) {
            return Err("date month out of range");
        }
        if !matches!(self.day, 1..=34 | UNSPECIFIED) {
            return Err("date day out of range");
        }
        if !matches!(self.weekday, 1..=7 | UNSPECIFIED) {
            return Err("date day of week out of range");
        }
        Ok(())
    }
}

impl PrimitiveValue for Date {
    const TAG: ApplicationTag = ApplicationTag::Date;
    fn content_len(&self) -> usize {
        4
    }
    fn encode_content(&self, buf: &mut Vec<u8>) {
        buf.extend_from_slice(&[self.year_since_1900, self.month, self.day, self.weekday]);
    }
    fn decode_content(content: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let start = content.position();
        if content.remaining() != 4 {
            return Err(content.error(DecodeErrorKind::InvalidLength {
                length: content.remaining() as u32,
            }));
        }
        let [year_since_1900, month, day, weekday] = content.read_array()?;
        let date = Self {
            year_since_1900,
            month,
            day,
            weekday,
        };
        date.validate()
            .map_err(|what| DecodeError::new(start, DecodeErrorKind::InvalidValue(what)))?;
        Ok(date)
    }
}

/// A BACnet Time: four octets, each possibly [`UNSPECIFIED`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Time {
    /// 0..=23 or 255.
    pub hour: u8,
    /// 0..=59 or 255.
    pub minute: u8,
    /// 0..=59 or 255.
    pub second: u8,
    /// 0..=99 or 255.
    pub hundredths: u8,
}

impl Time {
    /// A time of day.
    pub const fn new(hour: u8, minute: u8, second: u8, hundredths: u8) -> Self {
        Self {
            hour,
            minute,
            second,
            hundredths,
        }
    }

    /// Every field unspecified (matches any time).
    pub const ANY: Self = Self::new(UNSPECIFIED, UNSPECIFIED, UNSPECIFIED, UNSPECIFIED);

    /// Checks each field against its allowed values.
    pub fn validate(&self) -> Result<(), &'static str> {
        if !matches!(self.hour, 0..=23 | UNSPECIFIED) {
            return Err("time hour out of range");
        }
        if !matches!(self.minute, 0..=59 | UNSPECIFIED) {
            return Err("time minute out of range");
        }
        if !matches!(self.second, 0..=59 | UNSPECIFIED) {
            return Err("time second out of range");
        }
        if !matches!(self.hundredths, 0..=99 | UNSPECIFIED) {
            return Err("time hundredths out of range");
        }
        Ok(())
    }
}

impl PrimitiveValue for Time {
    const TAG: ApplicationTag = ApplicationTag::Time;
    fn content_len(&self) -> usize {
        4
    }
    fn encode_content(&self, buf: &mut Vec<u8>) {
        buf.extend_from_slice(&[self.hour, self.minute, self.second, self.hundredths]);
    }
    fn decode_content(content: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let start = content.position();
        if content.remaining() != 4 {
            return Err(content.error(DecodeErrorKind::InvalidLength {
                length: content.remaining() as u32,
            }));
        }
        let [hour, minute, second, hundredths] = content.read_array()?;
        let time = Self::new(hour, minute, second, hundredths);
        time.validate()
            .map_err(|what| DecodeError::new(start, DecodeErrorKind::InvalidValue(what)))?;
        Ok(time)
    }
}

/// `BACnetDateTime ::= SEQUENCE { date Date, time Time }`, both application-tagged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DateTime {
    /// The date part.
    pub date: Date,
    /// The time part.
    pub time: Time,
}

impl DateTime {
    /// Appends the application-tagged date then time.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.date.encode_application(buf);
        self.time.encode_application(buf);
    }

    /// Decodes an application-tagged date followed by a time.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            date: Date::decode_application(reader)?,
            time: Time::decode_application(reader)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_and_unspecified_round_trip() {
        let date = Date {
            year_since_1900: UNSPECIFIED,
            month: MONTH_EVEN,
            day: DAY_LAST,
            weekday: UNSPECIFIED,
        };
        let mut buf = Vec::new();
        date.encode_application(&mut buf);
        assert_eq!(buf, [0xA4, 0xFF, 14, 32, 0xFF]);
        assert_eq!(
            Date::decode_application(&mut Reader::new(&buf)).unwrap(),
            date
        );
        assert_eq!(date.year(), None);
        assert_eq!(Date::new(2024, 1, 1, 1).year(), Some(2024));
        assert_eq!(Date::new(1800, 1, 1, 1).year_since_1900, UNSPECIFIED);
    }

    #[test]
    fn date_time_sequence() {
        let value = DateTime {
            date: Date::new(1991, 1, 24, 4),
            time: Time::new(17, 35, 45, 17),
        };
        let mut buf = Vec::new();
        value.encode(&mut buf);
        assert_eq!(
            buf,
            [0xA4, 0x5B, 0x01, 0x18, 0x04, 0xB4, 0x11, 0x23, 0x2D, 0x11]
        );
        assert_eq!(DateTime::decode(&mut Reader::new(&buf)).unwrap(), value);
    }

    #[test]
    fn rejects_out_of_range_fields() {
        let err = Date::decode_application(&mut Reader::new(&[0xA4, 100, 15, 1, 1])).unwrap_err();
        assert_eq!(
            err,
            DecodeError::new(1, DecodeErrorKind::InvalidValue("date month out of range"))
        );
        let err = Time::decode_application(&mut Reader::new(&[0xB4, 24, 0, 0, 0])).unwrap_err();
        assert_eq!(
            err.kind,
            DecodeErrorKind::InvalidValue("time hour out of range")
        );
        let err = Time::decode_application(&mut Reader::new(&[0xB4, 1, 0, 0, 100])).unwrap_err();
        assert_eq!(
            err.kind,
            DecodeErrorKind::InvalidValue("time hundredths out of range")
        );
        let err = Time::decode_application(&mut Reader::new(&[0xB3, 1, 0, 0])).unwrap_err();
        assert_eq!(err.kind, DecodeErrorKind::InvalidLength { length: 3 });
    }
}
