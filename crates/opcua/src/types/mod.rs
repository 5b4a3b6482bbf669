//! Table-generated OPC UA enumerations that every layer shares (today: the StatusCode).

pub mod status_code;
mod status_code_table;

pub use status_code::{Severity, StatusCode};
