//! OPC UA values as Python objects, made directly (no JSON text in between).
//!
//! A Variant becomes what `buildwire.opcua` documents: `None`, `bool`, `int`, `float`, `str`
//! (strings, LocalizedText, NodeIds, QualifiedNames, StatusCodes and Guids as text; DateTime
//! values as ISO 8601 text; NaN and infinities of Float and Double as text) and a `list` for
//! an array; a ByteString read as a value is `{"length", "hex", "truncated"}`, one a method
//! gives or takes is `bytes`; structures are dicts (through the generic converter of
//! `py_json`). Timestamps of DataValues and writes are timezone-aware `datetime`s (UTC).
//!
//! Python values going to the server (variables' values, method outputs) become Variants of
//! the declared type: `bytes` (or a list of them) a ByteString, anything else through its
//! generic form (`json_to_variant`: ranges checked, text parsed as the type).

use buildwire_opcua::client::value_text::{json_to_variant, value_to_json};
use buildwire_opcua::encoding::{
    ByteString, DataValue, DateTime, UNIX_EPOCH_TICKS, Variant, VariantType,
};
use pyo3::IntoPyObjectExt;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::py_json::{json_of, json_py};

/// A Variant as a Python value (ByteStrings in their display form, see the module).
pub(crate) fn variant_py(py: Python<'_>, value: &Variant) -> PyResult<Py<PyAny>> {
    match value {
        Variant::Empty => Ok(py.None()),
        Variant::Boolean(v) => v.into_py_any(py),
        Variant::SByte(v) => v.into_py_any(py),
        Variant::Byte(v) => v.into_py_any(py),
        Variant::Int16(v) => v.into_py_any(py),
        Variant::UInt16(v) => v.into_py_any(py),
        Variant::Int32(v) => v.into_py_any(py),
        Variant::UInt32(v) => v.into_py_any(py),
        Variant::Int64(v) => v.into_py_any(py),
        Variant::UInt64(v) => v.into_py_any(py),
        Variant::Float(v) if v.is_finite() => f64::from(*v).into_py_any(py),
        Variant::Double(v) if v.is_finite() => v.into_py_any(py),
        Variant::String(v) => v.as_str().into_py_any(py),
        Variant::LocalizedText(v) => v.text.as_str().into_py_any(py),
        Variant::NodeId(v) => v.to_string().into_py_any(py),
        Variant::QualifiedName(v) => v.to_string().into_py_any(py),
        Variant::StatusCode(v) => v.to_string().into_py_any(py),
        Variant::DataValue(v) => v
            .value
            .as_ref()
            .map_or_else(|| Ok(py.None()), |inner| variant_py(py, inner)),
        Variant::Array(array) => {
            let items = array
                .elements()
                .iter()
                .map(|item| variant_py(py, item))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_py_any(py)
        }
        // DateTime values, ByteStrings, structures and the rare kinds: their one JSON form.
        other => json_py(py, &value_to_json(other)),
    }
}

/// A method's input or output: like `variant_py`, but a ByteString comes whole as `bytes`.
pub(crate) fn argument_py(py: Python<'_>, value: &Variant) -> PyResult<Py<PyAny>> {
    match value {
        Variant::ByteString(bytes) => match bytes.as_bytes() {
            Some(bytes) => PyBytes::new(py, bytes).into_py_any(py),
            None => Ok(py.None()),
        },
        other => variant_py(py, other),
    }
}

/// `datetime.datetime(1970, 1, 1, tzinfo=timezone.utc)` and `datetime.timedelta`.
struct TimeClasses {
    unix_epoch: Py<PyAny>,
    timedelta: Py<PyAny>,
}

static TIME: PyOnceLock<TimeClasses> = PyOnceLock::new();

/// A DateTime as a timezone-aware `datetime` (UTC), to the microsecond (ticks of 100 ns
/// are cut, as ISO text with 6 digits would be). A time beyond the years Python's
/// `datetime` holds raises OverflowError.
pub(crate) fn datetime_py(py: Python<'_>, value: DateTime) -> PyResult<Py<PyAny>> {
    let classes = TIME.get_or_try_init(py, || -> PyResult<TimeClasses> {
        let module = py.import("datetime")?;
        let utc = module.getattr("timezone")?.getattr("utc")?;
        let unix_epoch = module
            .getattr("datetime")?
            .call((1970, 1, 1, 0, 0, 0, 0, utc), None)?
            .unbind();
        Ok(TimeClasses {
            unix_epoch,
            timedelta: module.getattr("timedelta")?.unbind(),
        })
    })?;
    let since = i128::from(value.ticks()) - i128::from(UNIX_EPOCH_TICKS);
    let ticks_per_day: i128 = 864_000_000_000;
    let days = since.div_euclid(ticks_per_day);
    let micros = since.rem_euclid(ticks_per_day) / 10;
    let delta = classes.timedelta.bind(py).call1((
        i64::try_from(days).unwrap_or(i64::MAX),
        0,
        micros as i64,
    ))?;
    classes
        .unix_epoch
        .bind(py)
        .call_method1("__add__", (delta,))?
        .into_py_any(py)
}

/// A DataValue of `node` as the dict `DataChange` is made from: `node`, `value`, `type`,
/// `status` and the two timestamps (`datetime` or None).
pub(crate) fn data_value_py<'py>(
    py: Python<'py>,
    node: &str,
    value: &DataValue,
) -> PyResult<Bound<'py, PyDict>> {
    let status = value
        .status
        .unwrap_or(buildwire_opcua::types::StatusCode::GOOD);
    let row = PyDict::new(py);
    row.set_item("node", node)?;
    row.set_item(
        "value",
        value
            .value
            .as_ref()
            .map_or_else(|| Ok(py.None()), |v| variant_py(py, v))?,
    )?;
    row.set_item(
        "type",
        value
            .value
            .as_ref()
            .and_then(Variant::scalar_type)
            .map(|t| t.name()),
    )?;
    row.set_item("status", status.to_string())?;
    row.set_item(
        "source_timestamp",
        optional_datetime(py, value.source_timestamp)?,
    )?;
    row.set_item(
        "server_timestamp",
        optional_datetime(py, value.server_timestamp)?,
    )?;
    Ok(row)
}

fn optional_datetime(py: Python<'_>, value: Option<DateTime>) -> PyResult<Py<PyAny>> {
    value.map_or_else(|| Ok(py.None()), |t| datetime_py(py, t))
}

/// A Python value as a Variant of `kind` (see the module); the error says why it does not fit.
pub(crate) fn variant_of(value: &Bound<'_, PyAny>, kind: VariantType) -> Result<Variant, String> {
    if kind == VariantType::ByteString {
        if let Ok(bytes) = value.cast::<PyBytes>() {
            return Ok(Variant::ByteString(ByteString::from(bytes.as_bytes())));
        }
        if let Ok(list) = value.cast::<PyList>()
            && list.iter().all(|item| item.is_instance_of::<PyBytes>())
            && !list.is_empty()
        {
            let elements = list
                .iter()
                .map(|item| variant_of(&item, kind))
                .collect::<Result<Vec<_>, _>>()?;
            return Variant::array(kind, elements).map_err(|e| format!("{e:?}"));
        }
    }
    let document = json_of(value).map_err(|e| e.value(value.py()).to_string())?;
    json_to_variant(&document, kind).map_err(|e| e.to_string())
}
