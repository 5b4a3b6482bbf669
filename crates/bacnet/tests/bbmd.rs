//! Annex J broadcast management: the sans-IO B/IP link as BBMD, node and foreign device
//! (tables, forwarding rules, TTL and grace, NAKs, no loops or amplification), then on
//! loopback: Who-Is through two BBMDs finds the device on the other "subnet" (distinct
//! ports), a foreign device from a third one registers and finds it too, Read-BDT,
//! Read-FDT, Write-BDT and Delete-FDT-Entry against the running BBMD, and a registration
//! expiring after its TTL plus the 30 s grace (on a clock the test moves forward).
#![allow(clippy::unwrap_used)]

mod support_network;

#[allow(dead_code)]
#[path = "../../bench/src/bacnet/profiles.rs"]
mod profiles;

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::{Duration, Instant};

use buildwire_bacnet::driver::bip::bbmd::{delete_fdt_entry, read_bdt, read_fdt, write_bdt};
use buildwire_bacnet::driver::{
    BacnetBbmd, BacnetClient, BacnetServer, BacnetServerConfig, BipConfig, ClientConfig, LinkClock,
};
use buildwire_bacnet::link::{BbmdConfig, BipLink, BipRole, ForeignConfig, RegistrationState};
use buildwire_bacnet::link::{BdtEntry, BvlcResultCode, Bvll, FdtEntry};
use profiles::stress_profile;

fn addr(a: u8, b: u8, c: u8, d: u8) -> SocketAddrV4 {
    SocketAddrV4::new(Ipv4Addr::new(a, b, c, d), 47808)
}

const WHO_IS: [u8; 4] = [0x01, 0x00, 0x10, 0x08];

fn bvll(message: &Bvll<'_>) -> Vec<u8> {
    let mut buf = Vec::new();
    message.encode(&mut buf);
    buf
}

fn drain(link: &mut BipLink) -> Vec<(SocketAddrV4, Vec<u8>)> {
    std::iter::from_fn(|| link.poll_transmit()).collect()
}

fn decoded(datagrams: &[(SocketAddrV4, Vec<u8>)]) -> Vec<(SocketAddrV4, Bvll<'_>)> {
    datagrams
        .iter()
        .map(|(to, bytes)| (*to, Bvll::decode_datagram(bytes).unwrap()))
        .collect()
}

fn bdt(entries: &[(SocketAddrV4, [u8; 4])]) -> Vec<BdtEntry> {
    entries
        .iter()
        .map(|(address, mask)| BdtEntry {
            address: *address,
            mask: Ipv4Addr::from(*mask),
        })
        .collect()
}

/// BBMD A (10.0.1.1) with peers B (10.0.2.1, two-hop) and C (10.0.3.1, one-hop /24).
fn bbmd_a(now: Instant) -> BipLink {
    let config = BbmdConfig {
        bdt: bdt(&[
            (addr(10, 0, 1, 1), [255; 4]),
            (addr(10, 0, 2, 1), [255; 4]),
            (addr(10, 0, 3, 1), [255, 255, 255, 0]),
        ]),
        ..BbmdConfig::default()
    };
    BipLink::new(
        now,
        addr(10, 0, 1, 1),
        Some(addr(10, 0, 1, 255)),
        BipRole::Bbmd(config),
    )
}

#[test]
fn local_broadcast_goes_to_peers_with_masks_and_to_foreign_devices() {
    let now = Instant::now();
    let mut a = bbmd_a(now);
    let fd = addr(192, 168, 9, 9);
    a.handle_datagram(
        now,
        fd,
        &bvll(&Bvll::RegisterForeignDevice { time_to_live: 60 }),
    );
    assert_eq!(
        decoded(&drain(&mut a)),
        [(fd, Bvll::Result(BvlcResultCode::SuccessfulCompletion))]
    );
    let device = addr(10, 0, 1, 50);
    let delivery = a
        .handle_datagram(now, device, &bvll(&Bvll::OriginalBroadcastNpdu(&WHO_IS)))
        .unwrap();
    assert_eq!((delivery.source, delivery.broadcast), (device, true));
    let out = drain(&mut a);
    let forwarded = Bvll::ForwardedNpdu {
        source: device,
        npdu: &WHO_IS,
    };
    // B (mask /32): unicast to it; C (/24): its subnet's directed broadcast; and the FD.
    assert_eq!(
        decoded(&out),
        [
            (addr(10, 0, 2, 1), forwarded.clone()),
            (addr(10, 0, 3, 255), forwarded.clone()),
            (fd, forwarded),
        ]
    );
}

