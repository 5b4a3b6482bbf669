//! Object database tests (Clause 12, Clause 19.2): required properties with their
//! datatypes, property-list, command prioritization, access rules and every error path,
//! object-list indexing, the stress/large profiles and the JSON profile format.

#[allow(dead_code)]
#[path = "../../bench/src/bacnet/profiles.rs"]
mod profiles;

use buildwire_bacnet::encoding::abstract_syntax::encode_elements;
use buildwire_bacnet::encoding::{
    ApplicationTag, ApplicationValue, BitString, Date, DateTime, Element, ObjectIdentifier, Time,
};
use buildwire_bacnet::enums::{
    BinaryPv, EngineeringUnits, ErrorClass, ErrorCode, ObjectType, PropertyIdentifier as P,
};
use buildwire_bacnet::objects::database::{ObjectDatabase, PropertyChange};
use buildwire_bacnet::objects::device::{
    DeviceConfig, OBJECT_TYPES_SUPPORTED_BITS, PROTOCOL_REVISION, SERVICES_SUPPORTED_BITS,
    ServiceSupported,
};
use buildwire_bacnet::objects::object_types::{self, AnalogSettings};
use buildwire_bacnet::objects::profile::{DeviceProfile, ObjectSpec};
use buildwire_bacnet::objects::{Object, PropertyData, PropertyError, PropertySelection};
use profiles::{large_profile, stress_profile};
use proptest::prelude::*;
use std::sync::{Arc, Mutex};

fn id(object_type: ObjectType, instance: u32) -> ObjectIdentifier {
    ObjectIdentifier::new(object_type, instance)
}

fn app(value: ApplicationValue) -> Vec<Element> {
    vec![Element::Application(value)]
}

fn real(value: f32) -> Vec<Element> {
    app(ApplicationValue::Real(value))
}

fn null() -> Vec<Element> {
    app(ApplicationValue::Null)
}

fn single(elements: Vec<Element>) -> ApplicationValue {
    match elements.as_slice() {
        [Element::Application(value)] => value.clone(),
        other => panic!("expected one application value, got {other:?}"),
    }
}

fn stress() -> ObjectDatabase {
    match stress_profile().build() {
        Ok(db) => db,
        Err(error) => panic!("stress profile: {error}"),
    }
}

fn read(db: &ObjectDatabase, object: ObjectIdentifier, property: P) -> ApplicationValue {
    match db.read_property(object, property, None) {
        Ok(value) => single(value),
        Err(error) => panic!("{object} {property}: {error}"),
    }
}

/// The datatype each required property must have (Clause 12 tables), or `None` for
/// constructed values checked separately.
fn expected_tag(object_type: ObjectType, property: P) -> Option<ApplicationTag> {
    use ApplicationTag as T;
    Some(match property {
        P::ObjectIdentifier => T::ObjectIdentifier,
        P::ObjectName
        | P::VendorName
        | P::ModelName
        | P::FirmwareRevision
        | P::ApplicationSoftwareVersion => T::CharacterString,
        P::ObjectType
        | P::EventState
        | P::Units
        | P::Polarity
        | P::SystemStatus
        | P::SegmentationSupported
        | P::Reliability => T::Enumerated,
        P::StatusFlags
        | P::ProtocolServicesSupported
        | P::ProtocolObjectTypesSupported
        | P::AckRequired => T::BitString,
        P::OutOfService => T::Boolean,
        P::NumberOfStates
        | P::VendorIdentifier
        | P::ProtocolVersion
        | P::ProtocolRevision
        | P::MaxApduLengthAccepted
        | P::ApduTimeout
        | P::NumberOfApduRetries
        | P::DatabaseRevision
        | P::PriorityForWriting
        | P::NotificationClass => T::Unsigned,
        P::PresentValue | P::RelinquishDefault | P::ScheduleDefault => match object_type {
            ObjectType::AnalogInput
            | ObjectType::AnalogOutput
            | ObjectType::AnalogValue
            | ObjectType::Schedule => T::Real,
            ObjectType::BinaryInput | ObjectType::BinaryOutput | ObjectType::BinaryValue => {
                T::Enumerated
            }
            ObjectType::MultiStateInput | ObjectType::MultiStateValue => T::Unsigned,
            ObjectType::Calendar => T::Boolean,
            _ => return None,
        },
        _ => return None,
    })
}

/// Required properties per type, written out independently from the implementation
/// (ASHRAE 135-2020 Clause 12 tables; commandable ones add priority-array,
/// relinquish-default and current-command-priority).
fn clause_12_required(object_type: ObjectType, commandable: bool) -> Vec<P> {
    let mut out = vec![
        P::ObjectIdentifier,
        P::ObjectName,
        P::ObjectType,
        P::PropertyList,
    ];
    let point = [
        P::PresentValue,
        P::StatusFlags,
        P::EventState,
        P::OutOfService,
    ];
    match object_type {
        ObjectType::AnalogInput | ObjectType::AnalogOutput | ObjectType::AnalogValue => {
            out.extend(point);
            out.push(P::Units);
        }
        ObjectType::BinaryInput | ObjectType::BinaryOutput => {
            out.extend(point);
            out.push(P::Polarity);
        }
        ObjectType::BinaryValue => out.extend(point),
        ObjectType::MultiStateInput | ObjectType::MultiStateValue => {
            out.extend(point);
            out.push(P::NumberOfStates);
        }
        ObjectType::Device => out.extend([
            P::SystemStatus,
            P::VendorName,
            P::VendorIdentifier,
            P::ModelName,
            P::FirmwareRevision,
            P::ApplicationSoftwareVersion,
            P::ProtocolVersion,
            P::ProtocolRevision,
            P::ProtocolServicesSupported,
            P::ProtocolObjectTypesSupported,
            P::ObjectList,
            P::MaxApduLengthAccepted,
            P::SegmentationSupported,
            P::ApduTimeout,
            P::NumberOfApduRetries,
            P::DeviceAddressBinding,
            P::DatabaseRevision,
        ]),
        ObjectType::Schedule => out.extend([
            P::PresentValue,
            P::EffectivePeriod,
            P::ScheduleDefault,
            P::ListOfObjectPropertyReferences,
            P::PriorityForWriting,
            P::StatusFlags,
            P::Reliability,
            P::OutOfService,
        ]),
        ObjectType::Calendar => out.extend([P::PresentValue, P::DateList]),
        ObjectType::NotificationClass => {
            out.extend([
                P::NotificationClass,
                P::Priority,
                P::AckRequired,
                P::RecipientList,
            ]);
        }
        other => panic!("no table for {other}"),
    }
    if commandable {
        out.extend([
            P::PriorityArray,
            P::RelinquishDefault,
            P::CurrentCommandPriority,
        ]);
    }
    out
}

