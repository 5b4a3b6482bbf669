//! Calendar data (Clause 21): `BACnetDateRange`, `BACnetWeekNDay` and the
//! `BACnetCalendarEntry` choice, with the date arithmetic that matches them against a day.
//!
//! Matching takes a fully specified day (the device's local date). Date patterns follow
//! Clause 20.2.12: 255 in a field matches anything, month 13/14 odd/even months, day 32 the
//! last day of the month, 33/34 odd/even days. A date range's end that is not a specific
//! year, month and day (any unspecified or pattern field) leaves that side of the range open.

use super::context::{
    encode_closing, encode_opening, expect_closing, expect_opening, next_is_context,
    next_is_opening,
};
use super::date_time::{DAY_EVEN, DAY_LAST, DAY_ODD, Date, MONTH_EVEN, MONTH_ODD, UNSPECIFIED};
use super::error::{DecodeError, DecodeErrorKind, TagSpec};
use super::primitive::PrimitiveValue;
use super::reader::Reader;
use super::tag::Tag;

/// True for a leap year of the Gregorian calendar.
pub const fn is_leap_year(year: u16) -> bool {
    buildwire_civil::is_leap_year(year as i64)
}

/// Days in `month` (1..=12) of `year`; 0 for a month out of range.
pub const fn days_in_month(year: u16, month: u8) -> u8 {
    // At most 31: the narrowing keeps the value.
    buildwire_civil::days_in_month(year as i64, month as u32) as u8
}

/// Days since 1970-01-01 of a proleptic Gregorian date (negative before it).
pub const fn days_from_civil(year: i64, month: u8, day: u8) -> i64 {
    buildwire_civil::days_from_civil(year, month as u32, day as u32)
}

/// The calendar date (year, month, day) of a day count since 1970-01-01.
pub const fn civil_from_days(days: i64) -> (i64, u8, u8) {
    let (year, month, day) = buildwire_civil::civil_from_days(days);
    // Month 1..=12 and day 1..=31: the narrowing keeps the values.
    (year, month as u8, day as u8)
}

/// ISO weekday (Monday 1 .. Sunday 7) of a day count since 1970-01-01 (a Thursday).
pub const fn weekday_from_days(days: i64) -> u8 {
    buildwire_civil::iso_weekday(days) as u8
}

/// Hundredths of a second since 1970-01-01T00:00 of a date and time that names one
/// moment (specific year, month, day, hour, minute; unspecified seconds and hundredths
/// count as 0), else `None`.
pub fn date_time_hundredths(when: &super::date_time::DateTime) -> Option<i64> {
    let (year, month, day) = specific_day(&when.date)?;
    let time = &when.time;
    if time.hour > 23 || time.minute > 59 {
        return None;
    }
    let second = if time.second > 59 { 0 } else { time.second };
    let hundredths = if time.hundredths > 99 {
        0
    } else {
        time.hundredths
    };
    let days = days_from_civil(i64::from(year), month, day);
    let seconds = days * 86_400
        + i64::from(time.hour) * 3600
        + i64::from(time.minute) * 60
        + i64::from(second);
    Some(seconds * 100 + i64::from(hundredths))
}

/// The date and time (weekday computed) of a count of hundredths since 1970-01-01; years
/// a BACnet Date cannot hold come out unspecified.
pub fn date_time_from_hundredths(hundredths: i64) -> super::date_time::DateTime {
    let seconds = hundredths.div_euclid(100);
    let days = seconds.div_euclid(86_400);
    let in_day = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    let date = Date::new(
        u16::try_from(year).unwrap_or(0),
        month,
        day,
        weekday_from_days(days),
    );
    let time = super::date_time::Time::new(
        (in_day / 3600) as u8,
        (in_day / 60 % 60) as u8,
        (in_day % 60) as u8,
        hundredths.rem_euclid(100) as u8,
    );
    super::date_time::DateTime { date, time }
}

/// The specific year, month and day of `date`, when it names one calendar day.
fn specific_day(date: &Date) -> Option<(u16, u8, u8)> {
    let year = date.year()?;
    let month = date.month;
    let day = date.day;
    ((1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month))
        .then_some((year, month, day))
}

