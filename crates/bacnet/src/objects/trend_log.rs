//! Trend Log (Clause 12.25) and the item selection of ReadRange (Clause 15.8).
//!
//! A Trend Log here logs one property of a local object by polling every log-interval.
//! Its records live in a [`LogBuffer`] kept by the database beside the object: each has
//! the sequence number that total-record-count had just after it was added (1, 2, ...,
//! wrapping to 1 after 2^32 - 1). Log-buffer is read with ReadRange only; ReadProperty of
//! it answers `property` / `read-access-denied`. Writing 0 to record-count empties the
//! buffer. When the buffer is full the oldest record goes, unless stop-when-full is set,
//! in which case logging stops (enable becomes FALSE).

use std::collections::VecDeque;

use super::object::Object;
use super::value::PropertyData;
use crate::encoding::calendar::days_from_civil;
use crate::encoding::{
    ApplicationValue, DateTime, DeviceObjectPropertyReference, Element, LogDatum, LogRecord,
    ObjectIdentifier,
};
use crate::enums::{EventState, LoggingType, ObjectType, PropertyIdentifier as P, Reliability};
use crate::services::{RangeSpec, ResultFlags};

use super::datatypes::to_elements;

/// Largest buffer-size accepted.
pub const MAX_BUFFER_SIZE: u32 = 100_000;

/// Settings of a Trend Log.
#[derive(Debug, Clone, PartialEq)]
pub struct TrendLogSettings {
    /// The property logged (a local object; `device` absent or this device).
    pub log: Option<DeviceObjectPropertyReference>,
    /// log-interval in hundredths of a second (0: logging only on demand).
    pub log_interval: u32,
    /// buffer-size: most records kept.
    pub buffer_size: u32,
    /// enable.
    pub enable: bool,
    /// stop-when-full.
    pub stop_when_full: bool,
}

impl Default for TrendLogSettings {
    fn default() -> Self {
        Self {
            log: None,
            log_interval: 6000,
            buffer_size: 1000,
            enable: true,
            stop_when_full: false,
        }
    }
}

/// Trend Log with every required property (log-buffer, record-count and
/// total-record-count are answered by the database) plus description,
/// log-device-object-property, log-interval and reliability.
pub fn trend_log(instance: u32, name: &str, settings: &TrendLogSettings) -> Object {
    let mut object = Object::new(ObjectIdentifier::new(ObjectType::TrendLog, instance), name)
        .with(P::Description, PropertyData::text(""))
        .with(
            P::Enable,
            PropertyData::Single(ApplicationValue::Boolean(settings.enable)),
        )
        .with(
            P::StopWhenFull,
            PropertyData::Single(ApplicationValue::Boolean(settings.stop_when_full)),
        )
        .with(
            P::BufferSize,
            PropertyData::Single(ApplicationValue::Unsigned(u64::from(
                settings.buffer_size.clamp(1, MAX_BUFFER_SIZE),
            ))),
        )
        .with_computed(P::LogBuffer)
        .with_computed(P::RecordCount)
        .with_computed(P::TotalRecordCount)
        .with(
            P::LoggingType,
            PropertyData::Single(ApplicationValue::Enumerated(LoggingType::Polled.to_u32())),
        )
        .with(
            P::LogInterval,
            PropertyData::Single(ApplicationValue::Unsigned(u64::from(settings.log_interval))),
        )
        .with_computed(P::StatusFlags)
        .with(
            P::EventState,
            PropertyData::Single(ApplicationValue::Enumerated(EventState::Normal.to_u32())),
        )
        .with(
            P::Reliability,
            PropertyData::Single(ApplicationValue::Enumerated(
                Reliability::NoFaultDetected.to_u32(),
            )),
        );
    if let Some(reference) = &settings.log {
        object = object.with(
            P::LogDeviceObjectProperty,
            PropertyData::List(to_elements(|b| reference.encode(b))),
        );
    }
    object.require(&[
        P::Enable,
        P::StopWhenFull,
        P::BufferSize,
        P::LogBuffer,
        P::RecordCount,
        P::TotalRecordCount,
        P::LoggingType,
        P::StatusFlags,
        P::EventState,
    ])
}

/// Seconds since 1970-01-01 of a specific date and time (unspecified fields count as 0),
/// for comparing timestamps.
pub fn timestamp_seconds(when: &DateTime) -> i64 {
    let year = i64::from(when.date.year().unwrap_or(1900));
    let field = |v: u8, max: u8| if v > max { 0 } else { v };
    let days = days_from_civil(
        year,
        field(when.date.month, 12).max(1),
        field(when.date.day, 31).max(1),
    );
    let time = &when.time;
    days * 86_400
        + i64::from(field(time.hour, 23)) * 3600
        + i64::from(field(time.minute, 59)) * 60
        + i64::from(field(time.second, 59))
}

