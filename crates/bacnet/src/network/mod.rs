//! Clause 6 network layer: the NPDU header and network-layer message types.

pub mod message_type;
pub mod npdu;

pub use message_type::NetworkMessageType;
pub use npdu::{MAX_MAC_LENGTH, MacAddress, NetworkPriority, Npdu, NpduBody, RemoteAddress};
