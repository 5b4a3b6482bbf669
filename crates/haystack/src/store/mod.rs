//! The in-memory entity store and the storage data types every backend shares.
//!
//! [`EntityStore`] keeps entities and their indexes (tags, values, the ref graph),
//! [`HistoryStore`] the time series of historized points, and [`InMemoryStorage`] both
//! together with all-or-nothing commits ([`CommitOp`]). [`PriorityArray`] holds the 17
//! command levels of a writable point, and [`Rollup`] / [`fold_samples`] fold history
//! samples into buckets. The asynchronous storage interface the ops run on, and its
//! in-memory, Redis and PostgreSQL implementations, are in [`crate::backends`].

mod bitmap;
mod entities;
mod history;
mod plan;
mod priority;
mod rollup;
mod storage;

pub use bitmap::{Bitmap, PostingList};
pub use entities::{
    EntityStore, MAX_ENTITIES, StoreError, VALUE_INDEXED_TAGS, entity_id, is_value_indexed,
};
pub use history::{
    DEFAULT_MAX_SAMPLES_PER_POINT, HisSample, HisWriteReport, HistoryError, HistoryStore,
};
pub use priority::{LEVELS, PriorityArray, PriorityEntry, TIMED_LEVEL, level_dis};
pub use rollup::{
    HisFold, MAX_ROLLUP_SAMPLES, MIN_INTERVAL_US, Rollup, RollupBucket, fold_samples, micros,
};
pub use storage::{CommitOp, EntityUpdate, InMemoryStorage};
