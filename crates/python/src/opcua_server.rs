//! The OPC UA server for Python: start it, model its address space (folders, objects,
//! variables with DataType, access level and AnalogItemType properties, methods answered by
//! async Python callbacks), set values locally, and read the stream of client writes.
//! Values cross as Python objects (`opcua_values`, `py_json`), never as JSON text.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use buildwire_opcua::client::value_text::variant_type_named;
use buildwire_opcua::driver::{OpcuaServer, OpcuaServerConfig};
use buildwire_opcua::encoding::{DateTime, NodeId, QualifiedName, Variant, VariantType};
use buildwire_opcua::server::address_space::{
    ACCESS_LEVEL_CURRENT_READ, ACCESS_LEVEL_CURRENT_WRITE, AddNodeError, DataVariableSpec,
    EngineeringUnits, NodeAttributes,
};
use buildwire_opcua::server::{
    MethodArgument, MethodHandler, Server, ServerConfig, UserAccount, bench_methods,
};
use buildwire_opcua::services::attribute::builtin_type_of;
use buildwire_opcua::types::StatusCode;
use pyo3::IntoPyObjectExt;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3_async_runtimes::tokio::future_into_py;
use tokio::sync::{Mutex, mpsc};

use crate::opcua::{failed, node};
use crate::opcua_values::{argument_py, datetime_py, variant_of, variant_py};

/// A client write, kept as Rust values until Python takes it (`next_write`).
struct WriteEvent {
    node: NodeId,
    value: Variant,
    timestamp: DateTime,
    user: Option<String>,
}

/// A call of a Python method, kept as Rust values until Python takes it (`next_call`).
struct CallEvent {
    id: u64,
    object: NodeId,
    method: NodeId,
    inputs: Vec<Variant>,
    user: Option<String>,
}

/// Client writes and method calls buffered for Python before new ones are dropped
/// (writes) or refused with Bad_ResourceUnavailable (calls).
const EVENT_QUEUE: usize = 4096;

type Shared = Arc<std::sync::Mutex<Option<OpcuaServer>>>;

/// A running OPC UA server (with the Throughput benchmark methods) and the queues that
/// carry client writes and method calls to Python.
#[pyclass(module = "buildwire._native")]
pub struct OpcuaServerHandle {
    inner: Shared,
    #[pyo3(get)]
    endpoint: String,
    /// Client writes, for `next_write`.
    writes: Arc<Mutex<mpsc::Receiver<WriteEvent>>>,
    /// Calls of Python methods, for `next_call`.
    calls: Arc<Mutex<mpsc::Receiver<CallEvent>>>,
    dropped_writes: Arc<AtomicU64>,
}

fn added(e: AddNodeError) -> PyErr {
    PyValueError::new_err(format!("cannot add the node: {e}"))
}

/// The built-in type named `name` (`Double`, `int32`, ...), or a ValueError that lists them.
fn data_type(name: &str) -> PyResult<VariantType> {
    variant_type_named(name).ok_or_else(|| {
        let names: Vec<&str> = VariantType::ALL.iter().map(|t| t.name()).collect();
        PyValueError::new_err(format!(
            "unknown DataType `{name}`: use one of {}",
            names.join(", ")
        ))
    })
}

/// Method arguments from `(name, DataType, description)` triples.
fn arguments(list: Vec<(String, String, String)>) -> PyResult<Vec<MethodArgument>> {
    list.into_iter()
        .map(|(name, kind, description)| {
            Ok(MethodArgument::new(&name, data_type(&kind)?, &description))
        })
        .collect()
}

/// The built-in type of a Variable's values: from its DataType, else from its value.
fn variable_type(server: &Server, node_id: &NodeId) -> PyResult<VariantType> {
    let Some(node) = server.address_space.node(node_id) else {
        return Err(PyValueError::new_err(format!("no node {node_id}")));
    };
    let NodeAttributes::Variable(variable) = &node.attributes else {
        return Err(PyValueError::new_err(format!(
            "{node_id} is a {:?}, not a Variable",
            node.node_class()
        )));
    };
    builtin_type_of(&variable.data_type)
        .or_else(|| match &variable.value {
            Variant::Array(array) => Some(array.element_type()),
            other => other.scalar_type(),
        })
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "{node_id} has DataType {}, which has no simple value form",
                variable.data_type
            ))
        })
}

