//! Project Haystack core for buildwire. Layers, bottom to top (a layer uses only those
//! before it):
//!
//! - [`value`]: the value model (every kind, Dict, Grid);
//! - [`codec`]: Zinc, JSON v4 (Hayson) and v3, Trio, CSV export, and [`codec::Format`];
//! - [`units`], [`timezone`], [`defs`]: the standard unit database, timezone names, and the
//!   Haystack 4 defs (ph, phScience, phIoT, phIct) with taxonomy and reflection queries;
//! - [`filter`]: the filter language (parse, print, evaluate);
//! - [`store`]: the in-memory entity store with tag and value indexes, the ref graph and
//!   histories ([`store::InMemoryStorage`]), priority arrays and history rollups;
//! - [`backends`]: the async storage interface the ops run on ([`backends::Backend`], its
//!   errors and change events) with the in-memory, Redis and PostgreSQL implementations;
//! - [`ops`]: the Haystack ops without I/O (request grid, role and time in, response grid
//!   out), the HTTP request path, watches, and the WebSocket envelope ([`ops::ws`]);
//! - [`server`]: the tokio HTTP + WebSocket server over [`ops`] (feature `server`),
//!   started with [`server::HaystackServer::start`].
//!
//! Beside them: [`auth`], HTTP authentication (HELLO / SCRAM-SHA-256 / BEARER) state
//! machines, and [`client`], the HTTP and WebSocket API client (tokio), opened with
//! [`client::connect`].

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod auth;
pub mod backends;
pub mod client;
pub mod codec;
pub mod defs;
pub mod filter;
pub mod ops;
#[cfg(feature = "server")]
pub mod server;
pub mod store;
pub mod timezone;
pub mod units;
pub mod value;

pub use codec::{DecodeError, DecodeErrorKind, Location};
pub use value::{Column, Coord, Date, DateTime, Dict, Grid, Kind, Number, Ref, Time, Value, XStr};
