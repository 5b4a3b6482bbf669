//! Wire encodings of the value model: Zinc, JSON (Hayson v4 and v3) and Trio.

pub mod csv;
mod error;
mod format;
pub mod json;
pub mod trio;
pub mod zinc;

pub use error::{DecodeError, DecodeErrorKind, Location};
pub use format::Format;

/// Deepest nesting of lists, dicts and grids any decoder accepts.
pub const MAX_DEPTH: usize = 64;

/// Largest input (in bytes) any decoder accepts.
pub const MAX_INPUT_BYTES: usize = 256 * 1024 * 1024;

/// Most columns a decoded grid may have.
pub const MAX_COLUMNS: usize = 16 * 1024;