#[test]
fn every_required_property_is_readable_with_its_datatype() {
    let db = stress();
    for object in db.objects() {
        let object_type = object.object_type();
        let required = object.select(PropertySelection::Required);
        let expected = clause_12_required(object_type, object.is_commandable());
        for property in &expected {
            assert!(
                required.contains(property),
                "{object_type} lacks required {property}"
            );
        }
        for property in expected {
            let value = db
                .read_property(object.identifier(), property, None)
                .unwrap_or_else(|e| panic!("{object_type} {property}: {e}"));
            if let Some(tag) = expected_tag(object_type, property) {
                assert_eq!(single(value).tag(), tag, "{object_type} {property}");
            }
        }
        if object.has(P::StatusFlags) {
            match read(&db, object.identifier(), P::StatusFlags) {
                ApplicationValue::BitString(bits) => assert_eq!(bits.len(), 4),
                other => panic!("status-flags {other:?}"),
            }
        }
        if object.is_commandable() {
            let array = db
                .read_property(object.identifier(), P::PriorityArray, None)
                .unwrap();
            assert_eq!(array.len(), 16);
        }
    }
}

#[test]
fn optional_properties_and_selection() {
    let db = stress();
    let ai = db.get(id(ObjectType::AnalogInput, 1)).unwrap();
    let optional = ai.select(PropertySelection::Optional);
    for property in [P::Description, P::Reliability, P::CovIncrement] {
        assert!(optional.contains(&property), "{property}");
    }
    assert!(!optional.contains(&P::PresentValue));
    let all = ai.select(PropertySelection::All);
    assert_eq!(
        all.len(),
        ai.select(PropertySelection::Required).len() + optional.len()
    );
    let msv = db.get(id(ObjectType::MultiStateValue, 1)).unwrap();
    assert_eq!(
        db.read_property(msv.identifier(), P::StateText, Some(0))
            .unwrap(),
        app(ApplicationValue::Unsigned(3))
    );
    assert_eq!(
        db.read_property(msv.identifier(), P::StateText, Some(2))
            .unwrap(),
        app(ApplicationValue::CharacterString("State 2".into()))
    );
}

#[test]
fn rpm_selections_read_every_property() {
    let db = stress();
    let device = db.device_identifier();
    let all = db.read_selection(device, PropertySelection::All).unwrap();
    assert_eq!(all.len(), db.device().unwrap().all_properties().count());
    let (_, object_list) = all.iter().find(|(p, _)| *p == P::ObjectList).unwrap();
    assert_eq!(object_list.as_ref().map(Vec::len), Ok(40));
    assert!(all.iter().all(|(_, result)| result.is_ok()));
    let required = db
        .read_selection(device, PropertySelection::Required)
        .unwrap();
    let optional = db
        .read_selection(device, PropertySelection::Optional)
        .unwrap();
    assert_eq!(required.len() + optional.len(), all.len());
    assert!(optional.iter().any(|(p, _)| *p == P::LocalDate));
    assert!(required.iter().any(|(p, _)| *p == P::DatabaseRevision));
    assert_eq!(
        db.read_selection(id(ObjectType::Lift, 1), PropertySelection::All),
        Err(PropertyError::UNKNOWN_OBJECT)
    );
}

#[test]
fn property_list_excludes_the_four_and_lists_the_rest() {
    let db = stress();
    for object in db.objects() {
        let listed: Vec<P> = db
            .read_property(object.identifier(), P::PropertyList, None)
            .unwrap()
            .into_iter()
            .map(|e| match e {
                Element::Application(ApplicationValue::Enumerated(n)) => P::from_u32(n),
                other => panic!("{other:?}"),
            })
            .collect();
        for excluded in [
            P::ObjectIdentifier,
            P::ObjectName,
            P::ObjectType,
            P::PropertyList,
        ] {
            assert!(!listed.contains(&excluded));
        }
        let all: Vec<P> = object.all_properties().collect();
        assert_eq!(listed.len() + 4, all.len(), "{}", object.object_type());
        for property in &listed {
            assert!(all.contains(property));
            assert_eq!(listed.iter().filter(|p| *p == property).count(), 1);
        }
        let count = db
            .read_property(object.identifier(), P::PropertyList, Some(0))
            .unwrap();
        assert_eq!(count, app(ApplicationValue::Unsigned(listed.len() as u64)));
    }
}

