//! BACnet/IP (Annex J) over UDP on tokio: one socket for unicast and, when the unicast socket
//! is bound to a specific address, a second one bound to the subnet's broadcast address so that
//! broadcasts reach this application too (Linux delivers a datagram sent to the broadcast
//! address only to sockets bound to that address or to the wildcard).
//!
//! Through [`Transport`] the link layer runs a sans-IO [`BipLink`]: a plain node, a BBMD or a
//! foreign device (see [`crate::link::bip`]); the socket loop only moves its datagrams and fires
//! its deadlines.

use std::collections::VecDeque;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use socket2::{Domain, Protocol, Socket, Type};
use tokio::net::UdpSocket;

use crate::driver::bip::table_log::{Tables, log_registration};
use crate::driver::error::DriverError;
use crate::driver::link_clock::LinkClock;
use crate::driver::transport::{Delivery, Transport};
use crate::encoding::DecodeError;
use crate::link::{BdtEntry, Bvll, FdtEntry};
use crate::link::{BipLink, BipLinkStats, BipRole, RegistrationState};
use crate::network::MacAddress;
use crate::network::address::{bip_address, bip_mac, subnet_broadcast};

/// Largest NPDU on B/IP (Annex J.2: 1,497 octets of NPDU).
pub const MAX_BIP_NPDU: usize = 1497;
/// How long [`BipTransport::bind_with_role`] waits for a foreign device's first
/// registration to be accepted before giving up.
pub const REGISTRATION_WAIT: Duration = Duration::from_secs(3);
/// NPDUs received while a foreign device waits for its registration, kept for `receive`.
const MAX_EARLY_DELIVERIES: usize = 256;

/// Largest BACnet/IP datagram: 1,497 octets of BVLL + NPDU (Annex J.2) plus headroom for
/// non-conforming peers; anything larger is truncated by the kernel and fails to decode.
pub const MAX_BIP_DATAGRAM: usize = 1600;

/// The broadcast address of 127.0.0.0/8.
const LOOPBACK_BROADCAST: Ipv4Addr = Ipv4Addr::new(127, 255, 255, 255);

/// Where and how to bind.
#[derive(Clone, Debug)]
pub struct BipConfig {
    /// Local address; port 0 picks a free port, IP 0.0.0.0 listens on every interface.
    pub bind: SocketAddrV4,
    /// The subnet's broadcast address (for 127.0.0.1 that is 127.255.255.255); `None` for
    /// client-only use where no broadcast needs to be received or sent.
    pub broadcast: Option<Ipv4Addr>,
}

impl BipConfig {
    /// Binds `bind` with the broadcast address of its subnet: 255.255.255.255 for 0.0.0.0,
    /// 127.255.255.255 on loopback, otherwise the directed broadcast of the netmask of the
    /// interface that holds the address (issue 30: a /24 was assumed, so an address of a
    /// smaller subnet could not bind its broadcast socket). Decision: an address no
    /// interface holds keeps the /24 guess, and binding it fails as binding the address
    /// itself would; an explicit broadcast (`--broadcast`) overrides all of this.
    pub fn with_default_broadcast(bind: SocketAddrV4) -> Self {
        let ip = *bind.ip();
        let broadcast = if ip.is_unspecified() {
            Ipv4Addr::BROADCAST
        } else if ip.is_loopback() {
            LOOPBACK_BROADCAST
        } else {
            let netmask =
                super::interfaces::netmask_of(ip).unwrap_or(Ipv4Addr::new(255, 255, 255, 0));
            subnet_broadcast(ip, netmask)
        };
        Self {
            bind,
            broadcast: Some(broadcast),
        }
    }
}

/// A datagram received and unwrapped from its BVLL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Received {
    /// The B/IP address of the device that originated the NPDU (for a Forwarded-NPDU, the
    /// original source it carries, not the BBMD that forwarded it).
    pub source: SocketAddrV4,
    /// The UDP peer the datagram came from.
    pub peer: SocketAddrV4,
    /// True when it came as a broadcast (Original-Broadcast or Forwarded).
    pub broadcast: bool,
    /// The NPDU bytes, or `None` for BVLL messages that carry none (BVLC-Result, tables).
    pub npdu: Option<Vec<u8>>,
    /// The BVLC function code.
    pub function: u8,
}

