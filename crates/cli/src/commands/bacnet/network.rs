//! `buildwire bacnet router | bbmd | bdt | fdt`, the link options of `serve` (B/IPv6, foreign
//! device, BBMD) and of the client commands (`--foreign`), and routed device addresses
//! (`NETWORK:HEXMAC`, `NETWORK:HOST:PORT`).

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddrV4, SocketAddrV6};
use std::time::Duration;

use buildwire_bacnet::driver::bip::bbmd::{read_bdt, read_fdt};
use buildwire_bacnet::driver::{
    BacnetBbmd, BacnetRouter, BacnetServer, BacnetServerConfig, Bip6Config, Bip6Transport,
    BipConfig, interface_index,
};
use buildwire_bacnet::link::BdtEntry;
use buildwire_bacnet::link::bip6::Vmac;
use buildwire_bacnet::link::bip6::bvll::{BIP6_PORT, MULTICAST_LINK_LOCAL};
use buildwire_bacnet::link::{BbmdConfig, Bip6Role, BipRole, Foreign6Config, ForeignConfig};
use buildwire_bacnet::network::{DeviceAddress, MacAddress, RoutedAddress};
use buildwire_bacnet::objects::profile::DeviceProfile;
use buildwire_bacnet::tsm::TsmConfig;
use buildwire_bench::bacnet::profiles::stress_profile;
use clap::{Args, Subcommand, ValueEnum};
use serde_json::{Value, json};

use crate::commands::common::duration::parse_duration;
use crate::commands::common::report_timer::ReportTimer;
use crate::commands::common::result::CommandResult;
use crate::commands::common::service::ServiceArgs;
use crate::commands::common::signals::{StopSignals, stopped, wait_for_stop};

type BoxError = Box<dyn std::error::Error>;

/// Default BACnet/IP port.
const BACNET_PORT: u16 = 47808;

/// The network commands, flattened into `buildwire bacnet`.
#[derive(Debug, Subcommand)]
pub enum NetworkCommand {
    /// Route between BACnet networks: B/IP and B/IPv6 ports, each with a network number.
    #[command(
        after_help = "Each --port is NETWORK=bip:HOST:PORT or NETWORK=bip6:[ADDRESS]:PORT, \
        optionally followed by ,OPTION=VALUE: for bip `broadcast=IP`, `bdt=FILE` (the port is \
        also a BBMD); for bip6 `vmac=HEX6`, `interface=NAME`, `group=ADDRESS`.\n\n\
        Examples:\n  \
        buildwire bacnet router --port 1=bip:10.0.1.1:47808 --port \\\n      2=bip:10.0.2.1:47808\n  \
        buildwire bacnet router --port 1=bip:0.0.0.0:47808 --port \\\n      2=bip6:[::]:47808,interface=eth1,vmac=0000fe\n  \
        buildwire bacnet router --port 1=bip:10.0.1.1:47808 --port \\\n      2=bip:10.0.2.1:47808 \\\n      \
          --route 5=2:0a0002febac0 --device-id 500"
    )]
    Router(RouterArgs),
    /// Run a BBMD (Annex J): broadcast distribution between subnets, foreign devices.
    #[command(
        after_help = "The BDT file has one BBMD per line, ADDRESS:PORT[/MASK] (MASK a \
        prefix length or dotted; default /32, two-hop); this BBMD is added when missing.\n\n\
        Examples:\n  \
        buildwire bacnet bbmd --bind 10.0.1.1:47808 --bdt site.bdt\n  \
        buildwire bacnet bbmd --bind 10.0.1.1:47808 # foreign devices only"
    )]
    Bbmd(BbmdArgs),
    /// Read a BBMD's broadcast distribution table (Read-BDT).
    #[command(after_help = "Examples:\n  buildwire bacnet bdt 10.0.1.1:47808 --json")]
    Bdt(TableArgs),
    /// Read a BBMD's foreign device table (Read-FDT).
    #[command(after_help = "Examples:\n  buildwire bacnet fdt 10.0.1.1:47808 --json")]
    Fdt(TableArgs),
}

