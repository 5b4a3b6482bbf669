//! BACnet/IP client and device server for Python: awaitables over the tokio drivers of
//! buildwire-bacnet. Values cross as JSON text (decoded in `python/buildwire/bacnet.py`).

use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::bacnet_names::described;
use buildwire_bacnet::app::{ValueType, parse_value_text};
use buildwire_bacnet::driver::{BacnetClient, BacnetServer, BacnetServerConfig};
use buildwire_bacnet::encoding::Element;
use buildwire_bacnet::objects::PropertyData;
use buildwire_bacnet::objects::profile::{DeviceProfile, ObjectSpec};
use buildwire_bacnet::services::{
    InstanceRange, PropertyReference, ReadAccessSpecification, ReadResult,
};
use buildwire_bacnet::{ObjectIdentifier, PropertyIdentifier};
use buildwire_bench::bacnet::profiles::{large_profile, stress_profile};
use pyo3::exceptions::{PyRuntimeError, PyTimeoutError, PyValueError};
use pyo3::prelude::*;
use pyo3_async_runtimes::tokio::future_into_py;
use serde_json::json;
use tokio::sync::{Mutex, mpsc};

/// The standard BACnet/IP port, used when an address has none.
const BACNET_PORT: u16 = 47808;

fn address(text: &str) -> PyResult<SocketAddrV4> {
    let text = text.trim();
    let full = if text.contains(':') {
        text.to_owned()
    } else {
        format!("{text}:{BACNET_PORT}")
    };
    full.parse().map_err(|_| {
        PyValueError::new_err(format!(
            "`{text}` is not an IPv4 address with port, e.g. 127.0.0.1:47808"
        ))
    })
}

pub(crate) fn object(text: &str) -> PyResult<ObjectIdentifier> {
    text.parse()
        .map_err(|e| PyValueError::new_err(format!("{e}")))
}

pub(crate) fn property(text: &str) -> PyResult<PropertyIdentifier> {
    text.parse()
        .map_err(|e| PyValueError::new_err(format!("{e}")))
}

pub(crate) fn client_error(e: buildwire_bacnet::app::ClientError) -> PyErr {
    if matches!(e, buildwire_bacnet::app::ClientError::Timeout) {
        PyTimeoutError::new_err(e.to_string())
    } else {
        PyRuntimeError::new_err(e.to_string())
    }
}

/// A BACnet/IP client.
#[pyclass(module = "buildwire._native")]
pub struct BacnetClientHandle {
    inner: Arc<BacnetClient>,
}

/// Binds a client on `bind` (`host:port`, port 0 picks one); `broadcast` enables Who-Is.
#[pyfunction]
#[pyo3(signature = (bind, broadcast=None))]
pub fn bacnet_client(
    py: Python<'_>,
    bind: String,
    broadcast: Option<String>,
) -> PyResult<Bound<'_, PyAny>> {
    let bind = address(&bind)?;
    let broadcast = broadcast
        .map(|b| b.parse::<Ipv4Addr>())
        .transpose()
        .map_err(|e| PyValueError::new_err(format!("invalid broadcast address: {e}")))?;
    future_into_py(py, async move {
        let client = BacnetClient::bind(bind, broadcast)
            .await
            .map_err(|e| PyRuntimeError::new_err(format!("cannot bind {bind}: {e}")))?;
        Ok(BacnetClientHandle {
            inner: Arc::new(client),
        })
    })
}

impl BacnetClientHandle {
    /// Wraps a started client (foreign-device clients are made in `bacnet_network`).
    pub(crate) fn from_client(client: BacnetClient) -> Self {
        Self {
            inner: Arc::new(client),
        }
    }
}

#[pymethods]
impl BacnetClientHandle {
    /// The local address.
    #[getter]
    fn local_address(&self) -> String {
        self.inner.local_addr().to_string()
    }

