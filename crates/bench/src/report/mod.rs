//! What a benchmark run reports: the machine it ran on, its configuration, and its results,
//! as JSON for machines, a table for people and SVG charts where a picture helps.

mod machine;
mod plot;
mod profile;
mod table;
mod target;

pub use machine::MachineInfo;
pub use plot::{PlotError, write_latency_cdf, write_throughput_and_cdf};
pub use profile::{CpuProfile, ProfileError};
pub use table::render_table;
pub use target::TargetResult;

use serde::{Deserialize, Serialize};

use crate::stats::LatencySummary;

/// One measured line of a report: a workload against one target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// What was measured, e.g. `udp-limit` or `bacnet-bip/readProperty`.
    pub name: String,
    /// Requests sent.
    pub sent: u64,
    /// Replies received and checked correct.
    pub answered: u64,
    /// Replies missing, late or wrong.
    pub errors: u64,
    /// Wall time of the measured phase, seconds.
    pub seconds: f64,
    /// Answered requests per second.
    pub throughput_rps: f64,
    /// Payload bytes per second in each direction summed, where meaningful.
    pub payload_bytes_per_sec: Option<f64>,
    /// Request/response latency.
    pub latency_ms: LatencySummary,
}

impl Measurement {
    /// Fraction of sent requests that failed (0.0 when nothing was sent).
    pub fn error_rate(&self) -> f64 {
        if self.sent == 0 {
            0.0
        } else {
            self.errors as f64 / self.sent as f64
        }
    }
}

/// A whole benchmark report, the JSON printed on stdout by `--json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// Benchmark name, e.g. `limit udp`.
    pub benchmark: String,
    /// The machine, so numbers are never quoted without it.
    pub machine: MachineInfo,
    /// Options the run used, as given.
    pub config: serde_json::Value,
    /// Measurements, in the order they ran.
    pub results: Vec<Measurement>,
}
