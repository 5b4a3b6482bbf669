//! `buildwire bacnet points ADDR` and `points --all`: every object of a device (or of
//! every device a Who-Is sweep finds) with its name, description, type, present-value,
//! units, status-flags, out-of-service and whether it is commandable; a table, `--csv`
//! or `--json`. The reads are those of `buildwire_bacnet::driver::discovery`.

use std::io::IsTerminal as _;
use std::time::Duration;

use buildwire_bacnet::app::discovery::{MAX_DEVICE_INSTANCE, Point};
use buildwire_bacnet::driver::BacnetClient;
use buildwire_bacnet::driver::discovery::{
    self, Inventory, ObjectReadings, Progress, SweepOptions,
};
use buildwire_bacnet::encoding::{ApplicationValue, Element};
use buildwire_bacnet::inspect::elements_json;
use buildwire_bacnet::network::{DeviceAddress, LinkAddress};
use buildwire_bacnet::{ClientError, EngineeringUnits, ObjectIdentifier};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{Value, json};

use super::{ClientArgs, client_tsm, elements_text, print_json, runtime, sc, start_client};
use crate::commands::common::csv;
use crate::commands::common::duration::parse_duration;
use crate::commands::common::result::CommandResult;

type BoxError = Box<dyn std::error::Error>;

/// Options of a Who-Is sweep (`points --all`, `epics --all`).
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Lowest device instance to look for.
    #[arg(long, default_value_t = 0)]
    low: u32,
    /// Highest device instance to look for.
    #[arg(long, default_value_t = MAX_DEVICE_INSTANCE)]
    high: u32,
    /// Device instances per Who-Is (the sweep sends one Who-Is per range).
    #[arg(long, default_value_t = MAX_DEVICE_INSTANCE + 2)]
    range_size: u32,
    /// Pause between two Who-Is of the sweep.
    #[arg(long, default_value = "100ms", value_name = "DURATION", value_parser = parse_duration)]
    pause: Duration,
    /// How long to collect I-Am answers after the last Who-Is.
    #[arg(long, default_value = "3s", value_name = "DURATION", value_parser = parse_duration)]
    wait: Duration,
    /// Do not look for routers (Who-Is-Router-To-Network) and the networks behind them.
    #[arg(long)]
    no_routers: bool,
}

impl SweepArgs {
    pub fn options(&self) -> Result<SweepOptions, BoxError> {
        if self.low > self.high || self.high > MAX_DEVICE_INSTANCE {
            return Err(format!(
                "--low {} --high {}: device instances go from 0 to {MAX_DEVICE_INSTANCE}, \
                 low <= high",
                self.low, self.high
            )
            .into());
        }
        Ok(SweepOptions {
            low: self.low,
            high: self.high,
            range_size: self.range_size,
            pause: self.pause,
            wait: self.wait,
            routers: !self.no_routers,
            ..SweepOptions::default()
        })
    }
}

#[derive(Debug, Args)]
pub struct PointsArgs {
    /// The device, HOST:PORT (or NETWORK:HEXMAC behind a router); leave out with --all.
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    address: Option<String>,
    /// Find every device with a Who-Is sweep first, then list the points of each (binds
    /// port 47808 unless --bind names another: broadcasts go to the bound port).
    #[arg(long)]
    all: bool,
    /// CSV rows after a header row: device, address, object, type, name, description,
    /// present_value, units, status_flags, out_of_service, commandable.
    #[arg(long, conflicts_with = "json")]
    csv: bool,
    #[command(flatten)]
    sweep: SweepArgs,
    #[command(flatten)]
    client: ClientArgs,
}

/// The CSV columns, also the JSON keys of a point.
const COLUMNS: [&str; 11] = [
    "device",
    "address",
    "object",
    "type",
    "name",
    "description",
    "present_value",
    "units",
    "status_flags",
    "out_of_service",
    "commandable",
];

/// A progress bar on stderr, drawn only when stderr is a terminal.
pub struct Bar(ProgressBar);

