//! BACnet broadcast management (Annex J for BACnet/IP, Annex U for BACnet/IPv6): BBMDs with
//! their broadcast distribution and foreign device tables, and foreign devices registering
//! with them. Sans-IO: datagrams and `now` in, NPDUs for the network layer and datagrams to
//! send out.
//!
//! - [`fdt`]: the foreign device table (time-to-live plus the 30-second grace period);
//! - [`registration`]: a foreign device's registration and its renewal;
//! - [`rate`]: the token bucket bounding what a BBMD sends;
//! - [`ipv4`]: [`BipLink`], the B/IP link layer of a node, BBMD or foreign device;
//! - [`ipv6`]: [`Bip6Link`], the same for B/IPv6 with virtual MAC addresses.

pub mod fdt;
pub mod ipv4;
pub mod ipv6;
pub mod rate;
pub mod registration;

pub use fdt::{ForeignDevice, ForeignDeviceTable, GRACE_PERIOD};
pub use ipv4::{BbmdConfig, BipLink, BipLinkStats, BipRole, ForeignConfig, LinkDelivery};
pub use ipv6::{Bbmd6Config, Bip6Link, Bip6Role, Foreign6Config, Link6Delivery};
pub use registration::{ForeignRegistration, RegistrationState};
