//! BACnet values and failures as Python objects, made directly (no JSON text in between).
//!
//! A property's value is what `buildwire.bacnet` documents: one value, or a list when the
//! property holds several elements. Primitives become `None`, `bool`, `int`, `float` or
//! `str` (character strings; dates `"YYYY-MM-DD"`, times `"HH:MM:SS.hh"`, bit strings
//! `"0110"`, octet strings as hex, object identifiers `"analog-input,1"`); constructed
//! data becomes a list of its items; a context-tagged primitive whose type is not known
//! here becomes `{"context": tag, "hex": content}`.
//!
//! Client failures become the `buildwire.bacnet_errors` family (made there by
//! `_client_error`), timeouts a `BacnetTimeoutError` that is also an `asyncio.TimeoutError`.

use buildwire_bacnet::app::ClientError;
use buildwire_bacnet::encoding::json::{date_text, time_text};
use buildwire_bacnet::encoding::{ApplicationValue, BitString, Element};
use pyo3::IntoPyObjectExt;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};

/// A property's elements as one Python value (a list when there are several).
pub(crate) fn elements_py(py: Python<'_>, elements: &[Element]) -> PyResult<Py<PyAny>> {
    match elements {
        [single] => element_py(py, single),
        many => list_py(py, many),
    }
}

fn list_py(py: Python<'_>, elements: &[Element]) -> PyResult<Py<PyAny>> {
    let items = elements
        .iter()
        .map(|e| element_py(py, e))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)?.into_py_any(py)
}

/// One element as a Python value.
pub(crate) fn element_py(py: Python<'_>, element: &Element) -> PyResult<Py<PyAny>> {
    match element {
        Element::Application(value) => application_py(py, value),
        Element::Context { tag, data } => {
            let dict = PyDict::new(py);
            dict.set_item("context", tag)?;
            dict.set_item("hex", hex(data))?;
            dict.into_py_any(py)
        }
        Element::Constructed { children, .. } => list_py(py, children),
    }
}

/// One primitive value as a Python value.
pub(crate) fn application_py(py: Python<'_>, value: &ApplicationValue) -> PyResult<Py<PyAny>> {
    match value {
        ApplicationValue::Null => Ok(py.None()),
        ApplicationValue::Boolean(b) => b.into_py_any(py),
        ApplicationValue::Unsigned(n) => n.into_py_any(py),
        ApplicationValue::Signed(n) => n.into_py_any(py),
        ApplicationValue::Real(f) => f64::from(*f).into_py_any(py),
        ApplicationValue::Double(f) => f.into_py_any(py),
        ApplicationValue::OctetString(bytes) => hex(bytes).into_py_any(py),
        ApplicationValue::CharacterString(text) => text.into_py_any(py),
        ApplicationValue::BitString(bits) => bit_text(bits).into_py_any(py),
        ApplicationValue::Enumerated(n) => n.into_py_any(py),
        ApplicationValue::Date(date) => date_text(date).into_py_any(py),
        ApplicationValue::Time(time) => time_text(time).into_py_any(py),
        ApplicationValue::ObjectIdentifier(id) => id.to_string().into_py_any(py),
    }
}

/// `"0110"`: one character per bit, the first bit first.
pub(crate) fn bit_text(bits: &BitString) -> String {
    let len = bits.as_bytes().len() * 8 - usize::from(bits.unused_bits());
    (0..len)
        .map(|i| if bits.get(i) { '1' } else { '0' })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A Python value written to a device as the text `parse_value_text` types: `None`, a
/// `bool`, an `int`, a `float` or a `str` (names such as `"active"`). Floats are written in
/// full (shortest round-trip form); whether one fits a REAL is checked where it is typed.
pub(crate) fn value_text(value: &Bound<'_, PyAny>) -> PyResult<(String, Option<&'static str>)> {
    if value.is_none() {
        return Ok(("null".to_owned(), Some("null")));
    }
    if let Ok(flag) = value.cast::<PyBool>() {
        let text = if flag.is_true() { "true" } else { "false" };
        return Ok((text.to_owned(), Some("boolean")));
    }
    if value.is_instance_of::<PyInt>() {
        return Ok((value.str()?.extract::<String>()?, None));
    }
    if let Ok(number) = value.cast::<PyFloat>() {
        let number = number.value();
        if number.is_infinite() {
            return Err(PyValueError::new_err(format!(
                "{number} cannot be written: the value is infinite (a float beyond the 64-bit \
                 range, such as 1e400, becomes infinity in Python); give a finite number"
            )));
        }
        return Ok((format!("{number:?}"), None));
    }
    if let Ok(text) = value.cast::<PyString>() {
        return Ok((text.extract::<String>()?, None));
    }
    Err(PyValueError::new_err(format!(
        "cannot write a {} value; give None, a bool, an int, a float or a str",
        value.get_type().name()?
    )))
}

/// A client failure as the `buildwire.bacnet` exception of its kind (`ValueError` for an
/// argument this client could not use).
pub(crate) fn client_error(error: ClientError) -> PyErr {
    let message = error.to_string();
    if matches!(error, ClientError::InvalidArgument(_)) {
        return PyValueError::new_err(message);
    }
    Python::attach(|py| {
        let made = failure(py, &error, &message).and_then(|(kind, details)| {
            py.import("buildwire.bacnet_errors")?
                .getattr("_client_error")?
                .call1((kind, message.as_str(), details))
        });
        match made {
            Ok(exception) => PyErr::from_value(exception),
            Err(_) => PyRuntimeError::new_err(message.clone()),
        }
    })
}

/// The kind of a failure and the attributes of its exception.
fn failure<'py>(
    py: Python<'py>,
    error: &ClientError,
    message: &str,
) -> PyResult<(&'static str, Bound<'py, PyDict>)> {
    let details = PyDict::new(py);
    let kind = match error {
        ClientError::Error { service, error } => {
            details.set_item("service", service.to_string())?;
            error_details(&details, error)?;
            "error"
        }
        ClientError::WriteMultipleFailed {
            error,
            first_failed,
        } => {
            details.set_item("service", "write-property-multiple")?;
            error_details(&details, error)?;
            details.set_item(
                "first_failed",
                (
                    first_failed.object.to_string(),
                    first_failed.property.to_string(),
                    first_failed.array_index,
                ),
            )?;
            "write-multiple"
        }
        ClientError::ChangeListFailed {
            service,
            error,
            first_failed_element,
        } => {
            details.set_item("service", service.to_string())?;
            error_details(&details, error)?;
            details.set_item("first_failed_element", first_failed_element)?;
            "change-list"
        }
        ClientError::Reject(reason) => {
            details.set_item("reason", reason.to_string())?;
            details.set_item("reason_number", reason.to_u32())?;
            "reject"
        }
        ClientError::Abort { reason, by_server } => {
            details.set_item("reason", reason.to_string())?;
            details.set_item("reason_number", reason.to_u32())?;
            details.set_item("by_device", *by_server)?;
            "abort"
        }
        ClientError::Timeout => "timeout",
        _ => {
            details.set_item("message", message)?;
            "other"
        }
    };
    Ok((kind, details))
}

fn error_details(
    details: &Bound<'_, PyDict>,
    error: &buildwire_bacnet::apdu::BacnetError,
) -> PyResult<()> {
    details.set_item("error_class", error.class.to_string())?;
    details.set_item("error_class_number", error.class.to_u32())?;
    details.set_item("error_code", error.code.to_string())?;
    details.set_item("error_code_number", error.code.to_u32())?;
    Ok(())
}
