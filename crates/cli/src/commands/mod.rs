//! Command definitions (clap) and their dispatch.

mod bacnet;
mod bench;
pub(crate) mod common;
mod haystack;
mod opcua;

use clap::{Parser, Subcommand};

pub use common::result::CommandResult;

/// buildwire: BACnet, Project Haystack and OPC UA in one fast, safe stack.
#[derive(Debug, Parser)]
#[command(
    name = "buildwire",
    version,
    about,
    long_about = "buildwire: BACnet, Project Haystack and OPC UA in one fast, safe stack.\n\n\
        Every command prints a human summary; add --json where offered for output a script can read.",
    after_help = "Examples:\n  \
        buildwire bacnet decode 810b000801001008\n  \
        buildwire haystack convert alpha.zinc alpha.json\n  \
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
    /// BACnet/IP: serve a simulated device, discover, read and write, decode datagrams.
    #[command(subcommand)]
    Bacnet(bacnet::BacnetCommand),
    /// Project Haystack: convert, check and query grids.
    #[command(subcommand)]
    Haystack(haystack::HaystackCommand),
    /// OPC UA: serve, browse, read, write and call; decode UA TCP bytes; look up status codes.
    #[command(subcommand)]
    Opcua(opcua::OpcuaCommand),
    /// Measure: raw-socket limits now; protocol benchmarks as they land.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
}

/// Runs the parsed command.
pub fn execute(cli: Cli) -> CommandResult {
    match cli.command {
        Command::Bacnet(cmd) => bacnet::execute(cmd),
        Command::Bench(cmd) => bench::execute(cmd),
        Command::Haystack(cmd) => haystack::execute(cmd),
        Command::Opcua(cmd) => opcua::execute(cmd),
    }
}
