//! The `buildwire._native` extension module: thin PyO3 wrappers over the Rust crates.
//!
//! Protocol logic never lives here; each function converts arguments, calls the Rust API
//! one to one and converts the result. The Pythonic layer (names, docstrings, type stubs) is
//! in `python/buildwire/`. Structured results cross as Python objects built here, never as
//! JSON text: Haystack values and grids (`haystack_values`), BACnet values (`bacnet_values`),
//! OPC UA values (`opcua_values`), and generic documents through `py_json`, the one
//! converter between `serde_json::Value` and Python dicts, lists and scalars. (BACnet
//! dissection, `bacnet_dissect`, still returns JSON text.)

mod bacnet;
mod bacnet_cov;
mod bacnet_names;
mod bacnet_network;
mod bacnet_sc;
mod bacnet_services;
mod bacnet_values;
mod gateway;
mod haystack_client;
mod haystack_values;
mod logs;
mod opcua;
mod opcua_server;
mod opcua_values;
mod py_json;

/// Rust allocations of the extension go through mimalloc, as in the `buildwire` binary
/// (see its `main.rs`): lock-free per-thread free lists instead of glibc's locked arenas.
/// Python's own objects still use Python's allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Runs the `buildwire` command line with `argv` (program name first) and returns its exit
/// status. The GIL is released while the command runs.
#[pyfunction]
fn run_cli(py: Python<'_>, argv: Vec<String>) -> i32 {
    logs::stop_forwarding();
    py.detach(|| buildwire_cli::run(argv))
}

/// BACnet/IP datagram dissection as JSON text.
#[pyfunction]
fn bacnet_dissect(datagram: &[u8]) -> String {
    buildwire_bacnet::inspect::dissect_bip(datagram)
        .to_json()
        .to_string()
}

/// Parses `ai,1` / `analog-input:1` into (object type name, type number, instance).
#[pyfunction]
fn bacnet_parse_object_identifier(text: &str) -> PyResult<(String, u32, u32)> {
    let id: buildwire_bacnet::ObjectIdentifier = text
        .parse()
        .map_err(|e| PyValueError::new_err(format!("{e}")))?;
    Ok((
        id.object_type().to_string(),
        id.object_type().to_u32(),
        id.instance(),
    ))
}

/// Resolves a property name or alias (`pv`, `present-value`) to (name, number).
#[pyfunction]
fn bacnet_property(text: &str) -> PyResult<(String, u32)> {
    let p: buildwire_bacnet::PropertyIdentifier = text
        .parse()
        .map_err(|e| PyValueError::new_err(format!("{e}")))?;
    Ok((p.to_string(), p.to_u32()))
}

/// UA TCP stream dissection as a dict `{"chunks": [...], "error": ...}` (made by the generic
/// converter of `py_json` from the dissection's document).
#[pyfunction]
fn opcua_dissect(py: Python<'_>, stream: &[u8]) -> PyResult<Py<PyAny>> {
    let d = buildwire_opcua::inspect::dissect_stream(stream);
    py_json::json_py(
        py,
        &serde_json::json!({"chunks": d.chunks, "error": d.error}),
    )
}

/// The name of a StatusCode (None when the table has no such code).
#[pyfunction]
fn opcua_status_name(code: u32) -> Option<&'static str> {
    buildwire_opcua::StatusCode::from_u32(code).name()
}

/// Converts a grid between formats (`zinc`, `json`, `json3`, `trio`); decode errors carry the
/// line and column.
#[pyfunction]
fn haystack_convert(py: Python<'_>, text: &str, from: &str, to: &str) -> PyResult<String> {
    use buildwire_haystack::codec::Format;
    let from: Format = from.parse().map_err(PyValueError::new_err)?;
    let to: Format = to.parse().map_err(PyValueError::new_err)?;
    py.detach(|| {
        from.decode_grid(text)
            .map(|grid| to.encode_grid(&grid))
            .map_err(|e| PyValueError::new_err(format!("invalid {from}: {e}")))
    })
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    logs::route_to_python();
    m.add_function(wrap_pyfunction!(run_cli, m)?)?;
    m.add_function(wrap_pyfunction!(bacnet_dissect, m)?)?;
    m.add_function(wrap_pyfunction!(bacnet_parse_object_identifier, m)?)?;
    m.add_function(wrap_pyfunction!(bacnet_property, m)?)?;
    m.add_function(wrap_pyfunction!(bacnet_names::bacnet_enumerations, m)?)?;
    m.add_function(wrap_pyfunction!(haystack_convert, m)?)?;
    m.add_function(wrap_pyfunction!(haystack_values::haystack_decode, m)?)?;
    m.add_function(wrap_pyfunction!(haystack_values::haystack_decode_value, m)?)?;
    m.add_function(wrap_pyfunction!(haystack_values::haystack_encode_value, m)?)?;
    m.add_function(wrap_pyfunction!(haystack_values::haystack_grid, m)?)?;
    m.add_class::<haystack_values::HaystackGrid>()?;
    m.add_function(wrap_pyfunction!(haystack_client::haystack_connect, m)?)?;
    m.add_class::<haystack_client::HaystackClientHandle>()?;
    m.add_class::<haystack_client::HaystackWatchHandle>()?;
    m.add_function(wrap_pyfunction!(opcua_dissect, m)?)?;
    m.add_function(wrap_pyfunction!(opcua_status_name, m)?)?;
    m.add_function(wrap_pyfunction!(bacnet::bacnet_client, m)?)?;
    m.add_function(wrap_pyfunction!(bacnet::bacnet_serve, m)?)?;
    m.add_class::<bacnet::BacnetClientHandle>()?;
    m.add_class::<bacnet::BacnetServerHandle>()?;
    m.add_class::<bacnet_cov::BacnetCovHandle>()?;
    m.add_function(wrap_pyfunction!(bacnet_network::bacnet_router, m)?)?;
    m.add_function(wrap_pyfunction!(bacnet_network::bacnet_bbmd, m)?)?;
    m.add_function(wrap_pyfunction!(bacnet_network::bacnet_read_bdt, m)?)?;
    m.add_function(wrap_pyfunction!(bacnet_network::bacnet_read_fdt, m)?)?;
    m.add_function(wrap_pyfunction!(bacnet_network::bacnet_foreign_client, m)?)?;
    m.add_class::<bacnet_network::BacnetRouterHandle>()?;
    m.add_class::<bacnet_network::BacnetBbmdHandle>()?;
    m.add_function(wrap_pyfunction!(bacnet_sc::bacnet_sc_certs, m)?)?;
    m.add_function(wrap_pyfunction!(bacnet_sc::bacnet_sc_hub, m)?)?;
    m.add_function(wrap_pyfunction!(bacnet_sc::bacnet_sc_device, m)?)?;
    m.add_class::<bacnet_sc::BacnetScHubHandle>()?;
    m.add_class::<bacnet_sc::BacnetScDeviceHandle>()?;
    m.add_function(wrap_pyfunction!(bacnet_sc::bacnet_sc_client, m)?)?;
    m.add_class::<bacnet_sc::BacnetScClientHandle>()?;
    m.add_function(wrap_pyfunction!(gateway::gateway_start, m)?)?;
    m.add_class::<gateway::GatewayHandle>()?;
    m.add_function(wrap_pyfunction!(opcua::opcua_connect, m)?)?;
    m.add_function(wrap_pyfunction!(opcua_server::opcua_serve, m)?)?;
    m.add_class::<opcua::OpcuaClientHandle>()?;
    m.add_class::<opcua_server::OpcuaServerHandle>()?;
    Ok(())
}
