//! POSIX TZ rule strings (`EST5EDT,M3.2.0,M11.1.0`), as found at the end of compiled
//! tz database files (RFC 8536 section 3.3), and the UTC offset they give at an instant.

use std::fmt;

use super::calendar::{SECONDS_PER_DAY, civil_from_days, days_from_civil, days_in_month, weekday};

/// Longest rule string accepted.
pub const MAX_RULE_LEN: usize = 128;

/// Largest instant magnitude (seconds from 1970) [`PosixRule::offset_at`] evaluates;
/// about 31 million years, far inside `i64` day arithmetic.
pub const MAX_INSTANT: i64 = 1_000_000_000_000_000;

/// Why a rule string was rejected, with the byte offset where it went wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid POSIX TZ rule at byte {offset}: {message}")]
pub struct InvalidRule {
    /// Byte offset into the rule string.
    pub offset: usize,
    /// What was expected.
    pub message: &'static str,
}

/// The day a daylight saving transition happens in a year.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransitionDay {
    /// `Jn`: day 1..=365, 29 February never counted.
    JulianNoLeap(u16),
    /// `n`: day 0..=365, 29 February counted.
    Julian(u16),
    /// `Mm.w.d`: weekday `d` (0 = Sunday) of week `w` (5 = last) of month `m`.
    MonthWeekDay {
        /// Month 1..=12.
        month: u8,
        /// Week 1..=5.
        week: u8,
        /// Weekday 0..=6.
        weekday: u8,
    },
}

/// A transition: a day and a local time in seconds (may be negative or past 24h).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transition {
    /// The day.
    pub day: TransitionDay,
    /// Seconds after local midnight of that day.
    pub time: i32,
}

/// Daylight saving part of a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DaylightRule {
    /// UTC offset in seconds during daylight time (east positive).
    pub offset: i32,
    /// Start, in standard local time.
    pub start: Transition,
    /// End, in daylight local time.
    pub end: Transition,
}

/// A parsed POSIX TZ rule. Offsets are stored east positive (the POSIX text is west positive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PosixRule {
    /// UTC offset in seconds in standard time.
    pub std_offset: i32,
    /// Daylight saving rule, if the zone observes one.
    pub daylight: Option<DaylightRule>,
}

struct Cursor<'a> {
    text: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn error(&self, message: &'static str) -> InvalidRule {
        InvalidRule {
            offset: self.pos,
            message,
        }
    }

    fn eat(&mut self, byte: u8) -> bool {
        if self.peek() == Some(byte) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn name(&mut self) -> Result<(), InvalidRule> {
        if self.eat(b'<') {
            while let Some(c) = self.peek() {
                self.pos += 1;
                if c == b'>' {
                    return Ok(());
                }
            }
            return Err(self.error("unterminated `<` zone name"));
        }
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
            self.pos += 1;
        }
        if self.pos - start < 3 {
            return Err(self.error("zone abbreviation of at least 3 letters expected"));
        }
        Ok(())
    }

    fn number(&mut self, max: u32) -> Result<u32, InvalidRule> {
        let start = self.pos;
        let mut value: u32 = 0;
        while let Some(c) = self.peek().filter(u8::is_ascii_digit) {
            value = value * 10 + u32::from(c - b'0');
            if value > max {
                return Err(self.error("number out of range"));
            }
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.error("digit expected"));
        }
        Ok(value)
    }

    /// `[+-]hh[:mm[:ss]]` in seconds, hours up to `max_hours`.
    fn signed_time(&mut self, max_hours: u32) -> Result<i32, InvalidRule> {
        let negative = if self.eat(b'-') {
            true
        } else {
            self.eat(b'+');
            false
        };
        let mut seconds = self.number(max_hours)? * 3600;
        if self.eat(b':') {
            seconds += self.number(59)? * 60;
            if self.eat(b':') {
                seconds += self.number(59)?;
            }
        }
        let seconds = seconds as i32;
        Ok(if negative { -seconds } else { seconds })
    }

    fn transition(&mut self) -> Result<Transition, InvalidRule> {
        let day = if self.eat(b'M') {
            let month = self.number(12)? as u8;
            if !self.eat(b'.') {
                return Err(self.error("`.` expected"));
            }
            let week = self.number(5)? as u8;
            if !self.eat(b'.') {
                return Err(self.error("`.` expected"));
            }
            let weekday = self.number(6)? as u8;
            if month == 0 || week == 0 {
                return Err(self.error("month and week start at 1"));
            }
            TransitionDay::MonthWeekDay {
                month,
                week,
                weekday,
            }
        } else if self.eat(b'J') {
            let n = self.number(365)? as u16;
            if n == 0 {
                return Err(self.error("Julian day starts at 1"));
            }
            TransitionDay::JulianNoLeap(n)
        } else {
            TransitionDay::Julian(self.number(365)? as u16)
        };
        let time = if self.eat(b'/') {
            self.signed_time(167)?
        } else {
            2 * 3600
        };
        Ok(Transition { day, time })
    }
}

