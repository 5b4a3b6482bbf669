//! The router scenario's health check: Who-Is-Router-To-Network for the server's network,
//! answered by an I-Am-Router-To-Network that names it.

use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::Duration;

use buildwire_bacnet::Reader;
use buildwire_bacnet::driver::{BipConfig, BipTransport, Transport};
use buildwire_bacnet::network::{NetworkMessage, Npdu};

/// Where the checker listens on network 1: an address of its own on the router's port and
/// the subnet's broadcast address, so that the router's broadcast answer reaches it.
#[derive(Clone, Copy, Debug)]
pub struct CheckFrom {
    /// The checker's address (on loopback 127.0.0.2; under `--netns` a second address of
    /// the clients' link).
    pub ip: Ipv4Addr,
    /// Network 1's broadcast address.
    pub broadcast: Ipv4Addr,
}

impl Default for CheckFrom {
    fn default() -> Self {
        CheckFrom {
            ip: Ipv4Addr::new(127, 0, 0, 2),
            broadcast: Ipv4Addr::new(127, 255, 255, 255),
        }
    }
}

/// Why the router health check failed.
#[derive(Debug, thiserror::Error)]
pub enum RouteCheckError {
    /// The checking socket could not be bound.
    #[error("route check: cannot bind {ip}:{port}: {source}")]
    Bind {
        /// The address it was to bind.
        ip: Ipv4Addr,
        /// The port.
        port: u16,
        /// Why not.
        source: std::io::Error,
    },
    /// Sending or receiving failed.
    #[error("route check: {0}")]
    Io(std::io::Error),
    /// The router did not answer in time.
    #[error("no I-Am-Router-To-Network for network {network} within {wait:?}")]
    NoAnswer {
        /// The network asked about.
        network: u16,
        /// How long the check waited.
        wait: Duration,
    },
}

/// Asks the router at `router` who routes to `network` and waits for its answer.
pub async fn who_is_router(
    router: SocketAddrV4,
    network: u16,
    wait: Duration,
    from: CheckFrom,
) -> Result<(), RouteCheckError> {
    let transport = BipTransport::bind(&BipConfig {
        bind: SocketAddrV4::new(from.ip, router.port()),
        broadcast: Some(from.broadcast),
    })
    .await
    .map_err(|source| RouteCheckError::Bind {
        ip: from.ip,
        port: router.port(),
        source,
    })?;
    let ask = NetworkMessage::WhoIsRouterToNetwork(Some(network)).to_local_npdu();
    transport
        .send_unicast(router, &ask)
        .await
        .map_err(RouteCheckError::Io)?;
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let delivery = tokio::time::timeout_at(deadline, transport.receive())
            .await
            .map_err(|_| RouteCheckError::NoAnswer { network, wait })?
            .map_err(RouteCheckError::Io)?;
        let Ok(npdu) = Npdu::decode(&mut Reader::new(&delivery.npdu)) else {
            continue;
        };
        if let Some(Ok(NetworkMessage::IAmRouterToNetwork(networks))) =
            NetworkMessage::from_body(&npdu.body)
            && networks.contains(&network)
        {
            return Ok(());
        }
    }
}
