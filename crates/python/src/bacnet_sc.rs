//! BACnet/SC for Python: test certificates, a hub, and a device on a hub (thin wrappers over
//! `buildwire_bacnet::driver`'s SC drivers; the Pythonic layer is python/buildwire/bacnet_sc.py).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use buildwire_bacnet::driver::sc::certs::write_pki;
use buildwire_bacnet::driver::sc::tls::{ScTlsFiles, client_config, server_config};
use buildwire_bacnet::driver::{
    BacnetServer, BacnetServerConfig, ScHub, ScHubConfig, ScNodeConfig, ScTransport,
    random_identity, random_uuid, random_vmac,
};
use buildwire_bacnet::link::sc::node::NodeConfig;
use buildwire_bacnet::link::sc::{HubConfig, Vmac};
use buildwire_bench::bacnet::profiles::stress_profile;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3_async_runtimes::tokio::future_into_py;
use serde_json::json;
use tokio::sync::Mutex;

/// The TLS files, or none when `no_tls`.
fn files(
    cert: Option<String>,
    key: Option<String>,
    ca: Vec<String>,
    no_tls: bool,
) -> PyResult<Option<ScTlsFiles>> {
    if no_tls {
        return Ok(None);
    }
    match (cert, key) {
        (Some(cert), Some(key)) if !ca.is_empty() => Ok(Some(ScTlsFiles {
            certificate: cert.into(),
            private_key: key.into(),
            issuers: ca.into_iter().map(PathBuf::from).collect(),
        })),
        _ => Err(PyValueError::new_err(
            "BACnet/SC needs cert, key and ca (make test ones with bacnet_sc.make_certificates), \
             or no_tls=True for plaintext",
        )),
    }
}

/// Writes a test CA and operational certificates into `directory`; returns the files.
#[pyfunction]
#[pyo3(signature = (directory, names, days=365))]
pub fn bacnet_sc_certs(directory: String, names: Vec<String>, days: u32) -> PyResult<Vec<String>> {
    let written = write_pki(std::path::Path::new(&directory), &names, &[], days)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(written.iter().map(|p| p.display().to_string()).collect())
}

/// A running BACnet/SC hub.
#[pyclass(module = "buildwire._native")]
pub struct BacnetScHubHandle {
    uri: String,
    inner: Arc<Mutex<Option<ScHub>>>,
}

#[pymethods]
impl BacnetScHubHandle {
    /// `wss://HOST:PORT` (or `ws://` without TLS).
    #[getter]
    fn uri(&self) -> String {
        self.uri.clone()
    }

    /// Counters: JSON object.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let inner = Arc::clone(&self.inner);
        future_into_py(py, async move {
            let guard = inner.lock().await;
            let Some(hub) = guard.as_ref() else {
                return Err(PyRuntimeError::new_err("the hub was stopped"));
            };
            let s = hub.stats();
            Ok(json!({
                "nodes": s.nodes, "connections": s.connections,
                "unicast_relayed": s.hub.unicast_relayed,
                "broadcast_copies": s.hub.broadcast_copies,
                "handshake_refused": s.handshake_refused,
                "originating_replaced": s.hub.originating_replaced,
            })
            .to_string())
        })
    }

    /// Disconnects every node and stops.
    fn stop<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let inner = Arc::clone(&self.inner);
        future_into_py(py, async move {
            if let Some(hub) = inner.lock().await.take() {
                hub.shutdown(Duration::from_secs(1)).await;
            }
            Ok(())
        })
    }
}