    /// ReadProperty; JSON list of tagged values.
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
            crate::bacnet_network::target(&device)?,
            object(&object_id)?,
            property(&property_id)?,
        );
        let client = Arc::clone(&self.inner);
        future_into_py(py, async move {
            let value = client
                .read_named(to, obj, prop, index)
                .await
                .map_err(client_error)?;
            Ok(value.to_string())
        })
    }

    /// WriteProperty of a value given as text, typed by `value_type` or guessed.
    #[pyo3(signature = (device, object_id, property_id, value, priority=None, index=None, value_type=None))]
    #[allow(clippy::too_many_arguments)]
    fn write<'py>(
        &self,
        py: Python<'py>,
        device: String,
        object_id: String,
        property_id: String,
        value: String,
        priority: Option<u8>,
        index: Option<u32>,
        value_type: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (to, obj, prop) = (
            crate::bacnet_network::target(&device)?,
            object(&object_id)?,
            property(&property_id)?,
        );
        let value_type = value_type
            .map(|t| t.parse::<ValueType>())
            .transpose()
            .map_err(PyValueError::new_err)?;
        let elements =
            parse_value_text(&value, value_type, obj, prop).map_err(PyValueError::new_err)?;
        let client = Arc::clone(&self.inner);
        future_into_py(py, async move {
            client
                .write(to, obj, prop, elements, priority, index)
                .await
                .map_err(client_error)
        })
    }

    /// ReadPropertyMultiple of (object, [property...]) pairs; JSON list of results.
    fn read_multiple<'py>(
        &self,
        py: Python<'py>,
        device: String,
        specs: Vec<(String, Vec<String>)>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let to = crate::bacnet_network::target(&device)?;
        let specifications = specs
            .iter()
            .map(|(o, props)| {
                Ok(ReadAccessSpecification {
                    object: object(o)?,
                    properties: props
                        .iter()
                        .map(|p| {
                            Ok(PropertyReference {
                                property: property(p)?,
                                array_index: None,
                            })
                        })
                        .collect::<PyResult<Vec<_>>>()?,
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        let client = Arc::clone(&self.inner);
        future_into_py(py, async move {
            let results = client
                .read_multiple(to, specifications)
                .await
                .map_err(client_error)?;
            let rows: Vec<_> = results
                .iter()
                .flat_map(|r| {
                    r.results.iter().map(move |p| {
                        let outcome = match &p.result {
                            ReadResult::Value(v) => {
                                json!({"value": described(r.object, p.property, p.array_index, v)})
                            }
                            ReadResult::Error(e) => {
                                json!({"error": format!("{}: {}", e.class, e.code)})
                            }
                        };
                        json!({"object": r.object.to_string(), "property": p.property.to_string(),
                               "index": p.array_index, "result": outcome})
                    })
                })
                .collect();
            Ok(serde_json::Value::Array(rows).to_string())
        })
    }

    /// Reads many properties of one device, batched into ReadPropertyMultiple where the
    /// device offers it; JSON list in the order of `references` (see `bacnet_cov`).
    fn read_many<'py>(
        &self,
        py: Python<'py>,
        device: String,
        references: Vec<(String, String, Option<u32>)>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::bacnet_cov::read_many(py, Arc::clone(&self.inner), &device, &references)
    }

    /// SubscribeCOV (or SubscribeCOVProperty with `property_id`); resolves to a
    /// subscription handle once the device accepted.
    #[pyo3(signature = (device, object_id, property_id=None, index=None, confirmed=false, lifetime=300, increment=None))]
    #[allow(clippy::too_many_arguments)]
    fn subscribe_cov<'py>(
        &self,
        py: Python<'py>,
        device: String,
        object_id: String,
        property_id: Option<String>,
        index: Option<u32>,
        confirmed: bool,
        lifetime: u32,
        increment: Option<f32>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request = crate::bacnet_cov::CovRequest {
            object_id,
            property_id,
            index,
            confirmed,
            lifetime,
            increment,
        };
        crate::bacnet_cov::subscribe(py, Arc::clone(&self.inner), &device, &request)
    }

    /// Who-Is (broadcast); JSON list of the devices that answered within `timeout` seconds.
    #[pyo3(signature = (timeout=2.0, low=None, high=None))]
    fn who_is<'py>(
        &self,
        py: Python<'py>,
        timeout: f64,
        low: Option<u32>,
        high: Option<u32>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let wait = Duration::try_from_secs_f64(timeout)
            .map_err(|_| PyValueError::new_err("timeout must be a number of seconds >= 0"))?;
        let range = match (low, high) {
            (Some(low), Some(high)) => Some(InstanceRange::new(low, high).ok_or_else(|| {
                PyValueError::new_err("low and high must be device instances 0..=4194303")
            })?),
            (None, None) => None,
            _ => return Err(PyValueError::new_err("give both low and high, or neither")),
        };
        let client = Arc::clone(&self.inner);
        future_into_py(py, async move {
            let found = client.who_is(range, wait).await.map_err(client_error)?;
            let rows: Vec<_> = found
                .iter()
                .map(|(addr, i_am)| {
                    json!({"address": addr.to_string(), "device": i_am.device.to_string(),
                           "instance": i_am.device.instance(),
                           "max_apdu": i_am.max_apdu_length_accepted,
                           "segmentation": i_am.segmentation_supported.to_string(),
                           "vendor_id": i_am.vendor_id})
                })
                .collect();
            Ok(serde_json::Value::Array(rows).to_string())
        })
    }

    /// Stops the client's task.
    fn close(&self) {
        self.inner.shutdown();
    }
}

