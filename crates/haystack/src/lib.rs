//! Project Haystack core for buildwire, sans-IO (strings and bytes in, values out, and back):
//!
//! - [`value`]: the value model (every kind, Dict, Grid);
//! - [`codec`]: Zinc, JSON v4 (Hayson) and v3, Trio, CSV export, and [`codec::Format`];
//! - [`units`], [`timezone`], [`defs`]: the standard unit database, timezone names, and the
//!   Haystack 4 defs (ph, phScience, phIoT, phIct) with taxonomy and reflection queries;
//! - [`filter`]: the filter language (parse, print, evaluate);
//! - [`backends`]: Redis and PostgreSQL storage behind the same [`ops::Backend`] trait.
//! - [`store`]: the in-memory entity store with tag and value indexes, the ref graph,
//!   histories, and the `Storage` trait servers talk to;
//! - [`auth`]: HTTP authentication (HELLO / SCRAM-SHA-256 / BEARER);
//! - [`ops`]: the Haystack ops without I/O (request grid, role and time in, response grid
//!   out), the HTTP request path, the async storage interface and watches;
//! - [`server`]: the tokio HTTP + WebSocket server over [`ops`] (feature `server`);
//! - [`client`]: the HTTP and WebSocket API client (tokio).

#![warn(missing_docs)]

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
