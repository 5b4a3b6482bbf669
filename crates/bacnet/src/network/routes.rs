//! `RouteCache`: how a non-routing node (a client, a device answering) reaches other
//! networks. It remembers which router serves each network, learned from
//! I-Am-Router-To-Network and from the source network of routed traffic; for a network it
//! does not know it broadcasts Who-Is-Router-To-Network (Clause 6.4.1), retries, and parks
//! what waits for the route meanwhile. Sans-IO: NPDUs and `now` in; NPDUs to broadcast,
//! items whose route is now known, and items that found none, out.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use crate::encoding::Reader;

use super::address::LinkAddress;
use super::message::{NetworkMessage, NetworkRejectReason};
use super::npdu::{GLOBAL_BROADCAST_NETWORK, Npdu, NpduBody};

/// How long a network stays marked busy after Router-Busy-To-Network without a
/// Router-Available-To-Network (Clause 6.6.3.6: 30 seconds).
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Limits and timing of route discovery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteCacheConfig {
    /// Time between Who-Is-Router-To-Network attempts.
    pub retry_interval: Duration,
    /// Who-Is-Router-To-Network attempts before the waiting items fail.
    pub attempts: u8,
    /// Most items parked for all networks together; more fail at once.
    pub max_waiting: usize,
    /// Most networks remembered; the oldest learned is forgotten past this.
    pub max_routes: usize,
}