/// Hundredths of a second since 1970-01-01, for ordering timestamps finely.
fn timestamp_hundredths(when: &DateTime) -> i64 {
    let hundredths = if when.time.hundredths > 99 {
        0
    } else {
        when.time.hundredths
    };
    timestamp_seconds(when) * 100 + i64::from(hundredths)
}

/// The records of one Trend Log.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogBuffer {
    records: VecDeque<(u32, LogRecord)>,
    total: u32,
}

impl LogBuffer {
    /// record-count.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// True when no record is held.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// total-record-count: records ever added (wrapping from 2^32 - 1 to 1).
    pub const fn total(&self) -> u32 {
        self.total
    }

    /// Empties the buffer (a write of 0 to record-count); the total is kept.
    pub fn clear(&mut self) {
        self.records.clear();
    }

    /// Adds a record, dropping the oldest past `capacity`; returns its sequence number.
    pub fn push(&mut self, record: LogRecord, capacity: usize) -> u32 {
        // Sequence numbers wrap from 2^32 - 1 to 1 (Clause 12.25.18).
        self.total = self.total.checked_add(1).unwrap_or(1);
        while self.records.len() >= capacity.max(1) {
            self.records.pop_front();
        }
        self.records.push_back((self.total, record));
        self.total
    }

    /// The records with their sequence numbers, oldest first.
    pub fn records(&self) -> impl Iterator<Item = &(u32, LogRecord)> {
        self.records.iter()
    }
}

/// The datum a logged value becomes.
pub fn log_datum(value: &[Element]) -> LogDatum {
    match value {
        [Element::Application(single)] => match single {
            ApplicationValue::Null => LogDatum::Null,
            ApplicationValue::Boolean(v) => LogDatum::Boolean(*v),
            ApplicationValue::Real(v) => LogDatum::Real(*v),
            ApplicationValue::Enumerated(v) => LogDatum::Enumerated(*v),
            ApplicationValue::Unsigned(v) => LogDatum::Unsigned(*v),
            ApplicationValue::Signed(v) => LogDatum::Signed(*v),
            ApplicationValue::BitString(v) => LogDatum::BitString(v.clone()),
            _ => LogDatum::Any(value.to_vec()),
        },
        _ => LogDatum::Any(value.to_vec()),
    }
}

/// Which items of a list a ReadRange returns: `(first index, count)` into the list (0-based),
/// chosen from `len` items. `sequence` gives an item's sequence number and `time` its
/// timestamp; lists without them answer `None` for the forms that need them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeSelection {
    /// Index of the first item returned.
    pub start: usize,
    /// Number of items selected (before any cut for size).
    pub count: usize,
}

/// Selects the items a range asks for. Returns `None` when the range form does not apply
/// to this list (by sequence number or time without sequence numbers / timestamps).
pub fn select_range(
    len: usize,
    range: Option<&RangeSpec>,
    sequence: Option<&dyn Fn(usize) -> u32>,
    time: Option<&dyn Fn(usize) -> i64>,
) -> Option<RangeSelection> {
    let all = RangeSelection {
        start: 0,
        count: len,
    };
    let Some(range) = range else {
        return Some(all);
    };
    let count = range.count();
    let wanted = count.unsigned_abs() as usize;
    let empty = RangeSelection { start: 0, count: 0 };
    // Items `[first, last]` (inclusive, 0-based) that qualify, then the count is applied.
    let window = |first: usize, last_exclusive: usize, forward: bool| -> RangeSelection {
        if first >= last_exclusive {
            return empty;
        }
        let available = last_exclusive - first;
        let taken = available.min(wanted);
        if forward {
            RangeSelection {
                start: first,
                count: taken,
            }
        } else {
            RangeSelection {
                start: last_exclusive - taken,
                count: taken,
            }
        }
    };
    Some(match range {
        RangeSpec::ByPosition {
            reference_index, ..
        } => {
            let reference = *reference_index as usize;
            if reference == 0 || reference > len {
                empty
            } else if count > 0 {
                window(reference - 1, len, true)
            } else {
                window(0, reference, false)
            }
        }
        RangeSpec::BySequenceNumber {
            reference_sequence_number,
            ..
        } => {
            let sequence = sequence?;
            let position = (0..len).find(|i| sequence(*i) == *reference_sequence_number);
            match position {
                None => empty,
                Some(at) if count > 0 => window(at, len, true),
                Some(at) => window(0, at + 1, false),
            }
        }
        RangeSpec::ByTime { reference_time, .. } => {
            let time = time?;
            let reference = timestamp_hundredths(reference_time);
            if count > 0 {
                match (0..len).find(|i| time(*i) > reference) {
                    Some(first) => window(first, len, true),
                    None => empty,
                }
            } else {
                let before = (0..len).take_while(|i| time(*i) < reference).count();
                window(0, before, false)
            }
        }
    })
}

