//! BACnet/IP and BACnet/IPv6 on tokio UDP sockets: [`BipTransport`] (`ipv4`),
//! [`Bip6Transport`] (`ipv6`) and the standalone BBMD with the BBMD management requests
//! (`bbmd`).

pub mod bbmd;
#[allow(unsafe_code)] // getifaddrs/freeifaddrs: the interface list of the C library.
mod interfaces;
mod ipv4;
mod ipv6;
mod table_log;

pub use bbmd::BacnetBbmd;
pub use ipv4::{BipConfig, BipTransport, MAX_BIP_DATAGRAM, MAX_BIP_NPDU, Received};
pub use ipv6::{Bip6Config, Bip6Transport};