#[test]
fn command_priority_sequence_ends_at_relinquish_default() {
    let mut db = stress();
    let av = id(ObjectType::AnalogValue, 1);
    assert_eq!(read(&db, av, P::PresentValue), ApplicationValue::Real(71.0));
    assert_eq!(
        read(&db, av, P::CurrentCommandPriority),
        ApplicationValue::Null
    );

    let changes = db
        .write_property(av, P::PresentValue, None, &real(10.0), Some(8))
        .unwrap();
    assert!(changes.contains(&PropertyChange {
        object: av,
        property: P::PresentValue
    }));
    assert!(changes.contains(&PropertyChange {
        object: av,
        property: P::PriorityArray
    }));
    assert_eq!(read(&db, av, P::PresentValue), ApplicationValue::Real(10.0));
    assert_eq!(
        read(&db, av, P::CurrentCommandPriority),
        ApplicationValue::Unsigned(8)
    );

    db.write_property(av, P::PresentValue, None, &real(20.0), Some(3))
        .unwrap();
    assert_eq!(read(&db, av, P::PresentValue), ApplicationValue::Real(20.0));
    assert_eq!(
        db.read_property(av, P::PriorityArray, Some(3)).unwrap(),
        real(20.0)
    );
    assert_eq!(
        db.read_property(av, P::PriorityArray, Some(8)).unwrap(),
        real(10.0)
    );
    assert_eq!(
        db.read_property(av, P::PriorityArray, Some(1)).unwrap(),
        null()
    );
    assert_eq!(
        db.read_property(av, P::PriorityArray, Some(0)).unwrap(),
        app(ApplicationValue::Unsigned(16))
    );

    db.write_property(av, P::PresentValue, None, &null(), Some(3))
        .unwrap();
    assert_eq!(read(&db, av, P::PresentValue), ApplicationValue::Real(10.0));
    db.write_property(av, P::PresentValue, None, &null(), Some(8))
        .unwrap();
    assert_eq!(read(&db, av, P::PresentValue), ApplicationValue::Real(71.0));
    assert_eq!(
        read(&db, av, P::CurrentCommandPriority),
        ApplicationValue::Null
    );

    // Relinquishing an empty slot changes nothing.
    let changes = db
        .write_property(av, P::PresentValue, None, &null(), Some(8))
        .unwrap();
    assert!(changes.is_empty());

    // A new relinquish-default shows through when no slot is commanded.
    let changes = db
        .write_property(av, P::RelinquishDefault, None, &real(5.0), None)
        .unwrap();
    assert!(changes.contains(&PropertyChange {
        object: av,
        property: P::PresentValue
    }));
    assert_eq!(read(&db, av, P::PresentValue), ApplicationValue::Real(5.0));
}

#[test]
fn write_without_priority_uses_sixteen() {
    let mut db = stress();
    let bo = id(ObjectType::BinaryOutput, 1);
    db.write_property(
        bo,
        P::PresentValue,
        None,
        &app(ApplicationValue::Enumerated(1)),
        None,
    )
    .unwrap();
    assert_eq!(
        db.read_property(bo, P::PriorityArray, Some(16)).unwrap(),
        app(ApplicationValue::Enumerated(1))
    );
    assert_eq!(
        read(&db, bo, P::CurrentCommandPriority),
        ApplicationValue::Unsigned(16)
    );
}

#[test]
fn non_commandable_value_is_a_plain_write() {
    let mut db = ObjectDatabase::new(&DeviceConfig::default());
    let object = object_types::analog(
        ObjectType::AnalogValue,
        9,
        "plain",
        &AnalogSettings::default(),
        false,
    );
    assert!(!object.has(P::PriorityArray));
    db.add(object).unwrap();
    let av = id(ObjectType::AnalogValue, 9);
    db.write_property(av, P::PresentValue, None, &real(3.5), Some(4))
        .unwrap();
    assert_eq!(read(&db, av, P::PresentValue), ApplicationValue::Real(3.5));
    assert_eq!(
        db.write_property(av, P::PresentValue, None, &null(), Some(4)),
        Err(PropertyError::INVALID_DATA_TYPE)
    );
    assert_eq!(
        db.read_property(av, P::PriorityArray, None),
        Err(PropertyError::UNKNOWN_PROPERTY)
    );
}

#[test]
fn input_present_value_writable_only_out_of_service() {
    let mut db = stress();
    let ai = id(ObjectType::AnalogInput, 2);
    assert_eq!(
        db.write_property(ai, P::PresentValue, None, &real(1.0), None),
        Err(PropertyError::WRITE_ACCESS_DENIED)
    );
    let changes = db
        .write_property(
            ai,
            P::OutOfService,
            None,
            &app(ApplicationValue::Boolean(true)),
            None,
        )
        .unwrap();
    assert!(changes.contains(&PropertyChange {
        object: ai,
        property: P::StatusFlags
    }));
    assert_eq!(
        read(&db, ai, P::StatusFlags),
        ApplicationValue::BitString(BitString::from_bits(&[false, false, false, true]))
    );
    db.write_property(ai, P::PresentValue, None, &real(1.0), None)
        .unwrap();
    assert_eq!(read(&db, ai, P::PresentValue), ApplicationValue::Real(1.0));

    let bi = id(ObjectType::BinaryInput, 1);
    db.write_property(
        bi,
        P::OutOfService,
        None,
        &app(ApplicationValue::Boolean(true)),
        None,
    )
    .unwrap();
    db.write_property(
        bi,
        P::PresentValue,
        None,
        &app(ApplicationValue::Enumerated(1)),
        None,
    )
    .unwrap();
    let msi = id(ObjectType::MultiStateInput, 1);
    db.write_property(
        msi,
        P::OutOfService,
        None,
        &app(ApplicationValue::Boolean(true)),
        None,
    )
    .unwrap();
    assert_eq!(
        db.write_property(
            msi,
            P::PresentValue,
            None,
            &app(ApplicationValue::Unsigned(5)),
            None
        ),
        Err(PropertyError::VALUE_OUT_OF_RANGE)
    );
    db.write_property(
        msi,
        P::PresentValue,
        None,
        &app(ApplicationValue::Unsigned(4)),
        None,
    )
    .unwrap();
}

#[test]
fn status_flags_follow_event_state_and_reliability() {
    let mut db = stress();
    let ai = id(ObjectType::AnalogInput, 3);
    db.set_local(
        ai,
        P::EventState,
        PropertyData::Single(ApplicationValue::Enumerated(3)),
    )
    .unwrap();
    // Reliability can be forced over the network only while out of service.
    assert_eq!(
        db.write_property(
            ai,
            P::Reliability,
            None,
            &app(ApplicationValue::Enumerated(1)),
            None
        ),
        Err(PropertyError::WRITE_ACCESS_DENIED)
    );
    db.set_local(
        ai,
        P::Reliability,
        PropertyData::Single(ApplicationValue::Enumerated(1)),
    )
    .unwrap();
    assert_eq!(
        read(&db, ai, P::StatusFlags),
        ApplicationValue::BitString(BitString::from_bits(&[true, true, false, false]))
    );
    // Clause 20.2.10 encoding of that bit string: 4 unused bits, then 1100_0000.
    let mut buf = Vec::new();
    encode_elements(
        &db.read_property(ai, P::StatusFlags, None).unwrap(),
        &mut buf,
    );
    assert_eq!(buf, [0x82, 0x04, 0xC0]);
}

