//! Haystack benchmarks.

pub mod compare;
#[allow(unsafe_code)] // wait4: the peak memory of a decode worker process.
pub mod decode;
pub mod his;
pub mod http;
pub mod ws;
