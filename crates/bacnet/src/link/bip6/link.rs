//! `Bip6Link`: the sans-IO BACnet/IPv6 virtual link layer of one node (Annex U): each node
//! has a 3-octet virtual MAC (VMAC); unicasts to a VMAC whose B/IPv6 address is unknown wait
//! for Address-Resolution; broadcasts go to the multicast group. The role is a plain node, a
//! BBMD (peers in a broadcast distribution table, foreign device table with time-to-live
//! plus grace, Forwarded-NPDU and Forwarded-Address-Resolution both ways) or a foreign device.
//!
//! Loops and amplification as in [`crate::link::bip::link`]: what a peer BBMD forwarded goes to the
//! local group and foreign devices only; a node drops messages carrying its own VMAC as
//! source (its multicast echo); everything a BBMD sends on its own initiative draws from one
//! token bucket; the resolution cache and the queue of NPDUs waiting for it are bounded.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddrV6;
use std::time::{Duration, Instant};

use super::bvll::{Bvlc6ResultCode, Bvll6, Vmac};

use crate::link::bbmd::fdt::{DEFAULT_MAX_FOREIGN_DEVICES, ForeignDevice, ForeignDeviceTable};
use crate::link::bbmd::handler::{self, BbmdLink, Message, Outcome, ResultKind};
use crate::link::bbmd::rate::RateLimit;
use crate::link::bbmd::registration::ForeignRegistration;

/// Most VMAC -> address entries cached.
pub const MAX_CACHE: usize = 4096;
/// Most NPDUs waiting for address resolution, all VMACs together.
pub const MAX_WAITING_NPDUS: usize = 1024;
/// Time between Address-Resolution attempts.
pub const RESOLUTION_RETRY: Duration = Duration::from_secs(1);
/// Address-Resolution attempts before the waiting NPDUs are dropped.
pub const RESOLUTION_ATTEMPTS: u8 = 3;

/// BBMD settings for B/IPv6.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bbmd6Config {
    /// Peer BBMDs (B/IPv6 broadcast distribution uses no masks: always two-hop).
    pub bdt: Vec<SocketAddrV6>,
    /// Most foreign devices.
    pub max_foreign_devices: usize,
    /// Datagrams per second sent on the BBMD's own initiative.
    pub rate: u32,
    /// Burst above that rate.
    pub burst: u32,
}

impl Default for Bbmd6Config {
    fn default() -> Self {
        Self {
            bdt: Vec::new(),
            max_foreign_devices: DEFAULT_MAX_FOREIGN_DEVICES,
            rate: crate::link::bbmd::rate::DEFAULT_RATE,
            burst: crate::link::bbmd::rate::DEFAULT_BURST,
        }
    }
}

/// Foreign-device settings for B/IPv6.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Foreign6Config {
    /// The BBMD's B/IPv6 address.
    pub bbmd: SocketAddrV6,
    /// Time-to-live in seconds.
    pub time_to_live: u16,
}

/// What this node is on its B/IPv6 link.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Bip6Role {
    /// A plain node.
    #[default]
    Node,
    /// A BBMD.
    Bbmd(Bbmd6Config),
    /// A foreign device.
    Foreign(Foreign6Config),
}

/// An NPDU for the network layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link6Delivery {
    /// The originating node's VMAC.
    pub source: Vmac,
    /// The NPDU.
    pub npdu: Vec<u8>,
    /// True when it was a broadcast.
    pub broadcast: bool,
}

/// Counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bip6LinkStats {
    /// Datagrams that did not decode.
    pub malformed: u64,
    /// Messages carrying this node's own VMAC (multicast echoes, or a VMAC collision).
    pub own_vmac: u64,
    /// Unicasts for another VMAC, dropped.
    pub not_for_us: u64,
    /// NPDUs dropped because their VMAC never resolved.
    pub unresolved: u64,
    /// Broadcasts forwarded (one per destination).
    pub forwarded: u64,
    /// BVLL requests answered with a NAK.
    pub naks: u64,
}

struct Waiting {
    next_try: Instant,
    attempts_left: u8,
    npdus: Vec<Vec<u8>>,
}

struct Bbmd6 {
    config: Bbmd6Config,
    fdt: ForeignDeviceTable<SocketAddrV6>,
    limit: RateLimit,
}

