//! The BACnet benchmark suite: bac-py's published scenarios (BACnet/IP, router, BBMD) with
//! its worker mix, against buildwire's 40-object stress server (or any device at
//! `--target`), every answer checked, executed requests counted on the server, and the raw
//! UDP limit measured in the same run.
//!
//! - [`profiles`]: the `stress` and `large` devices the benchmarks serve;
//! - [`workload`]: the workers and how their answers are checked;
//! - [`run_scenario`]: starts the server (and router or BBMD), the pools of workers, and
//!   measures a warm-up and a sustained phase;
//! - [`BacnetOutcome`]: what a run measured, serialized as a superset of bac-py's report.

pub mod compare;
pub mod orchestrate;
pub mod peer;
mod phases;
pub mod profiles;
pub mod render;
pub mod route_check;
pub mod sc;
pub mod sc_run;
pub mod workload;

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::Arc;
use std::time::Duration;

use buildwire_bacnet::driver::{
    BacnetClient, BacnetRouter, BacnetServer, BacnetServerConfig, BipConfig, BipTransport,
    ClientConfig, RouterOptions, RouterPort,
};
use buildwire_bacnet::link::BdtEntry;
use buildwire_bacnet::link::{BbmdConfig, BipRole, ForeignConfig};
use buildwire_bacnet::network::{DeviceAddress, MacAddress, RoutedAddress};
use serde::Serialize;

use crate::stats::{LatencyHistogram, LatencySummary};
use phases::RunningWorkers;
pub use phases::StepError;
use profiles::stress_profile;
use workload::{Operation, STRESS_AV, WireSize, Worker, WrittenValues};

/// Which published scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scenario {
    /// Clients and the stress server on one B/IP network.
    Bip,
    /// Clients on network 1, the server on network 2, buildwire's router between.
    Router,
    /// Clients registered as foreign devices with the server, which is a BBMD.
    Bbmd,
}

impl Scenario {
    /// The published error-rate threshold (0.5 %, 1 % through the router).
    pub const fn error_threshold(self) -> f64 {
        match self {
            Self::Router => 0.01,
            Self::Bip | Self::Bbmd => 0.005,
        }
    }

    /// The name in reports.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Bip => "bip",
            Self::Router => "router",
            Self::Bbmd => "bbmd",
        }
    }
}

/// Workers per pool and extra single workers.
#[derive(Clone, Debug, Serialize)]
pub struct Mix {
    /// Pools: each is one client (one socket, one invoke-id space) with its workers.
    pub pools: usize,
    /// ReadProperty workers per pool.
    pub readers: usize,
    /// WriteProperty workers per pool.
    pub writers: usize,
    /// ReadPropertyMultiple workers per pool.
    pub rpm: usize,
    /// WritePropertyMultiple workers per pool.
    pub wpm: usize,
    /// Object-list readers (in the first pool).
    pub objlist: usize,
    /// COV subscribers (in the first pool; none through the router).
    pub cov: usize,
    /// FDT readers (BBMD scenario).
    pub fdt: usize,
    /// BDT readers (BBMD scenario).
    pub bdt: usize,
}

impl Mix {
    /// The published mix of a scenario with `pools` pools.
    pub fn published(scenario: Scenario, pools: usize) -> Self {
        Self {
            pools,
            readers: 2,
            writers: 1,
            rpm: 1,
            wpm: 1,
            objlist: 1,
            cov: usize::from(scenario == Scenario::Bip),
            fdt: usize::from(scenario == Scenario::Bbmd),
            bdt: usize::from(scenario == Scenario::Bbmd),
        }
    }

    /// Workers sending requests at once.
    pub fn concurrency(&self) -> usize {
        self.pools * (self.readers + self.writers + self.rpm + self.wpm)
            + self.objlist
            + self.cov
            + self.fdt
            + self.bdt
    }
}

