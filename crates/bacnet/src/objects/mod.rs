//! Objects (Clause 12): the object database a device serves.
//!
//! Layers, bottom to top: `value` (stored property data and array-index reads),
//! `object` (one object and the read/write/command rules), [`object_types`] and
//! [`device`] (the Clause 12 object types), [`database`] (the device's collection of
//! objects) and [`profile`] (JSON device descriptions).
//! Nothing here reads a clock: the caller passes the local date and time in.

pub mod database;
pub mod datatypes;
pub mod device;
pub(crate) mod error;
pub(crate) mod object;
pub mod object_types;
pub mod profile;
pub(crate) mod schedule;
pub(crate) mod trend_log;
pub(crate) mod value;

pub use error::PropertyError;
pub use object::{ListChangeError, Object, PropertySelection, WriteOutcome};
pub use trend_log::LogBuffer;
pub use value::PropertyData;
