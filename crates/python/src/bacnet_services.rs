//! The BACnet client services beyond read, write and COV, for Python: Who-Has, ReadRange,
//! WritePropertyMultiple, Add/RemoveListElement, DeviceCommunicationControl,
//! ReinitializeDevice and (UTC)TimeSynchronization. Thin wrappers over the
//! `BacnetClient` methods; results cross as Python objects (typed into dataclasses by
//! `python/buildwire/bacnet_services.py`).

use std::sync::Arc;
use std::time::Duration;

use buildwire_bacnet::ObjectIdentifier;
use buildwire_bacnet::app::Destination;
use buildwire_bacnet::encoding::calendar::{days_from_civil, weekday_from_days};
use buildwire_bacnet::encoding::json::{
    parse_calendar_entry, parse_destination, parse_reference, parse_value,
};
use buildwire_bacnet::encoding::{
    Date, DateTime, Element, LogDatum, LogRecord, ObjectPropertyReference, PropertyValue, Reader,
    Time,
};
use buildwire_bacnet::enums::{EnableDisable, PropertyIdentifier, ReinitializedState};
use buildwire_bacnet::objects::datatypes::{ItemType, property_datatype, to_elements};
use buildwire_bacnet::services::{RangeSpec, ReadRangeAck, WhoHasObject, WriteAccessSpecification};
use pyo3::IntoPyObjectExt;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3_async_runtimes::tokio::future_into_py;

use crate::bacnet::{BacnetClientHandle, client_error, object, property, timed, typed_value};
use crate::bacnet_values::{bit_text, element_py};
use crate::py_json::json_of;

/// Most properties one `write_multiple` call takes.
const MAX_WRITES: usize = 10_000;

/// Who-Has by identifier or by name; a list of (address, device, object, name) tuples.
pub(crate) fn who_has<'py>(
    py: Python<'py>,
    handle: &BacnetClientHandle,
    (object_id, name): (Option<String>, Option<String>),
    timeout: f64,
    range: Option<buildwire_bacnet::services::InstanceRange>,
    destination: Destination,
) -> PyResult<Bound<'py, PyAny>> {
    let wanted = match (object_id, name) {
        (Some(id), None) => WhoHasObject::Identifier(object(&id)?),
        (None, Some(name)) => WhoHasObject::Name(name),
        _ => {
            return Err(PyValueError::new_err(
                "give the object's identifier or its name (one of the two)",
            ));
        }
    };
    let wait = Duration::try_from_secs_f64(timeout)
        .map_err(|_| PyValueError::new_err("timeout must be a number of seconds >= 0"))?;
    let client = Arc::clone(&handle.inner);
    future_into_py(py, async move {
        let mut found = client
            .who_has(destination, wanted, wait)
            .await
            .map_err(client_error)?;
        if let Some(range) = range {
            found.retain(|(_, i_have)| range.contains(i_have.device.instance()));
        }
        Ok(found
            .into_iter()
            .map(|(address, i_have)| {
                (
                    address.to_string(),
                    i_have.device.to_string(),
                    i_have.object.to_string(),
                    i_have.object_name,
                )
            })
            .collect::<Vec<_>>())
    })
}

/// The date and time fields Python gives: (year, month, day, hour, minute, second,
/// hundredths); the weekday is computed.
pub(crate) type DateTimeFields = (u16, u8, u8, u8, u8, u8, u8);

/// A BACnet DateTime from Python's fields.
pub(crate) fn date_time(fields: DateTimeFields) -> PyResult<DateTime> {
    let (year, month, day, hour, minute, second, hundredths) = fields;
    if !(1900..=2154).contains(&year) {
        return Err(PyValueError::new_err(format!(
            "BACnet dates hold the years 1900 to 2154, not {year}"
        )));
    }
    let weekday = weekday_from_days(days_from_civil(i64::from(year), month, day));
    let date = Date::new(year, month, day, weekday);
    let time = Time::new(hour, minute, second, hundredths);
    date.validate()
        .and_then(|()| time.validate())
        .map_err(PyValueError::new_err)?;
    Ok(DateTime { date, time })
}

/// A DateTime's fields for Python, or None when any field is unspecified.
fn fields_of(stamp: &DateTime) -> Option<DateTimeFields> {
    let year = stamp.date.year()?;
    let (d, t) = (&stamp.date, &stamp.time);
    let [month, day, hour, minute, second, hundredths] =
        [d.month, d.day, t.hour, t.minute, t.second, t.hundredths];
    let specified = [month, day, hour, minute, second, hundredths]
        .iter()
        .all(|field| *field != 255);
    (specified && (1..=12).contains(&month) && day <= 31)
        .then_some((year, month, day, hour, minute, second, hundredths))
}

