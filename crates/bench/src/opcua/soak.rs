//! The connect/disconnect soak: cycles of connect (Hello/Acknowledge), OpenSecureChannel,
//! CreateSession, ActivateSession, one Read, CloseSession and CloseSecureChannel against one
//! server, sampling the resident memory (VmRSS) of this process and, when known, of the
//! server process every `sample_every` cycles. It reports the curve and asserts nothing:
//! memory that grows with the cycle count is what it is there to show.

use std::time::Instant;

use buildwire_opcua::client::ClientConfig;
use buildwire_opcua::driver::{ClientError, OpcuaClient};
use buildwire_opcua::services::AttributeId;
use buildwire_opcua::{NodeId, Variant};
use serde::Serialize;

/// Server_ServerStatus_CurrentTime (i=2258), read once per cycle.
const CURRENT_TIME: NodeId = NodeId::numeric(0, 2258);

/// What to run.
#[derive(Clone, Debug)]
pub struct SoakConfig {
    /// The server (`opc.tcp://HOST:PORT`).
    pub endpoint: String,
    /// Connect/disconnect cycles.
    pub cycles: u64,
    /// Cycles between two memory samples.
    pub sample_every: u64,
    /// The server's process id, when it runs in another process on this machine (its RSS
    /// is sampled from /proc); None when it runs in this process or elsewhere.
    pub server_pid: Option<u32>,
}

/// One point of the memory curve.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SoakSample {
    /// Cycles done.
    pub cycle: u64,
    /// Seconds since the start.
    pub elapsed_s: f64,
    /// VmRSS of this (client) process, KiB.
    pub client_rss_kib: Option<u64>,
    /// VmRSS of the server process, KiB.
    pub server_rss_kib: Option<u64>,
}

/// The result of a soak.
#[derive(Clone, Debug, Serialize)]
pub struct SoakReport {
    /// The server.
    pub endpoint: String,
    /// Cycles run.
    pub cycles: u64,
    /// Cycles that failed (connect, read or close).
    pub failures: u64,
    /// The first failure, if any.
    pub first_error: Option<String>,
    /// Seconds for all cycles.
    pub seconds: f64,
    /// Cycles per second.
    pub cycles_per_second: f64,
    /// The memory curve (first sample before the first cycle).
    pub samples: Vec<SoakSample>,
}

impl SoakReport {
    /// Client RSS at the last sample minus at the first sample after warm-up (the sample
    /// at `sample_every` cycles), KiB.
    pub fn client_growth_kib(&self) -> Option<i64> {
        growth(&self.samples, |s| s.client_rss_kib)
    }

    /// The same for the server.
    pub fn server_growth_kib(&self) -> Option<i64> {
        growth(&self.samples, |s| s.server_rss_kib)
    }
}

fn growth(samples: &[SoakSample], rss: impl Fn(&SoakSample) -> Option<u64>) -> Option<i64> {
    let first = rss(samples.get(1).or(samples.first())?)?;
    let last = rss(samples.last()?)?;
    Some(i64::try_from(last).ok()? - i64::try_from(first).ok()?)
}

/// VmRSS of process `pid` (None: this process), in KiB, from /proc (Linux).
pub fn rss_kib(pid: Option<u32>) -> Option<u64> {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/status"),
        None => "/proc/self/status".to_owned(),
    };
    let status = std::fs::read_to_string(path).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Why one connect/read/close cycle failed.
#[derive(Debug, thiserror::Error)]
pub enum CycleError {
    /// Connecting (channel and session) failed.
    #[error("connecting: {0}")]
    Connect(#[source] ClientError),
    /// Reading the server's CurrentTime failed.
    #[error("reading CurrentTime: {0}")]
    Read(#[source] ClientError),
    /// CurrentTime was read but is not a DateTime.
    #[error("CurrentTime is not a DateTime")]
    NotDateTime,
    /// Closing the session and channel failed.
    #[error("closing: {0}")]
    Close(#[source] ClientError),
}

async fn one_cycle(endpoint: &str) -> Result<(), CycleError> {
    let mut client = OpcuaClient::connect_with(ClientConfig::new(endpoint))
        .await
        .map_err(CycleError::Connect)?;
    let values = client
        .read(&[CURRENT_TIME], AttributeId::Value)
        .await
        .map_err(CycleError::Read)?;
    if !matches!(
        values.first().and_then(|v| v.value.as_ref()),
        Some(Variant::DateTime(_))
    ) {
        return Err(CycleError::NotDateTime);
    }
    client.close().await.map_err(CycleError::Close)
}

/// Runs the soak; `progress` sees each sample as it is taken.
pub async fn run_soak(config: &SoakConfig, mut progress: impl FnMut(&SoakSample)) -> SoakReport {
    let start = Instant::now();
    let sample_every = config.sample_every.max(1);
    let sample = |cycle: u64| SoakSample {
        cycle,
        elapsed_s: start.elapsed().as_secs_f64(),
        client_rss_kib: rss_kib(None),
        server_rss_kib: config.server_pid.and_then(|pid| rss_kib(Some(pid))),
    };
    let mut samples = vec![sample(0)];
    progress(&samples[0]);
    let mut failures = 0;
    let mut first_error = None;
    for cycle in 1..=config.cycles {
        if let Err(error) = one_cycle(&config.endpoint).await {
            failures += 1;
            first_error.get_or_insert(format!("cycle {cycle}: {error}"));
        }
        if cycle % sample_every == 0 || cycle == config.cycles {
            let point = sample(cycle);
            progress(&point);
            samples.push(point);
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    SoakReport {
        endpoint: config.endpoint.clone(),
        cycles: config.cycles,
        failures,
        first_error,
        seconds,
        cycles_per_second: if seconds > 0.0 {
            config.cycles as f64 / seconds
        } else {
            0.0
        },
        samples,
    }
}
