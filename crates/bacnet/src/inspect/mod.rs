//! Dissection of whole BACnet/IP datagrams for people and tools (`buildwire bacnet decode`,
//! the Python `dissect` function): every layer that decodes is described field by field, and
//! the first failure is reported with its layer and its byte offset in the datagram.
//!
//! This is the topmost layer of the crate: it only reads the layers below.

mod services;

use std::fmt;

use serde_json::{Value, json};

use crate::apdu::{Apdu, BacnetError};
use crate::app::CovNotification;
use crate::app::value_names::{ValueContext, describe_value, value_text};
use crate::encoding::abstract_syntax::decode_to_end;
use crate::encoding::json::hex;
pub use crate::encoding::json::{application_json, element_json, elements_json};
use crate::encoding::{DecodeError, Reader};
use crate::link::Bvll;
use crate::network::{Npdu, NpduBody, RemoteAddress};
use crate::services::{ComplexAckParameters, ConfirmedRequest, UnconfirmedRequest};

/// One decoded layer: its name and its fields in wire order.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    /// `bvll`, `npdu`, `apdu` or `payload`.
    pub name: &'static str,
    /// Field names and values.
    pub fields: Vec<(&'static str, Value)>,
}

/// Where decoding stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DissectionError {
    /// The layer that failed.
    pub layer: &'static str,
    /// The error, with its offset counted from the start of the datagram.
    pub error: DecodeError,
}

/// A datagram's layers as far as they decode.
#[derive(Debug, Clone, PartialEq)]
pub struct Dissection {
    /// Layers that decoded, outermost first.
    pub layers: Vec<Layer>,
    /// The first failure, if any.
    pub error: Option<DissectionError>,
}

/// Decodes a BACnet/IP datagram (Annex J BVLL, then NPDU, APDU header and service
/// parameters as generic tagged data).
///
/// ```
/// use buildwire_bacnet::inspect::dissect_bip;
/// // Who-Is, broadcast on the local network.
/// let d = dissect_bip(&[0x81, 0x0b, 0x00, 0x08, 0x01, 0x00, 0x10, 0x08]);
/// assert!(d.error.is_none());
/// assert_eq!(d.to_json()["apdu"]["service"], "who-is");
/// ```
pub fn dissect_bip(datagram: &[u8]) -> Dissection {
    let mut out = Dissection {
        layers: Vec::new(),
        error: None,
    };
    let at = |slice: &[u8]| datagram.len() - slice.len();
    let fail = |out: &mut Dissection, layer, base: usize, mut error: DecodeError| {
        error.offset += base;
        out.error = Some(DissectionError { layer, error });
    };

    let bvll = match Bvll::decode_datagram(datagram) {
        Ok(b) => b,
        Err(e) => {
            fail(&mut out, "bvll", 0, e);
            return out;
        }
    };
    out.layers.push(describe_bvll(&bvll));
    let Some(npdu_bytes) = bvll.npdu() else {
        return out;
    };
    let base = at(npdu_bytes);
    let npdu = match Npdu::decode(&mut Reader::new(npdu_bytes)) {
        Ok(n) => n,
        Err(e) => {
            fail(&mut out, "npdu", base, e);
            return out;
        }
    };
    out.layers.push(describe_npdu(&npdu));
    let NpduBody::Apdu(apdu_bytes) = npdu.body else {
        return out;
    };
    let base = at(apdu_bytes);
    let apdu = match Apdu::decode(&mut Reader::new(apdu_bytes)) {
        Ok(a) => a,
        Err(e) => {
            fail(&mut out, "apdu", base, e);
            return out;
        }
    };
    out.layers.push(describe_apdu(&apdu));
    let payload = match apdu {
        Apdu::ConfirmedRequest { payload, .. }
        | Apdu::UnconfirmedRequest { payload, .. }
        | Apdu::ComplexAck { payload, .. } => {
            if let Some(fields) = named_parameters(&apdu) {
                out.layers.push(Layer {
                    name: "payload",
                    fields,
                });
                return out;
            }
            payload
        }
        Apdu::Error {
            payload, service, ..
        } => {
            let base = at(payload);
            if let Some(fields) = services::error_parameters(service, payload) {
                out.layers.push(Layer {
                    name: "payload",
                    fields,
                });
                return out;
            }
            match BacnetError::decode_payload(&mut Reader::new(payload)) {
                Ok(err) => out.layers.push(Layer {
                    name: "payload",
                    fields: services::error_fields(&err),
                }),
                Err(e) => fail(&mut out, "payload", base, e),
            }
            return out;
        }
        _ => return out,
    };
    let base = at(payload);
    match decode_to_end(&mut Reader::new(payload)) {
        Ok(elements) => out.layers.push(Layer {
            name: "payload",
            fields: vec![("elements", elements_json(&elements))],
        }),
        Err(e) => fail(&mut out, "payload", base, e),
    }
    out
}

