//! Schedule data (Clause 21): `BACnetTimeValue`, `BACnetDailySchedule` and
//! `BACnetSpecialEvent`, and the rule that gives the value of a list of time-values at a
//! time of day.

use super::calendar::{CalendarEntry, wrong_choice};
use super::context::{
    encode_closing, encode_opening, expect_closing, expect_opening, next_is_closing,
    next_is_context, next_is_opening,
};
use super::date_time::Time;
use super::error::{DecodeError, DecodeErrorKind, TagSpec};
use super::object_identifier::ObjectIdentifier;
use super::primitive::{ApplicationValue, PrimitiveValue};
use super::reader::Reader;

/// Most time-values accepted in one daily schedule or special event.
pub const MAX_TIME_VALUES: usize = 1024;

/// `BACnetTimeValue ::= SEQUENCE { time Time, value ABSTRACT-SYNTAX.&Type }`: the value
/// is an application-tagged primitive (NULL relinquishes).
#[derive(Debug, Clone, PartialEq)]
pub struct TimeValue {
    /// When the value takes effect (a specific time of day).
    pub time: Time,
    /// The value from then on.
    pub value: ApplicationValue,
}

impl TimeValue {
    /// Appends the application-tagged time and value.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.time.encode_application(buf);
        self.value.encode(buf);
    }

    /// Decodes the application-tagged time and value.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            time: Time::decode_application(reader)?,
            value: ApplicationValue::decode(reader)?,
        })
    }
}

/// Orders times of day with unspecified fields counting as 0 (a time given as 08:00:255.255
/// takes effect at 08:00:00.00).
fn time_key(time: &Time) -> (u8, u8, u8, u8) {
    let field = |v: u8| {
        if v == super::date_time::UNSPECIFIED {
            0
        } else {
            v
        }
    };
    (
        field(time.hour),
        field(time.minute),
        field(time.second),
        field(time.hundredths),
    )
}

/// The value a list of time-values gives at `now`: the value of the latest entry at or
/// before `now` (entries need not be sorted), or `None` before the first entry of the day.
/// A NULL result means "relinquish" to the next source.
pub fn value_at<'a>(entries: &'a [TimeValue], now: &Time) -> Option<&'a ApplicationValue> {
    let now = time_key(now);
    entries
        .iter()
        .filter(|entry| time_key(&entry.time) <= now)
        // The last of equal times wins, as if the entries were applied in order.
        .max_by(|a, b| time_key(&a.time).cmp(&time_key(&b.time)))
        .map(|entry| &entry.value)
}

fn decode_time_values(reader: &mut Reader<'_>, tag: u8) -> Result<Vec<TimeValue>, DecodeError> {
    expect_opening(reader, tag)?;
    let mut values = Vec::new();
    while !next_is_closing(reader, tag) {
        if reader.is_empty() {
            return expect_closing(reader, tag).map(|()| values);
        }
        if values.len() >= MAX_TIME_VALUES {
            return Err(reader.error(DecodeErrorKind::TooManyElements {
                limit: MAX_TIME_VALUES,
            }));
        }
        values.push(TimeValue::decode(reader)?);
    }
    expect_closing(reader, tag)?;
    Ok(values)
}

fn encode_time_values(values: &[TimeValue], tag: u8, buf: &mut Vec<u8>) {
    encode_opening(tag, buf);
    for value in values {
        value.encode(buf);
    }
    encode_closing(tag, buf);
}

/// `BACnetDailySchedule ::= SEQUENCE { day-schedule [0] SEQUENCE OF BACnetTimeValue }`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DailySchedule {
    /// The day's time-values.
    pub day_schedule: Vec<TimeValue>,
}

impl DailySchedule {
    /// Appends `[0] { time-value* }`.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        encode_time_values(&self.day_schedule, 0, buf);
    }

    /// Decodes `[0] { time-value* }`.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            day_schedule: decode_time_values(reader, 0)?,
        })
    }
}

/// When a special event applies: `CHOICE { calendar-entry [0] BACnetCalendarEntry,
/// calendar-reference [1] BACnetObjectIdentifier }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpecialEventPeriod {
    /// [0] a date, date range or week-n-day given inline.
    CalendarEntry(CalendarEntry),
    /// [1] a Calendar object: the event applies while its present-value is TRUE.
    CalendarReference(ObjectIdentifier),
}