/// Runs a network command.
pub fn execute(command: NetworkCommand) -> CommandResult {
    match command {
        NetworkCommand::Router(args) => router(args),
        NetworkCommand::Bbmd(args) => bbmd(args),
        NetworkCommand::Bdt(args) => table(args, true),
        NetworkCommand::Fdt(args) => table(args, false),
    }
}

#[derive(Debug, Args)]
pub struct RouterArgs {
    /// A port: NETWORK=bip:HOST:PORT[,broadcast=IP][,bdt=FILE],
    /// NETWORK=bip6:[ADDRESS]:PORT[,vmac=HEX6][,interface=NAME][,group=ADDRESS] or
    /// NETWORK=sc:wss://HOST:PORT,cert=FILE,key=FILE,ca=FILE (a node of that BACnet/SC hub).
    #[arg(long = "port", required = true)]
    ports: Vec<String>,
    /// A static route: NETWORK=PORT_NETWORK:NEXT_HOP_HEXMAC (or NETWORK=PORT_NETWORK to
    /// broadcast on that port).
    #[arg(long = "route")]
    routes: Vec<String>,
    /// Host a device in the router with this instance (objects: --objects).
    #[arg(long)]
    device_id: Option<u32>,
    /// The hosted device's objects: `none` (the Device only) or `stress`.
    #[arg(long, default_value = "none")]
    objects: String,
    /// Accept Initialize-Routing-Table updates from the network.
    #[arg(long)]
    accept_routing_table_updates: bool,
    /// Print the routing table this often (0: never).
    #[arg(long, default_value = "0", value_name = "DURATION", value_parser = parse_duration)]
    report: Duration,
    /// Print JSON lines instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    service: ServiceArgs,
}

#[derive(Debug, Args)]
pub struct BbmdArgs {
    /// The BBMD's own address (a specific IP: peers and foreign devices know it by it).
    #[arg(long)]
    bind: String,
    /// The broadcast distribution table file.
    #[arg(long)]
    bdt: Option<String>,
    /// The subnet's broadcast address (default: x.y.z.255, 127.255.255.255 on loopback).
    #[arg(long)]
    broadcast: Option<Ipv4Addr>,
    /// Accept Write-BDT from the network.
    #[arg(long)]
    allow_write_bdt: bool,
    /// Most foreign devices registered at once.
    #[arg(long, default_value_t = 512)]
    max_foreign_devices: usize,
    /// Print the tables this often (0: never).
    #[arg(long, default_value = "0", value_name = "DURATION", value_parser = parse_duration)]
    report: Duration,
    /// Print JSON lines instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    service: ServiceArgs,
}

#[derive(Debug, Args)]
pub struct TableArgs {
    /// The BBMD, HOST:PORT.
    address: String,
    /// How long to wait for the answer.
    #[arg(long, default_value = "3s", value_name = "DURATION", value_parser = parse_duration)]
    timeout: Duration,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// The data link of `serve`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum LinkKind {
    /// BACnet/IP (Annex J).
    #[default]
    Bip,
    /// BACnet/IPv6 (Annex U).
    Bip6,
    /// BACnet Secure Connect (Annex AB): a node of the hub given with --hub.
    Sc,
}

