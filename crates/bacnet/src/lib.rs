//! BACnet (ASHRAE 135) for buildwire: a sans-IO protocol core and thin tokio drivers.
//!
//! Layers, bottom to top (each only uses the ones above it in this list):
//! - [`enums`]: typed Clause 21 enumerations, each generated from one table;
//! - [`encoding`]: Clause 20.2 tags, primitive values, generic tagged data, the constructed
//!   types services share (`PropertyValue`, `PriorityArray`, references) and the one JSON
//!   mapping of values ([`encoding::json`]);
//! - [`network`]: Clause 6 network layer (NPDU, network messages, addresses, route cache);
//! - [`link`]: the data links, one folder each: [`link::bip`] (Annex J: BVLL codec, the
//!   link of a node, BBMD or foreign device), [`link::bip6`] (Annex U), [`link::sc`]
//!   (BACnet Secure Connect, Annex AB) and [`link::bbmd`] (what both IP links' BBMDs
//!   share, with one handler for both);
//! - [`apdu`]: Clause 20.1 application PDU headers and service choices;
//! - [`services`]: the request and answer parameters of each service;
//! - [`tsm`]: the client and server transaction state machines (Clause 5.4);
//! - [`objects`]: the object database a device serves, and JSON device profiles;
//! - [`app`]: the device server and the client core;
//! - [`router`]: the Clause 6 multi-port router;
//! - [`inspect`]: dissection of datagrams for people and tools;
//! - [`driver`] (feature `tokio`, on by default): sockets, timers, TLS and WebSockets
//!   around the layers above: [`BacnetServer::start`]`(`[`BacnetServerConfig`]`)`,
//!   [`BacnetClient`], [`BacnetRouter`], the B/IP, B/IPv6 and BACnet/SC transports.
//!
//! Everything but [`driver`] is sans-IO: no sockets, clocks or sleeping; time comes in as
//! `now`, bytes in and out. `cargo check -p buildwire-bacnet --no-default-features` builds
//! it without tokio (the fuzz targets do). Every wire type has
//! `encode(&self, &mut Vec<u8>)` and `decode(&mut Reader)`; decoders never panic and
//! report the byte offset of the problem in [`DecodeError`].
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
// Unsafe code only where a C interface needs it, each block justified at the code: the
// netmask lookup (`getifaddrs`) of the B/IP driver. The sans-IO core has none.
#![deny(unsafe_code)]

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

pub use app::{ClientCore, ClientError, DeviceServer};
#[cfg(feature = "tokio")]
pub use driver::{
    BacnetClient, BacnetRouter, BacnetServer, BacnetServerConfig, BipConfig, BipTransport,
    ClientConfig,
};
pub use encoding::{
    ApplicationValue, DecodeError, DecodeErrorKind, Element, ObjectIdentifier, PropertyValue,
    Reader,
};
pub use enums::{EngineeringUnits, ObjectType, PropertyIdentifier};
pub use network::{DeviceAddress, RoutedAddress};
pub use objects::database::ObjectDatabase;
pub use objects::profile::{DeviceProfile, ProfileError};
pub use objects::{PropertyData, PropertyError};
pub use tsm::{RequestTiming, TsmConfig};
