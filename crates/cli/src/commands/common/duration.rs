//! The one way every command takes a duration: seconds, with an optional unit suffix.
//!
//! `1.5` is one and a half seconds; `500ms`, `2s`, `10min` (or `10m`), `1h` and `1d` give
//! the unit. [`parse_duration`] is the clap `value_parser` of every duration option
//! (`value_name = "DURATION"`), so a bare number means seconds on every command.

use std::time::Duration;

/// The units a duration may end with, and their length in seconds.
const UNITS: &[(&str, f64)] = &[
    ("ms", 0.001),
    ("s", 1.0),
    ("sec", 1.0),
    ("m", 60.0),
    ("min", 60.0),
    ("h", 3600.0),
    ("d", 86_400.0),
];

/// Parses `1.5`, `500ms`, `2s`, `10min`, `1h` or `1d` into a [`Duration`]: a non-negative
/// finite number, seconds unless a unit follows.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale = if unit.is_empty() {
        1.0
    } else {
        UNITS
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(unit))
            .map(|&(_, scale)| scale)
            .ok_or_else(|| {
                format!("`{text}`: unknown unit `{unit}` (use ms, s, min, h or d; bare numbers are seconds)")
            })?
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a duration (e.g. 1.5, 500ms, 2s, 1h)"))?;
    Duration::try_from_secs_f64(value * scale)
        .map_err(|_| format!("`{text}`: a duration must be a finite number of at least 0"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_numbers_are_seconds() {
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration(" 2 "), Ok(Duration::from_secs(2)));
    }

    #[test]
    fn units() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("0.1s"), Ok(Duration::from_millis(100)));
        assert_eq!(parse_duration("10min"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("1d"), Ok(Duration::from_secs(86_400)));
        assert_eq!(parse_duration("250 ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2S"), Ok(Duration::from_secs(2)));
    }

    #[test]
    fn rejects() {
        for bad in [
            "", "ms", "-1", "-1s", "1x", "1 hour", "nan", "inf", "1e400", "abc", "1.2.3",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