#[test]
fn error_paths() {
    let mut db = stress();
    let msv = id(ObjectType::MultiStateValue, 1);
    let bv = id(ObjectType::BinaryValue, 1);
    let av = id(ObjectType::AnalogValue, 1);
    let missing = id(ObjectType::AnalogValue, 99);
    let unsigned = |n| app(ApplicationValue::Unsigned(n));

    let unknown_object = PropertyError {
        class: ErrorClass::Object,
        code: ErrorCode::UnknownObject,
    };
    assert_eq!(
        db.read_property(missing, P::PresentValue, None),
        Err(unknown_object)
    );
    assert_eq!(
        db.write_property(missing, P::PresentValue, None, &real(1.0), None),
        Err(unknown_object)
    );

    let property = |code| PropertyError {
        class: ErrorClass::Property,
        code,
    };
    assert_eq!(
        db.read_property(av, P::Polarity, None),
        Err(property(ErrorCode::UnknownProperty))
    );
    assert_eq!(
        db.write_property(av, P::NumberOfStates, None, &unsigned(1), None),
        Err(property(ErrorCode::UnknownProperty))
    );
    assert_eq!(
        db.write_property(
            av,
            P::ObjectType,
            None,
            &app(ApplicationValue::Enumerated(2)),
            None
        ),
        Err(property(ErrorCode::WriteAccessDenied))
    );
    assert_eq!(
        db.write_property(av, P::StatusFlags, None, &real(0.0), None),
        Err(property(ErrorCode::WriteAccessDenied))
    );
    assert_eq!(
        db.read_property(av, P::PriorityArray, Some(17)),
        Err(property(ErrorCode::InvalidArrayIndex))
    );
    assert_eq!(
        db.read_property(av, P::PresentValue, Some(1)),
        Err(property(ErrorCode::PropertyIsNotAnArray))
    );
    assert_eq!(
        db.write_property(av, P::PresentValue, Some(1), &real(1.0), None),
        Err(property(ErrorCode::PropertyIsNotAnArray))
    );
    for bad in [0, 4] {
        assert_eq!(
            db.write_property(msv, P::PresentValue, None, &unsigned(bad), Some(5)),
            Err(property(ErrorCode::ValueOutOfRange)),
            "msv {bad}"
        );
    }
    db.write_property(msv, P::PresentValue, None, &unsigned(3), Some(5))
        .unwrap();
    assert_eq!(
        read(&db, msv, P::PresentValue),
        ApplicationValue::Unsigned(3)
    );
    assert_eq!(
        db.write_property(
            bv,
            P::PresentValue,
            None,
            &app(ApplicationValue::Enumerated(2)),
            None
        ),
        Err(property(ErrorCode::ValueOutOfRange))
    );
    assert_eq!(
        db.write_property(bv, P::PresentValue, None, &real(1.0), None),
        Err(property(ErrorCode::InvalidDataType))
    );
    assert_eq!(
        db.write_property(av, P::PresentValue, None, &unsigned(1), None),
        Err(property(ErrorCode::InvalidDataType))
    );
    assert_eq!(
        db.write_property(av, P::PresentValue, None, &[], None),
        Err(property(ErrorCode::InvalidDataType))
    );
    assert_eq!(
        db.write_property(av, P::Description, None, &real(1.0), None),
        Err(property(ErrorCode::InvalidDataType))
    );
    assert_eq!(
        db.write_property(
            msv,
            P::StateText,
            Some(4),
            &app(ApplicationValue::CharacterString("x".into())),
            None
        ),
        Err(property(ErrorCode::InvalidArrayIndex))
    );
    assert_eq!(
        db.write_property(msv, P::StateText, Some(1), &unsigned(1), None),
        Err(property(ErrorCode::InvalidDataType))
    );
    db.write_property(
        msv,
        P::StateText,
        Some(1),
        &app(ApplicationValue::CharacterString("Off".into())),
        None,
    )
    .unwrap();
    assert_eq!(
        db.read_property(msv, P::StateText, Some(1)).unwrap(),
        app(ApplicationValue::CharacterString("Off".into()))
    );
    assert_eq!(
        db.write_property(av, P::PresentValue, None, &real(1.0), Some(17)),
        Err(PropertyError {
            class: ErrorClass::Services,
            code: ErrorCode::ParameterOutOfRange
        })
    );
    assert_eq!(
        db.write_property(
            av,
            P::ObjectName,
            None,
            &app(ApplicationValue::CharacterString("AI-1".into())),
            None
        ),
        Err(property(ErrorCode::DuplicateName))
    );
    assert_eq!(db.get(av).unwrap().name(), "AV-1");
    assert_eq!(
        db.write_property(
            db.device_identifier(),
            P::ObjectList,
            Some(1),
            &app(ApplicationValue::ObjectIdentifier(av)),
            None
        ),
        Err(property(ErrorCode::WriteAccessDenied))
    );
}

