//! Annex U BACnet/IPv6: the sans-IO link (virtual MAC addresses, address resolution and its
//! cache, multicast broadcasts, BBMD and foreign device), then on loopback a client and the
//! stress server both on B/IPv6 (loopback has no multicast here: VMACs are found with
//! Virtual-Address-Resolution). Multicast between hosts is in the `netns` tests.
#![allow(clippy::unwrap_used)]

mod log_capture;
mod support_network;

#[allow(dead_code)]
#[path = "../../bench/src/bacnet/profiles.rs"]
mod profiles;

use std::net::{Ipv6Addr, SocketAddrV6};
use std::time::{Duration, Instant};

use buildwire_bacnet::driver::{
    BacnetClient, BacnetServer, BacnetServerConfig, Bip6Config, Bip6Transport,
};
use buildwire_bacnet::link::bip6::bvll::{Bvlc6ResultCode, Bvll6, MULTICAST_LINK_LOCAL, Vmac};
use buildwire_bacnet::link::{Bbmd6Config, Bip6Link, Bip6Role, Foreign6Config};
use buildwire_bacnet::network::DeviceAddress;
use buildwire_bacnet::tsm::TsmConfig;
use profiles::stress_profile;

const A: Vmac = Vmac([0, 0, 1]);
const B: Vmac = Vmac([0, 0, 2]);
const WHO_IS: [u8; 4] = [0x01, 0x00, 0x10, 0x08];

fn at(last: u16) -> SocketAddrV6 {
    SocketAddrV6::new(Ipv6Addr::new(0xFD00, 0, 0, 0, 0, 0, 0, last), 47808, 0, 0)
}

fn group() -> SocketAddrV6 {
    SocketAddrV6::new(MULTICAST_LINK_LOCAL, 47808, 0, 0)
}

fn node(vmac: Vmac, address: SocketAddrV6, role: Bip6Role) -> Bip6Link {
    Bip6Link::new(Instant::now(), vmac, address, Some(group()), role)
}

fn drain(link: &mut Bip6Link) -> Vec<(SocketAddrV6, Vec<u8>)> {
    std::iter::from_fn(|| link.poll_transmit()).collect()
}

fn decoded(datagrams: &[(SocketAddrV6, Vec<u8>)]) -> Vec<(SocketAddrV6, Bvll6<'_>)> {
    datagrams
        .iter()
        .map(|(to, bytes)| (*to, Bvll6::decode_datagram(bytes).unwrap()))
        .collect()
}

#[test]
fn unicast_to_an_unknown_vmac_waits_for_address_resolution() {
    let now = Instant::now();
    let mut a = node(A, at(1), Bip6Role::Node);
    let mut b = node(B, at(2), Bip6Role::Node);
    a.send_unicast(now, B, &WHO_IS);
    let out = drain(&mut a);
    assert_eq!(
        decoded(&out),
        [(
            group(),
            Bvll6::AddressResolution {
                source: A,
                target: B
            }
        )]
    );
    // B answers to A's address; A learns B and sends what waited.
    assert!(b.handle_datagram(now, at(1), &out[0].1).is_none());
    let answer = drain(&mut b);
    assert_eq!(
        decoded(&answer),
        [(
            at(1),
            Bvll6::AddressResolutionAck {
                source: B,
                destination: A
            }
        )]
    );
    assert!(a.handle_datagram(now, at(2), &answer[0].1).is_none());
    let sent = drain(&mut a);
    assert_eq!(
        decoded(&sent),
        [(
            at(2),
            Bvll6::OriginalUnicastNpdu {
                source: A,
                destination: B,
                npdu: &WHO_IS
            }
        )]
    );
    let delivery = b.handle_datagram(now, at(1), &sent[0].1).unwrap();
    assert_eq!((delivery.source, delivery.broadcast), (A, false));
    assert_eq!(b.resolved(A), Some(at(1)));
    // Cached now: no more resolution.
    a.send_unicast(now, B, &WHO_IS);
    assert_eq!(drain(&mut a).len(), 1);
}

#[test]
fn resolution_gives_up_after_three_tries() {
    let t0 = Instant::now();
    let mut a = Bip6Link::new(t0, A, at(1), Some(group()), Bip6Role::Node);
    a.send_unicast(t0, B, &WHO_IS);
    let mut asked = drain(&mut a).len();
    while let Some(next) = a.poll_timeout() {
        a.handle_timeout(next);
        asked += drain(&mut a).len();
        assert!(next - t0 < Duration::from_secs(10));
    }
    assert_eq!(asked, 3);
    assert_eq!(a.stats().unresolved, 1);
}