impl Date {
    /// True when this date (possibly a pattern) matches `day`, a specific date. A `day`
    /// that is not a specific date matches nothing.
    pub fn matches(&self, day: &Date) -> bool {
        let Some((year, month, dom)) = specific_day(day) else {
            return false;
        };
        let year_ok = self.year_since_1900 == UNSPECIFIED || self.year() == Some(year);
        let month_ok = match self.month {
            UNSPECIFIED => true,
            MONTH_ODD => month % 2 == 1,
            MONTH_EVEN => month % 2 == 0,
            m => m == month,
        };
        let day_ok = match self.day {
            UNSPECIFIED => true,
            DAY_LAST => dom == days_in_month(year, month),
            DAY_ODD => dom % 2 == 1,
            DAY_EVEN => dom % 2 == 0,
            d => d == dom,
        };
        let weekday_ok = self.weekday == UNSPECIFIED || self.weekday == weekday_of(day);
        year_ok && month_ok && day_ok && weekday_ok
    }
}

/// The weekday of a specific date (computed, not trusted from the date's own field).
fn weekday_of(day: &Date) -> u8 {
    match specific_day(day) {
        Some((year, month, dom)) => weekday_from_days(days_from_civil(i64::from(year), month, dom)),
        None => day.weekday,
    }
}

/// `BACnetDateRange ::= SEQUENCE { start-date Date, end-date Date }`, both
/// application-tagged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DateRange {
    /// First day of the range (an unspecified date leaves the range open before).
    pub start: Date,
    /// Last day of the range, inclusive (an unspecified date leaves it open after).
    pub end: Date,
}

impl DateRange {
    /// The range of every date.
    pub const ALWAYS: Self = Self {
        start: Date::ANY,
        end: Date::ANY,
    };

    /// Appends the two application-tagged dates.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.start.encode_application(buf);
        self.end.encode_application(buf);
    }

    /// Decodes the two application-tagged dates.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            start: Date::decode_application(reader)?,
            end: Date::decode_application(reader)?,
        })
    }

    /// True when the specific date `day` lies within the range (ends included).
    pub fn contains(&self, day: &Date) -> bool {
        let Some(today) = specific_day(day) else {
            return false;
        };
        let after_start = specific_day(&self.start).is_none_or(|start| start <= today);
        let before_end = specific_day(&self.end).is_none_or(|end| today <= end);
        after_start && before_end
    }
}

/// `BACnetWeekNDay`: an OCTET STRING of three octets (month, week of month, day of week),
/// each 255 for "any".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WeekNDay {
    /// 1..=12, 13 odd months, 14 even months, 255 any.
    pub month: u8,
    /// 1: days 1-7, 2: 8-14, 3: 15-21, 4: 22-28, 5: 29-31, 6: the last 7 days, 7: the 7 days
    /// before the last 7, 8 and 9 the weeks before those; 255 any.
    pub week_of_month: u8,
    /// 1 (Monday) ..= 7 (Sunday), 255 any.
    pub day_of_week: u8,
}

impl WeekNDay {
    /// Checks each octet against its allowed values.
    pub fn validate(&self) -> Result<(), &'static str> {
        if !matches!(self.month, 1..=14 | UNSPECIFIED) {
            return Err("week-n-day month out of range");
        }
        if !matches!(self.week_of_month, 1..=9 | UNSPECIFIED) {
            return Err("week-n-day week of month out of range");
        }
        if !matches!(self.day_of_week, 1..=7 | UNSPECIFIED) {
            return Err("week-n-day day of week out of range");
        }
        Ok(())
    }

    /// The three content octets.
    pub const fn octets(&self) -> [u8; 3] {
        [self.month, self.week_of_month, self.day_of_week]
    }

    /// True when the specific date `day` matches.
    pub fn matches(&self, day: &Date) -> bool {
        let Some((year, month, dom)) = specific_day(day) else {
            return false;
        };
        let month_ok = match self.month {
            UNSPECIFIED => true,
            MONTH_ODD => month % 2 == 1,
            MONTH_EVEN => month % 2 == 0,
            m => m == month,
        };
        let last = days_in_month(year, month);
        // Days counted back from the end of the month: 0 for the last day.
        let from_end = last - dom;
        let week_ok = match self.week_of_month {
            UNSPECIFIED => true,
            week @ 1..=5 => (dom - 1) / 7 + 1 == week,
            week @ 6..=9 => from_end / 7 == week - 6,
            _ => false,
        };
        let weekday_ok = self.day_of_week == UNSPECIFIED || self.day_of_week == weekday_of(day);
        month_ok && week_ok && weekday_ok
    }
}

