//! Clause 6 network layer: the NPDU header, network-layer messages, link and routed
//! addresses, and the route cache a client uses to reach other networks.

pub mod address;
pub mod message;
pub(crate) mod message_type;
pub mod npdu;
pub(crate) mod routes;

pub use address::{DeviceAddress, LinkAddress, RoutedAddress};
pub use message::{NetworkMessage, NetworkRejectReason, RoutingTablePort};
pub use message_type::NetworkMessageType;
pub use npdu::{MAX_MAC_LENGTH, MacAddress, NetworkPriority, Npdu, NpduBody, RemoteAddress};
pub use routes::{RouteCache, RouteCacheConfig};
