//! The router scenario's health check: Who-Is-Router-To-Network for the server's network,
//! answered by an I-Am-Router-To-Network that names it.

use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::Duration;

use buildwire_bacnet::Reader;
use buildwire_bacnet::driver::{BipConfig, BipTransport, Transport};
use buildwire_bacnet::network::{NetworkMessage, Npdu};

/// Address the checker binds on network 1: another loopback address on the router's port,
/// so that the router's broadcast answer reaches it.
const CHECKER_IP: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);

/// Asks the router at `router` who routes to `network` and waits for its answer.
pub async fn who_is_router(
    router: SocketAddrV4,
    network: u16,
    wait: Duration,
) -> Result<(), String> {
    let transport = BipTransport::bind(&BipConfig {
        bind: SocketAddrV4::new(CHECKER_IP, router.port()),
        broadcast: Some(Ipv4Addr::new(127, 255, 255, 255)),
    })
    .await
    .map_err(|e| {
        format!(
            "route check: cannot bind {CHECKER_IP}:{}: {e}",
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