/// The B/IPv6 link layer of one node.
pub struct Bip6Link {
    vmac: Vmac,
    local: SocketAddrV6,
    multicast: Option<SocketAddrV6>,
    cache: HashMap<Vmac, SocketAddrV6>,
    waiting: HashMap<Vmac, Waiting>,
    waiting_npdus: usize,
    bbmd: Option<Bbmd6>,
    foreign: Option<(Foreign6Config, ForeignRegistration)>,
    transmits: VecDeque<(SocketAddrV6, Vec<u8>)>,
    stats: Bip6LinkStats,
}

impl std::fmt::Debug for Bip6Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bip6Link")
            .field("vmac", &self.vmac)
            .field("multicast", &self.multicast)
            .field("bbmd", &self.bbmd.is_some())
            .field("foreign", &self.foreign.as_ref().map(|f| f.0))
            .finish_non_exhaustive()
    }
}

const MAX_QUEUED: usize = 8192;

impl Bip6Link {
    /// A link for the node with `vmac` at `local` (its unicast B/IPv6 address) whose
    /// broadcasts go to `multicast` (the group and port, e.g. `[FF02::BAC0]:47808`).
    pub fn new(
        now: Instant,
        vmac: Vmac,
        local: SocketAddrV6,
        multicast: Option<SocketAddrV6>,
        role: Bip6Role,
    ) -> Self {
        let (bbmd, foreign) = match role {
            Bip6Role::Node => (None, None),
            Bip6Role::Bbmd(config) => (
                Some(Bbmd6 {
                    fdt: ForeignDeviceTable::new(config.max_foreign_devices),
                    limit: RateLimit::new(config.rate, config.burst),
                    config,
                }),
                None,
            ),
            Bip6Role::Foreign(config) => (
                None,
                Some((config, ForeignRegistration::new(now, config.time_to_live))),
            ),
        };
        Self {
            vmac,
            local,
            multicast,
            cache: HashMap::new(),
            waiting: HashMap::new(),
            waiting_npdus: 0,
            bbmd,
            foreign,
            transmits: VecDeque::new(),
            stats: Bip6LinkStats::default(),
        }
    }

    /// This node's VMAC.
    pub fn vmac(&self) -> Vmac {
        self.vmac
    }

    /// Sets the local address once the socket is bound.
    pub fn set_local(&mut self, local: SocketAddrV6) {
        self.local = local;
    }

    /// Counters.
    pub fn stats(&self) -> Bip6LinkStats {
        self.stats
    }

    /// True when broadcasts can be sent.
    pub fn can_broadcast(&self) -> bool {
        self.multicast.is_some() || self.foreign.is_some()
    }

    /// The B/IPv6 address cached for `vmac`.
    pub fn resolved(&self, vmac: Vmac) -> Option<SocketAddrV6> {
        self.cache.get(&vmac).copied()
    }

    /// The VMAC cached for the node at `address`.
    pub fn vmac_at(&self, address: SocketAddrV6) -> Option<Vmac> {
        self.cache
            .iter()
            .find(|(_, cached)| same_node(cached, &address))
            .map(|(vmac, _)| *vmac)
    }

    /// The foreign devices registered (BBMD only).
    pub fn fdt(&self, now: Instant) -> Vec<ForeignDevice<SocketAddrV6>> {
        self.bbmd
            .as_ref()
            .map(|b| b.fdt.entries(now))
            .unwrap_or_default()
    }

    /// The registration, when this node is a foreign device.
    pub fn registration(&self) -> Option<&ForeignRegistration> {
        self.foreign.as_ref().map(|(_, registration)| registration)
    }

    /// Records where `vmac` is (learned, or configured).
    pub fn learn(&mut self, vmac: Vmac, address: SocketAddrV6) {
        if vmac == self.vmac {
            return;
        }
        if !self.cache.contains_key(&vmac) && self.cache.len() >= MAX_CACHE {
            // Forget an arbitrary entry; it is learned again from its next message.
            if let Some(victim) = self.cache.keys().next().copied() {
                self.cache.remove(&victim);
            }
        }
        self.cache.insert(vmac, address);
        if let Some(waiting) = self.waiting.remove(&vmac) {
            self.waiting_npdus -= waiting.npdus.len();
            for npdu in waiting.npdus {
                self.queue_unicast(address, vmac, &npdu);
            }
        }
    }

    fn queue(&mut self, to: SocketAddrV6, datagram: Vec<u8>) {
        if self.transmits.len() >= MAX_QUEUED {
            self.transmits.pop_front();
        }
        self.transmits.push_back((to, datagram));
    }

