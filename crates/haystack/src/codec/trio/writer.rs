//! Trio encoder: one `name` / `name:value` line per tag, `---` between records.
//!
//! Strings are written unquoted when the decoder would read them back as the same
//! string, as indented multi-line text when they span lines safely, and as Zinc
//! string literals otherwise. Grids are written as indented `Zinc:` blocks.

use crate::codec::zinc;
use crate::value::{Dict, Grid, Value};

/// Indentation used for multi-line strings and `Zinc:` blocks.
const INDENT: &str = "  ";

/// Writes records separated by `---` lines.
pub fn write_records<'a>(records: impl IntoIterator<Item = &'a Dict>, out: &mut String) {
    for (i, record) in records.into_iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        for (name, value) in record.iter() {
            write_tag(name, value, out);
        }
    }
}

/// Writes each row of a grid as one record (empty cells left out), straight from the
/// cells, without building a dict per row.
pub fn write_grid(grid: &Grid, out: &mut String) {
    for (i, row) in grid.rows().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        for (column, value) in row.cells() {
            if let Some(column) = grid.columns().get(column) {
                write_tag(&column.name, value, out);
            }
        }
    }
}

fn write_tag(name: &str, value: &Value, out: &mut String) {
    out.push_str(name);
    match value {
        Value::Marker => {}
        Value::Str(s) if can_be_unquoted(s) => {
            out.push(':');
            out.push_str(s);
        }
        Value::Str(s) if can_be_multi_line(s) => {
            out.push(':');
            for line in s.split('\n') {
                out.push('\n');
                out.push_str(INDENT);
                out.push_str(line);
            }
        }
        Value::Grid(grid) => {
            out.push_str(":Zinc:");
            let text = zinc::encode_grid(grid);
            for line in text.lines() {
                out.push('\n');
                out.push_str(INDENT);
                out.push_str(line);
            }
        }
        other => {
            out.push(':');
            zinc::write_value(other, out);
        }
    }
    out.push('\n');
}

/// Whether `s` is written bare. Following the Trio rule, it must either begin with a
/// non-ASCII character, or begin with an ASCII letter and hold only the safe
/// characters `A-Z a-z 0-9 space - _`; in both cases it must also not read as another
/// Zinc value (`T`, `NA`, `INF`...), contain no control characters and have no
/// surrounding whitespace. This reproduces the published example files, which quote
/// e.g. `"80821"`, `"%"`, `"S/S Command"` and `"inH₂O"` but not `°F`.
fn can_be_unquoted(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    let safe = if first.is_ascii() {
        first.is_ascii_alphabetic()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '-' | '_'))
    } else {
        !s.chars().any(char::is_control)
    };
    safe && s == s.trim() && zinc::decode_value(s).is_err()
}

/// Whether `s` survives the indented multi-line form unchanged.
fn can_be_multi_line(s: &str) -> bool {
    s.contains('\n')
        && !s.chars().any(|c| c.is_control() && c != '\n' && c != '\t')
        && s.split('\n').all(|l| l.is_empty() || !l.trim().is_empty())
        && s.split('\n')
            .any(|l| !l.is_empty() && !l.starts_with([' ', '\t']))
}
