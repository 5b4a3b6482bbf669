//! JSON encodings of Haystack values: Hayson / JSON v4 (`{"_kind":"number",...}`)
//! in [`hayson`], and the older JSON v3 with prefixed strings (`"n:10 kW"`) in [`v3`].
//!
//! Both parse with serde_json into an order-keeping [`JsonNode`] tree, then map the
//! tree to [`Value`]s. Syntax errors carry line and column; content errors carry
//! the JSON path (e.g. `rows[3].curVal`). Grid `meta.ver` is checked and dropped on
//! decode, and written as `"3.0"` on encode.

pub mod hayson;
pub(crate) mod hayson_scan;
mod object_writer;
mod tree;
pub mod v3;

pub use tree::{JsonNode, JsonPath, write_json_string};

use crate::codec::{DecodeError, DecodeErrorKind, MAX_COLUMNS, MAX_DEPTH, MAX_INPUT_BYTES};
use crate::value::{Column, Dict, Grid, Value, is_tag_name};

type Result<T> = std::result::Result<T, DecodeError>;

/// Parses JSON text into a [`JsonNode`], checking [`MAX_INPUT_BYTES`].
pub fn parse(input: &str) -> Result<JsonNode> {
    if input.len() > MAX_INPUT_BYTES {
        return Err(DecodeError::at_offset(
            "",
            0,
            DecodeErrorKind::InputTooLarge {
                size: input.len(),
                limit: MAX_INPUT_BYTES,
            },
        ));
    }
    serde_json::from_str(input).map_err(|e| {
        // serde_json counts columns in bytes; recompute the location in characters.
        let offset = offset_of(input, e.line(), e.column());
        DecodeError::at_offset(
            input,
            floor_char_boundary(input, offset),
            DecodeErrorKind::JsonSyntax(e.to_string()),
        )
    })
}

/// The largest char boundary at or before `offset`.
fn floor_char_boundary(input: &str, mut offset: usize) -> usize {
    while offset > 0 && !input.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// Byte offset of a 1-based line and column (serde_json counts columns in bytes).
fn offset_of(input: &str, line: usize, column: usize) -> usize {
    let line_start: usize = input
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    (line_start + column.saturating_sub(1)).min(input.len())
}

pub(crate) fn content_error(path: &JsonPath<'_>, message: impl Into<String>) -> DecodeError {
    DecodeError::at_path(path.render(), DecodeErrorKind::JsonContent(message.into()))
}

/// What differs between the JSON dialects when mapping nodes to values.
pub(crate) trait Dialect {
    /// Maps one node to a value; `depth` counts enclosing lists, dicts and grids.
    fn value(&self, node: &JsonNode, path: &JsonPath<'_>, depth: usize) -> Result<Value>;
}

pub(crate) fn check_depth(path: &JsonPath<'_>, depth: usize) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(DecodeError::at_path(
            path.render(),
            DecodeErrorKind::TooDeep(MAX_DEPTH),
        ));
    }
    Ok(())
}

/// Maps object members to a dict, skipping the names in `skip`.
pub(crate) fn dict_from_members(
    dialect: &dyn Dialect,
    members: &indexmap::IndexMap<String, JsonNode>,
    skip: &[&str],
    path: &JsonPath<'_>,
    depth: usize,
) -> Result<Dict> {
    check_depth(path, depth)?;
    let mut dict = Dict::new();
    for (name, node) in members {
        if skip.contains(&name.as_str()) {
            continue;
        }
        let here = JsonPath::Key(path, name);
        let value = dialect.value(node, &here, depth + 1)?;
        dict.insert(name.as_str(), value).map_err(|e| {
            DecodeError::at_path(here.render(), DecodeErrorKind::InvalidTagName(e.0))
        })?;
    }
    Ok(dict)
}

/// Maps a `{"meta":{"ver":..},"cols":[{"name":..}],"rows":[{..}]}` object to a grid.
/// Column meta is read from a `meta` member and from any other member but `name`.
pub(crate) fn grid_from_node(
    dialect: &dyn Dialect,
    node: &JsonNode,
    path: &JsonPath<'_>,
    depth: usize,
) -> Result<Grid> {
    check_depth(path, depth)?;
    let meta_path = JsonPath::Key(path, "meta");
    let meta = match node.get("meta") {
        Some(JsonNode::Object(members)) => {
            dict_from_members(dialect, members, &["ver", "_kind"], &meta_path, depth + 1)?
        }
        None => Dict::new(),
        Some(_) => return Err(content_error(&meta_path, "grid meta must be an object")),
    };
    let cols_path = JsonPath::Key(path, "cols");
    let Some(JsonNode::Array(cols)) = node.get("cols") else {
        return Err(content_error(&cols_path, "grid cols must be an array"));
    };
    if cols.len() > MAX_COLUMNS {
        return Err(DecodeError::at_path(
            cols_path.render(),
            DecodeErrorKind::TooManyColumns(MAX_COLUMNS),
        ));
    }
    let mut columns = Vec::with_capacity(cols.len());
    for (i, col) in cols.iter().enumerate() {
        let col_path = JsonPath::Index(&cols_path, i);
        let JsonNode::Object(members) = col else {
            return Err(content_error(&col_path, "column must be an object"));
        };
        let Some(name) = col.get("name").and_then(JsonNode::as_str) else {
            return Err(content_error(&col_path, "column needs a string name"));
        };
        if !is_tag_name(name) {
            return Err(DecodeError::at_path(
                col_path.render(),
                DecodeErrorKind::InvalidTagName(name.to_owned()),
            ));
        }
        let mut meta =
            dict_from_members(dialect, members, &["name", "meta"], &col_path, depth + 1)?;
        if let Some(JsonNode::Object(inner)) = col.get("meta") {
            let inner_path = JsonPath::Key(&col_path, "meta");
            for (k, v) in dict_from_members(dialect, inner, &[], &inner_path, depth + 1)?.iter() {
                let _ = meta.insert(k, v.clone());
            }
        }
        columns.push(Column {
            name: name.to_owned(),
            meta,
        });
    }
    let mut grid =
        Grid::new(meta, columns).map_err(|e| content_error(&cols_path, e.to_string()))?;
    let rows_path = JsonPath::Key(path, "rows");
    let rows = match node.get("rows") {
        Some(JsonNode::Array(rows)) => rows.as_slice(),
        None => &[],
        Some(_) => return Err(content_error(&rows_path, "grid rows must be an array")),
    };
    let width = grid.columns().len();
    let column_index: std::collections::HashMap<String, usize> = grid
        .columns()
        .iter()
        .enumerate()
        .map(|(i, c)| (c.name.clone(), i))
        .collect();
    for (r, row) in rows.iter().enumerate() {
        let row_path = JsonPath::Index(&rows_path, r);
        let JsonNode::Object(members) = row else {
            return Err(content_error(&row_path, "row must be an object"));
        };
        let mut cells = vec![None; width];
        for (name, cell) in members {
            let cell_path = JsonPath::Key(&row_path, name);
            let Some(&index) = column_index.get(name.as_str()) else {
                return Err(content_error(
                    &cell_path,
                    format!("no column named {name:?}"),
                ));
            };
            cells[index] = match dialect.value(cell, &cell_path, depth + 1)? {
                Value::Null => None,
                value => Some(value),
            };
        }
        grid.push_row(cells)
            .map_err(|e| content_error(&row_path, e.to_string()))?;
    }
    Ok(grid)
}

/// Writes a number value as JSON text (finite values only).
pub(crate) fn write_json_number(value: f64, out: &mut String) {
    crate::value::Number::write_value(value, out);
}

#[cfg(test)]
mod tests;
