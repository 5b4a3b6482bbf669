//! Sans-IO BACnet (ASHRAE 135) protocol core for buildwire.
//!
//! Layers, bottom to top (each only uses the ones above it in this list):
//! - [`enums`]: typed Clause 21 enumerations, each generated from one table;
//! - [`encoding`]: Clause 20.2 tags, primitive values, generic tagged data and the
//!   constructed types services share (`PropertyValue`, `PriorityArray`, references);
//! - [`network`]: Clause 6 network layer (NPDU);
//! - [`apdu`]: Clause 20.1 application PDU headers and service choices;
//! - [`link`]: the data links, one folder each: B/IP (Annex J: BVLL, BBMD, foreign
//!   devices), B/IPv6 (Annex U) and BACnet Secure Connect (Annex AB);
//! - [`router`]: the Clause 6 multi-port router;
//!
//! No sockets, clocks or sleeping: every type only turns bytes into values and back.
//! Every wire type has `encode(&self, &mut Vec<u8>)` and `decode(&mut Reader)`; decoders
//! never panic and report the byte offset of the problem in [`DecodeError`].
//!
//! ```
//! use buildwire_bacnet::{ObjectIdentifier, PropertyIdentifier, Reader};
//! use buildwire_bacnet::encoding::PrimitiveValue;
//!
//! let object: ObjectIdentifier = "ai,5".parse().unwrap();
//! let mut buf = Vec::new();
//! object.encode_context(0, &mut buf);
//! PropertyIdentifier::PresentValue.encode_context(1, &mut buf);
//! assert_eq!(buf, [0x0C, 0x00, 0x00, 0x00, 0x05, 0x19, 0x55]);
//!
//! let mut reader = Reader::new(&buf);
//! assert_eq!(ObjectIdentifier::decode_context(&mut reader, 0).unwrap(), object);
//! ```

#![warn(missing_docs)]

pub mod apdu;
pub mod app;
#[cfg(feature = "tokio")]
pub mod driver;
pub mod encoding;
pub mod enums;
pub mod inspect;
pub mod link;
pub mod network;
pub mod objects;
pub mod router;
pub mod services;
pub mod tsm;

pub use encoding::{
    ApplicationValue, DecodeError, DecodeErrorKind, ObjectIdentifier, PropertyValue, Reader,
};
pub use enums::{EngineeringUnits, ObjectType, PropertyIdentifier};
