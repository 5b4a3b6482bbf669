//! [`JsonNode`]: a JSON document tree that keeps object keys in document order
//! (so decoded dicts keep their tag order), built by serde_json's parser, plus a
//! lazily rendered [`JsonPath`] used to say where content errors are.

use indexmap::IndexMap;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// A parsed JSON value with ordered object members.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonNode {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// Any JSON number, as a double.
    Number(f64),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<JsonNode>),
    /// An object, members in document order (a repeated key keeps its first
    /// position and its last value).
    Object(IndexMap<String, JsonNode>),
}

impl JsonNode {
    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&JsonNode> {
        match self {
            JsonNode::Object(members) => members.get(key),
            _ => None,
        }
    }

    /// The string content, for strings.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            JsonNode::String(s) => Some(s),
            _ => None,
        }
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = JsonNode;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<JsonNode, E> {
        Ok(JsonNode::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<JsonNode, E> {
        Ok(JsonNode::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<JsonNode, E> {
        Ok(JsonNode::Number(v as f64))
    }
    fn visit_u64<E>(self, v: u64) -> Result<JsonNode, E> {
        Ok(JsonNode::Number(v as f64))
    }
    fn visit_f64<E>(self, v: f64) -> Result<JsonNode, E> {
        Ok(JsonNode::Number(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<JsonNode, E> {
        Ok(JsonNode::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<JsonNode, E> {
        Ok(JsonNode::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<JsonNode, A::Error> {
        // Grow from what was actually parsed; the size hint is not trusted.
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(JsonNode::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsonNode, A::Error> {
        let mut members = IndexMap::new();
        while let Some((key, value)) = map.next_entry::<String, JsonNode>()? {
            // Last duplicate wins, as with serde_json's own map.
            members.insert(key, value);
        }
        Ok(JsonNode::Object(members))
    }
}

impl<'de> Deserialize<'de> for JsonNode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

/// A path from the document root to a node, rendered only when an error needs it.
#[derive(Debug, Clone, Copy)]
pub enum JsonPath<'a> {
    /// The document root.
    Root,
    /// Member `key` of the object at the parent path.
    Key(&'a JsonPath<'a>, &'a str),
    /// Element `index` of the array at the parent path.
    Index(&'a JsonPath<'a>, usize),
}

impl JsonPath<'_> {
    /// Renders the path as `a.b[2].c`.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.render_into(&mut out);
        out
    }

    fn render_into(&self, out: &mut String) {
        match self {
            JsonPath::Root => {}
            JsonPath::Key(parent, key) => {
                parent.render_into(out);
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            JsonPath::Index(parent, index) => {
                parent.render_into(out);
                out.push_str(&format!("[{index}]"));
            }
        }
    }
}

/// Writes `s` as a JSON string literal.
pub fn write_json_string(s: &str, out: &mut String) {
    out.push('"');
    if !s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        // Nothing to escape: one copy.
        out.push_str(s);
        out.push('"');
        return;
    }
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                use std::fmt::Write;
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_keep_order_and_paths_render() -> Result<(), serde_json::Error> {
        let node: JsonNode = serde_json::from_str(r#"{"b":1,"a":[true,null,"x"]}"#)?;
        let JsonNode::Object(members) = &node else {
            panic!("not an object")
        };
        assert_eq!(members.get_index(0).map(|(k, _)| k.as_str()), Some("b"));
        assert_eq!(
            node.get("a"),
            Some(&JsonNode::Array(vec![
                JsonNode::Bool(true),
                JsonNode::Null,
                JsonNode::String("x".into())
            ]))
        );
        let root = JsonPath::Root;
        let rows = JsonPath::Key(&root, "rows");
        let third = JsonPath::Index(&rows, 3);
        assert_eq!(JsonPath::Key(&third, "id").render(), "rows[3].id");
        let mut s = String::new();
        write_json_string("a\"\\\n\u{1}é", &mut s);
        assert_eq!(s, r#""a\"\\\n\u0001é""#);
        Ok(())
    }
}