#[test]
fn cov_increment_and_priority_for_writing_ranges() {
    let mut db = stress();
    let ai = id(ObjectType::AnalogInput, 1);
    assert_eq!(
        db.write_property(ai, P::CovIncrement, None, &real(-1.0), None),
        Err(PropertyError::VALUE_OUT_OF_RANGE)
    );
    db.write_property(ai, P::CovIncrement, None, &real(0.5), None)
        .unwrap();
    assert_eq!(read(&db, ai, P::CovIncrement), ApplicationValue::Real(0.5));
    let schedule = id(ObjectType::Schedule, 1);
    for bad in [0, 17] {
        assert_eq!(
            db.write_property(
                schedule,
                P::PriorityForWriting,
                None,
                &app(ApplicationValue::Unsigned(bad)),
                None
            ),
            Err(PropertyError::VALUE_OUT_OF_RANGE)
        );
    }
    db.write_property(
        schedule,
        P::PriorityForWriting,
        None,
        &app(ApplicationValue::Unsigned(8)),
        None,
    )
    .unwrap();
    // Schedule present-value follows the inputs' rule: writable only out of service.
    assert_eq!(
        db.write_property(schedule, P::PresentValue, None, &real(1.0), None),
        Err(PropertyError::WRITE_ACCESS_DENIED)
    );
}

#[test]
fn min_max_pres_value_bound_writes() {
    let mut db = ObjectDatabase::new(&DeviceConfig::default());
    let settings = AnalogSettings {
        present_value: 50.0,
        min_pres_value: Some(0.0),
        max_pres_value: Some(100.0),
        ..AnalogSettings::default()
    };
    db.add(object_types::analog(
        ObjectType::AnalogOutput,
        1,
        "valve",
        &settings,
        false,
    ))
    .unwrap();
    let ao = id(ObjectType::AnalogOutput, 1);
    for bad in [-0.5, 100.5, f32::NAN] {
        assert_eq!(
            db.write_property(ao, P::PresentValue, None, &real(bad), Some(8)),
            Err(PropertyError::VALUE_OUT_OF_RANGE)
        );
    }
    db.write_property(ao, P::PresentValue, None, &real(100.0), Some(8))
        .unwrap();
    assert_eq!(
        read(&db, ao, P::PresentValue),
        ApplicationValue::Real(100.0)
    );
    assert_eq!(read(&db, ao, P::MinPresValue), ApplicationValue::Real(0.0));
}

#[test]
fn object_list_by_index() {
    let db = stress();
    let device = db.device_identifier();
    assert_eq!(device, id(ObjectType::Device, 400));
    assert_eq!(
        db.read_property(device, P::ObjectList, Some(0)).unwrap(),
        app(ApplicationValue::Unsigned(40))
    );
    assert_eq!(
        db.read_property(device, P::ObjectList, Some(1)).unwrap(),
        app(ApplicationValue::ObjectIdentifier(device))
    );
    assert_eq!(
        db.read_property(device, P::ObjectList, Some(2)).unwrap(),
        app(ApplicationValue::ObjectIdentifier(id(
            ObjectType::AnalogInput,
            1
        )))
    );
    assert_eq!(
        db.read_property(device, P::ObjectList, Some(40)).unwrap(),
        app(ApplicationValue::ObjectIdentifier(id(
            ObjectType::NotificationClass,
            1
        )))
    );
    assert_eq!(
        db.read_property(device, P::ObjectList, Some(41)),
        Err(PropertyError::INVALID_ARRAY_INDEX)
    );
    assert_eq!(
        db.read_property(device, P::ObjectList, None).unwrap().len(),
        40
    );
}

#[test]
fn stress_profile_counts() {
    let db = stress();
    assert_eq!(db.len(), 40);
    let count = |t| db.objects().filter(|o| o.object_type() == t).count();
    for (object_type, expected) in [
        (ObjectType::Device, 1),
        (ObjectType::AnalogInput, 10),
        (ObjectType::AnalogOutput, 5),
        (ObjectType::AnalogValue, 5),
        (ObjectType::BinaryInput, 5),
        (ObjectType::BinaryOutput, 3),
        (ObjectType::BinaryValue, 3),
        (ObjectType::MultiStateInput, 3),
        (ObjectType::MultiStateValue, 2),
        (ObjectType::Schedule, 1),
        (ObjectType::Calendar, 1),
        (ObjectType::NotificationClass, 1),
    ] {
        assert_eq!(count(object_type), expected, "{object_type}");
    }
    for object in db.objects() {
        let expected = matches!(
            object.object_type(),
            ObjectType::AnalogOutput
                | ObjectType::AnalogValue
                | ObjectType::BinaryOutput
                | ObjectType::BinaryValue
                | ObjectType::MultiStateValue
        );
        assert_eq!(object.is_commandable(), expected, "{}", object.name());
    }
    let ai5 = id(ObjectType::AnalogInput, 5);
    assert_eq!(
        read(&db, ai5, P::PresentValue),
        ApplicationValue::Real(67.5)
    );
    assert_eq!(
        read(&db, ai5, P::Units),
        ApplicationValue::Enumerated(EngineeringUnits::LitersPerSecond.to_u32())
    );
    let msi = id(ObjectType::MultiStateInput, 3);
    assert_eq!(
        read(&db, msi, P::NumberOfStates),
        ApplicationValue::Unsigned(4)
    );
    let nc = id(ObjectType::NotificationClass, 1);
    assert_eq!(
        db.read_property(nc, P::Priority, Some(2)).unwrap(),
        app(ApplicationValue::Unsigned(3))
    );
    assert_eq!(
        read(&db, nc, P::AckRequired),
        ApplicationValue::BitString(BitString::from_bits(&[true, false, false]))
    );
    assert_eq!(
        db.get_by_name("MSV-2").unwrap().identifier(),
        id(ObjectType::MultiStateValue, 2)
    );
}

#[test]
fn large_profile_object_list_has_1500_entries() {
    let db = large_profile(1499).build().unwrap();
    let device = db.device_identifier();
    assert_eq!(
        db.read_property(device, P::ObjectList, Some(0)).unwrap(),
        app(ApplicationValue::Unsigned(1500))
    );
    assert_eq!(
        db.read_property(device, P::ObjectList, Some(1500)).unwrap(),
        app(ApplicationValue::ObjectIdentifier(id(
            ObjectType::AnalogValue,
            1499
        )))
    );
    assert_eq!(
        db.read_property(device, P::ObjectList, None).unwrap().len(),
        1500
    );
    assert_eq!(
        db.read_property(device, P::ObjectList, Some(1501)),
        Err(PropertyError::INVALID_ARRAY_INDEX)
    );
}

