//! CSV export of grids (Haystack CSV chapter, RFC 4180 quoting).
//!
//! The header row holds each column's display name (its `dis` meta when that is a
//! string, else its name); then one line per row. Markers become `✓` (U+2713), nulls
//! and missing cells the empty string, refs `@id dis`, bools `true`/`false`, strings
//! and URIs their raw text, and every other value its Zinc text (numbers keep their
//! unit, e.g. `72.5°F`). Fields holding a comma, a double quote, a line break or
//! leading/trailing spaces are quoted, with inner quotes doubled. Lines end with `\n`.
//! CSV drops metadata and types, so there is no decoder back to a grid.

use crate::codec::zinc;
use crate::value::{Grid, Value};

/// The text of a marker cell.
pub const MARKER_TEXT: &str = "\u{2713}";

/// Encodes a grid as CSV.
pub fn encode_grid(grid: &Grid) -> String {
    let mut out = String::with_capacity(64 + grid.row_count() * grid.columns().len() * 8);
    write_grid(grid, &mut out);
    out
}

/// Appends a grid as CSV to `out`.
pub fn write_grid(grid: &Grid, out: &mut String) {
    for (i, column) in grid.columns().iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let name = match column.meta.get("dis") {
            Some(Value::Str(dis)) => dis.as_str(),
            _ => column.name.as_str(),
        };
        write_field(name, out);
    }
    out.push('\n');
    let mut cell = String::new();
    for row in grid.rows() {
        for (i, value) in row.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            cell.clear();
            if let Some(value) = value {
                write_cell(value, &mut cell);
            }
            write_field(&cell, out);
        }
        out.push('\n');
    }
}

/// Appends the CSV text of one cell value (before quoting).
pub fn write_cell(value: &Value, out: &mut String) {
    match value {
        Value::Null => {}
        Value::Marker => out.push_str(MARKER_TEXT),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Str(s) | Value::Uri(s) => out.push_str(s),
        Value::Ref(r) => {
            out.push('@');
            out.push_str(&r.id);
            if let Some(dis) = &r.dis {
                out.push(' ');
                out.push_str(dis);
            }
        }
        other => zinc::write_value(other, out),
    }
}

/// Whether a field must be quoted (RFC 4180 section 2, plus edge spaces that
/// spreadsheet programs would otherwise trim).
fn needs_quotes(field: &str) -> bool {
    field.contains([',', '"', '\n', '\r']) || field.starts_with(' ') || field.ends_with(' ')
}

/// Appends one field, quoted when needed.
pub fn write_field(field: &str, out: &mut String) {
    if needs_quotes(field) {
        out.push('"');
        for c in field.chars() {
            if c == '"' {
                out.push('"');
            }
            out.push(c);
        }
        out.push('"');
    } else {
        out.push_str(field);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{Column, Date, Dict, Number, Ref};

    #[test]
    fn spec_example() {
        // Haystack docs, CSV chapter, "Grid Format" example; the column meta is written
        // `dis dis:"Equip Name"`, the valid Zinc 3 form of the docs' `dis "Equip Name"`.
        let grid = zinc::decode_grid(
            "ver:\"3.0\" projName:\"test\"\ndis dis:\"Equip Name\",equip,siteRef,installed\n\
             \"RTU-1\",M,@153c600e-699a1886 \"HQ\",2005-06-01\n\
             \"RTU-2\",M,@153c600e-699a1886 \"HQ\",1999-07-12\n",
        )
        .unwrap();
        assert_eq!(
            encode_grid(&grid),
            "Equip Name,equip,siteRef,installed\n\
             RTU-1,\u{2713},@153c600e-699a1886 HQ,2005-06-01\n\
             RTU-2,\u{2713},@153c600e-699a1886 HQ,1999-07-12\n"
        );
    }

    #[test]
    fn quoting_and_kinds() {
        let mut meta = Dict::new();
        meta.insert("dis", Value::from("Name, full")).unwrap();
        let columns = vec![
            Column {
                name: "a".into(),
                meta,
            },
            Column {
                name: "b".into(),
                meta: Dict::new(),
            },
        ];
        let mut grid = Grid::new(Dict::new(), columns).unwrap();
        grid.push_row(vec![
            Some(Value::from("say \"hi\"")),
            Some(Value::Bool(false)),
        ])
        .unwrap();
        grid.push_row(vec![Some(Value::from("two\nlines")), None])
            .unwrap();
        grid.push_row(vec![
            Some(Value::Number(Number::with_unit(72.5, "°F"))),
            Some(Value::Ref(Ref::new("x"))),
        ])
        .unwrap();
        grid.push_row(vec![
            Some(Value::Uri("http://a/b,c".into())),
            Some(Value::Date(Date::new(2024, 1, 2).unwrap())),
        ])
        .unwrap();
        grid.push_row(vec![Some(Value::Null), Some(Value::from(" pad"))])
            .unwrap();
        assert_eq!(
            encode_grid(&grid),
            "\"Name, full\",b\n\
             \"say \"\"hi\"\"\",false\n\
             \"two\nlines\",\n\
             72.5°F,@x\n\
             \"http://a/b,c\",2024-01-02\n\
             ,\" pad\"\n"
        );
    }

    #[test]
    fn nested_values_use_zinc() {
        let mut cell = String::new();
        write_cell(
            &Value::List(vec![Value::number(1.0), Value::from("a")]),
            &mut cell,
        );
        assert_eq!(cell, "[1,\"a\"]");
        let mut out = String::new();
        write_field(&cell, &mut out);
        assert_eq!(out, "\"[1,\"\"a\"\"]\"");
    }
}
