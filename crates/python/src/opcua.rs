//! OPC UA client and server for Python: awaitables over the tokio drivers of buildwire-opcua.
//! Results cross as Python objects built here (`opcua_values`), never as JSON text.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use buildwire_opcua::client::ClientIdentity;
use buildwire_opcua::client::subscriptions::{
    MonitoredItemSpec, SubscriptionEvent, SubscriptionSettings,
};
use buildwire_opcua::client::value_text::{
    is_typed_argument, parse_argument_as, parse_typed, parse_value,
};
use buildwire_opcua::driver::{ClientError, ReconnectPolicy, ReconnectingClient};
use buildwire_opcua::encoding::NodeId;
use buildwire_opcua::services::AttributeId;
use buildwire_opcua::services::{DataChangeFilter, DataChangeTrigger, deadband_type};
use buildwire_opcua::types::StatusCode;
use pyo3::IntoPyObjectExt;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3_async_runtimes::tokio::future_into_py;
use tokio::sync::Mutex;

use crate::opcua_values::{argument_py, data_value_py, variant_py};

pub(crate) fn node(text: &str) -> PyResult<NodeId> {
    text.parse::<NodeId>()
        .map_err(|e| PyValueError::new_err(format!("invalid NodeId `{text}`: {e}")))
}

pub(crate) fn failed(e: impl std::fmt::Display) -> PyErr {
    PyRuntimeError::new_err(e.to_string())
}

/// An OPC UA failure as `buildwire.opcua.StatusError`, or the subclass of its family
/// (chosen in Python by `_status_error`); a plain RuntimeError only if that module cannot be
/// imported.
fn status_failed(status: StatusCode, message: impl std::fmt::Display) -> PyErr {
    let message = message.to_string();
    Python::attach(|py| {
        let made = py
            .import("buildwire.opcua")
            .and_then(|module| module.getattr("_status_error"))
            .and_then(|make| make.call1((status.bits(), message.as_str())));
        match made {
            Ok(error) => PyErr::from_value(error),
            Err(_) => PyRuntimeError::new_err(message),
        }
    })
}

/// A client failure with its StatusCode (I/O errors are Bad_CommunicationError).
fn client_failed(e: ClientError) -> PyErr {
    status_failed(e.status_code(), &e)
}

/// The client was closed by `close()`.
fn closed() -> PyErr {
    status_failed(StatusCode::BAD_CONNECTION_CLOSED, CLOSED)
}

const CLOSED: &str = "the client is closed: connect again";

/// A connected OPC UA client session that reconnects by itself (and brings its
/// subscriptions back) when the connection is lost.
#[pyclass(module = "buildwire._native")]
pub struct OpcuaClientHandle {
    inner: Arc<Mutex<Option<ReconnectingClient>>>,
    /// Node text of each monitored item, by client handle.
    nodes: Arc<std::sync::Mutex<std::collections::HashMap<u32, String>>>,
    /// Reconnects so far, as last seen by a call that held the client: the `reconnects`
    /// property reads it without waiting for a call in progress.
    reconnects: Arc<AtomicU64>,
}

