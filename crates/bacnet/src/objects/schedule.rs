//! Schedule and Calendar behaviour (Clauses 12.24 and 12.9): a Calendar's present-value
//! from its date-list, and a Schedule's present-value at a moment.
//!
//! Present-value of a Schedule within its effective-period comes from the first source
//! that gives a non-NULL value (Clause 12.24.4):
//!
//! 1. the exception-schedule: among the special events that apply today (an inline
//!    calendar entry that matches, or a referenced Calendar whose present-value is TRUE),
//!    the one with the best (lowest) event priority whose current value is not NULL; the
//!    lower array index wins a tie;
//! 2. today's entry of the weekly-schedule (Monday is element 1);
//! 3. schedule-default (which may itself be NULL).
//!
//! A list of time-values gives, at a time of day, the value of its latest entry at or
//! before that time, and nothing before its first entry; a NULL ends a period and hands
//! control to the next source. Outside the effective-period a Schedule is inactive: its
//! present-value stays as it was and it writes nothing.

use super::datatypes::decode_items;
use super::object::Object;
use super::value::PropertyData;
use crate::encoding::schedule::value_at;
use crate::encoding::{
    ApplicationValue, CalendarEntry, DailySchedule, DateRange, DateTime, ObjectIdentifier,
    SpecialEvent, SpecialEventPeriod,
};
use crate::enums::PropertyIdentifier as P;

fn elements_of(object: &Object, property: P) -> Vec<crate::encoding::Element> {
    match object.stored(property) {
        Some(data) => data.read(None).unwrap_or_default(),
        None => Vec::new(),
    }
}

/// A Calendar's present-value on the specific date of `now`: TRUE when any date-list
/// entry matches.
pub fn calendar_value(calendar: &Object, now: &DateTime) -> bool {
    decode_items(&elements_of(calendar, P::DateList), CalendarEntry::decode)
        .iter()
        .any(|entry| entry.matches(&now.date))
}

/// A Schedule's effective-period (every date when it is missing or malformed).
pub fn effective_period(schedule: &Object) -> DateRange {
    decode_items(
        &elements_of(schedule, P::EffectivePeriod),
        DateRange::decode,
    )
    .first()
    .copied()
    .unwrap_or(DateRange::ALWAYS)
}