/// A BACnet/IP endpoint.
pub struct BipTransport {
    unicast: UdpSocket,
    broadcast_rx: Option<UdpSocket>,
    /// Bound to 255.255.255.255 when the subnet's broadcast address is another: devices
    /// that broadcast to the limited broadcast address reach this node too.
    limited_rx: Option<UdpSocket>,
    broadcast_to: Option<SocketAddrV4>,
    local: SocketAddrV4,
    link: Mutex<BipLink>,
    early: Mutex<VecDeque<Delivery<SocketAddrV4>>>,
    clock: LinkClock,
}

impl std::fmt::Debug for BipTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BipTransport")
            .field("local", &self.local)
            .field("broadcast_to", &self.broadcast_to)
            .finish_non_exhaustive()
    }
}

fn udp_socket(addr: SocketAddrV4, reuse: bool) -> io::Result<UdpSocket> {
    let socket = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
    if reuse {
        socket.set_reuse_address(true)?;
    }
    socket.set_broadcast(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&SocketAddr::V4(addr).into())?;
    UdpSocket::from_std(socket.into())
}

impl BipTransport {
    /// Binds the sockets as a plain B/IP node.
    pub async fn bind(config: &BipConfig) -> io::Result<Self> {
        Self::bind_with_role(config, BipRole::Node).await
    }

    /// Binds the sockets as a node, a BBMD or a foreign device. A foreign device
    /// registers before this returns (and fails when the BBMD refuses or does not answer
    /// within [`REGISTRATION_WAIT`]), so that its first broadcast already goes through.
    pub async fn bind_with_role(config: &BipConfig, role: BipRole) -> io::Result<Self> {
        Self::bind_with_clock(config, role, LinkClock::system()).await
    }

