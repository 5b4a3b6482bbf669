//! Haystack benchmarks.

pub mod decode;
pub mod http;
pub mod ws;
