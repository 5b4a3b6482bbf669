//! Proleptic Gregorian calendar arithmetic on day counts since 1970-01-01.
//!
//! One implementation for every crate of buildwire: BACnet dates and schedules, Haystack
//! time zones and filters, OPC UA certificates and value text, and the benchmarks all turn
//! dates into day numbers and back through these functions. Nothing here reads the clock.
//!
//! The day-number conversion uses the era arithmetic (400-year eras of 146,097 days, years
//! counted from March so that the leap day ends the year) described by Howard Hinnant in
//! "chrono-Compatible Low-Level Date Algorithms"; it is exact for every `i64` day number
//! whose year fits an `i64`.
//!
//! ```
//! use buildwire_civil::{civil_from_days, days_from_civil, iso_weekday};
//! let days = days_from_civil(2024, 2, 29);
//! assert_eq!(civil_from_days(days), (2024, 2, 29));
//! assert_eq!(iso_weekday(days), 4); // a Thursday
//! ```
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]

/// Seconds in a civil day (no leap seconds).
pub const SECONDS_PER_DAY: i64 = 86_400;

/// Days in one 400-year era of the Gregorian calendar.
const DAYS_PER_ERA: i64 = 146_097;
/// Days from 0000-03-01 (the start of era 0, counted from March) to 1970-01-01.
const EPOCH_SHIFT: i64 = 719_468;

/// Days from 1970-01-01 to `year-month-day` (negative before it). `month` is 1..=12 and
/// `day` 1..=31; other values are not checked and give a day number off by the excess, as
/// the arithmetic carries it.
pub const fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let month = month as i64;
    // Years start in March, so the leap day is the last day of the shifted year.
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_from_march = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * month_from_march + 2) / 5 + day as i64 - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * DAYS_PER_ERA + day_of_era - EPOCH_SHIFT
}

/// The `(year, month, day)` of a day number counted from 1970-01-01; month 1..=12, day
/// 1..=31.
pub const fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let shifted = days + EPOCH_SHIFT;
    let era = shifted.div_euclid(DAYS_PER_ERA);
    let day_of_era = shifted - era * DAYS_PER_ERA;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + if month <= 2 { 1 } else { 0 };
    // month is 1..=12 and day 1..=31 by construction.
    (year, month as u32, day as u32)
}

/// The `(year, month, day)` of a Unix time in seconds (UTC).
pub const fn civil_from_unix_seconds(seconds: i64) -> (i64, u32, u32) {
    civil_from_days(seconds.div_euclid(SECONDS_PER_DAY))
}

/// Whether `year` has a 29 February.
pub const fn is_leap_year(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

/// Days in `month` (1..=12) of `year`; 0 for a month out of range.
pub const fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Day of the week counted from Sunday: 0 = Sunday .. 6 = Saturday.
pub const fn weekday_from_sunday(days: i64) -> u32 {
    // 1970-01-01 was a Thursday.
    (days + 4).rem_euclid(7) as u32
}

/// ISO day of the week: 1 = Monday .. 7 = Sunday.
pub const fn iso_weekday(days: i64) -> u32 {
    ((days + 3).rem_euclid(7) + 1) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_days() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(2025, 1, 1), 20_089);
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(-719_468), (0, 3, 1));
        assert_eq!(civil_from_unix_seconds(-1), (1969, 12, 31));
        assert_eq!(civil_from_unix_seconds(951_782_400), (2000, 2, 29));
        assert_eq!(weekday_from_sunday(0), 4);
        assert_eq!(iso_weekday(0), 4);
        assert_eq!(iso_weekday(3), 7); // 1970-01-04, a Sunday
        assert_eq!(weekday_from_sunday(3), 0);
        assert_eq!(days_in_month(2024, 2), 29);
        assert_eq!(days_in_month(1900, 2), 28);
        assert_eq!(days_in_month(2000, 2), 29);
        assert_eq!(days_in_month(2023, 13), 0);
        assert!(!is_leap_year(2100));
        assert!(is_leap_year(-4));
    }

    proptest! {
        #[test]
        fn day_numbers_round_trip(days in -100_000_000i64..100_000_000) {
            let (year, month, day) = civil_from_days(days);
            prop_assert!((1..=12).contains(&month));
            prop_assert!(day >= 1 && day <= days_in_month(year, month));
            prop_assert_eq!(days_from_civil(year, month, day), days);
        }

        #[test]
        fn next_day_is_one_more(days in -100_000_000i64..100_000_000) {
            let (year, month, day) = civil_from_days(days);
            let (next_year, next_month, next_day) = civil_from_days(days + 1);
            if day < days_in_month(year, month) {
                prop_assert_eq!((next_year, next_month, next_day), (year, month, day + 1));
            } else if month < 12 {
                prop_assert_eq!((next_year, next_month, next_day), (year, month + 1, 1));
            } else {
                prop_assert_eq!((next_year, next_month, next_day), (year + 1, 1, 1));
            }
            prop_assert_eq!(iso_weekday(days + 1), iso_weekday(days) % 7 + 1);
        }
    }
}
