//! BACnet/IP client and device server for Python: awaitables over the tokio drivers of
//! buildwire-bacnet. Values cross as Python objects (`bacnet_values`); the services beyond
//! reading and writing are in `bacnet_services`.

use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::bacnet_names::described;
use crate::py_json::json_py;
use buildwire_bacnet::app::{Destination, ValueType, parse_value_text};
use buildwire_bacnet::driver::{
    BacnetClient, BacnetServer, BacnetServerConfig, BipConfig, ClientConfig, STANDARD_PORT,
    with_timing,
};
use buildwire_bacnet::encoding::{Element, ObjectPropertyReference};
use buildwire_bacnet::network::DeviceAddress;
use buildwire_bacnet::objects::PropertyData;
use buildwire_bacnet::objects::profile::{DeviceProfile, ObjectSpec};
use buildwire_bacnet::services::{
    InstanceRange, PropertyReference, ReadAccessResult, ReadAccessSpecification, ReadResult,
};
use buildwire_bacnet::{ObjectIdentifier, PropertyIdentifier, RequestTiming, TsmConfig};
use buildwire_bench::bacnet::profiles::{large_profile, stress_profile};
use pyo3::IntoPyObjectExt;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3_async_runtimes::tokio::future_into_py;
use tokio::sync::{Mutex, mpsc};

use crate::bacnet_values::value_text;

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

pub(crate) use crate::bacnet_values::client_error;

/// The default reply timeout of each attempt, in seconds (the TSM's).
const DEFAULT_TIMEOUT: f64 = 3.0;

/// A reply timeout in seconds and a number of retries as a [`RequestTiming`].
pub(crate) fn request_timing(timeout: f64, retries: i64) -> PyResult<RequestTiming> {
    let retries = u8::try_from(retries)
        .map_err(|_| PyValueError::new_err(format!("retries must be 0 to 255, not {retries}")))?;
    let apdu_timeout = Duration::try_from_secs_f64(timeout)
        .ok()
        .filter(|t| !t.is_zero() && *t <= Duration::from_secs(3600))
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "timeout must be seconds above 0 and at most 3600 (each attempt's wait), not \
                 {timeout}"
            ))
        })?;
    Ok(RequestTiming {
        apdu_timeout,
        retries,
    })
}

/// Runs a client call with its own timing, when the call gave one.
pub(crate) async fn timed<F: std::future::Future>(
    timing: Option<RequestTiming>,
    call: F,
) -> F::Output {
    match timing {
        Some(timing) => with_timing(timing, call).await,
        None => call.await,
    }
}

/// A BACnet/IP client.
#[pyclass(module = "buildwire._native")]
pub struct BacnetClientHandle {
    pub(crate) inner: Arc<BacnetClient>,
    /// The client's reply timeout and retries (calls may override them).
    pub(crate) timing: RequestTiming,
    /// Where Who-Is and Who-Has broadcasts go, when the client has a broadcast address.
    broadcast_to: Option<SocketAddrV4>,
}

