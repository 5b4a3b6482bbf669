//! [`Dict`]: an insertion-ordered map from tag names to values, and tag-name validation.

use super::Value;
use indexmap::IndexMap;

/// A tag name that does not match `[a-z][a-zA-Z0-9_]*`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid tag name {0:?}: expected [a-z][a-zA-Z0-9_]*")]
pub struct InvalidTagName(pub String);

/// Whether `name` is a valid Haystack tag name: `[a-z][a-zA-Z0-9_]*`.
pub fn is_tag_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b'a'..=b'z'))
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Name/value pairs in insertion order with unique, validated names.
///
/// Backed by an [`IndexMap`], so lookups and inserts stay O(1) even for dicts
/// with very many tags (decoders meet untrusted input). Equality ignores order:
/// two dicts are equal when they hold the same names with equal values, as
/// Haystack dicts are unordered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dict {
    entries: IndexMap<String, Value>,
}

impl Dict {
    /// An empty dict.
    pub fn new() -> Self {
        Dict::default()
    }

    /// Sets `name` to `value`, replacing an earlier value (keeping its position).
    pub fn insert(&mut self, name: impl Into<String>, value: Value) -> Result<(), InvalidTagName> {
        let name = name.into();
        if !is_tag_name(&name) {
            return Err(InvalidTagName(name));
        }
        self.entries.insert(name, value);
        Ok(())
    }

    /// Sets `name` to a marker.
    pub fn insert_marker(&mut self, name: impl Into<String>) -> Result<(), InvalidTagName> {
        self.insert(name, Value::Marker)
    }

    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.entries.get(name)
    }

    /// Whether the dict has a tag `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Removes `name`, returning its value; the other tags keep their order.
    pub fn remove(&mut self, name: &str) -> Option<Value> {
        self.entries.shift_remove(name)
    }

    /// Number of tags.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no tags.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The tags in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.entries.iter().map(|(n, v)| (n.as_str(), v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_names() {
        assert!(is_tag_name("dis"));
        assert!(is_tag_name("chilledWaterRef_2"));
        assert!(!is_tag_name(""));
        assert!(!is_tag_name("Dis"));
        assert!(!is_tag_name("_kind"));
        assert!(!is_tag_name("a-b"));
    }

    #[test]
    fn insert_validates_replaces_and_keeps_order() -> Result<(), InvalidTagName> {
        let mut d = Dict::new();
        d.insert("b", Value::Bool(true))?;
        d.insert_marker("a")?;
        d.insert("b", Value::Bool(false))?;
        assert_eq!(d.iter().map(|(n, _)| n).collect::<Vec<_>>(), ["b", "a"]);
        assert_eq!(d.get("b"), Some(&Value::Bool(false)));
        assert_eq!(
            d.insert("B", Value::Marker),
            Err(InvalidTagName("B".into()))
        );
        let mut e = Dict::new();
        e.insert_marker("a")?;
        e.insert("b", Value::Bool(false))?;
        assert_eq!(d, e);
        assert_eq!(e.remove("a"), Some(Value::Marker));
        assert_ne!(d, e);
        Ok(())
    }
}