/// The weekly-schedule's seven days, Monday first (missing days are empty).
pub fn weekly_schedule(schedule: &Object) -> Vec<DailySchedule> {
    match schedule.stored(P::WeeklySchedule) {
        Some(PropertyData::Array(days)) => days
            .iter()
            .map(|day| {
                decode_items(day, DailySchedule::decode)
                    .into_iter()
                    .next()
                    .unwrap_or_default()
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The exception-schedule's special events, in array order.
pub fn exception_schedule(schedule: &Object) -> Vec<SpecialEvent> {
    match schedule.stored(P::ExceptionSchedule) {
        Some(PropertyData::Array(events)) => events
            .iter()
            .filter_map(|event| decode_items(event, SpecialEvent::decode).into_iter().next())
            .collect(),
        _ => Vec::new(),
    }
}

/// The value a Schedule gives at `now`, or `None` outside its effective-period.
/// `calendar` answers whether a referenced Calendar is TRUE (unknown calendars are not).
pub fn schedule_value(
    schedule: &Object,
    now: &DateTime,
    calendar: impl Fn(ObjectIdentifier) -> bool,
) -> Option<ApplicationValue> {
    if !effective_period(schedule).contains(&now.date) {
        return None;
    }
    let from_exceptions = exception_schedule(schedule)
        .iter()
        .enumerate()
        .filter(|(_, event)| match &event.period {
            SpecialEventPeriod::CalendarEntry(entry) => entry.matches(&now.date),
            SpecialEventPeriod::CalendarReference(id) => calendar(*id),
        })
        .filter_map(|(index, event)| {
            value_at(&event.time_values, &now.time)
                .filter(|value| **value != ApplicationValue::Null)
                .map(|value| ((event.event_priority, index), value.clone()))
        })
        .min_by_key(|(rank, _)| *rank)
        .map(|(_, value)| value);
    if from_exceptions.is_some() {
        return from_exceptions;
    }
    let weekday = usize::from(now.date.weekday);
    let from_weekly = weekly_schedule(schedule)
        .get(weekday.wrapping_sub(1))
        .and_then(|day| value_at(&day.day_schedule, &now.time).cloned())
        .filter(|value| *value != ApplicationValue::Null);
    if from_weekly.is_some() {
        return from_weekly;
    }
    Some(
        schedule
            .stored(P::ScheduleDefault)
            .and_then(PropertyData::as_single)
            .cloned()
            .unwrap_or(ApplicationValue::Null),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::calendar::{days_from_civil, weekday_from_days};
    use crate::encoding::{Date, Time, TimeValue, WeekNDay};
    use crate::enums::ObjectType;
    use crate::objects::datatypes::to_elements;
    use crate::objects::object_types;

    fn at(year: u16, month: u8, day: u8, hour: u8, minute: u8) -> DateTime {
        let weekday = weekday_from_days(days_from_civil(i64::from(year), month, day));
        DateTime {
            date: Date::new(year, month, day, weekday),
            time: Time::new(hour, minute, 0, 0),
        }
    }

    fn tv(hour: u8, value: ApplicationValue) -> TimeValue {
        TimeValue {
            time: Time::new(hour, 0, 0, 0),
            value,
        }
    }

    fn office_schedule() -> Object {
        let weekday = DailySchedule {
            day_schedule: vec![
                tv(8, ApplicationValue::Real(21.0)),
                tv(18, ApplicationValue::Null),
            ],
        };
        let days: Vec<_> = (0..7)
            .map(|day| {
                let daily = if day < 5 {
                    weekday.clone()
                } else {
                    DailySchedule::default()
                };
                to_elements(|b| daily.encode(b))
            })
            .collect();
        let holiday = SpecialEvent {
            period: SpecialEventPeriod::CalendarReference(ObjectIdentifier::new(
                ObjectType::Calendar,
                1,
            )),
            time_values: vec![tv(0, ApplicationValue::Real(15.0))],
            event_priority: 10,
        };
        let christmas_eve_morning = SpecialEvent {
            period: SpecialEventPeriod::CalendarEntry(CalendarEntry::Date(Date::new(
                255, 12, 24, 255,
            ))),
            time_values: vec![
                tv(8, ApplicationValue::Real(19.0)),
                tv(12, ApplicationValue::Null),
            ],
            event_priority: 5,
        };
        object_types::schedule(1, "Office")
            .with(P::WeeklySchedule, PropertyData::Array(days))
            .with(
                P::ExceptionSchedule,
                PropertyData::Array(vec![
                    to_elements(|b| holiday.encode(b)),
                    to_elements(|b| christmas_eve_morning.encode(b)),
                ]),
            )
            .with(
                P::ScheduleDefault,
                PropertyData::Single(ApplicationValue::Real(16.0)),
            )
    }

    #[test]
    fn weekly_then_default() {
        let schedule = office_schedule();
        let no_holidays = |_| false;
        // Wednesday 2025-06-04.
        assert_eq!(
            schedule_value(&schedule, &at(2025, 6, 4, 7, 59), no_holidays),
            Some(ApplicationValue::Real(16.0))
        );
        assert_eq!(
            schedule_value(&schedule, &at(2025, 6, 4, 8, 0), no_holidays),
            Some(ApplicationValue::Real(21.0))
        );
        // The NULL at 18:00 hands back to schedule-default.
        assert_eq!(
            schedule_value(&schedule, &at(2025, 6, 4, 18, 30), no_holidays),
            Some(ApplicationValue::Real(16.0))
        );
        // Saturday: no weekly entries.
        assert_eq!(
            schedule_value(&schedule, &at(2025, 6, 7, 10, 0), no_holidays),
            Some(ApplicationValue::Real(16.0))
        );
    }

    #[test]
    fn exceptions_by_priority_and_calendar() {
        let schedule = office_schedule();
        // A holiday (the calendar is TRUE) on a Wednesday.
        assert_eq!(
            schedule_value(&schedule, &at(2025, 12, 24, 10, 0), |_| true),
            Some(ApplicationValue::Real(19.0)),
            "priority 5 beats the holiday's 10"
        );
        assert_eq!(
            schedule_value(&schedule, &at(2025, 12, 24, 13, 0), |_| true),
            Some(ApplicationValue::Real(15.0)),
            "after the NULL at 12:00 the holiday event applies"
        );
        assert_eq!(
            schedule_value(&schedule, &at(2025, 12, 24, 13, 0), |_| false),
            Some(ApplicationValue::Real(21.0)),
            "without the holiday, the weekly schedule"
        );
    }

    #[test]
    fn effective_period_and_calendar() {
        let schedule = office_schedule().with(
            P::EffectivePeriod,
            PropertyData::List(to_elements(|b| {
                DateRange {
                    start: Date::new(2025, 1, 1, 255),
                    end: Date::new(2025, 12, 31, 255),
                }
                .encode(b)
            })),
        );
        assert_eq!(
            schedule_value(&schedule, &at(2026, 1, 5, 10, 0), |_| false),
            None
        );
        assert!(schedule_value(&schedule, &at(2025, 1, 6, 10, 0), |_| false).is_some());

        let thanksgiving = CalendarEntry::WeekNDay(WeekNDay {
            month: 11,
            week_of_month: 4,
            day_of_week: 4,
        });
        let calendar = object_types::calendar(1, "Holidays").with(
            P::DateList,
            PropertyData::List(to_elements(|b| thanksgiving.encode(b))),
        );
        assert!(calendar_value(&calendar, &at(2025, 11, 27, 0, 0)));
        assert!(!calendar_value(&calendar, &at(2025, 11, 28, 0, 0)));
    }
}
