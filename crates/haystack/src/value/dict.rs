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

/// Most tags a dict keeps in a plain vector (searched linearly, one allocation); a
/// dict that grows beyond this switches to a hash index.
pub const SMALL_DICT_TAGS: usize = 8;

/// Name/value pairs in insertion order with unique, validated names.
///
/// Small dicts (up to [`SMALL_DICT_TAGS`] tags, the common case for nested dicts and
/// meta) are a plain vector; larger ones are backed by an [`IndexMap`], so lookups and
/// inserts stay O(1) even for dicts with very many tags (decoders meet untrusted
/// input). Equality ignores order: two dicts are equal when they hold the same names
/// with equal values, as Haystack dicts are unordered.
#[derive(Debug, Clone, Default)]
pub struct Dict {
    entries: Entries,
}

/// The storage of a [`Dict`], chosen by size.
#[derive(Debug, Clone)]
enum Entries {
    /// At most [`SMALL_DICT_TAGS`] tags, in order.
    Small(Vec<(String, Value)>),
    /// More tags, in order, with a hash index.
    Indexed(IndexMap<String, Value>),
}

impl Default for Entries {
    fn default() -> Self {
        Entries::Small(Vec::new())
    }
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
        match &mut self.entries {
            Entries::Small(pairs) => {
                if let Some(slot) = pairs.iter_mut().find(|(n, _)| *n == name) {
                    slot.1 = value;
                } else if pairs.len() < SMALL_DICT_TAGS {
                    pairs.push((name, value));
                } else {
                    let mut map: IndexMap<String, Value> =
                        std::mem::take(pairs).into_iter().collect();
                    map.insert(name, value);
                    self.entries = Entries::Indexed(map);
                }
            }
            Entries::Indexed(map) => {
                map.insert(name, value);
            }
        }
        Ok(())
    }

    /// Builds a dict from name/value pairs in order, as inserting them one by one would
    /// (a repeated name keeps its first position and takes its last value), but without
    /// growing the storage step by step. For decoders, which have already checked every
    /// name with [`is_tag_name`]; a pair with an invalid name is dropped.
    pub(crate) fn from_checked_pairs(pairs: Vec<(String, Value)>) -> Dict {
        let unique = || {
            pairs
                .iter()
                .enumerate()
                .all(|(i, (name, _))| pairs[..i].iter().all(|(earlier, _)| earlier != name))
        };
        let valid = || pairs.iter().all(|(name, _)| is_tag_name(name));
        if pairs.len() <= SMALL_DICT_TAGS && valid() && unique() {
            return Dict {
                entries: Entries::Small(pairs),
            };
        }
        let mut dict = Dict::new();
        if pairs.len() > SMALL_DICT_TAGS {
            dict.entries = Entries::Indexed(IndexMap::with_capacity(pairs.len()));
        }
        for (name, value) in pairs {
            // Invalid names are refused by `insert` (and never passed by the decoders).
            let _ = dict.insert(name, value);
        }
        if dict.len() <= SMALL_DICT_TAGS
            && let Entries::Indexed(map) = &mut dict.entries
        {
            // Duplicates left few enough tags for the small storage `insert` would keep.
            dict.entries = Entries::Small(std::mem::take(map).into_iter().collect());
        }
        dict
    }

    /// Sets `name` to a marker.
    pub fn insert_marker(&mut self, name: impl Into<String>) -> Result<(), InvalidTagName> {
        self.insert(name, Value::Marker)
    }

    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        match &self.entries {
            Entries::Small(pairs) => pairs.iter().find(|(n, _)| n == name).map(|(_, v)| v),
            Entries::Indexed(map) => map.get(name),
        }
    }

    /// Whether the dict has a tag `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Removes `name`, returning its value; the other tags keep their order.
    pub fn remove(&mut self, name: &str) -> Option<Value> {
        match &mut self.entries {
            Entries::Small(pairs) => {
                let at = pairs.iter().position(|(n, _)| n == name)?;
                Some(pairs.remove(at).1)
            }
            Entries::Indexed(map) => map.shift_remove(name),
        }
    }

    /// Number of tags.
    pub fn len(&self) -> usize {
        match &self.entries {
            Entries::Small(pairs) => pairs.len(),
            Entries::Indexed(map) => map.len(),
        }
    }

    /// Whether there are no tags.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The tags in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        let (small, indexed) = match &self.entries {
            Entries::Small(pairs) => (Some(pairs.iter()), None),
            Entries::Indexed(map) => (None, Some(map.iter())),
        };
        let small = small.into_iter().flatten().map(|(n, v)| (n.as_str(), v));
        let indexed = indexed.into_iter().flatten().map(|(n, v)| (n.as_str(), v));
        small.chain(indexed)
    }
}

impl PartialEq for Dict {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().all(|(n, v)| other.get(n) == Some(v))
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

    #[test]
    fn growing_past_the_small_size_keeps_order_and_values() -> Result<(), InvalidTagName> {
        let mut small = Dict::new();
        let mut big = Dict::new();
        for i in 0..SMALL_DICT_TAGS + 4 {
            big.insert(format!("t{i}"), Value::Bool(i % 2 == 0))?;
        }
        for i in (0..SMALL_DICT_TAGS + 4).rev() {
            small.insert(format!("t{i}"), Value::Bool(i % 2 == 0))?;
        }
        // Same tags in another order: equal, whatever the storage.
        assert_eq!(small, big);
        assert_eq!(big.iter().next().map(|(n, _)| n), Some("t0"));
        assert_eq!(big.len(), SMALL_DICT_TAGS + 4);
        big.insert("t3", Value::Marker)?;
        assert_eq!(big.iter().nth(3), Some(("t3", &Value::Marker)));
        assert_eq!(big.remove("t0"), Some(Value::Bool(true)));
        assert_eq!(big.get("t0"), None);
        assert_eq!(big.iter().next().map(|(n, _)| n), Some("t1"));
        assert_ne!(small, big);
        Ok(())
    }
}