/// Most analog values `objects="large:N"` creates.
const MAX_LARGE_OBJECTS: u32 = 100_000;

/// Network writes buffered for `next_write` before the oldest unread ones are dropped.
const WRITE_QUEUE: usize = 4096;

/// A running BACnet/IP device.
#[pyclass(module = "buildwire._native")]
pub struct BacnetServerHandle {
    inner: Arc<Mutex<Option<BacnetServer>>>,
    /// Network writes as JSON `{"object", "property", "value"}`, fed by the write hook.
    writes: Arc<Mutex<mpsc::Receiver<String>>>,
    /// Writes lost because nobody read the queue.
    dropped_writes: Arc<AtomicU64>,
    #[pyo3(get)]
    local_address: String,
}

/// Installs a write hook that queues every network write as JSON for Python.
fn queue_writes(server: &BacnetServer) -> (mpsc::Receiver<String>, Arc<AtomicU64>) {
    let (sender, receiver) = mpsc::channel(WRITE_QUEUE);
    let dropped = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&dropped);
    server.set_write_hook(Box::new(move |change, value| {
        let event = json!({
            "object": change.object.to_string(),
            "property": change.property.to_string(),
            "value": described(change.object, change.property, None, value),
        });
        if sender.try_send(event.to_string()).is_err() {
            counter.fetch_add(1, Ordering::Relaxed);
        }
    }));
    (receiver, dropped)
}

fn property_error(e: buildwire_bacnet::objects::PropertyError) -> PyErr {
    PyValueError::new_err(format!("{}: {}", e.class, e.code))
}

/// Starts a device on `bind` serving `objects`: "stress", "large:N" or a JSON device file's text.
#[pyfunction]
#[pyo3(signature = (bind, objects="stress".to_owned(), broadcast=None))]
pub fn bacnet_serve(
    py: Python<'_>,
    bind: String,
    objects: String,
    broadcast: Option<String>,
) -> PyResult<Bound<'_, PyAny>> {
    let bind = address(&bind)?;
    let profile = match objects.as_str() {
        "stress" => stress_profile(),
        text if text.starts_with("large:") => {
            let n = text[6..]
                .parse()
                .ok()
                .filter(|n: &u32| *n <= MAX_LARGE_OBJECTS)
                .ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "large:N needs a number of objects from 0 to {MAX_LARGE_OBJECTS}"
                    ))
                })?;
            large_profile(n)
        }
        json => DeviceProfile::from_json(json).map_err(|e| PyValueError::new_err(e.to_string()))?,
    };
    let database = profile
        .build()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mut config = BacnetServerConfig::new(bind, database);
    if let Some(b) = broadcast {
        config.broadcast = Some(
            b.parse()
                .map_err(|e| PyValueError::new_err(format!("invalid broadcast address: {e}")))?,
        );
    }
    future_into_py(py, async move {
        let server = BacnetServer::start(config)
            .await
            .map_err(|e| PyRuntimeError::new_err(format!("cannot start on {bind}: {e}")))?;
        let (writes, dropped_writes) = queue_writes(&server);
        Ok(BacnetServerHandle {
            local_address: server.local_addr().to_string(),
            inner: Arc::new(Mutex::new(Some(server))),
            writes: Arc::new(Mutex::new(writes)),
            dropped_writes,
        })
    })
}

