//! `buildwire opcua ...`: OPC UA tools.

use buildwire_opcua::StatusCode;
use buildwire_opcua::inspect::dissect_stream;
use clap::{Args, Subcommand};
use serde_json::json;

use super::CommandResult;
use crate::hex_input::read_hex_argument;

#[derive(Debug, Subcommand)]
pub enum OpcuaCommand {
    /// Decode captured UA TCP bytes: each chunk's header and its Hello / Acknowledge / Error
    /// fields or secure channel headers.
    #[command(after_help = "Example:\n  \
        buildwire opcua decode 48454c46380000000000000000000100000001000000000000000000180000006f70632e7463703a2f2f6c6f63616c686f73743a34383430")]
    Decode(DecodeArgs),
    /// Look up a StatusCode by number (0x80070000) or by name (BadDecodingError).
    #[command(after_help = "Examples:\n  \
        buildwire opcua status 0x80070000\n  \
        buildwire opcua status BadTcpMessageTooLarge")]
    Status(StatusArgs),
}

#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// The bytes in hex (spaces, colons and 0x prefixes are ignored); `-` reads stdin.
    hex: String,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// A number (decimal or 0x hex) or a name.
    code: String,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn execute(cmd: OpcuaCommand) -> CommandResult {
    match cmd {
        OpcuaCommand::Decode(args) => decode(args),
        OpcuaCommand::Status(args) => status(args),
    }
}

fn decode(args: DecodeArgs) -> CommandResult {
    let bytes = read_hex_argument(&args.hex)?;
    let dissection = dissect_stream(&bytes);
    if args.json {
        let out = json!({"chunks": dissection.chunks, "error": dissection.error});
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        for chunk in &dissection.chunks {
            println!("{}", serde_json::to_string(chunk)?);
        }
        if let Some(e) = &dissection.error {
            println!(
                "ERROR at byte {}: {} ({})",
                e["offset"], e["message"], e["status"]
            );
        }
    }
    match dissection.error {
        Some(_) => Err("the bytes do not decode as a UA TCP stream to the end".into()),
        None => Ok(()),
    }
}

fn status(args: StatusArgs) -> CommandResult {
    let text = args.code.trim();
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok().map(StatusCode::from_u32),
        None => text.parse::<u32>().ok().map(StatusCode::from_u32),
    };
    let code = parsed.or_else(|| StatusCode::from_name(text)).ok_or_else(|| {
        format!("`{text}` is neither a StatusCode number nor a known name; try 0x80070000 or BadDecodingError")
    })?;
    let out = json!({
        "name": code.name(),
        "value": format!("0x{:08X}", code.bits()),
        "severity": if code.is_good() { "good" } else if code.is_bad() { "bad" } else { "uncertain" },
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!("{code}");
    }
    Ok(())
}
