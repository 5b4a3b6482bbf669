//! JSON objects and grid rows, shared by the v4 (Hayson) and v3 writers: they differ only in
//! how a single value is written, which each passes in.

use super::write_json_string;
use crate::value::{Dict, Grid, Value};

/// Writes one value in a JSON version's encoding.
pub(super) type ValueWriter = fn(&Value, &mut String);

/// `"name":value`.
pub(super) fn write_member(name: &str, value: &Value, out: &mut String, write_value: ValueWriter) {
    write_json_string(name, out);
    out.push(':');
    write_value(value, out);
}

/// A dict as a JSON object.
pub(super) fn write_dict(dict: &Dict, out: &mut String, write_value: ValueWriter) {
    out.push('{');
    for (i, (name, value)) in dict.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_member(name, value, out, write_value);
    }
    out.push('}');
}

/// `],"rows":[...]}`: the rows of a grid as objects without their empty cells, closing the
/// grid object whose meta and columns the caller wrote.
pub(super) fn write_rows(grid: &Grid, out: &mut String, write_value: ValueWriter) {
    out.push_str("],\"rows\":[");
    for (r, row) in grid.rows().enumerate() {
        if r > 0 {
            out.push(',');
        }
        out.push('{');
        let mut first = true;
        for (column, value) in row.cells() {
            if let Some(column) = grid.columns().get(column) {
                if !first {
                    out.push(',');
                }
                first = false;
                write_member(&column.name, value, out, write_value);
            }
        }
        out.push('}');
    }
    out.push_str("]}");
}
