//! The BACnet benchmark profiles (fixtures of the benchmarks; `bacnet serve --profile
//! stress|large` serves them too): `stress`, the 40-object device of the bac-py stress
//! server, and `large`, a device with N analog values.
//!
//! Written against the public API of `buildwire_bacnet` only, so that the bacnet crate's
//! own tests and fuzz targets include this same file (`#[path]`) instead of a copy.

use buildwire_bacnet::encoding::{
    ApplicationValue, CalendarEntry, DailySchedule, Destination, SpecialEvent,
};
use buildwire_bacnet::enums::{EngineeringUnits, ObjectType};
use buildwire_bacnet::objects::device::DeviceConfig;
use buildwire_bacnet::objects::object_types;
use buildwire_bacnet::objects::profile::{DeviceProfile, ObjectSpec};

/// The `stress` profile of the bac-py benchmarks: a Device and 39 objects (10 AI with
/// varied values and units, 5 AO, 5 commandable AV, 5 BI, 3 BO, 3 commandable BV, 3 MSI
/// with 4 states, 2 commandable MSV with 3 states, a Schedule, a Calendar and a
/// Notification Class).
pub fn stress_profile() -> DeviceProfile {
    const AI_UNITS: [EngineeringUnits; 10] = [
        EngineeringUnits::DegreesFahrenheit,
        EngineeringUnits::DegreesCelsius,
        EngineeringUnits::PercentRelativeHumidity,
        EngineeringUnits::Pascals,
        EngineeringUnits::LitersPerSecond,
        EngineeringUnits::Watts,
        EngineeringUnits::KilowattHours,
        EngineeringUnits::Amperes,
        EngineeringUnits::Volts,
        EngineeringUnits::Hertz,
    ];
    let device = DeviceConfig {
        instance: 400,
        name: "Docker-Stress-400".to_owned(),
        vendor_name: "bac-py".to_owned(),
        vendor_identifier: 0,
        model_name: "bac-py-docker-stress".to_owned(),
        ..DeviceConfig::default()
    };
    let mut objects = Vec::new();
    let mut add = |object_type, count: u32, prefix: &str, setup: &dyn Fn(u32, &mut ObjectSpec)| {
        for i in 1..=count {
            let mut spec = ObjectSpec::new(object_type, i, &format!("{prefix}-{i}"));
            setup(i, &mut spec);
            objects.push(spec);
        }
    };
    add(ObjectType::AnalogInput, 10, "AI", &|i, s| {
        s.present_value = Some(60.0 + i as f32 * 1.5);
        s.units = AI_UNITS[(i as usize - 1) % AI_UNITS.len()];
    });
    add(ObjectType::AnalogOutput, 5, "AO", &|i, s| {
        s.present_value = Some(50.0 + i as f32);
        s.units = EngineeringUnits::DegreesFahrenheit;
    });
    add(ObjectType::AnalogValue, 5, "AV", &|i, s| {
        s.present_value = Some(70.0 + i as f32);
        s.units = EngineeringUnits::DegreesFahrenheit;
        s.commandable = true;
    });
    add(ObjectType::BinaryInput, 5, "BI", &|_, _| {});
    add(ObjectType::BinaryOutput, 3, "BO", &|_, _| {});
    add(ObjectType::BinaryValue, 3, "BV", &|_, s| {
        s.commandable = true
    });
    add(ObjectType::MultiStateInput, 3, "MSI", &|_, s| {
        s.state_text = object_types::numbered_states(4);
    });
    add(ObjectType::MultiStateValue, 2, "MSV", &|_, s| {
        s.state_text = object_types::numbered_states(3);
        s.commandable = true;
    });
    add(ObjectType::Schedule, 1, "Schedule", &|_, s| {
        stress_schedule(s);
    });
    add(ObjectType::Calendar, 1, "Calendar", &|_, s| {
        s.date_list = stress_holidays();
    });
    add(ObjectType::NotificationClass, 1, "NC", &|_, s| {
        s.priority = [3, 3, 3];
        s.ack_required = [true, false, false];
        s.recipients = vec![Destination {
            valid_days: buildwire_bacnet::encoding::BitString::from_bits(&[true; 7]),
            from_time: buildwire_bacnet::encoding::Time::new(0, 0, 0, 0),
            to_time: buildwire_bacnet::encoding::Time::new(23, 59, 59, 99),
            recipient: buildwire_bacnet::encoding::Recipient::Device(
                buildwire_bacnet::ObjectIdentifier::new(ObjectType::Device, 999),
            ),
            process_identifier: 1,
            issue_confirmed_notifications: false,
            transitions: buildwire_bacnet::encoding::BitString::from_bits(&[true, true, true]),
        }];
    });
    DeviceProfile { device, objects }
}

/// The stress Schedule: occupied 08:00-18:00 on weekdays (REAL 72.0, else the default
/// 65.0), 60.0 all day on the holidays of Calendar 1 (event priority 10). It writes to no
/// object, so the other stress objects keep their values.
fn stress_schedule(spec: &mut ObjectSpec) {
    use buildwire_bacnet::encoding::{SpecialEventPeriod, Time, TimeValue};
    let occupied = DailySchedule {
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
    let mut week = vec![occupied; 5];
    week.extend([DailySchedule::default(), DailySchedule::default()]);
    spec.weekly_schedule = Some(week);
    spec.schedule_default = Some(ApplicationValue::Real(65.0));
    spec.exception_schedule = vec![SpecialEvent {
        period: SpecialEventPeriod::CalendarReference(buildwire_bacnet::ObjectIdentifier::new(
            ObjectType::Calendar,
            1,
        )),
        time_values: vec![TimeValue {
            time: Time::new(0, 0, 0, 0),
            value: ApplicationValue::Real(60.0),
        }],
        event_priority: 10,
    }];
}

/// The stress Calendar's holidays: January 1, December 25 (any year) and the fourth
/// Thursday of November.
fn stress_holidays() -> Vec<CalendarEntry> {
    use buildwire_bacnet::encoding::{Date, WeekNDay, date_time::UNSPECIFIED};
    let yearly = |month, day| {
        CalendarEntry::Date(Date {
            year_since_1900: UNSPECIFIED,
            month,
            day,
            weekday: UNSPECIFIED,
        })
    };
    vec![
        yearly(1, 1),
        yearly(12, 25),
        CalendarEntry::WeekNDay(WeekNDay {
            month: 11,
            week_of_month: 4,
            day_of_week: 4,
        }),
    ]
}

/// The `large` profile: a Device and `analog_values` analog values `AV-1..`, so the
/// object-list holds `analog_values + 1` entries.
pub fn large_profile(analog_values: u32) -> DeviceProfile {
    let device = DeviceConfig {
        instance: 500,
        name: "buildwire-large".to_owned(),
        ..DeviceConfig::default()
    };
    let objects = (1..=analog_values)
        .map(|i| {
            let mut spec = ObjectSpec::new(ObjectType::AnalogValue, i, &format!("AV-{i}"));
            spec.present_value = Some((i % 1000) as f32 / 10.0);
            spec.units = EngineeringUnits::DegreesCelsius;
            spec
        })
        .collect();
    DeviceProfile { device, objects }
}