/// Binds a client on `bind` (`host:port`, port 0 picks one). Broadcasts go to `broadcast`
/// (default: the subnet's broadcast address of `bind`) on `port` (default: 47808 when
/// `bind` has port 0, else the bound port). `timeout` (seconds) and `retries` set how long
/// each request waits for its answer and how often it is sent again.
#[pyfunction]
#[pyo3(signature = (bind, broadcast=None, port=None, timeout=DEFAULT_TIMEOUT, retries=3))]
pub fn bacnet_client(
    py: Python<'_>,
    bind: String,
    broadcast: Option<String>,
    port: Option<u16>,
    timeout: f64,
    retries: i64,
) -> PyResult<Bound<'_, PyAny>> {
    let bind = address(&bind)?;
    let broadcast = match broadcast {
        Some(b) => Some(
            b.parse::<Ipv4Addr>()
                .map_err(|e| PyValueError::new_err(format!("invalid broadcast address: {e}")))?,
        ),
        None => BipConfig::with_default_broadcast(bind).broadcast,
    };
    if port == Some(0) {
        return Err(PyValueError::new_err(
            "port is where broadcasts go (1..=65535, usually 47808)",
        ));
    }
    let timing = request_timing(timeout, retries)?;
    let mut config = ClientConfig::new(bind, broadcast);
    config.broadcast_port = port;
    config.tsm.apdu_timeout = timing.apdu_timeout;
    config.tsm.retries = timing.retries;
    future_into_py(py, async move {
        let client = BacnetClient::start(config)
            .await
            .map_err(|e| PyRuntimeError::new_err(format!("cannot bind {bind}: {e}")))?;
        let local = client.local_addr();
        let to_port = port.unwrap_or(if bind.port() == 0 {
            STANDARD_PORT
        } else {
            local.port()
        });
        Ok(BacnetClientHandle {
            inner: Arc::new(client),
            timing,
            broadcast_to: broadcast.map(|ip| SocketAddrV4::new(ip, to_port)),
        })
    })
}

impl BacnetClientHandle {
    /// Wraps a started client with the default timing whose broadcasts go to
    /// `broadcast_to` (foreign-device clients are made in `bacnet_network`: their
    /// broadcasts go to the BBMD, which distributes them).
    pub(crate) fn from_client(client: BacnetClient, broadcast_to: Option<SocketAddrV4>) -> Self {
        Self {
            inner: Arc::new(client),
            timing: RequestTiming::of(&TsmConfig::default()),
            broadcast_to,
        }
    }

    /// The timing of one call: the client's, with what the call overrides.
    pub(crate) fn call_timing(
        &self,
        timeout: Option<f64>,
        retries: Option<i64>,
    ) -> PyResult<Option<RequestTiming>> {
        if timeout.is_none() && retries.is_none() {
            return Ok(None);
        }
        let seconds = timeout.unwrap_or(self.timing.apdu_timeout.as_secs_f64());
        let retries = retries.unwrap_or(i64::from(self.timing.retries));
        request_timing(seconds, retries).map(Some)
    }
}

fn spec_rows(py: Python<'_>, results: &[ReadAccessResult]) -> PyResult<Py<PyAny>> {
    let rows = PyList::empty(py);
    for r in results {
        for p in &r.results {
            let outcome = match &p.result {
                ReadResult::Value(v) => Ok(v.as_slice()),
                ReadResult::Error(e) => Err(format!("{}: {}", e.class, e.code)),
            };
            rows.append(read_row(py, r.object, p.property, p.array_index, outcome)?)?;
        }
    }
    rows.into_py_any(py)
}

/// One row of a multiple read: `object`, `property`, `index` and either the named `value`
/// or the `error` text (`class: code` for a BACnet error).
pub(crate) fn read_row<'py>(
    py: Python<'py>,
    object: ObjectIdentifier,
    property: PropertyIdentifier,
    index: Option<u32>,
    outcome: Result<&[Element], String>,
) -> PyResult<Bound<'py, PyDict>> {
    let row = PyDict::new(py);
    row.set_item("object", object.to_string())?;
    row.set_item("property", property.to_string())?;
    row.set_item("index", index)?;
    match outcome {
        Ok(value) => row.set_item(
            "value",
            json_py(py, &described(object, property, index, value))?,
        )?,
        Err(error) => row.set_item("error", error)?,
    }
    Ok(row)
}

#[pymethods]
impl BacnetClientHandle {
    /// The local address.
    #[getter]
    fn local_address(&self) -> String {
        self.inner.local_addr().to_string()
    }

    /// Where broadcasts (Who-Is, Who-Has, time synchronization) go (a foreign device's:
    /// its BBMD), or None.
    #[getter]
    fn broadcast_address(&self) -> Option<String> {
        self.broadcast_to.map(|a| a.to_string())
    }