impl TransitionDay {
    /// Day number (since 1970-01-01) of this transition in `year`.
    fn day_in(self, year: i64) -> i64 {
        let jan1 = days_from_civil(year, 1, 1);
        match self {
            TransitionDay::JulianNoLeap(n) => {
                let n = i64::from(n);
                let leap_shift = i64::from(super::calendar::is_leap_year(year) && n >= 60);
                jan1 + n - 1 + leap_shift
            }
            TransitionDay::Julian(n) => jan1 + i64::from(n),
            TransitionDay::MonthWeekDay {
                month,
                week,
                weekday: wd,
            } => {
                let month = u32::from(month);
                let first = days_from_civil(year, month, 1);
                let shift = (i64::from(wd) - i64::from(weekday(first))).rem_euclid(7);
                let mut day = first + shift + 7 * (i64::from(week) - 1);
                let last = first + i64::from(days_in_month(year, month)) - 1;
                while day > last {
                    day -= 7;
                }
                day
            }
        }
    }
}

impl PosixRule {
    /// Parses a rule such as `EST5EDT,M3.2.0,M11.1.0`, `<-05>5` or `UTC0`.
    pub fn parse(text: &str) -> Result<Self, InvalidRule> {
        if text.len() > MAX_RULE_LEN {
            return Err(InvalidRule {
                offset: MAX_RULE_LEN,
                message: "rule too long",
            });
        }
        let mut c = Cursor {
            text: text.as_bytes(),
            pos: 0,
        };
        c.name()?;
        let std_offset = -c.signed_time(24)?;
        if c.peek().is_none() {
            return Ok(PosixRule {
                std_offset,
                daylight: None,
            });
        }
        c.name()?;
        let dst_offset = match c.peek() {
            Some(b',') | None => std_offset + 3600,
            _ => -c.signed_time(24)?,
        };
        if !c.eat(b',') {
            return Err(c.error("`,` and transition rules expected"));
        }
        let start = c.transition()?;
        if !c.eat(b',') {
            return Err(c.error("`,` expected before the end rule"));
        }
        let end = c.transition()?;
        if c.peek().is_some() {
            return Err(c.error("unexpected text after the rule"));
        }
        Ok(PosixRule {
            std_offset,
            daylight: Some(DaylightRule {
                offset: dst_offset,
                start,
                end,
            }),
        })
    }

    /// UTC offset (seconds, east positive) in force at `utc` seconds since 1970-01-01T00:00Z.
    /// Instants are clamped to ±[`MAX_INSTANT`] so that calendar arithmetic cannot overflow.
    pub fn offset_at(&self, utc: i64) -> i32 {
        let Some(dst) = self.daylight else {
            return self.std_offset;
        };
        let utc = utc.clamp(-MAX_INSTANT, MAX_INSTANT);
        let (year, _, _) = civil_from_days(utc.div_euclid(SECONDS_PER_DAY));
        let start = dst.start.day.day_in(year) * SECONDS_PER_DAY + i64::from(dst.start.time)
            - i64::from(self.std_offset);
        let end = dst.end.day.day_in(year) * SECONDS_PER_DAY + i64::from(dst.end.time)
            - i64::from(dst.offset);
        let in_dst = if start <= end {
            start <= utc && utc < end
        } else {
            // Southern hemisphere (or negative DST): daylight time spans the new year.
            !(end <= utc && utc < start)
        };
        if in_dst { dst.offset } else { self.std_offset }
    }
}

fn write_seconds(f: &mut fmt::Formatter<'_>, seconds: i32) -> fmt::Result {
    let sign = if seconds < 0 { "-" } else { "" };
    let abs = seconds.unsigned_abs();
    write!(
        f,
        "{sign}{}:{:02}:{:02}",
        abs / 3600,
        abs % 3600 / 60,
        abs % 60
    )
}

impl fmt::Display for Transition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.day {
            TransitionDay::JulianNoLeap(n) => write!(f, "J{n}")?,
            TransitionDay::Julian(n) => write!(f, "{n}")?,
            TransitionDay::MonthWeekDay {
                month,
                week,
                weekday,
            } => write!(f, "M{month}.{week}.{weekday}")?,
        }
        f.write_str("/")?;
        write_seconds(f, self.time)
    }
}

