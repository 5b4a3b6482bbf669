//! The sans-IO OPC UA client core, bottom to top: the text form of NodeIds
//! ([`node_id_text`]), who a session runs as ([`identity`]), the [`config`], the table of
//! outstanding requests ([`request_table`]), the client side of [`subscriptions`], typed text
//! and JSON for values at the edge ([`value_text`]) and the per-connection state machine
//! [`ClientConnection`] ([`connection`]), the mirror of the server's `ServerConnection`.
//!
//! Like the server, it runs the secure channel through the [`channel`](crate::channel)
//! layer: a `ChannelEndpoint` holds the framing, sequence numbers, send queue and security,
//! and sends every chunk. Nothing here opens sockets, sleeps or reads the clock.
//!
//! ```
//! use std::time::Instant;
//! use buildwire_opcua::DateTime;
//! use buildwire_opcua::client::{ClientConfig, ClientConnection, ClientState};
//!
//! let now = Instant::now();
//! let mut client = ClientConnection::new(ClientConfig::new("opc.tcp://localhost:4840"), now, DateTime(0));
//! let hello = client.poll_transmit().unwrap();
//! assert_eq!(&hello[..4], b"HELF");
//! assert_eq!(client.state(), ClientState::Connecting);
//! ```

pub mod config;
pub mod connection;
pub mod identity;
pub mod node_id_text;
pub mod reconnect;
pub mod request_table;
pub mod security;
pub mod structures;
pub mod subscriptions;
pub mod value_text;

pub use config::ClientConfig;
pub use connection::{ClientConnection, ClientEvent, ClientState, SendError};
pub use identity::ClientIdentity;
pub use node_id_text::NodeIdParseError;
pub use security::ClientSecurity;
