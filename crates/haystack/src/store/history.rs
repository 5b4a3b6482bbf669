//! [`HistoryStore`]: time series of historized points, kept sorted by absolute time.
//!
//! Writes follow `hisWrite` semantics: a sample at an instant that already has one
//! replaces it (the later write wins). Reads return the samples in `[start, end)`.
//! Memory is bounded per point: at most `max_samples_per_point` samples
//! ([`DEFAULT_MAX_SAMPLES_PER_POINT`] by default) are kept, the oldest are evicted
//! first. A sample costs about `size_of::<HisSample>() + 16` bytes plus any heap
//! data of its value and timezone name (~100 bytes for a number), so the default
//! bounds a point to roughly 10 MB.

use std::collections::HashMap;

use crate::filter::instant_of;
use crate::value::{DateTime, Ref, Value};

/// Default most samples kept per point.
pub const DEFAULT_MAX_SAMPLES_PER_POINT: usize = 100_000;

/// One history sample: a timestamp and a value.
#[derive(Debug, Clone, PartialEq)]
pub struct HisSample {
    /// When (with offset and timezone name).
    pub ts: DateTime,
    /// The value.
    pub value: Value,
}

/// Why a history write was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistoryError {
    /// A sample's timezone differs from the point's.
    #[error("sample timezone {found:?} differs from the point timezone {expected:?}")]
    TimezoneMismatch {
        /// The point's timezone.
        expected: String,
        /// The sample's timezone.
        found: String,
    },
}

/// What a write did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HisWriteReport {
    /// Samples at new instants.
    pub inserted: usize,
    /// Samples that replaced one at the same instant.
    pub overwritten: usize,
    /// Oldest samples dropped to respect the per-point bound.
    pub evicted: usize,
}

#[derive(Debug, Clone, Default)]
struct PointHistory {
    tz: Option<String>,
    /// Absolute instants, sorted and unique; `keys[i]` belongs to `samples[i]`.
    keys: Vec<(i64, u32)>,
    /// The samples, in the order of `keys`.
    samples: Vec<HisSample>,
}

/// Histories of many points, keyed by point id.
#[derive(Debug, Clone)]
pub struct HistoryStore {
    points: HashMap<String, PointHistory>,
    max_samples_per_point: usize,
}

impl Default for HistoryStore {
    fn default() -> Self {
        HistoryStore::with_limit(DEFAULT_MAX_SAMPLES_PER_POINT)
    }
}

impl HistoryStore {
    /// An empty store with the default per-point bound.
    pub fn new() -> Self {
        HistoryStore::default()
    }

    /// An empty store keeping at most `max_samples_per_point` samples per point (at least 1).
    pub fn with_limit(max_samples_per_point: usize) -> Self {
        HistoryStore {
            points: HashMap::new(),
            max_samples_per_point: max_samples_per_point.max(1),
        }
    }

    /// Sets a point's timezone name (e.g. `New_York`); samples written afterwards must
    /// carry the same timezone name when they carry one.
    pub fn set_timezone(&mut self, id: &Ref, tz: Option<String>) {
        self.points.entry(id.id.clone()).or_default().tz = tz;
    }

    /// The point's timezone name, if set.
    pub fn timezone(&self, id: &Ref) -> Option<&str> {
        self.points.get(&id.id).and_then(|p| p.tz.as_deref())
    }

    /// Number of samples stored for a point.
    pub fn sample_count(&self, id: &Ref) -> usize {
        self.points.get(&id.id).map_or(0, |p| p.keys.len())
    }

    /// Forgets a point's history.
    pub fn remove_point(&mut self, id: &Ref) {
        self.points.remove(&id.id);
    }

    /// Writes samples (any order). All are checked before any is stored.
    pub fn write(
        &mut self,
        id: &Ref,
        samples: impl IntoIterator<Item = HisSample>,
    ) -> Result<HisWriteReport, HistoryError> {
        let samples: Vec<HisSample> = samples.into_iter().collect();
        let point = self.points.entry(id.id.clone()).or_default();
        if let Some(expected) = &point.tz {
            for sample in &samples {
                if let Some(found) = &sample.ts.tz
                    && found != expected
                {
                    return Err(HistoryError::TimezoneMismatch {
                        expected: expected.clone(),
                        found: found.clone(),
                    });
                }
            }
        }
        let mut report = HisWriteReport::default();
        for sample in samples {
            let key = instant_of(&sample.ts);
            if point.keys.last().is_none_or(|last| *last < key) {
                point.keys.push(key);
                point.samples.push(sample);
                report.inserted += 1;
                continue;
            }
            match point.keys.binary_search(&key) {
                Ok(at) => {
                    if let Some(slot) = point.samples.get_mut(at) {
                        *slot = sample;
                    }
                    report.overwritten += 1;
                }
                Err(at) => {
                    point.keys.insert(at, key);
                    point.samples.insert(at, sample);
                    report.inserted += 1;
                }
            }
        }
        let excess = point.keys.len().saturating_sub(self.max_samples_per_point);
        if excess > 0 {
            point.keys.drain(..excess);
            point.samples.drain(..excess);
            report.evicted = excess;
        }
        Ok(report)
    }

    /// The samples with `start <= ts < end` (compared as absolute instants), oldest first.
    pub fn read(&self, id: &Ref, start: &DateTime, end: &DateTime) -> &[HisSample] {
        let Some(point) = self.points.get(&id.id) else {
            return &[];
        };
        let (from, to) = (instant_of(start), instant_of(end));
        let lo = point.keys.partition_point(|k| *k < from);
        let hi = point.keys.partition_point(|k| *k < to).max(lo);
        point.samples.get(lo..hi).unwrap_or(&[])
    }
}
