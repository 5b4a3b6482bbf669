//! Wall-clock timestamps of output rows: UTC, RFC 3339 with milliseconds
//! (`2026-11-27T22:47:16.123Z`), as `read --repeat` and `subscribe` print them.

use std::time::{SystemTime, UNIX_EPOCH};

/// `time` as RFC 3339 UTC with milliseconds (times before 1970 print as 1970).
pub fn utc_text(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let seconds = i64::try_from(since.as_secs()).unwrap_or(i64::MAX);
    let (year, month, day) = buildwire_civil::civil_from_unix_seconds(seconds);
    let of_day = seconds.rem_euclid(buildwire_civil::SECONDS_PER_DAY);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60,
        since.subsec_millis()
    )
}

/// Now, as [`utc_text`].
pub fn utc_now() -> String {
    utc_text(SystemTime::now())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats_utc_with_milliseconds() {
        let t = UNIX_EPOCH + Duration::from_millis(1_795_000_000_123);
        assert_eq!(utc_text(t), "2026-11-18T11:06:40.123Z");
        assert_eq!(utc_text(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
    }
}
