//! `buildwire.gateway`: the BACnet to Haystack gateway (`buildwire_gateway::Gateway`).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use buildwire_gateway::rules::Rules;
use buildwire_gateway::{Config, Gateway, GatewayError};
use buildwire_haystack::server::HaystackServerConfig;
use pyo3::exceptions::{PyConnectionError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3_async_runtimes::tokio::future_into_py;
use tokio::sync::Mutex;

fn gateway_error(error: GatewayError) -> PyErr {
    match error {
        GatewayError::Config { .. } | GatewayError::Io { .. } | GatewayError::Model(_) => {
            PyValueError::new_err(error.to_string())
        }
        GatewayError::Store(_) => PyConnectionError::new_err(error.to_string()),
        GatewayError::Bacnet(_) | GatewayError::Server(_) => {
            PyRuntimeError::new_err(error.to_string())
        }
    }
}

/// A running gateway.
#[pyclass(module = "buildwire._native")]
pub struct GatewayHandle {
    inner: Arc<Mutex<Option<Gateway>>>,
    #[pyo3(get)]
    url: String,
    #[pyo3(get)]
    ws_url: String,
    report: String,
    stats: Arc<buildwire_gateway::collect::CollectStats>,
}

/// Starts a gateway from its configuration as JSON (the keys of the TOML file) and
/// optional rules text (TOML).
#[pyfunction]
#[pyo3(signature = (config_json, rules_toml=None, users=Vec::new()))]
pub fn gateway_start(
    py: Python<'_>,
    config_json: String,
    rules_toml: Option<String>,
    users: Vec<String>,
) -> PyResult<Bound<'_, PyAny>> {
    let config: Config = serde_json::from_str(&config_json)
        .map_err(|e| PyValueError::new_err(format!("gateway configuration: {e}")))?;
    config
        .check()
        .map_err(|e| PyValueError::new_err(format!("gateway configuration: {e}")))?;
    let rules = match rules_toml {
        Some(text) => {
            Rules::parse(&text).map_err(|e| PyValueError::new_err(format!("gateway rules: {e}")))?
        }
        None => Rules::default_set(),
    };
    let mut server = HaystackServerConfig::new();
    for spec in &users {
        server = server.user_spec(spec);
    }
    future_into_py(py, async move {
        let gateway = Gateway::start(config, rules, server)
            .await
            .map_err(gateway_error)?;
        let report = gateway.report();
        let report = serde_json::json!({
            "devices": report.devices,
            "points": report.points,
            "other_objects": report.other_objects,
            "problems": report.problems,
            "invalid": report.validation.invalid,
            "untagged": report.validation.untagged,
        })
        .to_string();
        Ok(GatewayHandle {
            url: gateway.haystack_url(),
            ws_url: gateway.haystack_ws_url(),
            report,
            stats: Arc::clone(gateway.stats()),
            inner: Arc::new(Mutex::new(Some(gateway))),
        })
    })
}

#[pymethods]
impl GatewayHandle {
    /// The discovery report as JSON.
    #[getter]
    fn report(&self) -> String {
        self.report.clone()
    }

    /// The collector's counters as JSON.
    #[getter]
    fn stats(&self) -> String {
        serde_json::json!({
            "cov_points": self.stats.cov_points.load(Ordering::Relaxed),
            "polled_points": self.stats.polled_points.load(Ordering::Relaxed),
            "changes": self.stats.changes.load(Ordering::Relaxed),
            "samples": self.stats.samples.load(Ordering::Relaxed),
            "store_errors": self.stats.store_errors.load(Ordering::Relaxed),
        })
        .to_string()
    }

    /// The model as stored at start, encoded as `trio`, `zinc` or `json`.
    fn model(&self, format: &str) -> PyResult<String> {
        let format: buildwire_haystack::codec::Format =
            format.parse().map_err(PyValueError::new_err)?;
        let guard = self.inner.blocking_lock();
        let gateway = guard
            .as_ref()
            .ok_or_else(|| PyRuntimeError::new_err("the gateway is stopped"))?;
        gateway.model().encode(format).map_err(gateway_error)
    }

    /// Stops the gateway (its subscriptions are cancelled on the devices).
    fn stop<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let inner = Arc::clone(&self.inner);
        future_into_py(py, async move {
            if let Some(gateway) = inner.lock().await.take() {
                gateway.stop().await;
            }
            Ok(())
        })
    }
}
