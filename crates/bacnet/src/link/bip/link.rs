//! `BipLink`: the sans-IO BACnet/IP virtual link layer of one node (Annex J): BVLL in,
//! NPDUs up, datagrams out. Its role is a plain node, a BBMD (broadcast distribution table
//! with masks, foreign device table, Forwarded-NPDU both ways, Distribute-Broadcast-To-
//! Network), or a foreign device registered with a BBMD.
//!
//! Amplification and loops: a BBMD forwards a broadcast only when it came from its own
//! subnet (Original-Broadcast-NPDU), from a registered foreign device
//! (Distribute-Broadcast-To-Network) or from a peer BBMD in its table (Forwarded-NPDU);
//! what a peer forwarded goes to the local subnet and foreign devices only, never back to
//! peers, so no datagram circulates. Datagrams from its own address (the echo of its own
//! broadcasts) are dropped. Every datagram a BBMD sends on its own initiative (forwards,
//! table answers) draws from one token bucket. Registrations from broadcast, multicast or
//! unspecified addresses are refused.

use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::Instant;

use super::bvll::{BdtEntry, BvlcResultCode, Bvll, FdtEntry};

use crate::link::bbmd::fdt::{DEFAULT_MAX_FOREIGN_DEVICES, ForeignDeviceTable};
use crate::link::bbmd::handler::{self, BbmdLink, Message, Outcome, ResultKind};
use crate::link::bbmd::rate::RateLimit;
use crate::link::bbmd::registration::ForeignRegistration;

/// Most BDT entries kept (a Read-BDT-Ack must fit one 1,497-octet datagram: 149 entries).
pub const MAX_BDT_ENTRIES: usize = 128;

/// BBMD settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BbmdConfig {
    /// The broadcast distribution table: peer BBMDs and this BBMD itself, with masks.
    pub bdt: Vec<BdtEntry>,
    /// Accept Write-Broadcast-Distribution-Table (off: NAK).
    pub allow_write_bdt: bool,
    /// Most foreign devices registered at once.
    pub max_foreign_devices: usize,
    /// Datagrams per second this BBMD sends on its own initiative.
    pub rate: u32,
    /// Burst allowed above that rate.
    pub burst: u32,
}

impl Default for BbmdConfig {
    fn default() -> Self {
        Self {
            bdt: Vec::new(),
            allow_write_bdt: false,
            max_foreign_devices: DEFAULT_MAX_FOREIGN_DEVICES,
            rate: crate::link::bbmd::rate::DEFAULT_RATE,
            burst: crate::link::bbmd::rate::DEFAULT_BURST,
        }
    }
}

/// Foreign-device settings: the BBMD to register with and the time-to-live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForeignConfig {
    /// The BBMD's B/IP address.
    pub bbmd: SocketAddrV4,
    /// Time-to-live in seconds.
    pub time_to_live: u16,
}

/// What this node is on its link.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum BipRole {
    /// A plain B/IP node: answers BBMD requests with NAKs.
    #[default]
    Node,
    /// A BBMD.
    Bbmd(BbmdConfig),
    /// A foreign device: broadcasts go to the BBMD as Distribute-Broadcast-To-Network.
    Foreign(ForeignConfig),
}

/// An NPDU for the network layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkDelivery {
    /// The originating node (for a Forwarded-NPDU, the original source).
    pub source: SocketAddrV4,
    /// The NPDU.
    pub npdu: Vec<u8>,
    /// True when it was a broadcast.
    pub broadcast: bool,
}

/// Counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BipLinkStats {
    /// Datagrams that did not decode.
    pub malformed: u64,
    /// Datagrams from this node's own address (broadcast echoes), dropped.
    pub own_echoes: u64,
    /// Broadcasts forwarded (one per destination).
    pub forwarded: u64,
    /// Forwards and answers dropped by the rate limit.
    pub rate_limited: u64,
    /// BVLL requests answered with a NAK.
    pub naks: u64,
    /// Foreign-device registrations accepted.
    pub registrations: u64,
}

struct Bbmd {
    config: BbmdConfig,
    fdt: ForeignDeviceTable<SocketAddrV4>,
    limit: RateLimit,
}

/// The B/IP link layer of one node.
pub struct BipLink {
    local: SocketAddrV4,
    broadcast: Option<SocketAddrV4>,
    bbmd: Option<Bbmd>,
    foreign: Option<(ForeignConfig, ForeignRegistration)>,
    transmits: std::collections::VecDeque<(SocketAddrV4, Vec<u8>)>,
    stats: BipLinkStats,
}

