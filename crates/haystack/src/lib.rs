//! Project Haystack core for buildwire: the value model ([`value`]), its
//! encodings ([`codec`]: Zinc, JSON v4/v3, Trio) and HTTP authentication ([`auth`]:
//! HELLO / SCRAM-SHA-256 / BEARER). Sans-IO: strings and bytes in, values out, and back.

#![warn(missing_docs)]

pub mod auth;
pub mod codec;
pub mod defs;
pub mod filter;
pub mod store;
pub mod timezone;
pub mod units;
pub mod value;

pub use codec::{DecodeError, DecodeErrorKind, Location};
pub use value::{Column, Coord, Date, DateTime, Dict, Grid, Kind, Number, Ref, Time, Value, XStr};