/// Link options of `serve`.
#[derive(Debug, Args)]
pub struct ServeLinkArgs {
    /// The data link: `bip` (BACnet/IP), `bip6` (BACnet/IPv6; --bind then defaults to
    /// [::]:47808) or `sc` (BACnet/SC: a node of --hub, with --cert, --key and --ca).
    #[arg(long, value_enum, default_value_t = LinkKind::Bip)]
    transport: LinkKind,
    /// B/IPv6 virtual MAC, six hex digits (default: the device instance).
    #[arg(long)]
    vmac: Option<String>,
    /// B/IPv6: the interface to join the multicast group on (name or index).
    #[arg(long)]
    interface: Option<String>,
    /// B/IPv6 multicast group (default FF02::BAC0; FF05::BAC0 for site-local).
    #[arg(long)]
    group: Option<Ipv6Addr>,
    /// Register as a foreign device with this BBMD (HOST:PORT, or [ADDRESS]:PORT for bip6).
    #[arg(long)]
    foreign: Option<String>,
    /// Time-to-live of the foreign-device registration, seconds.
    #[arg(long, default_value_t = 300)]
    ttl: u16,
    /// Also be a BBMD with this broadcast distribution table file (bip only).
    #[arg(long = "bbmd-bdt")]
    bbmd_bdt: Option<String>,
}

/// `--foreign`, `--ttl` and `--router` of the client commands.
#[derive(Debug, Args)]
pub struct ForeignArgs {
    /// Register as a foreign device with this BBMD (HOST:PORT) first, so broadcasts reach
    /// its subnets.
    #[arg(long)]
    foreign: Option<String>,
    /// Time-to-live of the registration, seconds.
    #[arg(long, default_value_t = 60)]
    ttl: u16,
    /// The router (HOST:PORT) to a device written NETWORK:HEXMAC; without it the router is
    /// found with Who-Is-Router-To-Network, broadcast on the port --bind names.
    #[arg(long)]
    router: Option<String>,
}

impl ForeignArgs {
    /// The device at `address`, through `--router` when given.
    pub fn target(&self, address: &str) -> Result<DeviceAddress, BoxError> {
        let target = parse_target(address)?;
        match (&self.router, target) {
            (Some(router), DeviceAddress::Remote(remote)) => Ok(DeviceAddress::Via {
                router: host_port(router)?,
                remote,
            }),
            (Some(_), _) => Err("--router is for devices written NETWORK:HEXMAC".into()),
            (None, target) => Ok(target),
        }
    }

    /// Where route discovery broadcasts when the command has no broadcast address: the
    /// subnet's broadcast address on the bound port, when a port is named (broadcasts go
    /// to the sender's own port, so an ephemeral port reaches no router).
    pub fn discovery_broadcast(&self, bind: SocketAddrV4) -> Option<Ipv4Addr> {
        if bind.port() == 0 || self.router.is_some() {
            return None;
        }
        if bind.ip().is_unspecified() {
            return Some(Ipv4Addr::BROADCAST);
        }
        default_broadcast(bind)
    }

    /// The B/IP role these options ask for.
    pub fn role(&self) -> Result<BipRole, BoxError> {
        match &self.foreign {
            None => Ok(BipRole::Node),
            Some(bbmd) => Ok(BipRole::Foreign(ForeignConfig {
                bbmd: host_port(bbmd)?,
                time_to_live: self.ttl,
            })),
        }
    }
}

/// `HOST:PORT` or `HOST` (port 47808) as an IPv4 address.
fn host_port(text: &str) -> Result<SocketAddrV4, BoxError> {
    use std::net::ToSocketAddrs;
    let with_port = if text.contains(':') {
        text.to_owned()
    } else {
        format!("{text}:{BACNET_PORT}")
    };
    with_port
        .to_socket_addrs()
        .map_err(|e| format!("`{text}` is not a HOST:PORT address: {e}"))?
        .find_map(|a| match a {
            std::net::SocketAddr::V4(v4) => Some(v4),
            std::net::SocketAddr::V6(_) => None,
        })
        .ok_or_else(|| format!("`{text}` has no IPv4 address").into())
}

/// `[ADDRESS]:PORT`, `[ADDRESS]` or `ADDRESS` (port 47808) as an IPv6 address.
fn host_port6(text: &str) -> Result<SocketAddrV6, BoxError> {
    if let Ok(address) = text.parse::<SocketAddrV6>() {
        return Ok(address);
    }
    let bare = text.trim_start_matches('[').trim_end_matches(']');
    bare.parse::<Ipv6Addr>()
        .map(|ip| SocketAddrV6::new(ip, BIP6_PORT, 0, 0))
        .map_err(|_| format!("`{text}` is not [IPV6-ADDRESS]:PORT").into())
}

