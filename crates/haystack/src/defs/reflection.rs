//! Entity type reflection (Defs / Reflection chapter): which marker tags implement a
//! def, and whether an entity's tags fit a def.
//!
//! A def's implementation is its own tag (the parts of a conjunct such as `elec-meter`)
//! plus the tags of every `mandatory` def in its inheritance: `ahu` is implemented by
//! `ahu` and `equip`, because `equip` is mandatory and `airHandlingEquip` is not.

use super::namespace::Namespace;
use crate::value::{Dict, Value};

impl Namespace {
    /// The marker tags an entity needs to implement `name`, in inheritance order, each
    /// once; `None` for an unknown name.
    pub fn implementation(&self, name: &str) -> Option<Vec<&str>> {
        let chain = self.inheritance(name)?;
        let mut tags: Vec<&str> = Vec::new();
        for (position, def_name) in chain.iter().enumerate() {
            let Some(def) = self.def(def_name) else {
                continue;
            };
            if position == 0 || def.is_mandatory() {
                for tag in def.tag_names() {
                    if !tags.contains(&tag) {
                        tags.push(tag);
                    }
                }
            }
        }
        Some(tags)
    }

    /// Whether the entity carries every marker tag of `name`'s implementation;
    /// false for an unknown def.
    pub fn fits(&self, entity: &Dict, name: &str) -> bool {
        self.implementation(name).is_some_and(|tags| {
            !tags.is_empty()
                && tags
                    .iter()
                    .all(|t| matches!(entity.get(t), Some(Value::Marker)))
        })
    }

    /// The defs a dict implements directly: the def of each of its tags, and every
    /// conjunct whose parts are all marker tags of the dict; sorted. Supertypes are
    /// implied and not listed (see [`Namespace::inheritance`]).
    pub fn reflect(&self, entity: &Dict) -> Vec<&str> {
        self.defs()
            .filter(|def| {
                if def.is_feature_key() {
                    return false;
                }
                if def.is_conjunct() {
                    let parts = def.tag_names();
                    !parts.is_empty()
                        && parts
                            .iter()
                            .all(|p| matches!(entity.get(p), Some(Value::Marker)))
                } else {
                    entity.contains(def.name())
                }
            })
            .map(|def| def.name())
            .collect()
    }

    /// The most specific entity defs (subtypes of `entity`) that the entity fits:
    /// every fitted entity def that no other fitted def inherits from, sorted.
    pub fn entity_types(&self, entity: &Dict) -> Vec<&str> {
        let fitted: Vec<&str> = self
            .all_subtypes("entity")
            .unwrap_or_default()
            .into_iter()
            .filter(|d| self.fits(entity, d))
            .collect();
        fitted
            .iter()
            .copied()
            .filter(|d| {
                !fitted
                    .iter()
                    .any(|other| other != d && self.fits_def(other, d))
            })
            .collect()
    }
}
