//! `compare`: the BACnet/IP mix against buildwire (in this process and as its own process)
//! and every installed peer's stress server, one after the other in one run, and the table
//! of their ratios to ours.

use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::PathBuf;

use comfy_table::{Cell, Table, presets::UTF8_FULL_CONDENSED};

use super::orchestrate::{OrchestrateError, StatusFn, run_once, start_own_process};
use super::peer::{self, PeerError, StressProcess};
use super::render::{failed_row, opt, right};
use super::{BacnetOutcome, BacnetRunConfig, LimitReport};
use crate::limit::UdpPath;
use crate::report::{MachineInfo, TargetResult};

/// The targets `compare` measures by default, in order.
pub const DEFAULT_TARGETS: [&str; 5] = [
    "buildwire",
    "buildwire-process",
    "rusty-bacnet",
    "bacpypes3",
    "bac-py",
];

/// What `compare` runs.
#[derive(Clone, Debug)]
pub struct CompareConfig {
    /// The BACnet/IP run each target gets (its `target` is set per target).
    pub run: BacnetRunConfig,
    /// Seconds of the raw UDP limit after our in-process run (0 skips it).
    pub limit_seconds: f64,
    /// Targets in order: `buildwire`, `buildwire-process` or a peer's name.
    pub targets: Vec<String>,
    /// Where scripts/peers.sh installed the peers.
    pub peers_dir: PathBuf,
    /// This program, started again for `buildwire-process`.
    pub program: PathBuf,
}

/// One target's result: its outcome, or why it could not be measured.
pub type CompareEntry = TargetResult<BacnetOutcome>;

/// What `compare` measured: every target, and the limit once (with our concurrency and
/// sizes).
#[derive(Debug)]
pub struct CompareReport {
    /// The targets in order.
    pub results: Vec<CompareEntry>,
    /// The raw UDP limit of our in-process run.
    pub limit: Option<LimitReport>,
}

/// Measures every target of `config`, one after the other; a target that cannot be
/// measured is reported with its error and the others go on.
pub fn run_compare(
    runtime: &tokio::runtime::Runtime,
    config: &CompareConfig,
    status: StatusFn<'_>,
) -> CompareReport {
    let mut results = Vec::new();
    for target in &config.targets {
        status(format!("{target}: starting"));
        let outcome = measure_target(runtime, config, target, status);
        results.push(CompareEntry::new(target.clone(), outcome));
    }
    let limit = results.iter().find_map(|entry| match &entry.outcome {
        Some(o) if entry.target == "buildwire" => o.limit.clone(),
        _ => None,
    });
    CompareReport { results, limit }
}

fn measure_target(
    runtime: &tokio::runtime::Runtime,
    config: &CompareConfig,
    target: &str,
    status: StatusFn<'_>,
) -> Result<BacnetOutcome, OrchestrateError> {
    let mut run = config.run.clone();
    if target == "buildwire" {
        // Ours with the limit, measured right after it with the same concurrency.
        return run_once(
            runtime,
            &run,
            config.limit_seconds,
            &UdpPath::default(),
            status,
            None,
        );
    }
    let process = if target == "buildwire-process" {
        start_own_process(&config.program, 0, false)?
    } else if let Some(kind) = peer::PEERS.iter().find(|p| p.name == target) {
        let port = free_port()?;
        let process = StressProcess::start_peer(*kind, &config.peers_dir, port)?;
        std::thread::sleep(peer::SETTLE);
        process
    } else {
        return Err(OrchestrateError::UnknownTarget(target.to_owned()));
    };
    run.target = Some(SocketAddrV4::new(Ipv4Addr::LOCALHOST, process.port));
    let probe = || process.executed();
    let mut outcome = run_once(
        runtime,
        &run,
        0.0,
        &UdpPath::default(),
        status,
        Some(&probe),
    )?;
    outcome.server_resident_mib = process.resident_mib();
    Ok(outcome)
}

fn free_port() -> Result<u16, PeerError> {
    Ok(std::net::UdpSocket::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// The comparison table: per target answered and executed rates, latency, errors, the
/// server's memory, and the ratios to ours; the limit last.
pub fn compare_table(report: &CompareReport, machine: &MachineInfo) -> String {
    let ours = report
        .results
        .iter()
        .find_map(|entry| match &entry.outcome {
            Some(o) if entry.target == "buildwire" => Some(o),
            _ => None,
        });
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "target",
        "answered/s",
        "executed/s",
        "executed/answered",
        "p50 ms",
        "p99 ms",
        "errors",
        "server RSS MiB",
        "ours/theirs answered",
        "ours/theirs executed",
        "theirs/ours p50",
    ]);
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.1}x", a / b),
        _ => "-".to_owned(),
    };
    for entry in &report.results {
        let target = &entry.target;
        match (&entry.outcome, &entry.error) {
            (Some(o), _) => {
                let s = &o.sustained;
                let executed_fraction = s
                    .executed
                    .filter(|_| s.confirmed_answered > 0)
                    .map(|e| e as f64 / s.confirmed_answered as f64);
                let ours_s = ours.map(|o| &o.sustained);
                table.add_row(vec![
                    Cell::new(target),
                    right(format!("{:.0}", s.throughput_rps)),
                    right(opt(s.executed_rps, 0)),
                    right(
                        executed_fraction
                            .map_or_else(|| "-".into(), |f| format!("{:.1} %", f * 100.0)),
                    ),
                    right(format!("{:.3}", s.latency_ms.p50)),
                    right(format!("{:.3}", s.latency_ms.p99)),
                    right(format!(
                        "{} ({:.2} %)",
                        s.total_errors,
                        s.error_rate * 100.0
                    )),
                    right(opt(o.server_resident_mib.or(o.resident_mib), 1)),
                    right(ratio(
                        ours_s.map(|o| o.throughput_rps),
                        Some(s.throughput_rps),
                    )),
                    right(ratio(ours_s.and_then(|o| o.executed_rps), s.executed_rps)),
                    right(ratio(
                        Some(s.latency_ms.p50),
                        ours_s.map(|o| o.latency_ms.p50),
                    )),
                ]);
            }
            (None, error) => {
                table.add_row(failed_row(target, error.as_deref().unwrap_or_default(), 11));
            }
        }
    }
    if let Some(l) = &report.limit {
        let mut row = vec![
            Cell::new(format!(
                "limit (udp {}/{} B x{})",
                l.request_size, l.response_size, l.in_flight
            )),
            right(format!("{:.0}", l.throughput_rps)),
            Cell::new("-"),
            Cell::new("-"),
            right(format!("{:.3}", l.latency_ms.p50)),
            right(format!("{:.3}", l.latency_ms.p99)),
        ];
        row.extend((0..5).map(|_| Cell::new("-")));
        table.add_row(row);
    }
    format!(
        "bacnet compare (BACnet/IP mix, one target at a time, same machine)\nmachine: {}\n{table}\n",
        machine.one_line()
    )
}
