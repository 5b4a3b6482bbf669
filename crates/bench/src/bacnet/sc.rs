//! The BACnet/SC scenario, as bac-py publishes it: a hub, two echo nodes, and unicast and
//! broadcast workers on client nodes sending payloads of 25, 200, 800 and 1,400 octets
//! (30/30/25/15 %), each tagged with a 6-octet id to match its echo. Unlike bac-py's, every
//! echo is compared byte for byte with what was sent, and broadcast workers wait for the
//! echoes of both echo nodes.
//!
//! **The messages are BVLC-SC Encapsulated-NPDUs**, not Proprietary-Messages: the NPDU is
//! what every SC node hands to its upper layer (our [`ScTransport`] and bac-py's
//! `SCTransport.on_receive` alike), so the same echo works on both stacks, and the hub does
//! the work it does for real BACnet traffic. Each NPDU is a well-formed proprietary
//! network-layer message (Clause 6.2.2: control 0x80, message type 0x80, vendor id 0xFFFF,
//! which no vendor holds) whose data is the 6-octet id (worker, sequence) and filler:
//!
//! ```text
//! 01 80 80 FF FF | worker (2) sequence (4) | pseudo-random filler up to the payload size
//! ```
//!
//! An echo node sends each such NPDU back, unchanged, by unicast to the VMAC it came from.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use buildwire_bacnet::driver::sc::certs::write_pki;
use buildwire_bacnet::driver::sc::tls::{ScTlsFiles, client_config, server_config};
use buildwire_bacnet::driver::{
    ScHub, ScHubConfig, ScNodeConfig, ScTransport, Transport, random_uuid, random_vmac,
};
use buildwire_bacnet::link::sc::node::NodeConfig;
use buildwire_bacnet::link::sc::{
    DEFAULT_MAX_BVLC_LENGTH, DEFAULT_MAX_NPDU_LENGTH, HubConfig, HubConnectionStatus,
    LocalIdentity, Vmac,
};
use serde::{Serialize, Serializer};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::phases::{RunningWorkers, StepError, StepWorker};
use super::workload::{WireSize, xorshift};
use super::{BacnetBenchError, BacnetProgress, OpTally, PhaseReport, phase_report, resident_mib};
use crate::stats::LatencyHistogram;

/// Payload sizes (octets, the whole NPDU) and their share of messages in percent.
pub const PAYLOAD_MIX: [(usize, u32); 4] = [(25, 30), (200, 30), (800, 25), (1400, 15)];
/// The VMACs of the two echo nodes (random-48 form, fixed so that processes and peers
/// started apart agree on them).
pub const ECHO_VMACS: [Vmac; 2] = [
    Vmac::new([0x02, 0xEC, 0x40, 0x00, 0x00, 0x01]),
    Vmac::new([0x02, 0xEC, 0x40, 0x00, 0x00, 0x02]),
];
/// The certificate names the scenario issues (and expects in a `--certs` folder).
pub const CERT_NAMES: [&str; 4] = ["hub", "echo1", "echo2", "client"];
/// The published error-rate threshold (0.5 %).
pub const ERROR_THRESHOLD: f64 = 0.005;

/// NPDU header of a benchmark message: version 1, network-layer message, proprietary
/// message type 0x80, vendor 0xFFFF.
const HEADER: [u8; 5] = [0x01, 0x80, 0x80, 0xFF, 0xFF];
/// Where the 6-octet id sits in the NPDU.
const ID: std::ops::Range<usize> = 5..11;
/// BVLC-SC header of a relayed Encapsulated-NPDU: function, control, message id and one
/// VMAC (4 + 6; the node-to-hub message carries the destination instead).
const BVLC_SC_HEADER: usize = 10;

/// True for an NPDU of this benchmark (an echo node answers nothing else).
pub fn is_bench_npdu(npdu: &[u8]) -> bool {
    npdu.len() >= ID.end && npdu.starts_with(&HEADER)
}

/// Which worker an echo is for.
fn worker_of(npdu: &[u8]) -> Option<u16> {
    let id = npdu.get(ID.start..ID.start + 2)?;
    Some(u16::from_be_bytes([*id.first()?, *id.get(1)?]))
}

