//! Measurement machinery shared by every `buildwire bench ...` command.
//!
//! - [`stats`]: latency recording into HDR histograms and their summaries.
//! - [`report`]: the machine description, JSON reports, human tables and SVG charts.
//! - [`limit`]: raw-socket request/response loops with no protocol work at all; they give the
//!   `limit` column that protocol benchmarks are compared against, measured in the same run.
//! - [`placement`]: pinning threads to cores (placement changes loopback numbers several-fold
//!   on small virtual machines, so every benchmark says which placement it used).
//!
//! Nothing here asserts on speed: numbers are reported, compared as ratios, and recorded in
//! BENCHMARKS.md.

// Unsafe code only for the three C interfaces of process and thread placement, each in its
// module below and justified at the block.
#![deny(unsafe_code)]

pub mod bacnet;
pub mod haystack;
pub mod limit;
#[allow(unsafe_code)] // setns: moving a thread into a network namespace.
pub mod netns;
pub mod opcua;
#[allow(unsafe_code)] // sched_setaffinity: pinning a thread to a core.
pub mod placement;
pub mod report;
pub mod stats;
