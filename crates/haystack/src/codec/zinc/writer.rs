//! Zinc encoder: canonical, deterministic text for grids and values.
//!
//! Canonical choices: `ver:"3.0"`; meta and dict markers written as bare names;
//! numbers in shortest round-trip form (see [`Number::write_value`]); non-finite
//! numbers written without unit (Zinc has no syntax for `INF` with a unit); strings
//! escape `"`, `\`, `$` and control characters; a grid without columns is written with
//! the conventional single column `empty`; an empty cell of a one-column grid is
//! written `N`, since a blank line could be read as the end of the grid.

use crate::value::{Dict, Grid, Number, Value};

/// Writes `grid` as a complete Zinc document (ending with a newline).
pub fn write_grid(grid: &Grid, out: &mut String) {
    out.push_str("ver:\"3.0\"");
    write_meta(&grid.meta, out);
    out.push('\n');
    if grid.columns().is_empty() {
        out.push_str("empty\n");
        return;
    }
    for (i, column) in grid.columns().iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&column.name);
        write_meta(&column.meta, out);
    }
    out.push('\n');
    let single_column = grid.columns().len() == 1;
    for row in grid.rows() {
        for (i, cell) in row.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            match cell {
                Some(value) => write_value(value, out),
                // A blank line would be ambiguous with the end of the grid.
                None if single_column => out.push('N'),
                None => {}
            }
        }
        out.push('\n');
    }
}

/// Writes ` name` / ` name:value` items, each preceded by a space.
fn write_meta(meta: &Dict, out: &mut String) {
    for (name, value) in meta.iter() {
        out.push(' ');
        write_dict_item(name, value, out);
    }
}

fn write_dict_item(name: &str, value: &Value, out: &mut String) {
    out.push_str(name);
    if *value != Value::Marker {
        out.push(':');
        write_value(value, out);
    }
}

/// Writes one value in Zinc.
pub fn write_value(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push('N'),
        Value::Marker => out.push('M'),
        Value::Na => out.push_str("NA"),
        Value::Remove => out.push('R'),
        Value::Bool(true) => out.push('T'),
        Value::Bool(false) => out.push('F'),
        Value::Number(number) => write_number(number, out),
        Value::Str(s) => write_str_literal(s, out),
        Value::Uri(uri) => write_uri(uri, out),
        Value::Ref(reference) => {
            out.push('@');
            out.push_str(&reference.id);
            if let Some(dis) = &reference.dis {
                out.push(' ');
                write_str_literal(dis, out);
            }
        }
        Value::Symbol(name) => {
            out.push('^');
            out.push_str(name);
        }
        Value::Date(date) => push_display(date, out),
        Value::Time(time) => push_display(time, out),
        Value::DateTime(dt) => {
            dt.write_iso(out);
            if let Some(tz) = &dt.tz {
                out.push(' ');
                out.push_str(tz);
            }
        }
        Value::Coord(coord) => {
            out.push_str("C(");
            push_display(&coord.lat, out);
            out.push(',');
            push_display(&coord.lng, out);
            out.push(')');
        }
        Value::XStr(xstr) => {
            out.push_str(&xstr.type_name);
            out.push('(');
            write_str_literal(&xstr.value, out);
            out.push(')');
        }
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Dict(dict) => {
            out.push('{');
            for (i, (name, value)) in dict.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_dict_item(name, value, out);
            }
            out.push('}');
        }
        Value::Grid(grid) => {
            out.push_str("<<\n");
            write_grid(grid, out);
            out.push_str(">>");
        }
    }
}

fn push_display(value: &impl std::fmt::Display, out: &mut String) {
    use std::fmt::Write;
    let _ = write!(out, "{value}");
}

/// Writes a number and, when finite, its unit.
pub fn write_number(number: &Number, out: &mut String) {
    Number::write_value(number.value, out);
    if number.value.is_finite()
        && let Some(unit) = &number.unit
    {
        out.push_str(unit);
    }
}

/// Writes a `"..."` literal with Zinc escapes.
pub fn write_str_literal(s: &str, out: &mut String) {
    out.push('"');
    if !s
        .bytes()
        .any(|b| b < 0x20 || matches!(b, b'"' | b'$' | b'\\' | 0x7f))
    {
        // Nothing to escape: one copy.
        out.push_str(s);
        out.push('"');
        return;
    }
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            // `$` is escaped as the reference (Fantom) encoder does, so that strings stay
            // literal for readers that interpolate `$name`.
            '$' => out.push_str("\\$"),
            c => push_escaped_char(c, out),
        }
    }
    out.push('"');
}

/// Escapes backslash and control characters; other characters are written as is.
fn push_escaped_char(c: char, out: &mut String) {
    match c {
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        c if (c as u32) < 0x20 || c == '\u{7f}' => {
            use std::fmt::Write;
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
        c => out.push(c),
    }
}

/// Writes a `` `...` `` URI so that [`super::ZincReader`] reads back the same string:
/// a backslash followed by a URI-level escape character is kept as the pair, any
/// other backslash is written as `\u005c`.
fn write_uri(uri: &str, out: &mut String) {
    out.push('`');
    let mut chars = uri.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '`' => out.push_str("\\`"),
            '\\' => match chars.peek() {
                Some(&next)
                    if next.is_ascii() && super::URI_VERBATIM_ESCAPES.contains(&(next as u8)) =>
                {
                    out.push('\\');
                    out.push(next);
                    chars.next();
                }
                _ => out.push_str("\\u005c"),
            },
            c => push_escaped_char(c, out),
        }
    }
    out.push('`');
}