/// The two kinds of worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ScOperation {
    /// One NPDU to one echo node (alternating), one echo back.
    Unicast,
    /// One NPDU to the broadcast VMAC, an echo from each echo node.
    Broadcast,
}

impl ScOperation {
    /// The name in tables and JSON.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Unicast => "unicast",
            Self::Broadcast => "broadcast",
        }
    }

    /// Echoes one answered operation stands for.
    pub const fn echoes(self) -> u64 {
        match self {
            Self::Unicast => 1,
            Self::Broadcast => 2,
        }
    }
}

fn vmacs_as_text<S: Serializer>(vmacs: &[Vmac; 2], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(vmacs.iter().map(ToString::to_string))
}

/// A hub and echo nodes outside this process.
#[derive(Clone, Debug, Serialize)]
pub struct ScTarget {
    /// The hub's URI (`wss://HOST:PORT`, `ws://` without TLS).
    pub hub: String,
    /// The echo nodes' VMACs.
    #[serde(serialize_with = "vmacs_as_text")]
    pub echo_nodes: [Vmac; 2],
    /// True when the echo nodes are already connected (processes and peers); false when
    /// this process starts them on the hub (`--target-hub`).
    pub echo_nodes_running: bool,
}

/// How an SC run goes.
#[derive(Clone, Debug, Serialize)]
pub struct ScRunConfig {
    /// Unicast workers.
    pub unicast: usize,
    /// Broadcast workers.
    pub broadcast: usize,
    /// Client nodes the workers are spread over (each its own hub connection).
    pub client_nodes: usize,
    /// TLS 1.3 with mutual authentication (false: plaintext `ws://`).
    pub tls: bool,
    /// Seconds before measuring.
    #[serde(rename = "warmup_s")]
    pub warmup: f64,
    /// Seconds measured.
    #[serde(rename = "sustain_s")]
    pub sustain: f64,
    /// Pause after an error before the worker's next message, seconds.
    #[serde(rename = "error_backoff_s")]
    pub error_backoff: f64,
    /// How long a worker waits for its echoes, seconds.
    #[serde(rename = "echo_timeout_s")]
    pub echo_timeout: f64,
    /// Pause of a broadcast worker after each round, seconds (0: back to back).
    #[serde(rename = "broadcast_interval_s")]
    pub broadcast_interval: f64,
    /// TCP port of the in-process hub (0: any free port).
    pub port: u16,
    /// Payload sizes in octets with their share in percent.
    pub payload_mix: Vec<(usize, u32)>,
    /// The hub (and echo nodes) outside this process; `None`: all in this process.
    pub target: Option<ScTarget>,
    /// The certificates (`ca.crt`, `NAME.crt`, `NAME.key` for [`CERT_NAMES`]); `None` with
    /// TLS off.
    #[serde(skip)]
    pub certs: Option<PathBuf>,
}

/// What an SC run measured, in the schema of the other BACnet scenarios.
#[derive(Clone, Debug, Serialize)]
pub struct ScOutcome {
    /// `sc`.
    pub mode: String,
    /// `sc` (BACnet/SC over WebSockets, `wss://` unless `config.tls` is false).
    pub transport: String,
    /// The options.
    pub config: ScRunConfig,
    /// Workers running at once.
    pub concurrency: usize,
    /// The warm-up phase.
    pub warmup: PhaseReport,
    /// The measured phase (`executed`: echoes the echo nodes sent; `confirmed_answered`:
    /// echoes received and checked).
    pub sustained: PhaseReport,
    /// The error-rate threshold.
    pub error_threshold: f64,
    /// True when the sustained error rate is at or below the threshold.
    pub passed: bool,
    /// Where the hub and the echo nodes ran.
    pub server: String,
    /// The hub's URI.
    pub hub: String,
    /// Messages the hub relayed in the measured phase (unicasts and broadcast copies),
    /// when known.
    pub hub_relayed: Option<u64>,
    /// The same per second.
    pub hub_relayed_per_s: Option<f64>,
    /// Resident memory of this process at the end, MiB.
    pub resident_mib: Option<f64>,
    /// Resident memory of the hub's process, when it ran in its own, MiB.
    pub server_resident_mib: Option<f64>,
    /// Resident memory of the echo nodes' processes together, when they ran apart, MiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub echo_resident_mib: Option<f64>,
    /// Answered per second, every 250 ms of the sustained phase.
    pub throughput_timeline: Vec<(f64, f64)>,
    /// The latency histogram of the sustained phase (for plots).
    #[serde(skip)]
    pub histogram: LatencyHistogram,
}

