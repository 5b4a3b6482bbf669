//! Broadcast management both IP links share (Annex J for BACnet/IP, Annex U for
//! BACnet/IPv6):
//!
//! - `fdt`: the foreign device table (time-to-live plus the 30-second grace period);
//! - `registration`: a foreign device's registration and its renewal;
//! - `rate`: the token bucket bounding what a BBMD sends;
//! - `handler`: the BBMD handling of the messages both links share, written once over a
//!   small trait for what differs (address types, Forwarded-NPDU, peers, result codes).
//!
//! The BBMDs themselves are the link layers' roles: [`super::bip::BipLink`] and
//! [`super::bip6::Bip6Link`].

pub(crate) mod fdt;
pub(crate) mod handler;
pub(crate) mod rate;
pub(crate) mod registration;

pub use fdt::{ForeignDevice, ForeignDeviceTable, GRACE_PERIOD};
pub use registration::{ForeignRegistration, RegistrationState};
