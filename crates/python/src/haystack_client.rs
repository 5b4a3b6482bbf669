//! The Haystack client for Python: awaitables over `buildwire_haystack::client`. Answers
//! cross as [`HaystackGrid`] handles and requests as Python objects, both converted in Rust
//! (`haystack_values`), without JSON text.

use std::sync::Arc;
use std::time::Duration;

use buildwire_haystack::client::{
    ApiClient, ClientError, ClientOptions, HaystackApi, Transport, Watch, connect,
};
use buildwire_haystack::codec::Format;
use buildwire_haystack::value::{DateTime, Grid, Ref, Value};
use pyo3::exceptions::{PyConnectionError, PyPermissionError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::haystack_values::{FromPy, HaystackGrid};
use pyo3_async_runtimes::tokio::future_into_py;
use tokio::sync::Mutex;

fn client_error(error: ClientError) -> PyErr {
    match error {
        ClientError::LoginRefused { .. } | ClientError::Auth(_) => {
            PyPermissionError::new_err(error.to_string())
        }
        ClientError::Transport { .. }
        | ClientError::WebSocket(_)
        | ClientError::NotFound { .. } => PyConnectionError::new_err(error.to_string()),
        ClientError::Config(_) | ClientError::Request(_) | ClientError::Rollup(_) => {
            PyValueError::new_err(error.to_string())
        }
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

fn value_error(what: &str, e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("{what}: {e}"))
}

fn parse_ref(text: &str) -> Ref {
    Ref::new(text.strip_prefix('@').unwrap_or(text))
}

/// A logged-in Haystack client (see :class:`buildwire.haystack.Client`).
#[pyclass(module = "buildwire._native")]
pub struct HaystackClientHandle {
    inner: Arc<ApiClient>,
    #[pyo3(get)]
    url: String,
}

/// Connects to the API at `url`, logging in with SCRAM when a user name is given.
#[pyfunction]
#[pyo3(signature = (url, username=None, password=None, wire="zinc".to_owned(), timeout=30.0, ca_pem=None, websocket=false))]
#[allow(clippy::too_many_arguments)]
pub fn haystack_connect(
    py: Python<'_>,
    url: String,
    username: Option<String>,
    password: Option<String>,
    wire: String,
    timeout: f64,
    ca_pem: Option<Vec<u8>>,
    websocket: bool,
) -> PyResult<Bound<'_, PyAny>> {
    let format: Format = wire.parse().map_err(PyValueError::new_err)?;
    if !matches!(format, Format::Zinc | Format::Json) {
        return Err(PyValueError::new_err("wire must be zinc or json"));
    }
    let timeout = Duration::try_from_secs_f64(timeout)
        .map_err(|_| PyValueError::new_err("timeout must be a positive number of seconds"))?;
    let options = ClientOptions {
        username,
        password,
        format,
        timeout,
        root_certificates_pem: ca_pem.into_iter().collect(),
        ..ClientOptions::default()
    };
    future_into_py(py, async move {
        let transport = if websocket {
            Transport::WebSocket
        } else {
            Transport::Http
        };
        let client = connect(&url, options, transport)
            .await
            .map_err(client_error)?;
        let api = client.url().to_owned();
        Ok(HaystackClientHandle {
            inner: Arc::new(client),
            url: api,
        })
    })
}

/// Runs `f` on the transport and gives the answer grid as a handle.
fn answer<'py, F, Fut>(py: Python<'py>, inner: &Arc<ApiClient>, f: F) -> PyResult<Bound<'py, PyAny>>
where
    F: FnOnce(Arc<ApiClient>) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<Grid, ClientError>> + Send + 'static,
{
    let inner = Arc::clone(inner);
    future_into_py(py, async move {
        let grid = f(inner).await.map_err(client_error)?;
        Ok(HaystackGrid::new(grid))
    })
}

