//! Fuzz target: the B/IP link as a BBMD (Annex J) and the B/IPv6 link as a BBMD (Annex U),
//! fed datagrams from peers, foreign devices, strangers and broadcast addresses with a moving
//! clock. Neither may panic; every datagram they send must decode; and traffic stays
//! bounded: one input never causes more datagrams than the distribution table, the foreign
//! device table and an answer hold.
#![no_main]

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddrV4, SocketAddrV6};
use std::time::{Duration, Instant};

use buildwire_bacnet::link::{Bbmd6Config, BbmdConfig, Bip6Link, Bip6Role, BipLink, BipRole};
use buildwire_bacnet::link::bip6::Vmac;
use buildwire_bacnet::link::{BdtEntry, Bvll, Bvll6};
use libfuzzer_sys::fuzz_target;

const MAX_FOREIGN: usize = 4;

fn v4(last: u8) -> SocketAddrV4 {
    SocketAddrV4::new(Ipv4Addr::new(10, 0, 1, last), 47808)
}

fn v6(last: u16) -> SocketAddrV6 {
    SocketAddrV6::new(Ipv6Addr::new(0xfd00, 0, 0, 1, 0, 0, 0, last), 47808, 0, 0)
}

fn bip_link(now: Instant) -> BipLink {
    let peer = |ip: [u8; 4], mask: [u8; 4]| BdtEntry {
        address: SocketAddrV4::new(Ipv4Addr::from(ip), 47808),
        mask: Ipv4Addr::from(mask),
    };
    let bdt = vec![
        peer([10, 0, 1, 1], [255; 4]),
        peer([10, 0, 2, 1], [255; 4]),
        peer([10, 0, 3, 1], [255, 255, 255, 0]),
    ];
    let config = BbmdConfig {
        bdt,
        max_foreign_devices: MAX_FOREIGN,
        ..BbmdConfig::default()
    };
    let broadcast = SocketAddrV4::new(Ipv4Addr::new(10, 0, 1, 255), 47808);
    BipLink::new(now, v4(1), Some(broadcast), BipRole::Bbmd(config))
}

fn bip6_link(now: Instant) -> Bip6Link {
    let config = Bbmd6Config {
        bdt: vec![v6(1), v6(2), v6(3)],
        max_foreign_devices: MAX_FOREIGN,
        ..Bbmd6Config::default()
    };
    let group = SocketAddrV6::new(Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 0xbac0), 47808, 0, 0);
    Bip6Link::new(now, Vmac([0, 0, 1]), v6(1), Some(group), Bip6Role::Bbmd(config))
}

/// Datagrams one input may cause: the BDT (3), the FDT and the local broadcast or answer.
const PER_INPUT: usize = 3 + MAX_FOREIGN + 2;

fuzz_target!(|data: &[u8]| {
    let start = Instant::now();
    let mut now = start;
    let mut ipv4 = bip_link(now);
    let mut ipv6 = bip6_link(now);
    let mut rest = data;
    while let [header, length, tail @ ..] = rest {
        let len = usize::from(*length).min(tail.len());
        let (datagram, next) = tail.split_at(len);
        rest = next;
        // Sources: the BBMD itself, its peers, foreign devices, the broadcast address.
        let last = match header & 0x0F {
            0 => 255,
            n => n,
        };
        if header & 0x10 == 0 {
            let from = match last {
                9 => SocketAddrV4::new(Ipv4Addr::new(10, 0, 3, 7), 47808),
                _ => v4(last),
            };
            ipv4.handle_datagram(now, from, datagram);
            let mut sent = 0;
            while let Some((_, bytes)) = ipv4.poll_transmit() {
                Bvll::decode_datagram(&bytes).expect("BBMD datagrams decode");
                sent += 1;
            }
            assert!(sent <= PER_INPUT, "one datagram caused {sent}");
        } else {
            ipv6.handle_datagram(now, v6(u16::from(last)), datagram);
            let mut sent = 0;
            while let Some((_, bytes)) = ipv6.poll_transmit() {
                Bvll6::decode_datagram(&bytes).expect("BBMD6 datagrams decode");
                sent += 1;
            }
            assert!(sent <= PER_INPUT, "one datagram caused {sent}");
        }
        now += Duration::from_secs(u64::from(header >> 5) * 10);
        ipv4.handle_timeout(now);
        ipv6.handle_timeout(now);
        while ipv4.poll_transmit().is_some() {}
        while ipv6.poll_transmit().is_some() {}
    }
});