/// A device address as the client commands take it: `NETWORK:HEXMAC` or
/// `NETWORK:HOST:PORT` for a device behind a router, else `HOST[:PORT]` on this network.
pub fn parse_target(text: &str) -> Result<DeviceAddress, BoxError> {
    let text = text.trim();
    let routed_form = text.split_once(':').is_some_and(|(network, _)| {
        !network.is_empty() && network.bytes().all(|b| b.is_ascii_digit())
    });
    if routed_form {
        return text
            .parse::<RoutedAddress>()
            .map(DeviceAddress::Remote)
            .map_err(|e| e.to_string().into());
    }
    host_port(text).map(DeviceAddress::Local)
}

fn bdt_file(path: &str, own: SocketAddrV4) -> Result<Vec<BdtEntry>, BoxError> {
    buildwire_bacnet::driver::bip::bbmd::bdt_file(path, own).map_err(Into::into)
}

fn runtime() -> Result<tokio::runtime::Runtime, BoxError> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

fn default_broadcast(bind: SocketAddrV4) -> Option<Ipv4Addr> {
    BipConfig::with_default_broadcast(bind).broadcast
}

/// The B/IP role of `serve` (node, foreign device, or BBMD).
pub fn serve_bip_role(link: &ServeLinkArgs, bind: SocketAddrV4) -> Result<BipRole, BoxError> {
    match (&link.foreign, &link.bbmd_bdt) {
        (Some(_), Some(_)) => Err("--foreign and --bbmd-bdt exclude each other".into()),
        (Some(bbmd), None) => Ok(BipRole::Foreign(ForeignConfig {
            bbmd: host_port(bbmd)?,
            time_to_live: link.ttl,
        })),
        (None, Some(path)) => Ok(BipRole::Bbmd(BbmdConfig {
            bdt: bdt_file(path, bind)?,
            ..BbmdConfig::default()
        })),
        (None, None) => Ok(BipRole::Node),
    }
}

/// True when `serve` runs on BACnet/SC (then `bacnet_sc::serve_sc` serves).
pub fn is_sc(link: &ServeLinkArgs) -> bool {
    link.transport == LinkKind::Sc
}

/// True when `serve` runs on B/IPv6 (then [`serve_bip6`] serves).
pub fn is_bip6(link: &ServeLinkArgs) -> bool {
    link.transport == LinkKind::Bip6
}

/// `serve --transport bip6`: the device of `config` on B/IPv6. `bind_text` is what
/// --bind said (an IPv4 default is taken as [::]:47808).
pub fn serve_bip6(
    link: &ServeLinkArgs,
    bind_text: &str,
    config: BacnetServerConfig,
) -> CommandResult {
    let bind = if bind_text.starts_with('[') || bind_text.contains("::") {
        host_port6(bind_text)?
    } else {
        SocketAddrV6::new(Ipv6Addr::UNSPECIFIED, BACNET_PORT, 0, 0)
    };
    let device = config.database.device_identifier();
    let objects = config.database.len();
    let vmac = match &link.vmac {
        Some(text) => text.parse::<Vmac>()?,
        None => Vmac::from_device_instance(device.instance()),
    };
    let interface = link
        .interface
        .as_deref()
        .map(interface_index)
        .transpose()?
        .unwrap_or(0);
    let role = match (&link.foreign, &link.bbmd_bdt) {
        (Some(bbmd), _) => Bip6Role::Foreign(Foreign6Config {
            bbmd: host_port6(bbmd)?,
            time_to_live: link.ttl,
        }),
        (None, Some(_)) => {
            return Err(
                "--bbmd-bdt is for bip; a B/IPv6 BBMD runs with `bacnet router` or the API".into(),
            );
        }
        (None, None) => Bip6Role::Node,
    };
    let transport_config = Bip6Config {
        multicast: Some(link.group.unwrap_or(MULTICAST_LINK_LOCAL)),
        multicast_port: if bind.port() == 0 {
            BACNET_PORT
        } else {
            bind.port()
        },
        interface,
        role,
        ..Bip6Config::new(bind, vmac)
    };
    runtime()?.block_on(async move {
        let signals = StopSignals::listen()?;
        let transport = Bip6Transport::bind(&transport_config)
            .await
            .map_err(|e| format!("cannot bind [{}]:{}: {e}", bind.ip(), bind.port()))?;
        let local = transport.local_addr();
        let server = BacnetServer::start_on(transport, config).await?;
        crate::say!(
            "serving {device} with {objects} objects on [{}]:{} vmac {} (Ctrl-C stops)",
            local.ip(),
            local.port(),
            server.local_addr()
        );
        let signal = wait_for_stop(signals, "answering the requests in flight").await;
        server.shutdown().await;
        stopped(signal)
    })
}

