//! Latency and throughput statistics.

mod latency;

pub use latency::{LatencyHistogram, LatencySummary};
