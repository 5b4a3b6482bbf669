//! [`WatchRegistry`]: the server side of watches (HTTP API chapter, "Watches"): which ids
//! each watch holds, which of them changed since its last poll, and its lease.
//!
//! The registry learns of changes from the backend's change events ([`WatchRegistry::
//! mark_changed`]); it never reads the clock (`now_ms` comes in). A watch belongs to an
//! owner (the logged-in user, or a WebSocket connection's owner string) and only that owner
//! may use it. A watch opened over a WebSocket carries the connection's number: it does not
//! expire while the connection lives, its changes are pushed, and it is closed with the
//! connection.

use std::collections::{HashMap, HashSet};

use indexmap::IndexSet;

use crate::backends::{WatchError, WatchLimits};

/// One open watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watch {
    /// The watch id.
    pub id: String,
    /// Its `watchDis`.
    pub dis: String,
    /// Who opened it.
    pub owner: String,
    /// The WebSocket connection that opened it, whose watches get pushes.
    pub connection: Option<u64>,
    /// Granted lease.
    pub lease_ms: i64,
    ids: IndexSet<String>,
    dirty: HashSet<String>,
    last_used_ms: i64,
}

impl Watch {
    /// The watched ids, in the order they were added.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.ids.iter().map(String::as_str)
    }

    /// Whether any watched id changed since the last poll.
    pub fn has_changes(&self) -> bool {
        !self.dirty.is_empty()
    }
}

/// Every open watch of a server.
#[derive(Debug, Default)]
pub struct WatchRegistry {
    limits: WatchLimits,
    watches: HashMap<String, Watch>,
    /// Entity id → the watches holding it.
    by_entity: HashMap<String, HashSet<String>>,
    next: u64,
}

impl WatchRegistry {
    /// An empty registry.
    pub fn new(limits: WatchLimits) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    /// Number of open watches.
    pub fn len(&self) -> usize {
        self.watches.len()
    }

    /// Whether no watch is open.
    pub fn is_empty(&self) -> bool {
        self.watches.is_empty()
    }

    /// The watch with this id.
    pub fn get(&self, watch_id: &str) -> Option<&Watch> {
        self.watches.get(watch_id)
    }

    fn owned_mut(&mut self, watch_id: &str, owner: &str) -> Result<&mut Watch, WatchError> {
        self.watches
            .get_mut(watch_id)
            .filter(|w| w.owner == owner)
            .ok_or_else(|| WatchError::Unknown(watch_id.to_owned()))
    }

    /// Opens a watch; returns its id. `lease_ms` is the client's wish, clamped to the limits.
    pub fn open(
        &mut self,
        owner: &str,
        dis: &str,
        lease_ms: Option<i64>,
        connection: Option<u64>,
        now_ms: i64,
    ) -> Result<String, WatchError> {
        self.expire(now_ms);
        if self.watches.len() >= self.limits.max_watches {
            return Err(WatchError::TooManyWatches(self.limits.max_watches));
        }
        let owned = self.watches.values().filter(|w| w.owner == owner).count();
        if owned >= self.limits.max_watches_per_owner {
            return Err(WatchError::TooManyWatches(
                self.limits.max_watches_per_owner,
            ));
        }
        self.next += 1;
        let id = format!("w-{}", self.next);
        let lease_ms = lease_ms
            .unwrap_or(self.limits.default_lease_ms)
            .clamp(self.limits.min_lease_ms, self.limits.max_lease_ms);
        self.watches.insert(
            id.clone(),
            Watch {
                id: id.clone(),
                dis: dis.to_owned(),
                owner: owner.to_owned(),
                connection,
                lease_ms,
                ids: IndexSet::new(),
                dirty: HashSet::new(),
                last_used_ms: now_ms,
            },
        );
        Ok(id)
    }

