//! Service parameters as named fields, as a protocol analyser shows them: every service
//! `crate::services` decodes (requests, unconfirmed requests and ComplexACKs), with values
//! described by their property (`crate::app::value_names`).

use serde_json::{Value, json};

use crate::apdu::ConfirmedServiceChoice;
use crate::app::value_names::describe_property as value;
use crate::encoding::json::{date_text, time_text};
use crate::encoding::{DateTime, ObjectIdentifier, PropertyValue, Reader};
use crate::enums::PropertyIdentifier;
use crate::services::{
    ChangeListError, ComplexAckParameters, ConfirmedRequest, InstanceRange, PropertyReference,
    RangeSpec, ReadAccessSpecification, ReadResult, ServiceError, UnconfirmedRequest, WhoHasObject,
    WritePropertyMultipleError,
};

/// Named fields of a layer, in wire order.
pub(crate) type Fields = Vec<(&'static str, Value)>;

/// `name` or `name[index]`.
fn property_text(property: PropertyIdentifier, index: Option<u32>) -> String {
    match index {
        Some(index) => format!("{property}[{index}]"),
        None => property.to_string(),
    }
}

fn date_time(when: &DateTime) -> Value {
    json!({"date": date_text(&when.date), "time": time_text(&when.time)})
}

fn range(range: Option<&InstanceRange>) -> Value {
    range.map_or(Value::Null, |r| json!({"low": r.low(), "high": r.high()}))
}

/// The object, property and index fields every property service starts with.
fn target(object: ObjectIdentifier, property: PropertyIdentifier, index: Option<u32>) -> Fields {
    let mut fields = vec![
        ("object", json!(object.to_string())),
        ("property", json!(property.to_string())),
    ];
    if let Some(index) = index {
        fields.push(("array_index", json!(index)));
    }
    fields
}

fn property_values(object: ObjectIdentifier, values: &[PropertyValue]) -> Value {
    Value::Array(
        values
            .iter()
            .map(|v| {
                let mut entry = json!({
                    "property": property_text(v.property, v.array_index),
                    "value": value(object, v.property, v.array_index, &v.value),
                });
                if let Some(priority) = v.priority {
                    entry["priority"] = json!(priority);
                }
                entry
            })
            .collect(),
    )
}

fn references(properties: &[PropertyReference]) -> Value {
    Value::Array(
        properties
            .iter()
            .map(|p| json!(property_text(p.property, p.array_index)))
            .collect(),
    )
}

fn specifications(specifications: &[ReadAccessSpecification]) -> Value {
    Value::Array(
        specifications
            .iter()
            .map(|s| json!({"object": s.object.to_string(), "properties": references(&s.properties)}))
            .collect(),
    )
}

fn error(error: &ServiceError) -> Value {
    json!({"error_class": error.class.to_string(), "error_code": error.code.to_string()})
}

/// The class and code of an Error PDU, by name and by number.
pub(crate) fn error_fields(error: &ServiceError) -> Fields {
    vec![
        ("error_class", json!(error.class.to_string())),
        ("error_code", json!(error.code.to_string())),
        ("error_class_number", json!(error.class.to_u32())),
        ("error_code_number", json!(error.code.to_u32())),
    ]
}

/// The Error-PDU parameters of the services whose errors say more than a class and a code
/// (WritePropertyMultiple-Error, ChangeList-Error).
pub(crate) fn error_parameters(service: ConfirmedServiceChoice, payload: &[u8]) -> Option<Fields> {
    let mut reader = Reader::new(payload);
    let fields = match service {
        ConfirmedServiceChoice::WritePropertyMultiple => {
            let failed = WritePropertyMultipleError::decode(&mut reader).ok()?;
            let at = failed.first_failed_write_attempt;
            let mut fields = error_fields(&failed.error);
            fields.push((
                "first_failed_write_attempt",
                json!(format!(
                    "{}:{}",
                    at.object,
                    property_text(at.property, at.array_index)
                )),
            ));
            fields
        }
        ConfirmedServiceChoice::AddListElement | ConfirmedServiceChoice::RemoveListElement => {
            let failed = ChangeListError::decode(&mut reader).ok()?;
            let mut fields = error_fields(&failed.error);
            fields.push((
                "first_failed_element_number",
                json!(failed.first_failed_element_number),
            ));
            fields
        }
        _ => return None,
    };
    reader.is_empty().then_some(fields)
}

fn subscription(
    process: u32,
    object: ObjectIdentifier,
    confirmed: Option<bool>,
    lifetime: Option<u32>,
) -> Fields {
    let mut fields = vec![
        ("subscriber_process_identifier", json!(process)),
        ("monitored_object", json!(object.to_string())),
    ];
    match (confirmed, lifetime) {
        (None, None) => fields.push(("cancellation", json!(true))),
        _ => {
            fields.push(("issue_confirmed_notifications", json!(confirmed)));
            fields.push(("lifetime", json!(lifetime)));
        }
    }
    fields
}

/// The named fields of a confirmed request's parameters.
pub(crate) fn confirmed_request(request: &ConfirmedRequest) -> Fields {
    match request {
        ConfirmedRequest::ReadProperty(r) => target(r.object, r.property, r.array_index),
        ConfirmedRequest::ReadPropertyMultiple(r) => {
            vec![(
                "read_access_specifications",
                specifications(&r.specifications),
            )]
        }
        ConfirmedRequest::WriteProperty(r) => {
            let mut fields = target(r.object, r.property, r.array_index);
            fields.push((
                "value",
                value(r.object, r.property, r.array_index, &r.value),
            ));
            if let Some(priority) = r.priority {
                fields.push(("priority", json!(priority)));
            }
            fields
        }
        ConfirmedRequest::WritePropertyMultiple(r) => {
            let list: Vec<Value> = r
                .specifications
                .iter()
                .map(|s| {
                    json!({"object": s.object.to_string(),
                           "values": property_values(s.object, &s.properties)})
                })
                .collect();
            vec![("write_access_specifications", Value::Array(list))]
        }
        ConfirmedRequest::ConfirmedCovNotification(n) => cov_notification(n),
        ConfirmedRequest::SubscribeCov(r) => subscription(
            r.subscriber_process_identifier,
            r.monitored_object,
            r.issue_confirmed_notifications,
            r.lifetime,
        ),
        ConfirmedRequest::SubscribeCovProperty(r) => {
            let mut fields = subscription(
                r.subscriber_process_identifier,
                r.monitored_object,
                r.issue_confirmed_notifications,
                r.lifetime,
            );
            fields.push((
                "monitored_property",
                json!(property_text(
                    r.monitored_property.property,
                    r.monitored_property.array_index
                )),
            ));
            if let Some(increment) = r.cov_increment {
                fields.push(("cov_increment", json!(increment)));
            }
            fields
        }
        ConfirmedRequest::AddListElement(r) | ConfirmedRequest::RemoveListElement(r) => {
            let mut fields = target(r.object, r.property, r.array_index);
            fields.push((
                "list_of_elements",
                value(r.object, r.property, r.array_index, &r.elements),
            ));
            fields
        }
        ConfirmedRequest::DeviceCommunicationControl(r) => vec![
            ("time_duration", json!(r.time_duration)),
            ("enable_disable", json!(r.enable_disable.to_string())),
            ("password", json!(r.password.as_ref().map(|_| "(given)"))),
        ],
        ConfirmedRequest::ReinitializeDevice(r) => vec![
            ("reinitialized_state", json!(r.state.to_string())),
            ("password", json!(r.password.as_ref().map(|_| "(given)"))),
        ],
        ConfirmedRequest::ReadRange(r) => {
            let mut fields = target(r.object, r.property, r.array_index);
            let range = match &r.range {
                None => Value::Null,
                Some(RangeSpec::ByPosition {
                    reference_index,
                    count,
                }) => json!({"by_position": {"reference_index": reference_index, "count": count}}),
                Some(RangeSpec::BySequenceNumber {
                    reference_sequence_number,
                    count,
                }) => json!({"by_sequence_number": {
                    "reference_sequence_number": reference_sequence_number, "count": count}}),
                Some(RangeSpec::ByTime {
                    reference_time,
                    count,
                }) => json!({"by_time": {"reference_time": date_time(reference_time),
                                         "count": count}}),
            };
            fields.push(("range", range));
            fields
        }
    }
}

fn cov_notification(n: &crate::services::CovNotificationRequest) -> Fields {
    vec![
        (
            "subscriber_process_identifier",
            json!(n.subscriber_process_identifier),
        ),
        ("initiating_device", json!(n.initiating_device.to_string())),
        ("monitored_object", json!(n.monitored_object.to_string())),
        ("time_remaining", json!(n.time_remaining)),
        ("values", property_values(n.monitored_object, &n.values)),
    ]
}

/// The named fields of an unconfirmed request's parameters.
pub(crate) fn unconfirmed_request(request: &UnconfirmedRequest) -> Fields {
    match request {
        UnconfirmedRequest::IAm(i_am) => vec![
            ("device", json!(i_am.device.to_string())),
            (
                "max_apdu_length_accepted",
                json!(i_am.max_apdu_length_accepted),
            ),
            (
                "segmentation_supported",
                json!(i_am.segmentation_supported.to_string()),
            ),
            ("vendor_id", json!(i_am.vendor_id)),
        ],
        UnconfirmedRequest::IHave(i_have) => vec![
            ("device", json!(i_have.device.to_string())),
            ("object", json!(i_have.object.to_string())),
            ("object_name", json!(i_have.object_name)),
        ],
        UnconfirmedRequest::WhoHas(who_has) => {
            let object = match &who_has.object {
                WhoHasObject::Identifier(id) => ("object", json!(id.to_string())),
                WhoHasObject::Name(name) => ("object_name", json!(name)),
            };
            vec![("range", range(who_has.range.as_ref())), object]
        }
        UnconfirmedRequest::WhoIs(who_is) => vec![("range", range(who_is.range.as_ref()))],
        UnconfirmedRequest::UnconfirmedCovNotification(n) => cov_notification(n),
        UnconfirmedRequest::TimeSynchronization(t)
        | UnconfirmedRequest::UtcTimeSynchronization(t) => {
            vec![("time", date_time(&t.time))]
        }
    }
}

/// The named fields of a ComplexACK's parameters.
pub(crate) fn complex_ack(ack: &ComplexAckParameters) -> Fields {
    match ack {
        ComplexAckParameters::ReadProperty(a) => {
            let mut fields = target(a.object, a.property, a.array_index);
            fields.push((
                "value",
                value(a.object, a.property, a.array_index, &a.value),
            ));
            fields
        }
        ComplexAckParameters::ReadPropertyMultiple(a) => {
            let list: Vec<Value> = a
                .results
                .iter()
                .map(|object| {
                    let results: Vec<Value> = object
                        .results
                        .iter()
                        .map(|r| {
                            let mut entry =
                                json!({"property": property_text(r.property, r.array_index)});
                            match &r.result {
                                ReadResult::Value(v) => {
                                    entry["value"] =
                                        value(object.object, r.property, r.array_index, v);
                                }
                                ReadResult::Error(e) => entry["error"] = error(e),
                            }
                            entry
                        })
                        .collect();
                    json!({"object": object.object.to_string(), "results": results})
                })
                .collect();
            vec![("read_access_results", Value::Array(list))]
        }
        ComplexAckParameters::ReadRange(a) => {
            let mut fields = target(a.object, a.property, a.array_index);
            fields.push((
                "result_flags",
                json!({"first_item": a.result_flags.first_item,
                       "last_item": a.result_flags.last_item,
                       "more_items": a.result_flags.more_items}),
            ));
            fields.push(("item_count", json!(a.item_count)));
            fields.push(("item_data", value(a.object, a.property, None, &a.item_data)));
            if let Some(first) = a.first_sequence_number {
                fields.push(("first_sequence_number", json!(first)));
            }
            fields
        }
    }
}
