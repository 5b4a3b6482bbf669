//! The client side of the Haystack HTTP API (tokio + reqwest over rustls).
//!
//! - [`request`]: the request grids of every standard op and the reading of answers,
//!   without I/O (shared by the HTTP and WebSocket clients);
//! - [`HaystackClient`]: SCRAM login (HELLO, SCRAM-SHA-256, BEARER), every standard op
//!   over HTTP with Zinc or JSON, watches as [`Watch`]es;
//! - [`WsClient`]: the same ops over one WebSocket with request ids, and the server's
//!   watch pushes;
//! - [`rollup`]: rollups folded by the client when a server answers `hisRead` with raw
//!   samples;
//! - [`connect`]: login and transport in one call ([`Transport::Http`] or
//!   [`Transport::WebSocket`]), giving one client type, [`ApiClient`].
//!
//! ```no_run
//! # async fn example() -> Result<(), buildwire_haystack::client::ClientError> {
//! use buildwire_haystack::client::{ClientOptions, HaystackApi, HaystackClient};
//!
//! let client = HaystackClient::connect(
//!     "http://127.0.0.1:8080/api",
//!     ClientOptions::login("admin", "secret"),
//! )
//! .await?;
//! let about = client.about().await?;
//! let sites = client.read("site", None).await?;
//! println!("{:?} has {} sites", about.get("serverName"), sites.row_count());
//! # Ok(()) }
//! ```

mod api;
mod connect;
mod error;
mod http;
pub mod request;
pub mod rollup;
mod ws;

pub use api::HaystackApi;
pub use connect::{ApiClient, Transport, connect};
pub use error::ClientError;
pub use http::{ClientOptions, HaystackClient, Watch};
pub use ws::{WsClient, WsPush, websocket_url};
