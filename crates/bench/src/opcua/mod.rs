//! OPC UA benchmarks.
//!
//! - [`throughput`]: the open62541 (Pro/opcua-bench) throughput benchmark: `setSize` once,
//!   then `getData` calls one after another (or N in flight), reporting payload rate, calls/s
//!   and latency percentiles.

pub mod throughput;

pub use throughput::{ThroughputConfig, ThroughputError, ThroughputReport, run_throughput};
