//! OPC UA benchmarks.
//!
//! - [`throughput`]: the open62541 (Pro/opcua-bench) throughput benchmark: `setSize` once,
//!   then `getData` calls one after another (or N in flight), reporting payload rate, calls/s
//!   and latency percentiles.
//! - [`soak`]: connect / session / read / close cycles with the RSS of client and server
//!   sampled along the way (the reliability report's memory curve).

pub mod soak;
pub mod throughput;

pub use soak::{SoakConfig, SoakReport, SoakSample, run_soak};
pub use throughput::{ThroughputConfig, ThroughputError, ThroughputReport, run_throughput};
