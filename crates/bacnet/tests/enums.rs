//! Table checks for the generated enumerations: numbers against Clause 21, names,
//! aliases, unknown values and the object-identifier shorthand.

use std::collections::HashSet;
use std::str::FromStr;

use buildwire_bacnet::apdu::{ConfirmedServiceChoice, UnconfirmedServiceChoice};
use buildwire_bacnet::encoding::ObjectIdentifier;
use buildwire_bacnet::enums::*;
use buildwire_bacnet::network::NetworkMessageType;

macro_rules! check_table {
    ($ty:ty, $min:expr) => {{
        let all = <$ty>::ALL;
        assert!(
            all.len() >= $min,
            "{} has only {} values",
            stringify!($ty),
            all.len()
        );
        let mut numbers = HashSet::new();
        let mut names = HashSet::new();
        for &value in all {
            let number = value.to_u32();
            assert!(numbers.insert(number), "duplicate number {number}");
            let name = value.name().expect("listed values have names");
            assert!(names.insert(name), "duplicate name {name}");
            assert!(
                name.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "name {name:?} is not hyphenated lower case"
            );
            assert_eq!(<$ty>::from_u32(number), value);
            assert_eq!(<$ty>::from_str(name).unwrap(), value);
            assert_eq!(value.to_string(), name);
        }
    }};
}

#[test]
fn every_table_is_consistent() {
    check_table!(ObjectType, 65);
    check_table!(PropertyIdentifier, 500);
    check_table!(EngineeringUnits, 400);
    check_table!(ErrorClass, 8);
    check_table!(ErrorCode, 200);
    check_table!(RejectReason, 10);
    check_table!(AbortReason, 12);
    check_table!(Segmentation, 4);
    check_table!(EventState, 6);
    check_table!(Reliability, 20);
    check_table!(Polarity, 2);
    check_table!(BinaryPv, 2);
    check_table!(ConfirmedServiceChoice, 34);
    check_table!(UnconfirmedServiceChoice, 15);
    check_table!(NetworkMessageType, 20);
}

#[test]
fn numbers_match_clause_21() {
    let objects = [
        (ObjectType::AnalogInput, 0),
        (ObjectType::BinaryOutput, 4),
        (ObjectType::Device, 8),
        (ObjectType::MultiStateValue, 19),
        (ObjectType::TrendLog, 20),
        (ObjectType::NetworkPort, 56),
        (ObjectType::AuditReporter, 62),
    ];
    for (value, number) in objects {
        assert_eq!(value.to_u32(), number, "{value}");
    }
    let properties = [
        (PropertyIdentifier::Description, 28),
        (PropertyIdentifier::ObjectIdentifier, 75),
        (PropertyIdentifier::ObjectList, 76),
        (PropertyIdentifier::ObjectName, 77),
        (PropertyIdentifier::ObjectType, 79),
        (PropertyIdentifier::OutOfService, 81),
        (PropertyIdentifier::PresentValue, 85),
        (PropertyIdentifier::PriorityArray, 87),
        (PropertyIdentifier::RelinquishDefault, 104),
        (PropertyIdentifier::StatusFlags, 111),
        (PropertyIdentifier::Units, 117),
        (PropertyIdentifier::PropertyList, 371),
    ];
    for (value, number) in properties {
        assert_eq!(value.to_u32(), number, "{value}");
    }
    let units = [
        (EngineeringUnits::SquareMeters, 0),
        (EngineeringUnits::Kilowatts, 48),
        (EngineeringUnits::DegreesCelsius, 62),
        (EngineeringUnits::DegreesFahrenheit, 64),
        (EngineeringUnits::NoUnits, 95),
        (EngineeringUnits::Percent, 98),
        (EngineeringUnits::Millirems, 47814),
    ];
    for (value, number) in units {
        assert_eq!(value.to_u32(), number, "{value}");
    }
    assert_eq!(ErrorClass::Property.to_u32(), 2);
    assert_eq!(ErrorCode::UnknownObject.to_u32(), 31);
    assert_eq!(ErrorCode::UnknownProperty.to_u32(), 32);
    assert_eq!(ErrorCode::WriteAccessDenied.to_u32(), 40);
    assert_eq!(RejectReason::UnrecognizedService.to_u32(), 9);
    assert_eq!(AbortReason::SegmentationNotSupported.to_u32(), 4);
    assert_eq!(Segmentation::NoSegmentation.to_u32(), 3);
    assert_eq!(EventState::Offnormal.to_u32(), 2);
    assert_eq!(Reliability::NoFaultDetected.to_u32(), 0);
    assert_eq!(Polarity::Reverse.to_u32(), 1);
    assert_eq!(BinaryPv::Active.to_u32(), 1);
    assert_eq!(ConfirmedServiceChoice::ReadProperty.to_u32(), 12);
    assert_eq!(UnconfirmedServiceChoice::WhoIs.to_u32(), 8);
}

#[test]
fn aliases_used_by_tools() {
    let objects = [
        ("ai", ObjectType::AnalogInput),
        ("ao", ObjectType::AnalogOutput),
        ("av", ObjectType::AnalogValue),
        ("bi", ObjectType::BinaryInput),
        ("bo", ObjectType::BinaryOutput),
        ("bv", ObjectType::BinaryValue),
        ("msi", ObjectType::MultiStateInput),
        ("mso", ObjectType::MultiStateOutput),
        ("msv", ObjectType::MultiStateValue),
        ("dev", ObjectType::Device),
        ("device", ObjectType::Device),
        ("Analog_Input", ObjectType::AnalogInput),
    ];
    for (text, value) in objects {
        assert_eq!(text.parse::<ObjectType>().unwrap(), value, "{text}");
    }
    let properties = [
        ("pv", PropertyIdentifier::PresentValue),
        ("name", PropertyIdentifier::ObjectName),
        ("desc", PropertyIdentifier::Description),
        ("description", PropertyIdentifier::Description),
        ("units", PropertyIdentifier::Units),
        ("sf", PropertyIdentifier::StatusFlags),
        ("oos", PropertyIdentifier::OutOfService),
        ("85", PropertyIdentifier::PresentValue),
    ];
    for (text, value) in properties {
        assert_eq!(text.parse::<PropertyIdentifier>().unwrap(), value, "{text}");
    }
}

#[test]
fn unknown_and_proprietary_values_are_kept() {
    let vendor = ObjectType::from_u32(600);
    assert_eq!(vendor, ObjectType::Other(600));
    assert!(vendor.is_proprietary());
    assert_eq!(vendor.name(), None);
    assert_eq!(vendor.to_string(), "600");
    assert_eq!("600".parse::<ObjectType>().unwrap(), vendor);
    assert!(!ObjectType::from_u32(100).is_proprietary());
    assert!(PropertyIdentifier::from_u32(9000).is_proprietary());
    assert!(EngineeringUnits::from_u32(50_000).is_proprietary());
    assert!(!EngineeringUnits::from_u32(47_900).is_proprietary());
    assert_eq!(ErrorCode::from_u32(300), ErrorCode::Unknown(300));
    let err = "nonsense".parse::<PropertyIdentifier>().unwrap_err();
    assert_eq!(err.enumeration, "PropertyIdentifier");
    assert_eq!(err.input, "nonsense");
}

#[test]
fn object_identifier_shorthand() {
    let id: ObjectIdentifier = "analog-value:12".parse().unwrap();
    assert_eq!(id.object_type(), ObjectType::AnalogValue);
    assert_eq!(id.instance(), 12);
    assert_eq!(id.to_string(), "analog-value,12");
    assert_eq!(id.to_string().parse::<ObjectIdentifier>().unwrap(), id);
}
