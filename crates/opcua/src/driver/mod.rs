//! Thin tokio drivers around the sans-IO server and client cores: they only move bytes
//! between sockets and the cores and fire the cores' timers.
//!
//! - [`server`]: [`OpcuaServer`], one task per TCP connection around a shared `Server`.
//! - [`client`]: [`OpcuaClient`], async browse / read / write / call / translate /
//!   get_endpoints over one session.

pub mod client;
pub mod security;
pub mod server;

pub use client::{ClientError, OpcuaClient};
pub use server::{OpcuaServer, ServerStartError};