/// Starts a server on `bind` (`host:port`, port 0 picks one); with `security` (policy
/// names) it offers those policies in `mode` ("sign", "encrypt" or "both") with the
/// certificate in `pki`, trusting the client certificates in `pki/trusted` (or every one
/// with `auto_trust`).
#[pyfunction]
#[pyo3(signature = (bind, security=None, mode=None, pki=None, auto_trust=false, users=None, allow_cleartext_passwords=false))]
#[allow(clippy::too_many_arguments)]
pub fn opcua_serve(
    py: Python<'_>,
    bind: String,
    security: Option<Vec<String>>,
    mode: Option<String>,
    pki: Option<std::path::PathBuf>,
    auto_trust: bool,
    users: Option<Vec<(String, String)>>,
    allow_cleartext_passwords: bool,
) -> PyResult<Bound<'_, PyAny>> {
    let users: Vec<UserAccount> = users
        .unwrap_or_default()
        .into_iter()
        .map(|(user_name, password)| UserAccount {
            user_name,
            password,
        })
        .collect();
    use buildwire_opcua::security::pki::Pki;
    use buildwire_opcua::security::{MessageSecurityMode, SecurityPolicy};
    use buildwire_opcua::server::ServerSecurity;
    let mut server_security = ServerSecurity::default();
    let mut application_uri = None;
    if let Some(names) = security.filter(|names| !names.is_empty()) {
        let modes = match mode.as_deref() {
            Some("sign") => vec![MessageSecurityMode::Sign],
            Some("encrypt") => vec![MessageSecurityMode::SignAndEncrypt],
            None | Some("both") => vec![
                MessageSecurityMode::Sign,
                MessageSecurityMode::SignAndEncrypt,
            ],
            Some(other) => {
                return Err(PyValueError::new_err(format!(
                    "mode `{other}` is not \"sign\", \"encrypt\" or \"both\""
                )));
            }
        };
        let pki = pki.ok_or_else(|| {
            PyValueError::new_err(
                "a secured server needs pki=DIR (its certificate is created there on first use)",
            )
        })?;
        let mut endpoints = Vec::new();
        for name in &names {
            let policy = SecurityPolicy::from_name(name).ok_or_else(|| {
                PyValueError::new_err(format!("unknown security policy `{name}`"))
            })?;
            if policy.is_secured() {
                endpoints.extend(modes.iter().map(|mode| (policy, *mode)));
            } else {
                endpoints.push((SecurityPolicy::None, MessageSecurityMode::None));
            }
        }
        let store = Pki::open(&pki).map_err(failed)?;
        let identity = store
            .own_or_create(
                "urn:buildwire:opcua:python:server",
                "buildwire Python server",
                &["localhost".to_owned(), "127.0.0.1".to_owned()],
            )
            .map_err(failed)?;
        application_uri = identity.certificate.application_uri().map(str::to_owned);
        server_security = ServerSecurity {
            identity: Some(identity),
            endpoints,
            trust: store.trust_list(auto_trust).map_err(failed)?,
            pki: Some(store),
        };
    }
    future_into_py(py, async move {
        // An empty endpoint URL makes the server advertise the address it actually bound.
        let defaults = ServerConfig::default();
        let config = ServerConfig {
            endpoint_url: String::new(),
            application_uri: application_uri.unwrap_or(defaults.application_uri.clone()),
            security: server_security,
            users,
            allow_cleartext_passwords,
            ..defaults
        };
        let (write_sender, writes) = mpsc::channel::<WriteEvent>(EVENT_QUEUE);
        let (call_sender, calls) = mpsc::channel::<CallEvent>(EVENT_QUEUE);
        let dropped_writes = Arc::new(AtomicU64::new(0));
        let dropped = Arc::clone(&dropped_writes);
        let server = OpcuaServer::start(
            OpcuaServerConfig::new(&bind, config)
                .with_setup(bench_methods::install)
                .with_setup(move |server| {
                    server.on_write(move |written| {
                        let event = WriteEvent {
                            node: written.node_id.clone(),
                            value: written.value.clone(),
                            timestamp: written.source_timestamp,
                            user: written.user.clone(),
                        };
                        if write_sender.try_send(event).is_err() {
                            dropped.fetch_add(1, Ordering::Relaxed);
                        }
                    });
                    Ok(())
                }),
        )
        .await
        .map_err(failed)?;
        let inner: Shared = Arc::default();
        // Method calls go to Python; when the queue is full they are refused at once
        // rather than left waiting.
        let refuser = Arc::downgrade(&inner);
        server.with_server(move |core| {
            core.on_method_call(move |invocation| {
                let event = CallEvent {
                    id: invocation.id,
                    object: invocation.object_id.clone(),
                    method: invocation.method_id.clone(),
                    inputs: invocation.input_arguments.clone(),
                    user: invocation.user.clone(),
                };
                if call_sender.try_send(event).is_err() {
                    let (refuser, id) = (refuser.clone(), invocation.id);
                    // Not under the server's lock (held here): from a task of its own.
                    tokio::spawn(async move {
                        if let Some(inner) = refuser.upgrade()
                            && let Ok(guard) = inner.lock()
                            && let Some(server) = guard.as_ref()
                        {
                            server.complete_method_call(
                                id,
                                Err(StatusCode::BAD_RESOURCE_UNAVAILABLE),
                            );
                        }
                    });
                }
            });
        });
        let endpoint = server.endpoint_url().to_owned();
        *inner.lock().map_err(|_| failed("poisoned"))? = Some(server);
        Ok(OpcuaServerHandle {
            inner,
            endpoint,
            writes: Arc::new(Mutex::new(writes)),
            calls: Arc::new(Mutex::new(calls)),
            dropped_writes,
        })
    })
}

