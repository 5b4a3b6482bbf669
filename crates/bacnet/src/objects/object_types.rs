//! Constructors for the Clause 12 object types this crate serves, each with every
//! property its table marks required plus the common optional ones (description,
//! reliability, cov-increment, min/max-pres-value, active/inactive and state texts).
//!
//! Commandable objects (Clause 19.2) get a priority array; their starting value is the
//! relinquish-default. Analog/binary outputs are always commandable; values only when
//! asked. Schedule, Calendar and Notification Class answer their required properties
//! with valid defaults; their behaviour (schedule evaluation, calendar matching, event
//! routing) belongs to higher layers.

use super::datatypes::to_elements;
use super::object::Object;
use super::value::PropertyData;
use crate::encoding::Element;
use crate::encoding::{
    ApplicationValue, BitString, CalendarEntry, DailySchedule, DateRange, Destination,
    DeviceObjectPropertyReference, ObjectIdentifier, SpecialEvent,
};
use crate::enums::{
    BinaryPv, EngineeringUnits, EventState, ObjectType, Polarity, PropertyIdentifier as P,
    Reliability,
};

/// Required properties shared by the analog, binary and multi-state objects (besides the
/// four every object has).
const POINT_REQUIRED: &[P] = &[
    P::PresentValue,
    P::StatusFlags,
    P::EventState,
    P::OutOfService,
];

/// Required properties per object type beyond [`POINT_REQUIRED`] and the command ones.
fn type_required(object_type: ObjectType) -> &'static [P] {
    match object_type {
        ObjectType::AnalogInput | ObjectType::AnalogOutput | ObjectType::AnalogValue => &[P::Units],
        ObjectType::BinaryInput | ObjectType::BinaryOutput => &[P::Polarity],
        ObjectType::MultiStateInput | ObjectType::MultiStateValue => &[P::NumberOfStates],
        _ => &[],
    }
}

fn enumerated(value: u32) -> PropertyData {
    PropertyData::Single(ApplicationValue::Enumerated(value))
}

fn real(value: f32) -> PropertyData {
    PropertyData::Single(ApplicationValue::Real(value))
}

/// The start every point object shares: name, description, status-flags, event-state,
/// reliability and out-of-service.
fn point(object_type: ObjectType, instance: u32, name: &str) -> Object {
    Object::new(ObjectIdentifier::new(object_type, instance), name)
        .with_computed(P::StatusFlags)
        .with(P::EventState, enumerated(EventState::Normal.to_u32()))
        .with(
            P::OutOfService,
            PropertyData::Single(ApplicationValue::Boolean(false)),
        )
        .with(P::Description, PropertyData::text(""))
        .with(
            P::Reliability,
            enumerated(Reliability::NoFaultDetected.to_u32()),
        )
        .require(POINT_REQUIRED)
        .require(type_required(object_type))
}

/// Settings of an analog object (AI, AO, AV).
#[derive(Debug, Clone, PartialEq)]
pub struct AnalogSettings {
    /// Starting present-value (relinquish-default for commandable objects).
    pub present_value: f32,
    /// units.
    pub units: EngineeringUnits,
    /// cov-increment.
    pub cov_increment: f32,
    /// min-pres-value, when the object has one.
    pub min_pres_value: Option<f32>,
    /// max-pres-value, when the object has one.
    pub max_pres_value: Option<f32>,
    /// resolution, when the object has one.
    pub resolution: Option<f32>,
}

impl Default for AnalogSettings {
    fn default() -> Self {
        Self {
            present_value: 0.0,
            units: EngineeringUnits::NoUnits,
            cov_increment: 0.1,
            min_pres_value: None,
            max_pres_value: None,
            resolution: None,
        }
    }
}

/// Analog Input (12.2), Analog Output (12.3) or Analog Value (12.4). Analog outputs are
/// always commandable; `commandable` only matters for analog values; inputs never are.
pub fn analog(
    object_type: ObjectType,
    instance: u32,
    name: &str,
    settings: &AnalogSettings,
    commandable: bool,
) -> Object {
    let mut object = point(object_type, instance, name)
        .with(P::Units, enumerated(settings.units.to_u32()))
        .with(P::CovIncrement, real(settings.cov_increment));
    for (property, value) in [
        (P::MinPresValue, settings.min_pres_value),
        (P::MaxPresValue, settings.max_pres_value),
        (P::Resolution, settings.resolution),
    ] {
        if let Some(value) = value {
            object = object.with(property, real(value));
        }
    }
    let pv = ApplicationValue::Real(settings.present_value);
    command_or_store(object, object_type, commandable, pv)
}

