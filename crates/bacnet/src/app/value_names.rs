//! Property values described for people and programs: enumerated numbers get their names
//! (which enumeration comes from the property, and for present-value of a binary object
//! from the object type), multi-state values their state-text, and the standard
//! constructed datatypes are decoded (status flags, date-times, time stamps, COV
//! subscriptions, address bindings, schedules, calendars, recipients, references, log
//! records) instead of showing as a raw tag tree.
//!
//! [`describe_value`] gives the JSON the CLI's `--json`, the Python package and the
//! dissector share (the shape is in `docs/conventions.md`); [`value_text`] the one-line
//! text the CLI prints.
//!
//! ```
//! use buildwire_bacnet::app::value_names::{ValueContext, describe_value, value_text};
//! use buildwire_bacnet::encoding::{ApplicationValue, Element};
//! use buildwire_bacnet::{ObjectType, PropertyIdentifier};
//!
//! let units = [Element::Application(ApplicationValue::Enumerated(64))];
//! let context = ValueContext::new(Some(ObjectType::AnalogInput), PropertyIdentifier::Units);
//! let json = describe_value(&context, &units);
//! assert_eq!(json[0]["name"], "degrees-fahrenheit");
//! assert_eq!(json[0]["value"], 64);
//! assert_eq!(value_text(&json), "degrees-fahrenheit");
//! ```

use serde_json::{Map, Value, json};

use crate::encoding::abstract_syntax::encode_elements;
use crate::encoding::context::{expect_closing, expect_opening, next_is_context};
use crate::encoding::json::{
    application_json, calendar_entry_json, date_range_json, date_text, destination_json,
    element_json, reference_json, special_event_json, time_text, weekly_json,
};
use crate::encoding::{
    ApplicationValue, BacnetAddress, BitString, CalendarEntry, CovSubscription, DailySchedule,
    DateRange, DateTime, DecodeError, Destination, DeviceObjectPropertyReference, Element,
    LogDatum, LogRecord, ObjectIdentifier, PrimitiveValue, Reader, Recipient, SpecialEvent,
    StatusFlags, Time,
};
use crate::enums::{Enumeration, ObjectType, PropertyIdentifier as P};
use crate::objects::datatypes::{ItemType, Shape, property_datatype};

/// What a value belongs to: the property (and object type) that says how to read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValueContext<'a> {
    /// The object's type, when known (binary present-values, schedules, calendars...).
    pub object_type: Option<ObjectType>,
    /// The property the value was read from.
    pub property: P,
    /// The array index read, if any (`Some(0)` is an array's length).
    pub array_index: Option<u32>,
    /// The object's state-text, to name a multi-state object's present-value.
    pub state_text: Option<&'a [String]>,
}

impl ValueContext<'_> {
    /// The whole value of `property` of an object of `object_type`.
    pub const fn new(object_type: Option<ObjectType>, property: P) -> Self {
        Self {
            object_type,
            property,
            array_index: None,
            state_text: None,
        }
    }
}

/// A binary object's present-value, relinquish-default and the like are `BACnetBinaryPV`.
fn is_binary(object_type: Option<ObjectType>) -> bool {
    matches!(
        object_type,
        Some(ObjectType::BinaryInput | ObjectType::BinaryOutput | ObjectType::BinaryValue)
    )
}

/// Multi-state objects name their present-value with state-text.
pub fn is_multi_state(object_type: Option<ObjectType>) -> bool {
    matches!(
        object_type,
        Some(
            ObjectType::MultiStateInput
                | ObjectType::MultiStateOutput
                | ObjectType::MultiStateValue
        )
    )
}