    /// The client's reply timeout of each attempt, in seconds.
    #[getter]
    fn timeout(&self) -> f64 {
        self.timing.apdu_timeout.as_secs_f64()
    }

    /// The client's retries of each request.
    #[getter]
    fn retries(&self) -> u8 {
        self.timing.retries
    }

    /// ReadProperty; the value as a Python object.
    #[pyo3(signature = (device, object_id, property_id, index=None, timeout=None, retries=None))]
    #[allow(clippy::too_many_arguments)]
    fn read<'py>(
        &self,
        py: Python<'py>,
        device: String,
        object_id: String,
        property_id: String,
        index: Option<u32>,
        timeout: Option<f64>,
        retries: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (to, obj, prop) = point(&device, &object_id, &property_id)?;
        let timing = self.call_timing(timeout, retries)?;
        let client = Arc::clone(&self.inner);
        future_into_py(py, async move {
            let value = timed(timing, client.read_named(to, obj, prop, index))
                .await
                .map_err(client_error)?;
            Python::attach(|py| json_py(py, &value))
        })
    }

    /// WriteProperty of a Python value (None, bool, int, float, str), typed by
    /// `value_type` or guessed from the object and property.
    #[pyo3(signature = (device, object_id, property_id, value, priority=None, index=None, value_type=None, timeout=None, retries=None))]
    #[allow(clippy::too_many_arguments)]
    fn write<'py>(
        &self,
        py: Python<'py>,
        device: String,
        object_id: String,
        property_id: String,
        value: &Bound<'py, PyAny>,
        priority: Option<u8>,
        index: Option<u32>,
        value_type: Option<String>,
        timeout: Option<f64>,
        retries: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (to, obj, prop) = point(&device, &object_id, &property_id)?;
        let elements = typed_value(value, value_type.as_deref(), obj, prop)?;
        let timing = self.call_timing(timeout, retries)?;
        let client = Arc::clone(&self.inner);
        future_into_py(py, async move {
            timed(
                timing,
                client.write(to, obj, prop, elements, priority, index),
            )
            .await
            .map_err(client_error)
        })
    }

    /// ReadPropertyMultiple of (object, [property...]) pairs; a list of row dicts.
    #[pyo3(signature = (device, specs, timeout=None, retries=None))]
    fn read_multiple<'py>(
        &self,
        py: Python<'py>,
        device: String,
        specs: Vec<(String, Vec<String>)>,
        timeout: Option<f64>,
        retries: Option<i64>,
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
        let timing = self.call_timing(timeout, retries)?;
        let client = Arc::clone(&self.inner);
        future_into_py(py, async move {
            let results = timed(timing, client.read_multiple(to, specifications))
                .await
                .map_err(client_error)?;
            Python::attach(|py| spec_rows(py, &results))
        })
    }

    /// Reads many properties of one device, batched into ReadPropertyMultiple where the
    /// device offers it; row dicts in the order of `references` (see `bacnet_cov`).
    #[pyo3(signature = (device, references, timeout=None, retries=None))]
    fn read_many<'py>(
        &self,
        py: Python<'py>,
        device: String,
        references: Vec<(String, String, Option<u32>)>,
        timeout: Option<f64>,
        retries: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let timing = self.call_timing(timeout, retries)?;
        crate::bacnet_cov::read_many(py, Arc::clone(&self.inner), &device, &references, timing)
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

    /// Who-Is to the broadcast address (or to `device`); a list of dicts of the devices
    /// that answered within `timeout` seconds.
    #[pyo3(signature = (timeout=2.0, low=None, high=None, device=None))]
    fn who_is<'py>(
        &self,
        py: Python<'py>,
        timeout: f64,
        low: Option<u32>,
        high: Option<u32>,
        device: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let wait = Duration::try_from_secs_f64(timeout)
            .map_err(|_| PyValueError::new_err("timeout must be a number of seconds >= 0"))?;
        let range = instance_range(low, high)?;
        let destination = self.destination(device.as_deref())?;
        let client = Arc::clone(&self.inner);
        future_into_py(py, async move {
            let found = client
                .who_is_at(destination, range, wait)
                .await
                .map_err(client_error)?;
            Python::attach(|py| {
                let rows = PyList::empty(py);
                for (addr, i_am) in &found {
                    let row = PyDict::new(py);
                    row.set_item("address", addr.to_string())?;
                    row.set_item("device", i_am.device.to_string())?;
                    row.set_item("instance", i_am.device.instance())?;
                    row.set_item("max_apdu", i_am.max_apdu_length_accepted)?;
                    row.set_item("segmentation", i_am.segmentation_supported.to_string())?;
                    row.set_item("vendor_id", i_am.vendor_id)?;
                    rows.append(row)?;
                }
                rows.into_py_any(py)
            })
        })
    }

    /// Who-Has an object (by identifier or by name) to the broadcast address or `device`;
    /// a list of (address, device, object, name) tuples of the I-Have answers.
    #[pyo3(signature = (object_id=None, name=None, timeout=2.0, low=None, high=None, device=None))]
    #[allow(clippy::too_many_arguments)]
    fn who_has<'py>(
        &self,
        py: Python<'py>,
        object_id: Option<String>,
        name: Option<String>,
        timeout: f64,
        low: Option<u32>,
        high: Option<u32>,
        device: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::bacnet_services::who_has(
            py,
            self,
            (object_id, name),
            timeout,
            instance_range(low, high)?,
            self.destination(device.as_deref())?,
        )
    }

    /// ReadRange of a list or array (a trend log's log-buffer); `kind` ("position",
    /// "sequence", "time") with `reference` and `count` selects items, none reads all.
    #[pyo3(signature = (device, object_id, property_id, index=None, kind=None, reference=None, count=None, timeout=None, retries=None))]
    #[allow(clippy::too_many_arguments)]
    fn read_range<'py>(
        &self,
        py: Python<'py>,
        device: String,
        object_id: String,
        property_id: String,
        index: Option<u32>,
        kind: Option<String>,
        reference: Option<&Bound<'py, PyAny>>,
        count: Option<i32>,
        timeout: Option<f64>,
        retries: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (to, obj, prop) = point(&device, &object_id, &property_id)?;
        let range = crate::bacnet_services::range_spec(kind.as_deref(), reference, count)?;
        let timing = self.call_timing(timeout, retries)?;
        let client = Arc::clone(&self.inner);
        future_into_py(py, async move {
            let ack = timed(timing, client.read_range(to, obj, prop, index, range))
                .await
                .map_err(client_error)?;
            Python::attach(|py| crate::bacnet_services::read_range_py(py, &ack))
        })
    }

    /// WritePropertyMultiple of (object, property, value, priority, index, value type)
    /// writes; consecutive writes to one object go in one specification.
    #[pyo3(signature = (device, writes, timeout=None, retries=None))]
    fn write_multiple<'py>(
        &self,
        py: Python<'py>,
        device: String,
        writes: Vec<crate::bacnet_services::WriteSpec<'py>>,
        timeout: Option<f64>,
        retries: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let to = crate::bacnet_network::target(&device)?;
        let specifications = crate::bacnet_services::write_specifications(&writes)?;
        let timing = self.call_timing(timeout, retries)?;
        let client = Arc::clone(&self.inner);
        future_into_py(py, async move {
            timed(timing, client.write_multiple(to, specifications))
                .await
                .map_err(client_error)
        })
    }

    /// AddListElement (`add`) or RemoveListElement of `items` of a list property.
    #[pyo3(signature = (device, object_id, property_id, items, add, index=None, timeout=None, retries=None))]
    #[allow(clippy::too_many_arguments)]
    fn change_list<'py>(
        &self,
        py: Python<'py>,
        device: String,
        object_id: String,
        property_id: String,
        items: &Bound<'py, PyAny>,
        add: bool,
        index: Option<u32>,
        timeout: Option<f64>,
        retries: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (obj, prop) = (object(&object_id)?, property(&property_id)?);
        let elements = crate::bacnet_services::list_items(obj, prop, items)?;
        let target = ObjectPropertyReference {
            object: obj,
            property: prop,
            array_index: index,
        };
        let request = crate::bacnet_services::Management::List(add, target, elements);
        let timing = self.call_timing(timeout, retries)?;
        crate::bacnet_services::manage(py, self, &device, request, timing)
    }

    /// DeviceCommunicationControl: `state` "enable", "disable" or "disable-initiation",
    /// for `minutes` (None: until enabled again).
    #[pyo3(signature = (device, state, minutes=None, password=None, timeout=None, retries=None))]
    #[allow(clippy::too_many_arguments)]
    fn device_communication_control<'py>(
        &self,
        py: Python<'py>,
        device: String,
        state: String,
        minutes: Option<u16>,
        password: Option<String>,
        timeout: Option<f64>,
        retries: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let state = crate::bacnet_services::enable_disable(&state)?;
        let request = crate::bacnet_services::Management::Dcc(state, minutes, password);
        let timing = self.call_timing(timeout, retries)?;
        crate::bacnet_services::manage(py, self, &device, request, timing)
    }

    /// ReinitializeDevice: `state` "coldstart", "warmstart", "start-backup" ...
    #[pyo3(signature = (device, state, password=None, timeout=None, retries=None))]
    fn reinitialize_device<'py>(
        &self,
        py: Python<'py>,
        device: String,
        state: String,
        password: Option<String>,
        timeout: Option<f64>,
        retries: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let state = crate::bacnet_services::reinitialized_state(&state)?;
        let request = crate::bacnet_services::Management::Reinitialize(state, password);
        let timing = self.call_timing(timeout, retries)?;
        crate::bacnet_services::manage(py, self, &device, request, timing)
    }

    /// TimeSynchronization (or UTCTimeSynchronization with `utc`) of the date-time fields
    /// (year, month, day, hour, minute, second, hundredths) to `device` or by broadcast.
    #[pyo3(signature = (fields, utc=false, device=None))]
    fn time_synchronization<'py>(
        &self,
        py: Python<'py>,
        fields: crate::bacnet_services::DateTimeFields,
        utc: bool,
        device: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let time = crate::bacnet_services::date_time(fields)?;
        let destination = self.destination(device.as_deref())?;
        let client = Arc::clone(&self.inner);
        future_into_py(py, async move {
            client
                .time_synchronization(destination, time, utc)
                .await
                .map_err(client_error)
        })
    }

    /// Stops the client's task.
    fn close(&self) {
        self.inner.shutdown();
    }
}