    /// As [`Self::bind_with_role`], with the link's tables and timers on `clock` (an
    /// adjustable one lets a test show expiries without waiting for them).
    pub async fn bind_with_clock(
        config: &BipConfig,
        role: BipRole,
        clock: LinkClock,
    ) -> io::Result<Self> {
        let foreign = matches!(role, BipRole::Foreign(_));
        if matches!(role, BipRole::Bbmd(_)) && config.bind.ip().is_unspecified() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a BBMD binds to its own IP address (not 0.0.0.0): peers and foreign devices \
                 know it by that address",
            ));
        }
        let transport = Self::bind_sockets(config, role, clock, None).await?;
        if foreign {
            transport.wait_registered(REGISTRATION_WAIT).await?;
        }
        Ok(transport)
    }

    async fn wait_registered(&self, wait: Duration) -> io::Result<()> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            match self.lock().registration().map(|r| r.state()) {
                Some(RegistrationState::Registered { .. }) | None => return Ok(()),
                Some(RegistrationState::Refused) => {
                    return Err(io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        "the BBMD refused the foreign-device registration (NAK): is it a BBMD, \
                         and is its foreign device table full?",
                    ));
                }
                Some(RegistrationState::Registering) => {}
            }
            match tokio::time::timeout_at(deadline, self.step()).await {
                Ok(Ok(Some(delivery))) => {
                    let mut early = self.early.lock().unwrap_or_else(|e| e.into_inner());
                    if early.len() < MAX_EARLY_DELIVERIES {
                        early.push_back(delivery);
                    }
                }
                Ok(Ok(None)) => {}
                Ok(Err(error)) => return Err(error),
                Err(_) => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "no answer from the BBMD to Register-Foreign-Device; check its address \
                         and port",
                    ));
                }
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, BipLink> {
        // The link's state stays consistent across a panic elsewhere: keep using it.
        self.link
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The link layer's counters.
    pub fn link_stats(&self) -> BipLinkStats {
        self.lock().stats()
    }

    /// The broadcast distribution table (a BBMD's; empty otherwise).
    pub fn bdt(&self) -> Vec<BdtEntry> {
        self.lock().bdt()
    }

    /// The foreign device table (a BBMD's; empty otherwise).
    pub fn fdt(&self) -> Vec<FdtEntry> {
        self.lock().fdt(self.clock.now())
    }

    /// The foreign-device registration state, when this node is one.
    pub fn registration(&self) -> Option<RegistrationState> {
        self.lock().registration().map(|r| r.state())
    }

    /// Binds a plain node whose broadcasts go to `broadcast_port` rather than its own port:
    /// a client on a port of its own (port 0) that looks for devices on the standard port.
    /// It listens for broadcasts on that port too when it can share it (best effort: a
    /// device that holds it alone keeps its broadcasts, directed answers still arrive).
    pub async fn bind_client(
        config: &BipConfig,
        role: BipRole,
        broadcast_port: u16,
    ) -> io::Result<Self> {
        let foreign = matches!(role, BipRole::Foreign(_));
        let transport =
            Self::bind_sockets(config, role, LinkClock::system(), Some(broadcast_port)).await?;
        if foreign {
            transport.wait_registered(REGISTRATION_WAIT).await?;
        }
        Ok(transport)
    }

    async fn bind_sockets(
        config: &BipConfig,
        role: BipRole,
        clock: LinkClock,
        broadcast_port: Option<u16>,
    ) -> io::Result<Self> {
        let unicast = udp_socket(config.bind, false)?;
        let local = match unicast.local_addr()? {
            SocketAddr::V4(v4) => v4,
            SocketAddr::V6(v6) => {
                return Err(io::Error::other(DriverError::BoundToIpv6(v6)));
            }
        };
        let own_port = broadcast_port.is_none_or(|p| p == local.port());
        let broadcast_to = config
            .broadcast
            .map(|ip| SocketAddrV4::new(ip, broadcast_port.unwrap_or(local.port())));
        // A socket bound to a specific unicast address does not see broadcasts: add one bound
        // to the broadcast address itself (shared with other applications on this host).
        let broadcast_rx = match broadcast_to {
            Some(b) if !config.bind.ip().is_unspecified() && own_port => Some(udp_socket(b, true)?),
            Some(b) if !config.bind.ip().is_unspecified() => udp_socket(b, true).ok(),
            _ => None,
        };
        // Best effort: without it only subnet-directed broadcasts are heard.
        let limited_rx = match broadcast_to {
            Some(b) if !config.bind.ip().is_unspecified() && !b.ip().is_broadcast() => {
                udp_socket(SocketAddrV4::new(Ipv4Addr::BROADCAST, local.port()), true).ok()
            }
            _ => None,
        };
        let link = BipLink::new(clock.now(), local, broadcast_to, role);
        Ok(Self {
            unicast,
            broadcast_rx,
            limited_rx,
            broadcast_to,
            local,
            link: Mutex::new(link),
            early: Mutex::new(VecDeque::new()),
            clock,
        })
    }

    /// The first of the sockets that has a datagram.
    async fn readable(&self) -> io::Result<&UdpSocket> {
        async fn ready(socket: Option<&UdpSocket>) -> io::Result<&UdpSocket> {
            match socket {
                Some(socket) => socket.readable().await.map(|()| socket),
                None => std::future::pending().await,
            }
        }
        tokio::select! {
            r = ready(Some(&self.unicast)) => r,
            r = ready(self.broadcast_rx.as_ref()) => r,
            r = ready(self.limited_rx.as_ref()) => r,
        }
    }

    /// Sends what the link layer queued.
    async fn flush(&self) {
        loop {
            let next = self.lock().poll_transmit();
            let Some((to, datagram)) = next else {
                break;
            };
            // A lost datagram is recovered by the protocol above (retries, renewals).
            let _ = self.unicast.send_to(&datagram, to).await;
        }
    }

    /// Reads datagrams until one carries an NPDU for the network layer, running the link
    /// layer's deadlines meanwhile.
    async fn next_delivery(&self) -> io::Result<Delivery<SocketAddrV4>> {
        loop {
            if let Some(delivery) = self.step().await? {
                return Ok(delivery);
            }
        }
    }

    /// One event of the link layer: a deadline, or one datagram (and the NPDU it carries
    /// for the network layer, if any). What the link queued is sent before and after.
    async fn step(&self) -> io::Result<Option<Delivery<SocketAddrV4>>> {
        let mut buf = [0u8; MAX_BIP_DATAGRAM];
        self.flush().await;
        let deadline = self.lock().poll_timeout();
        let wake = deadline.map_or_else(
            || tokio::time::Instant::now() + Duration::from_secs(3600),
            |deadline| tokio::time::Instant::from_std(self.clock.to_host(deadline)),
        );
        let (n, from) = tokio::select! {
            got = self.recv_raw(&mut buf) => got?,
            () = tokio::time::sleep_until(wake) => {
                {
                    let mut link = self.lock();
                    let now = self.clock.now();
                    // Just before the deadline, the entries expiring at it are still there.
                    let just_before = deadline
                        .and_then(|d| d.checked_sub(Duration::from_millis(1)))
                        .map_or(now, |d| d.min(now));
                    let tables = Tables::of(&link, just_before);
                    link.handle_timeout(now);
                    tables.log_changes(&Tables::of(&link, now), None);
                }
                self.flush().await;
                return Ok(None);
            }
        };
        let SocketAddr::V4(from) = from else {
            return Ok(None);
        };
        let datagram = buf.get(..n).unwrap_or_default();
        let (delivery, before, after) = {
            let mut link = self.lock();
            let now = self.clock.now();
            let before = link.stats();
            let tables = Tables::before_datagram(&link, now, datagram);
            let registration = link.registration().map(|r| r.state());
            let delivery = link.handle_datagram(now, from, datagram);
            if let Some(tables) = tables {
                tables.log_changes(&Tables::of(&link, now), Some(from));
            }
            log_registration(registration, link.registration().map(|r| r.state()), from);
            (delivery, before, link.stats())
        };
        crate::driver::peer_log::bvll_datagram(
            "bip",
            &from,
            after.malformed > before.malformed,
            after.naks > before.naks,
        );
        self.flush().await;
        Ok(delivery.map(|delivery| Delivery {
            source: delivery.source,
            npdu: delivery.npdu,
            broadcast: delivery.broadcast,
        }))
    }

    async fn recv_raw(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        loop {
            let socket = self.readable().await?;
            match socket.try_recv_from(buf) {
                Ok(got) => return Ok(got),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                // ICMP port unreachable from an earlier send surfaces here on Linux: it says
                // nothing about this socket, keep reading.
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// The local address (with the port picked when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddrV4 {
        self.local
    }

    /// The address broadcasts are sent to, if any.
    pub fn broadcast_addr(&self) -> Option<SocketAddrV4> {
        self.broadcast_to
    }

    /// Sends an NPDU to one device as Original-Unicast-NPDU.
    pub async fn send_unicast(&self, to: SocketAddrV4, npdu: &[u8]) -> io::Result<()> {
        let mut buf = Vec::with_capacity(npdu.len() + 4);
        Bvll::OriginalUnicastNpdu(npdu).encode(&mut buf);
        self.unicast.send_to(&buf, to).await.map(|_| ())
    }

    /// Broadcasts an NPDU: Original-Broadcast-NPDU to the local broadcast address (and, for
    /// a BBMD, Forwarded-NPDU to its peers and foreign devices), or for a foreign device
    /// Distribute-Broadcast-To-Network to its BBMD.
    pub async fn send_broadcast(&self, npdu: &[u8]) -> io::Result<()> {
        let queued = self.lock().send_broadcast(self.clock.now(), npdu);
        if !queued {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "this transport has no broadcast address: bind with one to send broadcasts",
            ));
        }
        self.flush().await;
        Ok(())
    }

    /// Sends an already encoded BVLL datagram (BBMD and foreign-device messages).
    pub async fn send_bvll(&self, to: SocketAddrV4, datagram: &[u8]) -> io::Result<()> {
        self.unicast.send_to(datagram, to).await.map(|_| ())
    }

    /// Receives the next datagram. Datagrams that are not BACnet/IP, or whose BVLL does not
    /// decode, are returned as `Err(Ok(decode error))` with the peer, so the caller can count
    /// and drop them; socket errors are `Err(Err(io))`.
    pub async fn recv(
        &self,
        buf: &mut [u8],
    ) -> Result<Received, Result<(SocketAddr, DecodeError), io::Error>> {
        let (n, from) = loop {
            let socket = self.readable().await.map_err(Err)?;
            match socket.try_recv_from(buf) {
                Ok(got) => break got,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(Err(e)),
            }
        };
        let peer = match from {
            SocketAddr::V4(v4) => v4,
            SocketAddr::V6(_) => {
                return Err(Ok((
                    from,
                    DecodeError::new(
                        0,
                        crate::encoding::DecodeErrorKind::InvalidValue("IPv6 peer on B/IP"),
                    ),
                )));
            }
        };
        let datagram = buf.get(..n).unwrap_or_default();
        let bvll = Bvll::decode_datagram(datagram).map_err(|e| Ok((from, e)))?;
        let (source, broadcast) = match &bvll {
            Bvll::ForwardedNpdu { source, .. } => (*source, true),
            Bvll::OriginalBroadcastNpdu(_) | Bvll::DistributeBroadcastToNetwork(_) => (peer, true),
            _ => (peer, false),
        };
        Ok(Received {
            source,
            peer,
            broadcast,
            npdu: bvll.npdu().map(<[u8]>::to_vec),
            function: bvll.function(),
        })
    }
}

