//! Thin tokio drivers around the sans-IO server and client cores: they only move bytes
//! between sockets and the cores and fire the cores' timers.
//!
//! - [`server`]: [`OpcuaServer::start`] with an [`OpcuaServerConfig`] (bind address, core
//!   configuration, setup hooks), one task per TCP connection around a shared `Server`.
//! - [`client`]: [`OpcuaClient`], async browse / read / write / call / translate /
//!   get_endpoints over one session.
//! - [`batch`]: `read_many` / `write_many` on `OpcuaClient`, split to the server's
//!   operation limits and pipelined.
//! - [`reconnect`]: [`ReconnectingClient`], an `OpcuaClient` that reconnects with backoff,
//!   re-activates its session on the new channel and runs [`ReconnectHook`]s.

pub mod batch;
pub mod client;
pub mod reconnect;
pub mod security;
pub mod server;

pub use client::{ClientError, OpcuaClient};
pub use reconnect::{ConnectionEvent, ReconnectHook, ReconnectPolicy, ReconnectingClient};
pub use server::{OpcuaServer, OpcuaServerConfig, ServerStartError, SetupHook};