/// How long `next_change` holds the client between two looks (other calls get their turn
/// in between).
const CHANGE_POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// Connects to `endpoint` (`opc.tcp://host:port`) and activates a session; with `security`
/// (a policy name) over a secured channel using the certificates in `pki`.
#[pyfunction]
#[pyo3(signature = (endpoint, user=None, password=None, security=None, mode=None, pki=None, trust_server=false, user_cert=None, user_key=None, reconnect_timeout=30.0, allow_cleartext_password=false))]
#[allow(clippy::too_many_arguments)]
pub fn opcua_connect(
    py: Python<'_>,
    endpoint: String,
    user: Option<String>,
    password: Option<String>,
    security: Option<String>,
    mode: Option<String>,
    pki: Option<std::path::PathBuf>,
    trust_server: bool,
    user_cert: Option<std::path::PathBuf>,
    user_key: Option<std::path::PathBuf>,
    reconnect_timeout: f64,
    allow_cleartext_password: bool,
) -> PyResult<Bound<'_, PyAny>> {
    let reconnect_timeout = std::time::Duration::try_from_secs_f64(reconnect_timeout)
        .map_err(|_| PyValueError::new_err("reconnect_timeout must be a number of seconds >= 0"))?;
    use buildwire_opcua::security::{MessageSecurityMode, SecurityPolicy};
    let mut identity = match user {
        Some(user_name) => ClientIdentity::UserName {
            user_name,
            password: password.unwrap_or_default(),
        },
        None => ClientIdentity::Anonymous,
    };
    let policy = match &security {
        Some(name) => SecurityPolicy::from_name(name).ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown security policy `{name}`: use Basic256Sha256, Aes128_Sha256_RsaOaep or Aes256_Sha256_RsaPss"
            ))
        })?,
        None => SecurityPolicy::None,
    };
    let mode = match mode.as_deref() {
        None | Some("encrypt") => MessageSecurityMode::SignAndEncrypt,
        Some("sign") => MessageSecurityMode::Sign,
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "mode `{other}` is neither \"sign\" nor \"encrypt\""
            )));
        }
    };
    if policy.is_secured() && pki.is_none() {
        return Err(PyValueError::new_err(
            "a secured connection needs pki=DIR (our certificate is created there on first use)",
        ));
    }
    if let (Some(cert), Some(key)) = (&user_cert, &user_key) {
        identity =
            buildwire_opcua::driver::security::x509_identity(cert, key).map_err(client_failed)?;
    }
    future_into_py(py, async move {
        let mut config = buildwire_opcua::client::ClientConfig::new(&endpoint);
        config.identity = identity;
        config.allow_cleartext_password = allow_cleartext_password;
        if let (true, Some(pki)) = (policy.is_secured(), &pki) {
            let hosts = ["localhost".to_owned(), "127.0.0.1".to_owned()];
            let options = buildwire_opcua::driver::security::SecureClientOptions {
                policy,
                mode,
                pki_dir: pki,
                application_uri: "urn:buildwire:opcua:python",
                hosts: &hosts,
                trust_server,
            };
            buildwire_opcua::driver::security::secure_client_config(&mut config, &options)
                .await
                .map_err(client_failed)?;
        }
        let policy = ReconnectPolicy {
            reconnect_timeout,
            ..ReconnectPolicy::default()
        };
        let client = ReconnectingClient::connect(config, policy)
            .await
            .map_err(client_failed)?;
        Ok(OpcuaClientHandle {
            inner: Arc::new(Mutex::new(Some(client))),
            nodes: Arc::default(),
            reconnects: Arc::default(),
        })
    })
}

