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

/// Asks the router at `router` who routes to `network` and waits for its answer.
pub async fn who_is_router(
    router: SocketAddrV4,
    network: u16,
    wait: Duration,
    from: CheckFrom,
) -> Result<(), String> {
    let transport = BipTransport::bind(&BipConfig {
        bind: SocketAddrV4::new(from.ip, router.port()),
        broadcast: Some(from.broadcast),
    })
    .await
    .map_err(|e| {
        format!(
            "route check: cannot bind {}:{}: {e}",
            from.ip,
            router.port()
        )
    })?;
    let ask = NetworkMessage::WhoIsRouterToNetwork(Some(network)).to_local_npdu();
    transport
        .send_unicast(router, &ask)
        .await
        .map_err(|e| format!("route check: {e}"))?;
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let delivery = tokio::time::timeout_at(deadline, transport.receive())
            .await
            .map_err(|_| {
                format!("no I-Am-Router-To-Network for network {network} within {wait:?}")
            })?
            .map_err(|e| format!("route check: {e}"))?;
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