/// The enumeration the Enumerated values of `property` belong to.
pub fn property_enumeration(object_type: Option<ObjectType>, property: P) -> Option<Enumeration> {
    Some(match property {
        P::Units
        | P::ControlledVariableUnits
        | P::OutputUnits
        | P::ProportionalConstantUnits
        | P::IntegralConstantUnits
        | P::DerivativeConstantUnits => Enumeration::EngineeringUnits,
        P::ObjectType => Enumeration::ObjectType,
        P::PropertyList => Enumeration::PropertyIdentifier,
        P::EventState => Enumeration::EventState,
        P::Reliability => Enumeration::Reliability,
        P::Polarity => Enumeration::Polarity,
        P::SegmentationSupported => Enumeration::Segmentation,
        P::SystemStatus => Enumeration::DeviceStatus,
        P::LoggingType => Enumeration::LoggingType,
        P::PresentValue
        | P::RelinquishDefault
        | P::PriorityArray
        | P::AlarmValue
        | P::FeedbackValue
            if is_binary(object_type) =>
        {
            Enumeration::BinaryPv
        }
        _ => return None,
    })
}

/// The constructed datatype of one item of a property's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    StatusFlags,
    EventTransitions,
    ServicesSupported,
    ObjectTypesSupported,
    TimeStamp,
    CovSubscription,
    AddressBinding,
    LogRecord,
    Stored(ItemType),
}

/// The item datatype of `property` and whether the value is a list/array of them.
fn property_item(context: &ValueContext<'_>) -> Option<(Item, bool)> {
    let many = context.array_index.is_none();
    Some(match context.property {
        P::StatusFlags => (Item::StatusFlags, false),
        P::EventEnable | P::AckedTransitions | P::AckRequired => (Item::EventTransitions, false),
        P::ProtocolServicesSupported => (Item::ServicesSupported, false),
        P::ProtocolObjectTypesSupported => (Item::ObjectTypesSupported, false),
        P::LastRestoreTime | P::TimeOfDeviceRestart => (Item::TimeStamp, false),
        P::EventTimeStamps => (Item::TimeStamp, many),
        P::ActiveCovSubscriptions => (Item::CovSubscription, true),
        P::DeviceAddressBinding => (Item::AddressBinding, true),
        P::LogBuffer => (Item::LogRecord, true),
        property => {
            let (item, shape) = property_datatype(context.object_type?, property)?;
            if item == ItemType::Priority {
                return None;
            }
            (Item::Stored(item), shape != Shape::Single && many)
        }
    })
}

/// Names of the set bits of a bit string, each named by `name` (else its number).
fn bit_names(bits: &BitString, enumeration: Enumeration) -> Value {
    Value::Array(
        (0..bits.len())
            .filter(|i| bits.get(*i))
            .map(|i| {
                let n = u32::try_from(i).unwrap_or(u32::MAX);
                enumeration
                    .value_name(n)
                    .map_or_else(|| json!(n), |name| json!(name))
            })
            .collect(),
    )
}

fn status_flags_json(flags: StatusFlags) -> Value {
    json!({
        "in-alarm": flags.in_alarm,
        "fault": flags.fault,
        "overridden": flags.overridden,
        "out-of-service": flags.out_of_service,
    })
}

fn date_time_json(when: &DateTime) -> Value {
    json!({"date": date_text(&when.date), "time": time_text(&when.time)})
}

/// `BACnetTimeStamp ::= CHOICE { time [0] Time, sequence-number [1] Unsigned,
/// datetime [2] BACnetDateTime }`.
fn time_stamp_json(reader: &mut Reader<'_>) -> Result<Value, DecodeError> {
    if next_is_context(reader, 0) {
        return Ok(json!({"time": time_text(&Time::decode_context(reader, 0)?)}));
    }
    if next_is_context(reader, 1) {
        return Ok(json!({"sequence-number": u64::decode_context(reader, 1)?}));
    }
    expect_opening(reader, 2)?;
    let when = DateTime::decode(reader)?;
    expect_closing(reader, 2)?;
    Ok(json!({"date-time": date_time_json(&when)}))
}

fn recipient_json(recipient: &Recipient) -> Value {
    match recipient {
        Recipient::Device(device) => json!({"device": device.to_string()}),
        Recipient::Address(address) => json!({"address": address_json(address)}),
    }
}