#[pymethods]
impl OpcuaClientHandle {
    /// Forward hierarchical references of `node`: a list of dicts (node_id, browse_name,
    /// display_name, node_class).
    fn browse<'py>(&self, py: Python<'py>, node_id: String) -> PyResult<Bound<'py, PyAny>> {
        let node = node(&node_id)?;
        let inner = Arc::clone(&self.inner);
        future_into_py(py, async move {
            let mut guard = inner.lock().await;
            let client = guard.as_mut().ok_or_else(closed)?;
            let refs = client.browse(&node).await.map_err(client_failed)?;
            drop(guard);
            Python::attach(|py| {
                let rows = PyList::empty(py);
                for r in &refs {
                    let row = PyDict::new(py);
                    row.set_item("node_id", r.node_id.node_id.to_string())?;
                    row.set_item("browse_name", r.browse_name.to_string())?;
                    row.set_item("display_name", r.display_name.text.as_str())?;
                    row.set_item("node_class", format!("{:?}", r.node_class))?;
                    rows.append(row)?;
                }
                rows.into_py_any(py)
            })
        })
    }

    /// One attribute (by name; default Value) of each node: a list of (value, status name,
    /// status code) tuples.
    #[pyo3(signature = (node_ids, attribute=None))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        node_ids: Vec<String>,
        attribute: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let nodes = node_ids
            .iter()
            .map(|t| node(t))
            .collect::<PyResult<Vec<_>>>()?;
        let attribute = match attribute.as_deref() {
            None => AttributeId::Value,
            Some(name) => AttributeId::from_name(name).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "unknown attribute {name:?}: try value, browse-name, display-name, \
                     data-type, node-class, description, access-level"
                ))
            })?,
        };
        let inner = Arc::clone(&self.inner);
        future_into_py(py, async move {
            let mut guard = inner.lock().await;
            let client = guard.as_mut().ok_or_else(closed)?;
            let values = client
                .read(&nodes, attribute)
                .await
                .map_err(client_failed)?;
            drop(guard);
            Python::attach(|py| {
                let rows = values
                    .iter()
                    .map(|dv| {
                        let status = dv.status.unwrap_or_default();
                        let value = match &dv.value {
                            Some(value) => variant_py(py, value)?,
                            None => py.None(),
                        };
                        (value, status.to_string(), status.bits()).into_py_any(py)
                    })
                    .collect::<PyResult<Vec<_>>>()?;
                PyList::new(py, rows)?.into_py_any(py)
            })
        })
    }

    /// Writes `value` (text) as `type_name` (double, int32, string, boolean, ...), or as
    /// the node's DataType (read first) when `type_name` is None.
    #[pyo3(signature = (node_id, value, type_name=None))]
    fn write<'py>(
        &self,
        py: Python<'py>,
        node_id: String,
        value: String,
        type_name: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let node = node(&node_id)?;
        let given = match &type_name {
            Some(name) => {
                Some(parse_value(name, &value).map_err(|e| PyValueError::new_err(e.to_string()))?)
            }
            None => None,
        };
        let inner = Arc::clone(&self.inner);
        future_into_py(py, async move {
            let mut guard = inner.lock().await;
            let client = guard.as_mut().ok_or_else(closed)?;
            let variant = match given {
                Some(variant) => variant,
                None => {
                    let kind = client.value_type(&node).await.map_err(client_failed)?;
                    let kind = kind.ok_or_else(|| {
                        PyValueError::new_err(format!(
                            "{node_id} does not say its value type: pass type_name"
                        ))
                    })?;
                    parse_typed(kind, &value)
                        .map_err(|e| PyValueError::new_err(format!("{node_id}: {e}")))?
                }
            };
            client.write(&node, variant).await.map_err(client_failed)
        })
    }

    /// Calls `method` on `object` with text arguments: `uint32:4`, or bare values read as
    /// the method's declared InputArguments; the list of outputs (ByteStrings as bytes).
    fn call<'py>(
        &self,
        py: Python<'py>,
        object_id: String,
        method_id: String,
        args: Vec<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (object, method) = (node(&object_id)?, node(&method_id)?);
        let inner = Arc::clone(&self.inner);
        future_into_py(py, async move {
            let mut guard = inner.lock().await;
            let client = guard.as_mut().ok_or_else(closed)?;
            let declared = if args.iter().all(|a| is_typed_argument(a)) {
                Vec::new()
            } else {
                client
                    .input_argument_types(&method)
                    .await
                    .map_err(client_failed)?
            };
            let args = args
                .iter()
                .enumerate()
                .map(|(i, a)| parse_argument_as(a, declared.get(i).copied().flatten()))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            let outputs = client
                .call(&object, &method, args)
                .await
                .map_err(client_failed)?;
            drop(guard);
            Python::attach(|py| {
                let outputs = outputs
                    .iter()
                    .map(|o| argument_py(py, o))
                    .collect::<PyResult<Vec<_>>>()?;
                PyList::new(py, outputs)?.into_py_any(py)
            })
        })
    }

    /// Creates a subscription publishing every `interval_ms`; returns its id.
    fn create_subscription<'py>(
        &self,
        py: Python<'py>,
        interval_ms: f64,
    ) -> PyResult<Bound<'py, PyAny>> {
        if !(interval_ms.is_finite() && interval_ms > 0.0) {
            return Err(PyValueError::new_err(
                "the interval must be a positive number of seconds",
            ));
        }
        let inner = Arc::clone(&self.inner);
        future_into_py(py, async move {
            let mut guard = inner.lock().await;
            let client = guard.as_mut().ok_or_else(closed)?;
            let settings = SubscriptionSettings {
                publishing_interval_ms: interval_ms,
                ..SubscriptionSettings::default()
            };
            client
                .create_subscription(settings)
                .await
                .map_err(client_failed)
        })
    }

    /// Monitors the Value of each node in `subscription_id`; `deadband` is ("abs"|"pct", X).
    /// A list of (node, handle, status name, status code) tuples.
    #[pyo3(signature = (subscription_id, node_ids, sampling_ms, queue_size, deadband=None))]
    fn monitor<'py>(
        &self,
        py: Python<'py>,
        subscription_id: u32,
        node_ids: Vec<String>,
        sampling_ms: f64,
        queue_size: u32,
        deadband: Option<(String, f64)>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let nodes = node_ids
            .iter()
            .map(|t| node(t))
            .collect::<PyResult<Vec<_>>>()?;
        let filter = match deadband {
            None => None,
            Some((kind, value)) if value.is_finite() && value >= 0.0 => Some(DataChangeFilter {
                trigger: DataChangeTrigger::StatusValue,
                deadband_type: match kind.as_str() {
                    "abs" => deadband_type::ABSOLUTE,
                    "pct" if value <= 100.0 => deadband_type::PERCENT,
                    _ => {
                        return Err(PyValueError::new_err(format!(
                            "deadband ({kind:?}, {value}): use (\"abs\", X) or (\"pct\", 0..100)"
                        )));
                    }
                },
                deadband_value: value,
            }),
            Some((_, value)) => {
                return Err(PyValueError::new_err(format!(
                    "deadband {value}: a number >= 0"
                )));
            }
        };
        let specs: Vec<MonitoredItemSpec> = nodes
            .into_iter()
            .map(|node| MonitoredItemSpec {
                sampling_interval_ms: sampling_ms,
                queue_size,
                filter,
                ..MonitoredItemSpec::value(node)
            })
            .collect();
        let (inner, names) = (Arc::clone(&self.inner), Arc::clone(&self.nodes));
        future_into_py(py, async move {
            let mut guard = inner.lock().await;
            let client = guard.as_mut().ok_or_else(closed)?;
            let created = client
                .create_monitored_items(subscription_id, &specs)
                .await
                .map_err(client_failed)?;
            let mut rows = Vec::new();
            let mut names = names.lock().map_err(|_| failed("poisoned"))?;
            for ((handle, result), text) in created.iter().zip(&node_ids) {
                if result.status_code.is_good() {
                    names.insert(*handle, text.clone());
                }
                rows.push((
                    text.clone(),
                    *handle,
                    result.status_code.to_string(),
                    result.status_code.bits(),
                ));
            }
            Ok(rows)
        })
    }

    /// The next data change of any subscription (a dict: node, value, type, status,
    /// timestamps as datetimes, handle, subscription), waiting at most `timeout` seconds
    /// (then None).
    /// Keeps Publish requests going, reconnects and restores subscriptions when the
    /// connection is lost; other calls on the client run in between.
    fn next_change<'py>(&self, py: Python<'py>, timeout: f64) -> PyResult<Bound<'py, PyAny>> {
        let timeout = std::time::Duration::try_from_secs_f64(timeout)
            .map_err(|_| PyValueError::new_err("timeout must be a number of seconds >= 0"))?;
        let (inner, names) = (Arc::clone(&self.inner), Arc::clone(&self.nodes));
        let reconnects = Arc::clone(&self.reconnects);
        future_into_py(py, async move {
            let deadline = tokio::time::Instant::now() + timeout;
            loop {
                let now = tokio::time::Instant::now();
                if now >= deadline {
                    return Ok(None::<Py<PyAny>>);
                }
                let slice = CHANGE_POLL.min(deadline - now);
                let event = {
                    let mut guard = inner.lock().await;
                    let client = guard.as_mut().ok_or_else(closed)?;
                    // Not a timeout around next_notification: that would cut a reconnect
                    // attempt off every slice, and the client would never come back.
                    let event = client.next_notification_within(slice).await;
                    reconnects.store(client.reconnects(), Ordering::Relaxed);
                    event.map_err(client_failed)?
                };
                match event {
                    Some(SubscriptionEvent::DataChange {
                        subscription_id,
                        client_handle,
                        value,
                        ..
                    }) => {
                        let node = names
                            .lock()
                            .map_err(|_| failed("poisoned"))?
                            .get(&client_handle)
                            .cloned()
                            .unwrap_or_default();
                        return Python::attach(|py| {
                            let row = data_value_py(py, &node, &value)?;
                            row.set_item("handle", client_handle)?;
                            row.set_item("subscription", subscription_id)?;
                            Ok(Some(row.into_any().unbind()))
                        });
                    }
                    Some(SubscriptionEvent::StatusChange { status, .. }) if status.is_bad() => {
                        return Err(status_failed(
                            status,
                            format!(
                                "the server ended the subscription ({status}); subscribe again"
                            ),
                        ));
                    }
                    _ => tokio::task::yield_now().await,
                }
            }
        })
    }

    /// Deletes subscriptions (ids as the server knows them now; see `subscription_ids`).
    fn delete_subscriptions<'py>(
        &self,
        py: Python<'py>,
        subscription_ids: Vec<u32>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let inner = Arc::clone(&self.inner);
        future_into_py(py, async move {
            let mut guard = inner.lock().await;
            let client = guard.as_mut().ok_or_else(closed)?;
            client
                .delete_subscriptions(&subscription_ids)
                .await
                .map(|_| ())
                .map_err(client_failed)
        })
    }

    /// The ids of the client's subscriptions (they change when a server restart made the
    /// client create them again) and the reconnects so far: (subscription ids, reconnects).
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let inner = Arc::clone(&self.inner);
        future_into_py(py, async move {
            let guard = inner.lock().await;
            let client = guard.as_ref().ok_or_else(closed)?;
            let ids = client.subscription_ids();
            Ok((ids, client.reconnects()))
        })
    }

    /// Reconnects so far: the live count when no call holds the client, else the count the
    /// last call saw.
    #[getter]
    fn reconnects(&self) -> u64 {
        if let Ok(guard) = self.inner.try_lock()
            && let Some(client) = guard.as_ref()
        {
            self.reconnects
                .store(client.reconnects(), Ordering::Relaxed);
        }
        self.reconnects.load(Ordering::Relaxed)
    }

    /// Closes the session and the channel.
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let inner = Arc::clone(&self.inner);
        future_into_py(py, async move {
            match inner.lock().await.take() {
                Some(client) => client.close().await.map_err(client_failed),
                None => Ok(()),
            }
        })
    }
}
