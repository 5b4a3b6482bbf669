//! COV subscriptions and batched reads of the BACnet/IP client for Python: thin wrappers
//! over `BacnetClient::subscribe_cov` (a stream kept alive by the driver: renewed before
//! its lifetime ends, subscribed again after the device restarts) and
//! `BacnetClient::read_many`. Notifications and results cross as Python objects.

use std::sync::Arc;

use buildwire_bacnet::RequestTiming;
use buildwire_bacnet::app::{ClientError, CovOptions};
use buildwire_bacnet::driver::{BacnetClient, CovSubscription};
use buildwire_bacnet::encoding::ObjectPropertyReference;
use buildwire_bacnet::inspect::cov_notification_json_named;
use buildwire_bacnet::services::PropertyReference;
use pyo3::IntoPyObjectExt;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;
use pyo3_async_runtimes::tokio::future_into_py;
use tokio::sync::{Mutex, watch};

use crate::bacnet::{client_error, object, property, read_row, timed};
use crate::py_json::json_py;

/// Most references one `read_many` call takes (each becomes a read of the device).
const MAX_READ_MANY: usize = 100_000;

/// What `subscribe_cov` asks of the device.
pub(crate) struct CovRequest {
    pub object_id: String,
    pub property_id: Option<String>,
    pub index: Option<u32>,
    pub confirmed: bool,
    pub lifetime: u32,
    pub increment: Option<f32>,
}

impl CovRequest {
    fn options(&self) -> PyResult<CovOptions> {
        let property = self
            .property_id
            .as_deref()
            .map(|p| {
                Ok::<_, PyErr>(PropertyReference {
                    property: property(p)?,
                    array_index: self.index,
                })
            })
            .transpose()?;
        if property.is_none() && (self.index.is_some() || self.increment.is_some()) {
            return Err(PyValueError::new_err(
                "index and increment need property_id (SubscribeCOVProperty)",
            ));
        }
        Ok(CovOptions {
            object: object(&self.object_id)?,
            property,
            cov_increment: self.increment,
            confirmed: self.confirmed,
            lifetime: self.lifetime,
        })
    }
}

/// Subscribes and resolves to a [`BacnetCovHandle`] once the device accepted.
pub(crate) fn subscribe<'py>(
    py: Python<'py>,
    client: Arc<BacnetClient>,
    device: &str,
    request: &CovRequest,
) -> PyResult<Bound<'py, PyAny>> {
    let to = crate::bacnet_network::target(device)?;
    let options = request.options()?;
    future_into_py(py, async move {
        // A multi-state object's states are named by its state-text, read once here.
        let object = options.object;
        let state_text = client.state_text(to, object).await;
        let subscription = client
            .subscribe_cov(to, options)
            .await
            .map_err(client_error)?;
        let (stop, stopped) = watch::channel(false);
        Ok(BacnetCovHandle {
            state_text: Arc::new(state_text),
            process_identifier: subscription.process_identifier(),
            subscription: Arc::new(Mutex::new(Some(subscription))),
            stop,
            stopped,
        })
    })
}

/// A live COV subscription (see `buildwire.bacnet.CovSubscription`).
#[pyclass(module = "buildwire._native")]
pub struct BacnetCovHandle {
    subscription: Arc<Mutex<Option<CovSubscription>>>,
    /// The monitored object's state-text, when it is a multi-state object.
    state_text: Arc<Option<Vec<String>>>,
    /// Set by `cancel`, so a pending `next` ends at once.
    stop: watch::Sender<bool>,
    stopped: watch::Receiver<bool>,
    #[pyo3(get)]
    process_identifier: u32,
}

#[pymethods]
impl BacnetCovHandle {
    /// The next notification as a dict, or None once cancelled or the client stopped.
    fn next<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let subscription = Arc::clone(&self.subscription);
        let state_text = Arc::clone(&self.state_text);
        let mut stopped = self.stopped.clone();
        future_into_py(py, async move {
            let mut guard = tokio::select! {
                guard = subscription.lock() => guard,
                _ = stopped.wait_for(|s| *s) => return Ok(None),
            };
            let Some(live) = guard.as_mut() else {
                return Ok(None);
            };
            let next = tokio::select! {
                next = live.next() => next,
                _ = stopped.wait_for(|s| *s) => None,
            };
            Python::attach(|py| {
                next.map(|n| json_py(py, &cov_notification_json_named(&n, state_text.as_deref())))
                    .transpose()
            })
        })
    }

    /// Cancels the subscription on the device (SubscribeCOV without a lifetime).
    fn cancel<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let _ = self.stop.send(true);
        let subscription = Arc::clone(&self.subscription);
        future_into_py(py, async move {
            let live = subscription.lock().await.take();
            if let Some(live) = live {
                live.cancel().await;
            }
            Ok(())
        })
    }
}

/// `read_many` of `(object, property, index)` triples: a list, in order, of rows as
/// `read_multiple` gives them: `object`, `property`, `index` and either `value` or
/// `error` (text, `class: code` for a BACnet error).
pub(crate) fn read_many<'py>(
    py: Python<'py>,
    client: Arc<BacnetClient>,
    device: &str,
    references: &[(String, String, Option<u32>)],
    timing: Option<RequestTiming>,
) -> PyResult<Bound<'py, PyAny>> {
    if references.len() > MAX_READ_MANY {
        return Err(PyValueError::new_err(format!(
            "read_many takes at most {MAX_READ_MANY} references; split the list"
        )));
    }
    let to = crate::bacnet_network::target(device)?;
    let references = references
        .iter()
        .map(|(o, p, index)| {
            Ok(ObjectPropertyReference {
                object: object(o)?,
                property: property(p)?,
                array_index: *index,
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    future_into_py(py, async move {
        let results = timed(timing, client.read_many(to, &references)).await;
        Python::attach(|py| {
            let rows = PyList::empty(py);
            for (reference, result) in references.iter().zip(&results) {
                let outcome = match result {
                    Ok(value) => Ok(value.as_slice()),
                    Err(ClientError::Error { error, .. }) => {
                        Err(format!("{}: {}", error.class, error.code))
                    }
                    Err(other) => Err(other.to_string()),
                };
                let (object, property, index) =
                    (reference.object, reference.property, reference.array_index);
                rows.append(read_row(py, object, property, index, outcome)?)?;
            }
            rows.into_py_any(py)
        })
    })
}