    fn queue_unicast(&mut self, to: SocketAddrV6, destination: Vmac, npdu: &[u8]) {
        let datagram = Bvll6::OriginalUnicastNpdu {
            source: self.vmac,
            destination,
            npdu,
        }
        .to_vec();
        self.queue(to, datagram);
    }

    /// Where Address-Resolution and broadcasts go: the multicast group, or the BBMD of a
    /// foreign device.
    fn broadcast_target(&self) -> Option<SocketAddrV6> {
        match &self.foreign {
            Some((config, _)) => Some(config.bbmd),
            None => self.multicast,
        }
    }

    /// Queues an NPDU for the node with `to`; resolves its address first when unknown.
    pub fn send_unicast(&mut self, now: Instant, to: Vmac, npdu: &[u8]) {
        if let Some(address) = self.cache.get(&to).copied() {
            self.queue_unicast(address, to, npdu);
            return;
        }
        if self.waiting_npdus >= MAX_WAITING_NPDUS {
            self.stats.unresolved += 1;
            return;
        }
        self.waiting_npdus += 1;
        self.waiting
            .entry(to)
            .or_insert_with(|| Waiting {
                next_try: now,
                attempts_left: RESOLUTION_ATTEMPTS,
                npdus: Vec::new(),
            })
            .npdus
            .push(npdu.to_vec());
        self.resolve_due(now);
    }

    /// Asks the node at `address` for its VMAC (Virtual-Address-Resolution); the answer
    /// is cached, see [`Self::vmac_at`].
    pub fn ask_vmac(&mut self, address: SocketAddrV6) {
        let datagram = Bvll6::VirtualAddressResolution { source: self.vmac }.to_vec();
        self.queue(address, datagram);
    }

    fn resolve_due(&mut self, now: Instant) {
        let Some(target) = self.broadcast_target() else {
            // Nowhere to ask: what waits can never be sent.
            let dropped: usize = self.waiting.drain().map(|(_, w)| w.npdus.len()).sum();
            self.waiting_npdus = 0;
            self.stats.unresolved += dropped as u64;
            return;
        };
        let mut asks = Vec::new();
        let mut given_up = Vec::new();
        for (vmac, waiting) in &mut self.waiting {
            if waiting.next_try > now {
                continue;
            }
            if waiting.attempts_left == 0 {
                given_up.push(*vmac);
                continue;
            }
            waiting.attempts_left -= 1;
            waiting.next_try = now + RESOLUTION_RETRY;
            asks.push(*vmac);
        }
        for vmac in given_up {
            if let Some(waiting) = self.waiting.remove(&vmac) {
                self.waiting_npdus -= waiting.npdus.len();
                self.stats.unresolved += waiting.npdus.len() as u64;
            }
        }
        for vmac in asks {
            let datagram = Bvll6::AddressResolution {
                source: self.vmac,
                target: vmac,
            }
            .to_vec();
            self.queue(target, datagram);
        }
    }

    /// Queues a broadcast of this node's NPDU: to the multicast group (and, for a BBMD, to
    /// peers and foreign devices), or for a foreign device to its BBMD. False when there is
    /// nowhere to broadcast.
    pub fn send_broadcast(&mut self, now: Instant, npdu: &[u8]) -> bool {
        if let Some((config, _)) = &self.foreign {
            let bbmd = config.bbmd;
            let datagram = Bvll6::DistributeBroadcastToNetwork {
                source: self.vmac,
                npdu,
            }
            .to_vec();
            self.queue(bbmd, datagram);
            return true;
        }
        let Some(multicast) = self.multicast else {
            return false;
        };
        let datagram = Bvll6::OriginalBroadcastNpdu {
            source: self.vmac,
            npdu,
        }
        .to_vec();
        self.queue(multicast, datagram);
        // A BBMD bound to the wildcard address does not know its own address; it then
        // names the unspecified address, which receivers take as "the sender".
        let local = self.local;
        handler::distribute(self, now, self.vmac, local, npdu, true, None);
        true
    }

    fn is_peer(&self, from: &SocketAddrV6) -> bool {
        self.bbmd
            .as_ref()
            .is_some_and(|b| b.config.bdt.iter().any(|peer| same_node(peer, from)))
    }

    fn result(&mut self, to: SocketAddrV6, code: Bvlc6ResultCode) {
        if to.ip().is_multicast() || to.ip().is_unspecified() || to.port() == 0 {
            return;
        }
        if code != Bvlc6ResultCode::SuccessfulCompletion {
            self.stats.naks += 1;
        }
        let datagram = Bvll6::Result {
            source: self.vmac,
            code,
        }
        .to_vec();
        self.queue(to, datagram);
    }