impl BacnetClientHandle {
    /// Broadcast, or the one device named (a B/IP address; routed devices are asked
    /// through their router by the confirmed services only).
    pub(crate) fn destination(&self, device: Option<&str>) -> PyResult<Destination> {
        match device {
            None => Ok(Destination::Broadcast),
            Some(text) => match crate::bacnet_network::target(text)? {
                DeviceAddress::Local(address) => Ok(Destination::Unicast(address)),
                _ => Err(PyValueError::new_err(
                    "Who-Is, Who-Has and time synchronization go to a device on this network \
                     (HOST:PORT), or to the broadcast address without one",
                )),
            },
        }
    }
}

/// The device, object and property a call names.
fn point(
    device: &str,
    object_id: &str,
    property_id: &str,
) -> PyResult<(DeviceAddress, ObjectIdentifier, PropertyIdentifier)> {
    Ok((
        crate::bacnet_network::target(device)?,
        object(object_id)?,
        property(property_id)?,
    ))
}

/// The Who-Is / Who-Has instance range of `low` and `high` (both or neither).
fn instance_range(low: Option<u32>, high: Option<u32>) -> PyResult<Option<InstanceRange>> {
    match (low, high) {
        (Some(low), Some(high)) => Ok(Some(InstanceRange::new(low, high).ok_or_else(|| {
            PyValueError::new_err("low and high must be device instances 0..=4194303")
        })?)),
        (None, None) => Ok(None),
        _ => Err(PyValueError::new_err("give both low and high, or neither")),
    }
}