/// The service parameters as named fields, when the service is one this crate decodes
/// and the APDU is not one segment of a longer message; `None` leaves them to the generic
/// tagged-data view (which also finds where malformed parameters go wrong).
fn named_parameters(apdu: &Apdu<'_>) -> Option<services::Fields> {
    match apdu {
        Apdu::ConfirmedRequest {
            segment: None,
            service,
            payload,
            ..
        } => ConfirmedRequest::decode(*service, &mut Reader::new(payload))
            .ok()
            .map(|r| services::confirmed_request(&r)),
        Apdu::UnconfirmedRequest { service, payload } => {
            UnconfirmedRequest::decode(*service, &mut Reader::new(payload))
                .ok()
                .map(|r| services::unconfirmed_request(&r))
        }
        Apdu::ComplexAck {
            segment: None,
            service,
            payload,
            ..
        } => ComplexAckParameters::decode(*service, &mut Reader::new(payload))
            .ok()
            .map(|a| services::complex_ack(&a)),
        _ => None,
    }
}

fn describe_bvll(bvll: &Bvll<'_>) -> Layer {
    let function = match bvll {
        Bvll::Result(_) => "bvlc-result",
        Bvll::WriteBdt(_) => "write-broadcast-distribution-table",
        Bvll::ReadBdt => "read-broadcast-distribution-table",
        Bvll::ReadBdtAck(_) => "read-broadcast-distribution-table-ack",
        Bvll::ForwardedNpdu { .. } => "forwarded-npdu",
        Bvll::RegisterForeignDevice { .. } => "register-foreign-device",
        Bvll::ReadFdt => "read-foreign-device-table",
        Bvll::ReadFdtAck(_) => "read-foreign-device-table-ack",
        Bvll::DeleteFdtEntry(_) => "delete-foreign-device-table-entry",
        Bvll::DistributeBroadcastToNetwork(_) => "distribute-broadcast-to-network",
        Bvll::OriginalUnicastNpdu(_) => "original-unicast-npdu",
        Bvll::OriginalBroadcastNpdu(_) => "original-broadcast-npdu",
        Bvll::SecureBvll(_) => "secure-bvll",
    };
    let mut fields = vec![("function", json!(function))];
    match bvll {
        Bvll::Result(code) => fields.push(("result", json!(format!("{code:?}")))),
        Bvll::WriteBdt(entries) | Bvll::ReadBdtAck(entries) => {
            let list: Vec<Value> = entries
                .iter()
                .map(|e| json!({"address": e.address.to_string(), "mask": e.mask.to_string()}))
                .collect();
            fields.push(("bdt", Value::Array(list)));
        }
        Bvll::ReadFdtAck(entries) => {
            let list: Vec<Value> = entries
                .iter()
                .map(|e| {
                    json!({"address": e.address.to_string(), "ttl": e.time_to_live,
                           "remaining": e.remaining})
                })
                .collect();
            fields.push(("fdt", Value::Array(list)));
        }
        Bvll::ForwardedNpdu { source, .. } => {
            fields.push(("original_source", json!(source.to_string())));
        }
        Bvll::RegisterForeignDevice { time_to_live } => {
            fields.push(("ttl", json!(time_to_live)));
        }
        Bvll::DeleteFdtEntry(address) => fields.push(("address", json!(address.to_string()))),
        _ => {}
    }
    Layer {
        name: "bvll",
        fields,
    }
}