/// `BACnetCalendarEntry ::= CHOICE { date [0] Date, date-range [1] BACnetDateRange,
/// weekNDay [2] BACnetWeekNDay }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CalendarEntry {
    /// [0] one date or date pattern.
    Date(Date),
    /// [1] a range of dates.
    DateRange(DateRange),
    /// [2] a month / week / weekday pattern.
    WeekNDay(WeekNDay),
}

impl CalendarEntry {
    /// Appends the choice.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        match self {
            Self::Date(date) => date.encode_context(0, buf),
            Self::DateRange(range) => {
                encode_opening(1, buf);
                range.encode(buf);
                encode_closing(1, buf);
            }
            Self::WeekNDay(pattern) => pattern.octets().to_vec().encode_context(2, buf),
        }
    }

    /// Decodes the choice.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        if next_is_context(reader, 0) {
            return Ok(Self::Date(Date::decode_context(reader, 0)?));
        }
        if next_is_opening(reader, 1) {
            expect_opening(reader, 1)?;
            let range = DateRange::decode(reader)?;
            expect_closing(reader, 1)?;
            return Ok(Self::DateRange(range));
        }
        if next_is_context(reader, 2) {
            let start = reader.position();
            let octets = Vec::<u8>::decode_context(reader, 2)?;
            let [month, week_of_month, day_of_week] = octets[..] else {
                return Err(DecodeError::new(
                    start,
                    DecodeErrorKind::InvalidLength {
                        length: u32::try_from(octets.len()).unwrap_or(u32::MAX),
                    },
                ));
            };
            let pattern = WeekNDay {
                month,
                week_of_month,
                day_of_week,
            };
            pattern
                .validate()
                .map_err(|what| DecodeError::new(start, DecodeErrorKind::InvalidValue(what)))?;
            return Ok(Self::WeekNDay(pattern));
        }
        Err(wrong_choice(reader, TagSpec::Context(0)))
    }

    /// True when the specific date `day` matches this entry.
    pub fn matches(&self, day: &Date) -> bool {
        match self {
            Self::Date(date) => date.matches(day),
            Self::DateRange(range) => range.contains(day),
            Self::WeekNDay(pattern) => pattern.matches(day),
        }
    }
}