fn mac_text(mac: &MacAddress) -> String {
    mac.as_bytes().iter().map(|b| format!("{b:02x}")).collect()
}

fn routes_json(router: &BacnetRouter) -> Value {
    let routes: Vec<Value> = router
        .routes()
        .into_iter()
        .map(|(network, route)| {
            json!({
                "network": network,
                "port": route.port + 1,
                "next_hop": route.next_hop.as_ref().map(mac_text),
                "static": route.origin == buildwire_bacnet::router::RouteOrigin::Static,
            })
        })
        .collect();
    let ports: Vec<Value> = router
        .port_stats()
        .into_iter()
        .map(|(network, received, sent, dropped)| {
            json!({"network": network, "received": received, "sent": sent, "dropped": dropped})
        })
        .collect();
    let stats = router.stats();
    json!({
        "routes": routes,
        "ports": ports,
        "routed": stats.routed,
        "rejects_sent": stats.rejects_sent,
        "loops_dropped": stats.loops,
        "hop_count_exhausted": stats.hop_count_exhausted,
        "malformed": stats.malformed,
    })
}

fn router(args: RouterArgs) -> CommandResult {
    args.service.start_logs()?;
    let device = match args.device_id {
        None => None,
        Some(instance) => {
            let mut profile = match args.objects.as_str() {
                "stress" => stress_profile(),
                "none" => DeviceProfile {
                    device: buildwire_bacnet::objects::device::DeviceConfig {
                        name: format!("Router-{instance}"),
                        ..Default::default()
                    },
                    objects: Vec::new(),
                },
                other => return Err(format!("--objects {other:?}: use none or stress").into()),
            };
            profile.device.instance = instance;
            Some((profile.build()?, TsmConfig::default()))
        }
    };
    runtime()?.block_on(async move {
        let signals = StopSignals::listen()?;
        let router = BacnetRouter::start_from_text(
            &args.ports,
            &args.routes,
            args.accept_routing_table_updates,
            device,
        )
        .await?;
        let ports = router.describe_ports();
        if args.json {
            let described: Vec<Value> = ports.iter().map(|port| port.to_json()).collect();
            crate::say!("{}", json!({"event": "started", "ports": described}));
        } else {
            for port in &ports {
                crate::say!("{port}");
            }
            crate::say!("routing (Ctrl-C stops)");
        }
        let stop = wait_for_stop(signals, "routing ends");
        tokio::pin!(stop);
        let mut reports = ReportTimer::every(args.report);
        loop {
            tokio::select! {
                signal = &mut stop => {
                    router.shutdown().await;
                    return stopped(signal);
                }
                () = reports.tick() => {}
            }
            let report = routes_json(&router);
            if args.json {
                crate::say!("{}", json!({"event": "report", "router": report}));
            } else {
                crate::say!("{}", serde_json::to_string(&report)?);
            }
        }
    })
}

fn bdt_json(entries: &[BdtEntry]) -> Value {
    Value::Array(
        entries
            .iter()
            .map(|e| json!({"address": e.address.to_string(), "mask": e.mask.to_string()}))
            .collect(),
    )
}