#[test]
fn device_properties() {
    let mut db = stress();
    let device = db.device_identifier();
    assert_eq!(
        read(&db, device, P::ProtocolVersion),
        ApplicationValue::Unsigned(1)
    );
    assert_eq!(
        read(&db, device, P::ProtocolRevision),
        ApplicationValue::Unsigned(PROTOCOL_REVISION)
    );
    assert_eq!(
        read(&db, device, P::VendorName),
        ApplicationValue::CharacterString("bac-py".into())
    );
    match read(&db, device, P::ProtocolServicesSupported) {
        ApplicationValue::BitString(bits) => {
            assert_eq!(bits.len(), SERVICES_SUPPORTED_BITS);
            assert!(bits.get(ServiceSupported::ReadProperty.to_u32() as usize));
            assert!(bits.get(12) && bits.get(14) && bits.get(15) && bits.get(34));
            assert!(bits.get(ServiceSupported::SubscribeCov.to_u32() as usize));
            assert!(!bits.get(ServiceSupported::AtomicReadFile.to_u32() as usize));
        }
        other => panic!("{other:?}"),
    }
    match read(&db, device, P::ProtocolObjectTypesSupported) {
        ApplicationValue::BitString(bits) => {
            assert_eq!(bits.len(), OBJECT_TYPES_SUPPORTED_BITS);
            for t in [0, 1, 2, 3, 4, 5, 6, 8, 13, 15, 17, 19, 20] {
                assert!(bits.get(t), "type {t}");
            }
            assert!(!bits.get(7) && !bits.get(10) && !bits.get(21));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        read(&db, device, P::DatabaseRevision),
        ApplicationValue::Unsigned(39)
    );
    assert_eq!(
        read(&db, device, P::LocalDate),
        ApplicationValue::Date(Date::ANY)
    );
    let now = DateTime {
        date: Date::new(2026, 11, 22, 7),
        time: Time::new(5, 30, 0, 0),
    };
    db.set_clock(now);
    assert_eq!(
        read(&db, device, P::LocalDate),
        ApplicationValue::Date(now.date)
    );
    assert_eq!(
        read(&db, device, P::LocalTime),
        ApplicationValue::Time(now.time)
    );
    assert_eq!(
        db.read_property(device, P::DeviceAddressBinding, None)
            .unwrap(),
        vec![]
    );
    assert_eq!(
        db.read_property(device, P::DeviceAddressBinding, Some(0)),
        Err(PropertyError::NOT_AN_ARRAY)
    );
    db.write_property(
        device,
        P::ApduTimeout,
        None,
        &app(ApplicationValue::Unsigned(6000)),
        None,
    )
    .unwrap();
    assert_eq!(
        read(&db, device, P::ApduTimeout),
        ApplicationValue::Unsigned(6000)
    );
}

#[test]
fn database_structure_changes_bump_revision() {
    let mut db = ObjectDatabase::new(&DeviceConfig::default());
    assert_eq!(db.revision(), 0);
    let bi = object_types::binary(
        ObjectType::BinaryInput,
        1,
        "door",
        BinaryPv::Inactive,
        false,
    );
    db.add(bi.clone()).unwrap();
    assert_eq!(db.revision(), 1);
    assert_eq!(db.add(bi), Err(PropertyError::OBJECT_ALREADY_EXISTS));
    let clash = object_types::calendar(1, "door");
    assert_eq!(db.add(clash), Err(PropertyError::DUPLICATE_NAME));
    assert_eq!(
        db.add(DeviceConfig::default().build()),
        Err(PropertyError::OBJECT_ALREADY_EXISTS)
    );
    let door = id(ObjectType::BinaryInput, 1);
    db.write_property(
        door,
        P::ObjectName,
        None,
        &app(ApplicationValue::CharacterString("gate".into())),
        None,
    )
    .unwrap();
    assert_eq!(db.revision(), 2);
    assert!(db.get_by_name("door").is_none());
    assert_eq!(db.get_by_name("gate").unwrap().identifier(), door);
    assert_eq!(db.remove(door).unwrap().name(), "gate");
    assert_eq!(db.revision(), 3);
    assert_eq!(db.len(), 1);
    assert_eq!(db.remove(door), Err(PropertyError::UNKNOWN_OBJECT));
    assert_eq!(
        db.remove(db.device_identifier()),
        Err(PropertyError::DELETION_NOT_PERMITTED)
    );
}

#[test]
fn remove_keeps_object_list_and_lookups_in_step() {
    let mut db = stress();
    db.remove(id(ObjectType::AnalogInput, 1)).unwrap();
    let device = db.device_identifier();
    assert_eq!(
        db.read_property(device, P::ObjectList, Some(2)).unwrap(),
        app(ApplicationValue::ObjectIdentifier(id(
            ObjectType::AnalogInput,
            2
        )))
    );
    for object in db.objects() {
        assert_eq!(db.get(object.identifier()).unwrap().name(), object.name());
    }
}

#[test]
fn write_hook_sees_every_change() {
    let mut db = stress();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    db.set_write_hook(Box::new(move |change, _value| {
        sink.lock().unwrap().push(*change)
    }));
    let bv = id(ObjectType::BinaryValue, 2);
    let changes = db
        .write_property(
            bv,
            P::PresentValue,
            None,
            &app(ApplicationValue::Enumerated(1)),
            Some(10),
        )
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), changes);
    assert!(changes.contains(&PropertyChange {
        object: bv,
        property: P::PresentValue
    }));
    assert!(changes.contains(&PropertyChange {
        object: bv,
        property: P::CurrentCommandPriority
    }));
}

#[test]
fn property_value_for_cov() {
    let db = stress();
    let bo = db.get(id(ObjectType::BinaryOutput, 2)).unwrap();
    let value = bo.property_value(P::StatusFlags, None).unwrap();
    assert_eq!(value.property, P::StatusFlags);
    let mut buf = Vec::new();
    value.encode(&mut buf);
    // [0] status-flags (111), [2]{ BIT STRING 0000 }.
    assert_eq!(buf, [0x09, 0x6F, 0x2E, 0x82, 0x04, 0x00, 0x2F]);
    assert_eq!(
        bo.property_value(P::Units, None),
        Err(PropertyError::UNKNOWN_PROPERTY)
    );
}