/// Which items a ReadRange asks for: `kind` "position", "sequence" or "time" with its
/// reference (an index, a sequence number, or date-time fields) and a signed count.
pub(crate) fn range_spec(
    kind: Option<&str>,
    reference: Option<&Bound<'_, PyAny>>,
    count: Option<i32>,
) -> PyResult<Option<RangeSpec>> {
    let Some(kind) = kind else {
        return Ok(None);
    };
    let (Some(reference), Some(count)) = (reference, count) else {
        return Err(PyValueError::new_err(
            "a range needs its reference and a count (negative: backwards)",
        ));
    };
    if count == 0 {
        return Err(PyValueError::new_err("count must not be 0"));
    }
    Ok(Some(match kind {
        "position" => RangeSpec::ByPosition {
            reference_index: reference.extract()?,
            count,
        },
        "sequence" => RangeSpec::BySequenceNumber {
            reference_sequence_number: reference.extract()?,
            count,
        },
        "time" => RangeSpec::ByTime {
            reference_time: date_time(reference.extract()?)?,
            count,
        },
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown range kind {other:?}; use position, sequence or time"
            )));
        }
    }))
}

/// A ReadRange-ACK as a dict: `object`, `property`, `index`, `first_item`, `last_item`,
/// `more_items`, `item_count`, `first_sequence_number` and `items`, a list holding one value
/// per element, or for a log-buffer one (date-time fields or None, value, status-flags
/// bits or None) tuple per record.
pub(crate) fn read_range_py(py: Python<'_>, ack: &ReadRangeAck) -> PyResult<Py<PyAny>> {
    let dict = PyDict::new(py);
    dict.set_item("object", ack.object.to_string())?;
    dict.set_item("property", ack.property.to_string())?;
    dict.set_item("index", ack.array_index)?;
    dict.set_item("first_item", ack.result_flags.first_item)?;
    dict.set_item("last_item", ack.result_flags.last_item)?;
    dict.set_item("more_items", ack.result_flags.more_items)?;
    dict.set_item("item_count", ack.item_count)?;
    dict.set_item("first_sequence_number", ack.first_sequence_number)?;
    let items = PyList::empty(py);
    let records = (ack.property == PropertyIdentifier::LogBuffer)
        .then(|| log_records(&ack.item_data))
        .flatten();
    match records {
        Some(records) => {
            dict.set_item("records", true)?;
            for record in &records {
                let flags = record.status_flags.as_ref().map(bit_text);
                items.append((
                    fields_of(&record.timestamp),
                    datum_py(py, &record.datum)?,
                    flags,
                ))?;
            }
        }
        None => {
            dict.set_item("records", false)?;
            for element in &ack.item_data {
                items.append(element_py(py, element)?)?;
            }
        }
    }
    dict.set_item("items", items)?;
    dict.into_py_any(py)
}

/// The log records of a log-buffer's item data, when it holds nothing else.
fn log_records(elements: &[Element]) -> Option<Vec<LogRecord>> {
    let mut bytes = Vec::new();
    for element in elements {
        element.encode(&mut bytes);
    }
    let mut reader = Reader::new(&bytes);
    let mut records = Vec::new();
    while !reader.is_empty() {
        records.push(LogRecord::decode(&mut reader).ok()?);
    }
    Some(records)
}

/// A logged value: a number, bool, None, bits as text, a failure as "class: code", a
/// log status as `{"log-status": bits}` or a clock change as `{"time-change": seconds}`.
fn datum_py(py: Python<'_>, datum: &LogDatum) -> PyResult<Py<PyAny>> {
    let single = |key: &str, value: Py<PyAny>| -> PyResult<Py<PyAny>> {
        let dict = PyDict::new(py);
        dict.set_item(key, value)?;
        dict.into_py_any(py)
    };
    match datum {
        LogDatum::LogStatus(bits) => single("log-status", bit_text(bits).into_py_any(py)?),
        LogDatum::Boolean(b) => b.into_py_any(py),
        LogDatum::Real(f) => f64::from(*f).into_py_any(py),
        LogDatum::Enumerated(n) => n.into_py_any(py),
        LogDatum::Unsigned(n) => n.into_py_any(py),
        LogDatum::Signed(n) => n.into_py_any(py),
        LogDatum::BitString(bits) => bit_text(bits).into_py_any(py),
        LogDatum::Null => Ok(py.None()),
        LogDatum::Failure(class, code) => {
            single("failure", format!("{class}: {code}").into_py_any(py)?)
        }
        LogDatum::TimeChange(seconds) => {
            single("time-change", f64::from(*seconds).into_py_any(py)?)
        }
        LogDatum::Any(elements) => crate::bacnet_values::elements_py(py, elements),
    }
}

/// One property write of WritePropertyMultiple: (object, property, value, priority,
/// index, value type).
pub(crate) type WriteSpec<'py> = (
    String,
    String,
    Bound<'py, PyAny>,
    Option<u8>,
    Option<u32>,
    Option<String>,
);