/// How a run goes.
#[derive(Clone, Debug, Serialize)]
pub struct BacnetRunConfig {
    /// The scenario.
    pub scenario: Scenario,
    /// The workers.
    pub mix: Mix,
    /// Seconds before measuring.
    #[serde(rename = "warmup_s")]
    pub warmup: f64,
    /// Seconds measured.
    #[serde(rename = "sustain_s")]
    pub sustain: f64,
    /// Pause after an error before the worker's next request, seconds.
    #[serde(rename = "error_backoff_s")]
    pub error_backoff: f64,
    /// Port of the in-process server (0: any free port).
    pub port: u16,
    /// A device with the stress objects to aim at instead of the in-process server
    /// (executed requests are then unknown unless a probe is given). In the BBMD scenario it
    /// must also be the BBMD the clients register with; in the router scenario it is the
    /// device on network 2 behind [`BacnetRunConfig::via_router`].
    pub target: Option<SocketAddrV4>,
    /// The router scenario with the router outside this process: its network-1 address.
    pub via_router: Option<SocketAddrV4>,
    /// The clients' side when the other parts run on other hosts (`--netns`); `None` on
    /// 127.0.0.1.
    pub clients: Option<ClientSide>,
}

/// The clients' addresses on a link to other hosts.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ClientSide {
    /// The clients bind this address.
    pub ip: Ipv4Addr,
    /// The route check's own address on the same link.
    pub check_ip: Ipv4Addr,
    /// The link's broadcast address.
    pub broadcast: Ipv4Addr,
}

/// Counts and latency of one operation.
#[derive(Clone, Debug, Default)]
struct OpTally {
    sent: u64,
    answered: u64,
    errors: u64,
    request_bytes: u64,
    response_bytes: u64,
    histogram: LatencyHistogram,
    first_error: Option<String>,
}

impl OpTally {
    fn merge(&mut self, other: &OpTally) {
        self.sent += other.sent;
        self.answered += other.answered;
        self.errors += other.errors;
        self.request_bytes += other.request_bytes;
        self.response_bytes += other.response_bytes;
        self.histogram.merge(&other.histogram);
        if self.first_error.is_none() {
            self.first_error.clone_from(&other.first_error);
        }
    }
}

/// Latency as bac-py names it (`mean`, `p50`, `p95`, `p99`, all in ms), plus `max` and
/// `count`.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Latency {
    /// Samples.
    pub count: u64,
    /// Mean, ms.
    pub mean: f64,
    /// Median, ms.
    pub p50: f64,
    /// 95th percentile, ms.
    pub p95: f64,
    /// 99th percentile, ms.
    pub p99: f64,
    /// Largest, ms.
    pub max: f64,
}

impl From<LatencySummary> for Latency {
    fn from(s: LatencySummary) -> Self {
        Self {
            count: s.count,
            mean: s.mean_ms,
            p50: s.p50_ms,
            p95: s.p95_ms,
            p99: s.p99_ms,
            max: s.max_ms,
        }
    }
}

/// One operation's line of the report.
#[derive(Clone, Debug, Serialize)]
pub struct OperationReport {
    /// Requests sent in the sustained phase.
    pub sent: u64,
    /// Answers received and checked correct.
    pub answered: u64,
    /// Failures: timeouts, errors, wrong answers.
    pub errors: u64,
    /// Answered per second.
    pub throughput_rps: f64,
    /// Latency in milliseconds.
    pub latency_ms: Latency,
    /// The first failure, to tell what went wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
}

/// A phase (warm-up or sustained) as bac-py reports it, with more.
#[derive(Clone, Debug, Serialize)]
pub struct PhaseReport {
    /// Seconds the phase lasted.
    pub duration_s: f64,
    /// Requests sent.
    pub total_requests: u64,
    /// Answers checked correct.
    pub answered: u64,
    /// Failures.
    pub total_errors: u64,
    /// Failures / requests.
    pub error_rate: f64,
    /// Answers per second.
    pub throughput_rps: f64,
    /// Confirmed requests the server executed in the phase (`null` for a foreign target).
    pub executed: Option<u64>,
    /// Executed per second.
    pub executed_rps: Option<f64>,
    /// Answers the server resent from its response cache without executing the request
    /// (a repeated peer, invoke id and request bytes: invoke ids wrap, and the same read
    /// comes again); `answered` minus these is what was executed.
    pub replayed_from_cache: Option<u64>,
    /// Confirmed requests answered (the link-layer table reads and route checks are not
    /// confirmed requests), to hold against `executed`.
    pub confirmed_answered: u64,
    /// Latency over all operations.
    pub latency_ms: Latency,
    /// Per operation.
    pub operations: BTreeMap<String, OperationReport>,
}

