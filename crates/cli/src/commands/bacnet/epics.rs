//! `buildwire bacnet epics ADDR`: every property of every object of a device, read with
//! ReadPropertyMultiple `all` (falling back to the property-list and one read per
//! property), printed as an EPICS-like listing (one `{ ... }` block per object, as the
//! bacnet-stack `bacepics` tool lays it out) or as JSON.

use buildwire_bacnet::driver::BacnetClient;
use buildwire_bacnet::driver::discovery::{self, ObjectReadings, PropertyReading};
use buildwire_bacnet::inspect::elements_json;
use buildwire_bacnet::network::DeviceAddress;
use buildwire_bacnet::{ClientError, ObjectIdentifier};
use clap::Args;
use serde_json::{Value, json};

use super::points::{Bar, SweepArgs, on_devices, outcome, sweep_bind};
use super::{ClientArgs, elements_text, print_json};
use crate::commands::common::result::CommandResult;

type BoxError = Box<dyn std::error::Error>;

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

/// One device's listing: its objects' readings (or why an object could not be read).
type Listing = Vec<(ObjectIdentifier, Result<ObjectReadings, ClientError>)>;

pub fn epics(mut args: EpicsArgs) -> CommandResult {
    sweep_bind(&mut args.client, args.all);
    let bar = Bar::new();
    let (listings, failures) = on_devices(
        &args.client,
        args.address.as_deref(),
        &args.sweep,
        &bar,
        async |client, address| device_listing(client, address, &bar).await,
    )?;
    if args.client.json {
        let list: Vec<Value> = listings
            .iter()
            .map(|(address, (device, listing))| {
                listing_json(&address.to_string(), *device, listing)
            })
            .collect();
        print_json(&Value::Array(list))?;
    } else {
        for (address, (device, listing)) in &listings {
            print_listing(&address.to_string(), *device, listing);
        }
    }
    let unreadable: usize = listings
        .iter()
        .map(|(_, (_, listing))| listing.iter().filter(|(_, r)| r.is_err()).count())
        .sum();
    if unreadable > 0 {
        eprintln!("warning: {unreadable} object(s) could not be read at all");
    }
    outcome(&failures)
}

async fn device_listing(
    client: &BacnetClient,
    address: DeviceAddress,
    bar: &Bar,
) -> Result<(ObjectIdentifier, Listing), BoxError> {
    let inventory = discovery::object_inventory(client, address, None).await?;
    let progress = bar.callback(inventory.device.to_string());
    let results = discovery::read_objects(client, address, &inventory.objects, &progress).await;
    Ok((
        inventory.device,
        inventory.objects.iter().copied().zip(results).collect(),
    ))
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
