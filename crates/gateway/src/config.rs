//! The gateway's configuration: a TOML file (every key optional, defaults below) that the
//! command line can override. Durations are seconds (a float: `0.5` is half a second), as
//! the `_seconds` in their names says.
//!
//! ```toml
//! [site]
//! id = "hq"                  # the site's id: @hq (ids of devices and points do not use it)
//! dis = "Headquarters"
//! tz = "New_York"            # Haystack timezone of the histories
//!
//! [bacnet]
//! bind = "0.0.0.0:47808"     # the gateway's BACnet/IP address
//! broadcast = "192.168.1.255"
//! devices = ["192.168.1.20:47808"]   # also asked by unicast Who-Is
//! instance_ranges = [[0, 4194303]]
//! range_size = 100000        # Who-Is asks one range of this many instances at a time
//! who_is_wait_seconds = 2.0
//! max_concurrent_per_device = 8
//! # bbmd = "10.0.0.1:47808"  # register as a foreign device of this BBMD
//! # foreign_ttl_seconds = 300
//!
//! [collect]
//! cov = true                 # subscribe to COV where the device accepts it
//! cov_confirmed = false
//! cov_lifetime_seconds = 300
//! poll_interval_seconds = 10.0
//! health_interval_seconds = 10.0
//! cov_refresh_seconds = 300.0   # COV points are read this often too
//!
//! [store]
//! url = "memory"             # or redis://..., postgres://...
//!
//! [haystack]
//! bind = "127.0.0.1:8080"
//!
//! [rules]
//! file = "rules.toml"        # the tagging rules (default: the shipped set)
//! ```

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::GatewayError;

/// The largest device instance (22 bits).
pub const MAX_INSTANCE: u32 = (1 << 22) - 1;

/// The whole configuration.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// The site record.
    pub site: SiteConfig,
    /// The BACnet side.
    pub bacnet: BacnetConfig,
    /// Collection of values.
    pub collect: CollectConfig,
    /// The storage backend.
    pub store: StoreConfig,
    /// The Haystack server.
    pub haystack: HaystackConfig,
    /// The tagging rules.
    pub rules: RulesConfig,
}

/// The `site` record.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SiteConfig {
    /// The site's id (without `@`).
    pub id: String,
    /// Its display name.
    pub dis: String,
    /// Haystack timezone name of the site and its histories.
    pub tz: String,
}

impl Default for SiteConfig {
    fn default() -> Self {
        Self {
            id: "site".to_owned(),
            dis: "Site".to_owned(),
            tz: "UTC".to_owned(),
        }
    }
}

/// Where and how the gateway talks BACnet.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct BacnetConfig {
    /// The local B/IP address (port 0 picks one).
    pub bind: SocketAddrV4,
    /// The broadcast address for Who-Is; none for unicast only.
    pub broadcast: Option<Ipv4Addr>,
    /// Devices asked by unicast Who-Is (as well as the broadcast).
    pub devices: Vec<SocketAddrV4>,
    /// Device instance ranges to look for, inclusive.
    pub instance_ranges: Vec<[u32; 2]>,
    /// Who-Is asks this many instances at a time, one range after the other, so that a
    /// large site does not answer all at once.
    pub range_size: u32,
    /// How long each Who-Is collects I-Am answers.
    pub who_is_wait_seconds: f64,
    /// Most requests outstanding to one device.
    pub max_concurrent_per_device: usize,
    /// Per-request timeout before a retry (the TSM's APDU timeout).
    pub apdu_timeout_seconds: f64,
    /// Retries of a confirmed request.
    pub retries: u8,
    /// A BBMD to register with as a foreign device: Who-Is then reaches the BBMD's
    /// networks (the sweep runs through it).
    pub bbmd: Option<SocketAddrV4>,
    /// The foreign-device registration's time-to-live (renewed before it ends).
    pub foreign_ttl_seconds: u16,
}

impl Default for BacnetConfig {
    fn default() -> Self {
        Self {
            bind: SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 47808),
            broadcast: None,
            devices: Vec::new(),
            instance_ranges: vec![[0, MAX_INSTANCE]],
            range_size: 100_000,
            who_is_wait_seconds: 2.0,
            max_concurrent_per_device: 8,
            apdu_timeout_seconds: 1.0,
            retries: 2,
            bbmd: None,
            foreign_ttl_seconds: 300,
        }
    }
}

/// How values are collected.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CollectConfig {
    /// Subscribe to COV where the device accepts it (else poll everything).
    pub cov: bool,
    /// Ask for confirmed COV notifications.
    pub cov_confirmed: bool,
    /// The lifetime asked of each subscription (renewed before it ends).
    pub cov_lifetime_seconds: u32,
    /// How often points without COV are read (batched ReadPropertyMultiple).
    pub poll_interval_seconds: f64,
    /// How often each device is checked (a timeout marks its points `down`).
    pub health_interval_seconds: f64,
    /// How often points on COV are read anyway (a lost unconfirmed notification is then
    /// corrected).
    pub cov_refresh_seconds: f64,
}

impl Default for CollectConfig {
    fn default() -> Self {
        Self {
            cov: true,
            cov_confirmed: false,
            cov_lifetime_seconds: 300,
            poll_interval_seconds: 10.0,
            health_interval_seconds: 10.0,
            cov_refresh_seconds: 300.0,
        }
    }
}

