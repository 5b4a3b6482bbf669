//! Trio: the line-oriented Haystack record format (`name:value` lines, `---` between records).

mod reader;
mod writer;

pub use reader::decode_records;
pub use writer::write_records;

use super::DecodeError;
use crate::value::{Dict, Grid};

/// Decodes a Trio document into a grid whose columns are the union of all tag names
/// in first-seen order.
pub fn decode_grid(input: &str) -> Result<Grid, DecodeError> {
    let records = decode_records(input)?;
    Grid::from_dicts(&records).map_err(|e| {
        DecodeError::at_offset(input, 0, super::DecodeErrorKind::InvalidGrid(e.to_string()))
    })
}

/// Encodes records as Trio.
pub fn encode_records(records: &[Dict]) -> String {
    let mut out = String::new();
    write_records(records, &mut out);
    out
}

/// Encodes each row of a grid as one Trio record (empty cells are left out).
pub fn encode_grid(grid: &Grid) -> String {
    let records: Vec<Dict> = (0..grid.row_count())
        .filter_map(|i| grid.row_dict(i))
        .collect();
    encode_records(&records)
}

#[cfg(test)]
mod tests;
