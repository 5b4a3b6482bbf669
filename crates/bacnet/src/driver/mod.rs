//! Thin tokio drivers: sockets and timers around the sans-IO layers below. Nothing here makes
//! a protocol decision; it moves datagrams and fires deadlines.

mod bip;

pub use bip::{BipConfig, BipTransport, MAX_BIP_DATAGRAM, Received};
