//! Haystack JSON v3: scalars as type-prefixed strings (`"m:"`, `"n:10 kW"`,
//! `"r:id dis"`, `"s:..."`, `"d:"`, `"h:"`, `"t:"`, `"u:"`, `"c:"`, `"x:"`, `"y:"`,
//! `"z:"`, `"-:"`, `"b:"`), grids as `{"meta":{"ver":..},"cols":[..],"rows":[..]}`
//! with column meta inline in the column object.

use super::object_writer;
use super::{
    Dialect, JsonNode, JsonPath, Result, check_depth, content_error, dict_from_members,
    grid_from_node, parse, write_json_number, write_json_string,
};
use crate::codec::zinc;
use crate::value::{Coord, Dict, Grid, Kind, Number, Ref, Value, XStr, is_ref_id, is_xstr_type};

/// Decodes a JSON v3 grid document.
pub fn decode_grid(input: &str) -> Result<Grid> {
    let node = parse(input)?;
    grid_from_node(&V3, &node, &JsonPath::Root, 0)
}

/// Decodes any JSON v3 value.
pub fn decode_value(input: &str) -> Result<Value> {
    let node = parse(input)?;
    V3.value(&node, &JsonPath::Root, 0)
}

/// Encodes a grid as JSON v3.
pub fn encode_grid(grid: &Grid) -> String {
    let mut out = String::new();
    write_grid(grid, &mut out);
    out
}

/// Encodes one value as JSON v3.
pub fn encode_value(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, &mut out);
    out
}

pub(crate) struct V3;

/// Whether an object has the shape of a v3 grid.
fn looks_like_grid(node: &JsonNode) -> bool {
    matches!(node.get("meta"), Some(meta) if meta.get("ver").is_some())
        && matches!(node.get("cols"), Some(JsonNode::Array(_)))
        && node.get("rows").is_some()
}

impl Dialect for V3 {
    fn value(&self, node: &JsonNode, path: &JsonPath<'_>, depth: usize) -> Result<Value> {
        match node {
            JsonNode::Null => Ok(Value::Null),
            JsonNode::Bool(b) => Ok(Value::Bool(*b)),
            JsonNode::Number(n) => Ok(Value::number(*n)),
            JsonNode::String(s) => decode_prefixed(s, path),
            JsonNode::Array(items) => {
                check_depth(path, depth)?;
                let mut list = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    list.push(self.value(item, &JsonPath::Index(path, i), depth + 1)?);
                }
                Ok(Value::List(list))
            }
            JsonNode::Object(_) if looks_like_grid(node) => Ok(Value::Grid(Box::new(
                grid_from_node(self, node, path, depth)?,
            ))),
            JsonNode::Object(members) => {
                dict_from_members(self, members, &[], path, depth).map(Value::from)
            }
        }
    }
}

fn zinc_scalar(text: &str, kind: Kind, path: &JsonPath<'_>) -> Result<Value> {
    match zinc::decode_value(text) {
        Ok(value) if value.kind() == kind => Ok(value),
        _ => Err(content_error(
            path,
            format!("invalid {} {text:?}", kind.name()),
        )),
    }
}

fn parse_f64(text: &str, path: &JsonPath<'_>) -> Result<f64> {
    match text {
        "INF" => Ok(f64::INFINITY),
        "-INF" => Ok(f64::NEG_INFINITY),
        "NaN" => Ok(f64::NAN),
        _ if text
            .bytes()
            .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b)) =>
        {
            text.parse()
                .map_err(|_| content_error(path, format!("invalid number {text:?}")))
        }
        _ => Err(content_error(path, format!("invalid number {text:?}"))),
    }
}

