//! [`EntityStore`]: entities keyed by id, stored once, with a has-tag bitmap index, value
//! indexes for equality on common tags, the reverse-reference graph and filter reads
//! planned over those indexes.

use std::collections::{BTreeSet, HashMap};

use crate::filter::{CmpOp, Filter, RefResolver};
use crate::value::{Dict, Grid, Ref, Value, is_ref_id};

use super::bitmap::{Bitmap, PostingList};
use super::plan::EntitySet;

/// Tags with a value index besides every tag whose name ends in `Ref`.
pub const VALUE_INDEXED_TAGS: &[&str] = &["kind", "unit", "tz", "hisMode", "dis", "navName"];

/// Most entities one store holds (entity numbers are `u32`).
pub const MAX_ENTITIES: usize = u32::MAX as usize;

/// Whether `tag` has a value index (equality lookups cost O(result)).
pub fn is_value_indexed(tag: &str) -> bool {
    tag.ends_with("Ref") || VALUE_INDEXED_TAGS.contains(&tag)
}

/// Why a store operation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The dict has no `id` tag holding a Ref.
    #[error("entity has no id Ref")]
    MissingId,
    /// The id is not a valid Haystack ref id.
    #[error("invalid ref id {0:?}")]
    InvalidId(String),
    /// An entity with this id already exists.
    #[error("entity @{0} already exists")]
    DuplicateId(String),
    /// No entity with this id.
    #[error("no entity @{0}")]
    UnknownId(String),
    /// The entity changed since the version the caller saw.
    #[error("entity @{id} is at version {actual}, not {expected}")]
    VersionConflict {
        /// Entity id.
        id: String,
        /// Version the caller expected.
        expected: u64,
        /// Current version.
        actual: u64,
    },
    /// A row of a bulk-loaded grid was refused.
    #[error("grid row {row}: {error}")]
    GridRow {
        /// Zero-based row index.
        row: usize,
        /// Why.
        error: Box<StoreError>,
    },
    /// The store is full.
    #[error("store holds the maximum of {0} entities")]
    Full(usize),
    /// A history operation failed.
    #[error(transparent)]
    History(#[from] super::history::HistoryError),
    /// History requested for an entity without the `his` marker.
    #[error("entity @{0} is not historized (no his tag)")]
    NotHistorized(String),
}

/// Index key of a tag value for equality lookups (refs by id only).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum IndexKey {
    Ref(String),
    Str(String),
    Bool(bool),
    Symbol(String),
}

impl IndexKey {
    fn of(value: &Value) -> Option<IndexKey> {
        match value {
            Value::Ref(r) => Some(IndexKey::Ref(r.id.clone())),
            Value::Str(s) => Some(IndexKey::Str(s.clone())),
            Value::Bool(b) => Some(IndexKey::Bool(*b)),
            Value::Symbol(s) => Some(IndexKey::Symbol(s.clone())),
            _ => None,
        }
    }

    /// Keys under which an entity is found for `tag == literal`: the value itself, and
    /// each ref of a ref list (a ref list matches if any of its refs matches).
    fn all_of(value: &Value) -> Vec<IndexKey> {
        match value {
            Value::List(items) => items
                .iter()
                .filter_map(|item| match item {
                    Value::Ref(r) => Some(IndexKey::Ref(r.id.clone())),
                    _ => None,
                })
                .collect(),
            other => IndexKey::of(other).into_iter().collect(),
        }
    }
}

/// One stored entity.
#[derive(Debug, Clone)]
struct Entity {
    dict: Dict,
    version: u64,
}

/// A planned read: the candidate set and whether it is already the exact answer.
struct Plan<'a> {
    set: EntitySet<'a>,
    exact: bool,
}

