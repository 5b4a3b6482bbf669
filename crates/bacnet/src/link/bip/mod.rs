//! BACnet/IP (Annex J): the BVLL codec (`bvll`) and the link layer of a node, BBMD or
//! foreign device (`link`).

pub(crate) mod bvll;
pub(crate) mod link;

pub use bvll::{BIP_ADDRESS_LENGTH, BdtEntry, BvlcResultCode, Bvll, FdtEntry, HEADER_LENGTH};
pub use link::{BbmdConfig, BipLink, BipLinkStats, BipRole, ForeignConfig, LinkDelivery};
