//! The log events of the Rust drivers (`tracing`) handed to Python's `logging`.
//!
//! The extension installs one global subscriber when it is imported: a layer that sends
//! each event (DEBUG and above) to a forwarding thread, which takes the GIL and calls
//! `logging.getLogger(name).log(level, text, extra={"buildwire": fields})`. Logger names
//! follow the Rust module of the event: `buildwire_haystack::server::http` logs to
//! `buildwire.haystack.server.http`, so `logging.getLogger("buildwire.haystack")` and its
//! handlers and levels apply as usual. The emitting thread never waits for the GIL: it may
//! hold a lock that a Python thread, holding the GIL, waits for. At most
//! [`MAX_QUEUED`] events wait for the forwarder; past that new ones are dropped.
//!
//! When the `buildwire` command line runs inside Python (`python -m buildwire haystack serve
//! --log-format json`), its own stderr layer replaces this one, so the command behaves as
//! the binary does.

use std::fmt::Write as _;
use std::sync::OnceLock;
use std::sync::mpsc::{SyncSender, sync_channel};

use buildwire_cli::LogLayer;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::{Layer, Registry, reload};

/// Most events waiting for the forwarding thread.
pub const MAX_QUEUED: usize = 10_000;

/// One field's value, as Python receives it.
enum FieldValue {
    Text(String),
    Int(i64),
    Unsigned(u64),
    Float(f64),
    Bool(bool),
}

/// One event on its way to Python.
struct Record {
    logger: String,
    level: u8,
    text: String,
    fields: Vec<(&'static str, FieldValue)>,
}

/// The `logging` logger name of a tracing target.
fn logger_name(target: &str) -> String {
    let dotted = target.replace("::", ".");
    match dotted.strip_prefix("buildwire_") {
        Some(rest) => format!("buildwire.{rest}"),
        None => dotted,
    }
}

/// Python's number for a tracing level.
fn python_level(level: Level) -> u8 {
    match level {
        Level::ERROR => 40,
        Level::WARN => 30,
        Level::INFO => 20,
        Level::DEBUG => 10,
        Level::TRACE => 5,
    }
}

/// Collects an event's message and fields.
#[derive(Default)]
struct Fields {
    message: String,
    fields: Vec<(&'static str, FieldValue)>,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            self.fields
                .push((field.name(), FieldValue::Text(format!("{value:?}"))));
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            self.fields
                .push((field.name(), FieldValue::Text(value.to_owned())));
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.fields.push((field.name(), FieldValue::Int(value)));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.fields
            .push((field.name(), FieldValue::Unsigned(value)));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.fields.push((field.name(), FieldValue::Float(value)));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.fields.push((field.name(), FieldValue::Bool(value)));
    }
}

impl Fields {
    /// `message key=value ...`, as the text format of the command line writes it.
    fn text(&self) -> String {
        let mut text = self.message.clone();
        for (name, value) in &self.fields {
            let _ = match value {
                FieldValue::Text(v) => write!(text, " {name}={v}"),
                FieldValue::Int(v) => write!(text, " {name}={v}"),
                FieldValue::Unsigned(v) => write!(text, " {name}={v}"),
                FieldValue::Float(v) => write!(text, " {name}={v}"),
                FieldValue::Bool(v) => write!(text, " {name}={v}"),
            };
        }
        text
    }
}

/// The layer that queues events for Python.
struct PythonLogs {
    queue: SyncSender<Record>,
}

impl<S: Subscriber> Layer<S> for PythonLogs {
    fn enabled(&self, metadata: &tracing::Metadata<'_>, _ctx: Context<'_, S>) -> bool {
        *metadata.level() <= Level::DEBUG
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let metadata = event.metadata();
        let mut fields = Fields::default();
        event.record(&mut fields);
        let record = Record {
            logger: logger_name(metadata.target()),
            level: python_level(*metadata.level()),
            text: fields.text(),
            fields: fields.fields,
        };
        // A full queue drops the event rather than block a driver's thread.
        let _ = self.queue.try_send(record);
    }
}

/// Calls Python's `logging` for one record (errors inside logging are Python's to report).
fn deliver(py: Python<'_>, record: Record) -> PyResult<()> {
    let logger = py
        .import("logging")?
        .call_method1("getLogger", (record.logger.as_str(),))?;
    if !logger
        .call_method1("isEnabledFor", (record.level,))?
        .is_truthy()?
    {
        return Ok(());
    }
    let fields = PyDict::new(py);
    for (name, value) in record.fields {
        match value {
            FieldValue::Text(v) => fields.set_item(name, v)?,
            FieldValue::Int(v) => fields.set_item(name, v)?,
            FieldValue::Unsigned(v) => fields.set_item(name, v)?,
            FieldValue::Float(v) => fields.set_item(name, v)?,
            FieldValue::Bool(v) => fields.set_item(name, v)?,
        }
    }
    let extra = PyDict::new(py);
    extra.set_item("buildwire", fields)?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("extra", extra)?;
    logger.call_method("log", (record.level, "%s", record.text), Some(&kwargs))?;
    Ok(())
}

/// The handle that swaps the Python layer for the command line's.
static RELOAD: OnceLock<reload::Handle<LogLayer, Registry>> = OnceLock::new();

/// Installs the command line's stderr layer in place of the Python one.
fn install_cli_layer(layer: LogLayer) {
    if let Some(handle) = RELOAD.get() {
        let _ = handle.reload(layer);
    }
}

/// Stops forwarding to Python, for the command line run inside Python (`buildwire` as a
/// console script, `python -m buildwire`): its commands write their own logs on stderr when
/// asked (`start_logs` swaps that layer in), and a thread calling into Python while the
/// interpreter finalizes at the command's exit can abort the process
/// ("PyGILState_Release: thread state ... must be current"). Dropping the Python layer
/// closes the queue, so the forwarding thread ends.
pub fn stop_forwarding() {
    install_cli_layer(Box::new(tracing_subscriber::filter::LevelFilter::OFF));
}

/// Routes the drivers' events to Python's `logging`, once per process (at import).
pub fn route_to_python() {
    if RELOAD.get().is_some() {
        return;
    }
    let (queue, records) = sync_channel::<Record>(MAX_QUEUED);
    let python: LogLayer = Box::new(PythonLogs { queue });
    let (layer, handle) = reload::Layer::new(python);
    if tracing::subscriber::set_global_default(Registry::default().with(layer)).is_err() {
        return; // another subscriber is already global: leave it
    }
    let _ = RELOAD.set(handle);
    buildwire_cli::set_log_installer(install_cli_layer);
    // Without a thread (none could start) events are dropped; the extension still works.
    let _ = std::thread::Builder::new()
        .name("buildwire-logs".into())
        .spawn(move || {
            for record in records {
                // While the interpreter shuts down it cannot be attached to: the thread
                // stops forwarding (the events of the last moments are dropped).
                let delivered = Python::try_attach(|py| {
                    if let Err(error) = deliver(py, record) {
                        error.print(py);
                    }
                });
                if delivered.is_none() {
                    break;
                }
            }
        });
}

#[cfg(test)]
mod tests {
    use super::logger_name;

    #[test]
    fn logger_names_follow_the_rust_modules() {
        assert_eq!(
            logger_name("buildwire_haystack::server::http"),
            "buildwire.haystack.server.http"
        );
        assert_eq!(
            logger_name("buildwire_opcua::driver::server"),
            "buildwire.opcua.driver.server"
        );
        assert_eq!(logger_name("other::module"), "other.module");
    }
}
