//! Hayson (Haystack JSON v4): scalars as `{"_kind":"...", ...}` objects, plain JSON
//! for strings, booleans, unitless finite numbers, lists and dicts.

use super::hayson_scan;
use super::object_writer;
use super::{
    Dialect, JsonNode, JsonPath, Result, check_depth, content_error, dict_from_members,
    grid_from_node, parse, write_json_number, write_json_string,
};
use crate::codec::{MAX_INPUT_BYTES, zinc};
use crate::value::{Coord, Dict, Grid, Kind, Number, Ref, Value, XStr, is_ref_id, is_xstr_type};

/// Decodes a Hayson grid document.
pub fn decode_grid(input: &str) -> Result<Grid> {
    // The direct scanner handles the usual documents; the tree decoder handles the rest
    // and reports the position of errors.
    if input.len() <= MAX_INPUT_BYTES
        && let Ok(grid) = hayson_scan::scan_grid(input)
    {
        return Ok(grid);
    }
    let node = parse(input)?;
    grid_from_node(&Hayson, &node, &JsonPath::Root, 0)
}

/// Decodes any Hayson value.
pub fn decode_value(input: &str) -> Result<Value> {
    if input.len() <= MAX_INPUT_BYTES
        && let Ok(value) = hayson_scan::scan_value(input)
    {
        return Ok(value);
    }
    let node = parse(input)?;
    Hayson.value(&node, &JsonPath::Root, 0)
}

/// Decodes a Hayson grid with the tree decoder only: slower than [`decode_grid`], which
/// tries the direct scanner first; kept public so tests and fuzzers can compare the two.
pub fn decode_grid_via_tree(input: &str) -> Result<Grid> {
    let node = parse(input)?;
    grid_from_node(&Hayson, &node, &JsonPath::Root, 0)
}

/// Decodes a Hayson value with the tree decoder only (see [`decode_grid_via_tree`]).
pub fn decode_value_via_tree(input: &str) -> Result<Value> {
    let node = parse(input)?;
    Hayson.value(&node, &JsonPath::Root, 0)
}

/// Encodes a grid as a Hayson document.
pub fn encode_grid(grid: &Grid) -> String {
    let mut out = String::with_capacity(64 + grid.row_count() * grid.columns().len() * 16);
    write_grid(grid, &mut out);
    out
}

/// Encodes one value as Hayson.
pub fn encode_value(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, &mut out);
    out
}

impl Grid {
    /// Decodes a Hayson grid (same as [`decode_grid`]).
    pub fn decode_hayson(input: &str) -> Result<Grid> {
        decode_grid(input)
    }

    /// Appends this grid as Hayson to `out` (same as [`write_grid`]).
    pub fn encode_hayson(&self, out: &mut String) {
        write_grid(self, out);
    }
}

impl Value {
    /// Decodes one Hayson value (same as [`decode_value`]).
    pub fn decode_hayson(input: &str) -> Result<Value> {
        decode_value(input)
    }

    /// Appends this value as Hayson to `out` (same as [`write_value`]).
    pub fn encode_hayson(&self, out: &mut String) {
        write_value(self, out);
    }
}

/// Maps JSON nodes to values the Hayson way.
pub(crate) struct Hayson;

fn string_member<'a>(node: &'a JsonNode, key: &str, path: &JsonPath<'_>) -> Result<&'a str> {
    node.get(key).and_then(JsonNode::as_str).ok_or_else(|| {
        content_error(
            &JsonPath::Key(path, key),
            format!("expected string member {key:?}"),
        )
    })
}

/// Decodes `val` with the Zinc scalar grammar and checks it has the expected kind.
fn zinc_scalar(text: &str, kind: Kind, path: &JsonPath<'_>) -> Result<Value> {
    match zinc::decode_value(text) {
        Ok(value) if value.kind() == kind => Ok(value),
        _ => Err(content_error(
            path,
            format!("invalid {} {text:?}", kind.name()),
        )),
    }
}

fn number_member(node: &JsonNode, key: &str, path: &JsonPath<'_>) -> Result<f64> {
    let here = JsonPath::Key(path, key);
    match node.get(key) {
        Some(JsonNode::Number(n)) => Ok(*n),
        Some(JsonNode::String(s)) => match s.as_str() {
            "INF" => Ok(f64::INFINITY),
            "-INF" => Ok(f64::NEG_INFINITY),
            "NaN" => Ok(f64::NAN),
            _ => Err(content_error(&here, format!("invalid number {s:?}"))),
        },
        _ => Err(content_error(&here, "expected a number")),
    }
}