fn remote(address: &RemoteAddress) -> Value {
    let mac = hex(address.mac.as_bytes());
    if mac.is_empty() {
        json!({"network": address.network, "mac": "broadcast"})
    } else {
        json!({"network": address.network, "mac": mac})
    }
}

fn describe_npdu(npdu: &Npdu<'_>) -> Layer {
    let mut fields = vec![
        ("expecting_reply", json!(npdu.expecting_reply)),
        ("priority", json!(format!("{:?}", npdu.priority))),
    ];
    if let Some(dest) = &npdu.destination {
        fields.push(("destination", remote(dest)));
        fields.push(("hop_count", json!(npdu.hop_count)));
    }
    if let Some(source) = &npdu.source {
        fields.push(("source", remote(source)));
    }
    if let NpduBody::NetworkMessage {
        message_type,
        vendor_id,
        data,
    } = npdu.body
    {
        fields.push(("network_message", json!(message_type.to_string())));
        if let Some(vendor) = vendor_id {
            fields.push(("vendor_id", json!(vendor)));
        }
        fields.push(("data", json!(hex(data))));
    }
    Layer {
        name: "npdu",
        fields,
    }
}

fn describe_apdu(apdu: &Apdu<'_>) -> Layer {
    let mut fields = vec![("type", json!(format!("{:?}", apdu.pdu_type())))];
    let segment = |fields: &mut Vec<(&'static str, Value)>, s: Option<_>| {
        if let Some(s) = s {
            let s: &crate::apdu::SegmentInfo = s;
            fields.push((
                "segment",
                json!({"sequence_number": s.sequence_number, "more_follows": s.more_follows,
                       "proposed_window_size": s.proposed_window_size}),
            ));
        }
    };
    match apdu {
        Apdu::ConfirmedRequest {
            segmented_response_accepted,
            max_segments,
            max_apdu,
            invoke_id,
            segment: seg,
            service,
            ..
        } => {
            fields.push(("invoke_id", json!(invoke_id)));
            fields.push(("service", json!(service.to_string())));
            fields.push(("max_apdu", json!(max_apdu.octets())));
            fields.push(("max_segments", json!(max_segments.count())));
            fields.push((
                "segmented_response_accepted",
                json!(segmented_response_accepted),
            ));
            segment(&mut fields, seg.as_ref());
        }
        Apdu::UnconfirmedRequest { service, .. } => {
            fields.push(("service", json!(service.to_string())));
        }
        Apdu::SimpleAck { invoke_id, service }
        | Apdu::Error {
            invoke_id, service, ..
        } => {
            fields.push(("invoke_id", json!(invoke_id)));
            fields.push(("service", json!(service.to_string())));
        }
        Apdu::ComplexAck {
            invoke_id,
            segment: seg,
            service,
            ..
        } => {
            fields.push(("invoke_id", json!(invoke_id)));
            fields.push(("service", json!(service.to_string())));
            segment(&mut fields, seg.as_ref());
        }
        Apdu::SegmentAck {
            negative,
            server,
            invoke_id,
            sequence_number,
            actual_window_size,
        } => {
            fields.push(("invoke_id", json!(invoke_id)));
            fields.push(("negative", json!(negative)));
            fields.push(("server", json!(server)));
            fields.push(("sequence_number", json!(sequence_number)));
            fields.push(("actual_window_size", json!(actual_window_size)));
        }
        Apdu::Reject { invoke_id, reason } => {
            fields.push(("invoke_id", json!(invoke_id)));
            fields.push(("reason", json!(reason.to_string())));
            fields.push(("reason_number", json!(reason.to_u32())));
        }
        Apdu::Abort {
            server,
            invoke_id,
            reason,
        } => {
            fields.push(("invoke_id", json!(invoke_id)));
            fields.push(("server", json!(server)));
            fields.push(("reason", json!(reason.to_string())));
            fields.push(("reason_number", json!(reason.to_u32())));
        }
    }
    Layer {
        name: "apdu",
        fields,
    }
}

