//! Command definitions (clap) and their dispatch.

mod bench;

use clap::{Parser, Subcommand};

/// Errors of a command, printed as `error: ...` with a hint of what to do next.
pub type CommandResult = Result<(), Box<dyn std::error::Error>>;

/// buildwire: BACnet, Project Haystack and OPC UA in one fast, safe stack.
#[derive(Debug, Parser)]
#[command(
    name = "buildwire",
    version,
    about,
    long_about = "buildwire: BACnet, Project Haystack and OPC UA in one fast, safe stack.\n\n\
        Every command prints a human summary; add --json where offered for output a script can read.",
    after_help = "Examples:\n  \
        buildwire bench limit udp --in-flight 7 --seconds 3\n  \
        buildwire bench limit tcp --response-size 1048576 --json\n\n\
        Run `buildwire <command> --help` for the options of each command."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Measure: raw-socket limits now; protocol benchmarks as they land.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
}

/// Runs the parsed command.
pub fn execute(cli: Cli) -> CommandResult {
    match cli.command {
        Command::Bench(cmd) => bench::execute(cmd),
    }
}