/// Decodes a string that may carry a `x:` type prefix; other strings are plain.
fn decode_prefixed(s: &str, path: &JsonPath<'_>) -> Result<Value> {
    let bytes = s.as_bytes();
    if bytes.len() < 2 || bytes[1] != b':' {
        return Ok(Value::Str(s.to_owned()));
    }
    let body = &s[2..];
    Ok(match bytes[0] {
        b'm' if body.is_empty() => Value::Marker,
        b'z' if body.is_empty() => Value::Na,
        b'-' if body.is_empty() => Value::Remove,
        b's' => Value::Str(body.to_owned()),
        b'u' => Value::Uri(body.to_owned()),
        b'n' => {
            let (number, unit) = match body.split_once(' ') {
                Some((n, u)) => (n, Some(u.to_owned())),
                None => (body, None),
            };
            Value::Number(Number {
                value: parse_f64(number, path)?,
                unit,
            })
        }
        b'r' => {
            let (id, dis) = match body.split_once(' ') {
                Some((id, dis)) => (id, Some(dis.to_owned())),
                None => (body, None),
            };
            if !is_ref_id(id) {
                return Err(content_error(path, format!("invalid ref id {id:?}")));
            }
            Value::Ref(Ref {
                id: id.to_owned(),
                dis,
            })
        }
        b'y' if is_ref_id(body) => Value::Symbol(body.to_owned()),
        b'd' => zinc_scalar(body, Kind::Date, path)?,
        b'h' => zinc_scalar(body, Kind::Time, path)?,
        b't' => zinc_scalar(body, Kind::DateTime, path)?,
        b'c' => {
            let Some((lat, lng)) = body.split_once(',') else {
                return Err(content_error(path, "coord needs lat,lng"));
            };
            let (lat, lng) = (parse_f64(lat, path)?, parse_f64(lng, path)?);
            Value::Coord(Coord::new(lat, lng).map_err(|e| content_error(path, e.to_string()))?)
        }
        b'x' => {
            let Some((type_name, value)) = body.split_once(':') else {
                return Err(content_error(path, "xstr needs type:value"));
            };
            if !is_xstr_type(type_name) {
                return Err(content_error(
                    path,
                    format!("invalid xstr type {type_name:?}"),
                ));
            }
            Value::XStr(Box::new(XStr {
                type_name: type_name.to_owned(),
                value: value.to_owned(),
            }))
        }
        b'b' => Value::XStr(Box::new(XStr {
            type_name: "Bin".into(),
            value: body.to_owned(),
        })),
        b'm' | b'z' | b'-' | b'y' => {
            return Err(content_error(path, format!("invalid prefixed value {s:?}")));
        }
        _ => Value::Str(s.to_owned()),
    })
}

/// Writes a grid as JSON v3 (column meta inline in the column objects).
pub fn write_grid(grid: &Grid, out: &mut String) {
    out.push_str("{\"meta\":{\"ver\":\"3.0\"");
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
        for (name, value) in column.meta.iter() {
            out.push(',');
            write_member(name, value, out);
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

/// Writes one value as JSON v3.
pub fn write_value(value: &Value, out: &mut String) {
    let prefixed = |prefix: &str, body: &str, out: &mut String| {
        write_json_string(&format!("{prefix}{body}"), out);
    };
    match value {
        Value::Null => out.push_str("null"),
        Value::Marker => out.push_str("\"m:\""),
        Value::Na => out.push_str("\"z:\""),
        Value::Remove => out.push_str("\"-:\""),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) if n.unit.is_none() && n.value.is_finite() => {
            write_json_number(n.value, out)
        }
        Value::Number(n) => {
            let mut body = String::new();
            Number::write_value(n.value, &mut body);
            if let Some(unit) = &n.unit {
                body.push(' ');
                body.push_str(unit);
            }
            prefixed("n:", &body, out);
        }
        Value::Str(s) if s.as_bytes().get(1) == Some(&b':') => prefixed("s:", s, out),
        Value::Str(s) => write_json_string(s, out),
        Value::Uri(u) => prefixed("u:", u, out),
        Value::Ref(r) => match &r.dis {
            Some(dis) => prefixed("r:", &format!("{} {dis}", r.id), out),
            None => prefixed("r:", &r.id, out),
        },
        Value::Symbol(s) => prefixed("y:", s, out),
        Value::Date(d) => prefixed("d:", &d.to_string(), out),
        Value::Time(t) => prefixed("h:", &t.to_string(), out),
        Value::DateTime(dt) => {
            let mut body = String::new();
            dt.write_iso(&mut body);
            if let Some(tz) = &dt.tz {
                body.push(' ');
                body.push_str(tz);
            }
            prefixed("t:", &body, out);
        }
        Value::Coord(c) => prefixed("c:", &format!("{},{}", c.lat, c.lng), out),
        Value::XStr(x) => prefixed("x:", &format!("{}:{}", x.type_name, x.value), out),
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
