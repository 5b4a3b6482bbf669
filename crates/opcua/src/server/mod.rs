//! The sans-IO OPC UA server core, bottom to top: the [`address_space`] (with the
//! [`namespace_zero`] table), the shared [`Server`] state ([`server_state`]: configuration,
//! nodes, [`session`]s), the service handlers ([`discovery_services`], [`session_services`],
//! [`view_services`], [`attribute_services`], [`method_services`]) behind one service router,
//! the [`subscriptions`] engine and the per-connection state machine [`ServerConnection`]
//! ([`connection`]), which runs its secure channel through the [`channel`](crate::channel)
//! layer. The Throughput benchmark nodes ([`bench_methods`]) are installed like any user
//! nodes, by whoever wants them.
//!
//! Sharing: connections do not own the server; each call that needs it takes `&mut Server`.
//! A driver therefore keeps the `Server` in one task (the one that owns the sockets' byte
//! queues) or behind a lock of its choosing; the core itself has no lock and no `Arc` other
//! than the benchmark payload. Time is always passed in (`Instant`); the wall clock is
//! `config.start_time` plus the elapsed time.
//!
//! ```
//! use std::time::Instant;
//! use buildwire_opcua::server::{Server, ServerConfig, ServerConnection};
//!
//! let now = Instant::now();
//! let mut server = Server::new(ServerConfig::default(), now).unwrap();
//! let mut connection = ServerConnection::new(&server);
//! connection.handle_bytes(&mut server, now, b"GET / HTTP/1.1\r\n");
//! // Not UA TCP: an ERR message (Bad_TcpMessageTypeInvalid) is sent and the connection closes.
//! let error = connection.poll_transmit().unwrap();
//! assert_eq!(&error[..4], b"ERRF");
//! assert!(connection.is_closed());
//! ```

pub mod address_space;
pub mod attribute_services;
pub mod bench_methods;
pub mod config;
pub mod connection;
pub mod discovery_services;
mod dispatch;
pub mod method_services;
pub mod namespace_zero;
pub mod security;
pub mod server_state;
pub mod session;
pub mod session_services;
pub mod subscriptions;
pub mod user_hooks;
pub mod view_services;

pub use address_space::{AddressSpace, MethodArgument, MethodCallback, MethodHandler};
pub use config::{BuildInfo, OperationLimits, ServerConfig, UserAccount};
pub use connection::{CloseReason, ServerConnection};
pub use security::ServerSecurity;
pub use server_state::Server;
pub use subscriptions::SubscriptionLimits;
pub use user_hooks::{MethodInvocation, WrittenValue};
