//! buildwire's BACnet to Haystack gateway: discovers a BACnet site, models it as tagged
//! Haystack 4 entities, collects live values and history into a storage backend, and
//! serves the model with the Haystack API, writes going back to the devices.
//!
//! Layers (each uses only those before it): [`config`] (the TOML file) -> [`discover`]
//! (the BACnet reads) -> [`rules`] (tags from names, validation) -> [`model`] (entities,
//! ids, merge, export) -> [`collect`] (COV and polling into the backend) -> [`serve`]
//! (the backend the Haystack server runs on, pointWrite to WriteProperty) -> [`run`] (the
//! tokio driver that ties them together: [`Gateway::start`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), buildwire_gateway::GatewayError> {
//! use buildwire_gateway::{Config, Gateway, rules::Rules};
//! let config = Config::from_toml("[bacnet]\nbroadcast = \"192.168.1.255\"\n")
//!     .map_err(|message| buildwire_gateway::GatewayError::Config { file: "-".into(), message })?;
//! let gateway = Gateway::start(config, Rules::default_set(), Default::default()).await?;
//! println!("Haystack API at {}", gateway.haystack_url());
//! gateway.stop().await;
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]

pub mod collect;
pub mod config;
pub mod discover;
pub mod model;
pub mod rules;
pub mod run;
pub mod serve;

pub use config::Config;
pub use run::{DiscoveryReport, Gateway, discover_model};

/// Why the gateway could not do what it was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GatewayError {
    /// A configuration or rules file is wrong.
    #[error("{file}: {message}")]
    Config {
        /// The file.
        file: String,
        /// What is wrong, with the line and key.
        message: String,
    },
    /// A file could not be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
    /// The BACnet side could not start or discover.
    #[error("BACnet: {0}")]
    Bacnet(String),
    /// The storage backend refused.
    #[error("store: {0}")]
    Store(String),
    /// The Haystack server could not start.
    #[error("Haystack server: {0}")]
    Server(String),
    /// The model is not consistent.
    #[error("model: {0}")]
    Model(String),
}
