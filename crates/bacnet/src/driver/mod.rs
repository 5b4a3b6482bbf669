//! Thin tokio drivers: sockets and timers around the sans-IO layers below. Nothing here makes
//! a protocol decision; it moves datagrams and fires deadlines.
//!
//! [`BacnetServer`] runs a [`crate::app::DeviceServer`], [`BacnetClient`] a
//! [`crate::app::ClientCore`], both over [`BipTransport`].

mod bip;
mod client;
pub mod clock;
mod server;

pub use bip::{BipConfig, BipTransport, MAX_BIP_DATAGRAM, Received};
pub use client::{BacnetClient, ClientConfig};
pub use server::{BacnetServer, ServerConfig};
