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

use clap::Parser;

pub use commands::Cli;

/// Runs the command line with `args` (the first element is the program name) and returns the
/// process exit status: 0 on success, 1 on a failed command, 2 on a usage error, 130 for a
/// command stopped by Ctrl-C.
pub fn run(args: Vec<String>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version are "errors" to clap but exit 0.
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
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