/// Counters read from processes outside this one.
#[derive(Clone, Copy, Default)]
pub struct ScProbes<'a> {
    /// Echoes the echo nodes sent so far.
    pub echoed: Option<&'a (dyn Fn() -> Option<u64> + Sync)>,
    /// Messages the hub relayed so far.
    pub relayed: Option<&'a (dyn Fn() -> Option<u64> + Sync)>,
}

/// Writes a CA and the certificates of [`CERT_NAMES`] into `dir`, with `extra_names` as
/// more subject alternative names (the addresses of `--netns`).
pub fn write_certificates(dir: &Path, extra_names: &[String]) -> Result<(), BacnetBenchError> {
    let names: Vec<String> = CERT_NAMES.iter().map(|n| (*n).to_owned()).collect();
    write_pki(dir, &names, extra_names, 2)
        .map(|_| ())
        .map_err(|e| BacnetBenchError::Config(e.to_string()))
}

/// The TLS configuration of the node named `name` (`None` without certificates).
pub fn node_tls(
    certs: Option<&Path>,
    name: &str,
) -> Result<Option<Arc<rustls::ClientConfig>>, BacnetBenchError> {
    certs
        .map(|dir| client_config(&ScTlsFiles::in_directory(dir, name)))
        .transpose()
        .map_err(|e| BacnetBenchError::Config(e.to_string()))
}

/// Starts the hub on `bind`, with TLS when `certs` is given.
pub async fn start_hub(
    bind: std::net::SocketAddr,
    certs: Option<&Path>,
) -> Result<ScHub, BacnetBenchError> {
    let tls = certs
        .map(|dir| server_config(&ScTlsFiles::in_directory(dir, "hub")))
        .transpose()
        .map_err(|e| BacnetBenchError::Config(e.to_string()))?;
    let mut hub = HubConfig::new(random_vmac(), random_uuid());
    // Room for the largest payload with both VMACs (the default would do; said here).
    hub.identity.max_bvlc_length = DEFAULT_MAX_BVLC_LENGTH;
    Ok(ScHub::start(ScHubConfig { bind, tls, hub }).await?)
}

/// Starts a node of `hub` with `vmac` and waits for its hub connection.
async fn start_node(
    hub: &str,
    tls: Option<Arc<rustls::ClientConfig>>,
    vmac: Vmac,
) -> Result<Arc<ScTransport>, BacnetBenchError> {
    let identity = LocalIdentity {
        vmac,
        uuid: random_uuid(),
        max_bvlc_length: DEFAULT_MAX_BVLC_LENGTH,
        max_npdu_length: DEFAULT_MAX_NPDU_LENGTH,
    };
    let mut node = NodeConfig::new(identity, hub);
    node.reconnect_min = Duration::from_millis(500);
    node.reconnect_max = Duration::from_secs(5);
    let mut config = ScNodeConfig::new(node, tls);
    config.connect_timeout = Duration::from_secs(10);
    let transport = ScTransport::start(config).await?;
    if transport.status() == HubConnectionStatus::NoHubConnection {
        return Err(BacnetBenchError::Config(format!(
            "node {vmac}: no connection to the hub {hub} within 10 s"
        )));
    }
    Ok(Arc::new(transport))
}

/// An echo node: sends every benchmark NPDU back to the VMAC it came from, unchanged.
pub struct EchoNode {
    transport: Arc<ScTransport>,
    echoed: Arc<AtomicU64>,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for EchoNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EchoNode")
            .field("vmac", &self.transport.vmac())
            .finish_non_exhaustive()
    }
}

