//! Dissection of whole BACnet/IP datagrams for people and tools (`buildwire bacnet decode`,
//! the Python `dissect` function): every layer that decodes is described field by field, and
//! the first failure is reported with its layer and its byte offset in the datagram.
//!
//! This is the topmost layer of the crate: it only reads the layers below.

use std::fmt;

use serde_json::{Value, json};

use crate::apdu::{Apdu, BacnetError};
use crate::app::CovNotification;
use crate::encoding::abstract_syntax::decode_to_end;
use crate::encoding::json::hex;
pub use crate::encoding::json::{application_json, element_json, elements_json};
use crate::encoding::{DecodeError, Reader};
use crate::link::Bvll;
use crate::network::{Npdu, NpduBody, RemoteAddress};

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
        | Apdu::ComplexAck { payload, .. } => payload,
        Apdu::Error { payload, .. } => {
            let base = at(payload);
            match BacnetError::decode_payload(&mut Reader::new(payload)) {
                Ok(err) => out.layers.push(Layer {
                    name: "payload",
                    fields: vec![
                        ("error_class", json!(err.class.to_string())),
                        ("error_code", json!(err.code.to_string())),
                    ],
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
        }
        Apdu::Abort {
            server,
            invoke_id,
            reason,
        } => {
            fields.push(("invoke_id", json!(invoke_id)));
            fields.push(("server", json!(server)));
            fields.push(("reason", json!(reason.to_string())));
        }
    }
    Layer {
        name: "apdu",
        fields,
    }
}

/// A received COV notification as JSON: where it came from (`address`), `device`, `object`,
/// subscriber `process`, `confirmed`, `time_remaining` (seconds) and `values`, an object
/// with one entry per property (`name` or `name[index]`) holding its [`elements_json`].
/// `buildwire bacnet subscribe --json` prints these, one per line; the Python client
/// decodes the same.
pub fn cov_notification_json<A: fmt::Display>(notification: &CovNotification<A>) -> Value {
    let request = &notification.request;
    let values: serde_json::Map<String, Value> = request
        .values
        .iter()
        .map(|value| {
            let key = match value.array_index {
                Some(index) => format!("{}[{index}]", value.property),
                None => value.property.to_string(),
            };
            (key, elements_json(&value.value))
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
                    other => writeln!(f, "  {name}: {other}")?,
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
        let elements = &j["payload"]["elements"];
        assert_eq!(elements[0], json!({"context": 0, "hex": "00000005"}));
        assert_eq!(elements[1], json!({"context": 1, "hex": "55"}));
    }

    #[test]
    fn complex_ack_values_are_typed() {
        // ComplexACK invoke 1 ReadProperty: object, property, [3]{ REAL 72.5 }.
        let d = dissect_bip(&hex_bytes("810a0017010030010c0c0000000519553e44442940003f"));
        let j = d.to_json();
        assert_eq!(d.error, None, "{d}");
        let value = &j["payload"]["elements"][2]["children"][0];
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

    #[test]
    fn bvll_without_npdu_is_described() {
        let d = dissect_bip(&hex_bytes("810500060e10"));
        assert_eq!(d.error, None);
        assert_eq!(d.to_json()["bvll"]["ttl"], 3600);
    }
}