impl Dialect for Hayson {
    fn value(&self, node: &JsonNode, path: &JsonPath<'_>, depth: usize) -> Result<Value> {
        match node {
            JsonNode::Null => Ok(Value::Null),
            JsonNode::Bool(b) => Ok(Value::Bool(*b)),
            JsonNode::Number(n) => Ok(Value::number(*n)),
            JsonNode::String(s) => Ok(Value::Str(s.clone())),
            JsonNode::Array(items) => {
                check_depth(path, depth)?;
                let mut list = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    list.push(self.value(item, &JsonPath::Index(path, i), depth + 1)?);
                }
                Ok(Value::List(list))
            }
            JsonNode::Object(members) => {
                let Some(kind_node) = node.get("_kind") else {
                    return dict_from_members(self, members, &[], path, depth).map(Value::from);
                };
                let kind_path = JsonPath::Key(path, "_kind");
                let kind = kind_node
                    .as_str()
                    .and_then(Kind::from_hayson_name)
                    .ok_or_else(|| content_error(&kind_path, "unknown _kind"))?;
                self.kinded(kind, node, members, path, depth)
            }
        }
    }
}

impl Hayson {
    fn kinded(
        &self,
        kind: Kind,
        node: &JsonNode,
        members: &indexmap::IndexMap<String, JsonNode>,
        path: &JsonPath<'_>,
        depth: usize,
    ) -> Result<Value> {
        let val_path = JsonPath::Key(path, "val");
        Ok(match kind {
            Kind::Null => Value::Null,
            Kind::Marker => Value::Marker,
            Kind::Na => Value::Na,
            Kind::Remove => Value::Remove,
            Kind::Bool => match node.get("val") {
                Some(JsonNode::Bool(b)) => Value::Bool(*b),
                _ => return Err(content_error(&val_path, "expected a boolean")),
            },
            Kind::Number => {
                let value = number_member(node, "val", path)?;
                let unit = match node.get("unit") {
                    None | Some(JsonNode::Null) => None,
                    Some(JsonNode::String(u)) => Some(u.clone()),
                    Some(_) => {
                        return Err(content_error(
                            &JsonPath::Key(path, "unit"),
                            "unit must be a string",
                        ));
                    }
                };
                Value::Number(Number { value, unit })
            }
            Kind::Str => Value::Str(string_member(node, "val", path)?.to_owned()),
            Kind::Uri => Value::Uri(string_member(node, "val", path)?.to_owned()),
            Kind::Ref => {
                let id = string_member(node, "val", path)?;
                if !is_ref_id(id) {
                    return Err(content_error(&val_path, format!("invalid ref id {id:?}")));
                }
                let dis = match node.get("dis") {
                    Some(JsonNode::String(d)) => Some(d.clone()),
                    _ => None,
                };
                Value::Ref(Ref {
                    id: id.to_owned(),
                    dis,
                })
            }
            Kind::Symbol => {
                let name = string_member(node, "val", path)?;
                if !is_ref_id(name) {
                    return Err(content_error(&val_path, format!("invalid symbol {name:?}")));
                }
                Value::Symbol(name.to_owned())
            }
            Kind::Date => zinc_scalar(string_member(node, "val", path)?, Kind::Date, &val_path)?,
            Kind::Time => zinc_scalar(string_member(node, "val", path)?, Kind::Time, &val_path)?,
            Kind::DateTime => {
                let text = string_member(node, "val", path)?;
                let Value::DateTime(mut dt) = zinc_scalar(text, Kind::DateTime, &val_path)? else {
                    return Err(content_error(&val_path, "expected a dateTime"));
                };
                if let Some(JsonNode::String(tz)) = node.get("tz") {
                    if !tz.chars().all(crate::value::DateTime::is_tz_char) || tz.is_empty() {
                        return Err(content_error(
                            &JsonPath::Key(path, "tz"),
                            "invalid timezone name",
                        ));
                    }
                    dt.tz = Some(tz.clone());
                }
                Value::DateTime(dt)
            }
            Kind::Coord => {
                let lat = number_member(node, "lat", path)?;
                let lng = number_member(node, "lng", path)?;
                Value::Coord(Coord::new(lat, lng).map_err(|e| content_error(path, e.to_string()))?)
            }
            Kind::XStr => {
                let type_name = string_member(node, "type", path)?;
                if !is_xstr_type(type_name) {
                    return Err(content_error(
                        &JsonPath::Key(path, "type"),
                        "invalid xstr type",
                    ));
                }
                let value = string_member(node, "val", path)?.to_owned();
                Value::XStr(Box::new(XStr {
                    type_name: type_name.to_owned(),
                    value,
                }))
            }
            Kind::List => match node.get("vals") {
                Some(list @ JsonNode::Array(_)) => {
                    self.value(list, &JsonPath::Key(path, "vals"), depth)?
                }
                _ => return Err(content_error(path, "list needs a vals array")),
            },
            Kind::Dict => {
                dict_from_members(self, members, &["_kind"], path, depth).map(Value::from)?
            }
            Kind::Grid => Value::Grid(Box::new(grid_from_node(self, node, path, depth)?)),
        })
    }
}