fn command_or_store(
    object: Object,
    object_type: ObjectType,
    commandable: bool,
    present_value: ApplicationValue,
) -> Object {
    let always = matches!(
        object_type,
        ObjectType::AnalogOutput | ObjectType::BinaryOutput | ObjectType::MultiStateOutput
    );
    let never = matches!(
        object_type,
        ObjectType::AnalogInput | ObjectType::BinaryInput | ObjectType::MultiStateInput
    );
    if always || (commandable && !never) {
        object.commandable(present_value)
    } else {
        object.with(P::PresentValue, PropertyData::Single(present_value))
    }
}

/// Binary Input (12.6), Binary Output (12.7) or Binary Value (12.8).
pub fn binary(
    object_type: ObjectType,
    instance: u32,
    name: &str,
    present_value: BinaryPv,
    commandable: bool,
) -> Object {
    let mut object = point(object_type, instance, name)
        .with(P::ActiveText, PropertyData::text("active"))
        .with(P::InactiveText, PropertyData::text("inactive"));
    if object_type != ObjectType::BinaryValue {
        object = object.with(P::Polarity, enumerated(Polarity::Normal.to_u32()));
    }
    let pv = ApplicationValue::Enumerated(present_value.to_u32());
    command_or_store(object, object_type, commandable, pv)
}

/// Multi-state Input (12.18) or Multi-state Value (12.20). `state_text` names the
/// states (its length is number-of-states); `present_value` is clamped to 1..=N.
pub fn multi_state(
    object_type: ObjectType,
    instance: u32,
    name: &str,
    present_value: u32,
    state_text: &[String],
    commandable: bool,
) -> Object {
    let states = state_text.len() as u64;
    let object = point(object_type, instance, name)
        .with(
            P::NumberOfStates,
            PropertyData::Single(ApplicationValue::Unsigned(states)),
        )
        .with(
            P::StateText,
            PropertyData::array_of(
                state_text
                    .iter()
                    .map(|text| ApplicationValue::CharacterString(text.clone())),
            ),
        );
    let pv = ApplicationValue::Unsigned(u64::from(present_value).clamp(1, states.max(1)));
    command_or_store(object, object_type, commandable, pv)
}

/// Default state texts `"State 1"..="State N"`.
pub fn numbered_states(count: u32) -> Vec<String> {
    (1..=count).map(|n| format!("State {n}")).collect()
}

/// What a Schedule holds.
#[derive(Debug, Clone, PartialEq)]
pub struct ScheduleSettings {
    /// weekly-schedule: seven days, Monday first.
    pub weekly: Vec<DailySchedule>,
    /// exception-schedule.
    pub exceptions: Vec<SpecialEvent>,
    /// schedule-default (any primitive, NULL included).
    pub default: ApplicationValue,
    /// effective-period.
    pub effective_period: DateRange,
    /// list-of-object-property-references: what the schedule writes.
    pub references: Vec<DeviceObjectPropertyReference>,
    /// priority-for-writing, 1..=16.
    pub priority_for_writing: u8,
}

impl Default for ScheduleSettings {
    fn default() -> Self {
        Self {
            weekly: vec![DailySchedule::default(); 7],
            exceptions: Vec::new(),
            default: ApplicationValue::Real(0.0),
            effective_period: DateRange::ALWAYS,
            references: Vec::new(),
            priority_for_writing: 16,
        }
    }
}

/// Schedule (12.24) with every required property, description, weekly-schedule and
/// exception-schedule: present-value and schedule-default REAL 0.0, an unbounded
/// effective-period, seven empty daily schedules, no exceptions, no references,
/// priority-for-writing 16.
pub fn schedule(instance: u32, name: &str) -> Object {
    schedule_with(instance, name, &ScheduleSettings::default())
}

