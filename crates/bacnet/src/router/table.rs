//! The routing table of a router (Clause 6.6.1): for each network not directly connected,
//! the port it is reached through and the next router's MAC address there, whether the
//! entry was configured or learned, and whether that router said it is busy.

use std::collections::HashMap;
use std::time::Instant;

use crate::network::MacAddress;

/// How an entry got into the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteOrigin {
    /// Configured (command line, Initialize-Routing-Table): never replaced by learning.
    Static,
    /// Learned from I-Am-Router-To-Network or routed traffic.
    Learned,
}

/// One routing table entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// Index of the port (0-based) the network is reached through.
    pub port: usize,
    /// MAC address of the next router on that port; `None` broadcasts on the port (the
    /// router serving the network picks it up).
    pub next_hop: Option<MacAddress>,
    /// Static or learned.
    pub origin: RouteOrigin,
    /// Until when the next router said it is busy.
    pub busy_until: Option<Instant>,
}

/// Most entries kept; learning more replaces nothing and is counted as refused.
pub const MAX_ROUTES: usize = 8192;

/// The routing table.
#[derive(Debug, Clone, Default)]
pub struct RoutingTable {
    routes: HashMap<u16, Route>,
    refused: u64,
}

/// What a table update did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Update {
    /// A new network or a new path to it.
    Changed,
    /// Already known this way.
    Unchanged,
    /// Not taken (a static entry stands, or the table is full).
    Refused,
}

impl RoutingTable {
    /// The entry for `network`.
    pub fn get(&self, network: u16) -> Option<&Route> {
        self.routes.get(&network)
    }

    /// Every entry, sorted by network.
    pub fn entries(&self) -> Vec<(u16, Route)> {
        let mut list: Vec<_> = self.routes.iter().map(|(n, r)| (*n, *r)).collect();
        list.sort_by_key(|(network, _)| *network);
        list
    }

    /// Updates learned from the network were refused this many times.
    pub fn refused(&self) -> u64 {
        self.refused
    }

    /// Adds or replaces a static entry.
    pub fn add_static(&mut self, network: u16, port: usize, next_hop: Option<MacAddress>) {
        self.routes.insert(
            network,
            Route {
                port,
                next_hop,
                origin: RouteOrigin::Static,
                busy_until: None,
            },
        );
    }

    /// Records a learned path; static entries are kept.
    pub fn learn(&mut self, network: u16, port: usize, next_hop: MacAddress) -> Update {
        let full = self.routes.len() >= MAX_ROUTES;
        match self.routes.get_mut(&network) {
            Some(route) if route.origin == RouteOrigin::Static => Update::Unchanged,
            Some(route) if route.port == port && route.next_hop == Some(next_hop) => {
                Update::Unchanged
            }
            Some(route) => {
                *route = Route {
                    port,
                    next_hop: Some(next_hop),
                    origin: RouteOrigin::Learned,
                    busy_until: None,
                };
                Update::Changed
            }
            None if full => {
                self.refused += 1;
                Update::Refused
            }
            None => {
                self.routes.insert(
                    network,
                    Route {
                        port,
                        next_hop: Some(next_hop),
                        origin: RouteOrigin::Learned,
                        busy_until: None,
                    },
                );
                Update::Changed
            }
        }
    }

    /// Removes the entry for `network`.
    pub fn remove(&mut self, network: u16) -> Option<Route> {
        self.routes.remove(&network)
    }

    /// Marks the networks (all it serves when `networks` is empty) of the router at
    /// `next_hop` on `port` busy until `until` (or available: `None`). Returns the
    /// networks whose state changed.
    pub fn set_busy(
        &mut self,
        port: usize,
        next_hop: MacAddress,
        networks: &[u16],
        until: Option<Instant>,
        now: Instant,
    ) -> Vec<u16> {
        let mut changed = Vec::new();
        for (network, route) in &mut self.routes {
            if route.port != port
                || route.next_hop != Some(next_hop)
                || !(networks.is_empty() || networks.contains(network))
            {
                continue;
            }
            let was_busy = route.busy_until.is_some_and(|t| t > now);
            route.busy_until = until;
            if was_busy != until.is_some() {
                changed.push(*network);
            }
        }
        changed.sort_unstable();
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mac(octet: u8) -> MacAddress {
        MacAddress::new(&[octet]).unwrap()
    }

    #[test]
    fn learning_never_replaces_static_entries() {
        let mut table = RoutingTable::default();
        table.add_static(5, 0, Some(mac(1)));
        assert_eq!(table.learn(5, 1, mac(2)), Update::Unchanged);
        assert_eq!(table.get(5).unwrap().port, 0);
        assert_eq!(table.learn(6, 1, mac(2)), Update::Changed);
        assert_eq!(table.learn(6, 1, mac(2)), Update::Unchanged);
        assert_eq!(table.learn(6, 0, mac(3)), Update::Changed);
        assert_eq!(table.entries().len(), 2);
        assert!(table.remove(6).is_some());
    }

    #[test]
    fn busy_marks_only_that_routers_networks() {
        let now = Instant::now();
        let mut table = RoutingTable::default();
        table.learn(5, 0, mac(1));
        table.learn(6, 0, mac(1));
        table.learn(7, 0, mac(2));
        let later = now + std::time::Duration::from_secs(30);
        assert_eq!(table.set_busy(0, mac(1), &[], Some(later), now), vec![5, 6]);
        assert_eq!(table.set_busy(0, mac(1), &[6], None, now), vec![6]);
        assert!(table.get(5).unwrap().busy_until.is_some());
        assert!(table.get(7).unwrap().busy_until.is_none());
    }
}