impl OpcuaServerHandle {
    /// Runs `f` on the running server.
    fn running<T>(&self, f: impl FnOnce(&OpcuaServer) -> PyResult<T>) -> PyResult<T> {
        let guard = self.inner.lock().map_err(|_| failed("poisoned"))?;
        let server = guard
            .as_ref()
            .ok_or_else(|| PyRuntimeError::new_err("the server is stopped: start a new one"))?;
        f(server)
    }

    fn with_server<T>(&self, f: impl FnOnce(&mut Server) -> PyResult<T>) -> PyResult<T> {
        self.running(|server| server.with_server(f))
    }
}

#[pymethods]
impl OpcuaServerHandle {
    /// Registers a namespace URI (or finds it); returns its index.
    fn add_namespace(&self, uri: String) -> PyResult<u16> {
        self.with_server(|server| Ok(server.add_namespace(&uri)))
    }

    /// Adds a Folder (`folder=True`) or an Object below `parent`.
    fn add_object(
        &self,
        parent: String,
        node_id: String,
        name: String,
        folder: bool,
    ) -> PyResult<()> {
        let (parent, id) = (node(&parent)?, node(&node_id)?);
        let browse_name = QualifiedName::new(id.namespace, &name);
        self.with_server(|server| {
            let space = &mut server.address_space;
            if folder {
                space.add_folder(&parent, id, browse_name).map_err(added)
            } else {
                space.add_object(&parent, id, browse_name).map_err(added)
            }
        })
    }

