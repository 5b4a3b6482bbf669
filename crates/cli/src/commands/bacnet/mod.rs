//! `buildwire bacnet ...`: BACnet tools: decode datagrams, look up names, serve a device,
//! and a client (whois, read, write, rpm, wpm) over BACnet/IP.

mod epics;
mod network;
mod points;
mod sc;
mod trend;
mod values;

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, ToSocketAddrs};
use std::time::Duration;

use buildwire_bacnet::apdu::{BacnetError, MaxApdu};
use buildwire_bacnet::app::discovery::MAX_DEVICE_INSTANCE;
use buildwire_bacnet::app::value_names::value_text;
use buildwire_bacnet::app::{CovOptions, Destination, ValueType, parse_value_text};
use buildwire_bacnet::driver::{BacnetClient, BacnetServer, BacnetServerConfig, ClientConfig};
use buildwire_bacnet::inspect::{cov_notification_json_named, dissect_bip};
use buildwire_bacnet::objects::profile::DeviceProfile;
use buildwire_bacnet::services::{
    InstanceRange, PropertyReference, ReadAccessSpecification, WriteAccessSpecification,
};
use buildwire_bacnet::tsm::TsmConfig;
use buildwire_bacnet::{
    ClientError, ObjectIdentifier, ObjectType, PropertyIdentifier, PropertyValue,
};
use buildwire_bench::bacnet::profiles::{large_profile, stress_profile};
use clap::{Args, Subcommand};
use serde_json::{Value, json};

use crate::commands::common::csv;
use crate::commands::common::duration::parse_duration;
use crate::commands::common::result::CommandResult;
use crate::commands::common::service::{ClientLogArgs, ServiceArgs};
use crate::commands::common::signals::{Interrupted, StopSignals, stopped, wait_for_stop};
use crate::commands::common::timestamp::utc_now;
use crate::hex_input::read_hex_argument;

