//! Calendar [`Date`], [`Time`] of day and [`DateTime`] with UTC offset and
//! Haystack timezone name. Small validated structs; no time zone database.

use std::fmt;

/// Why a date or time could not be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TemporalError {
    /// Month outside 1..=12 or day outside the month.
    #[error("invalid date {year:04}-{month:02}-{day:02}")]
    InvalidDate {
        /// Year.
        year: i32,
        /// Month.
        month: u8,
        /// Day.
        day: u8,
    },
    /// Hour, minute, second or nanosecond out of range.
    #[error("invalid time of day")]
    InvalidTime,
    /// UTC offset beyond ±18 hours or not whole minutes.
    #[error("invalid UTC offset {0} s")]
    InvalidOffset(i32),
}

/// A calendar date (proleptic Gregorian), years 0..=9999.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    year: i32,
    month: u8,
    day: u8,
}

/// Number of days in `month` of `year` (0 for a month out of range).
fn days_in_month(year: i32, month: u8) -> u8 {
    // At most 31: the narrowing keeps the value.
    buildwire_civil::days_in_month(i64::from(year), u32::from(month)) as u8
}

impl Date {
    /// Builds a date, checking month and day (and year 0..=9999, the four-digit range).
    pub fn new(year: i32, month: u8, day: u8) -> Result<Self, TemporalError> {
        if !(0..=9999).contains(&year) || day == 0 || day > days_in_month(year, month) {
            return Err(TemporalError::InvalidDate { year, month, day });
        }
        Ok(Date { year, month, day })
    }
    /// The year.
    pub fn year(&self) -> i32 {
        self.year
    }
    /// The month, 1..=12.
    pub fn month(&self) -> u8 {
        self.month
    }
    /// The day of month, 1..=31.
    pub fn day(&self) -> u8 {
        self.day
    }
}

impl fmt::Display for Date {
    /// ISO 8601 `YYYY-MM-DD`, as Zinc, Trio and JSON write it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

/// A time of day with nanosecond precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time {
    hour: u8,
    minute: u8,
    second: u8,
    nanos: u32,
}

impl Time {
    /// Builds a time, checking ranges (no leap seconds).
    pub fn new(hour: u8, minute: u8, second: u8, nanos: u32) -> Result<Self, TemporalError> {
        if hour > 23 || minute > 59 || second > 59 || nanos > 999_999_999 {
            return Err(TemporalError::InvalidTime);
        }
        Ok(Time {
            hour,
            minute,
            second,
            nanos,
        })
    }
    /// Hour, 0..=23.
    pub fn hour(&self) -> u8 {
        self.hour
    }
    /// Minute, 0..=59.
    pub fn minute(&self) -> u8 {
        self.minute
    }
    /// Second, 0..=59.
    pub fn second(&self) -> u8 {
        self.second
    }
    /// Fraction of the second in nanoseconds.
    pub fn nanos(&self) -> u32 {
        self.nanos
    }
}

impl fmt::Display for Time {
    /// `hh:mm:ss` followed by the shortest exact fraction, e.g. `01:00:09.879`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}:{:02}:{:02}", self.hour, self.minute, self.second)?;
        if self.nanos != 0 {
            let digits = format!("{:09}", self.nanos);
            write!(f, ".{}", digits.trim_end_matches('0'))?;
        }
        Ok(())
    }
}

/// A timestamp: local date and time, its offset from UTC and the Haystack timezone name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DateTime {
    /// Local date.
    pub date: Date,
    /// Local time.
    pub time: Time,
    offset_seconds: i32,
    /// Haystack timezone name such as `New_York`, `UTC` or `GMT+5`, when given.
    pub tz: Option<String>,
}

/// Largest accepted UTC offset magnitude: 18 hours.
pub const MAX_UTC_OFFSET_SECONDS: i32 = 18 * 3600;

impl DateTime {
    /// Builds a timestamp; the offset must be whole minutes within ±18 hours
    /// (the encodings write offsets as `±hh:mm`).
    pub fn new(
        date: Date,
        time: Time,
        offset_seconds: i32,
        tz: Option<String>,
    ) -> Result<Self, TemporalError> {
        if offset_seconds.abs() > MAX_UTC_OFFSET_SECONDS || offset_seconds % 60 != 0 {
            return Err(TemporalError::InvalidOffset(offset_seconds));
        }
        Ok(DateTime {
            date,
            time,
            offset_seconds,
            tz,
        })
    }

    /// Offset from UTC in seconds (east positive), e.g. -14400 for `-04:00`.
    pub fn offset_seconds(&self) -> i32 {
        self.offset_seconds
    }