/// A received COV notification as JSON: where it came from (`address`), `device`, `object`,
/// subscriber `process`, `confirmed`, `time_remaining` (seconds) and `values`, an object
/// with one entry per property (`name` or `name[index]`) holding its described value
/// ([`describe_value`]: enumerations named, status flags decoded).
/// `buildwire bacnet subscribe --json` prints these, one per line; the Python client
/// decodes the same.
pub fn cov_notification_json<A: fmt::Display>(notification: &CovNotification<A>) -> Value {
    cov_notification_json_named(notification, None)
}

/// [`cov_notification_json`], with the monitored object's state-text naming a multi-state
/// present-value (read once when subscribing: notifications do not carry it).
pub fn cov_notification_json_named<A: fmt::Display>(
    notification: &CovNotification<A>,
    state_text: Option<&[String]>,
) -> Value {
    let request = &notification.request;
    let values: serde_json::Map<String, Value> = request
        .values
        .iter()
        .map(|value| {
            let key = match value.array_index {
                Some(index) => format!("{}[{index}]", value.property),
                None => value.property.to_string(),
            };
            let mut context =
                ValueContext::new(Some(request.monitored_object.object_type()), value.property);
            context.array_index = value.array_index;
            context.state_text = state_text;
            (key, describe_value(&context, &value.value))
        })
        .collect();
    json!({
        "address": notification.from.link.to_string(),
        "device": request.initiating_device.to_string(),
        "object": request.monitored_object.to_string(),
        "process": request.subscriber_process_identifier,
        "confirmed": notification.confirmed,
        "time_remaining": request.time_remaining,
        "values": values,
    })
}

impl Dissection {
    /// The dissection as one JSON object: a key per layer, plus `error` when decoding stopped.
    pub fn to_json(&self) -> Value {
        let mut map = serde_json::Map::new();
        for layer in &self.layers {
            let fields = layer
                .fields
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect();
            map.insert(layer.name.to_owned(), Value::Object(fields));
        }
        if let Some(e) = &self.error {
            map.insert(
                "error".to_owned(),
                json!({"layer": e.layer, "offset": e.error.offset, "message": e.error.kind.to_string()}),
            );
        }
        Value::Object(map)
    }
}

