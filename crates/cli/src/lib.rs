//! The `buildwire` command line: clap over the protocol crates and the bench crate.
//!
//! [`run`] is the whole program; `src/main.rs` calls it with the process arguments, and the
//! Python package calls the same function for its `buildwire` entry point, so both commands
//! behave identically.

// Unsafe code only in `commands::common::signals` (a signal disposition), justified there.
#![deny(unsafe_code)]

mod commands;
mod hex_input;
mod progress;

use clap::{CommandFactory, FromArgMatches};

pub use commands::Cli;
pub use commands::common::service::{LogLayer, set_log_installer};

use commands::common::config_file::{self, Applied};

/// Runs the command line with `args` (the first element is the program name) and returns the
/// process exit status: 0 on success, 1 on a failed command, 2 on a usage error, 130 for a
/// command stopped by Ctrl-C.
pub fn run(args: Vec<String>) -> i32 {
    let cli = match parse(args) {
        Ok(cli) => cli,
        Err(unparsed) => return unparsed.report(),
    };
    match commands::execute(cli) {
        Ok(()) => 0,
        // Stopped by Ctrl-C: the shell's status for an interrupted command.
        Err(e) if e.is::<commands::common::signals::Interrupted>() => 130,
        Err(e) => {
            eprintln!("error: {e:#}");
            1
        }
    }
}

/// Why a command line was not run.
enum Unparsed {
    /// clap's refusal, or its --help or --version.
    Clap(clap::Error),
    /// A problem with the `--config` file.
    Config(String),
}

impl Unparsed {
    /// Prints the message and gives the exit status.
    fn report(self) -> i32 {
        match self {
            Unparsed::Clap(e) => {
                // --help and --version are "errors" to clap but exit 0.
                let code = if e.use_stderr() { 2 } else { 0 };
                let _ = e.print();
                code
            }
            Unparsed::Config(message) => {
                eprintln!("error: {message}");
                2
            }
        }
    }
}

/// Parses the command line, with the options of its `--config` file if it names one.
fn parse(args: Vec<String>) -> Result<Cli, Unparsed> {
    let command = Cli::command();
    let matches = match command.clone().try_get_matches_from(&args) {
        Ok(matches) => matches,
        // A required option (`router --port`) may come from the configuration file: find
        // the file with a lenient parse; the full parse below still checks everything.
        Err(e)
            if e.kind() == clap::error::ErrorKind::MissingRequiredArgument
                && args
                    .iter()
                    .any(|a| a == "--config" || a.starts_with("--config=")) =>
        {
            command
                .clone()
                .ignore_errors(true)
                .try_get_matches_from(&args)
                .map_err(|_| Unparsed::Clap(e))?
        }
        Err(e) => return Err(Unparsed::Clap(e)),
    };
    let matches = match config_file::apply(&command, &matches, &args) {
        Ok(Applied::Unchanged) => matches,
        Ok(Applied::Args(args, keys)) => {
            command
                .try_get_matches_from(&args)
                .map_err(|e| match keys.explain(&e) {
                    Some(error) => Unparsed::Config(error.0),
                    None => Unparsed::Clap(e),
                })?
        }
        Err(error) => return Err(Unparsed::Config(error.0)),
    };
    Cli::from_arg_matches(&matches).map_err(Unparsed::Clap)
}

/// Checks a command line (program name first), its `--config` file included, without
/// running it: `Err` holds the message `run` would print. The tests of the documented
/// configuration files use it.
pub fn check_args(args: Vec<String>) -> Result<(), String> {
    match parse(args) {
        Ok(_) => Ok(()),
        Err(Unparsed::Clap(e)) => Err(e.to_string()),
        Err(Unparsed::Config(message)) => Err(format!("error: {message}")),
    }
}
