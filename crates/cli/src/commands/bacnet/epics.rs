//! `buildwire bacnet epics ADDR`: every property of every object of a device, read with
//! ReadPropertyMultiple `all` (falling back to the property-list and one read per
//! property), printed as an EPICS-like listing (one `{ ... }` block per object, as the
//! bacnet-stack `bacepics` tool lays it out) or as JSON.

use buildwire_bacnet::ObjectIdentifier;
use buildwire_bacnet::driver::discovery::PropertyReading;
use buildwire_bacnet::inspect::elements_json;
use clap::Args;
use serde_json::{Value, json};

use super::points::{Bar, DeviceData, Listing, SweepArgs, Wanted, on_devices, outcome, sweep_bind};
use super::{ClientArgs, elements_text, print_json};
use crate::commands::common::result::CommandResult;

#[derive(Debug, Args)]
pub struct EpicsArgs {
    /// The device, HOST:PORT (or NETWORK:HEXMAC behind a router); leave out with --all.
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    address: Option<String>,
    /// Find every device with a Who-Is sweep first, then list each (binds port 47808
    /// unless --bind names another).
    #[arg(long)]
    all: bool,
    #[command(flatten)]
    sweep: SweepArgs,
    #[command(flatten)]
    client: ClientArgs,
}

pub fn epics(mut args: EpicsArgs) -> CommandResult {
    sweep_bind(&mut args.client, args.all);
    let bar = Bar::new();
    let (devices, failures) = on_devices(
        &args.client,
        args.address.as_deref(),
        &args.sweep,
        &bar,
        Wanted::Properties,
    )?;
    let listings: Vec<(&String, ObjectIdentifier, &Listing)> = devices
        .iter()
        .filter_map(|(address, (device, data))| match data {
            DeviceData::Properties(listing) => Some((address, *device, listing)),
            DeviceData::Points(_) => None,
        })
        .collect();
    if args.client.json {
        let list: Vec<Value> = listings
            .iter()
            .map(|(address, device, listing)| listing_json(address, *device, listing))
            .collect();
        print_json(&Value::Array(list))?;
    } else {
        for (address, device, listing) in &listings {
            print_listing(address, *device, listing);
        }
    }
    let unreadable: usize = listings
        .iter()
        .map(|(_, _, listing)| listing.iter().filter(|(_, r)| r.is_err()).count())
        .sum();
    if unreadable > 0 {
        eprintln!("warning: {unreadable} object(s) could not be read at all");
    }
    outcome(&failures)
}

fn reading_json(reading: &PropertyReading) -> Value {
    let mut entry = json!({"property": reading.property.to_string(),
                           "index": reading.array_index});
    match &reading.result {
        Ok(value) => entry["value"] = elements_json(value),
        Err(error) => entry["error"] = Value::String(error.to_string()),
    }
    entry
}

fn listing_json(address: &str, device: ObjectIdentifier, listing: &Listing) -> Value {
    let objects: Vec<Value> = listing
        .iter()
        .map(|(object, result)| match result {
            Ok(readings) => json!({
                "object": object.to_string(),
                "properties": readings.readings.iter().map(reading_json).collect::<Vec<_>>(),
            }),
            Err(error) => json!({"object": object.to_string(), "error": error.to_string()}),
        })
        .collect();
    json!({"device": device.to_string(), "address": address, "objects": objects})
}

fn print_listing(address: &str, device: ObjectIdentifier, listing: &Listing) {
    println!("-- EPICS-like listing of {device} at {address}");
    println!(
        "-- {} object(s); `?` marks a property that could not be read",
        listing.len()
    );
    println!("List of Objects in Test Device:");
    println!("{{");
    for (object, result) in listing {
        println!("  {{");
        match result {
            Ok(readings) => {
                for reading in &readings.readings {
                    let index = reading
                        .array_index
                        .map(|i| format!("[{i}]"))
                        .unwrap_or_default();
                    match &reading.result {
                        Ok(value) => {
                            println!("    {}{index}: {}", reading.property, elements_text(value));
                        }
                        Err(error) => println!("    {}{index}: ? -- {error}", reading.property),
                    }
                }
            }
            Err(error) => {
                println!("    object-identifier: {object}");
                println!("    -- ? could not be read: {error}");
            }
        }
        println!("  }},");
    }
    println!("}}");
}
