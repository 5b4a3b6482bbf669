//! BACnet/SC on tokio: TLS 1.3 (`tls`) and certificates (`certs`), the WebSocket
//! framing (`websocket`), the hub ([`ScHub`]) and a node's transport ([`ScTransport`]).

pub mod certs;
mod hub;
mod node;
pub mod tls;
mod websocket;

pub use hub::{ScHub, ScHubConfig, ScHubStats};
pub use node::{
    ScNodeConfig, ScTransport, load_or_create_uuid, random_identity, random_uuid, random_vmac,
};