fn address_json(address: &BacnetAddress) -> Value {
    if let (0, Ok([a, b, c, d, hi, lo])) = (address.network, <[u8; 6]>::try_from(&address.mac[..]))
    {
        let socket = std::net::SocketAddrV4::new(
            std::net::Ipv4Addr::new(a, b, c, d),
            u16::from_be_bytes([hi, lo]),
        );
        return json!(socket.to_string());
    }
    json!({"network": address.network, "mac": crate::encoding::json::hex(&address.mac)})
}

fn cov_subscription_json(subscription: &CovSubscription) -> Value {
    let monitored = &subscription.monitored;
    let mut value = json!({
        "recipient": recipient_json(&subscription.recipient.recipient),
        "process": subscription.recipient.process_identifier,
        "object": monitored.object.to_string(),
        "property": monitored.property.to_string(),
        "confirmed": subscription.issue_confirmed_notifications,
        "time-remaining": subscription.time_remaining,
    });
    if let Some(index) = monitored.array_index {
        value["index"] = json!(index);
    }
    if let Some(increment) = subscription.cov_increment {
        value["cov-increment"] = json!(increment);
    }
    value
}

fn log_record_json(record: &LogRecord) -> Value {
    let datum = match &record.datum {
        LogDatum::LogStatus(bits) => json!({"log-status": {
            "log-disabled": bits.get(0), "buffer-purged": bits.get(1),
            "log-interrupted": bits.get(2)}}),
        LogDatum::Boolean(b) => application_json(&ApplicationValue::Boolean(*b)),
        LogDatum::Real(r) => application_json(&ApplicationValue::Real(*r)),
        LogDatum::Enumerated(e) => application_json(&ApplicationValue::Enumerated(*e)),
        LogDatum::Unsigned(u) => application_json(&ApplicationValue::Unsigned(*u)),
        LogDatum::Signed(s) => application_json(&ApplicationValue::Signed(*s)),
        LogDatum::BitString(bits) => application_json(&ApplicationValue::BitString(bits.clone())),
        LogDatum::Null => application_json(&ApplicationValue::Null),
        LogDatum::Failure(class, code) => {
            json!({"failure": {"class": class.to_string(), "code": code.to_string()}})
        }
        LogDatum::TimeChange(seconds) => json!({"time-change": seconds}),
        LogDatum::Any(elements) => json!({"any": Value::Array(
            elements.iter().map(element_json).collect())}),
    };
    let mut value = json!({"timestamp": date_time_json(&record.timestamp), "datum": datum});
    if let Some(flags) = &record.status_flags {
        value["status-flags"] = status_flags_json(StatusFlags::from_bit_string(flags));
    }
    value
}

/// Decodes one item of `item` from `reader`: its datatype name and JSON.
fn decode_item(reader: &mut Reader<'_>, item: Item) -> Result<(&'static str, Value), DecodeError> {
    let bits = |reader: &mut Reader<'_>| BitString::decode_application(reader);
    Ok(match item {
        Item::StatusFlags => (
            "status-flags",
            status_flags_json(StatusFlags::decode_application(reader)?),
        ),
        Item::EventTransitions => {
            let bits = bits(reader)?;
            (
                "event-transition-bits",
                json!({"to-offnormal": bits.get(0), "to-fault": bits.get(1),
                       "to-normal": bits.get(2)}),
            )
        }
        Item::ServicesSupported => (
            "services-supported",
            bit_names(&bits(reader)?, Enumeration::ServicesSupported),
        ),
        Item::ObjectTypesSupported => (
            "object-types-supported",
            bit_names(&bits(reader)?, Enumeration::ObjectType),
        ),
        Item::TimeStamp => ("time-stamp", time_stamp_json(reader)?),
        Item::CovSubscription => (
            "cov-subscription",
            cov_subscription_json(&CovSubscription::decode(reader)?),
        ),
        Item::AddressBinding => {
            let device = ObjectIdentifier::decode_application(reader)?;
            let address = BacnetAddress::decode(reader)?;
            (
                "address-binding",
                json!({"device": device.to_string(), "address": address_json(&address)}),
            )
        }
        Item::LogRecord => ("log-record", log_record_json(&LogRecord::decode(reader)?)),
        Item::Stored(ItemType::DailySchedule) => {
            let day = DailySchedule::decode(reader)?;
            let week = weekly_json(std::slice::from_ref(&day));
            ("daily-schedule", week[0].clone())
        }
        Item::Stored(ItemType::SpecialEvent) => (
            "special-event",
            special_event_json(&SpecialEvent::decode(reader)?),
        ),
        Item::Stored(ItemType::CalendarEntry) => (
            "calendar-entry",
            calendar_entry_json(&CalendarEntry::decode(reader)?),
        ),
        Item::Stored(ItemType::DateRange) => {
            ("date-range", date_range_json(&DateRange::decode(reader)?))
        }
        Item::Stored(ItemType::DeviceObjectPropertyReference) => (
            "device-object-property-reference",
            reference_json(&DeviceObjectPropertyReference::decode(reader)?),
        ),
        Item::Stored(ItemType::Destination) => (
            "destination",
            destination_json(&Destination::decode(reader)?),
        ),
        Item::Stored(ItemType::Priority) => ("unsigned", json!(u8::decode_application(reader)?)),
    })
}

