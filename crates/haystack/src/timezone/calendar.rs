//! Proleptic Gregorian calendar arithmetic on days since 1970-01-01 (no clock reads), from
//! the one implementation every buildwire crate shares (`buildwire-civil`).

pub use buildwire_civil::{
    SECONDS_PER_DAY, civil_from_days, days_from_civil, days_in_month, is_leap_year,
};

/// Day of the week, 0 = Sunday.
pub fn weekday(days: i64) -> u32 {
    buildwire_civil::weekday_from_sunday(days)
}
