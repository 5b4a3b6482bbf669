//! Command definitions (clap) and their dispatch.

mod bacnet;
mod bench;
pub(crate) mod common;
mod gateway;
mod haystack;
mod help_markdown;
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
        buildwire opcua read opc.tcp://127.0.0.1:4840 i=2258\n  \
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
    /// BACnet: serve a device, discover, read, write and subscribe (B/IP and BACnet/SC); route,
    /// BBMD and SC hub; decode datagrams.
    #[command(subcommand)]
    Bacnet(bacnet::BacnetCommand),
    /// Project Haystack: serve over HTTP and WebSocket, query a server as a client; convert,
    /// check and query grid files; Redis and PostgreSQL storage.
    #[command(subcommand)]
    Haystack(haystack::HaystackCommand),
    /// OPC UA: serve, browse, read, write, call and subscribe (secured, reconnecting);
    /// certificates; decode UA TCP bytes; look up status codes.
    #[command(subcommand)]
    Opcua(opcua::OpcuaCommand),
    /// BACnet to Haystack gateway: discover a BACnet site as a tagged Haystack model, collect
    /// live values and history into a store, serve it with writes back to the devices.
    #[command(subcommand)]
    Gateway(gateway::GatewayCommand),
    /// Benchmarks: BACnet (B/IP, router, BBMD, SC), Haystack and OPC UA against peers, soaks,
    /// and the raw-socket limits.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Write the command-line reference of the user's guide as markdown pages into DIR
    /// (used by `make docs`).
    #[command(hide = true)]
    HelpMarkdown(help_markdown::HelpMarkdownArgs),
}

/// Runs the parsed command.
pub fn execute(cli: Cli) -> CommandResult {
    match cli.command {
        Command::Bacnet(cmd) => bacnet::execute(cmd),
        Command::Bench(cmd) => bench::execute(cmd),
        Command::Gateway(cmd) => gateway::execute(cmd),
        Command::Haystack(cmd) => haystack::execute(cmd),
        Command::Opcua(cmd) => opcua::execute(cmd),
        Command::HelpMarkdown(args) => help_markdown::execute(&args),
    }
}