/// Schedule (12.24) holding `settings`. Its present-value starts at schedule-default; the
/// database evaluates it against the device clock.
pub fn schedule_with(instance: u32, name: &str, settings: &ScheduleSettings) -> Object {
    let mut weekly: Vec<Vec<Element>> = settings
        .weekly
        .iter()
        .take(7)
        .map(|day| to_elements(|b| day.encode(b)))
        .collect();
    while weekly.len() < 7 {
        weekly.push(to_elements(|b| DailySchedule::default().encode(b)));
    }
    Object::new(ObjectIdentifier::new(ObjectType::Schedule, instance), name)
        .with(
            P::PresentValue,
            PropertyData::Single(settings.default.clone()),
        )
        .with(P::Description, PropertyData::text(""))
        .with(
            P::EffectivePeriod,
            PropertyData::List(to_elements(|b| settings.effective_period.encode(b))),
        )
        .with(P::WeeklySchedule, PropertyData::Array(weekly))
        .with(
            P::ExceptionSchedule,
            PropertyData::Array(
                settings
                    .exceptions
                    .iter()
                    .map(|event| to_elements(|b| event.encode(b)))
                    .collect(),
            ),
        )
        .with(
            P::ScheduleDefault,
            PropertyData::Single(settings.default.clone()),
        )
        .with(
            P::ListOfObjectPropertyReferences,
            PropertyData::List(
                settings
                    .references
                    .iter()
                    .flat_map(|r| to_elements(|b| r.encode(b)))
                    .collect(),
            ),
        )
        .with(
            P::PriorityForWriting,
            PropertyData::Single(ApplicationValue::Unsigned(u64::from(
                settings.priority_for_writing.clamp(1, 16),
            ))),
        )
        .with_computed(P::StatusFlags)
        .with(
            P::Reliability,
            enumerated(Reliability::NoFaultDetected.to_u32()),
        )
        .with(
            P::OutOfService,
            PropertyData::Single(ApplicationValue::Boolean(false)),
        )
        .require(&[
            P::PresentValue,
            P::EffectivePeriod,
            P::ScheduleDefault,
            P::ListOfObjectPropertyReferences,
            P::PriorityForWriting,
            P::StatusFlags,
            P::Reliability,
            P::OutOfService,
        ])
}

/// Calendar (12.9): present-value FALSE and an empty date-list.
pub fn calendar(instance: u32, name: &str) -> Object {
    calendar_with(instance, name, &[])
}

/// Calendar (12.9) with `date_list`. Its present-value starts FALSE; the database sets it
/// from the date-list and the device clock.
pub fn calendar_with(instance: u32, name: &str, date_list: &[CalendarEntry]) -> Object {
    Object::new(ObjectIdentifier::new(ObjectType::Calendar, instance), name)
        .with(
            P::PresentValue,
            PropertyData::Single(ApplicationValue::Boolean(false)),
        )
        .with(P::Description, PropertyData::text(""))
        .with(
            P::DateList,
            PropertyData::List(
                date_list
                    .iter()
                    .flat_map(|entry| to_elements(|b| entry.encode(b)))
                    .collect(),
            ),
        )
        .require(&[P::PresentValue, P::DateList])
}

/// Notification Class (12.21): `priority` for to-offnormal, to-fault and to-normal,
/// `ack_required` for the same three transitions, and an empty recipient-list.
pub fn notification_class(
    instance: u32,
    name: &str,
    priority: [u8; 3],
    ack_required: [bool; 3],
) -> Object {
    notification_class_with(instance, name, priority, ack_required, &[])
}

/// Notification Class (12.21) with a recipient-list. Notification-class equals the
/// instance number (Clause 12.21.5) and is read-only.
pub fn notification_class_with(
    instance: u32,
    name: &str,
    priority: [u8; 3],
    ack_required: [bool; 3],
    recipients: &[Destination],
) -> Object {
    Object::new(
        ObjectIdentifier::new(ObjectType::NotificationClass, instance),
        name,
    )
    .with(P::Description, PropertyData::text(""))
    .with(
        P::NotificationClass,
        PropertyData::Single(ApplicationValue::Unsigned(u64::from(instance))),
    )
    .with(
        P::Priority,
        PropertyData::array_of(
            priority
                .iter()
                .map(|p| ApplicationValue::Unsigned(u64::from(*p))),
        ),
    )
    .with(
        P::AckRequired,
        PropertyData::Single(ApplicationValue::BitString(BitString::from_bits(
            &ack_required,
        ))),
    )
    .with(
        P::RecipientList,
        PropertyData::List(
            recipients
                .iter()
                .flat_map(|d| to_elements(|b| d.encode(b)))
                .collect(),
        ),
    )
    .require(&[
        P::NotificationClass,
        P::Priority,
        P::AckRequired,
        P::RecipientList,
    ])
}
