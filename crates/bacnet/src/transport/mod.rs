//! Data-link transports below the network layer: the Annex J BACnet/IP BVLL ([`bvll`]) and
//! the Annex U BACnet/IPv6 BVLL with virtual MAC addresses ([`bvll6`]).

pub mod bvll;
pub mod bvll6;

pub use bvll::{BdtEntry, BvlcResultCode, Bvll, FdtEntry};
pub use bvll6::{Bvlc6ResultCode, Bvll6, Vmac};