#[test]
fn forwarded_from_a_peer_reaches_the_subnet_and_foreign_devices_never_peers() {
    let now = Instant::now();
    let mut a = bbmd_a(now);
    let fd = addr(192, 168, 9, 9);
    a.handle_datagram(
        now,
        fd,
        &bvll(&Bvll::RegisterForeignDevice { time_to_live: 60 }),
    );
    drain(&mut a);
    let origin = addr(10, 0, 2, 77);
    let forwarded = Bvll::ForwardedNpdu {
        source: origin,
        npdu: &WHO_IS,
    };
    let delivery = a
        .handle_datagram(now, addr(10, 0, 2, 1), &bvll(&forwarded))
        .unwrap();
    assert_eq!(delivery.source, origin, "the original source, not the BBMD");
    assert_eq!(
        decoded(&drain(&mut a)),
        [
            (addr(10, 0, 1, 255), forwarded.clone()),
            (fd, forwarded.clone())
        ]
    );
    // The same from a stranger: delivered, forwarded nowhere.
    assert!(
        a.handle_datagram(now, addr(10, 9, 9, 9), &bvll(&forwarded))
            .is_some()
    );
    assert!(drain(&mut a).is_empty());
    // Our own broadcast coming back is dropped.
    let own = Bvll::ForwardedNpdu {
        source: addr(10, 0, 1, 1),
        npdu: &WHO_IS,
    };
    assert!(
        a.handle_datagram(now, addr(10, 0, 2, 1), &bvll(&own))
            .is_none()
    );
    assert!(
        a.handle_datagram(
            now,
            addr(10, 0, 1, 1),
            &bvll(&Bvll::OriginalBroadcastNpdu(&WHO_IS))
        )
        .is_none()
    );
    assert!(drain(&mut a).is_empty());
    assert_eq!(a.stats().own_echoes, 2);
}

#[test]
fn one_hop_peers_are_not_rebroadcast_locally() {
    let now = Instant::now();
    // Our own entry has a /24 mask: peers already sent to our subnet's broadcast address.
    let config = BbmdConfig {
        bdt: bdt(&[
            (addr(10, 0, 1, 1), [255, 255, 255, 0]),
            (addr(10, 0, 2, 1), [255, 255, 255, 0]),
        ]),
        ..BbmdConfig::default()
    };
    let mut a = BipLink::new(
        now,
        addr(10, 0, 1, 1),
        Some(addr(10, 0, 1, 255)),
        BipRole::Bbmd(config),
    );
    let forwarded = Bvll::ForwardedNpdu {
        source: addr(10, 0, 2, 5),
        npdu: &WHO_IS,
    };
    assert!(
        a.handle_datagram(now, addr(10, 0, 2, 1), &bvll(&forwarded))
            .is_some()
    );
    assert!(drain(&mut a).is_empty());
}

