//! The BACnet application layer: the device server and the client, sans-IO where possible.
//!
//! [`DeviceServer`] answers requests from an object database; [`ClientCore`] builds
//! requests and turns the answers into typed results. Both take NPDU bytes and the time in
//! and give NPDUs to send, events and the next deadline out; the tokio drivers in
//! [`crate::driver`] only move those bytes.

pub mod client;
pub mod server;
pub mod value_text;

pub use client::{Announcement, ClientCore, ClientError, Completion, Reply};
pub use server::{Destination, DeviceServer, PeerAddress, ServerStats, Transmit};
pub use value_text::{ValueType, parse_value_text};