/// The raw UDP limit with the same concurrency and mean packet sizes.
#[derive(Clone, Debug, Serialize)]
pub struct LimitReport {
    /// Requests outstanding at once.
    pub in_flight: usize,
    /// Mean request datagram of the mix, bytes.
    pub request_size: usize,
    /// Mean answer datagram of the mix, bytes.
    pub response_size: usize,
    /// Round trips per second.
    pub throughput_rps: f64,
    /// Latency.
    pub latency_ms: Latency,
    /// Our answered throughput as a fraction of the limit.
    pub fraction_of_limit: f64,
    /// Where the loop ran: `127.0.0.1`, or across the veth link to a namespace (`--netns`).
    pub path: String,
}

/// What a run measured; JSON is a superset of bac-py's report.
#[derive(Clone, Debug, Serialize)]
pub struct BacnetOutcome {
    /// `bip`, `router` or `bbmd`.
    pub mode: String,
    /// `udp` (BACnet/IP).
    pub transport: String,
    /// The options.
    pub config: BacnetRunConfig,
    /// Workers running at once.
    pub concurrency: usize,
    /// The warm-up phase.
    pub warmup: PhaseReport,
    /// The measured phase.
    pub sustained: PhaseReport,
    /// The error-rate threshold of the scenario.
    pub error_threshold: f64,
    /// True when the sustained error rate is at or below the threshold.
    pub passed: bool,
    /// Where the run went: `in-process` or the target's address.
    pub server: String,
    /// Resident memory of this process at the end (server and clients), MiB.
    pub resident_mib: Option<f64>,
    /// Resident memory of the server process at the end, when it ran in its own, MiB.
    pub server_resident_mib: Option<f64>,
    /// Resident memory of the router process at the end (router scenario with
    /// `--processes`), MiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub router_resident_mib: Option<f64>,
    /// Answered per second, every 250 ms of the sustained phase.
    pub throughput_timeline: Vec<(f64, f64)>,
    /// The raw UDP limit, when measured.
    pub limit: Option<LimitReport>,
    /// The latency histogram of the sustained phase (for plots).
    #[serde(skip)]
    pub histogram: LatencyHistogram,
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum BacnetBenchError {
    /// A socket or task failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Options that do not fit together.
    #[error("{0}")]
    Config(String),
}

/// The parts a scenario started, kept alive for the run.
struct Setup {
    target: DeviceAddress,
    server: Option<BacnetServer>,
    router: Option<BacnetRouter>,
    link_peer: Option<SocketAddrV4>,
    remote_network: u16,
    role: BipRole,
}

const LOOPBACK: Ipv4Addr = Ipv4Addr::LOCALHOST;
const LOOPBACK_BROADCAST: Ipv4Addr = Ipv4Addr::new(127, 255, 255, 255);
/// The server's network in the router scenario.
pub const SERVER_NETWORK: u16 = 2;
/// How often the router health check runs, as published.
const ROUTE_CHECK_EVERY: Duration = Duration::from_secs(10);

fn server_config(
    bind: SocketAddrV4,
    role: BipRole,
) -> Result<BacnetServerConfig, BacnetBenchError> {
    let database = stress_profile()
        .build()
        .map_err(|e| BacnetBenchError::Config(e.to_string()))?;
    let mut config = BacnetServerConfig::new(bind, database);
    config.broadcast = None;
    config.announce = false;
    config.role = role;
    Ok(config)
}

async fn set_up(config: &BacnetRunConfig) -> Result<Setup, BacnetBenchError> {
    if let Some(target) = config.target {
        return Ok(match (config.scenario, config.via_router) {
            (Scenario::Bip, _) => Setup {
                target: DeviceAddress::Local(target),
                server: None,
                router: None,
                link_peer: None,
                remote_network: 0,
                role: BipRole::Node,
            },
            // The device is the BBMD: the clients register with it as foreign devices.
            (Scenario::Bbmd, _) => Setup {
                target: DeviceAddress::Local(target),
                server: None,
                router: None,
                link_peer: Some(target),
                remote_network: 0,
                role: BipRole::Foreign(ForeignConfig {
                    bbmd: target,
                    time_to_live: 300,
                }),
            },
            (Scenario::Router, Some(router)) => Setup {
                target: DeviceAddress::Via {
                    router,
                    remote: routed_server(target)?,
                },
                server: None,
                router: None,
                link_peer: Some(router),
                remote_network: SERVER_NETWORK,
                role: BipRole::Node,
            },
            (Scenario::Router, None) => {
                return Err(BacnetBenchError::Config(
                    "the router scenario reaches a device outside this process only through \
                     a router outside it too (--processes starts both)"
                        .into(),
                ));
            }
        });
    }
    let bind = SocketAddrV4::new(LOOPBACK, config.port);
    match config.scenario {
        Scenario::Bip => {
            let server = BacnetServer::start(server_config(bind, BipRole::Node)?).await?;
            Ok(Setup {
                target: DeviceAddress::Local(server.local_addr()),
                server: Some(server),
                router: None,
                link_peer: None,
                remote_network: 0,
                role: BipRole::Node,
            })
        }
        Scenario::Bbmd => {
            // The server is the BBMD; its BDT holds itself.
            let own = if config.port == 0 {
                free_udp_port()?
            } else {
                config.port
            };
            let bind = SocketAddrV4::new(LOOPBACK, own);
            let role = bbmd_role(bind);
            let server = BacnetServer::start(server_config(bind, role)?).await?;
            let at = server.local_addr();
            Ok(Setup {
                target: DeviceAddress::Local(at),
                server: Some(server),
                router: None,
                link_peer: Some(at),
                remote_network: 0,
                role: BipRole::Foreign(ForeignConfig {
                    bbmd: at,
                    time_to_live: 300,
                }),
            })
        }
        Scenario::Router => {
            // Network 2: the server and the router's second port.
            let server = BacnetServer::start(server_config(
                SocketAddrV4::new(LOOPBACK, 0),
                BipRole::Node,
            )?)
            .await?;
            let server_at = server.local_addr();
            let (router, router_at) = start_router(config.port).await?;
            Ok(Setup {
                target: DeviceAddress::Via {
                    router: router_at,
                    remote: routed_server(server_at)?,
                },
                server: Some(server),
                router: Some(router),
                link_peer: Some(router_at),
                remote_network: SERVER_NETWORK,
                role: BipRole::Node,
            })
        }
    }
}

/// The router scenario's router on 127.0.0.1: network 1 on `port` (0: a free one, with
/// the loopback broadcast address), network 2 on any free port. Returns it and its
/// network-1 address.
pub async fn start_router(port: u16) -> Result<(BacnetRouter, SocketAddrV4), BacnetBenchError> {
    let port_1 = if port == 0 { free_udp_port()? } else { port };
    start_router_on(
        BipConfig {
            bind: SocketAddrV4::new(LOOPBACK, port_1),
            broadcast: Some(LOOPBACK_BROADCAST),
        },
        BipConfig {
            bind: SocketAddrV4::new(LOOPBACK, 0),
            broadcast: None,
        },
    )
    .await
}

/// The router scenario's router with network 1 and network 2 on the given B/IP ports.
pub async fn start_router_on(
    network_1: BipConfig,
    network_2: BipConfig,
) -> Result<(BacnetRouter, SocketAddrV4), BacnetBenchError> {
    let network_1 = BipTransport::bind(&network_1).await?;
    let network_2 = BipTransport::bind(&network_2).await?;
    let router_at = network_1.local_addr();
    let router = BacnetRouter::start(
        vec![
            RouterPort::Bip {
                network: 1,
                transport: network_1,
            },
            RouterPort::Bip {
                network: SERVER_NETWORK,
                transport: network_2,
            },
        ],
        RouterOptions::default(),
    )
    .await?;
    Ok((router, router_at))
}

/// The role of the BBMD scenario's server: a BBMD whose BDT holds itself.
pub fn bbmd_role(bind: SocketAddrV4) -> BipRole {
    BipRole::Bbmd(BbmdConfig {
        bdt: vec![BdtEntry {
            address: bind,
            mask: Ipv4Addr::BROADCAST,
        }],
        max_foreign_devices: 1024,
        // The BBMD's limit on what it sends on its own initiative (table answers, NAKs)
        // protects a real site from floods; the FDT and BDT readers here ask back to back,
        // so it is raised to measure the BBMD, not its limiter.
        rate: 1_000_000,
        burst: 1_000_000,
        ..BbmdConfig::default()
    })
}

/// The server on network 2 as the router scenario's clients address it.
fn routed_server(server: SocketAddrV4) -> Result<RoutedAddress, BacnetBenchError> {
    let mac = MacAddress::new(&bip_mac(server))
        .ok_or_else(|| BacnetBenchError::Config("bad server MAC".into()))?;
    Ok(RoutedAddress {
        network: SERVER_NETWORK,
        mac,
    })
}

/// A B/IP MAC: the IPv4 address and the port.
fn bip_mac(at: SocketAddrV4) -> [u8; 6] {
    let [a, b, c, d] = at.ip().octets();
    let [p, q] = at.port().to_be_bytes();
    [a, b, c, d, p, q]
}

fn free_udp_port() -> std::io::Result<u16> {
    Ok(std::net::UdpSocket::bind((LOOPBACK, 0))?
        .local_addr()?
        .port())
}

/// What the runner reports while it runs: phase, seconds into it, answered so far in it.
pub type BacnetProgress<'a> = &'a (dyn Fn(&str, f64, u64) + Sync);

/// Spreads writers over the 5 AVs; returns each worker's AV and the writer count per AV.
fn plan_writers(mix: &Mix) -> (Vec<u32>, Vec<u32>) {
    let total = mix.pools * (mix.writers + mix.wpm);
    let avs: Vec<u32> = (0..total).map(|i| (i as u32 % STRESS_AV) + 1).collect();
    let mut per_av = vec![0u32; STRESS_AV as usize];
    for av in &avs {
        if let Some(count) = per_av.get_mut((*av - 1) as usize) {
            *count += 1;
        }
    }
    (avs, per_av)
}

/// Runs a scenario: warm-up, then the measured phase; the UDP limit is measured after by the
/// caller with [`limit_for`].
/// `executed_probe` counts the requests a server outside this process executed (a peer's
/// launcher); the in-process server is asked directly.
pub async fn run_scenario(
    config: &BacnetRunConfig,
    progress: BacnetProgress<'_>,
    executed_probe: Option<&(dyn Fn() -> Option<u64> + Sync)>,
) -> Result<BacnetOutcome, BacnetBenchError> {
    let warmup = Duration::try_from_secs_f64(config.warmup)
        .map_err(|_| BacnetBenchError::Config("--warmup is not a number of seconds".into()))?;
    let sustain = Duration::try_from_secs_f64(config.sustain)
        .map_err(|_| BacnetBenchError::Config("--sustain is not a number of seconds".into()))?;
    let backoff = Duration::try_from_secs_f64(config.error_backoff).map_err(|_| {
        BacnetBenchError::Config("--error-backoff is not a number of seconds".into())
    })?;
    let mix = &config.mix;
    if mix.pools == 0 || mix.concurrency() == 0 {
        return Err(BacnetBenchError::Config(
            "no workers: give --pools 1 or more".into(),
        ));
    }
    let setup = set_up(config).await?;
    let (writer_avs, per_av) = plan_writers(mix);
    let written = Arc::new(WrittenValues::new(&per_av));
    let mut workers = Vec::new();
    let mut writer_index = 0usize;
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for pool in 0..mix.pools {
        let client_ip = config.clients.map_or(LOOPBACK, |c| c.ip);
        let mut client_config = ClientConfig::new(SocketAddrV4::new(client_ip, 0), None);
        client_config.role = setup.role.clone();
        // Every worker of the pool may be waiting on an answer at once.
        client_config.max_concurrent_per_device = mix.concurrency().max(1);
        let client = Arc::new(BacnetClient::start(client_config).await?);
        let mut ops = Vec::new();
        ops.extend(std::iter::repeat_n(Operation::ReadProperty, mix.readers));
        ops.extend(std::iter::repeat_n(Operation::WriteProperty, mix.writers));
        ops.extend(std::iter::repeat_n(
            Operation::ReadPropertyMultiple,
            mix.rpm,
        ));
        ops.extend(std::iter::repeat_n(
            Operation::WritePropertyMultiple,
            mix.wpm,
        ));
        if pool == 0 {
            ops.extend(std::iter::repeat_n(Operation::ObjectList, mix.objlist));
            ops.extend(std::iter::repeat_n(Operation::Cov, mix.cov));
            ops.extend(std::iter::repeat_n(Operation::ReadFdt, mix.fdt));
            ops.extend(std::iter::repeat_n(Operation::ReadBdt, mix.bdt));
            if config.scenario == Scenario::Router {
                ops.push(Operation::RouteCheck);
            }
        }
        for (i, operation) in ops.into_iter().enumerate() {
            let av = match operation {
                Operation::WriteProperty | Operation::WritePropertyMultiple => {
                    let av = writer_avs.get(writer_index).copied().unwrap_or(1);
                    writer_index += 1;
                    av
                }
                // The RPM and COV workers look at the AV this pool's first writer commands.
                _ => writer_avs
                    .get(pool * (mix.writers + mix.wpm))
                    .copied()
                    .unwrap_or((((pool + i) as u32) % STRESS_AV) + 1),
            };
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            workers.push(Worker {
                operation,
                client: Arc::clone(&client),
                target: setup.target,
                av,
                written: Arc::clone(&written),
                link_peer: setup.link_peer,
                remote_network: setup.remote_network,
                check_from: config
                    .clients
                    .map_or_else(route_check::CheckFrom::default, |c| {
                        route_check::CheckFrom {
                            ip: c.check_ip,
                            broadcast: c.broadcast,
                        }
                    }),
                rng: seed,
                sequence: 0,
                object_list: None,
            });
        }
    }
    let concurrency = workers.len();
    let running = RunningWorkers::spawn(workers, backoff);

    let executed = || match &setup.server {
        Some(s) => {
            let (server, tsm) = s.stats();
            Some((server.requests, Some(tsm.cache_hits)))
        }
        None => executed_probe.and_then(|probe| probe()).map(|n| (n, None)),
    };
    let warm_seconds = running.warm_up(warmup, progress).await;
    let executed_at_start = executed();
    let warm_executed = executed_at_start;
    let (seconds, timeline) = running.sustain(sustain, progress).await;
    let executed_at_end = executed();
    let (warm_ops, hot_ops) = running.stop().await;
    let executed_sustained = match (executed_at_start, executed_at_end) {
        (Some(a), Some(b)) => Some((
            b.0.saturating_sub(a.0),
            b.1.zip(a.1).map(|(b, a)| b.saturating_sub(a)),
        )),
        _ => None,
    };
    let warmup_report = operations_report(&warm_ops, warm_seconds, warm_executed);
    let sustained = operations_report(&hot_ops, seconds, executed_sustained);
    let mut histogram = LatencyHistogram::new();
    for tally in hot_ops.values() {
        histogram.merge(&tally.histogram);
    }
    let passed =
        sustained.total_requests > 0 && sustained.error_rate <= config.scenario.error_threshold();
    // Sizes of the mix, for the limit.
    let (req, resp, n) = hot_ops.values().fold((0u64, 0u64, 0u64), |acc, t| {
        (
            acc.0 + t.request_bytes,
            acc.1 + t.response_bytes,
            acc.2 + t.answered,
        )
    });
    let mean_size = WireSize {
        request: (req / n.max(1)) as usize,
        response: (resp / n.max(1)) as usize,
    };
    if let Some(router) = setup.router {
        router.shutdown().await;
    }
    if let Some(server) = setup.server {
        server.shutdown().await;
    }
    let server = match (config.target, config.via_router) {
        (None, _) => "in-process".to_owned(),
        (Some(target), None) => target.to_string(),
        (Some(target), Some(router)) => format!("{target} via router {router}"),
    };
    Ok(BacnetOutcome {
        mode: config.scenario.name().to_owned(),
        transport: "udp".to_owned(),
        config: config.clone(),
        concurrency,
        warmup: warmup_report,
        sustained,
        error_threshold: config.scenario.error_threshold(),
        passed,
        server,
        resident_mib: resident_mib(),
        server_resident_mib: None,
        router_resident_mib: None,
        throughput_timeline: timeline,
        limit: Some(LimitReport {
            in_flight: concurrency,
            request_size: mean_size.request.max(crate::limit::MIN_MESSAGE),
            response_size: mean_size.response.max(crate::limit::MIN_MESSAGE),
            throughput_rps: 0.0,
            latency_ms: Latency::default(),
            fraction_of_limit: 0.0,
            path: "127.0.0.1".to_owned(),
        }),
        histogram,
    })
}

fn operations_report(
    ops: &BTreeMap<Operation, OpTally>,
    seconds: f64,
    executed: Option<(u64, Option<u64>)>,
) -> PhaseReport {
    phase_report(
        ops.iter()
            .map(|(op, tally)| (op.name(), tally, op.confirmed_requests())),
        seconds,
        executed,
    )
}

/// A phase's report from each operation's name, tally and the server-side work one answer
/// stands for (confirmed requests; echoes in the SC scenario).
fn phase_report<'a>(
    ops: impl Iterator<Item = (&'a str, &'a OpTally, u64)>,
    seconds: f64,
    executed: Option<(u64, Option<u64>)>,
) -> PhaseReport {
    let mut all = OpTally::default();
    let mut confirmed_answered = 0;
    let mut operations = BTreeMap::new();
    let per_sec = |n: u64| {
        if seconds > 0.0 {
            n as f64 / seconds
        } else {
            0.0
        }
    };
    for (name, tally, work) in ops {
        all.merge(tally);
        confirmed_answered += tally.answered * work;
        operations.insert(
            name.to_owned(),
            OperationReport {
                sent: tally.sent,
                answered: tally.answered,
                errors: tally.errors,
                throughput_rps: per_sec(tally.answered),
                latency_ms: tally.histogram.summary().into(),
                first_error: tally.first_error.clone(),
            },
        );
    }
    PhaseReport {
        duration_s: seconds,
        total_requests: all.sent,
        answered: all.answered,
        total_errors: all.errors,
        error_rate: if all.sent == 0 {
            0.0
        } else {
            all.errors as f64 / all.sent as f64
        },
        throughput_rps: per_sec(all.answered),
        executed: executed.map(|e| e.0),
        executed_rps: executed.map(|e| per_sec(e.0)),
        replayed_from_cache: executed.and_then(|e| e.1),
        confirmed_answered,
        latency_ms: all.histogram.summary().into(),
        operations,
    }
}