#[test]
fn foreign_device_table_ttl_grace_expiry_read_and_delete() {
    let t0 = Instant::now();
    let mut a = bbmd_a(t0);
    let fd1 = addr(192, 168, 9, 1);
    let fd2 = addr(192, 168, 9, 2);
    a.handle_datagram(
        t0,
        fd1,
        &bvll(&Bvll::RegisterForeignDevice { time_to_live: 20 }),
    );
    a.handle_datagram(
        t0,
        fd2,
        &bvll(&Bvll::RegisterForeignDevice { time_to_live: 300 }),
    );
    drain(&mut a);
    let reader = addr(10, 0, 1, 99);
    a.handle_datagram(t0, reader, &bvll(&Bvll::ReadFdt));
    let out = drain(&mut a);
    assert_eq!(
        decoded(&out),
        [(
            reader,
            Bvll::ReadFdtAck(vec![
                FdtEntry {
                    address: fd1,
                    time_to_live: 20,
                    remaining: 50
                },
                FdtEntry {
                    address: fd2,
                    time_to_live: 300,
                    remaining: 330
                },
            ])
        )]
    );
    // TTL + 30 s grace: still there at 49 s, gone at 50 s.
    assert_eq!(a.fdt(t0 + Duration::from_secs(49)).len(), 2);
    assert_eq!(a.poll_timeout(), Some(t0 + Duration::from_secs(50)));
    a.handle_timeout(t0 + Duration::from_secs(50));
    let left = a.fdt(t0 + Duration::from_secs(50));
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].address, fd2);
    // An expired device may no longer distribute broadcasts.
    a.handle_datagram(
        t0 + Duration::from_secs(51),
        fd1,
        &bvll(&Bvll::DistributeBroadcastToNetwork(&WHO_IS)),
    );
    assert_eq!(
        decoded(&drain(&mut a)),
        [(
            fd1,
            Bvll::Result(BvlcResultCode::DistributeBroadcastToNetworkNak)
        )]
    );
    // Delete-FDT-Entry: success, then NAK for the now unknown entry.
    let t1 = t0 + Duration::from_secs(60);
    a.handle_datagram(t1, reader, &bvll(&Bvll::DeleteFdtEntry(fd2)));
    a.handle_datagram(t1, reader, &bvll(&Bvll::DeleteFdtEntry(fd2)));
    assert_eq!(
        decoded(&drain(&mut a)),
        [
            (reader, Bvll::Result(BvlcResultCode::SuccessfulCompletion)),
            (reader, Bvll::Result(BvlcResultCode::DeleteFdtEntryNak)),
        ]
    );
}

#[test]
fn distribute_broadcast_from_a_foreign_device() {
    let now = Instant::now();
    let mut a = bbmd_a(now);
    let fd1 = addr(192, 168, 9, 1);
    let fd2 = addr(192, 168, 9, 2);
    for fd in [fd1, fd2] {
        a.handle_datagram(
            now,
            fd,
            &bvll(&Bvll::RegisterForeignDevice { time_to_live: 60 }),
        );
    }
    drain(&mut a);
    let delivery = a
        .handle_datagram(
            now,
            fd1,
            &bvll(&Bvll::DistributeBroadcastToNetwork(&WHO_IS)),
        )
        .unwrap();
    assert_eq!((delivery.source, delivery.broadcast), (fd1, true));
    let forwarded = Bvll::ForwardedNpdu {
        source: fd1,
        npdu: &WHO_IS,
    };
    // Local subnet, both peers, the other foreign device; never back to the sender.
    assert_eq!(
        decoded(&drain(&mut a)),
        [
            (addr(10, 0, 1, 255), forwarded.clone()),
            (addr(10, 0, 2, 1), forwarded.clone()),
            (addr(10, 0, 3, 255), forwarded.clone()),
            (fd2, forwarded),
        ]
    );
}

#[test]
fn registrations_from_broadcast_addresses_are_refused_silently() {
    let now = Instant::now();
    let mut a = bbmd_a(now);
    for from in [
        SocketAddrV4::new(Ipv4Addr::BROADCAST, 47808),
        addr(10, 0, 1, 255),
        SocketAddrV4::new(Ipv4Addr::new(224, 0, 0, 1), 47808),
        SocketAddrV4::new(Ipv4Addr::new(10, 0, 1, 9), 0),
    ] {
        a.handle_datagram(
            now,
            from,
            &bvll(&Bvll::RegisterForeignDevice { time_to_live: 60 }),
        );
        a.handle_datagram(now, from, &bvll(&Bvll::ReadFdt));
    }
    assert!(
        drain(&mut a).is_empty(),
        "nothing is ever sent to such an address"
    );
    assert!(a.fdt(now).is_empty());
}