/// Writes a grid as Hayson: `{"_kind":"grid","meta":{"ver":"3.0",..},"cols":[..],"rows":[..]}`.
pub fn write_grid(grid: &Grid, out: &mut String) {
    out.push_str("{\"_kind\":\"grid\",\"meta\":{\"ver\":\"3.0\"");
    for (name, value) in grid.meta.iter() {
        out.push(',');
        write_member(name, value, out);
    }
    out.push_str("},\"cols\":[");
    for (i, column) in grid.columns().iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"name\":");
        write_json_string(&column.name, out);
        if !column.meta.is_empty() {
            out.push_str(",\"meta\":");
            write_dict(&column.meta, out);
        }
        out.push('}');
    }
    object_writer::write_rows(grid, out, write_value);
}

fn write_member(name: &str, value: &Value, out: &mut String) {
    object_writer::write_member(name, value, out, write_value);
}

fn write_dict(dict: &Dict, out: &mut String) {
    object_writer::write_dict(dict, out, write_value);
}

fn write_kind_val(kind: Kind, val: &str, out: &mut String) {
    out.push_str("{\"_kind\":\"");
    out.push_str(kind.hayson_name());
    out.push_str("\",\"val\":");
    write_json_string(val, out);
}

/// Writes one value as Hayson.
pub fn write_value(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Marker | Value::Na | Value::Remove => {
            out.push_str("{\"_kind\":\"");
            out.push_str(value.kind().hayson_name());
            out.push_str("\"}");
        }
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) if n.unit.is_none() && n.value.is_finite() => {
            write_json_number(n.value, out)
        }
        Value::Number(n) => {
            out.push_str("{\"_kind\":\"number\",\"val\":");
            if n.value.is_finite() {
                write_json_number(n.value, out);
            } else {
                out.push('"');
                Number::write_value(n.value, out);
                out.push('"');
            }
            if let Some(unit) = &n.unit {
                out.push_str(",\"unit\":");
                write_json_string(unit, out);
            }
            out.push('}');
        }
        Value::Str(s) => write_json_string(s, out),
        Value::Uri(u) => {
            write_kind_val(Kind::Uri, u, out);
            out.push('}');
        }
        Value::Ref(r) => {
            write_kind_val(Kind::Ref, &r.id, out);
            if let Some(dis) = &r.dis {
                out.push_str(",\"dis\":");
                write_json_string(dis, out);
            }
            out.push('}');
        }
        Value::Symbol(s) => {
            write_kind_val(Kind::Symbol, s, out);
            out.push('}');
        }
        Value::Date(d) => {
            write_kind_val(Kind::Date, &d.to_string(), out);
            out.push('}');
        }
        Value::Time(t) => {
            write_kind_val(Kind::Time, &t.to_string(), out);
            out.push('}');
        }
        Value::DateTime(dt) => {
            let mut iso = String::new();
            dt.write_iso(&mut iso);
            write_kind_val(Kind::DateTime, &iso, out);
            if let Some(tz) = &dt.tz {
                out.push_str(",\"tz\":");
                write_json_string(tz, out);
            }
            out.push('}');
        }
        Value::Coord(c) => {
            out.push_str("{\"_kind\":\"coord\",\"lat\":");
            write_json_number(c.lat, out);
            out.push_str(",\"lng\":");
            write_json_number(c.lng, out);
            out.push('}');
        }
        Value::XStr(x) => {
            out.push_str("{\"_kind\":\"xstr\",\"type\":");
            write_json_string(&x.type_name, out);
            out.push_str(",\"val\":");
            write_json_string(&x.value, out);
            out.push('}');
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
        Value::Dict(d) => write_dict(d, out),
        Value::Grid(g) => write_grid(g, out),
    }
}
