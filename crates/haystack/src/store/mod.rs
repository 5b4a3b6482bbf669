//! The in-memory entity store: tag indexes, ref graph, filter evaluation, histories.
//!
//! [`EntityStore`] keeps entities and their indexes, [`HistoryStore`] the time series of
//! historized points, and [`Storage`] is the interface a server sits on, implemented
//! here by [`InMemoryStorage`] (later also by Redis/PostgreSQL backends).

mod bitmap;
mod entities;
mod history;
mod plan;
mod storage;

pub use bitmap::{Bitmap, PostingList};
pub use entities::{
    EntityStore, MAX_ENTITIES, StoreError, VALUE_INDEXED_TAGS, entity_id, is_value_indexed,
};
pub use history::{
    DEFAULT_MAX_SAMPLES_PER_POINT, HisSample, HisWriteReport, HistoryError, HistoryStore,
};
pub use storage::{CommitOp, EntityUpdate, InMemoryStorage, Storage};