#[test]
fn full_table_naks_and_write_bdt_only_when_allowed() {
    let now = Instant::now();
    let mut config = BbmdConfig {
        max_foreign_devices: 1,
        ..BbmdConfig::default()
    };
    let mut a = BipLink::new(
        now,
        addr(10, 0, 1, 1),
        Some(addr(10, 0, 1, 255)),
        BipRole::Bbmd(config.clone()),
    );
    a.handle_datagram(
        now,
        addr(1, 1, 1, 1),
        &bvll(&Bvll::RegisterForeignDevice { time_to_live: 60 }),
    );
    a.handle_datagram(
        now,
        addr(1, 1, 1, 2),
        &bvll(&Bvll::RegisterForeignDevice { time_to_live: 60 }),
    );
    let table = bdt(&[(addr(10, 0, 1, 1), [255; 4])]);
    a.handle_datagram(now, addr(1, 1, 1, 3), &bvll(&Bvll::WriteBdt(table.clone())));
    a.handle_datagram(now, addr(1, 1, 1, 3), &bvll(&Bvll::ReadBdt));
    assert_eq!(
        decoded(&drain(&mut a)),
        [
            (
                addr(1, 1, 1, 1),
                Bvll::Result(BvlcResultCode::SuccessfulCompletion)
            ),
            (
                addr(1, 1, 1, 2),
                Bvll::Result(BvlcResultCode::RegisterForeignDeviceNak)
            ),
            (addr(1, 1, 1, 3), Bvll::Result(BvlcResultCode::WriteBdtNak)),
            (addr(1, 1, 1, 3), Bvll::ReadBdtAck(vec![])),
        ]
    );
    config.allow_write_bdt = true;
    let mut a = BipLink::new(
        now,
        addr(10, 0, 1, 1),
        Some(addr(10, 0, 1, 255)),
        BipRole::Bbmd(config),
    );
    a.handle_datagram(now, addr(1, 1, 1, 3), &bvll(&Bvll::WriteBdt(table.clone())));
    assert_eq!(
        decoded(&drain(&mut a)),
        [(
            addr(1, 1, 1, 3),
            Bvll::Result(BvlcResultCode::SuccessfulCompletion)
        )]
    );
    assert_eq!(a.bdt(), table);
}

#[test]
fn a_plain_node_naks_bbmd_requests() {
    let now = Instant::now();
    let mut node = BipLink::new(
        now,
        addr(10, 0, 1, 5),
        Some(addr(10, 0, 1, 255)),
        BipRole::Node,
    );
    let asker = addr(10, 0, 1, 6);
    for request in [
        Bvll::RegisterForeignDevice { time_to_live: 60 },
        Bvll::ReadBdt,
        Bvll::ReadFdt,
        Bvll::WriteBdt(vec![]),
        Bvll::DeleteFdtEntry(asker),
        Bvll::DistributeBroadcastToNetwork(&WHO_IS),
    ] {
        assert!(node.handle_datagram(now, asker, &bvll(&request)).is_none());
    }
    let out = drain(&mut node);
    let codes: Vec<_> = decoded(&out)
        .into_iter()
        .map(|(_, message)| message)
        .collect();
    assert_eq!(
        codes,
        [
            Bvll::Result(BvlcResultCode::RegisterForeignDeviceNak),
            Bvll::Result(BvlcResultCode::ReadBdtNak),
            Bvll::Result(BvlcResultCode::ReadFdtNak),
            Bvll::Result(BvlcResultCode::WriteBdtNak),
            Bvll::Result(BvlcResultCode::DeleteFdtEntryNak),
            Bvll::Result(BvlcResultCode::DistributeBroadcastToNetworkNak),
        ]
    );
    // A node's broadcast is one Original-Broadcast-NPDU, nothing more.
    assert!(node.send_broadcast(now, &WHO_IS));
    assert_eq!(
        decoded(&drain(&mut node)),
        [(addr(10, 0, 1, 255), Bvll::OriginalBroadcastNpdu(&WHO_IS))]
    );
}

