//! Project Haystack core for buildwire: the value model ([`value`]) and its
//! encodings ([`codec`]: Zinc, JSON v4/v3, Trio). Sans-IO: strings and bytes in,
//! values out, and back.

#![warn(missing_docs)]

pub mod codec;
pub mod value;

pub use codec::{DecodeError, DecodeErrorKind, Location};
pub use value::{Column, Coord, Date, DateTime, Dict, Grid, Kind, Number, Ref, Time, Value, XStr};
