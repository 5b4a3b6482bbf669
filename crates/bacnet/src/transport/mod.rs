//! Data-link transports below the network layer. Currently Annex J BACnet/IP (BVLL).

pub mod bvll;

pub use bvll::{BdtEntry, BvlcResultCode, Bvll, FdtEntry};
