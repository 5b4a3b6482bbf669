//! BACnet Secure Connect (ASHRAE 135 Annex AB), sans-IO: the BVLC-SC messages
//! ([`bvlc`]), one connection's handshake, heartbeats and close ([`connection`]), the hub
//! function ([`hub`]) and a node with its hub connector and direct connections ([`node`]).
//!
//! BACnet/SC carries NPDUs in BVLC-SC messages over WebSockets secured by TLS 1.3 with
//! mutual authentication. Every node connects to a hub (and may fail over to a second one);
//! the hub relays unicasts by destination VMAC and copies broadcasts to every other node.
//! Nodes may also connect to each other directly after asking a peer for its WebSocket URIs
//! with Address-Resolution. The WebSockets and TLS are the tokio driver's business
//! (`crate::driver::sc`); everything here takes messages and the time in and gives
//! messages, commands and deadlines out.
//!
//! ```
//! use std::time::Instant;
//! use buildwire_bacnet::link::sc::bvlc::{BvlcMessage, Payload};
//! use buildwire_bacnet::link::sc::hub::{Hub, HubConfig, HubOutput};
//! use buildwire_bacnet::link::sc::{ConnectionConfig, DeviceUuid, LocalIdentity, ScConnection, Vmac};
//!
//! let now = Instant::now();
//! let mut hub = Hub::new(HubConfig::new(Vmac::new([2, 0, 0, 0, 0, 1]), DeviceUuid::new([1; 16])), 0);
//! let link = hub.open_connection(now).unwrap();
//! let me = LocalIdentity {
//!     vmac: Vmac::new([2, 0, 0, 0, 0, 2]),
//!     uuid: DeviceUuid::new([2; 16]),
//!     max_bvlc_length: 1600,
//!     max_npdu_length: 1497,
//! };
//! let mut node = ScConnection::initiate(now, me, ConnectionConfig::default(), 1);
//! hub.handle_message(now, link, &node.poll_transmit().unwrap());
//! let Some(HubOutput::Send { frame, .. }) = hub.poll_output() else { panic!() };
//! let accept = BvlcMessage::decode(&frame).unwrap();
//! assert!(matches!(accept.payload, Payload::ConnectAccept(_)));
//! assert_eq!(hub.node_count(), 1);
//! ```

pub mod bvlc;
pub mod connection;
pub mod hub;
pub mod node;
mod vmac;

pub use bvlc::{
    BvlcFunction, BvlcHeader, BvlcMessage, HubConnectionStatus, Payload, ScDecodeError,
};
pub use connection::{
    CloseReason, ConnectionConfig, ConnectionEvent, ConnectionState, LocalIdentity, ScConnection,
};
pub use hub::{Hub, HubConfig, HubEvent, HubOutput, HubStats};
pub use node::{
    HubRole, NodeCommand, NodeConfig, NodeDelivery, NodeEvent, NodeStats, ScNode, SendError,
    Subprotocol,
};
pub use vmac::{AddressParseError, DeviceUuid, Vmac};

/// Largest BVLC-SC message accepted by default (octets): room for a 1497-octet NPDU with
/// both VMACs and a few header options.
pub const DEFAULT_MAX_BVLC_LENGTH: u16 = 1600;
/// Largest NPDU accepted by default (octets), as on BACnet/IP.
pub const DEFAULT_MAX_NPDU_LENGTH: u16 = 1497;
