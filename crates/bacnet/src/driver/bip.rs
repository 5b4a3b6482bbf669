//! BACnet/IP (Annex J) over UDP on tokio: one socket for unicast and, when the unicast socket
//! is bound to a specific address, a second one bound to the subnet's broadcast address so that
//! broadcasts reach this application too (Linux delivers a datagram sent to the broadcast
//! address only to sockets bound to that address or to the wildcard).

use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};

use socket2::{Domain, Protocol, Socket, Type};
use tokio::net::UdpSocket;

use crate::encoding::DecodeError;
use crate::transport::Bvll;

/// Largest BACnet/IP datagram: 1,497 octets of BVLL + NPDU (Annex J.2) plus headroom for
/// non-conforming peers; anything larger is truncated by the kernel and fails to decode.
pub const MAX_BIP_DATAGRAM: usize = 1600;

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
    /// Binds `bind` with the conventional broadcast address of its network (the /8 of
    /// loopback, otherwise a /24 guess that callers should override for other masks).
    pub fn with_default_broadcast(bind: SocketAddrV4) -> Self {
        let ip = bind.ip().octets();
        let broadcast = if bind.ip().is_unspecified() {
            Ipv4Addr::BROADCAST
        } else if bind.ip().is_loopback() {
            Ipv4Addr::new(127, 255, 255, 255)
        } else {
            Ipv4Addr::new(ip[0], ip[1], ip[2], 255)
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
    broadcast_to: Option<SocketAddrV4>,
    local: SocketAddrV4,
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
    /// Binds the sockets.
    pub async fn bind(config: &BipConfig) -> io::Result<Self> {
        let unicast = udp_socket(config.bind, false)?;
        let local = match unicast.local_addr()? {
            SocketAddr::V4(v4) => v4,
            SocketAddr::V6(v6) => {
                return Err(io::Error::other(format!("bound to IPv6 address {v6}")));
            }
        };
        let broadcast_to = config
            .broadcast
            .map(|ip| SocketAddrV4::new(ip, local.port()));
        // A socket bound to a specific unicast address does not see broadcasts: add one bound
        // to the broadcast address itself (shared with other applications on this host).
        let broadcast_rx = match broadcast_to {
            Some(b) if !config.bind.ip().is_unspecified() => Some(udp_socket(b, true)?),
            _ => None,
        };
        Ok(Self {
            unicast,
            broadcast_rx,
            broadcast_to,
            local,
        })
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

    /// Sends an NPDU as Original-Broadcast-NPDU to the local broadcast address.
    pub async fn send_broadcast(&self, npdu: &[u8]) -> io::Result<()> {
        let to = self.broadcast_to.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "this transport has no broadcast address: bind with one to send broadcasts",
            )
        })?;
        let mut buf = Vec::with_capacity(npdu.len() + 4);
        Bvll::OriginalBroadcastNpdu(npdu).encode(&mut buf);
        self.unicast.send_to(&buf, to).await.map(|_| ())
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
            let socket = match &self.broadcast_rx {
                Some(b) => tokio::select! {
                    r = self.unicast.readable() => r.map(|()| &self.unicast),
                    r = b.readable() => r.map(|()| b),
                },
                None => self.unicast.readable().await.map(|()| &self.unicast),
            }
            .map_err(Err)?;
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
