//! TimeSynchronization and UTCTimeSynchronization (Clauses 16.7 and 16.8): set a
//! device's clock, to local time or to UTC. Both carry one `BACnetDateTime`.
//!
//! ```text
//! TimeSynchronization-Request ::= SEQUENCE { time BACnetDateTime }
//! UTCTimeSynchronization-Request ::= SEQUENCE { time BACnetDateTime }
//! ```

use crate::encoding::{DateTime, DecodeError, DecodeErrorKind, Reader};

/// The parameter of both time synchronization services: a date and time that must name
/// one moment (no unspecified fields, no date patterns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimeSynchronizationRequest {
    /// The time to set.
    pub time: DateTime,
}

impl TimeSynchronizationRequest {
    /// Appends the application-tagged date and time.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.time.encode(buf);
    }

    /// Decodes the date and time; a date or time with unspecified or pattern fields is an
    /// `InvalidValue` (a clock cannot be set to "any Monday").
    pub fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let start = reader.position();
        let time = DateTime::decode(reader)?;
        let date = &time.date;
        let specific_date =
            date.year().is_some() && (1..=12).contains(&date.month) && (1..=31).contains(&date.day);
        let specific_time = time.time.hour < 24 && time.time.minute < 60 && time.time.second < 60;
        if !specific_date || !specific_time {
            return Err(DecodeError::new(
                start,
                DecodeErrorKind::InvalidValue(
                    "time synchronization needs a specific date and time",
                ),
            ));
        }
        Ok(Self { time })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::{Date, Time};

    #[test]
    fn example_bytes_and_patterns() {
        // Clause F.4.6: 1992-11-17 22:45:30.70.
        let request = TimeSynchronizationRequest {
            time: DateTime {
                date: Date::new(1992, 11, 17, 2),
                time: Time::new(22, 45, 30, 70),
            },
        };
        let mut buf = Vec::new();
        request.encode(&mut buf);
        assert_eq!(
            buf,
            [0xA4, 0x5C, 0x0B, 0x11, 0x02, 0xB4, 0x16, 0x2D, 0x1E, 0x46]
        );
        assert_eq!(
            TimeSynchronizationRequest::decode(&mut Reader::new(&buf)).unwrap(),
            request
        );
        let any_day = [0xA4, 0x5C, 0x0B, 0xFF, 0x02, 0xB4, 0x16, 0x2D, 0x1E, 0x46];
        let err = TimeSynchronizationRequest::decode(&mut Reader::new(&any_day)).unwrap_err();
        assert_eq!(err.offset, 0);
    }
}
