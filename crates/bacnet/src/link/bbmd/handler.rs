//! The broadcast-management half of `handle_datagram`, written once for B/IP (Annex J) and
//! B/IPv6 (Annex U): each link decodes its own BVLL, handles what only it has (B/IP's
//! Read-BDT and Write-BDT, B/IPv6's address resolution), and hands the messages both share
//! to [`handle`] as a [`Message`]. [`BbmdLink`] is the small set of differences: address
//! types, how a Forwarded-NPDU is written, who the peers are, and the result codes.
//!
//! Loops and amplification, the same for both: a BBMD forwards a broadcast only when it
//! came from its own subnet or group (Original-Broadcast-NPDU), from a registered foreign
//! device (Distribute-Broadcast-To-Network) or from a peer BBMD in its table
//! (Forwarded-NPDU); what a peer forwarded goes to the local subnet or group and to foreign
//! devices only, never back to peers. Everything a BBMD sends on its own initiative draws
//! from its one token bucket.

use std::time::Instant;

use super::fdt::ForeignDeviceTable;
use super::rate::RateLimit;
use super::registration::ForeignRegistration;

/// A BVLC-Result a BBMD answers with, whatever the link's code numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Success,
    DistributeNak,
    RegisterNak,
    DeleteNak,
}

/// What a BVLC-Result received from our BBMD says about our registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResultKind {
    Success,
    RegisterNak,
    Other,
}

