//! Data links below the network layer, each in its own folder, sans-IO (datagrams, messages
//! and `now` in; NPDUs and datagrams out):
//!
//! - [`bip`]: BACnet/IP (Annex J): the BVLL codec, B/IP addresses and [`bip::BipLink`], the
//!   link layer of a node, BBMD or foreign device;
//! - [`bip6`]: BACnet/IPv6 (Annex U): the same with virtual MAC addresses;
//! - [`bbmd`]: what both IP links share for broadcast management: the foreign device table,
//!   a foreign device's registration and the rate limit of a BBMD;
//! - [`sc`]: BACnet Secure Connect (Annex AB): BVLC-SC messages, connections, hub and node.

pub mod bbmd;
pub mod bip;
pub mod bip6;
pub mod sc;

pub use bbmd::{
    ForeignDevice, ForeignDeviceTable, ForeignRegistration, GRACE_PERIOD, RegistrationState,
};
pub use bip::{
    BbmdConfig, BdtEntry, BipLink, BipLinkStats, BipRole, BvlcResultCode, Bvll, FdtEntry,
    ForeignConfig, LinkDelivery,
};
pub use bip6::{
    Bbmd6Config, Bip6Link, Bip6Role, Bvlc6ResultCode, Bvll6, Foreign6Config, Link6Delivery,
};