fn fdt_json(entries: &[buildwire_bacnet::link::FdtEntry]) -> Value {
    Value::Array(
        entries
            .iter()
            .map(|e| json!({"address": e.address.to_string(), "ttl": e.time_to_live, "remaining": e.remaining}))
            .collect(),
    )
}

fn bbmd(args: BbmdArgs) -> CommandResult {
    args.service.start_logs()?;
    let bind = host_port(&args.bind)?;
    if bind.ip().is_unspecified() {
        return Err("--bind needs the BBMD's own IP address (not 0.0.0.0): peers and foreign devices know it by it".into());
    }
    let bdt = match &args.bdt {
        Some(path) => bdt_file(path, bind)?,
        None => vec![BdtEntry {
            address: bind,
            mask: Ipv4Addr::BROADCAST,
        }],
    };
    let config = BbmdConfig {
        bdt,
        allow_write_bdt: args.allow_write_bdt,
        max_foreign_devices: args.max_foreign_devices,
        ..BbmdConfig::default()
    };
    let broadcast = args.broadcast.or_else(|| default_broadcast(bind));
    runtime()?.block_on(async move {
        let signals = StopSignals::listen()?;
        let running = BacnetBbmd::start(&BipConfig { bind, broadcast }, config)
            .await
            .map_err(|e| format!("cannot bind {bind}: {e}"))?;
        if args.json {
            crate::say!("{}", json!({"event": "started", "address": running.local_addr().to_string(), "bdt": bdt_json(&running.bdt())}));
        } else {
            crate::say!("BBMD on {} with {} BDT entries (Ctrl-C stops)", running.local_addr(), running.bdt().len());
        }
        let stop = wait_for_stop(signals, "forwarding ends");
        tokio::pin!(stop);
        let mut reports = ReportTimer::every(args.report);
        loop {
            tokio::select! {
                signal = &mut stop => {
                    running.shutdown();
                    return stopped(signal);
                }
                () = reports.tick() => {}
            }
            let stats = running.stats();
            let report = json!({"bdt": bdt_json(&running.bdt()), "fdt": fdt_json(&running.fdt()),
                "forwarded": stats.forwarded, "registrations": stats.registrations,
                "naks": stats.naks, "rate_limited": stats.rate_limited});
            if args.json {
                crate::say!("{}", json!({"event": "report", "bbmd": report}));
            } else {
                crate::say!("{report}");
            }
        }
    })
}

fn table(args: TableArgs, bdt: bool) -> CommandResult {
    let address = host_port(&args.address)?;
    let wait = args.timeout;
    runtime()?.block_on(async move {
        if bdt {
            let entries = read_bdt(address, wait).await?;
            if args.json {
                println!("{}", serde_json::to_string_pretty(&bdt_json(&entries))?);
            } else {
                for entry in &entries {
                    println!("{} mask {}", entry.address, entry.mask);
                }
                println!("{} BDT entries", entries.len());
            }
        } else {
            let entries = read_fdt(address, wait).await?;
            if args.json {
                println!("{}", serde_json::to_string_pretty(&fdt_json(&entries))?);
            } else {
                for entry in &entries {
                    println!(
                        "{} ttl {} s, {} s left",
                        entry.address, entry.time_to_live, entry.remaining
                    );
                }
                println!("{} foreign devices", entries.len());
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_local_and_routed() {
        assert_eq!(
            parse_target("127.0.0.1:47809").unwrap(),
            DeviceAddress::Local("127.0.0.1:47809".parse().unwrap())
        );
        assert_eq!(
            parse_target("2:0a000005bac0").unwrap().to_string(),
            "2:0a000005bac0"
        );
        assert_eq!(
            parse_target("2:10.0.0.5:47808").unwrap().to_string(),
            "2:0a000005bac0"
        );
        assert!(parse_target("2:zz").is_err());
    }
}
