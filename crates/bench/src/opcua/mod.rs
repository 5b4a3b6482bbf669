//! OPC UA benchmarks.
//!
//! - [`throughput`]: the open62541 (Pro/opcua-bench) throughput benchmark: `setSize` once,
//!   then `getData` calls one after another (or N in flight), reporting payload rate, calls/s
//!   and latency percentiles.
//! - [`soak`]: connect / session / read / close cycles with the RSS of client and server
//!   sampled along the way (the reliability report's memory curve).
//! - [`subscription_soak`]: thousands of monitored items on points that all change at the
//!   sampling rate, every data change checked, with the same memory curve.

pub mod server_child;
pub mod soak;
pub mod subscription_soak;
pub mod throughput;

pub use server_child::{ServerChild, ServerChildError};
pub use soak::{CycleError, SoakConfig, SoakReport, SoakSample, run_soak};
pub use subscription_soak::{
    ItemSoakConfig, ItemSoakError, ItemSoakReport, ItemSoakSample, run_item_soak,
};
pub use throughput::{ThroughputConfig, ThroughputError, ThroughputReport, run_throughput};