/// A Python value as the elements written to `property` of `object`.
pub(crate) fn typed_value(
    value: &Bound<'_, PyAny>,
    value_type: Option<&str>,
    object: ObjectIdentifier,
    property: PropertyIdentifier,
) -> PyResult<Vec<Element>> {
    let (text, guessed) = value_text(value)?;
    let value_type = value_type
        .or(guessed)
        .map(|t| t.parse::<ValueType>())
        .transpose()
        .map_err(PyValueError::new_err)?;
    parse_value_text(&text, value_type, object, property).map_err(PyValueError::new_err)
}

/// Most analog values `objects="large:N"` creates.
const MAX_LARGE_OBJECTS: u32 = 100_000;

/// Network writes buffered for `next_write` before the oldest unread ones are dropped.
const WRITE_QUEUE: usize = 4096;

/// A running BACnet/IP device.
#[pyclass(module = "buildwire._native")]
pub struct BacnetServerHandle {
    inner: Arc<Mutex<Option<BacnetServer>>>,
    /// Network writes (object, property, value), fed by the write hook.
    writes: Arc<Mutex<mpsc::Receiver<NetworkWrite>>>,
    /// Writes lost because nobody read the queue.
    dropped_writes: Arc<AtomicU64>,
    #[pyo3(get)]
    local_address: String,
}

