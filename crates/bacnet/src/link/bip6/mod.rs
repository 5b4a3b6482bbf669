//! BACnet/IPv6 (Annex U): the BVLL codec with virtual MAC addresses (`bvll`) and the link
//! layer of a node, BBMD or foreign device (`link`).

pub mod bvll;
pub(crate) mod link;

pub use bvll::{Bvlc6ResultCode, Bvll6, Vmac};
pub use link::{Bbmd6Config, Bip6Link, Bip6Role, Foreign6Config, Link6Delivery};