/// `BACnetSpecialEvent ::= SEQUENCE { period CHOICE {...}, list-of-time-values [2]
/// SEQUENCE OF BACnetTimeValue, event-priority [3] Unsigned (1..16) }`.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecialEvent {
    /// When the event applies.
    pub period: SpecialEventPeriod,
    /// The event's time-values for the days it applies.
    pub time_values: Vec<TimeValue>,
    /// 1 (highest) ..= 16.
    pub event_priority: u8,
}

impl SpecialEvent {
    /// Appends the sequence.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        match &self.period {
            SpecialEventPeriod::CalendarEntry(entry) => {
                encode_opening(0, buf);
                entry.encode(buf);
                encode_closing(0, buf);
            }
            SpecialEventPeriod::CalendarReference(calendar) => calendar.encode_context(1, buf),
        }
        encode_time_values(&self.time_values, 2, buf);
        self.event_priority.encode_context(3, buf);
    }

    /// Decodes the sequence; an event priority outside 1..=16 is an `InvalidValue`.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let period = if next_is_opening(reader, 0) {
            expect_opening(reader, 0)?;
            let entry = CalendarEntry::decode(reader)?;
            expect_closing(reader, 0)?;
            SpecialEventPeriod::CalendarEntry(entry)
        } else if next_is_context(reader, 1) {
            SpecialEventPeriod::CalendarReference(ObjectIdentifier::decode_context(reader, 1)?)
        } else {
            return Err(wrong_choice(reader, TagSpec::Opening(0)));
        };
        let time_values = decode_time_values(reader, 2)?;
        let start = reader.position();
        let event_priority = u8::decode_context(reader, 3)?;
        if !(1..=16).contains(&event_priority) {
            return Err(DecodeError::new(
                start,
                DecodeErrorKind::InvalidValue("event priority must be 1..=16"),
            ));
        }
        Ok(Self {
            period,
            time_values,
            event_priority,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::Date;
    use crate::enums::ObjectType;

    fn tv(hour: u8, minute: u8, value: ApplicationValue) -> TimeValue {
        TimeValue {
            time: Time::new(hour, minute, 0, 0),
            value,
        }
    }

    #[test]
    fn value_at_takes_the_latest_entry_not_after_now() {
        let day = vec![
            tv(17, 0, ApplicationValue::Real(16.0)),
            tv(8, 0, ApplicationValue::Real(21.0)),
            tv(12, 0, ApplicationValue::Null),
        ];
        assert_eq!(value_at(&day, &Time::new(7, 59, 59, 99)), None);
        assert_eq!(
            value_at(&day, &Time::new(8, 0, 0, 0)),
            Some(&ApplicationValue::Real(21.0))
        );
        assert_eq!(
            value_at(&day, &Time::new(12, 30, 0, 0)),
            Some(&ApplicationValue::Null)
        );
        assert_eq!(
            value_at(&day, &Time::new(23, 59, 0, 0)),
            Some(&ApplicationValue::Real(16.0))
        );
    }

    #[test]
    fn daily_schedule_bytes() {
        let daily = DailySchedule {
            day_schedule: vec![tv(8, 0, ApplicationValue::Enumerated(1))],
        };
        let mut buf = Vec::new();
        daily.encode(&mut buf);
        assert_eq!(buf, [0x0E, 0xB4, 8, 0, 0, 0, 0x91, 0x01, 0x0F]);
        assert_eq!(
            DailySchedule::decode(&mut Reader::new(&buf)).unwrap(),
            daily
        );
    }

    #[test]
    fn special_event_round_trips_and_checks_priority() {
        for period in [
            SpecialEventPeriod::CalendarEntry(CalendarEntry::Date(Date::new(2025, 12, 25, 4))),
            SpecialEventPeriod::CalendarReference(ObjectIdentifier::new(ObjectType::Calendar, 1)),
        ] {
            let event = SpecialEvent {
                period,
                time_values: vec![tv(0, 0, ApplicationValue::Real(12.0))],
                event_priority: 3,
            };
            let mut buf = Vec::new();
            event.encode(&mut buf);
            let mut reader = Reader::new(&buf);
            assert_eq!(SpecialEvent::decode(&mut reader).unwrap(), event);
            assert!(reader.is_empty());
        }
        let event = SpecialEvent {
            period: SpecialEventPeriod::CalendarReference(ObjectIdentifier::new(
                ObjectType::Calendar,
                1,
            )),
            time_values: Vec::new(),
            event_priority: 17,
        };
        let mut buf = Vec::new();
        event.encode(&mut buf);
        let err = SpecialEvent::decode(&mut Reader::new(&buf)).unwrap_err();
        assert_eq!(
            err.kind,
            DecodeErrorKind::InvalidValue("event priority must be 1..=16")
        );
    }
}
