//! Raw-socket request/response loops: the physical limit a protocol benchmark is held against.
//!
//! Both loops run an echo-like server thread and a client thread on 127.0.0.1, with no protocol
//! work at all: the client keeps `in_flight` requests outstanding, the server answers each with
//! a response of the configured size carrying the request's sequence number, and the client
//! checks that number before it counts a reply. Latency goes into an HDR histogram.

mod tcp;
mod udp;

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

pub use tcp::run_tcp_limit;
pub use udp::{ServerBindError, UdpPath, run_udp_limit, run_udp_limit_on};

use crate::placement::Placement;
use crate::report::Measurement;
use crate::stats::LatencyHistogram;

/// Smallest request or response: the 8-byte sequence number every message carries.
pub const MIN_MESSAGE: usize = 8;
/// Largest UDP datagram payload on IPv4 loopback.
pub const MAX_UDP_PAYLOAD: usize = 65_507;
/// Largest TCP response the limit loop will allocate (the 100 MiB OPC UA package fits).
pub const MAX_TCP_MESSAGE: usize = 128 * 1024 * 1024;

/// How a limit loop runs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LimitConfig {
    /// Bytes in each request (at least 8).
    pub request_size: usize,
    /// Bytes in each response (at least 8).
    pub response_size: usize,
    /// Requests kept outstanding at once.
    pub in_flight: usize,
    /// Time run before measuring.
    #[serde(with = "secs")]
    pub warmup: Duration,
    /// Measured time.
    #[serde(with = "secs")]
    pub duration: Duration,
    /// Thread placement.
    pub placement: Placement,
}

impl Default for LimitConfig {
    fn default() -> Self {
        Self {
            request_size: 20,
            response_size: 20,
            in_flight: 1,
            warmup: Duration::from_millis(500),
            duration: Duration::from_secs(3),
            placement: Placement::Free,
        }
    }
}

/// Why a limit loop could not run.
#[derive(Debug, thiserror::Error)]
pub enum LimitError {
    /// A socket operation failed.
    #[error("socket error: {0}")]
    Io(#[from] std::io::Error),
    /// The configuration is outside what the loop supports.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The UDP limit's server socket could not be made on its path.
    #[error("invalid configuration: the UDP limit's server could not start at {path}: {source}")]
    ServerStart {
        /// The path (`client -> server [in namespace]`).
        path: String,
        /// Why not.
        source: udp::ServerBindError,
    },
}

/// Result of a limit loop: the summary line and the full latency histogram.
#[derive(Clone, Debug)]
pub struct LimitOutcome {
    /// Counts, throughput and latency summary.
    pub measurement: Measurement,
    /// Every measured latency sample.
    pub histogram: LatencyHistogram,
}

/// Progress callback: (phase, replies so far in this phase, seconds into the phase).
pub type ProgressFn<'a> = &'a (dyn Fn(Phase, u64, f64) + Sync);

/// Which phase of a run a progress report belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Before measuring.
    Warmup,
    /// Measured.
    Sustain,
}

impl LimitConfig {
    fn validate(&self, max_message: usize) -> Result<(), LimitError> {
        for (what, size) in [
            ("request size", self.request_size),
            ("response size", self.response_size),
        ] {
            if !(MIN_MESSAGE..=max_message).contains(&size) {
                return Err(LimitError::Config(format!(
                    "{what} {size} is outside {MIN_MESSAGE}..={max_message} bytes"
                )));
            }
        }
        if self.in_flight == 0 || self.in_flight > 4096 {
            return Err(LimitError::Config(format!(
                "in-flight {} is outside 1..=4096",
                self.in_flight
            )));
        }
        Ok(())
    }
}

/// Counters a client loop keeps during the measured phase.
#[derive(Default)]
struct Tally {
    sent: u64,
    answered: u64,
    errors: u64,
    histogram: LatencyHistogram,
}

impl Tally {
    fn into_outcome(self, name: &str, config: &LimitConfig, seconds: f64) -> LimitOutcome {
        let throughput = if seconds > 0.0 {
            self.answered as f64 / seconds
        } else {
            0.0
        };
        let bytes = (config.request_size + config.response_size) as f64;
        LimitOutcome {
            measurement: Measurement {
                name: name.to_owned(),
                sent: self.sent,
                answered: self.answered,
                errors: self.errors,
                seconds,
                throughput_rps: throughput,
                payload_bytes_per_sec: Some(throughput * bytes),
                latency_ms: self.histogram.summary(),
            },
            histogram: self.histogram,
        }
    }
}

/// Moves a client loop from warmup to the measured phase, reports progress, and says when the
/// measured phase is over.
struct PhaseClock<'a> {
    start: Instant,
    warmup: Duration,
    duration: Duration,
    phase: Phase,
    phase_start: Instant,
    last_report: Instant,
    progress: ProgressFn<'a>,
}

impl<'a> PhaseClock<'a> {
    fn new(config: &LimitConfig, progress: ProgressFn<'a>) -> Self {
        let now = Instant::now();
        Self {
            start: now,
            warmup: config.warmup,
            duration: config.duration,
            phase: Phase::Warmup,
            phase_start: now,
            last_report: now,
            progress,
        }
    }

    /// Called before each request/response step: clears `tally` when measuring starts and
    /// returns false once the measured phase has run its duration.
    fn keep_going(&mut self, tally: &mut Tally) -> bool {
        let now = Instant::now();
        if self.phase == Phase::Warmup && now >= self.start + self.warmup {
            self.phase = Phase::Sustain;
            self.phase_start = now;
            *tally = Tally::default();
        }
        if self.phase == Phase::Sustain && now >= self.phase_start + self.duration {
            return false;
        }
        if now.duration_since(self.last_report) >= PROGRESS_INTERVAL {
            let secs = now.duration_since(self.phase_start).as_secs_f64();
            (self.progress)(self.phase, tally.answered, secs);
            self.last_report = now;
        }
        true
    }

    /// Ends the run: reports the final count and returns the measured seconds.
    fn finish(&self, tally: &Tally) -> f64 {
        let seconds = self.phase_start.elapsed().as_secs_f64();
        (self.progress)(Phase::Sustain, tally.answered, seconds);
        seconds
    }
}

/// How often a running loop reports progress.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(250);

mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let secs = f64::deserialize(d)?;
        Duration::try_from_secs_f64(secs).map_err(serde::de::Error::custom)
    }
}
