//! Addresses at and above the network layer: what a data link's addresses must offer
//! ([`LinkAddress`]), and routed device addresses written `NETWORK:HEXMAC` or
//! `NETWORK:HOST:PORT` ([`RoutedAddress`]).

use std::fmt;
use std::hash::Hash;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::str::FromStr;

use super::npdu::{GLOBAL_BROADCAST_NETWORK, MacAddress, RemoteAddress};

/// An address on one data link: a B/IP `SocketAddrV4`, a B/IPv6 virtual MAC, a router's
/// (port, MAC) pair. The application layer is generic over it, so one device server or
/// client core runs over any data link.
pub trait LinkAddress: Copy + Eq + Hash + fmt::Debug + Send + Sync + 'static {}

impl<T: Copy + Eq + Hash + fmt::Debug + Send + Sync + 'static> LinkAddress for T {}

/// The directed broadcast address of the IPv4 subnet `address` is in, given its netmask: the
/// address with every host bit set (10.0.0.70/26 gives 10.0.0.127, 192.168.1.5/30 gives
/// 192.168.1.7). Decision: a /31 or /32 has no broadcast address of its own (RFC 3021), so
/// for those the limited broadcast 255.255.255.255 is used, which every host of the link
/// receives.
pub fn subnet_broadcast(address: Ipv4Addr, netmask: Ipv4Addr) -> Ipv4Addr {
    let mask = u32::from(netmask);
    if mask.count_ones() >= 31 {
        return Ipv4Addr::BROADCAST;
    }
    Ipv4Addr::from(u32::from(address) | !mask)
}

/// The B/IP MAC address of `address` (Annex J.1: 4 octets of IP address, 2 of port).
pub fn bip_mac(address: SocketAddrV4) -> MacAddress {
    let mut octets = [0u8; 6];
    octets[..4].copy_from_slice(&address.ip().octets());
    octets[4..].copy_from_slice(&address.port().to_be_bytes());
    // Six octets always fit.
    MacAddress::new(&octets).unwrap_or_default()
}

/// The B/IP address in a 6-octet MAC, or `None` for other lengths.
pub fn bip_address(mac: &MacAddress) -> Option<SocketAddrV4> {
    let octets: [u8; 6] = mac.as_bytes().try_into().ok()?;
    Some(SocketAddrV4::new(
        Ipv4Addr::new(octets[0], octets[1], octets[2], octets[3]),
        u16::from_be_bytes([octets[4], octets[5]]),
    ))
}

/// A device on another BACnet network: its network number and its MAC address there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RoutedAddress {
    /// The remote network number (1..=65534).
    pub network: u16,
    /// The MAC address on that network (empty: broadcast on that network).
    pub mac: MacAddress,
}

impl RoutedAddress {
    /// As the DNET/DADR of an NPDU.
    pub const fn remote(&self) -> RemoteAddress {
        RemoteAddress {
            network: self.network,
            mac: self.mac,
        }
    }
}

impl From<RemoteAddress> for RoutedAddress {
    fn from(remote: RemoteAddress) -> Self {
        Self {
            network: remote.network,
            mac: remote.mac,
        }
    }
}

/// Where a device is, as a client names it: on the local network at a link address, or
/// on another network (its router is found by Who-Is-Router-To-Network, or from the cache,
/// or named).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceAddress<A = SocketAddrV4> {
    /// On the local network.
    Local(A),
    /// On another network, through a router found by Who-Is-Router-To-Network.
    Remote(RoutedAddress),
    /// On another network, through the router at this link address.
    Via {
        /// The router's address on the local network.
        router: A,
        /// The device's network and MAC address.
        remote: RoutedAddress,
    },
}

impl<A> From<A> for DeviceAddress<A> {
    fn from(link: A) -> Self {
        Self::Local(link)
    }
}

impl<A> DeviceAddress<A> {
    /// The local link address, if the device is on the local network.
    pub fn local(&self) -> Option<&A> {
        match self {
            Self::Local(link) => Some(link),
            Self::Remote(_) | Self::Via { .. } => None,
        }
    }

    /// The device's network and MAC address, if it is on another network.
    pub fn remote(&self) -> Option<&RoutedAddress> {
        match self {
            Self::Local(_) => None,
            Self::Remote(remote) | Self::Via { remote, .. } => Some(remote),
        }
    }
}

/// A local device compares equal to its link address (`found[0].0 == server.local_addr()`).
impl<A: PartialEq> PartialEq<A> for DeviceAddress<A> {
    fn eq(&self, other: &A) -> bool {
        matches!(self, Self::Local(link) if link == other)
    }
}

impl<A: fmt::Display> fmt::Display for DeviceAddress<A> {
    /// The link address as the link writes it (`10.0.0.5:47808`), or `NETWORK:HEXMAC`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Local(link) => link.fmt(f),
            Self::Remote(remote) | Self::Via { remote, .. } => remote.fmt(f),
        }
    }
}

impl FromStr for DeviceAddress<SocketAddrV4> {
    type Err = AddressParseError;

    /// `HOST:PORT` (an IPv4 address: a local B/IP device), else a [`RoutedAddress`]
    /// (`NETWORK:HEXMAC` or `NETWORK:HOST:PORT`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if let Ok(local) = text.trim().parse::<SocketAddrV4>() {
            return Ok(Self::Local(local));
        }
        text.parse().map(Self::Remote)
    }
}

/// Why a routed address did not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressParseError(String);

impl fmt::Display for AddressParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AddressParseError {}