/// The ids an entity points at, with the tag holding each ref (the `id` tag excluded).
fn outgoing_refs(dict: &Dict) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    for (tag, value) in dict.iter() {
        if tag == "id" {
            continue;
        }
        match value {
            Value::Ref(r) => out.push((tag, r.id.as_str())),
            Value::List(items) => {
                for item in items {
                    if let Value::Ref(r) = item {
                        out.push((tag, r.id.as_str()));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The id of an entity dict, validated.
pub fn entity_id(dict: &Dict) -> Result<&str, StoreError> {
    match dict.get("id") {
        Some(Value::Ref(r)) if is_ref_id(&r.id) => Ok(&r.id),
        Some(Value::Ref(r)) => Err(StoreError::InvalidId(r.id.clone())),
        _ => Err(StoreError::MissingId),
    }
}

/// In-memory entities with tag and value indexes and the reverse-reference graph.
///
/// Entities get dense internal numbers (slots, reused after removal); reads return
/// entities in increasing slot order, which is insertion order while nothing is removed.
/// Every change bumps the store's change counter; each entity remembers the counter
/// value of its last change as its version (a sans-IO stand-in for the `mod` timestamp).
#[derive(Debug, Default)]
pub struct EntityStore {
    slots: Vec<Option<Entity>>,
    free: Vec<u32>,
    by_id: HashMap<String, u32>,
    live: Bitmap,
    has_index: HashMap<String, Bitmap>,
    value_index: HashMap<String, HashMap<IndexKey, PostingList>>,
    referrers: HashMap<String, BTreeSet<(u32, String)>>,
    changes: u64,
    empty_bits: Bitmap,
}

impl EntityStore {
    /// An empty store.
    pub fn new() -> Self {
        EntityStore::default()
    }

    /// Number of entities.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// The change counter: increases on every add, update and remove (for watches).
    pub fn change_counter(&self) -> u64 {
        self.changes
    }

    fn slot(&self, n: u32) -> Option<&Entity> {
        self.slots.get(n as usize).and_then(Option::as_ref)
    }

    fn dict_at(&self, n: u32) -> Option<&Dict> {
        self.slot(n).map(|e| &e.dict)
    }

    /// The entity with this id.
    pub fn get(&self, id: &str) -> Option<&Dict> {
        self.by_id.get(id).and_then(|&n| self.dict_at(n))
    }

    /// The version (change counter at its last change) of an entity.
    pub fn version(&self, id: &str) -> Option<u64> {
        self.by_id
            .get(id)
            .and_then(|&n| self.slot(n))
            .map(|e| e.version)
    }

    /// Adds a new entity; its `id` tag must be a valid, unused Ref. Returns its version.
    pub fn add(&mut self, dict: Dict) -> Result<u64, StoreError> {
        let id = entity_id(&dict)?.to_owned();
        if self.by_id.contains_key(&id) {
            return Err(StoreError::DuplicateId(id));
        }
        let n = match self.free.pop() {
            Some(n) => n,
            None => {
                let n =
                    u32::try_from(self.slots.len()).map_err(|_| StoreError::Full(MAX_ENTITIES))?;
                self.slots.push(None);
                n
            }
        };
        self.changes += 1;
        self.index(n, &dict);
        if let Some(slot) = self.slots.get_mut(n as usize) {
            *slot = Some(Entity {
                dict,
                version: self.changes,
            });
        }
        self.by_id.insert(id, n);
        self.live.insert(n);
        Ok(self.changes)
    }

    /// Applies a diff to an existing entity: each tag of `diff` replaces the stored one,
    /// a `Remove` value deletes the tag; the `id` tag is ignored. With `expected_version`,
    /// the update is refused if the entity changed since. Returns the new version.
    pub fn update(
        &mut self,
        diff: &Dict,
        expected_version: Option<u64>,
    ) -> Result<u64, StoreError> {
        let id = entity_id(diff)?.to_owned();
        let n = *self
            .by_id
            .get(&id)
            .ok_or_else(|| StoreError::UnknownId(id.clone()))?;
        let Some(mut entity) = self.slots.get_mut(n as usize).and_then(Option::take) else {
            return Err(StoreError::UnknownId(id));
        };
        if let Some(expected) = expected_version
            && expected != entity.version
        {
            let actual = entity.version;
            if let Some(slot) = self.slots.get_mut(n as usize) {
                *slot = Some(entity);
            }
            return Err(StoreError::VersionConflict {
                id,
                expected,
                actual,
            });
        }
        self.unindex(n, &entity.dict);
        for (tag, value) in diff.iter() {
            if tag == "id" {
                continue;
            }
            if matches!(value, Value::Remove) {
                entity.dict.remove(tag);
            } else {
                // Names come from a Dict, so they are valid tag names.
                let _ = entity.dict.insert(tag, value.clone());
            }
        }
        self.changes += 1;
        entity.version = self.changes;
        self.index(n, &entity.dict);
        if let Some(slot) = self.slots.get_mut(n as usize) {
            *slot = Some(entity);
        }
        Ok(self.changes)
    }

    /// Removes an entity, returning it; `expected_version` guards as in [`EntityStore::update`].
    pub fn remove(&mut self, id: &str, expected_version: Option<u64>) -> Result<Dict, StoreError> {
        let n = *self
            .by_id
            .get(id)
            .ok_or_else(|| StoreError::UnknownId(id.to_owned()))?;
        let actual = self.slot(n).map_or(0, |e| e.version);
        if let Some(expected) = expected_version
            && expected != actual
        {
            return Err(StoreError::VersionConflict {
                id: id.to_owned(),
                expected,
                actual,
            });
        }
        let Some(entity) = self.slots.get_mut(n as usize).and_then(Option::take) else {
            return Err(StoreError::UnknownId(id.to_owned()));
        };
        self.unindex(n, &entity.dict);
        self.by_id.remove(id);
        self.live.remove(n);
        self.free.push(n);
        self.changes += 1;
        Ok(entity.dict)
    }

    /// Adds every row of a grid (e.g. a whole site export); returns the number added.
    /// Stops at the first refused row, reporting its index; earlier rows stay added.
    pub fn load_grid(&mut self, grid: &Grid) -> Result<usize, StoreError> {
        for row in 0..grid.row_count() {
            let dict = grid.row_dict(row).unwrap_or_default();
            self.add(dict).map_err(|error| StoreError::GridRow {
                row,
                error: Box::new(error),
            })?;
        }
        Ok(grid.row_count())
    }

    fn index(&mut self, n: u32, dict: &Dict) {
        for (tag, value) in dict.iter() {
            if matches!(value, Value::Null) {
                continue;
            }
            self.has_index.entry(tag.to_owned()).or_default().insert(n);
            if is_value_indexed(tag) {
                let by_value = self.value_index.entry(tag.to_owned()).or_default();
                for key in IndexKey::all_of(value) {
                    by_value.entry(key).or_default().insert(n);
                }
            }
        }
        for (tag, target) in outgoing_refs(dict) {
            self.referrers
                .entry(target.to_owned())
                .or_default()
                .insert((n, tag.to_owned()));
        }
    }

    fn unindex(&mut self, n: u32, dict: &Dict) {
        for (tag, value) in dict.iter() {
            if let Some(bits) = self.has_index.get_mut(tag) {
                bits.remove(n);
                if bits.is_empty() {
                    self.has_index.remove(tag);
                }
            }
            if let Some(by_value) = self.value_index.get_mut(tag) {
                for key in IndexKey::all_of(value) {
                    if let Some(list) = by_value.get_mut(&key) {
                        list.remove(n);
                        if list.is_empty() {
                            by_value.remove(&key);
                        }
                    }
                }
            }
        }
        for (tag, target) in outgoing_refs(dict) {
            if let Some(set) = self.referrers.get_mut(target) {
                set.remove(&(n, tag.to_owned()));
                if set.is_empty() {
                    self.referrers.remove(target);
                }
            }
        }
    }

    /// Entities matching `filter`, at most `limit`, in slot order; index-backed terms
    /// are applied first and the remaining ones only on their candidates.
    pub fn read(&self, filter: &Filter, limit: Option<usize>) -> Vec<&Dict> {
        let limit = limit.unwrap_or(usize::MAX);
        match self.plan(filter) {
            Some(Plan { set, exact: true }) => set
                .iter()
                .filter_map(|n| self.dict_at(n))
                .take(limit)
                .collect(),
            Some(Plan { set, exact: false }) => set
                .iter()
                .filter_map(|n| self.dict_at(n))
                .filter(|d| filter.matches(d, self))
                .take(limit)
                .collect(),
            None => self.read_by_scan(filter, Some(limit)),
        }
    }

    /// Entities matching `filter` by evaluating it on every entity, in slot order
    /// (the reference the planned [`EntityStore::read`] must agree with).
    pub fn read_by_scan(&self, filter: &Filter, limit: Option<usize>) -> Vec<&Dict> {
        self.live
            .iter()
            .filter_map(|n| self.dict_at(n))
            .filter(|d| filter.matches(d, self))
            .take(limit.unwrap_or(usize::MAX))
            .collect()
    }

    /// Entities added or updated after change counter `since` (for watch polling), in
    /// slot order. Removals are not reported here; compare ids against [`EntityStore::get`].
    pub fn changed_since(&self, since: u64) -> Vec<&Dict> {
        self.live
            .iter()
            .filter_map(|n| self.slot(n))
            .filter(|e| e.version > since)
            .map(|e| &e.dict)
            .collect()
    }

    /// The entities with these ids, `None` for unknown ones, in the order asked.
    pub fn read_by_ids(&self, ids: &[Ref]) -> Vec<Option<&Dict>> {
        ids.iter().map(|r| self.get(&r.id)).collect()
    }

    /// Every entity referring to `id`, with the tag that holds the ref, in slot order
    /// (an entity appears once per referring tag).
    pub fn referrers(&self, id: &str) -> Vec<(&Dict, &str)> {
        self.referrers.get(id).map_or_else(Vec::new, |set| {
            set.iter()
                .filter_map(|(n, tag)| self.dict_at(*n).map(|d| (d, tag.as_str())))
                .collect()
        })
    }

    /// Navigation children: a site's equips (`equip` with `siteRef` to it), an
    /// equip's points and sub-equips (`equipRef` to it), a space's entities (`spaceRef`).
    pub fn children(&self, id: &str) -> Vec<&Dict> {
        let Some(parent) = self.get(id) else {
            return Vec::new();
        };
        let via = |tag: &str| -> Vec<u32> {
            self.value_index
                .get(tag)
                .and_then(|m| m.get(&IndexKey::Ref(id.to_owned())))
                .map_or_else(Vec::new, |l| l.as_slice().to_vec())
        };
        let numbers: Vec<u32> = if parent.contains("site") {
            let equips = self.has_index.get("equip");
            via("siteRef")
                .into_iter()
                .filter(|&n| equips.is_some_and(|b| b.contains(n)))
                .filter(|&n| !self.dict_at(n).is_some_and(|d| d.contains("equipRef")))
                .collect()
        } else if parent.contains("equip") {
            via("equipRef")
        } else if parent.contains("space") {
            via("spaceRef")
        } else {
            Vec::new()
        };
        numbers
            .into_iter()
            .filter_map(|n| self.dict_at(n))
            .collect()
    }

    fn has_bits(&self, tag: &str) -> &Bitmap {
        self.has_index.get(tag).unwrap_or(&self.empty_bits)
    }

    /// Index plan for `filter`, or `None` when only a full scan can answer it.
    fn plan(&self, filter: &Filter) -> Option<Plan<'_>> {
        match filter {
            Filter::Has(path) => {
                let first = path.segments().first()?;
                Some(Plan {
                    set: EntitySet::Bits(self.has_bits(first)),
                    exact: path.single().is_some(),
                })
            }
            Filter::Missing(path) => {
                let tag = path.single()?;
                Some(Plan {
                    set: EntitySet::NotBits {
                        live: &self.live,
                        excluded: self.has_bits(tag),
                    },
                    exact: true,
                })
            }
            Filter::Cmp { path, op, value } => {
                if let (Some(tag), CmpOp::Eq) = (path.single(), op)
                    && let Some(set) = self.equality_lookup(tag, value)
                {
                    return Some(Plan { set, exact: true });
                }
                let first = path.segments().first()?;
                Some(Plan {
                    set: EntitySet::Bits(self.has_bits(first)),
                    exact: false,
                })
            }
            Filter::And(items) => {
                let mut plans: Vec<Plan<'_>> = Vec::with_capacity(items.len());
                let mut exact = true;
                for item in items {
                    match self.plan(item) {
                        Some(p) => {
                            exact &= p.exact;
                            plans.push(p);
                        }
                        None => exact = false,
                    }
                }
                // Smallest sparse sets first keep the intersection O(result).
                plans.sort_by_key(|p| p.set.sparse_len().unwrap_or(usize::MAX));
                let mut plans = plans.into_iter();
                let first = plans.next()?;
                let set = plans.fold(first.set, |acc, p| acc.intersect(p.set));
                Some(Plan { set, exact })
            }
            Filter::Or(items) => {
                let mut set: Option<EntitySet<'_>> = None;
                let mut exact = true;
                for item in items {
                    let p = self.plan(item)?;
                    exact &= p.exact;
                    set = Some(match set {
                        None => p.set,
                        Some(acc) => acc.union(p.set),
                    });
                }
                Some(Plan {
                    set: set.unwrap_or_else(EntitySet::empty),
                    exact,
                })
            }
        }
    }

    /// Exact answer of `tag == value` from the id map or a value index.
    fn equality_lookup(&self, tag: &str, value: &Value) -> Option<EntitySet<'_>> {
        if tag == "id" {
            let Value::Ref(r) = value else {
                return Some(EntitySet::empty());
            };
            return Some(EntitySet::List(
                self.by_id.get(&r.id).copied().into_iter().collect(),
            ));
        }
        if !is_value_indexed(tag) {
            return None;
        }
        let key = IndexKey::of(value)?;
        Some(
            self.value_index
                .get(tag)
                .and_then(|m| m.get(&key))
                .map_or_else(EntitySet::empty, |l| EntitySet::Slice(l.as_slice())),
        )
    }
}

impl RefResolver for EntityStore {
    fn resolve(&self, reference: &Ref) -> Option<&Dict> {
        self.get(&reference.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::parse;

    fn store() -> EntityStore {
        let mut store = EntityStore::new();
        for i in 0..200u32 {
            let mut d = Dict::new();
            let _ = d.insert("id", Value::Ref(Ref::new(format!("p{i}"))));
            let _ = d.insert_marker("point");
            let _ = d.insert("equipRef", Value::Ref(Ref::new(format!("e{}", i % 20))));
            let _ = store.add(d);
        }
        store
    }

    #[test]
    fn equality_on_an_indexed_ref_plans_a_sparse_exact_set()
    -> Result<(), crate::filter::FilterError> {
        let store = store();
        let filter = parse("point and equipRef == @e3")?;
        let Some(plan) = store.plan(&filter) else {
            panic!("no plan");
        };
        assert!(plan.exact);
        // Sparse: built from the 10-entry posting list, never from the 200-bit bitmap.
        assert_eq!(plan.set.sparse_len(), Some(10));
        let unindexed = parse("point and dis == \"x\" or curVal > 3")?;
        assert!(store.plan(&unindexed).is_some_and(|p| !p.exact));
        assert!(store.plan(&parse("curVal->x or not a->b")?).is_none());
        Ok(())
    }
}