impl fmt::Display for PosixRule {
    /// Writes an equivalent rule with placeholder zone names (`<STD>`, `<DST>`), which
    /// the rule does not keep: `<STD>5:00:00<DST>4:00:00,M3.2.0/2:00:00,M11.1.0/2:00:00`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<STD>")?;
        write_seconds(f, -self.std_offset)?;
        if let Some(dst) = &self.daylight {
            f.write_str("<DST>")?;
            write_seconds(f, -dst.offset)?;
            write!(f, ",{},{}", dst.start, dst.end)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(y: i64, m: u32, d: u32, h: i64) -> i64 {
        days_from_civil(y, m, d) * SECONDS_PER_DAY + h * 3600
    }

    #[test]
    fn us_eastern() {
        let rule = PosixRule::parse("EST5EDT,M3.2.0,M11.1.0").unwrap();
        assert_eq!(rule.std_offset, -5 * 3600);
        // 2024: DST from 10 March 07:00Z to 3 November 06:00Z.
        assert_eq!(rule.offset_at(utc(2024, 3, 10, 6)), -5 * 3600);
        assert_eq!(rule.offset_at(utc(2024, 3, 10, 7)), -4 * 3600);
        assert_eq!(rule.offset_at(utc(2024, 11, 3, 5)), -4 * 3600);
        assert_eq!(rule.offset_at(utc(2024, 11, 3, 6)), -5 * 3600);
    }

    #[test]
    fn southern_and_odd_rules() {
        let sydney = PosixRule::parse("AEST-10AEDT,M10.1.0,M4.1.0/3").unwrap();
        assert_eq!(sydney.offset_at(utc(2024, 1, 15, 0)), 11 * 3600);
        assert_eq!(sydney.offset_at(utc(2024, 7, 15, 0)), 10 * 3600);
        let nuuk = PosixRule::parse("<-02>2<-01>,M3.5.0/-1,M10.5.0/0").unwrap();
        assert_eq!(nuuk.offset_at(utc(2024, 7, 1, 0)), -3600);
        assert_eq!(nuuk.offset_at(utc(2024, 1, 1, 0)), -2 * 3600);
        let lord_howe = PosixRule::parse("<+1030>-10:30<+11>-11,M10.1.0,M4.1.0").unwrap();
        assert_eq!(lord_howe.offset_at(utc(2024, 7, 1, 0)), 10 * 3600 + 1800);
        let fixed = PosixRule::parse("<+0545>-5:45").unwrap();
        assert_eq!(fixed.offset_at(0), 5 * 3600 + 45 * 60);
        let julian = PosixRule::parse("XXX3YYY,J60/0,300").unwrap();
        assert_eq!(julian.offset_at(utc(2023, 6, 1, 0)), -2 * 3600);
    }

    #[test]
    fn malformed_rules_report_the_offset() {
        assert_eq!(
            PosixRule::parse("EST"),
            Err(InvalidRule {
                offset: 3,
                message: "digit expected"
            })
        );
        assert_eq!(PosixRule::parse("E5").unwrap_err().offset, 1);
        assert_eq!(PosixRule::parse("<X5").unwrap_err().offset, 3);
        assert_eq!(
            PosixRule::parse("EST5EDT,M13.1.0,M1.1.0")
                .unwrap_err()
                .offset,
            10
        );
        assert_eq!(PosixRule::parse("EST5EDT,M3.2.0").unwrap_err().offset, 14);
        assert_eq!(
            PosixRule::parse("EST5EDT,M3.2.0,M11.1.0x")
                .unwrap_err()
                .offset,
            22
        );
        assert_eq!(PosixRule::parse("EST99").unwrap_err().offset, 4);
        assert!(PosixRule::parse(&"A".repeat(200)).is_err());
    }

    #[test]
    fn extreme_instants_do_not_overflow() {
        let rule = PosixRule::parse("EST5EDT,M3.2.0,M11.1.0").unwrap();
        assert_eq!(rule.offset_at(i64::MAX), rule.offset_at(MAX_INSTANT));
        assert!([-5 * 3600, -4 * 3600].contains(&rule.offset_at(i64::MIN)));
    }

    #[test]
    fn display_parses_back() {
        for text in [
            "EST5EDT,M3.2.0,M11.1.0",
            "<-02>2<-01>,M3.5.0/-1,M10.5.0/0",
            "<+1030>-10:30<+11>-11,M10.1.0,M4.1.0",
            "XXX3YYY,J60/0,300/-167",
            "UTC0",
        ] {
            let rule = PosixRule::parse(text).unwrap();
            assert_eq!(PosixRule::parse(&rule.to_string()), Ok(rule), "{text}");
        }
        assert_eq!(
            PosixRule::parse("UTC0").unwrap().to_string(),
            "<STD>0:00:00"
        );
    }

    proptest::proptest! {
        #[test]
        fn rules_round_trip(
            std in -86_399i32..86_400,
            dst in proptest::option::of((
                -86_399i32..86_400,
                1u8..13, 1u8..6, 0u8..7,
                -167 * 3600i32..167 * 3600,
                1u16..366,
                -86_399i32..86_400,
                -1_000_000_000_000i64..1_000_000_000_000,
            )),
        ) {
            let daylight = dst.map(|(offset, month, week, weekday, start_time, julian, end_time, _)| DaylightRule {
                offset,
                start: Transition { day: TransitionDay::MonthWeekDay { month, week, weekday }, time: start_time },
                end: Transition { day: TransitionDay::JulianNoLeap(julian), time: end_time },
            });
            let rule = PosixRule { std_offset: std, daylight };
            proptest::prop_assert_eq!(PosixRule::parse(&rule.to_string()), Ok(rule));
            if let Some((.., instant)) = dst {
                let offset = rule.offset_at(instant);
                proptest::prop_assert!(offset == rule.std_offset || Some(offset) == daylight.map(|d| d.offset));
            }
        }

        #[test]
        fn parse_never_panics(s in "[A-Z<>+0-9:.,/MJ-]{0,40}") {
            let _ = PosixRule::parse(&s);
        }
    }
}