impl Default for RouteCacheConfig {
    fn default() -> Self {
        Self {
            retry_interval: Duration::from_secs(1),
            attempts: 3,
            max_waiting: 1024,
            max_routes: 4096,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Route<A> {
    router: A,
    learned: u64,
    busy_until: Option<Instant>,
}

#[derive(Debug)]
struct Discovery<T> {
    next_try: Instant,
    attempts_left: u8,
    items: Vec<T>,
}

/// Known routers per network, and the route discovery in progress.
#[derive(Debug)]
pub struct RouteCache<A, T> {
    config: RouteCacheConfig,
    routes: HashMap<u16, Route<A>>,
    learned: u64,
    discoveries: HashMap<u16, Discovery<T>>,
    waiting: usize,
    transmits: VecDeque<Vec<u8>>,
    ready: VecDeque<(A, T)>,
    failed: VecDeque<(u16, T)>,
}

impl<A: LinkAddress, T> Default for RouteCache<A, T> {
    fn default() -> Self {
        Self::new(RouteCacheConfig::default())
    }
}

impl<A: LinkAddress, T> RouteCache<A, T> {
    /// An empty cache.
    pub fn new(config: RouteCacheConfig) -> Self {
        Self {
            config,
            routes: HashMap::new(),
            learned: 0,
            discoveries: HashMap::new(),
            waiting: 0,
            transmits: VecDeque::new(),
            ready: VecDeque::new(),
            failed: VecDeque::new(),
        }
    }

    /// The router serving `network`, if known.
    pub fn route(&self, network: u16) -> Option<A> {
        self.routes.get(&network).map(|route| route.router)
    }

    /// Every known route.
    pub fn routes(&self) -> Vec<(u16, A)> {
        let mut list: Vec<_> = self.routes.iter().map(|(n, r)| (*n, r.router)).collect();
        list.sort_by_key(|(network, _)| *network);
        list
    }

    /// True while the router to `network` said it is busy.
    pub fn is_busy(&self, network: u16, now: Instant) -> bool {
        self.routes
            .get(&network)
            .and_then(|route| route.busy_until)
            .is_some_and(|until| until > now)
    }

    /// Records that `router` serves `network` (static configuration, or learned), and
    /// releases what waited for it.
    pub fn learn(&mut self, network: u16, router: A) {
        if network == GLOBAL_BROADCAST_NETWORK || network == 0 {
            return;
        }
        if !self.routes.contains_key(&network)
            && self.routes.len() >= self.config.max_routes
            && let Some(oldest) = self
                .routes
                .iter()
                .min_by_key(|(_, route)| route.learned)
                .map(|(network, _)| *network)
        {
            self.routes.remove(&oldest);
        }
        self.learned += 1;
        let busy_until = self
            .routes
            .get(&network)
            .filter(|route| route.router == router)
            .and_then(|route| route.busy_until);
        self.routes.insert(
            network,
            Route {
                router,
                learned: self.learned,
                busy_until,
            },
        );
        if let Some(discovery) = self.discoveries.remove(&network) {
            self.waiting -= discovery.items.len();
            self.ready
                .extend(discovery.items.into_iter().map(|item| (router, item)));
        }
    }

    /// Forgets the route to `network` (a router rejected traffic for it).
    pub fn forget(&mut self, network: u16) {
        self.routes.remove(&network);
    }

    /// The router for `network` with `item` back when known; otherwise parks `item` until
    /// the route is learned (or discovery fails) and returns `None`.
    pub fn resolve(&mut self, now: Instant, network: u16, item: T) -> Option<(A, T)> {
        if let Some(router) = self.route(network) {
            return Some((router, item));
        }
        if self.waiting >= self.config.max_waiting {
            self.failed.push_back((network, item));
            return None;
        }
        self.waiting += 1;
        let attempts = self.config.attempts.max(1);
        let discovery = self
            .discoveries
            .entry(network)
            .or_insert_with(|| Discovery {
                next_try: now,
                attempts_left: attempts,
                items: Vec::new(),
            });
        discovery.items.push(item);
        self.ask_due(now);
        None
    }

    /// Looks at one received NPDU from `from`: learns the route of a routed source
    /// network, and handles I-Am-Router-To-Network, Reject-Message-To-Network and
    /// Router-Busy/Available-To-Network. Returns true when it was a network-layer message
    /// (which the application layer has no use for).
    pub fn handle_npdu(&mut self, now: Instant, from: A, npdu: &[u8]) -> bool {
        let Ok(decoded) = Npdu::decode(&mut Reader::new(npdu)) else {
            return false;
        };
        if let Some(source) = decoded.source {
            // A routed message came to us through `from`: that router serves SNET.
            if self.route(source.network) != Some(from) {
                self.learn(source.network, from);
            }
        }
        let NpduBody::NetworkMessage { .. } = decoded.body else {
            return false;
        };
        let Some(Ok(message)) = NetworkMessage::from_body(&decoded.body) else {
            return true;
        };
        match message {
            NetworkMessage::IAmRouterToNetwork(networks) => {
                for network in networks {
                    self.learn(network, from);
                }
            }
            NetworkMessage::RejectMessageToNetwork { reason, network } => {
                if matches!(
                    reason,
                    NetworkRejectReason::UnknownNetwork | NetworkRejectReason::AddressingError
                ) {
                    self.forget(network);
                }
            }
            NetworkMessage::RouterBusyToNetwork(networks) => {
                self.mark_busy(from, &networks, Some(now + BUSY_TIMEOUT));
            }
            NetworkMessage::RouterAvailableToNetwork(networks) => {
                self.mark_busy(from, &networks, None);
            }
            _ => {}
        }
        true
    }

    fn mark_busy(&mut self, router: A, networks: &[u16], until: Option<Instant>) {
        for (network, route) in &mut self.routes {
            if route.router == router && (networks.is_empty() || networks.contains(network)) {
                route.busy_until = until;
            }
        }
    }

    fn ask_due(&mut self, now: Instant) {
        let mut given_up = Vec::new();
        for (network, discovery) in &mut self.discoveries {
            if discovery.next_try > now {
                continue;
            }
            if discovery.attempts_left == 0 {
                given_up.push(*network);
                continue;
            }
            discovery.attempts_left -= 1;
            discovery.next_try = now + self.config.retry_interval;
            self.transmits
                .push_back(NetworkMessage::WhoIsRouterToNetwork(Some(*network)).to_local_npdu());
        }
        for network in given_up {
            if let Some(discovery) = self.discoveries.remove(&network) {
                self.waiting -= discovery.items.len();
                self.failed
                    .extend(discovery.items.into_iter().map(|item| (network, item)));
            }
        }
    }

    /// Retries discovery and gives up on networks nobody answered for.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.ask_due(now);
    }

    /// When [`Self::handle_timeout`] should next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.discoveries.values().map(|d| d.next_try).min()
    }

    /// The next NPDU to broadcast on the local network (Who-Is-Router-To-Network).
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.transmits.pop_front()
    }