#[test]
fn annex_f_read_property_value_encoding() {
    // Annex F.3.5 (ReadProperty): Analog Input 5 present-value REAL 72.3 is sent as
    // X'44 42 90 99 9A' inside the value tags.
    let mut db = ObjectDatabase::new(&DeviceConfig::default());
    let settings = AnalogSettings {
        present_value: 72.3,
        ..AnalogSettings::default()
    };
    db.add(object_types::analog(
        ObjectType::AnalogInput,
        5,
        "AI-5",
        &settings,
        false,
    ))
    .unwrap();
    let mut buf = Vec::new();
    encode_elements(
        &db.read_property(id(ObjectType::AnalogInput, 5), P::PresentValue, None)
            .unwrap(),
        &mut buf,
    );
    assert_eq!(buf, [0x44, 0x42, 0x90, 0x99, 0x9A]);
    // Clause 20.2.14: object identifier (Analog Input, 5) is X'C4 00 00 00 05'.
    let mut buf = Vec::new();
    encode_elements(
        &db.read_property(id(ObjectType::AnalogInput, 5), P::ObjectIdentifier, None)
            .unwrap(),
        &mut buf,
    );
    assert_eq!(buf, [0xC4, 0x00, 0x00, 0x00, 0x05]);
}

#[test]
fn json_profile_round_trip() {
    let profile = stress_profile();
    let text = profile.to_json();
    let parsed = DeviceProfile::from_json(&text).unwrap();
    assert_eq!(parsed, profile);
    assert_eq!(parsed.build().unwrap().len(), 40);
    let large = large_profile(25);
    assert_eq!(DeviceProfile::from_json(&large.to_json()).unwrap(), large);
}

#[test]
fn json_profile_minimal_document_uses_defaults() {
    let text = r#"{
        "device": {"instance": 7, "name": "dev"},
        "objects": [
            {"type": "ai", "instance": 1, "name": "t", "present_value": 21.5, "units": "degrees-celsius"},
            {"type": "msv", "instance": 1, "name": "mode", "number_of_states": 3, "present_value": 2, "commandable": true}
        ]
    }"#;
    let profile = DeviceProfile::from_json(text).unwrap();
    assert_eq!(profile.device.instance, 7);
    assert_eq!(
        profile.device.apdu_timeout,
        DeviceConfig::default().apdu_timeout
    );
    let mut expected = ObjectSpec::new(ObjectType::MultiStateValue, 1, "mode");
    expected.state_text = object_types::numbered_states(3);
    expected.present_value = Some(2.0);
    expected.commandable = true;
    assert_eq!(profile.objects[1], expected);
    let db = profile.build().unwrap();
    assert_eq!(
        read(&db, id(ObjectType::MultiStateValue, 1), P::PresentValue),
        ApplicationValue::Unsigned(2)
    );
    assert_eq!(
        read(&db, id(ObjectType::AnalogInput, 1), P::PresentValue),
        ApplicationValue::Real(21.5)
    );
}