#[test]
fn foreign_device_registers_renews_and_broadcasts_through_the_bbmd() {
    let t0 = Instant::now();
    let bbmd = addr(10, 0, 1, 1);
    let mut fd = BipLink::new(
        t0,
        addr(192, 168, 9, 1),
        None,
        BipRole::Foreign(ForeignConfig {
            bbmd,
            time_to_live: 60,
        }),
    );
    assert!(fd.can_broadcast());
    fd.handle_timeout(t0);
    assert_eq!(
        decoded(&drain(&mut fd)),
        [(bbmd, Bvll::RegisterForeignDevice { time_to_live: 60 })]
    );
    // A result from someone else is not the BBMD's.
    fd.handle_datagram(
        t0,
        addr(6, 6, 6, 6),
        &bvll(&Bvll::Result(BvlcResultCode::SuccessfulCompletion)),
    );
    assert_eq!(
        fd.registration().unwrap().state(),
        RegistrationState::Registering
    );
    fd.handle_datagram(
        t0,
        bbmd,
        &bvll(&Bvll::Result(BvlcResultCode::SuccessfulCompletion)),
    );
    assert!(fd.registration().unwrap().is_registered());
    // Renewal at half the TTL, well before it runs out.
    assert_eq!(fd.poll_timeout(), Some(t0 + Duration::from_secs(30)));
    fd.handle_timeout(t0 + Duration::from_secs(30));
    assert_eq!(drain(&mut fd).len(), 1);
    assert!(fd.send_broadcast(t0, &WHO_IS));
    assert_eq!(
        decoded(&drain(&mut fd)),
        [(bbmd, Bvll::DistributeBroadcastToNetwork(&WHO_IS))]
    );
}

#[test]
fn a_flood_is_bounded_by_the_rate_limit() {
    let now = Instant::now();
    let config = BbmdConfig {
        bdt: bdt(&[(addr(10, 0, 1, 1), [255; 4]), (addr(10, 0, 2, 1), [255; 4])]),
        rate: 100,
        burst: 50,
        ..BbmdConfig::default()
    };
    let mut a = BipLink::new(
        now,
        addr(10, 0, 1, 1),
        Some(addr(10, 0, 1, 255)),
        BipRole::Bbmd(config),
    );
    for _ in 0..10_000 {
        a.handle_datagram(
            now,
            addr(10, 0, 1, 9),
            &bvll(&Bvll::OriginalBroadcastNpdu(&WHO_IS)),
        );
        a.handle_datagram(now, addr(7, 7, 7, 7), &bvll(&Bvll::ReadBdt));
    }
    assert_eq!(drain(&mut a).len(), 50);
    assert!(a.stats().rate_limited >= 19_950);
}

/// Three BBMDs that all list each other, wired through an in-memory network: one
/// broadcast reaches each subnet exactly once and the traffic stops.
#[test]
fn a_full_mesh_of_bbmds_delivers_once_and_goes_quiet() {
    let now = Instant::now();
    let members = [addr(10, 0, 1, 1), addr(10, 0, 2, 1), addr(10, 0, 3, 1)];
    let table = bdt(&members.map(|m| (m, [255; 4])));
    let mut links: HashMap<SocketAddrV4, BipLink> = members
        .iter()
        .map(|m| {
            let broadcast = SocketAddrV4::new(Ipv4Addr::from(u32::from(*m.ip()) | 0xFF), 47808);
            let config = BbmdConfig {
                bdt: table.clone(),
                ..BbmdConfig::default()
            };
            (
                *m,
                BipLink::new(now, *m, Some(broadcast), BipRole::Bbmd(config)),
            )
        })
        .collect();
    let origin = addr(10, 0, 1, 50);
    let mut queue = vec![(
        origin,
        members[0],
        bvll(&Bvll::OriginalBroadcastNpdu(&WHO_IS)),
    )];
    let mut delivered: HashMap<SocketAddrV4, usize> = HashMap::new();
    let mut datagrams = 0;
    while let Some((from, to, datagram)) = queue.pop() {
        datagrams += 1;
        assert!(datagrams < 100, "a forwarding loop");
        // A subnet broadcast reaches that subnet's BBMD too.
        let target = if to.ip().octets()[3] == 255 {
            SocketAddrV4::new(Ipv4Addr::from(u32::from(*to.ip()) & !0xFF | 1), 47808)
        } else {
            to
        };
        let Some(link) = links.get_mut(&target) else {
            continue;
        };
        if link.handle_datagram(now, from, &datagram).is_some() {
            *delivered.entry(target).or_default() += 1;
        }
        for (next, bytes) in std::iter::from_fn(|| link.poll_transmit()) {
            queue.push((target, next, bytes));
        }
    }
    // Each subnet's BBMD (standing for its subnet) gets it exactly once: the rebroadcast
    // of what a peer forwarded comes back to its sender as its own echo, and is dropped.
    for member in members {
        assert_eq!(delivered.get(&member), Some(&1), "{member}");
    }
    // 1 original + 2 forwards from A + 2 subnet rebroadcasts by B and C.
    assert_eq!(datagrams, 5);
}