/// Starts a hub on `bind` (HOST:PORT).
#[pyfunction]
#[pyo3(signature = (bind, cert=None, key=None, ca=Vec::new(), no_tls=false))]
pub fn bacnet_sc_hub(
    py: Python<'_>,
    bind: String,
    cert: Option<String>,
    key: Option<String>,
    ca: Vec<String>,
    no_tls: bool,
) -> PyResult<Bound<'_, PyAny>> {
    let bind = bind
        .parse()
        .map_err(|e| PyValueError::new_err(format!("bind {bind:?}: {e} (HOST:PORT)")))?;
    let tls = match files(cert, key, ca, no_tls)? {
        Some(files) => {
            Some(server_config(&files).map_err(|e| PyValueError::new_err(e.to_string()))?)
        }
        None => None,
    };
    let config = ScHubConfig {
        bind,
        tls,
        hub: HubConfig::new(random_vmac(), random_uuid()),
    };
    future_into_py(py, async move {
        let hub = ScHub::start(config)
            .await
            .map_err(|e| PyRuntimeError::new_err(format!("cannot start the hub: {e}")))?;
        Ok(BacnetScHubHandle {
            uri: hub.uri(),
            inner: Arc::new(Mutex::new(Some(hub))),
        })
    })
}

/// A device serving on a BACnet/SC node.
#[pyclass(module = "buildwire._native")]
pub struct BacnetScDeviceHandle {
    vmac: Vmac,
    inner: Arc<Mutex<Option<BacnetServer<Vmac>>>>,
}

#[pymethods]
impl BacnetScDeviceHandle {
    /// The node's VMAC, `xx:xx:xx:xx:xx:xx`.
    #[getter]
    fn vmac(&self) -> String {
        self.vmac.to_string()
    }

    /// Stops the device and leaves the hub.
    fn stop<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let inner = Arc::clone(&self.inner);
        future_into_py(py, async move {
            if let Some(server) = inner.lock().await.take() {
                server.shutdown().await;
            }
            Ok(())
        })
    }
}

/// Starts the 40-object stress device (instance `device_id`) on a node of the hub at `hub`.
#[pyfunction]
#[pyo3(signature = (hub, cert=None, key=None, ca=Vec::new(), no_tls=false, device_id=400, failover_hub=None))]
#[allow(clippy::too_many_arguments)]
pub fn bacnet_sc_device(
    py: Python<'_>,
    hub: String,
    cert: Option<String>,
    key: Option<String>,
    ca: Vec<String>,
    no_tls: bool,
    device_id: u32,
    failover_hub: Option<String>,
) -> PyResult<Bound<'_, PyAny>> {
    let mut node_config = node_config(&hub, files(cert, key, ca, no_tls)?)?;
    node_config.node.failover_hub = failover_hub;
    let mut profile = stress_profile();
    profile.device.instance = device_id;
    let database = profile
        .build()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    future_into_py(py, async move {
        let transport = ScTransport::start(node_config)
            .await
            .map_err(|e| PyRuntimeError::new_err(format!("cannot reach the hub {hub}: {e}")))?;
        let vmac = transport.vmac();
        let mut config = BacnetServerConfig::new(
            "0.0.0.0:0"
                .parse()
                .map_err(|_| PyValueError::new_err("bind"))?,
            database,
        );
        config.announce = false;
        let server = BacnetServer::start_on(transport, config)
            .await
            .map_err(|e| PyRuntimeError::new_err(format!("cannot serve: {e}")))?;
        Ok(BacnetScDeviceHandle {
            vmac,
            inner: Arc::new(Mutex::new(Some(server))),
        })
    })
}

/// A client on a BACnet/SC node; devices are addressed by VMAC.
#[pyclass(module = "buildwire._native")]
pub struct BacnetScClientHandle {
    inner: Arc<buildwire_bacnet::driver::BacnetClient<Vmac>>,
}

fn vmac_of(text: &str) -> PyResult<buildwire_bacnet::network::DeviceAddress<Vmac>> {
    text.parse::<Vmac>()
        .map(buildwire_bacnet::network::DeviceAddress::Local)
        .map_err(|e| PyValueError::new_err(format!("{text:?} is not a BACnet/SC VMAC: {e}")))
}