impl BacnetServerHandle {
    /// Runs `f` on the device's object database (from Python's thread, never a tokio one).
    fn with_database<R>(
        &self,
        f: impl FnOnce(&mut buildwire_bacnet::objects::database::ObjectDatabase) -> PyResult<R>,
    ) -> PyResult<R> {
        let guard = self.inner.blocking_lock();
        let server = guard
            .as_ref()
            .ok_or_else(|| PyRuntimeError::new_err("the device is stopped"))?;
        server.with_database(f)
    }
}

#[pymethods]
impl BacnetServerHandle {
    /// How many objects the device serves, the Device included.
    #[getter]
    fn object_count(&self) -> PyResult<usize> {
        self.with_database(|db| Ok(db.len()))
    }

    /// How many COV subscriptions the device holds.
    #[getter]
    fn cov_subscriptions(&self) -> PyResult<usize> {
        let guard = self.inner.blocking_lock();
        let server = guard
            .as_ref()
            .ok_or_else(|| PyRuntimeError::new_err("the device is stopped"))?;
        Ok(server.with_server(|s| s.cov_subscriptions()))
    }

    /// Network writes lost because the queue was full (nobody iterated `writes()`).
    #[getter]
    fn dropped_writes(&self) -> u64 {
        self.dropped_writes.load(Ordering::Relaxed)
    }

    /// Adds an object described by one object of the JSON device format.
    fn add_object(&self, spec_json: &str) -> PyResult<String> {
        let spec =
            ObjectSpec::from_json(spec_json).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let object = spec.build();
        let identifier = object.identifier();
        self.with_database(|db| db.add(object).map_err(property_error))?;
        Ok(identifier.to_string())
    }

    /// Removes an object (not the Device).
    fn remove_object(&self, object_id: &str) -> PyResult<()> {
        let id = object(object_id)?;
        self.with_database(|db| db.remove(id).map(|_| ()).map_err(property_error))
    }

    /// Reads a property locally; JSON elements as the client's `read` gives them.
    #[pyo3(signature = (object_id, property_id, index=None))]
    fn get(&self, object_id: &str, property_id: &str, index: Option<u32>) -> PyResult<String> {
        let (obj, prop) = (object(object_id)?, property(property_id)?);
        self.with_database(|db| {
            db.read_property(obj, prop, index)
                .map(|elements| described(obj, prop, index, &elements).to_string())
                .map_err(property_error)
        })
    }

    /// Sets a property locally without network access rules (a new sensor reading): the
    /// value is text typed by `value_type` or guessed, as for the client's `write`.
    #[pyo3(signature = (object_id, property_id, value, value_type=None))]
    fn set(
        &self,
        object_id: &str,
        property_id: &str,
        value: &str,
        value_type: Option<String>,
    ) -> PyResult<()> {
        let (obj, prop) = (object(object_id)?, property(property_id)?);
        let value_type = value_type
            .map(|t| t.parse::<ValueType>())
            .transpose()
            .map_err(PyValueError::new_err)?;
        let elements =
            parse_value_text(value, value_type, obj, prop).map_err(PyValueError::new_err)?;
        let data = match elements.as_slice() {
            [Element::Application(single)] => PropertyData::Single(single.clone()),
            _ => {
                return Err(PyValueError::new_err(
                    "set takes one primitive value; describe arrays and lists in the object spec",
                ));
            }
        };
        self.with_database(|db| db.set_local(obj, prop, data).map_err(property_error))
    }

    /// The next network write as JSON, or None once the device has stopped.
    fn next_write<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let writes = Arc::clone(&self.writes);
        future_into_py(py, async move { Ok(writes.lock().await.recv().await) })
    }

    /// Stops the device.
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