impl fmt::Display for Dissection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for layer in &self.layers {
            writeln!(f, "{}", layer.name.to_uppercase())?;
            for (name, value) in &layer.fields {
                match value {
                    Value::String(s) => writeln!(f, "  {name}: {s}")?,
                    other => writeln!(f, "  {name}: {}", value_text(other))?,
                }
            }
        }
        if let Some(e) = &self.error {
            writeln!(
                f,
                "ERROR in {} at byte {}: {}",
                e.layer, e.error.offset, e.error.kind
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex_bytes(text: &str) -> Vec<u8> {
        let text = text.replace(' ', "");
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn read_property_request_decodes_to_its_parameters() {
        // Original-Unicast-NPDU, NPDU expecting reply, Confirmed-Request invoke 1
        // ReadProperty(analog-input 5, present-value).
        let d = dissect_bip(&hex_bytes("810a001101040005010c0c000000051955"));
        assert_eq!(d.error, None, "{d}");
        let j = d.to_json();
        assert_eq!(j["bvll"]["function"], "original-unicast-npdu");
        assert_eq!(j["npdu"]["expecting_reply"], true);
        assert_eq!(j["apdu"]["service"], "read-property");
        assert_eq!(j["apdu"]["invoke_id"], 1);
        assert_eq!(j["apdu"]["max_apdu"], 1476);
        assert_eq!(j["payload"]["object"], "analog-input,5");
        assert_eq!(j["payload"]["property"], "present-value");
        assert!(d.to_string().contains("  object: analog-input,5\n"), "{d}");
    }

    #[test]
    fn complex_ack_values_are_typed() {
        // ComplexACK invoke 1 ReadProperty: object, property, [3]{ REAL 72.5 }.
        let d = dissect_bip(&hex_bytes("810a0017010030010c0c0000000519553e44442940003f"));
        let j = d.to_json();
        assert_eq!(d.error, None, "{d}");
        assert_eq!(j["payload"]["object"], "analog-input,5");
        let value = &j["payload"]["value"][0];
        assert_eq!(value["type"], "real");
        assert_eq!(value["value"], 677.0);
    }

    #[test]
    fn errors_name_the_layer_and_the_offset_in_the_datagram() {
        // BVLC length field says 8, the datagram has 10 bytes.
        let d = dissect_bip(&hex_bytes("810a0008020010080000"));
        let e = d.error.as_ref().unwrap();
        assert!(d.layers.is_empty());
        assert_eq!(e.layer, "bvll");
        // NPDU version 2 (only 1 exists).
        let d = dissect_bip(&hex_bytes("810a000802001008"));
        let e = d.error.as_ref().unwrap();
        assert_eq!(e.layer, "npdu");
        assert_eq!(e.error.offset, 4);
        assert!(d.to_string().contains("ERROR in npdu at byte 4"));
        // Truncated payload: context tag 0 claims 4 bytes, 2 follow.
        let d = dissect_bip(&hex_bytes("810a000d01040005010c0c0000"));
        let e = d.error.as_ref().unwrap();
        assert_eq!(e.layer, "payload");
        // The tag octet is byte 10; the missing content would start at byte 11.
        assert_eq!(e.error.offset, 11, "{d}");
    }

    /// A B/IP datagram (Original-Unicast-NPDU) around an APDU header and parameters.
    fn datagram(apdu_header: &[u8], parameters: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut apdu = apdu_header.to_vec();
        parameters(&mut apdu);
        let control = if apdu_header[0] == 0x00 { 0x04 } else { 0x00 };
        let length = u16::try_from(apdu.len() + 6).unwrap().to_be_bytes();
        let mut out = vec![0x81, 0x0a, length[0], length[1], 0x01, control];
        out.extend_from_slice(&apdu);
        out
    }

    fn confirmed(request: &ConfirmedRequest) -> Value {
        let choice = u8::try_from(request.service_choice().to_u32()).unwrap();
        let d = dissect_bip(&datagram(&[0x00, 0x05, 0x07, choice], |b| {
            request.encode(b)
        }));
        assert_eq!(d.error, None, "{d}");
        d.to_json()["payload"].clone()
    }

    fn unconfirmed(request: &UnconfirmedRequest) -> Value {
        let choice = u8::try_from(request.service_choice().to_u32()).unwrap();
        let d = dissect_bip(&datagram(&[0x10, choice], |b| request.encode(b)));
        assert_eq!(d.error, None, "{d}");
        d.to_json()["payload"].clone()
    }

    fn ack(parameters: &ComplexAckParameters) -> Value {
        let choice = u8::try_from(parameters.service_choice().to_u32()).unwrap();
        let d = dissect_bip(&datagram(&[0x30, 0x07, choice], |b| parameters.encode(b)));
        assert_eq!(d.error, None, "{d}");
        d.to_json()["payload"].clone()
    }

    #[test]
    fn every_service_decodes_to_named_fields() {
        use crate::encoding::{ApplicationValue, Date, DateTime, Element, PropertyValue, Time};
        use crate::enums::{
            EnableDisable, ObjectType, PropertyIdentifier as P, ReinitializedState, Segmentation,
        };
        use crate::services::{
            CovNotificationRequest, DeviceCommunicationControlRequest, IAm, IHave, InstanceRange,
            ListElementRequest, PropertyReadResult, PropertyReference, RangeSpec, ReadAccessResult,
            ReadAccessSpecification, ReadPropertyAck, ReadPropertyMultipleAck,
            ReadPropertyMultipleRequest, ReadPropertyRequest, ReadRangeAck, ReadRangeRequest,
            ReadResult, ReinitializeDeviceRequest, ResultFlags, SubscribeCovPropertyRequest,
            SubscribeCovRequest, TimeSynchronizationRequest, WhoHas, WhoHasObject, WhoIs,
            WriteAccessSpecification, WritePropertyMultipleRequest, WritePropertyRequest,
        };
        let bv = crate::ObjectIdentifier::new(ObjectType::BinaryValue, 1);
        let av = crate::ObjectIdentifier::new(ObjectType::AnalogValue, 2);
        let device = crate::ObjectIdentifier::new(ObjectType::Device, 9);
        let active = vec![Element::Application(ApplicationValue::Enumerated(1))];
        let celsius = vec![Element::Application(ApplicationValue::Enumerated(62))];
        let noon = DateTime {
            date: Date::new(2026, 11, 27, 5),
            time: Time::new(12, 0, 0, 0),
        };

        let p = confirmed(&ConfirmedRequest::ReadProperty(ReadPropertyRequest {
            object: av,
            property: P::Units,
            array_index: Some(3),
        }));
        assert_eq!(p["object"], "analog-value,2");
        assert_eq!(p["property"], "units");
        assert_eq!(p["array_index"], 3);

        let p = confirmed(&ConfirmedRequest::ReadPropertyMultiple(
            ReadPropertyMultipleRequest {
                specifications: vec![ReadAccessSpecification {
                    object: av,
                    properties: vec![PropertyReference {
                        property: P::PriorityArray,
                        array_index: Some(8),
                    }],
                }],
            },
        ));
        assert_eq!(
            p["read_access_specifications"],
            json!([{"object": "analog-value,2", "properties": ["priority-array[8]"]}])
        );

        let p = confirmed(&ConfirmedRequest::WriteProperty(WritePropertyRequest {
            object: bv,
            property: P::PresentValue,
            array_index: None,
            value: active.clone(),
            priority: Some(8),
        }));
        assert_eq!(p["value"][0]["name"], "active");
        assert_eq!(p["priority"], 8);

        let p = confirmed(&ConfirmedRequest::WritePropertyMultiple(
            WritePropertyMultipleRequest {
                specifications: vec![WriteAccessSpecification {
                    object: av,
                    properties: vec![PropertyValue {
                        property: P::Units,
                        array_index: None,
                        value: celsius.clone(),
                        priority: None,
                    }],
                }],
            },
        ));
        let values = &p["write_access_specifications"][0]["values"][0];
        assert_eq!(values["property"], "units");
        assert_eq!(values["value"][0]["name"], "degrees-celsius");

        let notification = CovNotificationRequest {
            subscriber_process_identifier: 4,
            initiating_device: device,
            monitored_object: bv,
            time_remaining: 60,
            values: vec![PropertyValue {
                property: P::PresentValue,
                array_index: None,
                value: active.clone(),
                priority: None,
            }],
        };
        let p = confirmed(&ConfirmedRequest::ConfirmedCovNotification(
            notification.clone(),
        ));
        assert_eq!(p["initiating_device"], "device,9");
        assert_eq!(p["values"][0]["value"][0]["name"], "active");
        let p = unconfirmed(&UnconfirmedRequest::UnconfirmedCovNotification(
            notification,
        ));
        assert_eq!(p["time_remaining"], 60);

        let p = confirmed(&ConfirmedRequest::SubscribeCov(SubscribeCovRequest {
            subscriber_process_identifier: 4,
            monitored_object: av,
            issue_confirmed_notifications: Some(false),
            lifetime: Some(300),
        }));
        assert_eq!(p["lifetime"], 300);
        let p = confirmed(&ConfirmedRequest::SubscribeCov(SubscribeCovRequest {
            subscriber_process_identifier: 4,
            monitored_object: av,
            issue_confirmed_notifications: None,
            lifetime: None,
        }));
        assert_eq!(p["cancellation"], true);
        let p = confirmed(&ConfirmedRequest::SubscribeCovProperty(
            SubscribeCovPropertyRequest {
                subscriber_process_identifier: 4,
                monitored_object: av,
                issue_confirmed_notifications: Some(true),
                lifetime: Some(60),
                monitored_property: PropertyReference {
                    property: P::PresentValue,
                    array_index: None,
                },
                cov_increment: Some(0.5),
            },
        ));
        assert_eq!(p["monitored_property"], "present-value");
        assert_eq!(p["cov_increment"], 0.5);

        let list = ListElementRequest {
            object: device,
            property: P::ObjectList,
            array_index: None,
            elements: vec![Element::Application(ApplicationValue::ObjectIdentifier(av))],
        };
        let p = confirmed(&ConfirmedRequest::AddListElement(list.clone()));
        assert_eq!(p["list_of_elements"][0]["value"], "analog-value,2");
        let p = confirmed(&ConfirmedRequest::RemoveListElement(list));
        assert_eq!(p["property"], "object-list");

        let p = confirmed(&ConfirmedRequest::DeviceCommunicationControl(
            DeviceCommunicationControlRequest {
                time_duration: Some(5),
                enable_disable: EnableDisable::DisableInitiation,
                password: Some("secret".to_owned()),
            },
        ));
        assert_eq!(p["enable_disable"], "disable-initiation");
        assert_eq!(p["password"], "(given)");
        let p = confirmed(&ConfirmedRequest::ReinitializeDevice(
            ReinitializeDeviceRequest {
                state: ReinitializedState::Warmstart,
                password: None,
            },
        ));
        assert_eq!(p["reinitialized_state"], "warmstart");

        let p = confirmed(&ConfirmedRequest::ReadRange(ReadRangeRequest {
            object: crate::ObjectIdentifier::new(ObjectType::TrendLog, 1),
            property: P::LogBuffer,
            array_index: None,
            range: Some(RangeSpec::ByTime {
                reference_time: noon,
                count: -10,
            }),
        }));
        assert_eq!(p["range"]["by_time"]["count"], -10);
        assert_eq!(
            p["range"]["by_time"]["reference_time"]["time"],
            "12:00:00.00"
        );

        let time = TimeSynchronizationRequest { time: noon };
        let p = unconfirmed(&UnconfirmedRequest::TimeSynchronization(time));
        assert_eq!(p["time"]["date"], "2026-11-27 (weekday 5)");
        let p = unconfirmed(&UnconfirmedRequest::UtcTimeSynchronization(time));
        assert_eq!(p["time"]["time"], "12:00:00.00");
        let p = unconfirmed(&UnconfirmedRequest::WhoIs(WhoIs {
            range: InstanceRange::new(10, 20),
        }));
        assert_eq!(p["range"], json!({"low": 10, "high": 20}));
        let p = unconfirmed(&UnconfirmedRequest::WhoHas(WhoHas {
            range: None,
            object: WhoHasObject::Name("zone 1".to_owned()),
        }));
        assert_eq!(p["object_name"], "zone 1");
        let p = unconfirmed(&UnconfirmedRequest::IHave(IHave {
            device,
            object: av,
            object_name: "zone 1".to_owned(),
        }));
        assert_eq!(p["object"], "analog-value,2");
        let p = unconfirmed(&UnconfirmedRequest::IAm(IAm {
            device,
            max_apdu_length_accepted: 1476,
            segmentation_supported: Segmentation::NoSegmentation,
            vendor_id: 999,
        }));
        assert_eq!(p["segmentation_supported"], "no-segmentation");

        let p = ack(&ComplexAckParameters::ReadProperty(ReadPropertyAck {
            object: av,
            property: P::Units,
            array_index: None,
            value: celsius.clone(),
        }));
        assert_eq!(p["value"][0]["name"], "degrees-celsius");
        let p = ack(&ComplexAckParameters::ReadPropertyMultiple(
            ReadPropertyMultipleAck {
                results: vec![ReadAccessResult {
                    object: bv,
                    results: vec![
                        PropertyReadResult {
                            property: P::PresentValue,
                            array_index: None,
                            result: ReadResult::Value(active),
                        },
                        PropertyReadResult {
                            property: P::Units,
                            array_index: None,
                            result: ReadResult::Error(crate::apdu::BacnetError {
                                class: crate::enums::ErrorClass::Property,
                                code: crate::enums::ErrorCode::UnknownProperty,
                            }),
                        },
                    ],
                }],
            },
        ));
        let results = &p["read_access_results"][0]["results"];
        assert_eq!(results[0]["value"][0]["name"], "active");
        assert_eq!(results[1]["error"]["error_code"], "unknown-property");
        let p = ack(&ComplexAckParameters::ReadRange(ReadRangeAck {
            object: av,
            property: P::StateText,
            array_index: None,
            result_flags: ResultFlags {
                first_item: true,
                last_item: true,
                more_items: false,
            },
            item_count: 1,
            item_data: vec![Element::Application(ApplicationValue::CharacterString(
                "on".to_owned(),
            ))],
            first_sequence_number: None,
        }));
        assert_eq!(p["item_count"], 1);
        assert_eq!(p["result_flags"]["first_item"], true);
    }

    #[test]
    fn rejects_aborts_and_errors_give_name_and_number() {
        // Reject invoke 1, unrecognized-service (9).
        let j = dissect_bip(&hex_bytes("810a000901006001 09")).to_json();
        assert_eq!(j["apdu"]["reason"], "unrecognized-service");
        assert_eq!(j["apdu"]["reason_number"], 9);
        // Abort from the server, invoke 2, segmentation-not-supported (4).
        let j = dissect_bip(&hex_bytes("810a000901007102 04")).to_json();
        assert_eq!(j["apdu"]["reason"], "segmentation-not-supported");
        // Error invoke 3 ReadProperty: property (2) unknown-property (32).
        let j = dissect_bip(&hex_bytes("810a000d010050030c 9102 9120")).to_json();
        assert_eq!(j["payload"]["error_code"], "unknown-property");
        assert_eq!(j["payload"]["error_code_number"], 32);
        assert_eq!(j["payload"]["error_class_number"], 2);
    }

    #[test]
    fn write_multiple_and_list_errors_name_what_failed() {
        // WritePropertyMultiple-Error: property unknown-property at analog-value,1
        // present-value.
        let j = dissect_bip(&hex_bytes(
            "810a0018 0100 500110 0e91029120 0f 1e0c008000011955 1f",
        ))
        .to_json();
        assert_eq!(j["payload"]["error_code"], "unknown-property");
        assert_eq!(
            j["payload"]["first_failed_write_attempt"],
            "analog-value,1:present-value"
        );
        // ChangeList-Error of AddListElement: services other (5, 0) at element 2.
        let j = dissect_bip(&hex_bytes("810a0011 0100 500108 0e91059100 0f 1902")).to_json();
        assert_eq!(j["payload"]["error_class"], "services");
        assert_eq!(j["payload"]["first_failed_element_number"], 2);
    }

    #[test]
    fn bvll_without_npdu_is_described() {
        let d = dissect_bip(&hex_bytes("810500060e10"));
        assert_eq!(d.error, None);
        assert_eq!(d.to_json()["bvll"]["ttl"], 3600);
    }
}