fn parse_error(text: &str, why: &str) -> AddressParseError {
    AddressParseError(format!(
        "{text:?} is not a routed address ({why}); write NETWORK:HEXMAC (2:0a000005bac0) \
         or NETWORK:HOST:PORT (2:10.0.0.5:47808)"
    ))
}

impl FromStr for RoutedAddress {
    type Err = AddressParseError;

    /// `NETWORK:HEXMAC` (`2:c0a80105bac0`, `3:0a` for MS/TP, `5:*` for a remote broadcast)
    /// or `NETWORK:HOST:PORT` (`2:192.168.1.5:47808`, the B/IP MAC of that address).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (network, rest) = text
            .split_once(':')
            .ok_or_else(|| parse_error(text, "no network number"))?;
        let network: u16 = network
            .trim()
            .parse()
            .map_err(|_| parse_error(text, "the network number is not 1..=65534"))?;
        if network == 0 || network == GLOBAL_BROADCAST_NETWORK {
            return Err(parse_error(text, "the network number is not 1..=65534"));
        }
        let rest = rest.trim();
        if rest == "*" || rest.is_empty() {
            return Ok(Self {
                network,
                mac: MacAddress::BROADCAST,
            });
        }
        if rest.contains(':') {
            let address: SocketAddrV4 = rest
                .parse()
                .map_err(|_| parse_error(text, "HOST:PORT is not an IPv4 address and port"))?;
            return Ok(Self {
                network,
                mac: bip_mac(address),
            });
        }
        let hex = rest.strip_prefix("0x").unwrap_or(rest);
        if hex.len() % 2 != 0 || hex.is_empty() {
            return Err(parse_error(
                text,
                "the MAC needs an even number of hex digits",
            ));
        }
        let mut octets = Vec::with_capacity(hex.len() / 2);
        for pair in hex.as_bytes().chunks(2) {
            let digits = std::str::from_utf8(pair).unwrap_or("");
            let octet = u8::from_str_radix(digits, 16)
                .map_err(|_| parse_error(text, "the MAC is not hexadecimal"))?;
            octets.push(octet);
        }
        let mac =
            MacAddress::new(&octets).ok_or_else(|| parse_error(text, "the MAC is too long"))?;
        Ok(Self { network, mac })
    }
}

impl fmt::Display for RoutedAddress {
    /// `NETWORK:HEXMAC`, or `NETWORK:*` for a remote broadcast.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.network)?;
        if self.mac.is_empty() {
            return f.write_str("*");
        }
        for octet in self.mac.as_bytes() {
            write!(f, "{octet:02x}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subnet_broadcast_sets_the_host_bits_of_the_netmask() {
        let ip = |text: &str| text.parse::<Ipv4Addr>().unwrap();
        let cases = [
            ("10.0.0.70", "255.255.255.192", "10.0.0.127"), // /26
            ("10.0.0.5", "255.255.255.192", "10.0.0.63"),   // /26, first block
            ("192.168.1.5", "255.255.255.252", "192.168.1.7"), // /30
            ("192.168.7.20", "255.255.255.0", "192.168.7.255"), // /24
            ("172.16.3.9", "255.255.0.0", "172.16.255.255"), // /16
            ("10.99.0.1", "255.255.255.240", "10.99.0.15"), // /28
            ("10.0.0.4", "255.255.255.254", "255.255.255.255"), // /31: none of its own
            ("10.0.0.4", "255.255.255.255", "255.255.255.255"), // /32
        ];
        for (address, netmask, broadcast) in cases {
            assert_eq!(
                subnet_broadcast(ip(address), ip(netmask)),
                ip(broadcast),
                "{address}/{netmask}"
            );
        }
    }

    #[test]
    fn parses_hex_and_host_port_forms() {
        let hex: RoutedAddress = "2:0a000005bac0".parse().unwrap();
        let host: RoutedAddress = "2:10.0.0.5:47808".parse().unwrap();
        assert_eq!(hex, host);
        assert_eq!(hex.mac.as_bytes(), [10, 0, 0, 5, 0xBA, 0xC0]);
        assert_eq!(hex.to_string(), "2:0a000005bac0");
        assert_eq!(
            bip_address(&hex.mac),
            Some("10.0.0.5:47808".parse().unwrap())
        );
        let mstp: RoutedAddress = "3:0x1f".parse().unwrap();
        assert_eq!((mstp.network, mstp.mac.as_bytes()), (3, &[0x1F][..]));
        let broadcast: RoutedAddress = "7:*".parse().unwrap();
        assert!(broadcast.mac.is_empty());
        assert_eq!(broadcast.to_string(), "7:*");
        let local: DeviceAddress = "10.0.0.9:47809".parse().unwrap();
        assert_eq!(
            local,
            DeviceAddress::Local("10.0.0.9:47809".parse().unwrap())
        );
        assert_eq!(local.to_string(), "10.0.0.9:47809");
        let remote: DeviceAddress = "2:10.0.0.5:47808".parse().unwrap();
        assert_eq!(remote, DeviceAddress::Remote(host));
        for bad in [
            "",
            "2",
            "0:0a",
            "65535:0a",
            "x:0a",
            "2:abc",
            "2:zz",
            "2:1.2.3:5",
        ] {
            assert!(bad.parse::<RoutedAddress>().is_err(), "{bad}");
        }
        let too_long = format!("2:{}", "ab".repeat(19));
        assert!(too_long.parse::<RoutedAddress>().is_err());
    }
}
