//! Wall-clock helpers for the ops: the caller passes the current time as UTC milliseconds
//! since 1970 (the ops never read the clock); these turn it into timestamps in a zone.

use crate::timezone::{self, SECONDS_PER_DAY, civil_from_days, days_from_civil};
use crate::value::{Date, DateTime, Time};

const MILLIS_PER_DAY: i64 = SECONDS_PER_DAY * 1000;

/// The UTC timestamp of `utc_ms` (milliseconds since 1970-01-01T00:00Z), tz name `UTC`;
/// `None` outside years 0..=9999.
fn utc_datetime(utc_ms: i64) -> Option<DateTime> {
    let days = utc_ms.div_euclid(MILLIS_PER_DAY);
    let in_day = utc_ms.rem_euclid(MILLIS_PER_DAY);
    let (y, m, d) = civil_from_days(days);
    let secs = in_day / 1000;
    let date = Date::new(
        i32::try_from(y).ok()?,
        u8::try_from(m).ok()?,
        u8::try_from(d).ok()?,
    )
    .ok()?;
    let time = Time::new(
        u8::try_from(secs / 3600).ok()?,
        u8::try_from(secs % 3600 / 60).ok()?,
        u8::try_from(secs % 60).ok()?,
        u32::try_from(in_day % 1000).ok()? * 1_000_000,
    )
    .ok()?;
    DateTime::new(date, time, 0, Some("UTC".to_owned())).ok()
}

/// The instant `utc_ms` as a timestamp in the Haystack timezone `tz` (UTC when the name is
/// unknown); `None` outside years 0..=9999.
pub fn datetime_at(utc_ms: i64, tz: &str) -> Option<DateTime> {
    let utc = utc_datetime(utc_ms)?;
    if tz == "UTC" {
        return Some(utc);
    }
    Some(timezone::in_zone(&utc, tz).unwrap_or(utc))
}

/// Milliseconds since 1970-01-01T00:00Z of a timestamp.
pub fn utc_millis(dt: &DateTime) -> i64 {
    timezone::utc_seconds(dt)
        .saturating_mul(1000)
        .saturating_add(i64::from(dt.time.nanos() / 1_000_000))
}

/// Midnight at the start of `date` in zone `tz` (the first instant of that local day; when a
/// daylight-saving change skips midnight, the instant after the gap).
pub fn local_midnight(date: Date, tz: &str) -> Option<DateTime> {
    let local = days_from_civil(
        i64::from(date.year()),
        u32::from(date.month()),
        u32::from(date.day()),
    ) * SECONDS_PER_DAY;
    // The offset at local midnight: guess with the offset at that instant read as UTC,
    // then correct once with the offset at the resulting instant.
    let first = timezone::offset_at(tz, local).unwrap_or(0);
    let second = timezone::offset_at(tz, local - i64::from(first)).unwrap_or(first);
    let utc = local - i64::from(second);
    datetime_at(utc.saturating_mul(1000), tz)
}

/// The date `days` days after `date` (`None` past year 9999 or before year 0).
pub fn add_days(date: Date, days: i64) -> Option<Date> {
    let n = days_from_civil(
        i64::from(date.year()),
        u32::from(date.month()),
        u32::from(date.day()),
    ) + days;
    let (y, m, d) = civil_from_days(n);
    Date::new(
        i32::try_from(y).ok()?,
        u8::try_from(m).ok()?,
        u8::try_from(d).ok()?,
    )
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_in_zones() {
        // 2024-07-01T12:00:00Z is 08:00 in New York (EDT, -4h).
        let ms = 1_719_835_200_000;
        let utc = datetime_at(ms, "UTC").unwrap();
        assert_eq!(utc.to_string_zinc(), "2024-07-01T12:00:00Z UTC");
        let ny = datetime_at(ms, "New_York").unwrap();
        assert_eq!(ny.offset_seconds(), -4 * 3600);
        assert_eq!(ny.time.hour(), 8);
        assert_eq!(utc_millis(&ny), ms);
        assert_eq!(
            datetime_at(ms + 5, "Nowhere").unwrap().time.nanos(),
            5_000_000
        );
        assert_eq!(datetime_at(i64::MAX, "UTC"), None);
    }

    #[test]
    fn midnights_and_day_arithmetic() {
        let date = Date::new(2024, 3, 10).unwrap();
        let m = local_midnight(date, "New_York").unwrap();
        assert_eq!(m.date, date);
        assert_eq!((m.time.hour(), m.offset_seconds()), (0, -5 * 3600));
        // The next midnight is only 23 hours later (spring forward).
        let next = local_midnight(add_days(date, 1).unwrap(), "New_York").unwrap();
        assert_eq!(utc_millis(&next) - utc_millis(&m), 23 * 3600 * 1000);
        assert_eq!(
            add_days(Date::new(2024, 2, 28).unwrap(), 1),
            Date::new(2024, 2, 29).ok()
        );
        assert_eq!(add_days(Date::new(9999, 12, 31).unwrap(), 1), None);
    }

    trait ZincText {
        fn to_string_zinc(&self) -> String;
    }
    impl ZincText for DateTime {
        fn to_string_zinc(&self) -> String {
            crate::codec::zinc::encode_value(&crate::Value::from(self.clone()))
        }
    }
}