    /// Adds a Variable: `value` (a Python value) is converted to `data_type`; `eu_range` (low, high)
    /// or `units` (display name, UNECE code, description) make it an AnalogItemType.
    #[pyo3(signature = (parent, node_id, name, value, data_type, writable, description=None, eu_range=None, units=None))]
    #[allow(clippy::too_many_arguments)]
    fn add_variable(
        &self,
        parent: String,
        node_id: String,
        name: String,
        value: &Bound<'_, PyAny>,
        data_type: String,
        writable: bool,
        description: Option<String>,
        eu_range: Option<(f64, f64)>,
        units: Option<(String, Option<String>, String)>,
    ) -> PyResult<()> {
        let (parent, id) = (node(&parent)?, node(&node_id)?);
        let kind = self::data_type(&data_type)?;
        let value =
            variant_of(value, kind).map_err(|e| PyValueError::new_err(format!("{name}: {e}")))?;
        if let Some((low, high)) = eu_range
            && !(low.is_finite() && high.is_finite() && low <= high)
        {
            return Err(PyValueError::new_err(format!(
                "eu_range ({low}, {high}): two finite numbers, low <= high"
            )));
        }
        let engineering_units = match units {
            Some((display_name, Some(code), _)) if EngineeringUnits::unit_id(&code).is_none() => {
                return Err(PyValueError::new_err(format!(
                    "unit code `{code}` for {display_name}: a UNECE common code of 1 to 4 \
                     letters or digits, such as CEL (degree Celsius)"
                )));
            }
            Some((display_name, unece_code, description)) => Some(EngineeringUnits {
                display_name,
                unece_code,
                description,
            }),
            None => None,
        };
        let mut access_level = ACCESS_LEVEL_CURRENT_READ;
        if writable {
            access_level |= ACCESS_LEVEL_CURRENT_WRITE;
        }
        let spec = DataVariableSpec {
            value,
            data_type: NodeId::numeric(0, u32::from(kind.id())),
            access_level,
            description,
            eu_range,
            engineering_units,
            source_timestamp: buildwire_opcua::encoding::DateTime::MIN,
        };
        self.with_server(|server| {
            let browse_name = QualifiedName::new(id.namespace, &name);
            let at = server.wall_clock(std::time::Instant::now());
            let spec = DataVariableSpec {
                source_timestamp: at,
                ..spec
            };
            server
                .address_space
                .add_data_variable(&parent, id, browse_name, spec)
                .map_err(added)
        })
    }

    /// Adds a Method answered by Python (`next_call` / `complete_call`); arguments are
    /// (name, DataType, description) triples.
    fn add_method(
        &self,
        parent: String,
        node_id: String,
        name: String,
        inputs: Vec<(String, String, String)>,
        outputs: Vec<(String, String, String)>,
    ) -> PyResult<()> {
        let (parent, id) = (node(&parent)?, node(&node_id)?);
        let (inputs, outputs) = (arguments(inputs)?, arguments(outputs)?);
        self.with_server(|server| {
            let browse_name = QualifiedName::new(id.namespace, &name);
            server
                .address_space
                .add_method(
                    &parent,
                    id,
                    browse_name,
                    inputs,
                    outputs,
                    MethodHandler::External,
                )
                .map_err(added)
        })
    }

    /// Sets a Variable's value (a Python value, converted to its DataType) as the
    /// application's own change: subscribed clients get it at once.
    fn set_value(&self, node_id: String, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let id = node(&node_id)?;
        self.running(|server| {
            let kind = server.with_server(|core| variable_type(core, &id))?;
            let value = variant_of(value, kind)
                .map_err(|e| PyValueError::new_err(format!("{node_id}: {e}")))?;
            server
                .set_value(&id, value)
                .map_err(|status| PyValueError::new_err(format!("{node_id}: {status}")))
        })
    }

    /// A Variable's current value, as a client's read would give it.
    fn get_value(&self, py: Python<'_>, node_id: String) -> PyResult<Py<PyAny>> {
        let id = node(&node_id)?;
        let value = self.with_server(|server| {
            variable_type(server, &id)?;
            match server.address_space.node(&id).map(|n| &n.attributes) {
                Some(NodeAttributes::Variable(variable)) => Ok(variable.value.clone()),
                _ => Err(PyValueError::new_err(format!("no Variable {id}"))),
            }
        })?;
        variant_py(py, &value)
    }