    /// Handles one datagram from `from`; returns the NPDU it carries for the network layer.
    pub fn handle_datagram(
        &mut self,
        now: Instant,
        from: SocketAddrV6,
        datagram: &[u8],
    ) -> Option<Link6Delivery> {
        let Ok(message) = Bvll6::decode_datagram(datagram) else {
            self.stats.malformed += 1;
            return None;
        };
        if message.source() == Some(self.vmac) {
            self.stats.own_vmac += 1;
            return None;
        }
        let shared = match message {
            Bvll6::OriginalUnicastNpdu {
                source,
                destination,
                npdu,
            } => {
                self.learn(source, from);
                if destination != self.vmac {
                    self.stats.not_for_us += 1;
                    return None;
                }
                return Some(Link6Delivery {
                    source,
                    npdu: npdu.to_vec(),
                    broadcast: false,
                });
            }
            Bvll6::OriginalBroadcastNpdu { source, npdu } => Message::Broadcast { source, npdu },
            Bvll6::ForwardedNpdu {
                source,
                original,
                npdu,
            } => Message::Forwarded {
                source,
                // An unspecified original address means "the sender itself" (a BBMD
                // forwarding its own broadcast).
                origin: if original.ip().is_unspecified() {
                    from
                } else {
                    original
                },
                npdu,
            },
            Bvll6::DistributeBroadcastToNetwork { source, npdu } => {
                Message::Distribute { source, npdu }
            }
            Bvll6::RegisterForeignDevice {
                source,
                time_to_live,
            } => Message::Register {
                source,
                time_to_live,
            },
            Bvll6::DeleteForeignDeviceTableEntry { entry, .. } => Message::Delete(entry),
            Bvll6::Result { source, code } => Message::Result {
                source,
                result: match code {
                    Bvlc6ResultCode::SuccessfulCompletion => ResultKind::Success,
                    Bvlc6ResultCode::RegisterForeignDeviceNak => ResultKind::RegisterNak,
                    _ => ResultKind::Other,
                },
            },
            Bvll6::AddressResolution { source, target } => {
                self.learn(source, from);
                if target == self.vmac {
                    let datagram = Bvll6::AddressResolutionAck {
                        source: self.vmac,
                        destination: source,
                    }
                    .to_vec();
                    self.queue(from, datagram);
                } else if self.bbmd.is_some() {
                    self.forward_resolution(now, source, target, from);
                }
                return None;
            }
            Bvll6::ForwardedAddressResolution {
                source,
                target,
                original,
            } => {
                self.learn(source, original);
                if target == self.vmac {
                    let datagram = Bvll6::AddressResolutionAck {
                        source: self.vmac,
                        destination: source,
                    }
                    .to_vec();
                    self.queue(original, datagram);
                } else if self.is_peer(&from)
                    && let Some(multicast) = self.multicast
                    && self.bbmd.as_mut().is_some_and(|b| b.limit.allow(now))
                {
                    let datagram = Bvll6::ForwardedAddressResolution {
                        source,
                        target,
                        original,
                    }
                    .to_vec();
                    self.queue(multicast, datagram);
                }
                return None;
            }
            Bvll6::AddressResolutionAck { source, .. }
            | Bvll6::VirtualAddressResolutionAck { source, .. } => {
                self.learn(source, from);
                return None;
            }
            Bvll6::VirtualAddressResolution { source } => {
                self.learn(source, from);
                let datagram = Bvll6::VirtualAddressResolutionAck {
                    source: self.vmac,
                    destination: source,
                }
                .to_vec();
                self.queue(from, datagram);
                return None;
            }
            Bvll6::SecureBvll(_) => return None,
        };
        handler::handle(self, now, from, shared).map(|(source, npdu)| Link6Delivery {
            source,
            npdu: npdu.to_vec(),
            broadcast: true,
        })
    }

    fn forward_resolution(&mut self, now: Instant, source: Vmac, target: Vmac, from: SocketAddrV6) {
        let Some(bbmd) = &self.bbmd else {
            return;
        };
        let mut targets: Vec<SocketAddrV6> = bbmd.config.bdt.clone();
        targets.extend(
            bbmd.fdt
                .addresses(now)
                .into_iter()
                .filter(|address| !same_node(address, &from)),
        );
        let datagram = Bvll6::ForwardedAddressResolution {
            source,
            target,
            original: from,
        }
        .to_vec();
        for target in targets {
            if self.bbmd.as_mut().is_some_and(|b| b.limit.allow(now)) {
                self.queue(target, datagram.clone());
            }
        }
    }