impl std::fmt::Debug for BipLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BipLink")
            .field("local", &self.local)
            .field("broadcast", &self.broadcast)
            .field("bbmd", &self.bbmd.is_some())
            .field("foreign", &self.foreign.as_ref().map(|f| f.0))
            .finish_non_exhaustive()
    }
}

/// Most datagrams waiting to be sent; past this the oldest are dropped.
const MAX_QUEUED: usize = 8192;

fn bvll(message: &Bvll<'_>) -> Vec<u8> {
    let mut buf = Vec::new();
    message.encode(&mut buf);
    buf
}

/// The address a Forwarded-NPDU for `entry` goes to: the BBMD itself when its mask is all
/// ones (two-hop distribution), else the directed broadcast of its subnet (one-hop).
pub fn forward_address(entry: &BdtEntry) -> SocketAddrV4 {
    let ip = u32::from(*entry.address.ip());
    let mask = u32::from(entry.mask);
    SocketAddrV4::new(Ipv4Addr::from(ip | !mask), entry.address.port())
}

impl BipLink {
    /// A link for the node at `local` (its unicast address) whose subnet broadcasts go to
    /// `broadcast`.
    pub fn new(
        now: Instant,
        local: SocketAddrV4,
        broadcast: Option<SocketAddrV4>,
        role: BipRole,
    ) -> Self {
        let (bbmd, foreign) = match role {
            BipRole::Node => (None, None),
            BipRole::Bbmd(mut config) => {
                config.bdt.truncate(MAX_BDT_ENTRIES);
                let bbmd = Bbmd {
                    fdt: ForeignDeviceTable::new(config.max_foreign_devices),
                    limit: RateLimit::new(config.rate, config.burst),
                    config,
                };
                (Some(bbmd), None)
            }
            BipRole::Foreign(config) => (
                None,
                Some((config, ForeignRegistration::new(now, config.time_to_live))),
            ),
        };
        Self {
            local,
            broadcast,
            bbmd,
            foreign,
            transmits: std::collections::VecDeque::new(),
            stats: BipLinkStats::default(),
        }
    }

    /// This node's address.
    pub fn local(&self) -> SocketAddrV4 {
        self.local
    }

    /// Sets the local address once the socket is bound (port 0 picked one).
    pub fn set_local(&mut self, local: SocketAddrV4) {
        self.local = local;
    }

    /// Counters.
    pub fn stats(&self) -> BipLinkStats {
        let mut stats = self.stats;
        if let Some(bbmd) = &self.bbmd {
            stats.rate_limited = bbmd.limit.dropped();
        }
        stats
    }

    /// True when broadcasts can be sent (a broadcast address, or a BBMD to go through).
    pub fn can_broadcast(&self) -> bool {
        self.broadcast.is_some() || self.foreign.is_some()
    }

    /// The broadcast distribution table (empty unless a BBMD).
    pub fn bdt(&self) -> Vec<BdtEntry> {
        self.bbmd
            .as_ref()
            .map(|b| b.config.bdt.clone())
            .unwrap_or_default()
    }