    /// The next client write as (node, value, source timestamp, user), or None once the
    /// server has stopped.
    fn next_write<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let writes = Arc::clone(&self.writes);
        future_into_py(py, async move {
            let Some(event) = writes.lock().await.recv().await else {
                return Ok(None);
            };
            Python::attach(|py| {
                let row = (
                    event.node.to_string(),
                    variant_py(py, &event.value)?,
                    datetime_py(py, event.timestamp)?,
                    event.user,
                );
                row.into_py_any(py).map(Some)
            })
        })
    }

    /// The next call of a Python method as a dict (id, object, method, inputs, user), or
    /// None once the server has stopped.
    fn next_call<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let calls = Arc::clone(&self.calls);
        future_into_py(py, async move {
            let Some(event) = calls.lock().await.recv().await else {
                return Ok(None);
            };
            Python::attach(|py| {
                let row = PyDict::new(py);
                row.set_item("id", event.id)?;
                row.set_item("object", event.object.to_string())?;
                row.set_item("method", event.method.to_string())?;
                let inputs = event
                    .inputs
                    .iter()
                    .map(|v| argument_py(py, v))
                    .collect::<PyResult<Vec<_>>>()?;
                row.set_item("inputs", PyList::new(py, inputs)?)?;
                row.set_item("user", event.user)?;
                Ok(Some(row.into_any().unbind()))
            })
        })
    }

    /// Answers call `id` of `method_id`: with `outputs` (a list of Python values, converted to the
    /// declared OutputArguments) when `status` is Good, else with `status`. Outputs that do
    /// not fit their declaration answer Bad_InternalError and raise ValueError here.
    fn complete_call(
        &self,
        id: u64,
        method_id: String,
        outputs: &Bound<'_, PyAny>,
        status: u32,
    ) -> PyResult<()> {
        self.running(|server| complete(server, id, &method_id, outputs, status))
    }

    /// Client writes lost because nobody read `writes()`.
    #[getter]
    fn dropped_writes(&self) -> u64 {
        self.dropped_writes.load(Ordering::Relaxed)
    }

    /// Stops accepting connections and ends the server.
    fn stop<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let taken = self.inner.lock().map_err(|_| failed("poisoned"))?.take();
        future_into_py(py, async move {
            if let Some(server) = taken {
                // The queues end (None) once the hooks holding their senders are gone.
                server.with_server(Server::clear_hooks);
                server.shutdown().await;
            }
            Ok(())
        })
    }
}

/// Answers a Python method call (see `OpcuaServerHandle::complete_call`).
fn complete(
    server: &OpcuaServer,
    id: u64,
    method_id: &str,
    outputs: &Bound<'_, PyAny>,
    status: u32,
) -> PyResult<()> {
    let status = StatusCode::from_u32(status);
    if !status.is_good() {
        server.complete_method_call(id, Err(status));
        return Ok(());
    }
    let method = node(method_id)?;
    let declared: Vec<VariantType> =
        server.with_server(
            |core| match core.address_space.node(&method).map(|n| &n.attributes) {
                Some(NodeAttributes::Method(m)) => {
                    m.output_arguments.iter().map(|a| a.data_type).collect()
                }
                _ => Vec::new(),
            },
        );
    let converted = match outputs.cast::<PyList>() {
        Ok(items) if items.len() == declared.len() => items
            .iter()
            .zip(&declared)
            .map(|(item, kind)| variant_of(&item, *kind))
            .collect::<Result<Vec<_>, _>>(),
        Ok(items) => Err(format!(
            "{} outputs returned, {} declared",
            items.len(),
            declared.len()
        )),
        Err(_) => Err("outputs must be a list".to_owned()),
    };
    match converted {
        Ok(values) => {
            server.complete_method_call(id, Ok(values));
            Ok(())
        }
        Err(message) => {
            server.complete_method_call(id, Err(StatusCode::BAD_INTERNAL_ERROR));
            Err(PyValueError::new_err(format!("{method_id}: {message}")))
        }
    }
}