    /// The next parked item whose router is now known.
    pub fn poll_ready(&mut self) -> Option<(A, T)> {
        self.ready.pop_front()
    }

    /// The next parked item no router answered for, with its network.
    pub fn poll_failed(&mut self) -> Option<(u16, T)> {
        self.failed.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i_am_router(networks: Vec<u16>) -> Vec<u8> {
        NetworkMessage::IAmRouterToNetwork(networks).to_local_npdu()
    }

    #[test]
    fn discovery_asks_parks_and_releases() {
        let t0 = Instant::now();
        let mut cache: RouteCache<u8, &str> = RouteCache::default();
        assert_eq!(cache.resolve(t0, 2, "a"), None);
        assert_eq!(cache.resolve(t0, 2, "b"), None);
        // One Who-Is-Router-To-Network for network 2, not two.
        assert_eq!(
            cache.poll_transmit(),
            Some(vec![0x01, 0x84, 0x00, 0x00, 0x02])
        );
        assert_eq!(cache.poll_transmit(), None);
        assert!(cache.handle_npdu(t0, 9, &i_am_router(vec![2, 3])));
        assert_eq!(cache.poll_ready(), Some((9, "a")));
        assert_eq!(cache.poll_ready(), Some((9, "b")));
        assert_eq!(cache.route(3), Some(9));
        assert_eq!(cache.resolve(t0, 3, "c"), Some((9, "c")));
        assert_eq!(cache.poll_timeout(), None);
    }

    #[test]
    fn discovery_retries_then_fails() {
        let t0 = Instant::now();
        let mut cache: RouteCache<u8, u32> = RouteCache::default();
        assert_eq!(cache.resolve(t0, 7, 1), None);
        let mut asked = 0;
        while cache.poll_failed().is_none() {
            while cache.poll_transmit().is_some() {
                asked += 1;
            }
            let now = cache.poll_timeout().unwrap();
            cache.handle_timeout(now);
            assert!(now - t0 < Duration::from_secs(10));
        }
        assert_eq!(asked, 3);
        assert_eq!(cache.poll_timeout(), None);
    }

    #[test]
    fn routed_sources_rejects_and_busy() {
        let t0 = Instant::now();
        let mut cache: RouteCache<u8, ()> = RouteCache::default();
        // A routed APDU from network 5 through link 4 teaches the route.
        let routed = [0x01, 0x08, 0x00, 0x05, 0x01, 0x21, 0x10, 0x08];
        assert!(!cache.handle_npdu(t0, 4, &routed));
        assert_eq!(cache.route(5), Some(4));
        let busy = NetworkMessage::RouterBusyToNetwork(vec![]).to_local_npdu();
        assert!(cache.handle_npdu(t0, 4, &busy));
        assert!(cache.is_busy(5, t0));
        assert!(!cache.is_busy(5, t0 + BUSY_TIMEOUT));
        let available = NetworkMessage::RouterAvailableToNetwork(vec![5]).to_local_npdu();
        cache.handle_npdu(t0, 4, &available);
        assert!(!cache.is_busy(5, t0));
        let reject = NetworkMessage::RejectMessageToNetwork {
            reason: NetworkRejectReason::UnknownNetwork,
            network: 5,
        }
        .to_local_npdu();
        assert!(cache.handle_npdu(t0, 4, &reject));
        assert_eq!(cache.route(5), None);
    }

    #[test]
    fn limits_hold() {
        let t0 = Instant::now();
        let mut cache: RouteCache<u16, u16> = RouteCache::new(RouteCacheConfig {
            max_waiting: 2,
            max_routes: 3,
            ..RouteCacheConfig::default()
        });
        for item in 0..3 {
            cache.resolve(t0, 1, item);
        }
        assert_eq!(cache.poll_failed(), Some((1, 2)));
        for network in 10..20 {
            cache.learn(network, network);
        }
        assert_eq!(cache.routes().len(), 3);
        assert_eq!(cache.route(19), Some(19));
    }
}
