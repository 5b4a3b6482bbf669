//! Thin tokio drivers: sockets and timers around the sans-IO layers below. Nothing here makes
//! a protocol decision; it moves datagrams and fires deadlines.
//!
//! [`BacnetServer`] runs a [`crate::app::DeviceServer`], [`BacnetClient`] a
//! [`crate::app::ClientCore`], both over any [`Transport`]: [`BipTransport`] (BACnet/IP, as a
//! node, BBMD or foreign device) or [`Bip6Transport`] (BACnet/IPv6). [`BacnetRouter`] runs a
//! [`crate::router::Router`] between such transports, optionally hosting a device.

pub mod bip;
mod client;
pub mod clock;
pub mod discovery;
mod error;
mod link_clock;
mod router;
pub mod sc;
mod server;
mod transport;

pub use bip::{
    BacnetBbmd, Bip6Config, Bip6Transport, BipConfig, BipTransport, MAX_BIP_DATAGRAM, MAX_BIP_NPDU,
    Received,
};
pub use client::{BacnetClient, ClientConfig, CovSubscription, DEFAULT_MAX_CONCURRENT_PER_DEVICE};
pub use error::DriverError;
pub use link_clock::LinkClock;
pub use router::{
    BacnetRouter, PortDescription, PortLink, PortSpec, RouterOptions, RouterPort, RouterPortStats,
    RouterSetupError, interface_index, parse_static_route,
};
pub use sc::{
    ScHub, ScHubConfig, ScHubStats, ScNodeConfig, ScTransport, load_or_create_uuid,
    random_identity, random_uuid, random_vmac,
};
pub use server::{BacnetServer, BacnetServerConfig};
pub use transport::{Delivery, Transport};
