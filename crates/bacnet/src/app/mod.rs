//! The BACnet application layer: the device server and the client, sans-IO where possible.
//!
//! [`DeviceServer`] answers requests from an object database; [`ClientCore`] builds
//! requests and turns the answers into typed results. Both take NPDU bytes and the time in
//! and give NPDUs to send, events and the next deadline out; the tokio drivers in
//! [`crate::driver`] only move those bytes.

pub(crate) mod client;
pub mod cov;
pub(crate) mod cov_subscriber;
pub mod device_control;
pub mod discovery;
pub mod read_plan;
pub mod server;
pub(crate) mod value_text;

pub use client::{
    Announcement, ClientCore, ClientError, Completion, CovNotification, MAX_QUEUED_NOTIFICATIONS,
    Reply,
};
pub use cov_subscriber::{CovOptions, CovSubscriber};
pub use server::{
    CovStats, Destination, DeviceEvent, DeviceServer, PeerAddress, ServerStats, Transmit,
};
pub use value_text::{ValueType, parse_value_text};
