//! Haystack benchmarks.

pub mod compare;
pub mod decode;
pub mod his;
pub mod http;
pub mod ws;
