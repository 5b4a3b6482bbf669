//! Typed BACnet enumerations (Clause 21), each generated from one table with `bacnet_enum!`.
//!
//! Every enumeration converts losslessly to and from its wire number (unlisted numbers are kept
//! in an `Other(u32)` / `Unknown(u32)` variant), prints its standard hyphenated name and parses
//! that name, common aliases (`"ai"`, `"pv"`) or a decimal number.

mod device_control;
mod engineering_units;
pub(crate) mod enum_table;
mod enumeration;
mod error;
mod object_type;
mod property_identifier;
mod reasons;
mod services_supported;
mod status;

pub use device_control::{EnableDisable, LoggingType, ReinitializedState};
pub use engineering_units::EngineeringUnits;
pub use enum_table::ParseEnumError;
pub use enumeration::Enumeration;
pub use error::{ErrorClass, ErrorCode};
pub use object_type::ObjectType;
pub use property_identifier::PropertyIdentifier;
pub use reasons::{AbortReason, RejectReason};
pub use services_supported::ServiceSupported;
pub use status::{BinaryPv, DeviceStatus, EventState, Polarity, Reliability, Segmentation};
