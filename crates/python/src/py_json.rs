//! Generic documents between Rust and Python, walked directly: a `serde_json::Value` becomes
//! Python dicts, lists and scalars, and Python dicts, lists and scalars become a
//! `serde_json::Value`. No JSON text is written or parsed on the way. The one converter of
//! both directions for every protocol module (BACnet described values and list items, OPC UA
//! structures, dissections, server values).

use pyo3::IntoPyObjectExt;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};

/// A JSON value as Python dicts, lists and scalars (`None`, `bool`, `int`, `float`, `str`).
pub(crate) fn json_py(py: Python<'_>, value: &serde_json::Value) -> PyResult<Py<PyAny>> {
    use serde_json::Value;
    match value {
        Value::Null => Ok(py.None()),
        Value::Bool(b) => b.into_py_any(py),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_py_any(py)
            } else if let Some(u) = n.as_u64() {
                u.into_py_any(py)
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_py_any(py)
            }
        }
        Value::String(s) => s.into_py_any(py),
        Value::Array(items) => {
            let items = items
                .iter()
                .map(|item| json_py(py, item))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_py_any(py)
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (key, item) in map {
                dict.set_item(key, json_py(py, item)?)?;
            }
            dict.into_py_any(py)
        }
    }
}

/// A Python object (dict, list or other iterable, str, number, bool, None) as a JSON value.
/// Floats must be finite and dict keys str; anything else is a ValueError naming its type.
pub(crate) fn json_of(value: &Bound<'_, PyAny>) -> PyResult<serde_json::Value> {
    use serde_json::Value;
    if value.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(flag) = value.cast::<PyBool>() {
        return Ok(Value::Bool(flag.is_true()));
    }
    if value.is_instance_of::<PyInt>() {
        if let Ok(n) = value.extract::<i64>() {
            return Ok(Value::from(n));
        }
        return value.extract::<u64>().map(Value::from).map_err(|_| {
            PyValueError::new_err(format!("{value} is beyond the 64-bit integer range"))
        });
    }
    if let Ok(number) = value.cast::<PyFloat>() {
        return serde_json::Number::from_f64(number.value())
            .map(Value::Number)
            .ok_or_else(|| {
                PyValueError::new_err(format!("{value}: only finite numbers can be given"))
            });
    }
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(Value::String(text.extract::<String>()?));
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        let mut map = serde_json::Map::new();
        for (key, item) in dict.iter() {
            let key = key
                .cast::<PyString>()
                .map_err(|_| PyValueError::new_err("dict keys must be str"))?;
            map.insert(key.extract::<String>()?, json_of(&item)?);
        }
        return Ok(Value::Object(map));
    }
    if let Ok(items) = value.try_iter() {
        return items
            .map(|item| json_of(&item?))
            .collect::<PyResult<Vec<_>>>()
            .map(Value::Array);
    }
    Err(PyValueError::new_err(format!(
        "a {} value cannot be given here; give dicts, lists, str, numbers, bools or None",
        value.get_type().name()?
    )))
}
