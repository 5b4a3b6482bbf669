//! BACnet/IPv6 (Annex U) over UDP on tokio. One socket for unicast; broadcasts are sent to
//! and received from a multicast group (X'FF02::BAC0' by default). When the unicast port
//! differs from the group's port (several devices on one host, as in tests) a second socket,
//! bound to the group's port with address reuse, receives the multicasts.
//!
//! The link layer (VMACs, address resolution, BBMD, foreign device) is the sans-IO
//! [`Bip6Link`]; this driver only moves its datagrams and fires its deadlines.

use std::collections::VecDeque;
use std::io;
use std::net::{Ipv6Addr, SocketAddr, SocketAddrV6};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use socket2::{Domain, Protocol, Socket, Type};
use tokio::net::UdpSocket;

use crate::driver::error::DriverError;
use crate::driver::transport::{Delivery, Transport};
use crate::link::bip6::bvll::{MULTICAST_LINK_LOCAL, Vmac};
use crate::link::bip6::link::Bip6LinkStats;
use crate::link::{Bip6Link, Bip6Role, ForeignDevice, RegistrationState};
use crate::network::MacAddress;

/// Largest B/IPv6 datagram read.
pub const MAX_BIP6_DATAGRAM: usize = 1600;
/// Largest NPDU on B/IPv6.
pub const MAX_BIP6_NPDU: usize = 1497;
/// Most NPDUs kept while waiting for a registration or a VMAC.
const MAX_EARLY_DELIVERIES: usize = 256;

/// Where and how a B/IPv6 node binds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bip6Config {
    /// Unicast address and port (`[::]:47808`; port 0 picks one).
    pub bind: SocketAddrV6,
    /// This node's virtual MAC address.
    pub vmac: Vmac,
    /// The multicast group broadcasts go to (`None`: unicast only).
    pub multicast: Option<Ipv6Addr>,
    /// The UDP port of the group (47808 normally; every node of a network uses the same).
    pub multicast_port: u16,
    /// The interface index to join the group on and send multicasts from (0: the
    /// system's choice).
    pub interface: u32,
    /// Node, BBMD or foreign device.
    pub role: Bip6Role,
}

impl Bip6Config {
    /// A node on `bind` with `vmac`, using the link-local group on the same port.
    pub fn new(bind: SocketAddrV6, vmac: Vmac) -> Self {
        Self {
            bind,
            vmac,
            multicast: Some(MULTICAST_LINK_LOCAL),
            multicast_port: bind.port(),
            interface: bind.scope_id(),
            role: Bip6Role::Node,
        }
    }
}

/// A BACnet/IPv6 endpoint.
pub struct Bip6Transport {
    unicast: UdpSocket,
    multicast_rx: Option<UdpSocket>,
    local: SocketAddrV6,
    vmac: Vmac,
    link: Mutex<Bip6Link>,
    early: Mutex<VecDeque<Delivery<Vmac>>>,
}

impl std::fmt::Debug for Bip6Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bip6Transport")
            .field("local", &self.local)
            .field("vmac", &self.vmac)
            .finish_non_exhaustive()
    }
}

fn udp6_socket(addr: SocketAddrV6, reuse: bool) -> io::Result<Socket> {
    let socket = Socket::new(Domain::IPV6, Type::DGRAM, Some(Protocol::UDP))?;
    socket.set_only_v6(true)?;
    if reuse {
        socket.set_reuse_address(true)?;
    }
    socket.set_nonblocking(true)?;
    socket.bind(&SocketAddr::V6(addr).into())?;
    Ok(socket)
}