    /// Writes `YYYY-MM-DDThh:mm:ss[.f]` and the offset (`Z` or `±hh:mm`), without the timezone name.
    pub fn write_iso(&self, out: &mut String) {
        use std::fmt::Write;
        let _ = write!(out, "{}T{}", self.date, self.time);
        if self.offset_seconds == 0 {
            out.push('Z');
        } else {
            let sign = if self.offset_seconds < 0 { '-' } else { '+' };
            let abs = self.offset_seconds.unsigned_abs();
            let _ = write!(out, "{sign}{:02}:{:02}", abs / 3600, (abs % 3600) / 60);
        }
    }

    /// Whether `c` may appear in a Haystack timezone name.
    pub fn is_tz_char(c: char) -> bool {
        c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+')
    }

    /// Parses exactly `YYYY-MM-DDThh:mm:ss[.f]` (one to nine fraction digits) and `Z` or
    /// `±hh:mm`, with no timezone name: the value of a Hayson `dateTime`, as encoders
    /// write it. `None` for anything else, valid or not; decoders then use their full
    /// grammar, which gives the same timestamp for every text this accepts.
    pub(crate) fn parse_iso_offset(text: &str) -> Option<DateTime> {
        let b = text.as_bytes();
        let date = Date::parse_iso(b.get(..10)?)?;
        if b.get(10) != Some(&b'T') {
            return None;
        }
        let hms = b.get(11..19)?;
        if hms.get(2) != Some(&b':') || hms.get(5) != Some(&b':') {
            return None;
        }
        let (hour, minute, second) = (
            two_digits(hms.get(0..2)?)?,
            two_digits(hms.get(3..5)?)?,
            two_digits(hms.get(6..8)?)?,
        );
        let mut at = 19;
        let mut nanos = 0u32;
        if b.get(at) == Some(&b'.') {
            let digits = b.get(at + 1..)?;
            let count = digits.iter().take_while(|d| d.is_ascii_digit()).count();
            if count == 0 || count > 9 {
                return None;
            }
            let fraction = digits
                .get(..count)?
                .iter()
                .fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0'));
            nanos = fraction * 10u32.pow(9 - count as u32);
            at += 1 + count;
        }
        let offset = match b.get(at..)? {
            [b'Z'] => 0,
            [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
                let hours = i32::from(two_digits(&[*h1, *h2])?);
                let minutes = i32::from(two_digits(&[*m1, *m2])?);
                if minutes > 59 {
                    return None;
                }
                let magnitude = hours * 3600 + minutes * 60;
                if *sign == b'-' { -magnitude } else { magnitude }
            }
            _ => return None,
        };
        let time = Time::new(hour, minute, second, nanos).ok()?;
        DateTime::new(date, time, offset, None).ok()
    }
}

/// The value of two ASCII digits.
#[inline]
fn two_digits(pair: &[u8]) -> Option<u8> {
    match pair {
        [t @ b'0'..=b'9', u @ b'0'..=b'9'] => Some((t - b'0') * 10 + (u - b'0')),
        _ => None,
    }
}

impl Date {
    /// Parses exactly `YYYY-MM-DD` (checked as [`Date::new`] checks); `None` otherwise.
    pub(crate) fn parse_iso(b: &[u8]) -> Option<Date> {
        match b {
            [y1, y2, y3, y4, b'-', m1, m2, b'-', d1, d2] => {
                let year =
                    i32::from(two_digits(&[*y1, *y2])?) * 100 + i32::from(two_digits(&[*y3, *y4])?);
                Date::new(year, two_digits(&[*m1, *m2])?, two_digits(&[*d1, *d2])?).ok()
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_validated() {
        assert!(Date::new(2020, 2, 29).is_ok());
        assert_eq!(
            Date::new(2021, 2, 29),
            Err(TemporalError::InvalidDate {
                year: 2021,
                month: 2,
                day: 29
            })
        );
        assert!(Date::new(2021, 13, 1).is_err());
        assert_eq!(Time::new(24, 0, 0, 0), Err(TemporalError::InvalidTime));
    }

    #[test]
    fn iso_text() -> Result<(), TemporalError> {
        let dt = DateTime::new(
            Date::new(2020, 7, 10)?,
            Time::new(1, 0, 9, 879_000_000)?,
            -4 * 3600,
            Some("New_York".into()),
        )?;
        let mut s = String::new();
        dt.write_iso(&mut s);
        assert_eq!(s, "2020-07-10T01:00:09.879-04:00");
        assert_eq!(
            DateTime::new(dt.date, dt.time, 19 * 3600, None),
            Err(TemporalError::InvalidOffset(19 * 3600))
        );
        assert_eq!(
            DateTime::new(dt.date, dt.time, 30, None),
            Err(TemporalError::InvalidOffset(30))
        );
        Ok(())
    }
}
