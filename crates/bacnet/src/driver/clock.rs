//! The device clock: the host's local wall-clock time as a BACnet [`DateTime`], which the
//! server driver hands to the sans-IO object database before each request so that the
//! Device's local-date and local-time properties answer with the time of the request.

use chrono::{Datelike, Local, NaiveDateTime, Timelike};

use crate::encoding::{Date, DateTime, Time};

/// The host's local date and time now.
pub fn local_now() -> DateTime {
    bacnet_date_time(&Local::now().naive_local())
}

/// The host's UTC offset as BACnet's Device UTC_Offset counts it: minutes to add to local
/// time to get UTC (so west of Greenwich is positive; daylight saving included).
pub fn utc_offset_minutes() -> i32 {
    -Local::now().offset().local_minus_utc() / 60
}

/// A calendar date and time as a BACnet DateTime. Years outside 1900..=2154 (the range a
/// BACnet Date can hold) are given as unspecified (255), as are leap seconds' extra second.
pub fn bacnet_date_time(local: &NaiveDateTime) -> DateTime {
    let year_since_1900 = u8::try_from(local.year() - 1900)
        .ok()
        .filter(|year| *year < 255)
        .unwrap_or(255);
    // chrono: months 1..=12, days 1..=31, Monday = 1 .. Sunday = 7, as BACnet numbers them.
    let date = Date {
        year_since_1900,
        month: local.month() as u8,
        day: local.day() as u8,
        weekday: local.weekday().number_from_monday() as u8,
    };
    let second = local.second().min(59) as u8;
    let hundredths = (local.nanosecond() % 1_000_000_000 / 10_000_000) as u8;
    let time = Time::new(local.hour() as u8, local.minute() as u8, second, hundredths);
    DateTime { date, time }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    #[test]
    fn converts_fields_as_bacnet_numbers_them() {
        let when = NaiveDate::from_ymd_opt(2026, 11, 22)
            .and_then(|d| d.and_hms_milli_opt(7, 58, 9, 470))
            .unwrap();
        let got = bacnet_date_time(&when);
        assert_eq!(
            got.date,
            Date {
                year_since_1900: 126,
                month: 11,
                day: 22,
                weekday: 7 // a Sunday
            }
        );
        assert_eq!(got.time, Time::new(7, 58, 9, 47));
        assert!(got.date.validate().is_ok() && got.time.validate().is_ok());
    }

    #[test]
    fn leap_second_and_far_years_stay_valid() {
        let leap = NaiveDate::from_ymd_opt(2016, 12, 31)
            .and_then(|d| d.and_hms_nano_opt(23, 59, 59, 1_500_000_000))
            .unwrap();
        let got = bacnet_date_time(&leap);
        assert_eq!(got.time, Time::new(23, 59, 59, 50));
        let far = NaiveDate::from_ymd_opt(2200, 1, 1)
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .unwrap();
        assert_eq!(bacnet_date_time(&far).date.year_since_1900, 255);
    }

    #[test]
    fn local_now_is_a_valid_specified_date_time() {
        let now = local_now();
        assert!(now.date.validate().is_ok());
        assert!(now.time.validate().is_ok());
        assert!(now.date.year_since_1900 >= 126);
        assert!(now.time.hour < 24);
    }
}