impl Transport for BipTransport {
    type Address = SocketAddrV4;

    fn local_link_address(&self) -> SocketAddrV4 {
        self.local
    }

    fn mac_of(address: &SocketAddrV4) -> MacAddress {
        bip_mac(*address)
    }

    fn address_of(mac: &MacAddress) -> Option<SocketAddrV4> {
        bip_address(mac)
    }

    fn can_broadcast(&self) -> bool {
        self.lock().can_broadcast()
    }

    fn max_npdu(&self) -> usize {
        MAX_BIP_NPDU
    }

    async fn send_unicast(&self, to: SocketAddrV4, npdu: &[u8]) -> io::Result<()> {
        BipTransport::send_unicast(self, to, npdu).await
    }

    async fn send_broadcast(&self, npdu: &[u8]) -> io::Result<()> {
        BipTransport::send_broadcast(self, npdu).await
    }

    async fn receive(&self) -> io::Result<Delivery<SocketAddrV4>> {
        let early = self
            .early
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop_front();
        if let Some(delivery) = early {
            return Ok(delivery);
        }
        self.next_delivery().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(port: u16) -> SocketAddrV4 {
        SocketAddrV4::new(Ipv4Addr::LOCALHOST, port)
    }

    #[tokio::test]
    async fn unicast_round_trip_unwraps_the_bvll() {
        let a = BipTransport::bind(&BipConfig {
            bind: local(0),
            broadcast: None,
        })
        .await
        .unwrap();
        let b = BipTransport::bind(&BipConfig {
            bind: local(0),
            broadcast: None,
        })
        .await
        .unwrap();
        a.send_unicast(b.local_addr(), &[0x01, 0x00, 0x10, 0x08])
            .await
            .unwrap();
        let mut buf = [0u8; MAX_BIP_DATAGRAM];
        let got = b.recv(&mut buf).await.unwrap();
        assert_eq!(got.source, a.local_addr());
        assert!(!got.broadcast);
        assert_eq!(got.npdu.as_deref(), Some(&[0x01, 0x00, 0x10, 0x08][..]));
    }

    #[tokio::test]
    async fn broadcasts_reach_every_application_on_the_port() {
        // Two "devices" on one host share a port through the broadcast socket; find a free
        // port first by binding a throw-away socket.
        let probe = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = probe.local_addr().unwrap().port();
        drop(probe);
        let server_cfg = BipConfig::with_default_broadcast(local(port));
        let server = BipTransport::bind(&server_cfg).await.unwrap();
        let client_cfg = BipConfig {
            bind: SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 2), port),
            broadcast: Some(Ipv4Addr::new(127, 255, 255, 255)),
        };
        let client = BipTransport::bind(&client_cfg).await.unwrap();
        client
            .send_broadcast(&[0x01, 0x00, 0x10, 0x08])
            .await
            .unwrap();
        let mut buf = [0u8; MAX_BIP_DATAGRAM];
        let got = tokio::time::timeout(std::time::Duration::from_secs(2), server.recv(&mut buf))
            .await
            .expect("the broadcast arrives")
            .unwrap();
        assert!(got.broadcast);
        assert_eq!(got.source, client.local_addr());
    }

    #[tokio::test]
    async fn garbage_is_reported_with_its_peer() {
        let b = BipTransport::bind(&BipConfig {
            bind: local(0),
            broadcast: None,
        })
        .await
        .unwrap();
        let raw = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        raw.send_to(b"hello", b.local_addr()).unwrap();
        let mut buf = [0u8; MAX_BIP_DATAGRAM];
        match b.recv(&mut buf).await {
            Err(Ok((peer, _))) => assert_eq!(peer, raw.local_addr().unwrap()),
            other => panic!("{other:?}"),
        }
    }
}