/// Resident memory of this process (Linux), MiB.
pub fn resident_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// Measures the raw UDP limit with the run's concurrency and mean packet sizes, and fills
/// in `outcome.limit`.
pub fn measure_limit(
    outcome: &mut BacnetOutcome,
    seconds: f64,
    path: &crate::limit::UdpPath,
    progress: crate::limit::ProgressFn<'_>,
) -> Result<(), crate::limit::LimitError> {
    let Some(limit) = outcome.limit.as_mut() else {
        return Ok(());
    };
    let config = crate::limit::LimitConfig {
        request_size: limit.request_size,
        response_size: limit.response_size,
        in_flight: limit.in_flight.clamp(1, 4096),
        warmup: Duration::from_millis(500),
        duration: Duration::try_from_secs_f64(seconds).unwrap_or(Duration::from_secs(3)),
        placement: crate::placement::Placement::Free,
    };
    let measured = crate::limit::run_udp_limit_on(&config, path, progress)?;
    limit.path = path.to_string();
    limit.throughput_rps = measured.measurement.throughput_rps;
    limit.latency_ms = measured.measurement.latency_ms.into();
    limit.fraction_of_limit = if limit.throughput_rps > 0.0 {
        outcome.sustained.throughput_rps / limit.throughput_rps
    } else {
        0.0
    };
    Ok(())
}
