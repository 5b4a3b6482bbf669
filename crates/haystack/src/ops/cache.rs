//! [`ResponseCache`]: encoded answers of read-only ops (`read`, `nav`, the def ops), reused
//! for an identical request while the backend's version is unchanged. A client polling
//! `read point` then costs a lookup, not a store scan and an encoding.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use crate::codec::zinc;
use crate::value::Grid;

use super::Op;
use super::format::WireFormat;

/// Most cached answers; the cache is emptied when full.
const MAX_ENTRIES: usize = 512;
/// Largest answer kept, in bytes.
const MAX_ENTRY_BYTES: usize = 16 * 1024 * 1024;
/// Most bytes kept in all.
const MAX_TOTAL_BYTES: usize = 128 * 1024 * 1024;
/// Longest request (as Zinc) used as a key; larger requests are not cached.
const MAX_KEY_BYTES: usize = 4096;

/// An op, a response format and the request grid as canonical Zinc.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct CacheKey {
    op: Op,
    format: WireFormat,
    request: String,
}

impl CacheKey {
    pub(crate) fn new(op: Op, format: WireFormat, request: &Grid) -> Self {
        Self {
            op,
            format,
            request: zinc::encode_grid(request),
        }
    }
}

#[derive(Debug, Default)]
struct Entries {
    version: u64,
    bytes: usize,
    map: HashMap<CacheKey, Arc<str>>,
}

/// Encoded answers by request, all of one backend version.
#[derive(Debug, Default)]
pub(crate) struct ResponseCache {
    entries: Mutex<Entries>,
}

impl ResponseCache {
    /// The answer cached for `key`, if it was made at `version`.
    pub(crate) fn get(&self, key: &CacheKey, version: u64) -> Option<Arc<str>> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.version != version {
            return None;
        }
        entries.map.get(key).cloned()
    }

    /// Keeps an answer made at `version` (older answers are dropped).
    pub(crate) fn put(&self, key: CacheKey, version: u64, text: Arc<str>) {
        if text.len() > MAX_ENTRY_BYTES || key.request.len() > MAX_KEY_BYTES {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.version != version {
            if version < entries.version {
                return;
            }
            *entries = Entries {
                version,
                ..Entries::default()
            };
        }
        if entries.map.len() >= MAX_ENTRIES || entries.bytes + text.len() > MAX_TOTAL_BYTES {
            entries.map.clear();
            entries.bytes = 0;
        }
        entries.bytes += text.len();
        if let Some(old) = entries.map.insert(key, text) {
            entries.bytes -= old.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_live_for_one_version() {
        let cache = ResponseCache::default();
        let key = CacheKey::new(Op::Read, WireFormat::Zinc, &Grid::default());
        cache.put(key.clone(), 3, Arc::from("a"));
        assert_eq!(cache.get(&key, 3).as_deref(), Some("a"));
        assert_eq!(cache.get(&key, 4), None);
        cache.put(key.clone(), 2, Arc::from("old"));
        assert_eq!(cache.get(&key, 3).as_deref(), Some("a"));
        cache.put(key.clone(), 4, Arc::from("b"));
        assert_eq!(cache.get(&key, 3), None);
        assert_eq!(cache.get(&key, 4).as_deref(), Some("b"));
        let other = CacheKey::new(Op::Read, WireFormat::Json, &Grid::default());
        assert_eq!(cache.get(&other, 4), None);
    }
}