/// Decodes every item of a constructed value, or `None` when it is not that datatype
/// (then it is described element by element instead).
fn decode_items(elements: &[Element], item: Item, many: bool) -> Option<Vec<Value>> {
    let mut bytes = Vec::new();
    encode_elements(elements, &mut bytes);
    let mut reader = Reader::new(&bytes);
    let mut out = Vec::new();
    while !reader.is_empty() {
        let (kind, value) = decode_item(&mut reader, item).ok()?;
        out.push(json!({"type": kind, "value": value}));
        if !many && !reader.is_empty() {
            return None;
        }
    }
    Some(out)
}

/// The described JSON of a property's value: one entry per item, as
/// [`crate::encoding::json::elements_json`] gives, with names added to enumerated values
/// (`{"type": "enumerated", "value": 64, "name": "degrees-fahrenheit", "enumeration":
/// "engineering-units"}`), state-text to a multi-state present-value (`{"type":
/// "unsigned", "value": 2, "name": "occupied"}`) and constructed datatypes decoded
/// (`{"type": "status-flags", "value": {"in-alarm": false, ...}}`).
pub fn describe_value(context: &ValueContext<'_>, elements: &[Element]) -> Value {
    if context.array_index != Some(0)
        && let Some((item, many)) = property_item(context)
        && let Some(items) = decode_items(elements, item, many)
    {
        return Value::Array(items);
    }
    // A BACnetDateTime is two application values: one date-time, not two values.
    if let [
        Element::Application(ApplicationValue::Date(date)),
        Element::Application(ApplicationValue::Time(time)),
    ] = elements
    {
        let when = DateTime {
            date: *date,
            time: *time,
        };
        return json!([{"type": "date-time", "value": date_time_json(&when)}]);
    }
    let enumeration = property_enumeration(context.object_type, context.property);
    let states = match (context.property, context.array_index) {
        (P::PresentValue | P::RelinquishDefault | P::PriorityArray, _)
            if is_multi_state(context.object_type) =>
        {
            context.state_text
        }
        _ => None,
    };
    Value::Array(
        elements
            .iter()
            .map(|element| describe_element(element, enumeration, states))
            .collect(),
    )
}

/// [`describe_value`] of `property` (at `array_index`) of `object`, without state-text.
pub fn describe_property(
    object: ObjectIdentifier,
    property: P,
    array_index: Option<u32>,
    elements: &[Element],
) -> Value {
    let mut context = ValueContext::new(Some(object.object_type()), property);
    context.array_index = array_index;
    describe_value(&context, elements)
}

