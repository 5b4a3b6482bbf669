//! Raw B/IP datagrams for tests that talk to a server on 127.0.0.1 byte by byte.

use std::net::SocketAddrV4;
use std::time::Duration;

use buildwire_bacnet::Reader;
use buildwire_bacnet::link::Bvll;
use buildwire_bacnet::network::Npdu;
use buildwire_bacnet::network::npdu::NpduBody;
use tokio::net::UdpSocket;

/// Wraps an APDU in an NPDU and an Original-Unicast-NPDU.
pub fn datagram(apdu: &[u8], expecting_reply: bool) -> Vec<u8> {
    let mut npdu = Vec::new();
    Npdu::local_apdu(apdu, expecting_reply).encode(&mut npdu);
    let mut datagram = Vec::new();
    Bvll::OriginalUnicastNpdu(&npdu).encode(&mut datagram);
    datagram
}

/// Sends one APDU to `to`.
pub async fn send(
    socket: &UdpSocket,
    to: SocketAddrV4,
    apdu: impl AsRef<[u8]>,
    expecting_reply: bool,
) {
    socket
        .send_to(&datagram(apdu.as_ref(), expecting_reply), to)
        .await
        .expect("send on 127.0.0.1");
}

/// The next APDU within `wait`, or `None` when nothing (or no APDU) arrives.
pub async fn receive(socket: &UdpSocket, wait: Duration) -> Option<Vec<u8>> {
    let mut buf = [0u8; 2048];
    let (n, _) = tokio::time::timeout(wait, socket.recv_from(&mut buf))
        .await
        .ok()?
        .ok()?;
    let bvll = Bvll::decode_datagram(&buf[..n]).ok()?;
    let npdu = Npdu::decode(&mut Reader::new(bvll.npdu()?)).ok()?;
    match npdu.body {
        NpduBody::Apdu(apdu) => Some(apdu.to_vec()),
        _ => None,
    }
}