    /// Adds ids to a watch (all or none when the limit would be passed); renews its lease.
    pub fn add(
        &mut self,
        watch_id: &str,
        owner: &str,
        ids: &[String],
        now_ms: i64,
    ) -> Result<(), WatchError> {
        let max = self.limits.max_ids_per_watch;
        let watch = self.owned_mut(watch_id, owner)?;
        let new = ids.iter().filter(|id| !watch.ids.contains(*id)).count();
        if watch.ids.len() + new > max {
            return Err(WatchError::TooManyIds(max));
        }
        watch.last_used_ms = now_ms;
        for id in ids {
            watch.ids.insert(id.clone());
        }
        for id in ids {
            self.by_entity
                .entry(id.clone())
                .or_default()
                .insert(watch_id.to_owned());
        }
        Ok(())
    }

    /// Removes ids from a watch.
    pub fn remove(
        &mut self,
        watch_id: &str,
        owner: &str,
        ids: &[String],
        now_ms: i64,
    ) -> Result<(), WatchError> {
        let watch = self.owned_mut(watch_id, owner)?;
        watch.last_used_ms = now_ms;
        for id in ids {
            watch.ids.shift_remove(id);
            watch.dirty.remove(id);
        }
        for id in ids {
            self.unindex(id, watch_id);
        }
        Ok(())
    }

    fn unindex(&mut self, entity: &str, watch_id: &str) {
        if let Some(set) = self.by_entity.get_mut(entity) {
            set.remove(watch_id);
            if set.is_empty() {
                self.by_entity.remove(entity);
            }
        }
    }

    fn drop_watch(&mut self, watch_id: &str) -> Option<Watch> {
        let watch = self.watches.remove(watch_id)?;
        for id in &watch.ids {
            self.unindex(id, watch_id);
        }
        Some(watch)
    }

    /// Closes a watch.
    pub fn close(&mut self, watch_id: &str, owner: &str) -> Result<(), WatchError> {
        self.owned_mut(watch_id, owner)?;
        self.drop_watch(watch_id);
        Ok(())
    }

    /// Closes every watch opened over a WebSocket connection (when it ends).
    pub fn close_connection(&mut self, connection: u64) {
        let ids: Vec<String> = self
            .watches
            .values()
            .filter(|w| w.connection == Some(connection))
            .map(|w| w.id.clone())
            .collect();
        for id in ids {
            self.drop_watch(&id);
        }
    }

    /// The ids to report for a poll: every watched id with `refresh`, else those changed
    /// since the last poll (which are then no longer changed). Renews the lease.
    pub fn poll(
        &mut self,
        watch_id: &str,
        owner: &str,
        refresh: bool,
        now_ms: i64,
    ) -> Result<Vec<String>, WatchError> {
        self.expire(now_ms);
        let watch = self.owned_mut(watch_id, owner)?;
        watch.last_used_ms = now_ms;
        let ids = if refresh {
            watch.ids.iter().cloned().collect()
        } else {
            // Report in watch order (deterministic), not in hash order.
            watch
                .ids
                .iter()
                .filter(|id| watch.dirty.contains(*id))
                .cloned()
                .collect()
        };
        watch.dirty.clear();
        Ok(ids)
    }