/// The error for a CHOICE whose tag is none of the alternatives (or missing).
pub(crate) fn wrong_choice(reader: &Reader<'_>, expected: TagSpec) -> DecodeError {
    match Tag::peek(reader) {
        Ok(tag) => reader.error(DecodeErrorKind::UnexpectedTag {
            expected,
            found: tag.spec(),
        }),
        Err(error) => error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(year: u16, month: u8, day: u8) -> Date {
        let weekday = weekday_from_days(days_from_civil(i64::from(year), month, day));
        Date::new(year, month, day, weekday)
    }

    #[test]
    fn civil_day_counts() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(civil_from_days(11_017), (2000, 3, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        // 2024-02-29 was a Thursday.
        assert_eq!(weekday_from_days(days_from_civil(2024, 2, 29)), 4);
        for days in [-800_000, -1, 0, 59, 60, 10_957, 20_000, 80_000] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

    #[test]
    fn date_time_hundredths_round_trip() {
        use crate::encoding::{DateTime, Time};
        let when = DateTime {
            date: date(2026, 11, 22),
            time: Time::new(7, 58, 9, 47),
        };
        let h = date_time_hundredths(&when).unwrap();
        assert_eq!(date_time_from_hundredths(h), when);
        assert_eq!(
            date_time_from_hundredths(h + 100 * 86_400).date,
            date(2026, 11, 23)
        );
        let any = DateTime {
            date: Date::ANY,
            time: Time::new(0, 0, 0, 0),
        };
        assert_eq!(date_time_hundredths(&any), None);
    }

    #[test]
    fn date_patterns() {
        let leap_day = date(2024, 2, 29);
        assert!(Date::ANY.matches(&leap_day));
        assert!(Date::new(2024, MONTH_EVEN, DAY_LAST, UNSPECIFIED).matches(&leap_day));
        assert!(!Date::new(2024, MONTH_ODD, UNSPECIFIED, UNSPECIFIED).matches(&leap_day));
        assert!(Date::new(2024, 2, DAY_ODD, 4).matches(&leap_day));
        assert!(!Date::new(2024, 2, DAY_EVEN, UNSPECIFIED).matches(&leap_day));
        // A wrong weekday in the pattern does not match.
        assert!(!Date::new(2024, 2, 29, 5).matches(&leap_day));
        assert!(!Date::new(2023, 2, DAY_LAST, UNSPECIFIED).matches(&date(2023, 2, 27)));
        // A pattern is not a day to match against.
        assert!(!Date::ANY.matches(&Date::ANY));
    }

    #[test]
    fn week_n_day_patterns() {
        // Thanksgiving: the fourth Thursday of November (2025-11-27).
        let thanksgiving = WeekNDay {
            month: 11,
            week_of_month: 4,
            day_of_week: 4,
        };
        assert!(thanksgiving.matches(&date(2025, 11, 27)));
        assert!(!thanksgiving.matches(&date(2025, 11, 20)));
        // Memorial Day: the last Monday of May (2025-05-26).
        let memorial = WeekNDay {
            month: 5,
            week_of_month: 6,
            day_of_week: 1,
        };
        assert!(memorial.matches(&date(2025, 5, 26)));
        assert!(!memorial.matches(&date(2025, 5, 19)));
        // Week 7: the seven days before the last seven (May 2025: 18..=24).
        let second_last = WeekNDay {
            month: UNSPECIFIED,
            week_of_month: 7,
            day_of_week: UNSPECIFIED,
        };
        assert!(second_last.matches(&date(2025, 5, 18)));
        assert!(second_last.matches(&date(2025, 5, 24)));
        assert!(!second_last.matches(&date(2025, 5, 25)));
    }

    #[test]
    fn date_ranges_and_entry_round_trip() {
        let range = DateRange {
            start: date(2025, 12, 24),
            end: date(2026, 1, 2),
        };
        assert!(range.contains(&date(2025, 12, 31)));
        assert!(range.contains(&date(2026, 1, 2)));
        assert!(!range.contains(&date(2026, 1, 3)));
        assert!(DateRange::ALWAYS.contains(&date(1999, 1, 1)));
        let open_end = DateRange {
            start: date(2025, 1, 1),
            end: Date::ANY,
        };
        assert!(open_end.contains(&date(2099, 1, 1)));
        assert!(!open_end.contains(&date(2024, 12, 31)));

        for entry in [
            CalendarEntry::Date(Date::new(2025, 12, 25, UNSPECIFIED)),
            CalendarEntry::DateRange(range),
            CalendarEntry::WeekNDay(WeekNDay {
                month: 11,
                week_of_month: 4,
                day_of_week: 4,
            }),
        ] {
            let mut buf = Vec::new();
            entry.encode(&mut buf);
            let mut reader = Reader::new(&buf);
            assert_eq!(CalendarEntry::decode(&mut reader).unwrap(), entry);
            assert!(reader.is_empty());
        }
        let mut buf = Vec::new();
        CalendarEntry::WeekNDay(WeekNDay {
            month: 11,
            week_of_month: 4,
            day_of_week: 4,
        })
        .encode(&mut buf);
        assert_eq!(buf, [0x2B, 11, 4, 4]);
    }

    #[test]
    fn bad_week_n_day_is_rejected() {
        let err = CalendarEntry::decode(&mut Reader::new(&[0x2B, 11, 10, 4])).unwrap_err();
        assert_eq!(
            err,
            DecodeError::new(
                0,
                DecodeErrorKind::InvalidValue("week-n-day week of month out of range")
            )
        );
        let err = CalendarEntry::decode(&mut Reader::new(&[0x2A, 11, 4])).unwrap_err();
        assert_eq!(err.kind, DecodeErrorKind::InvalidLength { length: 2 });
        let err = CalendarEntry::decode(&mut Reader::new(&[0x39, 0])).unwrap_err();
        assert!(matches!(err.kind, DecodeErrorKind::UnexpectedTag { .. }));
    }
}