#[test]
fn json_profile_errors_name_the_field() {
    let base = |objects: &str| {
        format!(r#"{{"device": {{"instance": 1, "name": "d"}}, "objects": [{objects}]}}"#)
    };
    let cases: &[(String, &str, &str)] = &[
        (base(r#"{"type": "ai", "instance": 1, "name": "a", "units": "furlongs"}"#), "objects[0].units", "furlongs"),
        (base(r#"{"type": "ai", "instance": 1}"#), "objects[0].name", "missing"),
        (base(r#"{"type": "ai", "instance": 1, "name": "a", "colour": 1}"#), "objects[0].colour", "unknown member"),
        (base(r#"{"type": "ai", "instance": 1, "name": "a"}, {"type": "bv", "instance": 1, "name": "b", "present_value": 2}"#), "objects[1].present_value", "out of range"),
        (base(r#"{"type": "msi", "instance": 1, "name": "a"}"#), "objects[0].state_text", "state_text"),
        (base(r#"{"type": "msi", "instance": 1, "name": "a", "number_of_states": 2, "present_value": 3}"#), "objects[0].present_value", "out of range"),
        (base(r#"{"type": "event-log", "instance": 1, "name": "a"}"#), "objects[0].type", "not supported"),
        (base(r#"{"type": "ai", "instance": 4194303, "name": "a"}"#), "objects[0].instance", "larger than"),
        (base(r#"{"type": "ai", "instance": "one", "name": "a"}"#), "objects[0].instance", "integer"),
        (base(r#"{"type": "ai", "instance": 1, "name": "a"}, {"type": "av", "instance": 1, "name": "a"}"#), "objects[1].name", "duplicate-name"),
        (base(r#"{"type": "ai", "instance": 1, "name": "a"}, {"type": "ai", "instance": 1, "name": "b"}"#), "objects[1].instance", "already-exists"),
        (base(r#"{"type": "nc", "instance": 1, "name": "a", "priority": [1, 2]}"#), "objects[0].priority", "three"),
        (r#"{"device": {"name": "d"}, "objects": []}"#.to_owned(), "device.instance", "missing"),
        (r#"{"device": {"instance": 1, "name": "d", "services": ["who-is", "teleport"]}, "objects": []}"#.to_owned(), "device.services[1]", "teleport"),
        (r#"{"device": {"instance": 1, "name": "d", "segmentation": "lots"}, "objects": []}"#.to_owned(), "device.segmentation", "lots"),
        (r#"{"device": {"instance": 1, "name": "d"}}"#.to_owned(), "objects", "missing"),
        (r#"{"device": {"instance": 1, "name": "d"}, "objects": [], "extra": 1}"#.to_owned(), "extra", "unknown member"),
        ("[1, 2]".to_owned(), "(document)", "object"),
        ("{\n  \"device\": ,\n}".to_owned(), "line 2 column 13", "expected value"),
    ];
    for (text, path, fragment) in cases {
        let error = DeviceProfile::from_json(text)
            .and_then(|p| p.build().map(|_| p))
            .unwrap_err();
        assert_eq!(error.path, *path, "{text}");
        assert!(error.message.contains(fragment), "{}: {}", error, fragment);
        assert!(error.to_string().starts_with(path));
    }
}

#[test]
fn schedule_calendar_notification_class_of_the_stress_profile() {
    // Their behaviour is tested in tests/schedule_calendar.rs; here the stored data.
    let db = stress();
    let schedule = id(ObjectType::Schedule, 1);
    assert_eq!(
        db.read_property(schedule, P::WeeklySchedule, Some(0))
            .unwrap(),
        app(ApplicationValue::Unsigned(7))
    );
    // Saturday (element 6) is empty.
    assert_eq!(
        db.read_property(schedule, P::WeeklySchedule, Some(6))
            .unwrap(),
        vec![Element::Constructed {
            tag: 0,
            children: vec![]
        }]
    );
    assert_eq!(
        db.read_property(schedule, P::EffectivePeriod, None)
            .unwrap(),
        vec![
            Element::Application(ApplicationValue::Date(Date::ANY)),
            Element::Application(ApplicationValue::Date(Date::ANY))
        ]
    );
    let calendar = id(ObjectType::Calendar, 1);
    // No clock was given: the calendar has not been evaluated.
    assert_eq!(
        read(&db, calendar, P::PresentValue),
        ApplicationValue::Boolean(false)
    );
    assert_eq!(
        db.read_property(calendar, P::DateList, None).unwrap().len(),
        3
    );
    let nc = id(ObjectType::NotificationClass, 1);
    assert_eq!(
        read(&db, nc, P::NotificationClass),
        ApplicationValue::Unsigned(1)
    );
    assert_eq!(
        db.read_property(nc, P::RecipientList, None).unwrap().len(),
        7,
        "one destination: six application values and its recipient choice"
    );
}

#[test]
fn local_set_bypasses_access_rules() {
    let mut db = stress();
    let ai = id(ObjectType::AnalogInput, 1);
    db.set_local(
        ai,
        P::PresentValue,
        PropertyData::Single(ApplicationValue::Real(99.0)),
    )
    .unwrap();
    assert_eq!(read(&db, ai, P::PresentValue), ApplicationValue::Real(99.0));
    assert_eq!(
        db.set_local(ai, P::ObjectName, PropertyData::text("AI-2")),
        Err(PropertyError::DUPLICATE_NAME)
    );
    db.set_local(ai, P::ObjectName, PropertyData::text("outside-air"))
        .unwrap();
    assert_eq!(db.get_by_name("outside-air").unwrap().identifier(), ai);
}

#[derive(Debug, Clone)]
enum Command {
    Write { priority: u8, value: Option<f32> },
    RelinquishDefault(f32),
}

fn command() -> impl Strategy<Value = Command> {
    prop_oneof![
        (1u8..=16, proptest::option::of(-1000.0f32..1000.0))
            .prop_map(|(priority, value)| Command::Write { priority, value }),
        (-1000.0f32..1000.0).prop_map(Command::RelinquishDefault),
    ]
}

proptest! {
    /// Present-value always equals the highest-priority command, else relinquish-default,
    /// checked against an independent model of the 16 slots.
    #[test]
    fn present_value_follows_priority_model(commands in proptest::collection::vec(command(), 0..40)) {
        let mut object: Object = object_types::analog(
            ObjectType::AnalogValue, 1, "av", &AnalogSettings::default(), true,
        );
        let mut slots: [Option<f32>; 16] = [None; 16];
        let mut default = 0.0f32;
        for command in commands {
            match command {
                Command::Write { priority, value } => {
                    let data = value.map_or_else(null, real);
                    object.write(P::PresentValue, None, &data, Some(priority)).unwrap();
                    slots[usize::from(priority - 1)] = value;
                }
                Command::RelinquishDefault(value) => {
                    object.write(P::RelinquishDefault, None, &real(value), None).unwrap();
                    default = value;
                }
            }
            let expected = slots.iter().flatten().next().copied().unwrap_or(default);
            prop_assert_eq!(single(object.read(P::PresentValue, None).unwrap()), ApplicationValue::Real(expected));
            let array = object.read(P::PriorityArray, None).unwrap();
            for (slot, element) in slots.iter().zip(array) {
                let wanted = slot.map_or(ApplicationValue::Null, ApplicationValue::Real);
                prop_assert_eq!(element, Element::Application(wanted));
            }
        }
    }

    /// Any array index either reads the length, one element, or fails with
    /// invalid-array-index; never panics.
    #[test]
    fn object_list_index_total(index in any::<u32>()) {
        let db = stress();
        let result = db.read_property(db.device_identifier(), P::ObjectList, Some(index));
        match index {
            0 => prop_assert_eq!(result, Ok(app(ApplicationValue::Unsigned(40)))),
            1..=40 => prop_assert_eq!(result.map(|v| v.len()), Ok(1)),
            _ => prop_assert_eq!(result, Err(PropertyError::INVALID_ARRAY_INDEX)),
        }
    }

    /// Profiles with arbitrary analog values and names survive the JSON round trip.
    #[test]
    fn json_round_trip_arbitrary(values in proptest::collection::vec((any::<f32>().prop_filter("finite", |v| v.is_finite()), "[a-zA-Z0-9 _-]{1,12}"), 0..20)) {
        let mut profile = large_profile(0);
        for (i, (value, name)) in values.iter().enumerate() {
            let mut spec = ObjectSpec::new(ObjectType::AnalogInput, i as u32, &format!("{name}{i}"));
            spec.present_value = Some(*value);
            spec.description = name.clone();
            profile.objects.push(spec);
        }
        let parsed = DeviceProfile::from_json(&profile.to_json()).unwrap();
        prop_assert_eq!(parsed, profile);
    }
}