impl Bip6Transport {
    /// Binds the sockets and joins the multicast group. A foreign device registers before
    /// this returns.
    pub async fn bind(config: &Bip6Config) -> io::Result<Self> {
        let group_port = config.multicast_port;
        let shared = config.multicast.is_some()
            && config.bind.port() == group_port
            && config.bind.ip().is_unspecified();
        let unicast = udp6_socket(config.bind, shared)?;
        let mut multicast_rx = None;
        if let Some(group) = config.multicast {
            unicast.set_multicast_loop_v6(true)?;
            if config.interface != 0 {
                unicast.set_multicast_if_v6(config.interface)?;
            }
            if shared {
                unicast.join_multicast_v6(&group, config.interface)?;
            } else {
                // Bound to the group itself: it hears only the multicasts, and does not
                // clash with a unicast socket on a specific address and the same port.
                let rx = udp6_socket(
                    SocketAddrV6::new(group, group_port, 0, config.interface),
                    true,
                )?;
                rx.join_multicast_v6(&group, config.interface)?;
                multicast_rx = Some(UdpSocket::from_std(rx.into())?);
            }
        }
        let unicast = UdpSocket::from_std(unicast.into())?;
        let local = match unicast.local_addr()? {
            SocketAddr::V6(v6) => v6,
            SocketAddr::V4(v4) => return Err(io::Error::other(DriverError::BoundToIpv4(v4))),
        };
        let multicast = config
            .multicast
            .map(|group| SocketAddrV6::new(group, group_port, 0, config.interface));
        let foreign = matches!(config.role, Bip6Role::Foreign(_));
        let link = Bip6Link::new(
            std::time::Instant::now(),
            config.vmac,
            local,
            multicast,
            config.role.clone(),
        );
        let transport = Self {
            unicast,
            multicast_rx,
            local,
            vmac: config.vmac,
            link: Mutex::new(link),
            early: Mutex::new(VecDeque::new()),
        };
        if foreign {
            transport
                .wait_until(super::ipv4::REGISTRATION_WAIT, |link| {
                    match link.registration().map(|r| r.state()) {
                        Some(RegistrationState::Registered { .. }) | None => Some(Ok(())),
                        Some(RegistrationState::Refused) => Some(Err(io::Error::new(
                            io::ErrorKind::PermissionDenied,
                            "the BBMD refused the foreign-device registration (NAK)",
                        ))),
                        Some(RegistrationState::Registering) => None,
                    }
                })
                .await?;
        }
        Ok(transport)
    }

    fn lock(&self) -> MutexGuard<'_, Bip6Link> {
        self.link
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The unicast address bound.
    pub fn local_addr(&self) -> SocketAddrV6 {
        self.local
    }

    /// This node's VMAC.
    pub fn vmac(&self) -> Vmac {
        self.vmac
    }

    /// The link layer's counters.
    pub fn link_stats(&self) -> Bip6LinkStats {
        self.lock().stats()
    }

    /// The foreign device table (a BBMD's; empty otherwise).
    pub fn fdt(&self) -> Vec<ForeignDevice<SocketAddrV6>> {
        self.lock().fdt(std::time::Instant::now())
    }

    /// The foreign-device registration state, when this node is one.
    pub fn registration(&self) -> Option<RegistrationState> {
        self.lock().registration().map(|r| r.state())
    }

    /// Records where `vmac` is, without asking the network.
    pub fn learn(&self, vmac: Vmac, address: SocketAddrV6) {
        self.lock().learn(vmac, address);
    }

    /// The VMAC of the node at `address`: from the cache, or asked with
    /// Virtual-Address-Resolution (waiting at most `wait`).
    pub async fn vmac_of(&self, address: SocketAddrV6, wait: Duration) -> io::Result<Vmac> {
        if let Some(vmac) = self.lock().vmac_at(address) {
            return Ok(vmac);
        }
        self.lock().ask_vmac(address);
        let mut found = None;
        self.wait_until(wait, |link| {
            found = link.vmac_at(address);
            found.map(|_| Ok(()))
        })
        .await?;
        found.ok_or_else(|| io::Error::new(io::ErrorKind::TimedOut, "no VMAC answer"))
    }

