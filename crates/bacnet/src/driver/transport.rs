//! `Transport`: what the device server, the client and the router need from a data link
//! (send one NPDU to a link address, broadcast one, receive the next), so that each runs
//! over BACnet/IP ([`super::BipTransport`]), BACnet/IPv6 ([`super::Bip6Transport`]) or
//! anything else with the same shape.

use std::fmt;
use std::future::Future;
use std::io;

use crate::network::LinkAddress;

/// One NPDU received from a data link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery<A> {
    /// The link address of the node that sent it (for a B/IP Forwarded-NPDU: the
    /// original source it names).
    pub source: A,
    /// The NPDU.
    pub npdu: Vec<u8>,
    /// True when it came as a link-layer broadcast.
    pub broadcast: bool,
}

/// A data link carrying NPDUs.
pub trait Transport: Send + Sync + 'static {
    /// Link addresses (B/IP: `SocketAddrV4`; B/IPv6: a virtual MAC).
    type Address: LinkAddress + fmt::Display;

    /// This node's own address on the link.
    fn local_link_address(&self) -> Self::Address;

    /// The link address as the octets of a BACnet MAC address (SADR/DADR).
    fn mac_of(address: &Self::Address) -> crate::network::MacAddress;

    /// The link address a BACnet MAC names, if it has this link's form.
    fn address_of(mac: &crate::network::MacAddress) -> Option<Self::Address>;

    /// True when [`Self::send_broadcast`] can work (a broadcast address, a multicast
    /// group, or a BBMD to distribute through).
    fn can_broadcast(&self) -> bool;

    /// Largest NPDU this link carries.
    fn max_npdu(&self) -> usize;

    /// Sends an NPDU to one node.
    fn send_unicast(
        &self,
        to: Self::Address,
        npdu: &[u8],
    ) -> impl Future<Output = io::Result<()>> + Send;

    /// Sends an NPDU to every node of the link (and, for a BBMD or a foreign device, to
    /// the other subnets it distributes to).
    fn send_broadcast(&self, npdu: &[u8]) -> impl Future<Output = io::Result<()>> + Send;

    /// Receives the next NPDU. Link-layer traffic (tables, registrations, address
    /// resolution) is handled inside; datagrams that do not decode are counted and
    /// dropped. Cancel-safe: dropping the future loses at most the datagram being read.
    fn receive(&self) -> impl Future<Output = io::Result<Delivery<Self::Address>>> + Send;
}
