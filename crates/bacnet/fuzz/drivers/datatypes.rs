// The datatypes fuzz driver, shared by fuzz/fuzz_targets/datatypes.rs (libFuzzer) and
// tests/datatypes_fuzz_driver.rs (proptest on stable): the constructed datatypes of
// schedules, calendars, notification classes, COV subscriptions and trend logs. The first
// byte picks the type; whatever decodes from the rest must re-encode to bytes that decode
// completely to a value with the same encoding, and date matching must not panic on any
// decoded entry. Included with include!, so no inner doc comments here.

use buildwire_bacnet::encoding::{
    BacnetAddress, CalendarEntry, CovSubscription, DailySchedule, Date, DateRange, DecodeError,
    Destination, DeviceObjectPropertyReference, LogDatum, LogRecord, ObjectPropertyReference,
    PropertyValue, Reader, Recipient, RecipientProcess, SpecialEvent, TimeValue,
};

/// How many datatypes the selector byte chooses among.
const DATATYPES: u8 = 15;

/// Decodes `bytes` as `T`; when that works, checks the encoding round trip.
fn round_trip<T>(
    bytes: &[u8],
    decode: impl Fn(&mut Reader<'_>) -> Result<T, DecodeError>,
    encode: impl Fn(&T, &mut Vec<u8>),
) -> Option<T> {
    let value = decode(&mut Reader::new(bytes)).ok()?;
    let mut first = Vec::new();
    encode(&value, &mut first);
    let mut reader = Reader::new(&first);
    let again = decode(&mut reader).expect("a re-encoded value decodes");
    reader
        .expect_end()
        .expect("a re-encoded value is read to its end");
    let mut second = Vec::new();
    encode(&again, &mut second);
    assert_eq!(first, second, "encodings differ after a round trip");
    Some(value)
}

/// A date from the last four input bytes (any octets, wildcards included).
fn date_from(data: &[u8]) -> Date {
    let at = |i: usize| data.len().checked_sub(i).and_then(|k| data.get(k)).copied();
    Date {
        year_since_1900: at(4).unwrap_or(125),
        month: at(3).unwrap_or(1),
        day: at(2).unwrap_or(1),
        weekday: at(1).unwrap_or(255),
    }
}

fn drive(data: &[u8]) {
    let Some((&selector, payload)) = data.split_first() else {
        return;
    };
    let day = date_from(payload);
    match selector % DATATYPES {
        0 => {
            if let Some(range) = round_trip(payload, DateRange::decode, DateRange::encode) {
                let _ = range.contains(&day);
            }
        }
        1 => {
            if let Some(entry) = round_trip(payload, CalendarEntry::decode, CalendarEntry::encode) {
                let _ = entry.matches(&day);
            }
        }
        2 => {
            round_trip(payload, TimeValue::decode, TimeValue::encode);
        }
        3 => {
            round_trip(payload, DailySchedule::decode, DailySchedule::encode);
        }
        4 => {
            round_trip(payload, SpecialEvent::decode, SpecialEvent::encode);
        }
        5 => {
            round_trip(payload, Destination::decode, Destination::encode);
        }
        6 => {
            round_trip(payload, Recipient::decode, Recipient::encode);
        }
        7 => {
            round_trip(payload, RecipientProcess::decode, RecipientProcess::encode);
        }
        8 => {
            round_trip(payload, BacnetAddress::decode, BacnetAddress::encode);
        }
        9 => {
            round_trip(payload, CovSubscription::decode, CovSubscription::encode);
        }
        10 => {
            round_trip(payload, LogRecord::decode, LogRecord::encode);
        }
        11 => {
            round_trip(payload, LogDatum::decode, LogDatum::encode);
        }
        12 => {
            round_trip(
                payload,
                DeviceObjectPropertyReference::decode,
                DeviceObjectPropertyReference::encode,
            );
        }
        13 => {
            round_trip(
                payload,
                ObjectPropertyReference::decode,
                ObjectPropertyReference::encode,
            );
        }
        _ => {
            round_trip(payload, PropertyValue::decode, PropertyValue::encode);
        }
    }
}
