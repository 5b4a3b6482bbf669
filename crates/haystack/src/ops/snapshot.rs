//! Snapshots of a [`MemoryBackend`]: its entities, histories and priority arrays as one
//! grid (Zinc or JSON), so that a restarted server keeps its data.
//!
//! The grid has meta `buildwireSnapshot:1` and one row per record, told apart by `rec`:
//! `"entity"` (the entity dict in `entity`), `"his"` (a sample of point `id`: `ts`, `val`)
//! and `"write"` (a priority-array level of point `id`: `level`, `val`, `who`, `expires`).
//! Writing and reading the file is the driver's job; this module makes and reads the text.

use std::collections::HashMap;

use crate::codec::DecodeError;
use crate::filter::{Filter, Path};
use crate::store::{HisSample, StoreError};
use crate::value::{Date, DateTime, Dict, Grid, Number, Ref, Time, Value};

use super::format::WireFormat;
use super::time::{datetime_at, utc_millis};
use crate::backends::MemoryBackend;
use crate::store::PriorityEntry;

/// The snapshot format version written in the grid meta.
const VERSION: f64 = 1.0;

/// Why a snapshot could not be restored.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SnapshotError {
    /// The text is not a grid.
    #[error("snapshot: {0}")]
    Decode(#[from] DecodeError),
    /// A row is not a snapshot record, or the grid is not a snapshot.
    #[error("snapshot row {row}: {message}")]
    Invalid {
        /// Zero-based row (0 also for grid-level problems).
        row: usize,
        /// What is wrong.
        message: String,
    },
    /// The store refused a record.
    #[error("snapshot: {0}")]
    Store(#[from] StoreError),
    /// Snapshots restore into an empty backend only.
    #[error("snapshot: the backend already holds entities")]
    NotEmpty,
}

fn all_time() -> Option<(DateTime, DateTime)> {
    let start = DateTime::new(
        Date::new(0, 1, 1).ok()?,
        Time::new(0, 0, 0, 0).ok()?,
        0,
        Some("UTC".into()),
    )
    .ok()?;
    let end = DateTime::new(
        Date::new(9999, 12, 31).ok()?,
        Time::new(23, 59, 59, 999_999_999).ok()?,
        0,
        Some("UTC".into()),
    )
    .ok()?;
    Some((start, end))
}

const COLUMNS: [&str; 8] = [
    "rec", "id", "entity", "ts", "val", "level", "who", "expires",
];

impl MemoryBackend {
    /// The whole state as a snapshot grid.
    pub fn snapshot_grid(&self) -> Grid {
        let state = self.read_state();
        let mut grid = match Grid::with_column_names(COLUMNS) {
            Ok(g) => g,
            Err(_) => return Grid::default(),
        };
        let _ = grid
            .meta
            .insert("buildwireSnapshot", Value::number(VERSION));
        let entities = state
            .storage
            .entities
            .read(&Filter::Has(Path::tag("id")), None);
        let range = all_time();
        for dict in &entities {
            let _ = grid.push_row(vec![
                Some(Value::Str("entity".into())),
                None,
                Some(Value::from((*dict).clone())),
            ]);
        }
        for dict in &entities {
            let (Some(Value::Ref(id)), true) = (dict.get("id"), dict.contains("his")) else {
                continue;
            };
            let Some((start, end)) = &range else { break };
            for sample in state.storage.histories.read(id, start, end) {
                let _ = grid.push_row(vec![
                    Some(Value::Str("his".into())),
                    Some(Value::Ref(Ref::new(id.id.clone()))),
                    None,
                    Some(Value::from(sample.ts.clone())),
                    Some(sample.value.clone()),
                ]);
            }
        }
        let mut arrays: Vec<(&String, &crate::store::PriorityArray)> =
            state.arrays.iter().collect();
        arrays.sort_by(|a, b| a.0.cmp(b.0));
        for (id, array) in arrays {
            for (level, entry) in array.entries() {
                let _ = grid.push_row(vec![
                    Some(Value::Str("write".into())),
                    Some(Value::Ref(Ref::new(id.clone()))),
                    None,
                    None,
                    Some(entry.val.clone()),
                    Some(Value::number(f64::from(level))),
                    Some(Value::Str(entry.who.clone())),
                    entry
                        .expires_ms
                        .and_then(|ms| datetime_at(ms, "UTC"))
                        .map(Value::from),
                ]);
            }
        }
        grid
    }

    /// The whole state as snapshot text (Zinc or JSON).
    pub fn snapshot_text(&self, format: WireFormat) -> String {
        format.encode(&self.snapshot_grid())
    }

    /// Restores a snapshot into this (empty) backend; returns the number of entities.
    pub fn restore_text(&self, text: &str, format: WireFormat) -> Result<usize, SnapshotError> {
        let grid = format.decode(text)?;
        self.restore_grid(&grid)
    }

    /// Restores a snapshot grid into this (empty) backend; returns the number of entities.
    pub fn restore_grid(&self, grid: &Grid) -> Result<usize, SnapshotError> {
        if !grid.meta.contains("buildwireSnapshot") {
            return Err(SnapshotError::Invalid {
                row: 0,
                message: "no buildwireSnapshot meta: not a snapshot".into(),
            });
        }
        let invalid = |row: usize, message: &str| SnapshotError::Invalid {
            row,
            message: message.to_owned(),
        };
        let mut state = self.write_state();
        if !state.storage.entities.is_empty() {
            return Err(SnapshotError::NotEmpty);
        }
        let mut his: HashMap<String, (Ref, Vec<HisSample>)> = HashMap::new();
        let mut ids = Vec::new();
        for row in 0..grid.row_count() {
            let rec = match grid.get(row, "rec") {
                Some(Value::Str(s)) => s.as_str(),
                _ => return Err(invalid(row, "no `rec`")),
            };
            let id = match grid.get(row, "id") {
                Some(Value::Ref(r)) => Some(Ref::new(r.id.clone())),
                _ => None,
            };
            match rec {
                "entity" => {
                    let Some(Value::Dict(dict)) = grid.get(row, "entity") else {
                        return Err(invalid(row, "entity record without `entity` dict"));
                    };
                    let dict: Dict = (**dict).clone();
                    if let Some(Value::Ref(r)) = dict.get("id") {
                        ids.push(r.id.clone());
                    }
                    state.storage.entities.add(dict)?;
                }
                "his" => {
                    let (Some(id), Some(Value::DateTime(ts)), Some(val)) =
                        (id, grid.get(row, "ts"), grid.get(row, "val"))
                    else {
                        return Err(invalid(row, "his record needs `id`, `ts` and `val`"));
                    };
                    his.entry(id.id.clone())
                        .or_insert_with(|| (id, Vec::new()))
                        .1
                        .push(HisSample {
                            ts: (**ts).clone(),
                            value: val.clone(),
                        });
                }
                "write" => {
                    let level = match grid.get(row, "level") {
                        Some(Value::Number(Number { value, .. }))
                            if (1.0..=17.0).contains(value) && value.fract() == 0.0 =>
                        {
                            *value as u8
                        }
                        _ => return Err(invalid(row, "write record needs `level` 1..17")),
                    };
                    let (Some(id), Some(val)) = (id, grid.get(row, "val")) else {
                        return Err(invalid(row, "write record needs `id` and `val`"));
                    };
                    let who = match grid.get(row, "who") {
                        Some(Value::Str(s)) => s.clone(),
                        _ => String::new(),
                    };
                    let expires_ms = match grid.get(row, "expires") {
                        Some(Value::DateTime(dt)) => Some(utc_millis(dt)),
                        _ => None,
                    };
                    state.arrays.entry(id.id).or_default().set(
                        level,
                        Some(PriorityEntry {
                            val: val.clone(),
                            who,
                            expires_ms,
                        }),
                    );
                }
                _ => return Err(invalid(row, "unknown `rec`")),
            }
        }
        for (_, (id, samples)) in his {
            state.storage.his_write(&id, samples)?;
        }
        let count = state.storage.entities.len();
        drop(state);
        self.changed(ids);
        Ok(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::Backend;
    use crate::codec::zinc;
    use crate::store::PriorityEntry;
    use futures_util::FutureExt;

    #[test]
    fn snapshots_round_trip_entities_histories_and_arrays() {
        let b = MemoryBackend::new();
        b.load_grid(
            &zinc::decode_grid(
                "ver:\"3.0\"\nid,point,his,writable,kind,tz,dis\n\
                 @p,M,M,M,\"Number\",\"New_York\",\"P \\\"1\\\"\"\n@q,M,,,,,\n",
            )
            .unwrap(),
        )
        .unwrap();
        let p = Ref::new("p");
        let ts = match zinc::decode_value("2024-07-01T09:00:00-04:00 New_York").unwrap() {
            Value::DateTime(ts) => *ts,
            other => panic!("{other:?}"),
        };
        b.his_write(
            &p,
            vec![HisSample {
                ts,
                value: Value::number(1.5),
            }],
        )
        .now_or_never()
        .unwrap()
        .unwrap();
        let entry = PriorityEntry {
            val: Value::number(3.0),
            who: "ann".into(),
            expires_ms: Some(1_800_000_000_000),
        };
        b.point_write(&p, 8, Some(entry), 0)
            .now_or_never()
            .unwrap()
            .unwrap();
        for format in [WireFormat::Zinc, WireFormat::Json] {
            let text = b.snapshot_text(format);
            let copy = MemoryBackend::new();
            assert_eq!(copy.restore_text(&text, format), Ok(2), "{text}");
            assert_eq!(copy.snapshot_text(format), text);
            let array = copy.priority_array(&p).now_or_never().unwrap().unwrap();
            assert_eq!(array.get(8, 0).map(|e| e.who.as_str()), Some("ann"));
            assert_eq!(
                copy.restore_text(&text, format),
                Err(SnapshotError::NotEmpty)
            );
        }
        let not = MemoryBackend::new();
        assert!(matches!(
            not.restore_text("ver:\"3.0\"\nrec\n\"entity\"\n", WireFormat::Zinc),
            Err(SnapshotError::Invalid { .. })
        ));
        assert!(matches!(
            not.restore_text(
                "ver:\"3.0\" buildwireSnapshot:1\nrec\n\"entity\"\n",
                WireFormat::Zinc
            ),
            Err(SnapshotError::Invalid { row: 0, .. })
        ));
    }
}