/// The result flags of a selection of `selected` items starting at `start`, of which
/// `returned` fit in the answer, out of `len` items.
pub fn result_flags(len: usize, start: usize, selected: usize, returned: usize) -> ResultFlags {
    ResultFlags {
        first_item: returned > 0 && start == 0,
        last_item: returned > 0 && start + returned == len,
        more_items: returned < selected,
    }
}

/// Timestamp key of a log record (hundredths since 1970).
pub fn record_time(record: &LogRecord) -> i64 {
    timestamp_hundredths(&record.timestamp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::{Date, Time};

    fn seq(i: usize) -> u32 {
        i as u32 + 11
    }

    fn time(i: usize) -> i64 {
        i as i64 * 100
    }

    #[test]
    fn by_position_forward_and_backward() {
        let forward = RangeSpec::ByPosition {
            reference_index: 2,
            count: 3,
        };
        assert_eq!(
            select_range(10, Some(&forward), None, None),
            Some(RangeSelection { start: 1, count: 3 })
        );
        let backward = RangeSpec::ByPosition {
            reference_index: 2,
            count: -3,
        };
        assert_eq!(
            select_range(10, Some(&backward), None, None),
            Some(RangeSelection { start: 0, count: 2 })
        );
        let past_end = RangeSpec::ByPosition {
            reference_index: 11,
            count: 3,
        };
        assert_eq!(
            select_range(10, Some(&past_end), None, None),
            Some(RangeSelection { start: 0, count: 0 })
        );
        assert_eq!(
            result_flags(10, 0, 2, 2),
            ResultFlags {
                first_item: true,
                last_item: false,
                more_items: false
            }
        );
    }

    #[test]
    fn by_sequence_number_and_time() {
        let s: &dyn Fn(usize) -> u32 = &seq;
        let t: &dyn Fn(usize) -> i64 = &time;
        let by_sequence = RangeSpec::BySequenceNumber {
            reference_sequence_number: 13,
            count: -5,
        };
        // Sequence 13 is index 2: items 0..=2.
        assert_eq!(
            select_range(6, Some(&by_sequence), Some(s), Some(t)),
            Some(RangeSelection { start: 0, count: 3 })
        );
        assert_eq!(select_range(6, Some(&by_sequence), None, None), None);
        let at = |seconds: i64| DateTime {
            date: Date::new(1970, 1, 1, 4),
            time: Time::new(0, 0, seconds as u8, 0),
        };
        // Strictly newer than 2 s: items 3, 4 (count 2).
        let newer = RangeSpec::ByTime {
            reference_time: at(2),
            count: 2,
        };
        assert_eq!(
            select_range(6, Some(&newer), Some(s), Some(t)),
            Some(RangeSelection { start: 3, count: 2 })
        );
        // Strictly older than 2 s, the last one: item 1.
        let older = RangeSpec::ByTime {
            reference_time: at(2),
            count: -1,
        };
        assert_eq!(
            select_range(6, Some(&older), Some(s), Some(t)),
            Some(RangeSelection { start: 1, count: 1 })
        );
    }

    #[test]
    fn buffer_wraps_sequence_numbers_and_drops_oldest() {
        let record = LogRecord {
            timestamp: DateTime {
                date: Date::new(2025, 1, 1, 3),
                time: Time::new(0, 0, 0, 0),
            },
            datum: LogDatum::Real(1.0),
            status_flags: None,
        };
        let mut buffer = LogBuffer::default();
        for _ in 0..5 {
            buffer.push(record.clone(), 3);
        }
        assert_eq!(buffer.len(), 3);
        assert_eq!(buffer.total(), 5);
        let sequences: Vec<u32> = buffer.records().map(|(s, _)| *s).collect();
        assert_eq!(sequences, [3, 4, 5]);
        buffer.total = u32::MAX;
        assert_eq!(buffer.push(record, 3), 1);
        buffer.clear();
        assert!(buffer.is_empty());
        assert_eq!(buffer.total(), 1);
    }
}
