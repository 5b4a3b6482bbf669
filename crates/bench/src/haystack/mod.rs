//! Haystack benchmarks.

pub mod decode;
