//! Trio: the line-oriented Haystack record format (`name:value` lines, `---` between records).

mod reader;
mod writer;

pub use reader::{decode_grid, decode_records};
pub use writer::{write_grid, write_records};

use crate::value::{Dict, Grid};

/// Encodes records as Trio.
pub fn encode_records(records: &[Dict]) -> String {
    let mut out = String::new();
    write_records(records, &mut out);
    out
}

/// Encodes each row of a grid as one Trio record (empty cells are left out).
pub fn encode_grid(grid: &Grid) -> String {
    let mut out = String::with_capacity(64 + grid.row_count() * grid.columns().len() * 4);
    write_grid(grid, &mut out);
    out
}

#[cfg(test)]
mod tests;