    /// Records that entities changed; returns the watches affected, with their WebSocket
    /// connection when they have one (those get a push).
    pub fn mark_changed<'a>(
        &mut self,
        ids: impl IntoIterator<Item = &'a str>,
    ) -> Vec<(String, Option<u64>)> {
        let mut affected: HashSet<String> = HashSet::new();
        for id in ids {
            let Some(watch_ids) = self.by_entity.get(id) else {
                continue;
            };
            for watch_id in watch_ids {
                if let Some(watch) = self.watches.get_mut(watch_id) {
                    watch.dirty.insert(id.to_owned());
                    affected.insert(watch_id.clone());
                }
            }
        }
        let mut out: Vec<(String, Option<u64>)> = affected
            .into_iter()
            .filter_map(|w| self.watches.get(&w).map(|watch| (w, watch.connection)))
            .collect();
        out.sort();
        out
    }

    /// Marks every watched id of every watch as changed (after missed change events).
    pub fn mark_all_changed(&mut self) -> Vec<(String, Option<u64>)> {
        let mut out = Vec::with_capacity(self.watches.len());
        for watch in self.watches.values_mut() {
            watch.dirty.extend(watch.ids.iter().cloned());
            out.push((watch.id.clone(), watch.connection));
        }
        out.sort();
        out
    }

    /// Closes the watches (other than WebSocket ones) unused for longer than their lease;
    /// returns their ids.
    pub fn expire(&mut self, now_ms: i64) -> Vec<String> {
        let expired: Vec<String> = self
            .watches
            .values()
            .filter(|w| w.connection.is_none() && now_ms - w.last_used_ms > w.lease_ms)
            .map(|w| w.id.clone())
            .collect();
        for id in &expired {
            self.drop_watch(id);
        }
        expired
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn polls_report_changes_since_the_last_poll() {
        let mut r = WatchRegistry::new(WatchLimits::default());
        let w = r.open("ann", "app", Some(10_000), None, 0).unwrap();
        r.add(&w, "ann", &ids(&["a", "b", "c"]), 0).unwrap();
        assert_eq!(r.poll(&w, "ann", false, 1).unwrap(), Vec::<String>::new());
        assert_eq!(r.mark_changed(["c", "a", "zz"]), vec![(w.clone(), None)]);
        assert_eq!(r.poll(&w, "ann", false, 2).unwrap(), ids(&["a", "c"]));
        assert!(r.poll(&w, "ann", false, 3).unwrap().is_empty());
        assert_eq!(r.poll(&w, "ann", true, 4).unwrap(), ids(&["a", "b", "c"]));
        r.remove(&w, "ann", &ids(&["a"]), 5).unwrap();
        assert!(r.mark_changed(["a"]).is_empty());
        assert_eq!(r.mark_all_changed().len(), 1);
        assert_eq!(r.poll(&w, "ann", false, 6).unwrap(), ids(&["b", "c"]));
        // Someone else cannot use it.
        assert_eq!(
            r.poll(&w, "bob", false, 7),
            Err(WatchError::Unknown(w.clone()))
        );
        r.close(&w, "ann").unwrap();
        assert!(r.is_empty() && r.by_entity.is_empty());
    }

    #[test]
    fn leases_expire_but_websocket_watches_live_with_their_connection() {
        let mut r = WatchRegistry::new(WatchLimits::default());
        let http = r.open("ann", "h", Some(2_000), None, 0).unwrap();
        let ws = r.open("ann", "w", Some(2_000), Some(7), 0).unwrap();
        assert_eq!(r.get(&http).map(|w| w.lease_ms), Some(2_000));
        assert_eq!(r.expire(1_999), Vec::<String>::new());
        assert_eq!(r.expire(2_001), vec![http.clone()]);
        assert!(r.get(&ws).is_some());
        r.add(&ws, "ann", &ids(&["x"]), 3_000).unwrap();
        assert_eq!(r.mark_changed(["x"]), vec![(ws.clone(), Some(7))]);
        r.close_connection(7);
        assert!(r.is_empty());
        // Leases are clamped.
        let w = r.open("ann", "x", Some(1), None, 0).unwrap();
        assert_eq!(r.get(&w).map(|w| w.lease_ms), Some(1_000));
    }

    #[test]
    fn limits_hold() {
        let limits = WatchLimits {
            max_watches: 3,
            max_watches_per_owner: 2,
            max_ids_per_watch: 2,
            ..WatchLimits::default()
        };
        let mut r = WatchRegistry::new(limits);
        let w = r.open("a", "", None, None, 0).unwrap();
        r.open("a", "", None, None, 0).unwrap();
        assert_eq!(
            r.open("a", "", None, None, 0),
            Err(WatchError::TooManyWatches(2))
        );
        r.open("b", "", None, None, 0).unwrap();
        assert_eq!(
            r.open("c", "", None, None, 0),
            Err(WatchError::TooManyWatches(3))
        );
        assert_eq!(
            r.add(&w, "a", &ids(&["1", "2", "3"]), 0),
            Err(WatchError::TooManyIds(2))
        );
        r.add(&w, "a", &ids(&["1", "2"]), 0).unwrap();
        r.add(&w, "a", &ids(&["2"]), 0).unwrap();
    }
}