impl EchoNode {
    /// Connects an echo node with `vmac` to `hub`.
    pub async fn start(
        hub: &str,
        tls: Option<Arc<rustls::ClientConfig>>,
        vmac: Vmac,
    ) -> Result<Self, BacnetBenchError> {
        let transport = start_node(hub, tls, vmac).await?;
        let echoed = Arc::new(AtomicU64::new(0));
        let task = tokio::spawn(echo(Arc::clone(&transport), Arc::clone(&echoed)));
        Ok(Self {
            transport,
            echoed,
            task,
        })
    }

    /// Echoes sent so far.
    pub fn echoed(&self) -> u64 {
        self.echoed.load(Ordering::Relaxed)
    }

    /// Disconnects from the hub.
    pub async fn shutdown(self) {
        self.task.abort();
        if let Ok(transport) = Arc::try_unwrap(self.transport) {
            transport.shutdown(Duration::from_millis(500)).await;
        }
    }
}

async fn echo(transport: Arc<ScTransport>, echoed: Arc<AtomicU64>) {
    while let Ok(delivery) = transport.receive().await {
        if is_bench_npdu(&delivery.npdu)
            && transport
                .send_unicast(delivery.source, &delivery.npdu)
                .await
                .is_ok()
        {
            echoed.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// An echo as the client node's dispatcher hands it to a worker.
#[derive(Debug)]
struct Echo {
    source: Vmac,
    npdu: Vec<u8>,
}

/// A client node: its transport and the task handing echoes to its workers.
struct ClientNode {
    transport: Arc<ScTransport>,
    task: JoinHandle<()>,
}

impl ClientNode {
    /// Connects a client node; echoes go to `routes[worker]` by the id's worker field.
    async fn start(
        hub: &str,
        tls: Option<Arc<rustls::ClientConfig>>,
        routes: Vec<Option<mpsc::UnboundedSender<Echo>>>,
        echo_nodes: [Vmac; 2],
    ) -> Result<Self, BacnetBenchError> {
        let transport = start_node(hub, tls, random_vmac()).await?;
        let task = tokio::spawn(dispatch(Arc::clone(&transport), routes, echo_nodes));
        Ok(Self { transport, task })
    }
}

async fn dispatch(
    transport: Arc<ScTransport>,
    routes: Vec<Option<mpsc::UnboundedSender<Echo>>>,
    echo_nodes: [Vmac; 2],
) {
    while let Ok(delivery) = transport.receive().await {
        // Echoes are unicasts from an echo node; other client nodes' broadcasts are not.
        if delivery.broadcast || !echo_nodes.contains(&delivery.source) {
            continue;
        }
        let route = worker_of(&delivery.npdu)
            .and_then(|worker| routes.get(usize::from(worker)))
            .and_then(Option::as_ref);
        if let Some(route) = route {
            let _ = route.send(Echo {
                source: delivery.source,
                npdu: delivery.npdu,
            });
        }
    }
}

/// A worker's messages: its id, its sequence and its random sizes and filler.
#[derive(Debug, Clone)]
struct Payloads {
    index: u16,
    sequence: u32,
    rng: u64,
}

impl Payloads {
    fn next_random(&mut self) -> u64 {
        xorshift(&mut self.rng)
    }

    fn size(&mut self) -> usize {
        let mut pick = (self.next_random() % 100) as u32;
        for (size, share) in PAYLOAD_MIX {
            if pick < share {
                return size;
            }
            pick -= share;
        }
        PAYLOAD_MIX[0].0
    }

    /// The next message: header, id, filler.
    fn next(&mut self) -> Vec<u8> {
        self.sequence = self.sequence.wrapping_add(1);
        let size = self.size().max(ID.end);
        let mut payload = Vec::with_capacity(size + 8);
        payload.extend_from_slice(&HEADER);
        payload.extend_from_slice(&self.index.to_be_bytes());
        payload.extend_from_slice(&self.sequence.to_be_bytes());
        while payload.len() < size {
            let filler = self.next_random().to_le_bytes();
            payload.extend_from_slice(&filler);
        }
        payload.truncate(size);
        payload
    }
}

/// One worker: sends, waits for its echoes, checks them.
struct ScWorker {
    operation: ScOperation,
    payloads: Payloads,
    node: Arc<ScTransport>,
    inbox: mpsc::UnboundedReceiver<Echo>,
    echo_nodes: [Vmac; 2],
    timeout: Duration,
    interval: Option<Duration>,
}

impl ScWorker {
    async fn exchange(&mut self) -> Result<WireSize, StepError> {
        let payload = self.payloads.next();
        let expected: Vec<Vmac> = match self.operation {
            ScOperation::Unicast => {
                let to = self.echo_nodes[(self.payloads.sequence % 2) as usize];
                self.node
                    .send_unicast(to, &payload)
                    .await
                    .map_err(|source| StepError::Io {
                        what: format!("unicast to {to}"),
                        source,
                    })?;
                vec![to]
            }
            ScOperation::Broadcast => {
                self.node
                    .send_broadcast(&payload)
                    .await
                    .map_err(|source| StepError::Io {
                        what: "broadcast".into(),
                        source,
                    })?;
                self.echo_nodes.to_vec()
            }
        };
        let echoes = expected.len();
        self.await_echoes(&payload, expected).await?;
        Ok(WireSize {
            request: BVLC_SC_HEADER + payload.len(),
            response: (BVLC_SC_HEADER + payload.len()) * echoes,
        })
    }

    /// Waits for an echo from each of `pending`, each equal to `payload`; echoes of earlier
    /// messages (that timed out) are skipped.
    async fn await_echoes(
        &mut self,
        payload: &[u8],
        mut pending: Vec<Vmac>,
    ) -> Result<(), StepError> {
        let id = self.payloads.sequence;
        let deadline = tokio::time::Instant::now() + self.timeout;
        while !pending.is_empty() {
            let echo = match tokio::time::timeout_at(deadline, self.inbox.recv()).await {
                Ok(Some(echo)) => echo,
                Ok(None) => return Err(StepError::Wrong("the client node stopped".into())),
                Err(_) => {
                    let missing: Vec<String> = pending.iter().map(ToString::to_string).collect();
                    return Err(StepError::Wrong(format!(
                        "no echo of message {id} ({} octets) from {} within {:?}",
                        payload.len(),
                        missing.join(", "),
                        self.timeout
                    )));
                }
            };
            if echo.npdu.get(ID) != payload.get(ID) {
                continue;
            }
            let Some(at) = pending.iter().position(|v| *v == echo.source) else {
                return Err(StepError::Wrong(format!(
                    "message {id}: a second echo from {} (or one not asked for)",
                    echo.source
                )));
            };
            if echo.npdu != payload {
                let differs = echo
                    .npdu
                    .iter()
                    .zip(payload)
                    .position(|(a, b)| a != b)
                    .unwrap_or(echo.npdu.len().min(payload.len()));
                return Err(StepError::Wrong(format!(
                    "message {id}: the echo from {} differs from what was sent ({} octets \
                     sent, {} echoed, first difference at octet {differs})",
                    echo.source,
                    payload.len(),
                    echo.npdu.len()
                )));
            }
            pending.swap_remove(at);
        }
        Ok(())
    }
}

impl StepWorker for ScWorker {
    type Kind = ScOperation;

    fn kind(&self) -> ScOperation {
        self.operation
    }

    fn step(&mut self) -> impl Future<Output = Result<WireSize, StepError>> + Send {
        self.exchange()
    }

    fn pause_after(&self) -> Option<Duration> {
        self.interval
    }
}

/// What the run started in this process, stopped at the end.
struct ScSetup {
    hub_uri: String,
    hub: Option<ScHub>,
    echo: Vec<EchoNode>,
    echo_nodes: [Vmac; 2],
}

async fn set_up(config: &ScRunConfig) -> Result<ScSetup, BacnetBenchError> {
    let certs = config.certs.as_deref();
    if config.tls != certs.is_some() {
        return Err(BacnetBenchError::Config(
            "TLS needs the certificates folder, plaintext none".into(),
        ));
    }
    let (hub, hub_uri, echo_nodes, start_echo) = match &config.target {
        Some(target) => (
            None,
            target.hub.clone(),
            target.echo_nodes,
            !target.echo_nodes_running,
        ),
        None => {
            let bind = std::net::SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, config.port));
            let hub = start_hub(bind, certs).await?;
            let uri = hub.uri();
            (Some(hub), uri, ECHO_VMACS, true)
        }
    };
    let mut echo = Vec::new();
    if start_echo {
        for (vmac, name) in echo_nodes.iter().zip(["echo1", "echo2"]) {
            echo.push(EchoNode::start(&hub_uri, node_tls(certs, name)?, *vmac).await?);
        }
    }
    Ok(ScSetup {
        hub_uri,
        hub,
        echo,
        echo_nodes,
    })
}

fn seconds(value: f64, option: &str) -> Result<Duration, BacnetBenchError> {
    Duration::try_from_secs_f64(value)
        .map_err(|_| BacnetBenchError::Config(format!("{option} is not a number of seconds")))
}

/// Runs the SC scenario: warm-up, then the measured phase.
pub async fn run_sc(
    config: &ScRunConfig,
    progress: BacnetProgress<'_>,
    probes: ScProbes<'_>,
) -> Result<ScOutcome, BacnetBenchError> {
    let warmup = seconds(config.warmup, "--warmup")?;
    let sustain = seconds(config.sustain, "--sustain")?;
    let backoff = seconds(config.error_backoff, "--error-backoff")?;
    let timeout = seconds(config.echo_timeout, "--echo-timeout")?;
    let interval = seconds(config.broadcast_interval, "--broadcast-interval")?;
    let total = config.unicast + config.broadcast;
    if total == 0 || total > usize::from(u16::MAX) {
        return Err(BacnetBenchError::Config(
            "give 1 to 65535 workers (--unicast, --broadcast)".into(),
        ));
    }
    let nodes = config.client_nodes.clamp(1, total);
    let setup = set_up(config).await?;
    let client_tls = node_tls(config.certs.as_deref(), "client")?;

    // Worker i is on client node i % nodes; its echoes come through that node.
    let mut senders: Vec<Vec<Option<mpsc::UnboundedSender<Echo>>>> = vec![vec![None; total]; nodes];
    let mut inboxes = Vec::with_capacity(total);
    for (i, node_routes) in (0..total).map(|i| (i, i % nodes)) {
        let (tx, rx) = mpsc::unbounded_channel();
        if let Some(slot) = senders.get_mut(node_routes).and_then(|r| r.get_mut(i)) {
            *slot = Some(tx);
        }
        inboxes.push(rx);
    }
    let mut clients = Vec::with_capacity(nodes);
    for routes in senders {
        clients.push(
            ClientNode::start(&setup.hub_uri, client_tls.clone(), routes, setup.echo_nodes).await?,
        );
    }
    let mut workers = Vec::with_capacity(total);
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for (i, inbox) in inboxes.into_iter().enumerate() {
        let operation = if i < config.unicast {
            ScOperation::Unicast
        } else {
            ScOperation::Broadcast
        };
        let Some(client) = clients.get(i % nodes) else {
            continue;
        };
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        workers.push(ScWorker {
            operation,
            payloads: Payloads {
                index: i as u16,
                sequence: 0,
                rng: seed,
            },
            node: Arc::clone(&client.transport),
            inbox,
            echo_nodes: setup.echo_nodes,
            timeout,
            interval: (operation == ScOperation::Broadcast && !interval.is_zero())
                .then_some(interval),
        });
    }
    let concurrency = workers.len();
    let running = RunningWorkers::spawn(workers, backoff);

    let echoed = || {
        if setup.echo.is_empty() {
            probes.echoed.and_then(|probe| probe())
        } else {
            Some(setup.echo.iter().map(EchoNode::echoed).sum())
        }
    };
    let relayed = || match &setup.hub {
        Some(hub) => {
            let stats = hub.stats().hub;
            Some(stats.unicast_relayed + stats.broadcast_copies)
        }
        None => probes.relayed.and_then(|probe| probe()),
    };
    let warm_seconds = running.warm_up(warmup, progress).await;
    let (echoed_warm, relayed_warm) = (echoed(), relayed());
    let (measured, timeline) = running.sustain(sustain, progress).await;
    let (echoed_end, relayed_end) = (echoed(), relayed());
    let (warm_ops, hot_ops) = running.stop().await;

    let report = |ops: &std::collections::BTreeMap<ScOperation, OpTally>, secs, executed| {
        phase_report(
            ops.iter()
                .map(|(op, tally)| (op.name(), tally, op.echoes())),
            secs,
            executed,
        )
    };
    let warmup_report = report(&warm_ops, warm_seconds, echoed_warm.map(|n| (n, None)));
    let sustained = report(
        &hot_ops,
        measured,
        echoed_warm
            .zip(echoed_end)
            .map(|(a, b)| (b.saturating_sub(a), None)),
    );
    let hub_relayed = relayed_warm
        .zip(relayed_end)
        .map(|(a, b)| b.saturating_sub(a));
    let mut histogram = LatencyHistogram::new();
    for tally in hot_ops.values() {
        histogram.merge(&tally.histogram);
    }
    let passed = sustained.total_requests > 0 && sustained.error_rate <= ERROR_THRESHOLD;
    for client in clients {
        client.task.abort();
        if let Ok(transport) = Arc::try_unwrap(client.transport) {
            transport.shutdown(Duration::from_millis(200)).await;
        }
    }
    for node in setup.echo {
        node.shutdown().await;
    }
    let server = match (&setup.hub, &config.target) {
        (Some(_), _) => "in-process".to_owned(),
        (None, Some(t)) if t.echo_nodes_running => format!("hub {}", t.hub),
        (None, _) => format!("hub {} with in-process echo nodes", setup.hub_uri),
    };
    if let Some(hub) = setup.hub {
        hub.shutdown(Duration::from_millis(200)).await;
    }
    Ok(ScOutcome {
        mode: "sc".to_owned(),
        transport: "sc".to_owned(),
        config: config.clone(),
        concurrency,
        warmup: warmup_report,
        hub_relayed_per_s: hub_relayed.map(|n| {
            if measured > 0.0 {
                n as f64 / measured
            } else {
                0.0
            }
        }),
        hub_relayed,
        sustained,
        error_threshold: ERROR_THRESHOLD,
        passed,
        server,
        hub: setup.hub_uri,
        resident_mib: resident_mib(),
        server_resident_mib: None,
        echo_resident_mib: None,
        throughput_timeline: timeline,
        histogram,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_carry_the_header_the_id_and_the_mix() {
        let mut payloads = Payloads {
            index: 7,
            sequence: 0,
            rng: 42,
        };
        let mut sizes = std::collections::BTreeMap::new();
        for sequence in 1..=10_000u32 {
            let npdu = payloads.next();
            assert!(is_bench_npdu(&npdu));
            assert_eq!(worker_of(&npdu), Some(7));
            assert_eq!(npdu.get(7..11), Some(&sequence.to_be_bytes()[..]));
            *sizes.entry(npdu.len()).or_insert(0u32) += 1;
        }
        // Each size near its share (30/30/25/15 % of 10,000).
        for (size, share) in PAYLOAD_MIX {
            let n = sizes.get(&size).copied().unwrap_or(0);
            assert!(n.abs_diff(share * 100) < 300, "{size}: {n}");
        }
        assert_eq!(sizes.len(), PAYLOAD_MIX.len());
    }

    #[test]
    fn only_benchmark_npdus_are_echoed() {
        assert!(!is_bench_npdu(&HEADER));
        // A Who-Is is not one.
        assert!(!is_bench_npdu(&[
            0x01, 0x20, 0xFF, 0xFF, 0x00, 0xFF, 0x10, 0x08, 0, 0, 0
        ]));
        assert_eq!(PAYLOAD_MIX.iter().map(|(_, s)| s).sum::<u32>(), 100);
    }
}