    /// The foreign device table as Read-FDT reports it (empty unless a BBMD).
    pub fn fdt(&self, now: Instant) -> Vec<FdtEntry> {
        self.bbmd
            .as_ref()
            .map(|b| {
                b.fdt
                    .entries(now)
                    .into_iter()
                    .map(|e| FdtEntry {
                        address: e.address,
                        time_to_live: e.time_to_live,
                        remaining: e.remaining,
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The foreign-device registration, when this node is one.
    pub fn registration(&self) -> Option<&ForeignRegistration> {
        self.foreign.as_ref().map(|(_, registration)| registration)
    }

    fn queue(&mut self, to: SocketAddrV4, datagram: Vec<u8>) {
        if self.transmits.len() >= MAX_QUEUED {
            self.transmits.pop_front();
        }
        self.transmits.push_back((to, datagram));
    }

    /// Queues an NPDU for one node.
    pub fn send_unicast(&mut self, to: SocketAddrV4, npdu: &[u8]) {
        self.queue(to, bvll(&Bvll::OriginalUnicastNpdu(npdu)));
    }

    /// Queues a broadcast of this node's NPDU: on the subnet (and, for a BBMD, to its peers
    /// and foreign devices), or for a foreign device to its BBMD. False when there is
    /// nowhere to broadcast.
    pub fn send_broadcast(&mut self, now: Instant, npdu: &[u8]) -> bool {
        if let Some((config, _)) = &self.foreign {
            let bbmd = config.bbmd;
            self.queue(bbmd, bvll(&Bvll::DistributeBroadcastToNetwork(npdu)));
            return true;
        }
        let Some(broadcast) = self.broadcast else {
            return false;
        };
        self.queue(broadcast, bvll(&Bvll::OriginalBroadcastNpdu(npdu)));
        let local = self.local;
        handler::distribute(self, now, local, local, npdu, true, None);
        true
    }

    /// As a BBMD, forwards a broadcast NPDU originated by `source`: to the peers in the BDT
    /// (when `to_peers`), to the local subnet as a Forwarded-NPDU (when `to_subnet`), and
    /// to every foreign device but `except`.
    fn two_hop(&self) -> bool {
        self.bbmd.as_ref().is_none_or(|bbmd| {
            bbmd.config
                .bdt
                .iter()
                .find(|entry| entry.address == self.local)
                .is_none_or(|entry| entry.mask == Ipv4Addr::BROADCAST)
        })
    }

    fn is_peer(&self, from: SocketAddrV4) -> bool {
        self.bbmd.as_ref().is_some_and(|bbmd| {
            bbmd.config
                .bdt
                .iter()
                .any(|entry| entry.address == from && entry.address != self.local)
        })
    }

    /// Answers a BVLL request. Nothing is ever sent to a broadcast-like source: an answer
    /// there would reach a whole subnet.
    fn result(&mut self, to: SocketAddrV4, code: BvlcResultCode) {
        if self.is_broadcast_like(to) {
            return;
        }
        if code != BvlcResultCode::SuccessfulCompletion {
            self.stats.naks += 1;
        }
        self.queue(to, bvll(&Bvll::Result(code)));
    }

    /// True for addresses a registration must never come from.
    fn is_broadcast_like(&self, from: SocketAddrV4) -> bool {
        let ip = *from.ip();
        ip.is_broadcast()
            || ip.is_multicast()
            || ip.is_unspecified()
            || from.port() == 0
            || self.broadcast.is_some_and(|b| *b.ip() == ip)
    }

    /// Handles one datagram from `from`; returns the NPDU it carries for the network layer.
    pub fn handle_datagram(
        &mut self,
        now: Instant,
        from: SocketAddrV4,
        datagram: &[u8],
    ) -> Option<LinkDelivery> {
        if from == self.local {
            self.stats.own_echoes += 1;
            return None;
        }
        let Ok(message) = Bvll::decode_datagram(datagram) else {
            self.stats.malformed += 1;
            return None;
        };
        let shared = match message {
            Bvll::OriginalUnicastNpdu(npdu) => {
                return Some(LinkDelivery {
                    source: from,
                    npdu: npdu.to_vec(),
                    broadcast: false,
                });
            }
            Bvll::OriginalBroadcastNpdu(npdu) => Message::Broadcast { source: from, npdu },
            Bvll::ForwardedNpdu { source, .. } if source == self.local => {
                // Our own broadcast coming back: never again.
                self.stats.own_echoes += 1;
                return None;
            }
            Bvll::ForwardedNpdu { source, npdu } => Message::Forwarded {
                source,
                origin: source,
                npdu,
            },
            Bvll::DistributeBroadcastToNetwork(npdu) => Message::Distribute { source: from, npdu },
            Bvll::RegisterForeignDevice { time_to_live } => Message::Register {
                source: from,
                time_to_live,
            },
            Bvll::DeleteFdtEntry(address) => Message::Delete(address),
            Bvll::Result(code) => Message::Result {
                source: from,
                result: match code {
                    BvlcResultCode::SuccessfulCompletion => ResultKind::Success,
                    BvlcResultCode::RegisterForeignDeviceNak => ResultKind::RegisterNak,
                    _ => ResultKind::Other,
                },
            },
            Bvll::ReadBdt => {
                let broadcast_like = self.is_broadcast_like(from);
                match &mut self.bbmd {
                    Some(bbmd) => {
                        if !broadcast_like && bbmd.limit.allow(now) {
                            let answer = bvll(&Bvll::ReadBdtAck(bbmd.config.bdt.clone()));
                            self.queue(from, answer);
                        }
                    }
                    None => self.result(from, BvlcResultCode::ReadBdtNak),
                }
                return None;
            }
            Bvll::ReadFdt => {
                let entries = self.fdt(now);
                let broadcast_like = self.is_broadcast_like(from);
                match &mut self.bbmd {
                    Some(bbmd) => {
                        if !broadcast_like && bbmd.limit.allow(now) {
                            self.queue(from, bvll(&Bvll::ReadFdtAck(entries)));
                        }
                    }
                    None => self.result(from, BvlcResultCode::ReadFdtNak),
                }
                return None;
            }
            Bvll::WriteBdt(entries) => {
                match &mut self.bbmd {
                    Some(bbmd)
                        if bbmd.config.allow_write_bdt && entries.len() <= MAX_BDT_ENTRIES =>
                    {
                        bbmd.config.bdt = entries;
                        self.result(from, BvlcResultCode::SuccessfulCompletion);
                    }
                    _ => self.result(from, BvlcResultCode::WriteBdtNak),
                }
                return None;
            }
            Bvll::ReadBdtAck(_) | Bvll::ReadFdtAck(_) | Bvll::SecureBvll(_) => return None,
        };
        handler::handle(self, now, from, shared).map(|(source, npdu)| LinkDelivery {
            source,
            npdu: npdu.to_vec(),
            broadcast: true,
        })
    }

    /// Handles the deadlines due at `now`: foreign-device registration and renewal, purge
    /// of expired foreign devices.
    pub fn handle_timeout(&mut self, now: Instant) {
        if let Some(bbmd) = &mut self.bbmd {
            bbmd.fdt.purge(now);
        }
        let mut due = None;
        if let Some((config, registration)) = &mut self.foreign
            && registration.handle_timeout(now)
        {
            due = Some(*config);
        }
        if let Some(config) = due {
            self.queue(
                config.bbmd,
                bvll(&Bvll::RegisterForeignDevice {
                    time_to_live: config.time_to_live,
                }),
            );
        }
    }

    /// When [`Self::handle_timeout`] should next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let fdt = self.bbmd.as_ref().and_then(|b| b.fdt.next_expiry());
        let registration = self.foreign.as_ref().map(|(_, r)| r.poll_timeout());
        [fdt, registration].into_iter().flatten().min()
    }

    /// The next datagram to send and where.
    pub fn poll_transmit(&mut self) -> Option<(SocketAddrV4, Vec<u8>)> {
        self.transmits.pop_front()
    }
}

/// The B/IP side of the shared BBMD handling: sources are addresses, peers are reached at
/// their broadcast distribution mask's directed broadcast.
impl BbmdLink for BipLink {
    type Address = SocketAddrV4;
    type Source = SocketAddrV4;

    fn tables(&mut self) -> Option<(&mut ForeignDeviceTable<SocketAddrV4>, &mut RateLimit)> {
        self.bbmd.as_mut().map(|b| (&mut b.fdt, &mut b.limit))
    }

    fn peer_targets(&self) -> Vec<SocketAddrV4> {
        let Some(bbmd) = &self.bbmd else {
            return Vec::new();
        };
        bbmd.config
            .bdt
            .iter()
            .filter(|entry| entry.address != self.local)
            .map(forward_address)
            .collect()
    }

    fn is_peer(&self, from: SocketAddrV4) -> bool {
        BipLink::is_peer(self, from)
    }

    fn same_node(a: &SocketAddrV4, b: &SocketAddrV4) -> bool {
        a == b
    }

    fn local_target(&self, from_peer: bool) -> Option<SocketAddrV4> {
        // What a peer forwarded reaches our subnet from us only with two-hop distribution.
        self.broadcast.filter(|_| !from_peer || self.two_hop())
    }

    fn forwarded(&self, source: SocketAddrV4, _origin: SocketAddrV4, npdu: &[u8]) -> Vec<u8> {
        bvll(&Bvll::ForwardedNpdu { source, npdu })
    }

    fn queue(&mut self, to: SocketAddrV4, datagram: Vec<u8>) {
        BipLink::queue(self, to, datagram);
    }

    fn count_forwarded(&mut self) {
        self.stats.forwarded += 1;
    }

    fn reply(&mut self, to: SocketAddrV4, outcome: Outcome) {
        let code = match outcome {
            Outcome::Success => BvlcResultCode::SuccessfulCompletion,
            Outcome::DistributeNak => BvlcResultCode::DistributeBroadcastToNetworkNak,
            Outcome::RegisterNak => BvlcResultCode::RegisterForeignDeviceNak,
            Outcome::DeleteNak => BvlcResultCode::DeleteFdtEntryNak,
        };
        self.result(to, code);
    }

    fn learn(&mut self, _source: SocketAddrV4, _at: SocketAddrV4) {}

    fn may_register(&self, from: SocketAddrV4) -> bool {
        !self.is_broadcast_like(from)
    }

    fn registered(&mut self, _source: SocketAddrV4, _from: SocketAddrV4) {
        self.stats.registrations += 1;
    }

    fn registration_from(&mut self, from: SocketAddrV4) -> Option<&mut ForeignRegistration> {
        match &mut self.foreign {
            Some((config, registration)) if from == config.bbmd => Some(registration),
            _ => None,
        }
    }
}