#[derive(Debug, Subcommand)]
pub enum BacnetCommand {
    /// Decode a BACnet/IP datagram layer by layer (BVLL, NPDU, APDU, service parameters).
    #[command(after_help = "Examples:\n  \
        buildwire bacnet decode 810b000801001008            # a Who-Is broadcast\n  \
        buildwire bacnet decode \\\n      '81 0a 00 11 01 04 00 05 01 0c 0c 00 00 00 05 19 55' --json\n  \
        xxd -p capture.bin | buildwire bacnet decode -")]
    Decode(DecodeArgs),
    /// Look up an object type, property or object identifier (`ai,1`, `pv`, `analog-value`),
    /// or a value of an enumeration (units, event state, reliability, error codes...).
    #[command(after_help = "Examples:\n  \
        buildwire bacnet name ai,1\n  \
        buildwire bacnet name pv\n  \
        buildwire bacnet name 85 --property\n  \
        buildwire bacnet name 62 --enum engineering-units\n  \
        buildwire bacnet name degrees-fahrenheit   # its enumeration and number")]
    Name(NameArgs),
    /// Serve a BACnet/IP device (the `stress` objects or a JSON profile) until Ctrl-C.
    #[command(after_help = "Examples:\n  \
        buildwire bacnet serve\n  \
        buildwire bacnet serve --bind 127.0.0.1:47809 --broadcast 127.255.255.255 \\\n      --device-id 1234\n  \
        buildwire bacnet serve --objects site.json\n  \
        buildwire bacnet serve --objects large:1500 --max-apdu 480 \\\n      # segmented object-list")]
    Serve(ServeArgs),
    /// Broadcast a Who-Is and list the devices that answer.
    #[command(after_help = "Examples:\n  \
        buildwire bacnet whois\n  \
        buildwire bacnet whois --low 100 --high 200 --json\n  \
        buildwire bacnet whois --to 192.168.1.20:47808   # ask one device")]
    Whois(WhoisArgs),
    /// Read one property (ReadProperty).
    #[command(after_help = "Examples:\n  \
        buildwire bacnet read 192.168.1.20:47808 ai,1 pv\n  \
        buildwire bacnet read 192.168.1.20:47808 device,1234 object-list --index 0 \\\n      --json\n  \
        buildwire bacnet read 192.168.1.20:47808 ai,1 pv --repeat 60 --interval 10s \\\n      --csv > ai1.csv                         # a trend, one row per read\n  \
        buildwire bacnet read 192.168.1.20:47808 ai,1 pv --log-level debug \\\n      --log-format json                       # each request, retry and timeout")]
    Read(ReadArgs),
    /// Write one property (WriteProperty).
    #[command(after_help = "Examples:\n  \
        buildwire bacnet write 192.168.1.20:47808 av,1 pv 72.5 --priority 8\n  \
        buildwire bacnet write 192.168.1.20:47808 av,1 pv null --priority 8 \\\n      # relinquish\n  \
        buildwire bacnet write 192.168.1.20:47808 bv,1 pv active")]
    Write(WriteArgs),
    /// Read several properties of several objects (ReadPropertyMultiple).
    #[command(after_help = "Examples:\n  \
        buildwire bacnet rpm 192.168.1.20:47808 ai,1:pv,units av,2:all\n  \
        buildwire bacnet rpm 192.168.1.20:47808 'ai,1:priority-array[8]' --json")]
    Rpm(RpmArgs),
    /// Write several properties (WritePropertyMultiple).
    #[command(after_help = "Examples:\n  \
        buildwire bacnet wpm 192.168.1.20:47808 av,1:pv=70 av,2:pv=71.5 --priority 9\n  \
        buildwire bacnet wpm 192.168.1.20:47808 'av,1:description=\"north zone\"'")]
    Wpm(WpmArgs),
    /// Subscribe to change-of-value notifications (SubscribeCOV, or SubscribeCOVProperty
    /// with --property) and print each one as it comes; renewed before the lifetime ends
    /// and restored after the device restarts; Ctrl-C cancels it on the device.
    #[command(after_help = "Examples:\n  \
        buildwire bacnet subscribe 192.168.1.20:47808 av,1 --json\n  \
        buildwire bacnet subscribe 192.168.1.20:47808 ai,3 --confirmed \\\n      --lifetime 10min\n  \
        buildwire bacnet subscribe 192.168.1.20:47808 av,1 --csv > av1.csv\n  \
        buildwire bacnet subscribe 192.168.1.20:47808 ai,3 --property pv \\\n      --increment 0.5 --count 10")]
    Subscribe(SubscribeArgs),
    /// Every object of a device with its name, description, present-value, units,
    /// status-flags, out-of-service and whether it is commandable (a table, --csv or
    /// --json); --all does it for every device a Who-Is sweep finds.
    #[command(after_help = "Examples:\n  \
        buildwire bacnet points 192.168.1.20:47808\n  \
        buildwire bacnet points 192.168.1.20:47808 --csv > points.csv\n  \
        buildwire bacnet points --all --json          # every device that answers\n  \
        buildwire bacnet points --all --low 100 --high 999 --range-size 100 \\\n      \
          --pause 200ms                             # a large site, paced")]
    Points(points::PointsArgs),
    /// Every property of every object of a device (ReadPropertyMultiple `all`, else the
    /// property-list and one read per property) as an EPICS-like listing or --json.
    #[command(after_help = "Examples:\n  \
        buildwire bacnet epics 192.168.1.20:47808 > device.epics\n  \
        buildwire bacnet epics 192.168.1.20:47808 --json\n  \
        buildwire bacnet epics --all --timeout 5s")]
    Epics(epics::EpicsArgs),
    /// Routers, BBMDs and their tables (see bacnet_network.rs).
    #[command(flatten)]
    Network(network::NetworkCommand),
    /// Make a test CA and EC P-256 operational certificates for BACnet/SC (with subject
    /// alternative names for 127.0.0.1, ::1, localhost and each name).
    #[command(after_help = "Examples:\n  \
        buildwire bacnet sc-certs ./pki\n  \
        buildwire bacnet sc-certs ./pki --names hub,device7 --san \\\n      10.0.0.5,hub.example --days 30")]
    ScCerts(sc::ScCertsArgs),
    /// Run a BACnet/SC hub (Annex AB.5.3): WebSockets with mutual TLS 1.3, subprotocol
    /// hub.bsc.bacnet.org; relays unicasts by VMAC and broadcasts to every other node.
    #[command(after_help = "Examples:\n  \
        buildwire bacnet sc-certs ./pki\n  \
        buildwire bacnet sc-hub --bind 127.0.0.1:4443 --cert pki/hub.crt --key \\\n      pki/hub.key --ca pki/ca.crt\n  \
        buildwire bacnet serve --transport sc --hub wss://127.0.0.1:4443 \\\n      \
          --cert pki/node1.crt --key pki/node1.key --ca pki/ca.crt")]
    ScHub(sc::ScHubArgs),
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
    /// Look the number or name up in this enumeration: engineering-units, event-state,
    /// reliability, binary-pv, polarity, segmentation, device-status, error-code...
    #[arg(long = "enum", value_name = "ENUMERATION", value_parser = values::parse_enumeration,
          conflicts_with = "property")]
    enumeration: Option<buildwire_bacnet::enums::Enumeration>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn execute(cmd: BacnetCommand) -> CommandResult {
    match cmd {
        BacnetCommand::Decode(args) => decode(args),
        BacnetCommand::Name(args) => name(args),
        BacnetCommand::Serve(args) => serve(args),
        BacnetCommand::Whois(args) => whois(args),
        BacnetCommand::Read(args) => read(args),
        BacnetCommand::Write(args) => write(args),
        BacnetCommand::Rpm(args) => rpm(args),
        BacnetCommand::Wpm(args) => wpm(args),
        BacnetCommand::Subscribe(args) => subscribe(args),
        BacnetCommand::Points(args) => points::points(args),
        BacnetCommand::Epics(args) => epics::epics(args),
        BacnetCommand::Network(command) => network::execute(command),
        BacnetCommand::ScCerts(args) => sc::sc_certs(&args),
        BacnetCommand::ScHub(args) => sc::sc_hub(&args),
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
    let out = if let Some(enumeration) = args.enumeration {
        values::enumeration_entry(enumeration, &args.text)?
    } else if let Ok(id) = args.text.parse::<ObjectIdentifier>() {
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
    } else if let Some(found) = values::find_value_name(&args.text) {
        found
    } else {
        return Err(format!(
            "`{}` is not an object identifier (ai,1), object type (analog-input), property \
             (present-value, pv) or value name (degrees-fahrenheit); see `buildwire bacnet \
             name --help`",
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

// ---- network commands: a device server and a client over BACnet/IP ----

/// Most analog values `--objects large:N` creates (the object-list stays readable).
const MAX_LARGE_OBJECTS: u32 = 100_000;

/// Default BACnet/IP port (Annex J, X'BAC0').
const BACNET_PORT: u16 = 47808;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Local address to serve on.
    #[arg(long, default_value = "0.0.0.0:47808")]
    bind: String,
    /// Device instance, 0..4194302 (overrides the profile's).
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=i64::from(MAX_DEVICE_INSTANCE)))]
    device_id: Option<u32>,
    /// Password that DeviceCommunicationControl and ReinitializeDevice must carry (1 to 20
    /// characters); without it the device takes any password or none.
    #[arg(long)]
    password: Option<String>,
    /// The objects: `stress` (the 40-object stress server of the bac-py benchmarks),
    /// `large:N` (a device and N analog values, for big object-lists) or a JSON profile file.
    #[arg(long, default_value = "stress")]
    objects: String,
    /// The subnet's broadcast address (default: 127.255.255.255 on loopback, x.y.z.255
    /// otherwise).
    #[arg(long)]
    broadcast: Option<Ipv4Addr>,
    /// Largest APDU this device sends and accepts (50..1476); longer answers are segmented.
    #[arg(long, default_value_t = 1476)]
    max_apdu: u16,
    /// Neither send nor accept segmented messages (as many small controllers): a long
    /// answer is refused with an abort, and clients must read long arrays element by
    /// element.
    #[arg(long)]
    no_segmentation: bool,
    #[command(flatten)]
    link: network::ServeLinkArgs,
    #[command(flatten)]
    sc: sc::ScNodeArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

#[derive(Debug, Args)]
pub struct WhoisArgs {
    /// Local address; broadcasts go to the broadcast address on this port, so keep 47808
    /// (or the port of the devices you look for) [default: 0.0.0.0:47808, or 0.0.0.0:0
    /// (a free port) with --to].
    #[arg(long)]
    bind: Option<String>,
    /// Broadcast address (default: 255.255.255.255, or 127.255.255.255 on loopback).
    #[arg(long)]
    broadcast: Option<Ipv4Addr>,
    /// Ask one device (HOST:PORT) instead of broadcasting.
    #[arg(long)]
    to: Option<String>,
    /// How long to wait for answers.
    #[arg(long, default_value = "3s", value_name = "DURATION", value_parser = parse_duration)]
    timeout: Duration,
    /// Lowest device instance to ask for (with --high).
    #[arg(long, requires = "high")]
    low: Option<u32>,
    /// Highest device instance to ask for (with --low).
    #[arg(long, requires = "low")]
    high: Option<u32>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    foreign: network::ForeignArgs,
    #[command(flatten)]
    sc: sc::ScClientArgs,
    #[command(flatten)]
    logs: ClientLogArgs,
}

/// Options shared by the client commands.
#[derive(Debug, Args)]
pub struct ClientArgs {
    /// Local address of the client (port 0 picks a free one).
    #[arg(long, default_value = "0.0.0.0:0")]
    bind: String,
    /// How long to wait for each attempt (3 retries follow a silent attempt).
    #[arg(long, default_value = "3s", value_name = "DURATION", value_parser = parse_duration)]
    timeout: Duration,
    /// Largest APDU this client accepts (50..1476); longer answers come segmented.
    #[arg(long, default_value_t = 1476)]
    max_apdu: u16,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    foreign: network::ForeignArgs,
    #[command(flatten)]
    sc: sc::ScClientArgs,
    #[command(flatten)]
    logs: ClientLogArgs,
}

#[derive(Debug, Args)]
pub struct ReadArgs {
    /// The device, HOST:PORT (the port is 47808 when left out).
    address: String,
    /// The object: `ai,1`, `analog-input:1`, `device,1234`.
    object: String,
    /// The property: `pv`, `present-value`, `object-list`, or a number.
    property: String,
    /// Array index (0 reads the length).
    #[arg(long)]
    index: Option<u32>,
    #[command(flatten)]
    trend: trend::TrendArgs,
    #[command(flatten)]
    client: ClientArgs,
}

#[derive(Debug, Args)]
pub struct WriteArgs {
    /// The device, HOST:PORT.
    address: String,
    /// The object: `av,1`.
    object: String,
    /// The property: `pv`.
    property: String,
    /// The value: a number, `null` (relinquish), `active`/`inactive`, `true`/`false`, text.
    value: String,
    /// Write priority 1..16 (commandable properties).
    #[arg(long)]
    priority: Option<u8>,
    /// Array index.
    #[arg(long)]
    index: Option<u32>,
    /// Datatype of the value (default: guessed from the object type and the text).
    #[arg(long = "type", value_name = "TYPE")]
    value_type: Option<ValueType>,
    #[command(flatten)]
    client: ClientArgs,
}

#[derive(Debug, Args)]
pub struct RpmArgs {
    /// The device, HOST:PORT.
    address: String,
    /// `OBJECT:PROP,PROP...` per object; a property may carry `[index]`; `all`,
    /// `required`, `optional` select groups.
    #[arg(required = true)]
    specs: Vec<String>,
    #[command(flatten)]
    client: ClientArgs,
}

#[derive(Debug, Args)]
pub struct WpmArgs {
    /// The device, HOST:PORT.
    address: String,
    /// `OBJECT:PROP=VALUE` (or `OBJECT:PROP[index]=VALUE`), one or more.
    #[arg(required = true)]
    writes: Vec<String>,
    /// Write priority 1..16 for every write.
    #[arg(long)]
    priority: Option<u8>,
    /// Datatype of every value (default: guessed per value).
    #[arg(long = "type", value_name = "TYPE")]
    value_type: Option<ValueType>,
    #[command(flatten)]
    client: ClientArgs,
}

#[derive(Debug, Args)]
pub struct SubscribeArgs {
    /// The device, HOST:PORT.
    address: String,
    /// The object: `av,1`, `analog-input:3`.
    object: String,
    /// Watch one property (SubscribeCOVProperty), `name` or `name[index]`; without it the
    /// object's present-value and status-flags (SubscribeCOV).
    #[arg(long)]
    property: Option<String>,
    /// COV increment for --property of a REAL value.
    #[arg(long, requires = "property", value_parser = finite_real)]
    increment: Option<f32>,
    /// Lifetime asked of the device, whole seconds (0: indefinite; renewed at half of it).
    #[arg(long, default_value = "300s", value_name = "DURATION", value_parser = parse_duration)]
    lifetime: Duration,
    /// Confirmed notifications (the device waits for our acknowledgement).
    #[arg(long)]
    confirmed: bool,
    /// Stop after this many notifications (the initial one included).
    #[arg(long)]
    count: Option<u64>,
    /// Stop after this long.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    duration: Option<Duration>,
    /// One CSV row per property of each notification after a header row: device, object,
    /// property, value, time_remaining, time (when it arrived, UTC).
    #[arg(long, conflicts_with = "json")]
    csv: bool,
    #[command(flatten)]
    client: ClientArgs,
}

fn runtime() -> Result<tokio::runtime::Runtime, Box<dyn std::error::Error>> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

/// A REAL option: a finite number a REAL can hold (`1e400` is refused, not infinity).
fn finite_real(text: &str) -> Result<f32, String> {
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    if value.is_finite() && value.abs() <= f64::from(f32::MAX) {
        Ok(value as f32)
    } else {
        Err(format!(
            "`{text}` is out of range for a real (largest magnitude about {:.7e})",
            f32::MAX
        ))
    }
}

/// `HOST:PORT` (or `HOST`, port 47808) to an IPv4 socket address.
fn parse_address(text: &str) -> Result<SocketAddrV4, Box<dyn std::error::Error>> {
    let with_port = if text.contains(':') {
        text.to_owned()
    } else {
        format!("{text}:{BACNET_PORT}")
    };
    let found = with_port
        .to_socket_addrs()
        .map_err(|e| format!("`{text}` is not a HOST:PORT address: {e}"))?
        .find_map(|a| match a {
            SocketAddr::V4(v4) => Some(v4),
            SocketAddr::V6(_) => None,
        });
    found.ok_or_else(|| format!("`{text}` has no IPv4 address (BACnet/IP is IPv4)").into())
}

fn parse_object(text: &str) -> Result<ObjectIdentifier, Box<dyn std::error::Error>> {
    text.trim().parse::<ObjectIdentifier>().map_err(|e| {
        format!("`{text}` is not an object identifier like ai,1 or analog-value:3 ({e})").into()
    })
}

fn parse_property(text: &str) -> Result<PropertyIdentifier, Box<dyn std::error::Error>> {
    let text = text.trim();
    if let Ok(n) = text.parse::<u32>() {
        return Ok(PropertyIdentifier::from_u32(n));
    }
    text.parse::<PropertyIdentifier>().map_err(|_| {
        format!("`{text}` is not a property (present-value, pv, object-list, 85...)").into()
    })
}

/// `name` or `name[index]`.
fn parse_property_index(
    text: &str,
) -> Result<(PropertyIdentifier, Option<u32>), Box<dyn std::error::Error>> {
    match text
        .trim()
        .strip_suffix(']')
        .and_then(|t| t.split_once('['))
    {
        Some((name, index)) => Ok((
            parse_property(name)?,
            Some(
                index
                    .parse()
                    .map_err(|_| format!("`{index}` is not an array index"))?,
            ),
        )),
        None => Ok((parse_property(text)?, None)),
    }
}

fn tsm_config(apdu_timeout: Duration) -> Result<TsmConfig, Box<dyn std::error::Error>> {
    Ok(TsmConfig {
        apdu_timeout,
        ..TsmConfig::default()
    })
}

/// Runs `body` (a future giving a `Result`) on a client of the link `--transport` names, with
/// `client` and `to` bound: B/IP (`to` is HOST:PORT or a routed address) or BACnet/SC (`to`
/// is a VMAC).
macro_rules! on_client {
    ($args:expr, $address:expr, |$client:ident, $to:ident| $body:expr) => {
        if $args.sc.is_sc() {
            let $to = sc::sc_device($address)?;
            let tsm = client_tsm($args)?;
            runtime()?.block_on(async {
                let $client = $args.sc.client(tsm).await?;
                $body.await.map_err(Box::<dyn std::error::Error>::from)
            })?
        } else {
            let $to = $args.foreign.target($address)?;
            runtime()?.block_on(async {
                let $client = start_client($args, None).await?;
                $body.await.map_err(Box::<dyn std::error::Error>::from)
            })?
        }
    };
}

/// The TSM settings of `--timeout` and `--max-apdu`.
fn client_tsm(args: &ClientArgs) -> Result<TsmConfig, Box<dyn std::error::Error>> {
    let mut tsm = tsm_config(args.timeout)?;
    tsm.max_apdu = MaxApdu::for_length(args.max_apdu);
    Ok(tsm)
}

async fn start_client(
    args: &ClientArgs,
    broadcast: Option<Ipv4Addr>,
) -> Result<BacnetClient, Box<dyn std::error::Error>> {
    args.logs.start_logs()?;
    let bind = parse_address(&args.bind)?;
    let mut config = ClientConfig::new(bind, broadcast.or(args.foreign.discovery_broadcast(bind)));
    config.tsm = client_tsm(args)?;
    config.role = args.foreign.role()?;
    BacnetClient::start(config)
        .await
        .map_err(|e| bind_error(bind, &e).into())
}

fn error_json(error: &BacnetError) -> Value {
    json!({"class": error.class.to_string(), "code": error.code.to_string(),
           "class_number": error.class.to_u32(), "code_number": error.code.to_u32()})
}

/// Why a socket could not be bound, and what to do when the port is taken.
fn bind_error(bind: SocketAddrV4, error: &std::io::Error) -> String {
    if error.kind() == std::io::ErrorKind::AddrInUse {
        format!(
            "cannot bind {bind}: the port is in use, most likely by another BACnet application \
             on this host (BACnet/IP uses UDP {BACNET_PORT}); stop it, bind one address of \
             this host with --bind IP:{port}, or ask one device with --to HOST:PORT \
             (whois) or a free port (--bind 0.0.0.0:0)",
            port = bind.port()
        )
    } else {
        format!("cannot bind {bind}: {e}", e = error)
    }
}

fn print_json(value: &Value) -> CommandResult {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

fn serve(args: ServeArgs) -> CommandResult {
    args.service.start_logs()?;
    let bind = match network::is_bip6(&args.link) {
        true => SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0),
        false => parse_address(&args.bind)?,
    };
    let mut profile = if args.objects == "stress" {
        stress_profile()
    } else if let Some(count) = args.objects.strip_prefix("large:") {
        let count: u32 = count
            .parse()
            .ok()
            .filter(|n| *n <= MAX_LARGE_OBJECTS)
            .ok_or_else(|| {
                format!("--objects large:N takes N from 0 to {MAX_LARGE_OBJECTS}, not {count:?}")
            })?;
        large_profile(count)
    } else {
        let text = std::fs::read_to_string(&args.objects)
            .map_err(|e| format!("cannot read {}: {e}", args.objects))?;
        DeviceProfile::from_json(&text).map_err(|e| format!("{}: {e}", args.objects))?
    };
    if let Some(instance) = args.device_id {
        profile.device.instance = instance;
    }
    if let Some(password) = &args.password {
        let chars = password.chars().count();
        if !(1..=buildwire_bacnet::services::MAX_PASSWORD_CHARS).contains(&chars) {
            return Err(format!(
                "--password takes 1 to {} characters (BACnet's limit), not {chars}",
                buildwire_bacnet::services::MAX_PASSWORD_CHARS
            )
            .into());
        }
        if network::is_sc(&args.link) || network::is_bip6(&args.link) {
            return Err("--password is for B/IP devices (without --transport)".into());
        }
    }
    let database = profile
        .build()
        .map_err(|e| format!("{}: {e}", args.objects))?;
    let objects = database.len();
    let device = database.device_identifier();
    let mut config = BacnetServerConfig::new(bind, database);
    if args.broadcast.is_some() {
        config.broadcast = args.broadcast;
    }
    config.tsm.max_apdu = MaxApdu::for_length(args.max_apdu);
    if args.no_segmentation {
        config.tsm.segmentation = buildwire_bacnet::enums::Segmentation::NoSegmentation;
    }
    if network::is_sc(&args.link) {
        return sc::serve_sc(&args.sc, config);
    }
    if network::is_bip6(&args.link) {
        return network::serve_bip6(&args.link, &args.bind, config);
    }
    config.role = network::serve_bip_role(&args.link, bind)?;
    runtime()?.block_on(async move {
        let signals = StopSignals::listen()?;
        let server = BacnetServer::start(config)
            .await
            .map_err(|e| bind_error(bind, &e))?;
        if let Some(password) = &args.password {
            server.with_server(|s| s.set_passwords(Some(password.clone()), Some(password.clone())));
        }
        crate::say!(
            "serving {device} with {objects} objects on {} (Ctrl-C stops)",
            server.local_addr()
        );
        let signal = wait_for_stop(signals, "answering the requests in flight").await;
        server.shutdown().await;
        stopped(signal)
    })
}

fn whois(args: WhoisArgs) -> CommandResult {
    args.logs.start_logs()?;
    // Asking one device needs no broadcast: a free port leaves 47808 to the applications
    // that listen there.
    let bind_text = match (&args.bind, &args.to) {
        (Some(bind), _) => bind.clone(),
        (None, Some(_)) => "0.0.0.0:0".to_owned(),
        (None, None) => format!("0.0.0.0:{BACNET_PORT}"),
    };
    let bind = parse_address(&bind_text)?;
    let broadcast = args.broadcast.or_else(|| {
        if bind.ip().is_loopback() {
            Some(Ipv4Addr::new(127, 255, 255, 255))
        } else {
            Some(Ipv4Addr::BROADCAST)
        }
    });
    let range = match (args.low, args.high) {
        (Some(low), Some(high)) => Some(
            InstanceRange::new(low, high)
                .ok_or_else(|| format!("--low {low} --high {high}: need low <= high <= 4194303"))?,
        ),
        _ => None,
    };
    let destination = match &args.to {
        Some(to) => Destination::Unicast(parse_address(to)?),
        None => Destination::Broadcast,
    };
    let wait = args.timeout;
    let found: Vec<(String, buildwire_bacnet::services::who_is::IAm)> = if args.sc.is_sc() {
        let tsm = tsm_config(Duration::from_secs(3))?;
        runtime()?.block_on(async {
            let client = args.sc.client(tsm).await?;
            let found = client
                .who_is(range, wait)
                .await
                .map_err(Box::<dyn std::error::Error>::from)?;
            Ok::<_, Box<dyn std::error::Error>>(
                found
                    .into_iter()
                    .map(|(address, i_am)| (address.to_string(), i_am))
                    .collect(),
            )
        })?
    } else {
        let found = runtime()?.block_on(async {
            let mut config = ClientConfig::new(bind, broadcast);
            config.role = args.foreign.role()?;
            let client = BacnetClient::start(config)
                .await
                .map_err(|e| bind_error(bind, &e))?;
            client
                .who_is_at(destination, range, wait)
                .await
                .map_err(Box::<dyn std::error::Error>::from)
        })?;
        found
            .into_iter()
            .map(|(address, i_am)| (address.to_string(), i_am))
            .collect()
    };
    if args.json {
        let list: Vec<Value> = found
            .iter()
            .map(|(address, i_am)| {
                json!({
                    "address": address,
                    "device": i_am.device.to_string(),
                    "instance": i_am.device.instance(),
                    "max_apdu": i_am.max_apdu_length_accepted,
                    "segmentation": i_am.segmentation_supported.to_string(),
                    "segmentation_number": i_am.segmentation_supported.to_u32(),
                    "vendor_id": i_am.vendor_id,
                })
            })
            .collect();
        return print_json(&Value::Array(list));
    }
    for (address, i_am) in &found {
        println!(
            "{} at {address}: max-apdu {}, {}, vendor {}",
            i_am.device, i_am.max_apdu_length_accepted, i_am.segmentation_supported, i_am.vendor_id
        );
    }
    println!("{} device(s) answered", found.len());
    Ok(())
}

fn read(args: ReadArgs) -> CommandResult {
    let object = parse_object(&args.object)?;
    let property = parse_property(&args.property)?;
    if args.trend.repeats() {
        return trend::read_repeat(&args, object, property);
    }
    let (address, value) = if args.client.sc.is_sc() {
        let to = sc::sc_device(&args.address)?;
        let tsm = client_tsm(&args.client)?;
        let value = runtime()?.block_on(async {
            let client = args.client.sc.client(tsm).await?;
            client
                .read_named(to, object, property, args.index)
                .await
                .map_err(Box::<dyn std::error::Error>::from)
        })?;
        (to.to_string(), value)
    } else {
        let to = args.client.foreign.target(&args.address)?;
        let value = runtime()?.block_on(async {
            let client = start_client(&args.client, None).await?;
            client
                .read_named(to, object, property, args.index)
                .await
                .map_err(Box::<dyn std::error::Error>::from)
        })?;
        (to.to_string(), value)
    };
    if args.client.json {
        return print_json(&json!({
            "address": address,
            "object": object.to_string(),
            "property": property.to_string(),
            "index": args.index,
            "value": value,
        }));
    }
    let index = args.index.map(|i| format!("[{i}]")).unwrap_or_default();
    println!("{object} {property}{index}: {}", value_text(&value));
    Ok(())
}

fn write(args: WriteArgs) -> CommandResult {
    let object = parse_object(&args.object)?;
    let property = parse_property(&args.property)?;
    let value = parse_value_text(&args.value, args.value_type, object, property)?;
    on_client!(&args.client, &args.address, |client, to| client.write(
        to,
        object,
        property,
        value,
        args.priority,
        args.index
    ));
    if args.client.json {
        return print_json(&json!({"ok": true, "object": object.to_string(),
                                  "property": property.to_string()}));
    }
    println!("ok: wrote {object} {property}");
    Ok(())
}

fn rpm(args: RpmArgs) -> CommandResult {
    let mut specifications = Vec::new();
    for spec in &args.specs {
        let (object, properties) = spec
            .rsplit_once(':')
            .filter(|(_, p)| !p.is_empty() && !p.chars().all(|c| c.is_ascii_digit()))
            .ok_or_else(|| format!("`{spec}` is not OBJECT:PROP,PROP (e.g. ai,1:pv,units)"))?;
        let properties = properties
            .split(',')
            .map(|p| {
                parse_property_index(p).map(|(property, array_index)| PropertyReference {
                    property,
                    array_index,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        specifications.push(ReadAccessSpecification {
            object: parse_object(object)?,
            properties,
        });
    }
    // A device that refuses or aborts the ReadPropertyMultiple (no RPM, an `all` answer
    // too long to send) is read another way, as `read` does.
    let results = on_client!(&args.client, &args.address, |client, to| {
        buildwire_bacnet::driver::discovery::read_multiple_or_fallback(&client, to, specifications)
    });
    let (mut read, mut failed) = (0usize, 0usize);
    for reading in results.iter().flat_map(|o| &o.readings) {
        match reading.result {
            Ok(_) => read += 1,
            Err(_) => failed += 1,
        }
    }
    let named = |object: &buildwire_bacnet::driver::discovery::ObjectReadings,
                 r: &buildwire_bacnet::driver::discovery::PropertyReading| {
        let mut named = values::NamedValue::new(object.object, r.property, r.array_index);
        if values::wants_state_text(object.object, r.property) {
            // The state-text when the same request read it.
            named.state_text = object
                .readings
                .iter()
                .find_map(|other| match &other.result {
                    Ok(states)
                        if other.property == PropertyIdentifier::StateText
                            && other.array_index.is_none() =>
                    {
                        Some(values::state_texts(states))
                    }
                    _ => None,
                });
        }
        named
    };
    if args.client.json {
        let list: Vec<Value> = results
            .iter()
            .map(|object| {
                let properties: Vec<Value> = object
                    .readings
                    .iter()
                    .map(|r| {
                        let mut entry = json!({"property": r.property.to_string(),
                                               "index": r.array_index});
                        match &r.result {
                            Ok(value) => entry["value"] = named(object, r).json(value),
                            Err(error) => entry["error"] = client_error_json(error),
                        }
                        entry
                    })
                    .collect();
                json!({"object": object.object.to_string(), "results": properties})
            })
            .collect();
        print_json(&Value::Array(list))?;
    } else {
        for object in &results {
            println!("{}", object.object);
            for r in &object.readings {
                let index = r.array_index.map(|i| format!("[{i}]")).unwrap_or_default();
                match &r.result {
                    Ok(value) => {
                        println!("  {}{index}: {}", r.property, named(object, r).text(value));
                    }
                    Err(ClientError::Error { error, .. }) => {
                        println!(
                            "  {}{index}: error {}:{}",
                            r.property, error.class, error.code
                        );
                    }
                    Err(other) => println!("  {}{index}: error {other}", r.property),
                }
            }
        }
    }
    if read == 0 && failed > 0 {
        return Err(format!("every one of the {failed} read(s) failed").into());
    }
    Ok(())
}

/// A read's error as JSON: class and code for a BACnet error, else its text.
fn client_error_json(error: &ClientError) -> Value {
    match error {
        ClientError::Error { error, .. } => error_json(error),
        other => json!({"message": other.to_string()}),
    }
}

fn wpm(args: WpmArgs) -> CommandResult {
    let mut specifications: Vec<WriteAccessSpecification> = Vec::new();
    for write in &args.writes {
        let (target, text) = write
            .split_once('=')
            .ok_or_else(|| format!("`{write}` is not OBJECT:PROP=VALUE (e.g. av,1:pv=72)"))?;
        let (object, property) = target
            .rsplit_once(':')
            .ok_or_else(|| format!("`{write}` is not OBJECT:PROP=VALUE (e.g. av,1:pv=72)"))?;
        let object = parse_object(object)?;
        let (property, array_index) = parse_property_index(property)?;
        let value = parse_value_text(text, args.value_type, object, property)?;
        let entry = PropertyValue {
            property,
            array_index,
            value,
            priority: args.priority,
        };
        match specifications.last_mut() {
            Some(last) if last.object == object => last.properties.push(entry),
            _ => specifications.push(WriteAccessSpecification {
                object,
                properties: vec![entry],
            }),
        }
    }
    let count = args.writes.len();
    on_client!(&args.client, &args.address, |client, to| client
        .write_multiple(to, specifications));
    if args.client.json {
        return print_json(&json!({"ok": true, "writes": count}));
    }
    println!("ok: {count} write(s) done");
    Ok(())
}

fn subscribe(args: SubscribeArgs) -> CommandResult {
    let object = parse_object(&args.object)?;
    let property = args
        .property
        .as_deref()
        .map(parse_property_index)
        .transpose()?
        .map(|(property, array_index)| PropertyReference {
            property,
            array_index,
        });
    let options = CovOptions {
        object,
        property,
        cov_increment: args.increment,
        confirmed: args.confirmed,
        lifetime: u32::try_from(args.lifetime.as_secs())
            .map_err(|_| "--lifetime is too long for BACnet (at most 136 years)")?,
    };
    let stop_after = args.duration;
    if args.client.sc.is_sc() {
        let to = sc::sc_device(&args.address)?;
        let tsm = client_tsm(&args.client)?;
        return runtime()?.block_on(async {
            let client = args.client.sc.client(tsm).await?;
            follow_cov(&client, to, options, &args, stop_after).await
        });
    }
    let to = args.client.foreign.target(&args.address)?;
    runtime()?.block_on(async {
        let client = start_client(&args.client, None).await?;
        follow_cov(&client, to, options, &args, stop_after).await
    })
}

/// Subscribes with `client` and prints notifications until the count, the duration or
/// Ctrl-C; then cancels on the device.
async fn follow_cov<A: buildwire_bacnet::network::LinkAddress + std::fmt::Display>(
    client: &BacnetClient<A>,
    to: buildwire_bacnet::network::DeviceAddress<A>,
    options: CovOptions,
    args: &SubscribeArgs,
    stop_after: Option<Duration>,
) -> CommandResult {
    let object = options.object;
    // A multi-state object's states are named by its state-text, read once here.
    let states = client.state_text(to, object).await;
    let named = |property, array_index| {
        let mut named = values::NamedValue::new(object, property, array_index);
        named.state_text.clone_from(&states);
        named
    };
    let mut subscription = client
        .subscribe_cov(to, options)
        .await
        .map_err(Box::<dyn std::error::Error>::from)?;
    eprintln!(
        "subscribed to {object} at {} (process {}, lifetime {} s, {})",
        args.address,
        subscription.process_identifier(),
        args.lifetime.as_secs(),
        if args.confirmed {
            "confirmed"
        } else {
            "unconfirmed"
        }
    );
    // Without --duration: no deadline to speak of (a year).
    let deadline =
        tokio::time::Instant::now() + stop_after.unwrap_or(Duration::from_secs(365 * 24 * 3600));
    let mut seen = 0u64;
    let mut stopped_by_ctrl_c = false;
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    if args.csv {
        println!(
            "{}",
            csv::line(&[
                "device",
                "object",
                "property",
                "value",
                "time_remaining",
                "time"
            ])
        );
    }
    while args.count.is_none_or(|count| seen < count) {
        // Ctrl-C and the end of --duration stop the loop; the subscription is then
        // cancelled on the device rather than left to its lifetime.
        let next = tokio::select! {
            next = subscription.next() => next,
            () = tokio::time::sleep_until(deadline) => break,
            _ = &mut interrupted => {
                stopped_by_ctrl_c = true;
                break;
            }
        };
        let Some(notification) = next else { break };
        seen += 1;
        // The notification carries no time: this is when it arrived.
        let time = utc_now();
        if args.client.json {
            let mut line = cov_notification_json_named(&notification, states.as_deref());
            line["time"] = Value::String(time);
            println!("{line}");
        } else if args.csv {
            let request = &notification.request;
            for value in &request.values {
                let property = match value.array_index {
                    Some(index) => format!("{}[{index}]", value.property),
                    None => value.property.to_string(),
                };
                let named = named(value.property, value.array_index);
                let fields = [
                    request.initiating_device.to_string(),
                    request.monitored_object.to_string(),
                    property,
                    named.text(&value.value),
                    request.time_remaining.to_string(),
                    time.clone(),
                ];
                println!("{}", csv::line(&fields));
            }
        } else {
            let values: Vec<String> = notification
                .request
                .values
                .iter()
                .map(|v| {
                    let named = named(v.property, v.array_index);
                    format!("{}={}", v.property, named.text(&v.value))
                })
                .collect();
            println!(
                "{time} {} {} (time remaining {} s)",
                notification.request.monitored_object,
                values.join(" "),
                notification.request.time_remaining
            );
        }
    }
    subscription.cancel().await;
    if stopped_by_ctrl_c {
        // Exit status 130, as for every command stopped with Ctrl-C.
        return Err(Box::new(Interrupted));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_property_indexes_parse() {
        assert_eq!(
            parse_address("127.0.0.1:47809").unwrap(),
            SocketAddrV4::new(Ipv4Addr::LOCALHOST, 47809)
        );
        assert_eq!(parse_address("127.0.0.1").unwrap().port(), BACNET_PORT);
        assert!(parse_address("not an address:1").is_err());
        assert_eq!(
            parse_property_index("priority-array[8]").unwrap(),
            (PropertyIdentifier::PriorityArray, Some(8))
        );
        assert_eq!(
            parse_property_index("pv").unwrap(),
            (PropertyIdentifier::PresentValue, None)
        );
        assert!(parse_property_index("pv[x]").is_err());
    }
}