    /// Handles the deadlines due at `now`: resolution retries, registration, FDT purge.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.resolve_due(now);
        if let Some(bbmd) = &mut self.bbmd {
            bbmd.fdt.purge(now);
        }
        let vmac = self.vmac;
        let mut due = None;
        if let Some((config, registration)) = &mut self.foreign
            && registration.handle_timeout(now)
        {
            due = Some(*config);
        }
        if let Some(config) = due {
            let datagram = Bvll6::RegisterForeignDevice {
                source: vmac,
                time_to_live: config.time_to_live,
            }
            .to_vec();
            self.queue(config.bbmd, datagram);
        }
    }

    /// When [`Self::handle_timeout`] should next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let resolution = self.waiting.values().map(|w| w.next_try).min();
        let fdt = self.bbmd.as_ref().and_then(|b| b.fdt.next_expiry());
        let registration = self.foreign.as_ref().map(|(_, r)| r.poll_timeout());
        [resolution, fdt, registration].into_iter().flatten().min()
    }

    /// The next datagram to send and where.
    pub fn poll_transmit(&mut self) -> Option<(SocketAddrV6, Vec<u8>)> {
        self.transmits.pop_front()
    }
}

/// Same address and port (scope and flow ignored: the kernel fills them in on receipt).
fn same_node(a: &SocketAddrV6, b: &SocketAddrV6) -> bool {
    a.ip() == b.ip() && a.port() == b.port()
}

/// The B/IPv6 side of the shared BBMD handling: sources are VMACs (learned with their
/// address from every message), broadcasts go to the multicast group, and peers are the
/// table's addresses.
impl BbmdLink for Bip6Link {
    type Address = SocketAddrV6;
    type Source = Vmac;

    fn tables(&mut self) -> Option<(&mut ForeignDeviceTable<SocketAddrV6>, &mut RateLimit)> {
        self.bbmd.as_mut().map(|b| (&mut b.fdt, &mut b.limit))
    }

    fn peer_targets(&self) -> Vec<SocketAddrV6> {
        self.bbmd
            .as_ref()
            .map(|b| b.config.bdt.clone())
            .unwrap_or_default()
    }

    fn is_peer(&self, from: SocketAddrV6) -> bool {
        Bip6Link::is_peer(self, &from)
    }

    fn same_node(a: &SocketAddrV6, b: &SocketAddrV6) -> bool {
        same_node(a, b)
    }

    fn local_target(&self, _from_peer: bool) -> Option<SocketAddrV6> {
        self.multicast
    }

    fn forwarded(&self, source: Vmac, original: SocketAddrV6, npdu: &[u8]) -> Vec<u8> {
        Bvll6::ForwardedNpdu {
            source,
            original,
            npdu,
        }
        .to_vec()
    }

    fn queue(&mut self, to: SocketAddrV6, datagram: Vec<u8>) {
        Bip6Link::queue(self, to, datagram);
    }

    fn count_forwarded(&mut self) {
        self.stats.forwarded += 1;
    }

    fn reply(&mut self, to: SocketAddrV6, outcome: Outcome) {
        let code = match outcome {
            Outcome::Success => Bvlc6ResultCode::SuccessfulCompletion,
            Outcome::DistributeNak => Bvlc6ResultCode::DistributeBroadcastToNetworkNak,
            Outcome::RegisterNak => Bvlc6ResultCode::RegisterForeignDeviceNak,
            Outcome::DeleteNak => Bvlc6ResultCode::DeleteForeignDeviceTableEntryNak,
        };
        self.result(to, code);
    }

    fn learn(&mut self, source: Vmac, at: SocketAddrV6) {
        Bip6Link::learn(self, source, at);
    }

    fn may_register(&self, from: SocketAddrV6) -> bool {
        !(from.ip().is_multicast() || from.ip().is_unspecified())
    }

    fn registered(&mut self, source: Vmac, from: SocketAddrV6) {
        Bip6Link::learn(self, source, from);
    }

    fn registration_from(&mut self, from: SocketAddrV6) -> Option<&mut ForeignRegistration> {
        match &mut self.foreign {
            Some((config, registration)) if same_node(&from, &config.bbmd) => Some(registration),
            _ => None,
        }
    }
}