impl Bar {
    pub fn new() -> Self {
        let bar = ProgressBar::new(0);
        if !std::io::stderr().is_terminal() {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
        bar.set_style(
            ProgressStyle::with_template("{msg:>24} [{bar:30}] {pos}/{len} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        Self(bar)
    }

    /// The callback the discovery functions call; `label` names the device.
    pub fn callback(&self, label: String) -> impl Fn(Progress) + Send + Sync + use<> {
        let bar = self.0.clone();
        move |progress| match progress {
            Progress::FindingRouters => bar.set_message("finding routers"),
            Progress::WhoIs { sent, total } => {
                bar.set_message("Who-Is");
                bar.set_length(total as u64);
                bar.set_position(sent as u64);
            }
            Progress::Read { done, total } => {
                bar.set_message(label.clone());
                bar.set_length(total as u64);
                bar.set_position(done as u64);
            }
            Progress::Objects { done, total } => {
                bar.set_message(label.clone());
                bar.set_length(total as u64);
                bar.set_position(done as u64);
            }
        }
    }

    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// The devices to read: the one named, or those a sweep finds (with their device object).
async fn devices<A: LinkAddress + std::fmt::Display>(
    client: &BacnetClient<A>,
    address: Option<DeviceAddress<A>>,
    sweep: &SweepArgs,
    bar: &Bar,
) -> Result<Vec<DeviceAddress<A>>, BoxError> {
    if let Some(address) = address {
        return Ok(vec![address]);
    }
    let site = discovery::sweep(client, &sweep.options()?, &bar.callback(String::new())).await?;
    eprintln!(
        "{} device(s) answered {} Who-Is ({} I-Am, {} network(s) behind routers)",
        site.devices.len(),
        site.who_is_sent,
        site.answers,
        site.networks.len()
    );
    for device in &site.devices {
        if !device.also_at.is_empty() {
            let others: Vec<String> = device.also_at.iter().map(ToString::to_string).collect();
            eprintln!(
                "warning: {} answered from {} and also from {}",
                device.i_am.device,
                device.address,
                others.join(", ")
            );
        }
    }
    Ok(site.devices.into_iter().map(|d| d.address).collect())
}

/// What a command got from each device (by address), and the addresses of the devices
/// that failed.
pub type PerDevice<T> = (Vec<(String, T)>, Vec<String>);

/// What a command reads from each device.
#[derive(Debug, Clone, Copy)]
pub(super) enum Wanted {
    /// The points (`points`).
    Points,
    /// Every property of every object (`epics`).
    Properties,
}

/// Every object of a device with its readings (or why it could not be read at all).
pub(super) type Listing = Vec<(ObjectIdentifier, Result<ObjectReadings, ClientError>)>;

/// What one device gave: its points or its listing.
pub(super) enum DeviceData {
    Points(Vec<Point>),
    Properties(Listing),
}

/// Reads what is `wanted` of the device at `address`, or of every device a sweep finds,
/// over the link `--transport` names: the results with each device's address and device
/// object, and the addresses of the devices that failed (each reported on stderr).
pub(super) fn on_devices(
    client_args: &ClientArgs,
    address: Option<&str>,
    sweep: &SweepArgs,
    bar: &Bar,
    wanted: Wanted,
) -> Result<PerDevice<(ObjectIdentifier, DeviceData)>, BoxError> {
    let results = if client_args.sc.is_sc() {
        let address = address.map(sc::sc_device).transpose()?;
        let tsm = client_tsm(client_args)?;
        runtime()?.block_on(async {
            let client = client_args.sc.client(tsm).await?;
            each_device(&client, address, sweep, bar, wanted).await
        })
    } else {
        let address = address.map(|a| client_args.foreign.target(a)).transpose()?;
        runtime()?.block_on(async {
            let client = start_client(client_args, None).await?;
            each_device(&client, address, sweep, bar, wanted).await
        })
    };
    bar.finish();
    results
}

async fn each_device<A: LinkAddress + std::fmt::Display>(
    client: &BacnetClient<A>,
    address: Option<DeviceAddress<A>>,
    sweep: &SweepArgs,
    bar: &Bar,
    wanted: Wanted,
) -> Result<PerDevice<(ObjectIdentifier, DeviceData)>, BoxError> {
    let mut results = Vec::new();
    let mut failures = Vec::new();
    for address in devices(client, address, sweep, bar).await? {
        let read = async {
            let inventory = discovery::object_inventory(client, address, None).await?;
            let progress = bar.callback(inventory.device.to_string());
            let data = read_device(client, address, &inventory, wanted, &progress).await;
            Ok::<_, BoxError>((inventory.device, data))
        };
        match read.await {
            Ok(result) => results.push((address.to_string(), result)),
            Err(error) => {
                eprintln!("error: {address}: {error}");
                failures.push(address.to_string());
            }
        }
    }
    Ok((results, failures))
}

/// The bind address of a command that may broadcast: 47808 when `--all` kept the
/// default ephemeral port (broadcasts go to the bound port).
pub fn sweep_bind(client: &mut ClientArgs, all: bool) {
    if all && client.bind == "0.0.0.0:0" {
        client.bind = format!("0.0.0.0:{}", super::BACNET_PORT);
    }
}

/// The exit of a command over several devices: an error naming those that failed.
pub fn outcome(failures: &[String]) -> CommandResult {
    match failures.len() {
        0 => Ok(()),
        n => Err(format!("{n} device(s) could not be read: {}", failures.join(", ")).into()),
    }
}

pub fn points(mut args: PointsArgs) -> CommandResult {
    sweep_bind(&mut args.client, args.all);
    let bar = Bar::new();
    let (devices, failures) = on_devices(
        &args.client,
        args.address.as_deref(),
        &args.sweep,
        &bar,
        Wanted::Points,
    )?;
    let rows: Vec<Value> = devices
        .iter()
        .flat_map(|(address, (device, data))| match data {
            DeviceData::Points(points) => points
                .iter()
                .map(|p| point_json(*device, address, p))
                .collect(),
            DeviceData::Properties(_) => Vec::new(),
        })
        .collect();
    if args.client.json {
        print_json(&Value::Array(rows))?;
    } else if args.csv {
        println!("{}", csv::line(&COLUMNS));
        for row in &rows {
            println!("{}", csv::json_line(row, &COLUMNS));
        }
    } else {
        print_table(&rows);
    }
    outcome(&failures)
}

/// The points of one device (the device object left out), or every property of every
/// object.
async fn read_device<A: LinkAddress + std::fmt::Display>(
    client: &BacnetClient<A>,
    address: DeviceAddress<A>,
    inventory: &Inventory,
    wanted: Wanted,
    progress: &(dyn Fn(Progress) + Send + Sync),
) -> DeviceData {
    match wanted {
        Wanted::Points => {
            let objects: Vec<ObjectIdentifier> = inventory
                .objects
                .iter()
                .copied()
                .filter(|o| *o != inventory.device)
                .collect();
            DeviceData::Points(discovery::read_points(client, address, &objects, progress).await)
        }
        Wanted::Properties => {
            let results =
                discovery::read_objects(client, address, &inventory.objects, progress).await;
            DeviceData::Properties(inventory.objects.iter().copied().zip(results).collect())
        }
    }
}

fn point_json(device: ObjectIdentifier, address: &str, point: &Point) -> Value {
    let errors: Vec<Value> = point
        .errors
        .iter()
        .map(|(property, error)| json!({"property": property.to_string(), "error": error.to_string()}))
        .collect();
    json!({
        "device": device.to_string(),
        "address": address,
        "object": point.object.to_string(),
        "type": point.object.object_type().to_string(),
        "name": point.name,
        "description": point.description,
        "present_value": point.present_value.as_deref().map(value_text),
        "present_value_json": point.present_value.as_deref().map(elements_json),
        "units": point.units.as_deref().map(units_text),
        "status_flags": point.status_flags.as_deref().map(flags_text),
        "out_of_service": point.out_of_service,
        "commandable": point.commandable,
        "errors": errors,
    })
}

/// A value as one cell: text without quotes.
fn value_text(value: &[Element]) -> String {
    match value {
        [Element::Application(ApplicationValue::CharacterString(s))] => s.clone(),
        other => elements_text(other),
    }
}

/// Engineering units by name (`degrees-fahrenheit`).
fn units_text(value: &[Element]) -> String {
    match value {
        [Element::Application(ApplicationValue::Enumerated(n))] => {
            EngineeringUnits::from_u32(*n).to_string()
        }
        other => elements_text(other),
    }
}

/// The status flags that are set, by name (`in-alarm;fault`), or `normal`.
fn flags_text(value: &[Element]) -> String {
    const NAMES: [&str; 4] = ["in-alarm", "fault", "overridden", "out-of-service"];
    match value {
        [Element::Application(ApplicationValue::BitString(bits))] => {
            let set: Vec<&str> = NAMES
                .iter()
                .enumerate()
                .filter(|(i, _)| bits.get(*i))
                .map(|(_, name)| *name)
                .collect();
            if set.is_empty() {
                "normal".to_owned()
            } else {
                set.join(";")
            }
        }
        other => elements_text(other),
    }
}

/// An aligned text table of the point rows (one device after another).
fn print_table(rows: &[Value]) {
    const SHOWN: [(&str, &str); 8] = [
        ("object", "OBJECT"),
        ("name", "NAME"),
        ("present_value", "VALUE"),
        ("units", "UNITS"),
        ("status_flags", "FLAGS"),
        ("out_of_service", "OOS"),
        ("commandable", "CMD"),
        ("description", "DESCRIPTION"),
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            SHOWN
                .iter()
                .map(|(key, _)| match &row[*key] {
                    Value::Bool(true) => "yes".to_owned(),
                    Value::Bool(false) => "no".to_owned(),
                    Value::Null => "-".to_owned(),
                    other => csv::json_field(other),
                })
                .collect()
        })
        .collect();
    let mut widths: Vec<usize> = SHOWN.iter().map(|(_, title)| title.len()).collect();
    for row in &cells {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        println!("{}", padded.join("  ").trim_end());
    };
    let mut device = None;
    for (row, cells) in rows.iter().zip(&cells) {
        if device != Some(&row["device"]) {
            device = Some(&row["device"]);
            println!(
                "{} at {}",
                csv::json_field(&row["device"]),
                csv::json_field(&row["address"])
            );
            line(SHOWN.iter().map(|(_, title)| *title).collect());
        }
        line(cells.iter().map(String::as_str).collect());
    }
    println!("{} point(s)", rows.len());
}