/// The messages both IP links handle the same way. `source` is the node the NPDU is from
/// (its B/IP address, or its B/IPv6 VMAC); addresses are the link's socket addresses.
pub(crate) enum Message<'a, L: BbmdLink> {
    /// Original-Broadcast-NPDU from the local subnet or group.
    Broadcast { source: L::Source, npdu: &'a [u8] },
    /// Forwarded-NPDU: `origin` is the original sender's address.
    Forwarded {
        source: L::Source,
        origin: L::Address,
        npdu: &'a [u8],
    },
    /// Distribute-Broadcast-To-Network from a foreign device.
    Distribute { source: L::Source, npdu: &'a [u8] },
    /// Register-Foreign-Device.
    Register {
        source: L::Source,
        time_to_live: u16,
    },
    /// Delete-Foreign-Device-Table-Entry.
    Delete(L::Address),
    /// BVLC-Result.
    Result {
        source: L::Source,
        result: ResultKind,
    },
}

/// What differs between the B/IP and B/IPv6 link for the shared BBMD handling.
pub(crate) trait BbmdLink {
    /// The link's socket address.
    type Address: Copy + Ord + std::hash::Hash + std::fmt::Debug;
    /// The address a delivered NPDU names as its source.
    type Source: Copy;

    /// The foreign device table and token bucket, when this link is a BBMD.
    fn tables(&mut self) -> Option<(&mut ForeignDeviceTable<Self::Address>, &mut RateLimit)>;
    /// Where a broadcast goes to reach the peer BBMDs (not this one).
    fn peer_targets(&self) -> Vec<Self::Address>;
    /// Whether `from` is a peer BBMD of the table.
    fn is_peer(&self, from: Self::Address) -> bool;
    /// Whether two addresses are the same node.
    fn same_node(a: &Self::Address, b: &Self::Address) -> bool;
    /// Where a broadcast forwarded to the local subnet or group goes (`from_peer`: it came
    /// from a peer BBMD), if anywhere.
    fn local_target(&self, from_peer: bool) -> Option<Self::Address>;
    /// A Forwarded-NPDU datagram.
    fn forwarded(&self, source: Self::Source, origin: Self::Address, npdu: &[u8]) -> Vec<u8>;
    /// Queues a datagram.
    fn queue(&mut self, to: Self::Address, datagram: Vec<u8>);
    /// Counts one forwarded datagram.
    fn count_forwarded(&mut self);
    /// Answers `to` with a BVLC-Result.
    fn reply(&mut self, to: Self::Address, outcome: Outcome);
    /// Remembers where `source` is (B/IPv6 address resolution; nothing on B/IP).
    fn learn(&mut self, source: Self::Source, at: Self::Address);
    /// Whether `from` may register as a foreign device.
    fn may_register(&self, from: Self::Address) -> bool;
    /// A foreign device at `from` has registered.
    fn registered(&mut self, source: Self::Source, from: Self::Address);
    /// Our registration, when this link is a foreign device and `from` is its BBMD.
    fn registration_from(&mut self, from: Self::Address) -> Option<&mut ForeignRegistration>;
}

fn allow<L: BbmdLink>(link: &mut L, now: Instant) -> bool {
    link.tables().is_some_and(|(_, limit)| limit.allow(now))
}

/// Handles one shared message; returns the NPDU to deliver up as a broadcast, with its
/// source.
pub(crate) fn handle<'a, L: BbmdLink>(
    link: &mut L,
    now: Instant,
    from: L::Address,
    message: Message<'a, L>,
) -> Option<(L::Source, &'a [u8])> {
    match message {
        Message::Broadcast { source, npdu } => {
            // A broadcast on our subnet: peers and foreign devices get it too.
            link.learn(source, from);
            distribute(link, now, source, from, npdu, true, None);
            Some((source, npdu))
        }
        Message::Forwarded {
            source,
            origin,
            npdu,
        } => {
            link.learn(source, origin);
            if link.is_peer(from) {
                // From a peer BBMD: to our subnet and foreign devices; never back to peers.
                if let Some(to) = link.local_target(true)
                    && allow(link, now)
                {
                    link.count_forwarded();
                    let datagram = link.forwarded(source, origin, npdu);
                    link.queue(to, datagram);
                }
                distribute(link, now, source, origin, npdu, false, None);
            }
            Some((source, npdu))
        }
        Message::Distribute { source, npdu } => {
            let registered = link
                .tables()
                .is_some_and(|(fdt, _)| fdt.contains(now, &from));
            if !registered {
                link.reply(from, Outcome::DistributeNak);
                return None;
            }
            link.learn(source, from);
            if let Some(to) = link.local_target(false)
                && allow(link, now)
            {
                link.count_forwarded();
                let datagram = link.forwarded(source, from, npdu);
                link.queue(to, datagram);
            }
            distribute(link, now, source, from, npdu, true, Some(from));
            Some((source, npdu))
        }
        Message::Register {
            source,
            time_to_live,
        } => {
            let accepted = link.may_register(from)
                && link
                    .tables()
                    .is_some_and(|(fdt, _)| fdt.register(now, from, time_to_live).is_ok());
            if accepted {
                link.registered(source, from);
                link.reply(from, Outcome::Success);
            } else {
                link.reply(from, Outcome::RegisterNak);
            }
            None
        }
        Message::Delete(entry) => {
            let deleted = link
                .tables()
                .is_some_and(|(fdt, _)| fdt.delete(now, &entry));
            let outcome = if deleted {
                Outcome::Success
            } else {
                Outcome::DeleteNak
            };
            link.reply(from, outcome);
            None
        }
        Message::Result { source, result } => {
            let ours = match link.registration_from(from) {
                Some(registration) => {
                    match result {
                        ResultKind::Success => registration.handle_result(now, true),
                        ResultKind::RegisterNak => registration.handle_result(now, false),
                        ResultKind::Other => {}
                    }
                    true
                }
                None => false,
            };
            if ours {
                link.learn(source, from);
            }
            None
        }
    }
}

/// Forwards a broadcast from `source` (originally sent from `origin`) to the peer BBMDs
/// (`to_peers`) and to every foreign device but `except` and the originator.
pub(crate) fn distribute<L: BbmdLink>(
    link: &mut L,
    now: Instant,
    source: L::Source,
    origin: L::Address,
    npdu: &[u8],
    to_peers: bool,
    except: Option<L::Address>,
) {
    let Some((fdt, _)) = link.tables() else {
        return;
    };
    let devices = fdt.addresses(now);
    let mut targets = if to_peers {
        link.peer_targets()
    } else {
        Vec::new()
    };
    targets.extend(
        devices
            .into_iter()
            .filter(|address| Some(*address) != except && !L::same_node(address, &origin)),
    );
    if targets.is_empty() {
        return;
    }
    let datagram = link.forwarded(source, origin, npdu);
    for target in targets {
        if allow(link, now) {
            link.count_forwarded();
            link.queue(target, datagram.clone());
        }
    }
}