/// The storage backend.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct StoreConfig {
    /// `memory`, `redis://HOST:PORT` or `postgres://USER@HOST:PORT/DB`.
    pub url: String,
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            url: "memory".to_owned(),
        }
    }
}

/// The Haystack server.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct HaystackConfig {
    /// Where it listens.
    pub bind: SocketAddr,
}

impl Default for HaystackConfig {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from(([127, 0, 0, 1], 8080)),
        }
    }
}

/// The tagging rules.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RulesConfig {
    /// A rules file; none for the shipped default set.
    pub file: Option<PathBuf>,
}

impl Config {
    /// Reads a configuration file; errors name the file, the line and the key.
    pub fn from_file(path: &Path) -> Result<Self, GatewayError> {
        let text = std::fs::read_to_string(path).map_err(|e| GatewayError::Config {
            file: path.display().to_string(),
            message: e.to_string(),
        })?;
        let mut config = Self::from_toml(&text).map_err(|message| GatewayError::Config {
            file: path.display().to_string(),
            message,
        })?;
        // A relative rules file is relative to the configuration file.
        if let (Some(rules), Some(dir)) = (&config.rules.file, path.parent())
            && rules.is_relative()
        {
            config.rules.file = Some(dir.join(rules));
        }
        Ok(config)
    }

    /// Parses configuration text (the error says the line, the column and the key).
    pub fn from_toml(text: &str) -> Result<Self, String> {
        let config: Config = toml::from_str(text).map_err(|e| e.to_string())?;
        config.check()?;
        Ok(config)
    }

    /// Checks values that TOML types alone do not.
    pub fn check(&self) -> Result<(), String> {
        if !buildwire_haystack::value::is_ref_id(&self.site.id) {
            return Err(format!(
                "site.id {:?}: use letters, digits and _ : - . ~ only",
                self.site.id
            ));
        }
        if buildwire_haystack::timezone::to_iana(&self.site.tz).is_none() {
            return Err(format!(
                "site.tz {:?} is not a Haystack timezone name (e.g. UTC, New_York, Berlin)",
                self.site.tz
            ));
        }
        for [low, high] in &self.bacnet.instance_ranges {
            if low > high || *high > MAX_INSTANCE {
                return Err(format!(
                    "bacnet.instance_ranges: [{low}, {high}] must be low <= high <= {}",
                    MAX_INSTANCE
                ));
            }
        }
        if self.bacnet.range_size == 0 {
            return Err("bacnet.range_size must be at least 1".to_owned());
        }
        for (key, value) in [
            (
                "bacnet.who_is_wait_seconds",
                self.bacnet.who_is_wait_seconds,
            ),
            (
                "bacnet.apdu_timeout_seconds",
                self.bacnet.apdu_timeout_seconds,
            ),
            (
                "collect.poll_interval_seconds",
                self.collect.poll_interval_seconds,
            ),
            (
                "collect.health_interval_seconds",
                self.collect.health_interval_seconds,
            ),
            (
                "collect.cov_refresh_seconds",
                self.collect.cov_refresh_seconds,
            ),
        ] {
            if !(value.is_finite() && value > 0.0 && value < 86_400.0) {
                return Err(format!(
                    "{key} = {value}: give a number of seconds above 0 and below a day"
                ));
            }
        }
        if self.bacnet.bbmd.is_some() && self.bacnet.foreign_ttl_seconds == 0 {
            return Err("bacnet.foreign_ttl_seconds must be at least 1".to_owned());
        }
        if self.bacnet.max_concurrent_per_device == 0 {
            return Err("bacnet.max_concurrent_per_device must be at least 1".to_owned());
        }
        Ok(())
    }
}

/// Seconds as a [`std::time::Duration`] (checked positive and finite by [`Config::check`]).
pub(crate) fn seconds(value: f64) -> std::time::Duration {
    std::time::Duration::from_secs_f64(value.clamp(0.001, 86_400.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        let config =
            Config::from_toml("[site]\nid = \"hq\"\ntz = \"Berlin\"\n").unwrap_or_default();
        assert_eq!(config.site.id, "hq");
        assert_eq!(config.site.tz, "Berlin");
        assert_eq!(config.store.url, "memory");
        assert!(config.collect.cov);
    }

    #[test]
    fn errors_say_line_and_key() {
        let error = Config::from_toml("[site]\nid = \"hq\"\nzone = 3\n")
            .err()
            .unwrap_or_default();
        assert!(error.contains("line 3"), "{error}");
        assert!(error.contains("zone"), "{error}");
        let error = Config::from_toml("[bacnet]\nrange_size = \"many\"\n")
            .err()
            .unwrap_or_default();
        assert!(
            error.contains("line 2") && error.contains("range_size"),
            "{error}"
        );
        let error = Config::from_toml("[site]\ntz = \"Atlantis\"\n")
            .err()
            .unwrap_or_default();
        assert!(error.contains("site.tz"), "{error}");
        let error = Config::from_toml("[bacnet]\ninstance_ranges = [[5, 1]]\n")
            .err()
            .unwrap_or_default();
        assert!(error.contains("instance_ranges"), "{error}");
    }
}
