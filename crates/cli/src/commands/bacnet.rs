//! `buildwire bacnet ...`: BACnet tools.

use buildwire_bacnet::inspect::dissect_bip;
use buildwire_bacnet::{ObjectIdentifier, ObjectType, PropertyIdentifier};
use clap::{Args, Subcommand};
use serde_json::json;

use super::CommandResult;
use crate::hex_input::read_hex_argument;

#[derive(Debug, Subcommand)]
pub enum BacnetCommand {
    /// Decode a BACnet/IP datagram layer by layer (BVLL, NPDU, APDU, service parameters).
    #[command(after_help = "Examples:\n  \
        buildwire bacnet decode 810b000801001008            # a Who-Is broadcast\n  \
        buildwire bacnet decode '81 0a 00 11 01 04 00 05 01 0c 0c 00 00 00 05 19 55' --json\n  \
        xxd -p capture.bin | buildwire bacnet decode -")]
    Decode(DecodeArgs),
    /// Look up an object type, property or object identifier (`ai,1`, `pv`, `analog-value`).
    #[command(after_help = "Examples:\n  \
        buildwire bacnet name ai,1\n  \
        buildwire bacnet name pv\n  \
        buildwire bacnet name 85 --property")]
    Name(NameArgs),
}

#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// The datagram in hex (spaces, colons and a 0x prefix are ignored); `-` reads stdin.
    hex: String,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct NameArgs {
    /// An object identifier (`ai,1`, `analog-input:1`), an object type or property name or
    /// alias, or a number.
    text: String,
    /// Read a number as a property identifier (default: as an object type).
    #[arg(long)]
    property: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn execute(cmd: BacnetCommand) -> CommandResult {
    match cmd {
        BacnetCommand::Decode(args) => decode(args),
        BacnetCommand::Name(args) => name(args),
    }
}

fn decode(args: DecodeArgs) -> CommandResult {
    let bytes = read_hex_argument(&args.hex)?;
    let dissection = dissect_bip(&bytes);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&dissection.to_json())?);
    } else {
        print!("{dissection}");
    }
    match dissection.error {
        Some(e) => Err(format!("the datagram does not decode past the {} layer", e.layer).into()),
        None => Ok(()),
    }
}

fn name(args: NameArgs) -> CommandResult {
    let out = if let Ok(id) = args.text.parse::<ObjectIdentifier>() {
        json!({"object_identifier": id.to_string(),
               "object_type": id.object_type().to_string(),
               "object_type_number": id.object_type().to_u32(),
               "instance": id.instance()})
    } else if let Ok(n) = args.text.parse::<u32>() {
        if args.property {
            let p = PropertyIdentifier::from_u32(n);
            json!({"property": p.to_string(), "number": n})
        } else {
            let t = ObjectType::from_u32(n);
            json!({"object_type": t.to_string(), "number": n})
        }
    } else if let Ok(p) = args.text.parse::<PropertyIdentifier>() {
        json!({"property": p.to_string(), "number": p.to_u32()})
    } else if let Ok(t) = args.text.parse::<ObjectType>() {
        json!({"object_type": t.to_string(), "number": t.to_u32()})
    } else {
        return Err(format!(
            "`{}` is not an object identifier (ai,1), object type (analog-input) or property \
             (present-value, pv); see `buildwire bacnet name --help`",
            args.text
        )
        .into());
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else if let Some(map) = out.as_object() {
        for (k, v) in map {
            println!(
                "{k}: {}",
                v.as_str().map_or_else(|| v.to_string(), str::to_owned)
            );
        }
    }
    Ok(())
}