// ---- tokio BBMDs on loopback --------------------------------------------------------------

/// Subnet A: BBMD 127.0.0.1:PA and a client 127.0.0.2:PA; subnet B: BBMD 127.0.0.1:PB and the
/// stress server 127.0.0.3:PB. Each BBMD lists both (two-hop).
struct TwoSubnets {
    bbmd_a: BacnetBbmd,
    bbmd_b: BacnetBbmd,
    server: BacnetServer,
    pa: u16,
    pb: u16,
}

impl TwoSubnets {
    async fn start() -> Self {
        Self::start_with_clock(LinkClock::system()).await
    }

    /// BBMD A keeps its tables on `clock_a`.
    async fn start_with_clock(clock_a: LinkClock) -> Self {
        let (pa, pb) = (support_network::free_port(), support_network::free_port());
        let a = SocketAddrV4::new(Ipv4Addr::LOCALHOST, pa);
        let b = SocketAddrV4::new(Ipv4Addr::LOCALHOST, pb);
        let table = bdt(&[(a, [255; 4]), (b, [255; 4])]);
        let start = |bind, clock| {
            let table = table.clone();
            async move {
                BacnetBbmd::start_with_clock(
                    &BipConfig {
                        bind,
                        broadcast: Some(support_network::LOOPBACK_BROADCAST),
                    },
                    BbmdConfig {
                        bdt: table,
                        ..BbmdConfig::default()
                    },
                    clock,
                )
                .await
                .unwrap()
            }
        };
        let bbmd_a = start(a, clock_a).await;
        let bbmd_b = start(b, LinkClock::system()).await;
        let mut config = BacnetServerConfig::new(
            SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 3), pb),
            stress_profile().build().unwrap(),
        );
        config.broadcast = Some(support_network::LOOPBACK_BROADCAST);
        config.announce = false;
        let server = BacnetServer::start(config).await.unwrap();
        Self {
            bbmd_a,
            bbmd_b,
            server,
            pa,
            pb,
        }
    }
}

impl TwoSubnets {
    /// A global Who-Is from `client` is answered by the stress server (Device 400) alone.
    async fn who_is_finds_only_the_server(&self, client: &BacnetClient) {
        let found = client
            .who_is(None, Duration::from_millis(800))
            .await
            .unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, self.server.local_addr());
        assert_eq!(found[0].1.device.instance(), 400);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn who_is_through_two_bbmds_finds_the_device_on_the_other_subnet() {
    let net = TwoSubnets::start().await;
    let client = BacnetClient::start(ClientConfig::new(
        SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 2), net.pa),
        Some(support_network::LOOPBACK_BROADCAST),
    ))
    .await
    .unwrap();
    net.who_is_finds_only_the_server(&client).await;
    // And the device answers unicast reads straight across.
    let name = client
        .read_str(net.server.local_addr(), "device,400", "object-name")
        .await
        .unwrap();
    assert!(format!("{name:?}").contains("Docker-Stress-400"));
    assert!(net.bbmd_a.stats().forwarded >= 2);
    assert_eq!(
        read_bdt(net.bbmd_a.local_addr(), Duration::from_secs(2))
            .await
            .unwrap(),
        net.bbmd_a.bdt()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_device_registers_finds_the_device_and_shows_in_read_fdt() {
    let net = TwoSubnets::start().await;
    let client = start_foreign(net.bbmd_a.local_addr(), 60).await;
    let fdt = read_fdt(net.bbmd_a.local_addr(), Duration::from_secs(2))
        .await
        .unwrap();
    assert_eq!(fdt.len(), 1);
    assert_eq!(fdt[0].address, client.local_addr());
    assert_eq!(fdt[0].time_to_live, 60);
    assert!(
        (85..=90).contains(&fdt[0].remaining),
        "{}",
        fdt[0].remaining
    );
    net.who_is_finds_only_the_server(&client).await;
    // Delete-FDT-Entry through the management request; then it is gone.
    delete_fdt_entry(
        net.bbmd_a.local_addr(),
        client.local_addr(),
        Duration::from_secs(2),
    )
    .await
    .unwrap();
    assert!(net.bbmd_a.fdt().is_empty());
    assert!(
        read_fdt(net.bbmd_b.local_addr(), Duration::from_secs(2))
            .await
            .unwrap()
            .is_empty()
    );
    // Write-BDT is refused: not configured.
    let refused = write_bdt(net.bbmd_b.local_addr(), vec![], Duration::from_secs(2)).await;
    assert!(refused.unwrap_err().to_string().contains("0x0010"));
    assert_eq!(net.bbmd_b.bdt().len(), 2);
    let _ = net.pb;
}

fn foreign_config(bbmd: SocketAddrV4, time_to_live: u16) -> ClientConfig {
    let pc = support_network::free_port();
    let mut config = ClientConfig::new(SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 4), pc), None);
    config.role = BipRole::Foreign(ForeignConfig { bbmd, time_to_live });
    config
}