    /// Runs the link until `done` says so (or `wait` passes), keeping NPDUs received
    /// meanwhile for [`Transport::receive`].
    async fn wait_until(
        &self,
        wait: Duration,
        mut done: impl FnMut(&Bip6Link) -> Option<io::Result<()>> + Send,
    ) -> io::Result<()> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let verdict = done(&self.lock());
            if let Some(verdict) = verdict {
                return verdict;
            }
            match tokio::time::timeout_at(deadline, self.step()).await {
                Ok(Ok(Some(delivery))) => {
                    let mut early = self
                        .early
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    if early.len() < MAX_EARLY_DELIVERIES {
                        early.push_back(delivery);
                    }
                }
                Ok(Ok(None)) => {}
                Ok(Err(error)) => return Err(error),
                Err(_) => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "no answer on the B/IPv6 link (registration or address resolution)",
                    ));
                }
            }
        }
    }

    async fn flush(&self) {
        loop {
            let next = self.lock().poll_transmit();
            let Some((to, datagram)) = next else {
                break;
            };
            let _ = self.unicast.send_to(&datagram, to).await;
        }
    }

    async fn recv_raw(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        loop {
            let socket = match &self.multicast_rx {
                Some(m) => tokio::select! {
                    r = self.unicast.readable() => r.map(|()| &self.unicast),
                    r = m.readable() => r.map(|()| m),
                },
                None => self.unicast.readable().await.map(|()| &self.unicast),
            }?;
            match socket.try_recv_from(buf) {
                Ok(got) => return Ok(got),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => continue,
                Err(e) => return Err(e),
            }
        }
    }

    async fn next_delivery(&self) -> io::Result<Delivery<Vmac>> {
        loop {
            if let Some(delivery) = self.step().await? {
                return Ok(delivery);
            }
        }
    }

    /// One event of the link layer: a deadline, or one datagram (and its NPDU, if any).
    async fn step(&self) -> io::Result<Option<Delivery<Vmac>>> {
        let mut buf = [0u8; MAX_BIP6_DATAGRAM];
        self.flush().await;
        let deadline = self.lock().poll_timeout();
        let wake = deadline.map_or_else(
            || tokio::time::Instant::now() + Duration::from_secs(3600),
            tokio::time::Instant::from_std,
        );
        let (n, from) = tokio::select! {
            got = self.recv_raw(&mut buf) => got?,
            () = tokio::time::sleep_until(wake) => {
                self.lock().handle_timeout(std::time::Instant::now());
                self.flush().await;
                return Ok(None);
            }
        };
        let SocketAddr::V6(from) = from else {
            return Ok(None);
        };
        let datagram = buf.get(..n).unwrap_or_default();
        let (delivery, before, after) = {
            let mut link = self.lock();
            let before = link.stats();
            let delivery = link.handle_datagram(std::time::Instant::now(), from, datagram);
            (delivery, before, link.stats())
        };
        crate::driver::peer_log::bvll_datagram(
            "bip6",
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
}

impl Transport for Bip6Transport {
    type Address = Vmac;

    fn local_link_address(&self) -> Vmac {
        self.vmac
    }

    fn mac_of(address: &Vmac) -> MacAddress {
        MacAddress::new(&address.0).unwrap_or_default()
    }

    fn address_of(mac: &MacAddress) -> Option<Vmac> {
        Vmac::from_mac(mac.as_bytes())
    }

    fn can_broadcast(&self) -> bool {
        self.lock().can_broadcast()
    }

    fn max_npdu(&self) -> usize {
        MAX_BIP6_NPDU
    }

    async fn send_unicast(&self, to: Vmac, npdu: &[u8]) -> io::Result<()> {
        self.lock()
            .send_unicast(std::time::Instant::now(), to, npdu);
        self.flush().await;
        Ok(())
    }

    async fn send_broadcast(&self, npdu: &[u8]) -> io::Result<()> {
        let queued = self.lock().send_broadcast(std::time::Instant::now(), npdu);
        if !queued {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "this B/IPv6 transport has no multicast group nor BBMD to broadcast through",
            ));
        }
        self.flush().await;
        Ok(())
    }

    async fn receive(&self) -> io::Result<Delivery<Vmac>> {
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