#[test]
fn echoes_strangers_and_virtual_address_resolution() {
    let now = Instant::now();
    let mut a = node(A, at(1), Bip6Role::Node);
    // Its own multicast comes back: dropped.
    let own = Bvll6::OriginalBroadcastNpdu {
        source: A,
        npdu: &WHO_IS,
    }
    .to_vec();
    assert!(a.handle_datagram(now, at(1), &own).is_none());
    assert_eq!(a.stats().own_vmac, 1);
    // A unicast for another VMAC is not ours.
    let other = Bvll6::OriginalUnicastNpdu {
        source: B,
        destination: Vmac([9, 9, 9]),
        npdu: &WHO_IS,
    }
    .to_vec();
    assert!(a.handle_datagram(now, at(2), &other).is_none());
    assert_eq!(a.stats().not_for_us, 1);
    // Virtual-Address-Resolution is answered with our VMAC.
    let ask = Bvll6::VirtualAddressResolution { source: B }.to_vec();
    a.handle_datagram(now, at(2), &ask);
    assert_eq!(
        decoded(&drain(&mut a)),
        [(
            at(2),
            Bvll6::VirtualAddressResolutionAck {
                source: A,
                destination: B
            }
        )]
    );
    assert_eq!(a.vmac_at(at(2)), Some(B));
    // Broadcasts go to the group.
    assert!(a.send_broadcast(now, &WHO_IS));
    assert_eq!(
        decoded(&drain(&mut a)),
        [(
            group(),
            Bvll6::OriginalBroadcastNpdu {
                source: A,
                npdu: &WHO_IS
            }
        )]
    );
    // A plain node refuses registrations.
    let register = Bvll6::RegisterForeignDevice {
        source: B,
        time_to_live: 60,
    }
    .to_vec();
    a.handle_datagram(now, at(2), &register);
    assert_eq!(
        decoded(&drain(&mut a)),
        [(
            at(2),
            Bvll6::Result {
                source: A,
                code: Bvlc6ResultCode::RegisterForeignDeviceNak
            }
        )]
    );
}

#[test]
fn bbmd6_foreign_devices_peers_and_grace() {
    let t0 = Instant::now();
    let peer = at(100);
    let mut bbmd = Bip6Link::new(
        t0,
        A,
        at(1),
        Some(group()),
        Bip6Role::Bbmd(Bbmd6Config {
            bdt: vec![peer],
            ..Bbmd6Config::default()
        }),
    );
    let fd = at(50);
    let fd_vmac = Vmac([0, 0, 0x50]);
    let register = Bvll6::RegisterForeignDevice {
        source: fd_vmac,
        time_to_live: 10,
    }
    .to_vec();
    bbmd.handle_datagram(t0, fd, &register);
    assert_eq!(
        decoded(&drain(&mut bbmd)),
        [(
            fd,
            Bvll6::Result {
                source: A,
                code: Bvlc6ResultCode::SuccessfulCompletion
            }
        )]
    );
    assert_eq!(bbmd.fdt(t0)[0].remaining, 40);
    // The foreign device's broadcast: to the group, the peer, and back to nobody else.
    let distribute = Bvll6::DistributeBroadcastToNetwork {
        source: fd_vmac,
        npdu: &WHO_IS,
    }
    .to_vec();
    let delivery = bbmd.handle_datagram(t0, fd, &distribute).unwrap();
    assert_eq!(delivery.source, fd_vmac);
    let forwarded = Bvll6::ForwardedNpdu {
        source: fd_vmac,
        original: fd,
        npdu: &WHO_IS,
    };
    assert_eq!(
        decoded(&drain(&mut bbmd)),
        [(group(), forwarded), (peer, forwarded)]
    );
    // A local broadcast goes to the peer and the foreign device.
    let local = Bvll6::OriginalBroadcastNpdu {
        source: B,
        npdu: &WHO_IS,
    }
    .to_vec();
    bbmd.handle_datagram(t0, at(2), &local).unwrap();
    let forwarded = Bvll6::ForwardedNpdu {
        source: B,
        original: at(2),
        npdu: &WHO_IS,
    };
    assert_eq!(
        decoded(&drain(&mut bbmd)),
        [(peer, forwarded), (fd, forwarded)]
    );
    // What the peer forwards goes to the group and the foreign device, never back.
    let from_peer = Bvll6::ForwardedNpdu {
        source: Vmac([7, 7, 7]),
        original: at(77),
        npdu: &WHO_IS,
    };
    bbmd.handle_datagram(t0, peer, &from_peer.to_vec()).unwrap();
    assert_eq!(
        decoded(&drain(&mut bbmd)),
        [(group(), from_peer), (fd, from_peer)]
    );
    // TTL 10 + 30 s grace.
    bbmd.handle_timeout(t0 + Duration::from_secs(40));
    assert!(bbmd.fdt(t0 + Duration::from_secs(40)).is_empty());
    // Unregistered: NAK.
    bbmd.handle_datagram(t0 + Duration::from_secs(41), fd, &distribute);
    assert_eq!(
        decoded(&drain(&mut bbmd)),
        [(
            fd,
            Bvll6::Result {
                source: A,
                code: Bvlc6ResultCode::DistributeBroadcastToNetworkNak
            }
        )]
    );
}