#[pymethods]
impl HaystackClientHandle {
    /// Sends a request grid (a `buildwire.haystack.Grid`) to `op`; the answer grid.
    fn call<'py>(
        &self,
        py: Python<'py>,
        op: String,
        request: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request = FromPy::new(py)?.grid(request)?;
        answer(py, &self.inner, move |t| async move {
            t.call(&op, &request).await
        })
    }

    /// `read` by filter.
    #[pyo3(signature = (filter, limit=None))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        filter: String,
        limit: Option<usize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request = buildwire_haystack::client::request::read_filter(&filter, limit)
            .map_err(|e| value_error("read", e))?;
        answer(py, &self.inner, move |t| async move {
            t.call("read", &request).await
        })
    }

    /// `read` by ids (`@id` or `id`).
    fn read_ids<'py>(&self, py: Python<'py>, ids: Vec<String>) -> PyResult<Bound<'py, PyAny>> {
        let ids: Vec<Ref> = ids.iter().map(|id| parse_ref(id)).collect();
        let request = buildwire_haystack::client::request::read_ids(&ids)
            .map_err(|e| value_error("read", e))?;
        answer(py, &self.inner, move |t| async move {
            t.call("read", &request).await
        })
    }

    /// `nav` from the roots or from `nav_id`.
    #[pyo3(signature = (nav_id=None))]
    fn nav<'py>(&self, py: Python<'py>, nav_id: Option<String>) -> PyResult<Bound<'py, PyAny>> {
        let nav_id = nav_id.map(|id| parse_ref(&id));
        let request = buildwire_haystack::client::request::nav(nav_id.as_ref())
            .map_err(|e| value_error("nav", e))?;
        answer(py, &self.inner, move |t| async move {
            t.call("nav", &request).await
        })
    }

    /// `defs` or `libs` (op) with an optional filter and limit.
    #[pyo3(signature = (op, filter=None, limit=None))]
    fn filtered<'py>(
        &self,
        py: Python<'py>,
        op: String,
        filter: Option<String>,
        limit: Option<usize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request = buildwire_haystack::client::request::filtered(filter.as_deref(), limit)
            .map_err(|e| value_error(&op, e))?;
        answer(py, &self.inner, move |t| async move {
            t.call(&op, &request).await
        })
    }

    /// `pointWrite` of a value at `level`, or the priority array without a level.
    #[pyo3(signature = (id, level=None, value=None, who=None))]
    fn point_write<'py>(
        &self,
        py: Python<'py>,
        id: String,
        level: Option<u8>,
        value: Option<&Bound<'py, PyAny>>,
        who: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let id = parse_ref(&id);
        let request = match level {
            None => buildwire_haystack::client::request::point_write_array(&id),
            Some(level) => {
                if !(1..=17).contains(&level) {
                    return Err(PyValueError::new_err("level must be 1..17"));
                }
                let value = match value {
                    Some(value) => Some(FromPy::new(py)?.value(value)?),
                    None => None,
                };
                buildwire_haystack::client::request::point_write(
                    &id,
                    level,
                    value.unwrap_or(Value::Null),
                    who.as_deref(),
                    None,
                )
            }
        }
        .map_err(|e| value_error("pointWrite", e))?;
        answer(py, &self.inner, move |t| async move {
            t.call("pointWrite", &request).await
        })
    }

    /// `hisRead` of one point over a range in the spec's text forms.
    fn his_read<'py>(
        &self,
        py: Python<'py>,
        id: String,
        range: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request = buildwire_haystack::client::request::his_read(&parse_ref(&id), &range)
            .map_err(|e| value_error("hisRead", e))?;
        answer(py, &self.inner, move |t| async move {
            t.call("hisRead", &request).await
        })
    }

    /// `hisRead` folded into buckets of `interval` (a Number with a duration unit) with
    /// `fold`; folded here when the server answers raw samples (`hisRollupByClient`).
    fn his_rollup<'py>(
        &self,
        py: Python<'py>,
        id: String,
        range: String,
        interval: &Bound<'py, PyAny>,
        fold: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let interval = FromPy::new(py)?.value(interval)?;
        let id = parse_ref(&id);
        answer(py, &self.inner, move |t| async move {
            t.his_rollup(&id, &range, interval, &fold).await
        })
    }

    /// `hisWrite` of samples given as `(datetime, value)` pairs.
    fn his_write<'py>(
        &self,
        py: Python<'py>,
        id: String,
        samples: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let from = FromPy::new(py)?;
        let mut items: Vec<(DateTime, Value)> = Vec::new();
        for pair in samples.try_iter()? {
            let (ts, val): (Bound<'py, PyAny>, Bound<'py, PyAny>) = pair?.extract()?;
            items.push((from.datetime(&ts)?, from.value(&val)?));
        }
        let request = buildwire_haystack::client::request::his_write(&parse_ref(&id), &items)
            .map_err(|e| value_error("hisWrite", e))?;
        answer(py, &self.inner, move |t| async move {
            t.call("hisWrite", &request).await
        })
    }

    /// `invokeAction` with arguments as a dict.
    fn invoke_action<'py>(
        &self,
        py: Python<'py>,
        id: String,
        action: String,
        args: &Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let args = FromPy::new(py)?.dict(args)?;
        let request =
            buildwire_haystack::client::request::invoke_action(&parse_ref(&id), &action, &args)
                .map_err(|e| value_error("invokeAction", e))?;
        answer(py, &self.inner, move |t| async move {
            t.call("invokeAction", &request).await
        })
    }

    /// Opens a watch on `ids` polled over HTTP every `interval` seconds.
    #[pyo3(signature = (ids, dis, lease=None, interval=1.0))]
    fn watch<'py>(
        &self,
        py: Python<'py>,
        ids: Vec<String>,
        dis: String,
        lease: Option<f64>,
        interval: f64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ids: Vec<Ref> = ids.iter().map(|id| parse_ref(id)).collect();
        let interval = Duration::try_from_secs_f64(interval)
            .map_err(|_| PyValueError::new_err("interval must be a positive number of seconds"))?;
        let inner = Arc::clone(&self.inner);
        future_into_py(py, async move {
            let watch = inner
                .http()
                .watch(&dis, &ids, lease, interval)
                .await
                .map_err(client_error)?;
            Ok(HaystackWatchHandle {
                id: watch.id().to_owned(),
                inner: Arc::new(Mutex::new(watch)),
            })
        })
    }

    /// The bearer token of the login, if the server asked for one.
    #[getter]
    fn auth_token(&self) -> Option<String> {
        self.inner.http().auth_token().map(str::to_owned)
    }
}

/// An open watch (see :meth:`buildwire.haystack.Client.watch`).
#[pyclass(module = "buildwire._native")]
pub struct HaystackWatchHandle {
    inner: Arc<Mutex<Watch>>,
    #[pyo3(get)]
    id: String,
}

#[pymethods]
impl HaystackWatchHandle {
    /// The next set of changes, or None once closed.
    fn next<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let inner = Arc::clone(&self.inner);
        future_into_py(py, async move {
            match inner.lock().await.next().await {
                None => Ok(None),
                Some(Ok(grid)) => Ok(Some(HaystackGrid::new(grid))),
                Some(Err(e)) => Err(client_error(e)),
            }
        })
    }

    /// Closes the watch on the server.
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let inner = Arc::clone(&self.inner);
        future_into_py(py, async move {
            inner.lock().await.close().await.map_err(client_error)
        })
    }
}
