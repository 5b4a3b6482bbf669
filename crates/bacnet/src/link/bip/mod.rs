//! BACnet/IP (Annex J): the BVLL codec ([`bvll`]) and the link layer of a node, BBMD or
//! foreign device ([`link`]).

pub mod bvll;
pub mod link;

pub use bvll::{BdtEntry, BvlcResultCode, Bvll, FdtEntry};
pub use link::{BbmdConfig, BipLink, BipLinkStats, BipRole, ForeignConfig, LinkDelivery};