/// The write access specifications of `writes`, consecutive writes to one object grouped.
pub(crate) fn write_specifications(
    writes: &[WriteSpec<'_>],
) -> PyResult<Vec<WriteAccessSpecification>> {
    if writes.is_empty() || writes.len() > MAX_WRITES {
        return Err(PyValueError::new_err(format!(
            "write_multiple takes 1 to {MAX_WRITES} writes"
        )));
    }
    let mut specifications: Vec<WriteAccessSpecification> = Vec::new();
    for (object_id, property_id, value, priority, index, value_type) in writes {
        let (obj, prop) = (object(object_id)?, property(property_id)?);
        if priority.is_some_and(|p| !(1..=16).contains(&p)) {
            return Err(PyValueError::new_err("priority must be 1..=16"));
        }
        let write = PropertyValue {
            property: prop,
            array_index: *index,
            value: typed_value(value, value_type.as_deref(), obj, prop)?,
            priority: *priority,
        };
        match specifications.last_mut() {
            Some(last) if last.object == obj => last.properties.push(write),
            _ => specifications.push(WriteAccessSpecification {
                object: obj,
                properties: vec![write],
            }),
        }
    }
    Ok(specifications)
}

/// The encoded items of a list property from their Python form: the JSON forms of the
/// device profiles for date-list entries (`{"date": "2026-12-25"}`), recipient-list
/// destinations and object property references (`"av,1:present-value"`), primitive values
/// otherwise.
pub(crate) fn list_items(
    obj: ObjectIdentifier,
    prop: PropertyIdentifier,
    items: &Bound<'_, PyAny>,
) -> PyResult<Vec<Element>> {
    let items = match json_of(items)? {
        serde_json::Value::Array(items) if !items.is_empty() => items,
        _ => return Err(PyValueError::new_err("give the items as a non-empty list")),
    };
    let item_type = property_datatype(obj.object_type(), prop).map(|(item, _)| item);
    let mut elements = Vec::new();
    for (n, item) in items.iter().enumerate() {
        let path = format!("items[{n}]");
        let bad =
            |e: buildwire_bacnet::encoding::json::JsonError| PyValueError::new_err(e.to_string());
        let encoded = match item_type {
            Some(ItemType::CalendarEntry) => {
                let entry = parse_calendar_entry(item, &path).map_err(bad)?;
                to_elements(|buf| entry.encode(buf))
            }
            Some(ItemType::Destination) => {
                let destination = parse_destination(item, &path).map_err(bad)?;
                to_elements(|buf| destination.encode(buf))
            }
            Some(ItemType::DeviceObjectPropertyReference) => {
                let reference = parse_reference(item, &path).map_err(bad)?;
                to_elements(|buf| reference.encode(buf))
            }
            _ => vec![Element::Application(parse_value(item, &path).map_err(bad)?)],
        };
        elements.extend(encoded);
    }
    Ok(elements)
}

/// The communication state of DeviceCommunicationControl by name.
pub(crate) fn enable_disable(text: &str) -> PyResult<EnableDisable> {
    EnableDisable::from_name(text).ok_or_else(|| {
        unknown_name("communication state", text, EnableDisable::ALL, |s| {
            s.name()
        })
    })
}

/// The state of ReinitializeDevice by name.
pub(crate) fn reinitialized_state(text: &str) -> PyResult<ReinitializedState> {
    ReinitializedState::from_name(text).ok_or_else(|| {
        unknown_name("reinitialized state", text, ReinitializedState::ALL, |s| {
            s.name()
        })
    })
}

/// "unknown WHAT: use one of ..." with the names of the enumeration's table.
fn unknown_name<T: Copy>(
    what: &str,
    text: &str,
    all: &[T],
    name: impl Fn(T) -> Option<&'static str>,
) -> PyErr {
    let names: Vec<_> = all.iter().filter_map(|v| name(*v)).collect();
    PyValueError::new_err(format!(
        "unknown {what} {text:?}; use one of {}",
        names.join(", ")
    ))
}

/// The requests of the device-management calls, ready to send.
pub(crate) enum Management {
    Dcc(EnableDisable, Option<u16>, Option<String>),
    Reinitialize(ReinitializedState, Option<String>),
    List(bool, ObjectPropertyReference, Vec<Element>),
}

/// Sends a device-management or list request within the call's timing.
pub(crate) fn manage<'py>(
    py: Python<'py>,
    handle: &BacnetClientHandle,
    device: &str,
    request: Management,
    timing: Option<buildwire_bacnet::RequestTiming>,
) -> PyResult<Bound<'py, PyAny>> {
    let to = crate::bacnet_network::target(device)?;
    let client = Arc::clone(&handle.inner);
    future_into_py(py, async move {
        let call = async {
            match request {
                Management::Dcc(state, minutes, password) => {
                    client
                        .device_communication_control(to, state, minutes, password)
                        .await
                }
                Management::Reinitialize(state, password) => {
                    client.reinitialize_device(to, state, password).await
                }
                Management::List(add, target, elements) => {
                    client
                        .change_list(
                            to,
                            add,
                            target.object,
                            target.property,
                            target.array_index,
                            elements,
                        )
                        .await
                }
            }
        };
        timed(timing, call).await.map_err(client_error)
    })
}
