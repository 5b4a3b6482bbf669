//! The `datatypes` fuzz target's driver run under proptest: random bytes, and valid
//! encodings of each datatype with bytes replaced and cut short, must never panic and
//! whatever decodes must re-encode stably.
#![allow(clippy::unwrap_used)]

use buildwire_bacnet::encoding::{
    ApplicationValue, BitString, DateTime, SpecialEventPeriod, Time, WeekNDay,
};
use buildwire_bacnet::{ObjectIdentifier, ObjectType, PropertyIdentifier};
use proptest::prelude::*;

include!("../fuzz/drivers/datatypes.rs");

fn encoded(selector: u8, encode: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut bytes = vec![selector];
    encode(&mut bytes);
    bytes
}

/// A valid encoding of most datatypes, with its selector byte in front.
fn seeds() -> Vec<Vec<u8>> {
    let day = Date {
        year_since_1900: 125,
        month: 6,
        day: 4,
        weekday: 3,
    };
    let device = ObjectIdentifier::new(ObjectType::Device, 999);
    let schedule = DailySchedule {
        day_schedule: vec![
            TimeValue {
                time: Time::new(8, 0, 0, 0),
                value: ApplicationValue::Real(72.0),
            },
            TimeValue {
                time: Time::new(18, 0, 0, 0),
                value: ApplicationValue::Null,
            },
        ],
    };
    let week_n_day = CalendarEntry::WeekNDay(WeekNDay {
        month: 11,
        week_of_month: 4,
        day_of_week: 4,
    });
    let recipient = RecipientProcess {
        recipient: Recipient::Address(BacnetAddress {
            network: 0,
            mac: vec![127, 0, 0, 1, 0xBA, 0xC0],
        }),
        process_identifier: 7,
    };
    let reference = ObjectPropertyReference {
        object: ObjectIdentifier::new(ObjectType::AnalogInput, 1),
        property: PropertyIdentifier::PresentValue,
        array_index: None,
    };
    vec![
        encoded(0, |b| {
            DateRange {
                start: day,
                end: Date::ANY,
            }
            .encode(b)
        }),
        encoded(1, |b| week_n_day.encode(b)),
        encoded(1, |b| CalendarEntry::Date(day).encode(b)),
        encoded(1, |b| {
            CalendarEntry::DateRange(DateRange {
                start: day,
                end: day,
            })
            .encode(b)
        }),
        encoded(3, |b| schedule.encode(b)),
        encoded(4, |b| {
            SpecialEvent {
                period: SpecialEventPeriod::CalendarReference(ObjectIdentifier::new(
                    ObjectType::Calendar,
                    1,
                )),
                time_values: schedule.day_schedule.clone(),
                event_priority: 10,
            }
            .encode(b);
        }),
        encoded(4, |b| {
            SpecialEvent {
                period: SpecialEventPeriod::CalendarEntry(week_n_day),
                time_values: vec![],
                event_priority: 16,
            }
            .encode(b);
        }),
        encoded(5, |b| {
            Destination {
                valid_days: BitString::from_bits(&[true; 7]),
                from_time: Time::new(0, 0, 0, 0),
                to_time: Time::new(23, 59, 59, 99),
                recipient: Recipient::Device(device),
                process_identifier: 1,
                issue_confirmed_notifications: true,
                transitions: BitString::from_bits(&[true, false, true]),
            }
            .encode(b);
        }),
        encoded(7, |b| recipient.encode(b)),
        encoded(9, |b| {
            CovSubscription {
                recipient: recipient.clone(),
                monitored: reference,
                issue_confirmed_notifications: false,
                time_remaining: 300,
                cov_increment: Some(0.5),
            }
            .encode(b);
        }),
        encoded(10, |b| {
            LogRecord {
                timestamp: DateTime {
                    date: day,
                    time: Time::new(10, 0, 0, 0),
                },
                datum: LogDatum::Real(21.5),
                status_flags: Some(BitString::from_bits(&[false; 4])),
            }
            .encode(b);
        }),
        encoded(12, |b| {
            DeviceObjectPropertyReference {
                object: reference.object,
                property: reference.property,
                array_index: Some(3),
                device: Some(device),
            }
            .encode(b);
        }),
    ]
}

#[test]
fn every_seed_decodes_and_round_trips() {
    for seed in seeds() {
        let (selector, payload) = seed.split_first().unwrap();
        let decodes = match selector % DATATYPES {
            0 => DateRange::decode(&mut Reader::new(payload)).is_ok(),
            1 => CalendarEntry::decode(&mut Reader::new(payload)).is_ok(),
            3 => DailySchedule::decode(&mut Reader::new(payload)).is_ok(),
            4 => SpecialEvent::decode(&mut Reader::new(payload)).is_ok(),
            5 => Destination::decode(&mut Reader::new(payload)).is_ok(),
            7 => RecipientProcess::decode(&mut Reader::new(payload)).is_ok(),
            9 => CovSubscription::decode(&mut Reader::new(payload)).is_ok(),
            10 => LogRecord::decode(&mut Reader::new(payload)).is_ok(),
            12 => DeviceObjectPropertyReference::decode(&mut Reader::new(payload)).is_ok(),
            other => panic!("no seed check for {other}"),
        };
        assert!(decodes, "seed {seed:02x?}");
        drive(&seed);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn random_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..200)) {
        drive(&data);
    }

    /// Valid encodings with a few bytes replaced and the end cut off.
    #[test]
    fn damaged_encodings_never_panic(
        pick in any::<prop::sample::Index>(),
        changes in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        keep in any::<prop::sample::Index>(),
    ) {
        let seeds = seeds();
        let mut data = seeds[pick.index(seeds.len())].clone();
        for (at, byte) in changes {
            let at = 1 + at.index(data.len() - 1);
            data[at] = byte;
        }
        data.truncate(1 + keep.index(data.len()));
        drive(&data);
    }
}
