//! Zinc: the Haystack text grid format (`ver:"3.0"`), decode and encode.
//!
//! ```
//! use buildwire_haystack::codec::zinc;
//! let grid = zinc::decode_grid("ver:\"3.0\"\nid,eff\n@b-002c,10.6EER\n")?;
//! assert_eq!(grid.get(0, "eff"), Some(&buildwire_haystack::Value::number_with_unit(10.6, "EER")));
//! assert_eq!(zinc::encode_grid(&grid), "ver:\"3.0\"\nid,eff\n@b-002c,10.6EER\n");
//! # Ok::<(), buildwire_haystack::codec::DecodeError>(())
//! ```

mod reader;
mod stream;
mod writer;

pub use reader::{SUPPORTED_VERSIONS, ZincReader};
pub use stream::{BATCH_LINES, MAX_ROW_BYTES, ZincRowStream};
pub use writer::{write_grid, write_number, write_str_literal, write_value};

use super::{DecodeError, DecodeErrorKind};
use crate::value::{Grid, Value};

/// Characters that, after a backslash inside a URI, form a URI-level escape kept verbatim.
pub(crate) const URI_VERBATIM_ESCAPES: &[u8] = b":/?#[]@\\&=;";

/// Decodes a whole Zinc grid; only whitespace may follow it.
pub fn decode_grid(input: &str) -> Result<Grid, DecodeError> {
    let mut reader = ZincReader::new(input)?;
    if crate::codec::parallel_decode() {
        reader = reader.split_rows_from(crate::codec::parallel_min_bytes());
    }
    let grid = reader.read_grid()?;
    reader.expect_end()?;
    Ok(grid)
}

/// Decodes a Zinc grid from bytes, which must be UTF-8.
pub fn decode_grid_bytes(input: &[u8]) -> Result<Grid, DecodeError> {
    decode_grid(utf8(input)?)
}

/// Decodes one Zinc value (e.g. `10.6EER`, `@a "A"`, `{a b:1}`); surrounding whitespace is allowed.
pub fn decode_value(input: &str) -> Result<Value, DecodeError> {
    let mut reader = ZincReader::new(input)?;
    let value = reader.read_value()?;
    reader.expect_end()?;
    Ok(value)
}

/// Checks that `input` is UTF-8, reporting the offset of the first bad byte.
pub(crate) fn utf8(input: &[u8]) -> Result<&str, DecodeError> {
    std::str::from_utf8(input).map_err(|e| {
        let valid = std::str::from_utf8(input.get(..e.valid_up_to()).unwrap_or(&[])).unwrap_or("");
        DecodeError::at_offset(valid, e.valid_up_to(), DecodeErrorKind::InvalidUtf8)
    })
}

/// Encodes a grid as a Zinc document.
pub fn encode_grid(grid: &Grid) -> String {
    let mut out = String::with_capacity(64 + grid.row_count() * grid.columns().len() * 8);
    write_grid(grid, &mut out);
    out
}

/// Encodes one value in Zinc.
pub fn encode_value(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, &mut out);
    out
}

impl Grid {
    /// Decodes a Zinc grid (same as [`decode_grid`]).
    pub fn decode_zinc(input: &str) -> Result<Grid, DecodeError> {
        decode_grid(input)
    }

    /// Appends this grid as Zinc to `out` (same as [`write_grid`]).
    pub fn encode_zinc(&self, out: &mut String) {
        write_grid(self, out);
    }
}

impl Value {
    /// Decodes one Zinc value (same as [`decode_value`]).
    pub fn decode_zinc(input: &str) -> Result<Value, DecodeError> {
        decode_value(input)
    }

    /// Appends this value as Zinc to `out` (same as [`write_value`]).
    pub fn encode_zinc(&self, out: &mut String) {
        write_value(self, out);
    }
}

impl std::fmt::Display for Value {
    /// Formats the value as Zinc, e.g. `10.6EER` or `@a-0001 "AHU"`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&encode_value(self))
    }
}

#[cfg(test)]
pub(crate) mod tests;