#[pymethods]
impl BacnetScClientHandle {
    /// Who-Is through the hub: JSON list of {address (VMAC), device, instance, vendor_id}.
    fn who_is<'py>(&self, py: Python<'py>, timeout: f64) -> PyResult<Bound<'py, PyAny>> {
        let wait = Duration::try_from_secs_f64(timeout)
            .map_err(|_| PyValueError::new_err("timeout must be a number of seconds >= 0"))?;
        let client = Arc::clone(&self.inner);
        future_into_py(py, async move {
            let found = client
                .who_is(None, wait)
                .await
                .map_err(crate::bacnet::client_error)?;
            let rows: Vec<_> = found
                .iter()
                .map(|(address, i_am)| {
                    json!({"address": address.to_string(), "device": i_am.device.to_string(),
                           "instance": i_am.device.instance(), "vendor_id": i_am.vendor_id})
                })
                .collect();
            Ok(serde_json::Value::Array(rows).to_string())
        })
    }

    /// ReadProperty: the value as a Python object (as `buildwire.bacnet.Client.read`).
    #[pyo3(signature = (device, object_id, property_id, index=None))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        device: String,
        object_id: String,
        property_id: String,
        index: Option<u32>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (to, obj, prop) = (
            vmac_of(&device)?,
            crate::bacnet::object(&object_id)?,
            crate::bacnet::property(&property_id)?,
        );
        let client = Arc::clone(&self.inner);
        future_into_py(py, async move {
            let value = client
                .read_named(to, obj, prop, index)
                .await
                .map_err(crate::bacnet::client_error)?;
            Python::attach(|py| crate::py_json::json_py(py, &value))
        })
    }

    /// WriteProperty of a value given as text (typed from the object, as the CLI does).
    #[pyo3(signature = (device, object_id, property_id, value, priority=None))]
    fn write<'py>(
        &self,
        py: Python<'py>,
        device: String,
        object_id: String,
        property_id: String,
        value: String,
        priority: Option<u8>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (to, obj, prop) = (
            vmac_of(&device)?,
            crate::bacnet::object(&object_id)?,
            crate::bacnet::property(&property_id)?,
        );
        let elements = buildwire_bacnet::app::parse_value_text(&value, None, obj, prop)
            .map_err(PyValueError::new_err)?;
        let client = Arc::clone(&self.inner);
        future_into_py(py, async move {
            client
                .write(to, obj, prop, elements, priority, None)
                .await
                .map_err(crate::bacnet::client_error)
        })
    }

    /// Stops the client's task (the node leaves the hub).
    fn close(&self) {
        self.inner.shutdown();
    }
}

/// Connects a client node to the hub at `hub`.
#[pyfunction]
#[pyo3(signature = (hub, cert=None, key=None, ca=Vec::new(), no_tls=false))]
pub fn bacnet_sc_client(
    py: Python<'_>,
    hub: String,
    cert: Option<String>,
    key: Option<String>,
    ca: Vec<String>,
    no_tls: bool,
) -> PyResult<Bound<'_, PyAny>> {
    let node_config = node_config(&hub, files(cert, key, ca, no_tls)?)?;
    future_into_py(py, async move {
        let transport = ScTransport::start(node_config)
            .await
            .map_err(|e| PyRuntimeError::new_err(format!("cannot reach the hub {hub}: {e}")))?;
        if transport.status() == buildwire_bacnet::link::sc::HubConnectionStatus::NoHubConnection {
            return Err(PyRuntimeError::new_err(format!(
                "no connection to the hub {hub}: check the address and that each side trusts \
                 the other's certificate authority"
            )));
        }
        let client = buildwire_bacnet::driver::BacnetClient::start_on(
            transport,
            buildwire_bacnet::tsm::TsmConfig::default(),
            true,
        )
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok(BacnetScClientHandle {
            inner: Arc::new(client),
        })
    })
}

/// A new node (random VMAC and UUID) of `hub`, with TLS from `files` (none: plaintext).
fn node_config(hub: &str, files: Option<ScTlsFiles>) -> PyResult<ScNodeConfig> {
    let tls = match files {
        Some(files) => {
            Some(client_config(&files).map_err(|e| PyValueError::new_err(e.to_string()))?)
        }
        None => None,
    };
    let identity = random_identity();
    Ok(ScNodeConfig::new(NodeConfig::new(identity, hub), tls))
}
