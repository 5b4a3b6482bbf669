//! [`InMemoryStorage`]: entities ([`EntityStore`]) and histories ([`HistoryStore`])
//! together, with all-or-nothing commits ([`CommitOp`]), reads by id and history reads
//! and writes checked against the point. [`crate::backends::MemoryBackend`] puts it
//! behind the asynchronous [`crate::backends::Backend`] interface.

use crate::filter::Filter;
use crate::value::{DateTime, Dict, Ref, Value};

use super::entities::{EntityStore, StoreError, entity_id};
use super::history::{HisSample, HisWriteReport, HistoryStore};

/// One entity update of a commit: the diff and, optionally, the version it was based on.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityUpdate {
    /// Tags to set (a `Remove` value deletes the tag); must include `id`.
    pub diff: Dict,
    /// Refuse the update if the entity's version differs.
    pub expected_version: Option<u64>,
}

/// A commit request (the `commit` op's add, update and remove modes).
#[derive(Debug, Clone, PartialEq)]
pub enum CommitOp {
    /// New entities.
    Add(Vec<Dict>),
    /// Changes to existing entities.
    Update(Vec<EntityUpdate>),
    /// Entities to delete, with optional expected versions.
    Remove(Vec<(Ref, Option<u64>)>),
}

/// Entities and histories kept in memory, with all-or-nothing commits.
#[derive(Debug, Default)]
pub struct InMemoryStorage {
    /// The entities and their indexes.
    pub entities: EntityStore,
    /// The point histories.
    pub histories: HistoryStore,
}

impl InMemoryStorage {
    /// Empty storage with default limits.
    pub fn new() -> Self {
        InMemoryStorage::default()
    }

    fn historized_tz(&self, id: &Ref) -> Result<Option<String>, StoreError> {
        let entity = self
            .entities
            .get(&id.id)
            .ok_or_else(|| StoreError::UnknownId(id.id.clone()))?;
        if !entity.contains("his") {
            return Err(StoreError::NotHistorized(id.id.clone()));
        }
        Ok(match entity.get("tz") {
            Some(Value::Str(tz)) => Some(tz.clone()),
            _ => None,
        })
    }

    fn check_version(&self, id: &str, expected: Option<u64>) -> Result<(), StoreError> {
        let actual = self
            .entities
            .version(id)
            .ok_or_else(|| StoreError::UnknownId(id.to_owned()))?;
        match expected {
            Some(expected) if expected != actual => Err(StoreError::VersionConflict {
                id: id.to_owned(),
                expected,
                actual,
            }),
            _ => Ok(()),
        }
    }
}

impl InMemoryStorage {
    /// Entities matching `filter`, at most `limit`.
    pub fn read(&self, filter: &Filter, limit: Option<usize>) -> Result<Vec<Dict>, StoreError> {
        Ok(self
            .entities
            .read(filter, limit)
            .into_iter()
            .cloned()
            .collect())
    }

    /// Entities by id, `None` for unknown ids, in the order asked.
    pub fn read_by_ids(&self, ids: &[Ref]) -> Result<Vec<Option<Dict>>, StoreError> {
        Ok(self
            .entities
            .read_by_ids(ids)
            .into_iter()
            .map(|d| d.cloned())
            .collect())
    }

    /// Applies a commit; returns the resulting entities (for removes, the removed ones).
    /// Every entity is checked before any change is made.
    pub fn commit(&mut self, op: CommitOp) -> Result<Vec<Dict>, StoreError> {
        match op {
            CommitOp::Add(dicts) => {
                let mut seen = std::collections::HashSet::new();
                for dict in &dicts {
                    let id = entity_id(dict)?;
                    if self.entities.get(id).is_some() || !seen.insert(id) {
                        return Err(StoreError::DuplicateId(id.to_owned()));
                    }
                }
                for dict in &dicts {
                    self.entities.add(dict.clone())?;
                }
                Ok(dicts)
            }
            CommitOp::Update(updates) => {
                for update in &updates {
                    let id = entity_id(&update.diff)?;
                    self.check_version(id, update.expected_version)?;
                }
                let mut out = Vec::with_capacity(updates.len());
                for update in &updates {
                    self.entities
                        .update(&update.diff, update.expected_version)?;
                    let id = entity_id(&update.diff)?;
                    out.extend(self.entities.get(id).cloned());
                }
                Ok(out)
            }
            CommitOp::Remove(ids) => {
                let mut seen = std::collections::HashSet::new();
                for (id, expected) in &ids {
                    if !seen.insert(id.id.as_str()) {
                        return Err(StoreError::UnknownId(id.id.clone()));
                    }
                    self.check_version(&id.id, *expected)?;
                }
                let mut out = Vec::with_capacity(ids.len());
                for (id, expected) in &ids {
                    out.push(self.entities.remove(&id.id, *expected)?);
                    self.histories.remove_point(id);
                }
                Ok(out)
            }
        }
    }

    /// History samples of a point in `[start, end)`, oldest first.
    pub fn his_read(
        &self,
        id: &Ref,
        start: &DateTime,
        end: &DateTime,
    ) -> Result<Vec<HisSample>, StoreError> {
        self.historized_tz(id)?;
        Ok(self.histories.read(id, start, end).to_vec())
    }

    /// Writes history samples to a point (later writes win on equal timestamps).
    pub fn his_write(
        &mut self,
        id: &Ref,
        samples: Vec<HisSample>,
    ) -> Result<HisWriteReport, StoreError> {
        let tz = self.historized_tz(id)?;
        if self.histories.timezone(id) != tz.as_deref() {
            self.histories.set_timezone(id, tz);
        }
        Ok(self.histories.write(id, samples)?)
    }

    /// A counter that increases on every entity change (for watches to poll cheaply).
    pub fn change_counter(&self) -> u64 {
        self.entities.change_counter()
    }
}
