//! What every long-running command (`bacnet serve`, `router`, `bbmd`, `sc-hub`, `haystack
//! serve`, `opcua serve`) shares: `--config FILE`, `--log-level` and `--log-format`, one
//! struct flattened into each command's arguments, and one call at start-up
//! ([`ServiceArgs::start_logs`]). The configuration file itself is read before the command
//! line is parsed for good (see [`super::config_file`]).

use std::path::PathBuf;
use std::sync::OnceLock;

use clap::{Args, ValueEnum};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer, Registry};

use super::result::CommandResult;

/// The options of a long-running command about its configuration file and its logs.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Configuration and logs")]
pub struct ServiceArgs {
    /// Read options from this TOML file: one key per long option of this command, without
    /// the dashes in front (`bind = "127.0.0.1:8080"`, `user-password-file = "users.txt"`,
    /// `no-anonymous = true`, `data = ["a.zinc", "b.zinc"]`). The command line wins over
    /// the file, the file over the defaults.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// What to log on stderr: error, warn, info (the default), debug or trace, or filter
    /// directives as RUST_LOG takes them (`info,buildwire_haystack=debug`). Without this
    /// option RUST_LOG is read.
    #[arg(long, value_name = "LEVEL")]
    pub log_level: Option<String>,
    /// How log lines are written: text (for people) or json (one JSON object per line, with
    /// `timestamp`, `level`, `target`, `message` and the event's fields).
    #[arg(long, value_enum, default_value_t = LogFormat::Text, value_name = "FORMAT")]
    pub log_format: LogFormat,
}

/// The log options of the client commands (`bacnet read`, `whois`, `haystack client`,
/// `opcua read` ...): the same `--log-level` and `--log-format` as a long-running command's,
/// but quiet by default, so that a client command's stdout and stderr stay as they are
/// unless logs are asked for (RUST_LOG alone is not read).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Logs")]
pub struct ClientLogArgs {
    /// Write the client's logs on stderr at this level: error, warn, info, debug (each
    /// request, retry and timeout) or trace, or filter directives as RUST_LOG takes them
    /// (`info,buildwire_bacnet=debug`). Without this option nothing is logged.
    #[arg(long, value_name = "LEVEL")]
    pub log_level: Option<String>,
    /// How log lines are written: text or json (one JSON object per line).
    #[arg(long, value_enum, default_value_t = LogFormat::Text, value_name = "FORMAT")]
    pub log_format: LogFormat,
}

impl ClientLogArgs {
    /// Starts the logs on stderr when `--log-level` was given; does nothing otherwise.
    pub fn start_logs(&self) -> CommandResult {
        if let Some(level) = self.log_level.as_deref() {
            start_logs(Some(level), self.log_format)?;
        }
        Ok(())
    }
}

/// The format of log lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// `2026-11-27T22:41:00.123Z  INFO buildwire_haystack::server: request method=POST ...`
    Text,
    /// One JSON object per line.
    Json,
}

impl ServiceArgs {
    /// Starts the logs of this process on stderr (stdout stays for the command's output).
    /// A wrong `--log-level` or RUST_LOG is a user error.
    pub fn start_logs(&self) -> CommandResult {
        start_logs(self.log_level.as_deref(), self.log_format)?;
        Ok(())
    }
}

/// A log layer over the registry, as [`start_logs`] builds it.
pub type LogLayer = Box<dyn Layer<Registry> + Send + Sync>;

/// Who installs the log layer instead of a global subscriber of our own: the Python
/// extension, whose global subscriber already hands events to Python's `logging` and swaps
/// in the command line's layer when `buildwire` runs inside Python.
static LOG_INSTALLER: OnceLock<fn(LogLayer)> = OnceLock::new();

/// Registers `install` to receive the log layer of a long-running command (see
/// [`LOG_INSTALLER`]). Only the first registration counts.
pub fn set_log_installer(install: fn(LogLayer)) {
    let _ = LOG_INSTALLER.set(install);
}

/// The filter: `level` (the `--log-level`), else RUST_LOG, else `info`.
fn log_filter(level: Option<&str>) -> Result<EnvFilter, String> {
    match level {
        Some(level) => EnvFilter::try_new(level).map_err(|e| {
            format!("--log-level {level:?}: {e} (give error, warn, info, debug or trace)")
        }),
        None => match std::env::var("RUST_LOG") {
            Ok(directives) if !directives.trim().is_empty() => {
                EnvFilter::try_new(&directives).map_err(|e| format!("RUST_LOG={directives:?}: {e}"))
            }
            _ => Ok(EnvFilter::new("info")),
        },
    }
}

/// Builds the stderr log layer for `level` and `format` and installs it (once per process;
/// a second call keeps the first subscriber).
pub fn start_logs(level: Option<&str>, format: LogFormat) -> Result<(), String> {
    let filter = log_filter(level)?;
    let fmt = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    // The filter is a layer before the output, not a per-layer filter (`with_filter`): the
    // Python extension swaps this layer in with `reload`, which per-layer filters do not
    // survive.
    let layer: LogLayer = match format {
        LogFormat::Text => {
            use std::io::IsTerminal as _;
            filter
                .and_then(fmt.with_ansi(std::io::stderr().is_terminal()))
                .boxed()
        }
        LogFormat::Json => filter
            .and_then(
                fmt.json()
                    .flatten_event(true)
                    .with_current_span(false)
                    .with_span_list(false),
            )
            .boxed(),
    };
    match LOG_INSTALLER.get() {
        Some(install) => install(layer),
        None => {
            // Already set (a test calling `run` twice in one process): keep the first.
            let _ = tracing_subscriber::registry().with(layer).try_init();
        }
    }
    Ok(())
}