/// One element, named by `enumeration` (Enumerated) or `states` (Unsigned, 1-based).
fn describe_element(
    element: &Element,
    enumeration: Option<Enumeration>,
    states: Option<&[String]>,
) -> Value {
    let Element::Application(value) = element else {
        return element_json(element);
    };
    let mut json = application_json(value);
    match (value, enumeration, states) {
        (ApplicationValue::Enumerated(n), Some(enumeration), _) => {
            if let Some(name) = enumeration.value_name(*n) {
                json["name"] = json!(name);
            }
            json["enumeration"] = json!(enumeration.name());
        }
        (ApplicationValue::Unsigned(n), _, Some(states)) => {
            let text = usize::try_from(*n)
                .ok()
                .and_then(|n| n.checked_sub(1))
                .and_then(|i| states.get(i));
            if let Some(text) = text {
                json["name"] = json!(text);
            }
        }
        _ => {}
    }
    json
}

/// One line of text for a described value ([`describe_value`]): names rather than
/// numbers, character strings quoted, several items in `[...]`, a priority array as its
/// commanded slots (`{8: 72.5, 16: 70.0}`, `none` when all are relinquished), status flags as those set (`fault`, `none`).
pub fn value_text(described: &Value) -> String {
    match described.as_array().map(Vec::as_slice) {
        Some([one]) => item_text(one),
        Some(items) if items.len() == 16 && looks_like_priority_array(items) => {
            let slots: Vec<String> = items
                .iter()
                .enumerate()
                .filter(|(_, v)| v["type"] != "null")
                .map(|(i, v)| format!("{}: {}", i + 1, item_text(v)))
                .collect();
            if slots.is_empty() {
                "none".to_owned()
            } else {
                format!("{{{}}}", slots.join(", "))
            }
        }
        Some(items) => {
            let parts: Vec<String> = items.iter().map(item_text).collect();
            format!("[{}]", parts.join(", "))
        }
        None => item_text(described),
    }
}

/// Sixteen items of which at least one is null: a priority array read whole.
fn looks_like_priority_array(items: &[Value]) -> bool {
    items.iter().any(|v| v["type"] == "null")
}

/// The text of one described item.
pub fn item_text(item: &Value) -> String {
    if let Some(name) = item.get("name").and_then(Value::as_str) {
        return name.to_owned();
    }
    match (item.get("type").and_then(Value::as_str), item.get("value")) {
        (Some("character-string"), Some(Value::String(s))) => format!("{s:?}"),
        (Some(_), Some(value)) => plain_text(value),
        _ => plain_text(item),
    }
}

/// JSON as text without quotes around strings and keys: `{device: device,7, address: ...}`;
/// flags as the names of those set (`fault, out-of-service`), or `none`.
fn plain_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(described_or_plain).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Object(map) => object_text(map),
        other => other.to_string(),
    }
}

fn described_or_plain(value: &Value) -> String {
    if value.get("type").is_some() && value.get("value").is_some() {
        item_text(value)
    } else {
        plain_text(value)
    }
}

