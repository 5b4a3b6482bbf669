//! One def: its symbol name and its tags, with typed accessors for the structural tags.

use crate::value::{Dict, Value, is_tag_name};

/// A Haystack def such as `ahu`, `elec-meter` or `lib:phIoT`.
#[derive(Debug, Clone, PartialEq)]
pub struct Def {
    name: String,
    tags: Dict,
}

/// The symbol names in a value: one symbol, or a list of symbols (other items skipped).
pub fn symbols(value: Option<&Value>) -> Vec<&str> {
    match value {
        Some(Value::Symbol(s)) => vec![s.as_str()],
        Some(Value::List(items)) => items
            .iter()
            .filter_map(|v| match v {
                Value::Symbol(s) => Some(s.as_str()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

impl Def {
    /// A def named `name` with its tags (which include `def` itself).
    pub fn new(name: impl Into<String>, tags: Dict) -> Self {
        Def {
            name: name.into(),
            tags,
        }
    }

    /// The def's symbol, without `^`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Every tag of the def record.
    pub fn tags(&self) -> &Dict {
        &self.tags
    }

    /// One tag of the def record.
    pub fn get(&self, tag: &str) -> Option<&Value> {
        self.tags.get(tag)
    }

    /// Direct supertypes (`is`).
    pub fn is(&self) -> Vec<&str> {
        symbols(self.tags.get("is"))
    }

    /// The library that declares the def (`lib`), e.g. `lib:phIoT`.
    pub fn lib(&self) -> Option<&str> {
        symbols(self.tags.get("lib")).first().copied()
    }

    /// Entity defs this tag is typically applied to (`tagOn`).
    pub fn tag_on(&self) -> Vec<&str> {
        symbols(self.tags.get("tagOn"))
    }

    /// Whether the def is `mandatory`: subtypes must carry its tag.
    pub fn is_mandatory(&self) -> bool {
        self.tags.contains("mandatory")
    }

    /// Whether subtypes do not inherit this def's tags (`notInherited`).
    pub fn is_not_inherited(&self) -> bool {
        self.tags.contains("notInherited")
    }

    /// Whether the association is transitive (`transitive`).
    pub fn is_transitive(&self) -> bool {
        self.tags.contains("transitive")
    }

    /// The inverse association (`reciprocalOf`).
    pub fn reciprocal_of(&self) -> Option<&str> {
        symbols(self.tags.get("reciprocalOf")).first().copied()
    }

    /// The target type of a ref or choice tag (`of`).
    pub fn of(&self) -> Option<&str> {
        symbols(self.tags.get("of")).first().copied()
    }

    /// Defs an entity of this type may be contained by (`containedBy`).
    pub fn contained_by(&self) -> Vec<&str> {
        symbols(self.tags.get("containedBy"))
    }

    /// Substances this equip takes in (`inputs`).
    pub fn inputs(&self) -> Vec<&str> {
        symbols(self.tags.get("inputs"))
    }

    /// Prototypes of typical children (`children`), as tag dicts.
    pub fn children(&self) -> Vec<&Dict> {
        match self.tags.get("children") {
            Some(Value::List(items)) => items
                .iter()
                .filter_map(|v| match v {
                    Value::Dict(d) => Some(&**d),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Item names of an enumerated tag (`enum`).
    pub fn enum_items(&self) -> Vec<&str> {
        match self.tags.get("enum") {
            Some(Value::List(items)) => items
                .iter()
                .filter_map(|v| match v {
                    Value::Str(s) => Some(s.as_str()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Whether the name is a conjunct of tags joined by `-` (`elec-meter`).
    pub fn is_conjunct(&self) -> bool {
        self.name.contains('-') && !self.is_feature_key()
    }

    /// Whether the name is a feature key `feature:name` (`lib:ph`, `filetype:zinc`).
    pub fn is_feature_key(&self) -> bool {
        self.name.contains(':')
    }

    /// The tag names an entity carries for this def itself: its name, or the parts of
    /// a conjunct; empty for feature keys.
    pub fn tag_names(&self) -> Vec<&str> {
        if self.is_feature_key() {
            return Vec::new();
        }
        let parts: Vec<&str> = self.name.split('-').collect();
        if parts.iter().all(|p| is_tag_name(p)) {
            parts
        } else {
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accessors_read_structural_tags() {
        let mut tags = Dict::new();
        tags.insert("def", Value::Symbol("elec-meter".into()))
            .unwrap();
        tags.insert(
            "is",
            Value::List(vec![Value::Symbol("meter".into()), Value::number(1.0)]),
        )
        .unwrap();
        tags.insert("lib", Value::Symbol("lib:phIoT".into()))
            .unwrap();
        tags.insert_marker("mandatory").unwrap();
        let def = Def::new("elec-meter", tags);
        assert_eq!(def.is(), vec!["meter"]);
        assert_eq!(def.lib(), Some("lib:phIoT"));
        assert!(def.is_mandatory());
        assert!(def.is_conjunct());
        assert_eq!(def.tag_names(), vec!["elec", "meter"]);
        assert!(def.children().is_empty());
        let lib = Def::new("lib:ph", Dict::new());
        assert!(lib.is_feature_key());
        assert!(lib.tag_names().is_empty());
        assert!(lib.is().is_empty());
    }
}