#[test]
fn foreign6_registers_and_distributes() {
    let t0 = Instant::now();
    let bbmd = at(1);
    let mut fd = Bip6Link::new(
        t0,
        B,
        at(2),
        None,
        Bip6Role::Foreign(Foreign6Config {
            bbmd,
            time_to_live: 120,
        }),
    );
    fd.handle_timeout(t0);
    assert_eq!(
        decoded(&drain(&mut fd)),
        [(
            bbmd,
            Bvll6::RegisterForeignDevice {
                source: B,
                time_to_live: 120
            }
        )]
    );
    let ok = Bvll6::Result {
        source: A,
        code: Bvlc6ResultCode::SuccessfulCompletion,
    }
    .to_vec();
    fd.handle_datagram(t0, bbmd, &ok);
    assert!(fd.registration().unwrap().is_registered());
    assert_eq!(fd.poll_timeout(), Some(t0 + Duration::from_secs(60)));
    assert!(fd.send_broadcast(t0, &WHO_IS));
    assert_eq!(
        decoded(&drain(&mut fd)),
        [(
            bbmd,
            Bvll6::DistributeBroadcastToNetwork {
                source: B,
                npdu: &WHO_IS
            }
        )]
    );
    // Address resolution of a foreign device asks its BBMD.
    fd.send_unicast(t0, Vmac([3, 3, 3]), &WHO_IS);
    assert_eq!(
        decoded(&drain(&mut fd)),
        [(
            bbmd,
            Bvll6::AddressResolution {
                source: B,
                target: Vmac([3, 3, 3])
            }
        )]
    );
}

#[test]
fn garbage_is_counted_never_answered_blindly() {
    let now = Instant::now();
    let mut a = node(A, at(1), Bip6Role::Bbmd(Bbmd6Config::default()));
    let mut state = 0xDEAD_BEEF_u32;
    let mut answered = 0;
    for _ in 0..20_000 {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let len = (state % 40) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|i| (state >> (i % 4 * 8)) as u8).collect();
        if bytes.len() >= 4 {
            bytes[0] = 0x82;
            bytes[1] %= 0x0D;
            let total = bytes.len() as u16;
            bytes[2..4].copy_from_slice(&total.to_be_bytes());
        }
        let _ = a.handle_datagram(now, at((state % 7) as u16 + 2), &bytes);
        answered += drain(&mut a).len();
    }
    // At most one datagram per input (an answer or a forward to no peers).
    assert!(answered <= 20_000);
    assert!(a.stats().malformed > 0);
}

// ---- tokio, loopback ---------------------------------------------------------------------

/// A B/IPv6 transport on a free port of ::1 with `vmac`, without multicast (loopback has
/// none here).
async fn loopback_transport(vmac: Vmac) -> Bip6Transport {
    Bip6Transport::bind(&Bip6Config {
        multicast: None,
        ..Bip6Config::new(SocketAddrV6::new(Ipv6Addr::LOCALHOST, 0, 0, 0), vmac)
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_reads_and_writes_every_stress_object_over_ipv6() {
    let server_vmac = Vmac::from_device_instance(400);
    let server_transport = loopback_transport(server_vmac).await;
    let server_address = server_transport.local_addr();
    let mut config = BacnetServerConfig::new(
        "0.0.0.0:0".parse().unwrap(),
        stress_profile().build().unwrap(),
    );
    config.announce = false;
    let server = BacnetServer::start_on(server_transport, config)
        .await
        .unwrap();
    assert_eq!(server.local_addr(), server_vmac);
    let client_transport = loopback_transport(Vmac([0x0A, 0, 1])).await;
    // Where the server is known by its IPv6 address only: ask its VMAC.
    let vmac = client_transport
        .vmac_of(server_address, Duration::from_secs(2))
        .await
        .unwrap();
    assert_eq!(vmac, server_vmac);
    let client = BacnetClient::start_on(client_transport, TsmConfig::default(), true).unwrap();
    let reference = support_network::Reference::Ipv6(server);
    support_network::check_every_stress_object(&client, DeviceAddress::Local(vmac), &reference)
        .await;
    // Who-Is without multicast goes nowhere: the client says so.
    assert!(
        client
            .who_is(None, Duration::from_millis(100))
            .await
            .is_err()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_datagrams_from_a_peer_are_logged_with_the_link_and_the_peer() {
    log_capture::capture_logs();
    let transport = loopback_transport(Vmac([0x0A, 0, 7])).await;
    let address = transport.local_addr();
    let receiving = tokio::spawn(async move {
        // Nothing here carries an NPDU: the receive loop only drops and logs.
        let _ = buildwire_bacnet::driver::Transport::receive(&transport).await;
    });
    let peer = std::net::UdpSocket::bind("[::1]:0").unwrap();
    // BVLC type 0x42 is no Annex U BVLL (0x82).
    peer.send_to(&[0x42, 0x0b, 0x00, 0x04], address).unwrap();
    let port = format!("]:{}", peer.local_addr().unwrap().port());
    let start = Instant::now();
    let line = loop {
        let lines = log_capture::logged("malformed BVLL datagram from a peer: dropped");
        if let Some(line) = lines.into_iter().find(|l| l.contains(&port)) {
            break line;
        }
        assert!(start.elapsed() < Duration::from_secs(5), "no log line");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(line.starts_with("WARN "), "{line}");
    assert!(line.contains(" link=bip6"), "{line}");
    assert!(line.contains(" suppressed="), "{line}");
    receiving.abort();
}