fn object_text(map: &Map<String, Value>) -> String {
    if map.get("type").is_some() && map.get("value").is_some() {
        return item_text(&Value::Object(map.clone()));
    }
    // Flags (status flags, event transitions): the ones set, or `none`.
    if !map.is_empty() && map.values().all(Value::is_boolean) {
        let set: Vec<&str> = map
            .iter()
            .filter(|(_, v)| v.as_bool() == Some(true))
            .map(|(k, _)| k.as_str())
            .collect();
        return if set.is_empty() {
            "none".to_owned()
        } else {
            set.join(", ")
        };
    }
    let parts: Vec<String> = map
        .iter()
        .map(|(k, v)| format!("{k}: {}", described_or_plain(v)))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::Date;
    use crate::encoding::abstract_syntax::decode_to_end;
    use crate::encoding::{ObjectPropertyReference, RecipientProcess};

    fn app(value: ApplicationValue) -> Element {
        Element::Application(value)
    }

    fn elements(encode: impl FnOnce(&mut Vec<u8>)) -> Vec<Element> {
        let mut bytes = Vec::new();
        encode(&mut bytes);
        decode_to_end(&mut Reader::new(&bytes)).unwrap()
    }

    #[test]
    fn enumerated_values_are_named_by_their_property() {
        let context = ValueContext::new(Some(ObjectType::AnalogValue), P::Units);
        let json = describe_value(&context, &[app(ApplicationValue::Enumerated(62))]);
        assert_eq!(
            json,
            json!([{"type": "enumerated", "value": 62, "name": "degrees-celsius",
                    "enumeration": "engineering-units"}])
        );
        assert_eq!(value_text(&json), "degrees-celsius");
        let bv = ValueContext::new(Some(ObjectType::BinaryValue), P::PresentValue);
        let json = describe_value(&bv, &[app(ApplicationValue::Enumerated(1))]);
        assert_eq!(json[0]["name"], "active");
        // The same number on an analog object's property that is not an enumeration.
        let av = ValueContext::new(Some(ObjectType::AnalogValue), P::PresentValue);
        let json = describe_value(&av, &[app(ApplicationValue::Enumerated(1))]);
        assert!(json[0].get("name").is_none());
        // A proprietary unit keeps its number and says which enumeration it is.
        let json = describe_value(&context, &[app(ApplicationValue::Enumerated(60_000))]);
        assert_eq!(json[0]["enumeration"], "engineering-units");
        assert!(json[0].get("name").is_none());
        assert_eq!(value_text(&json), "60000");
        let object_type = ValueContext::new(Some(ObjectType::Device), P::ObjectType);
        let json = describe_value(&object_type, &[app(ApplicationValue::Enumerated(0))]);
        assert_eq!(value_text(&json), "analog-input");
        let list = ValueContext::new(Some(ObjectType::Device), P::PropertyList);
        let json = describe_value(
            &list,
            &[
                app(ApplicationValue::Enumerated(85)),
                app(ApplicationValue::Enumerated(117)),
            ],
        );
        assert_eq!(value_text(&json), "[present-value, units]");
        for (property, number, name) in [
            (P::EventState, 2, "offnormal"),
            (P::Reliability, 1, "no-sensor"),
            (P::Polarity, 1, "reverse"),
            (P::SegmentationSupported, 3, "no-segmentation"),
            (P::SystemStatus, 0, "operational"),
        ] {
            let context = ValueContext::new(Some(ObjectType::BinaryInput), property);
            let json = describe_value(&context, &[app(ApplicationValue::Enumerated(number))]);
            assert_eq!(json[0]["name"], name, "{property}");
        }
    }

    #[test]
    fn multi_state_values_show_their_state_text() {
        let states = ["off".to_owned(), "low".to_owned(), "high".to_owned()];
        let mut context = ValueContext::new(Some(ObjectType::MultiStateValue), P::PresentValue);
        context.state_text = Some(&states);
        let json = describe_value(&context, &[app(ApplicationValue::Unsigned(2))]);
        assert_eq!(json[0]["name"], "low");
        assert_eq!(json[0]["value"], 2);
        // Out of range: the number stays, without a name.
        let json = describe_value(&context, &[app(ApplicationValue::Unsigned(9))]);
        assert_eq!(value_text(&json), "9");
    }

    #[test]
    fn constructed_datatypes_are_decoded() {
        let flags = StatusFlags {
            fault: true,
            ..StatusFlags::default()
        };
        let context = ValueContext::new(Some(ObjectType::AnalogInput), P::StatusFlags);
        let json = describe_value(&context, &elements(|b| flags.encode_application(b)));
        assert_eq!(json[0]["type"], "status-flags");
        assert_eq!(json[0]["value"]["fault"], true);
        assert_eq!(value_text(&json), "fault");
        let normal = elements(|b| StatusFlags::default().encode_application(b));
        assert_eq!(value_text(&describe_value(&context, &normal)), "none");

        let when = DateTime {
            date: Date::new(2026, 11, 27, 5),
            time: Time::new(22, 40, 0, 0),
        };
        let context = ValueContext::new(Some(ObjectType::BinaryInput), P::ChangeOfStateTime);
        let json = describe_value(&context, &elements(|b| when.encode(b)));
        assert_eq!(
            json,
            json!([{"type": "date-time", "value": {"date": "2026-11-27 (weekday 5)",
                                                  "time": "22:40:00.00"}}])
        );

        // event-time-stamps: an array of three BACnetTimeStamp choices.
        let stamps = elements(|b| {
            Time::new(1, 2, 3, 4).encode_context(0, b);
            7u32.encode_context(1, b);
            crate::encoding::context::encode_opening(2, b);
            when.encode(b);
            crate::encoding::context::encode_closing(2, b);
        });
        let context = ValueContext::new(Some(ObjectType::AnalogInput), P::EventTimeStamps);
        let json = describe_value(&context, &stamps);
        assert_eq!(json[0]["value"], json!({"time": "01:02:03.04"}));
        assert_eq!(json[1]["value"], json!({"sequence-number": 7}));
        assert_eq!(json[2]["value"]["date-time"]["time"], "22:40:00.00");

        let subscription = CovSubscription {
            recipient: RecipientProcess {
                recipient: Recipient::Address(BacnetAddress::local_bip(
                    "127.0.0.1:47809".parse().unwrap(),
                )),
                process_identifier: 9,
            },
            monitored: ObjectPropertyReference {
                object: "av,1".parse().unwrap(),
                property: P::PresentValue,
                array_index: None,
            },
            issue_confirmed_notifications: true,
            time_remaining: 300,
            cov_increment: Some(0.5),
        };
        let context = ValueContext::new(Some(ObjectType::Device), P::ActiveCovSubscriptions);
        let json = describe_value(&context, &elements(|b| subscription.encode(b)));
        assert_eq!(
            json,
            json!([{"type": "cov-subscription", "value": {
                "recipient": {"address": "127.0.0.1:47809"}, "process": 9,
                "object": "analog-value,1", "property": "present-value", "confirmed": true,
                "time-remaining": 300, "cov-increment": 0.5}}])
        );

        let binding = elements(|b| {
            ObjectIdentifier::new(ObjectType::Device, 7).encode_application(b);
            BacnetAddress::local_bip("127.0.0.1:47808".parse().unwrap()).encode(b);
        });
        let context = ValueContext::new(Some(ObjectType::Device), P::DeviceAddressBinding);
        let json = describe_value(&context, &binding);
        assert_eq!(
            value_text(&json),
            "{address: 127.0.0.1:47808, device: device,7}"
        );

        let services = BitString::from_bits(&[false, false, false, false, false, true]);
        let context = ValueContext::new(Some(ObjectType::Device), P::ProtocolServicesSupported);
        let json = describe_value(&context, &[app(ApplicationValue::BitString(services))]);
        assert_eq!(json[0]["value"], json!(["subscribe-cov"]));
        let types = BitString::from_bits(&[true, false, true]);
        let context = ValueContext::new(Some(ObjectType::Device), P::ProtocolObjectTypesSupported);
        let json = describe_value(&context, &[app(ApplicationValue::BitString(types))]);
        assert_eq!(value_text(&json), "[analog-input, analog-value]");
    }

    #[test]
    fn priority_arrays_show_their_commanded_slots_by_name() {
        let mut slots = vec![app(ApplicationValue::Null); 16];
        slots[7] = app(ApplicationValue::Enumerated(1));
        let context = ValueContext::new(Some(ObjectType::BinaryOutput), P::PriorityArray);
        let json = describe_value(&context, &slots);
        assert_eq!(json.as_array().unwrap().len(), 16);
        assert_eq!(json[7]["name"], "active");
        assert_eq!(value_text(&json), "{8: active}");
        let relinquished = vec![app(ApplicationValue::Null); 16];
        assert_eq!(value_text(&describe_value(&context, &relinquished)), "none");
    }

    #[test]
    fn a_value_of_another_datatype_falls_back_to_its_elements() {
        // status-flags that are not a bit string: described as they are.
        let context = ValueContext::new(Some(ObjectType::AnalogInput), P::StatusFlags);
        let json = describe_value(&context, &[app(ApplicationValue::Unsigned(3))]);
        assert_eq!(json, json!([{"type": "unsigned", "value": 3}]));
    }
}
