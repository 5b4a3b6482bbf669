//! The foreign device table (Annex J.5.2.1, U.4.3): each registered foreign device with the
//! time-to-live it asked for; an entry lives that long plus a fixed 30-second grace period,
//! then is purged. Generic over the address type so B/IP and B/IPv6 BBMDs share it.

use std::collections::HashMap;
use std::hash::Hash;
use std::time::{Duration, Instant};

/// Grace period added to every registration's time-to-live (J.5.2.1, U.4.3).
pub const GRACE_PERIOD: Duration = Duration::from_secs(30);

/// Default most foreign devices one BBMD keeps.
pub const DEFAULT_MAX_FOREIGN_DEVICES: usize = 512;

#[derive(Debug, Clone, Copy)]
struct Registration {
    time_to_live: u16,
    expires: Instant,
}

/// One entry as Read-FDT reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForeignDevice<A> {
    /// The device's address.
    pub address: A,
    /// The time-to-live it registered with, in seconds.
    pub time_to_live: u16,
    /// Seconds left before the entry is purged (grace period included).
    pub remaining: u16,
}

/// The table is full: the registration is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableFull;

/// Registered foreign devices.
#[derive(Debug, Clone)]
pub struct ForeignDeviceTable<A> {
    entries: HashMap<A, Registration>,
    capacity: usize,
}

impl<A: Copy + Eq + Hash + Ord> ForeignDeviceTable<A> {
    /// An empty table holding at most `capacity` devices.
    pub fn new(capacity: usize) -> Self {
        Self {
            entries: HashMap::new(),
            capacity,
        }
    }

    /// Registers (or renews) `address` for `time_to_live` seconds plus the grace period.
    pub fn register(
        &mut self,
        now: Instant,
        address: A,
        time_to_live: u16,
    ) -> Result<(), TableFull> {
        self.purge(now);
        if !self.entries.contains_key(&address) && self.entries.len() >= self.capacity {
            return Err(TableFull);
        }
        let expires = now + Duration::from_secs(u64::from(time_to_live)) + GRACE_PERIOD;
        self.entries.insert(
            address,
            Registration {
                time_to_live,
                expires,
            },
        );
        Ok(())
    }

    /// Removes `address`; false when it was not registered.
    pub fn delete(&mut self, now: Instant, address: &A) -> bool {
        self.purge(now);
        self.entries.remove(address).is_some()
    }

    /// Drops the entries whose time (and grace) ran out.
    pub fn purge(&mut self, now: Instant) {
        self.entries.retain(|_, entry| entry.expires > now);
    }

    /// True when `address` is registered and not expired.
    pub fn contains(&self, now: Instant, address: &A) -> bool {
        self.entries
            .get(address)
            .is_some_and(|entry| entry.expires > now)
    }

    /// The live entries, sorted by address.
    pub fn entries(&self, now: Instant) -> Vec<ForeignDevice<A>> {
        let mut list: Vec<_> = self
            .entries
            .iter()
            .filter(|(_, entry)| entry.expires > now)
            .map(|(address, entry)| ForeignDevice {
                address: *address,
                time_to_live: entry.time_to_live,
                remaining: u16::try_from(entry.expires.saturating_duration_since(now).as_secs())
                    .unwrap_or(u16::MAX),
            })
            .collect();
        list.sort_by_key(|entry| entry.address);
        list
    }

    /// The live addresses.
    pub fn addresses(&self, now: Instant) -> Vec<A> {
        self.entries(now).into_iter().map(|e| e.address).collect()
    }

    /// Number of entries (expired ones included until the next purge).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no device is registered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// When the next entry expires.
    pub fn next_expiry(&self) -> Option<Instant> {
        self.entries.values().map(|entry| entry.expires).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_live_ttl_plus_grace() {
        let t0 = Instant::now();
        let mut table = ForeignDeviceTable::new(2);
        table.register(t0, 1u32, 60).unwrap();
        assert_eq!(
            table.entries(t0),
            vec![ForeignDevice {
                address: 1,
                time_to_live: 60,
                remaining: 90
            }]
        );
        let before_grace_ends = t0 + Duration::from_secs(89);
        assert!(table.contains(before_grace_ends, &1));
        assert_eq!(table.entries(before_grace_ends)[0].remaining, 1);
        let after = t0 + Duration::from_secs(90);
        assert!(!table.contains(after, &1));
        table.purge(after);
        assert!(table.is_empty());
    }

    #[test]
    fn renewal_capacity_and_delete() {
        let t0 = Instant::now();
        let mut table = ForeignDeviceTable::new(2);
        table.register(t0, 1u32, 10).unwrap();
        table.register(t0, 2u32, 10).unwrap();
        assert_eq!(table.register(t0, 3u32, 10), Err(TableFull));
        // Renewing an entry is allowed when full, and restarts its time.
        let later = t0 + Duration::from_secs(30);
        table.register(later, 1, 100).unwrap();
        assert_eq!(table.entries(later)[0].remaining, 130);
        // Expired entries free their place.
        let much_later = t0 + Duration::from_secs(50);
        table.register(much_later, 3, 10).unwrap();
        assert_eq!(table.addresses(much_later), vec![1, 3]);
        assert!(table.delete(much_later, &3));
        assert!(!table.delete(much_later, &3));
        assert_eq!(table.next_expiry(), Some(later + Duration::from_secs(130)));
    }
}