/// A foreign-device client of `bbmd`, registered. The port comes from a probe socket that
/// is closed again, so another test may take it in between: bind again on "address in use".
async fn start_foreign(bbmd: SocketAddrV4, time_to_live: u16) -> BacnetClient {
    for _ in 0..20 {
        match BacnetClient::start(foreign_config(bbmd, time_to_live)).await {
            Ok(client) => return client,
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => continue,
            Err(e) => panic!("foreign device client: {e}"),
        }
    }
    panic!("no free port for a foreign device client in 20 tries")
}

/// Through the real sockets, with BBMD A's clock moved forward instead of waited for: a
/// registration with TTL 60 is still served 89 s later (the 30 s grace), and is gone from
/// Read-FDT, and from broadcast distribution, at 91 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registration_expires_after_its_ttl_plus_the_grace_period() {
    let clock = LinkClock::adjustable();
    let net = TwoSubnets::start_with_clock(clock.clone()).await;
    let bbmd = net.bbmd_a.local_addr();
    let client = start_foreign(bbmd, 60).await;
    let wait = Duration::from_secs(2);
    let fdt = read_fdt(bbmd, wait).await.unwrap();
    assert_eq!(fdt.len(), 1);
    assert_eq!(
        (fdt[0].address, fdt[0].time_to_live),
        (client.local_addr(), 60)
    );
    assert!((89..=90).contains(&fdt[0].remaining), "{fdt:?}");

    // Past the TTL, inside the grace period: listed, and broadcasts still go through.
    clock.advance(Duration::from_secs(89));
    let fdt = read_fdt(bbmd, wait).await.unwrap();
    assert_eq!(fdt.len(), 1, "{fdt:?}");
    assert!(fdt[0].remaining <= 1, "{fdt:?}");
    net.who_is_finds_only_the_server(&client).await;

    // Past TTL + grace: purged; its Distribute-Broadcast-To-Network is refused (NAK) and
    // Who-Is finds nobody.
    clock.advance(Duration::from_secs(2));
    assert!(read_fdt(bbmd, wait).await.unwrap().is_empty());
    assert!(net.bbmd_a.fdt().is_empty());
    let found = client
        .who_is(None, Duration::from_millis(500))
        .await
        .unwrap();
    assert!(found.is_empty(), "{found:?}");

    // A new registration is taken again, with the full TTL and grace.
    let again = start_foreign(bbmd, 10).await;
    let fdt = read_fdt(bbmd, wait).await.unwrap();
    assert_eq!(fdt.len(), 1, "{fdt:?}");
    assert_eq!(
        (fdt[0].address, fdt[0].time_to_live),
        (again.local_addr(), 10)
    );
    assert!((39..=40).contains(&fdt[0].remaining), "{fdt:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registration_with_a_non_bbmd_fails_fast() {
    let node = BacnetServer::start({
        let mut config = BacnetServerConfig::new(
            SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0),
            stress_profile().build().unwrap(),
        );
        config.broadcast = None;
        config.announce = false;
        config
    })
    .await
    .unwrap();
    let error = BacnetClient::start(foreign_config(node.local_addr(), 60))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("refused"), "{error}");
}
