//! The secure channel as both sides run it, between the [`security`](crate::security) layer
//! and the [`server`](crate::server) and [`client`](crate::client) cores: sequence numbers
//! ([`sequence`]), the tokens a server issues ([`tokens`]), the outgoing message queue cut
//! into chunks ([`outgoing`]), opening and securing chunks ([`secured`]), and
//! [`ChannelEndpoint`] ([`endpoint`]), one end of a connection (frame decoder, limits,
//! sequences, send queues, security) with the one send path, which `ServerConnection` and
//! `ClientConnection` each embed.
//!
//! Nothing here opens sockets, sleeps or reads the clock.
//!
//! ```
//! use buildwire_opcua::channel::{ChannelEndpoint, Side};
//! use buildwire_opcua::encoding::DecodingLimits;
//! use buildwire_opcua::transport::{ConnectionLimits, ConnectionMessage};
//!
//! let mut client = ChannelEndpoint::new(Side::Client, 8192, DecodingLimits::default());
//! client.queue_immediate(ConnectionLimits::default().hello("opc.tcp://x/").to_message_bytes());
//! assert_eq!(&client.poll_transmit().unwrap()[..4], b"HELF");
//! assert_eq!(client.poll_transmit(), None);
//! ```

pub mod endpoint;
pub mod outgoing;
pub mod secured;
pub mod sequence;
pub mod tokens;

pub use endpoint::{ChannelEndpoint, CloseReason, Side};
pub use outgoing::{BodySegment, OutgoingBody, OutgoingMessage};
pub use secured::{
    Rejection, asymmetric_header, frame_bytes, header_policy, limit_body, open_symmetric,
    opn_security_header, plain_frame, write_secured_chunk,
};
pub use sequence::{ReceiveSequence, SEQUENCE_WRAP_LIMIT, SEQUENCE_WRAP_THRESHOLD, SendSequence};
pub use tokens::{ChannelTokens, TOKEN_LIFETIME_RANGE_MS};
