//! Names of BACnet values for Python: the enumeration tables the `buildwire.bacnet_enums`
//! classes are generated from, and property values described with their names.

use buildwire_bacnet::enums::Enumeration;
use pyo3::prelude::*;
use serde_json::{Map, Value, json};

/// Every enumeration the stack names, as JSON: `{"engineering-units": [["square-meters",
/// 0], ...], ...}` (scripts/gen_bacnet_enums.py writes python/buildwire/bacnet_enums.py
/// from it; a test checks that file against it).
#[pyfunction]
pub fn bacnet_enumerations() -> String {
    let tables: Map<String, Value> = Enumeration::ALL
        .into_iter()
        .map(|enumeration| (enumeration.name().to_owned(), json!(enumeration.members())))
        .collect();
    Value::Object(tables).to_string()
}

/// The described JSON of `value` read from `property` (at `index`) of `object`.
pub(crate) use buildwire_bacnet::app::value_names::describe_property as described;