/// One network write: object, property and the property's value after it.
type NetworkWrite = (String, String, serde_json::Value);

/// Installs a write hook that queues every network write for Python.
fn queue_writes(server: &BacnetServer) -> (mpsc::Receiver<NetworkWrite>, Arc<AtomicU64>) {
    let (sender, receiver) = mpsc::channel(WRITE_QUEUE);
    let dropped = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&dropped);
    server.set_write_hook(Box::new(move |change, value| {
        let event = (
            change.object.to_string(),
            change.property.to_string(),
            described(change.object, change.property, None, value),
        );
        if sender.try_send(event).is_err() {
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

    /// Reads a property locally; the value as the client's `read` gives it.
    #[pyo3(signature = (object_id, property_id, index=None))]
    fn get(
        &self,
        py: Python<'_>,
        object_id: &str,
        property_id: &str,
        index: Option<u32>,
    ) -> PyResult<Py<PyAny>> {
        let (obj, prop) = (object(object_id)?, property(property_id)?);
        let elements =
            self.with_database(|db| db.read_property(obj, prop, index).map_err(property_error))?;
        json_py(py, &described(obj, prop, index, &elements))
    }

    /// Sets a property locally without network access rules (a new sensor reading): the
    /// value is typed by `value_type` or guessed, as for the client's `write`.
    #[pyo3(signature = (object_id, property_id, value, value_type=None))]
    fn set(
        &self,
        object_id: &str,
        property_id: &str,
        value: &Bound<'_, PyAny>,
        value_type: Option<String>,
    ) -> PyResult<()> {
        let (obj, prop) = (object(object_id)?, property(property_id)?);
        let elements = typed_value(value, value_type.as_deref(), obj, prop)?;
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

    /// The next network write as (object, property, value), or None once the device has
    /// stopped.
    fn next_write<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let writes = Arc::clone(&self.writes);
        future_into_py(py, async move {
            let next = writes.lock().await.recv().await;
            Python::attach(|py| match next {
                Some((object, property, value)) => {
                    (object, property, json_py(py, &value)?).into_py_any(py)
                }
                None => Ok(py.None()),
            })
        })
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
