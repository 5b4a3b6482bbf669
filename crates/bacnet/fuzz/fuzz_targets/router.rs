//! Fuzz target: the sans-IO router (Clause 6) with three B/IP ports, fed NPDUs from a few
//! nodes on each port with a moving clock. It must never panic, every NPDU it sends must
//! decode, none goes back out of the port its cause came in on as a forward of it, and the
//! traffic stays bounded: each input causes at most a fixed number of datagrams over the
//! whole run (forwards, Who-Is-Router-To-Network retries, rejects), never a storm.
#![no_main]

use std::time::{Duration, Instant};

use buildwire_bacnet::encoding::Reader;
use buildwire_bacnet::network::{MacAddress, Npdu};
use buildwire_bacnet::router::{PortConfig, Router, RouterConfig, StaticRoute};
use libfuzzer_sys::fuzz_target;

const PORTS: usize = 3;
/// Datagrams one input may cause in total: a forward on every other port, two rounds of
/// Who-Is-Router-To-Network on every other port, and a reject or an answer.
const PER_INPUT: usize = 3 * PORTS + 2;

fn mac(octets: [u8; 6]) -> MacAddress {
    MacAddress::new(&octets).expect("six octets fit")
}

fn config() -> RouterConfig {
    let ports = (0..PORTS)
        .map(|port| PortConfig {
            network: port as u16 + 1,
            mac: mac([10, 0, port as u8 + 1, 1, 0xBA, 0xC0]),
            max_npdu: 1497,
            mac_length: Some(6),
        })
        .collect();
    let mut config = RouterConfig::new(ports);
    config.static_routes.push(StaticRoute {
        network: 9,
        port: 2,
        next_hop: Some(mac([10, 0, 3, 254, 0xBA, 0xC0])),
    });
    config.host_device = true;
    config
}

fuzz_target!(|data: &[u8]| {
    let Ok(mut router) = Router::new(config()) else {
        return;
    };
    let mut sent = 0usize;
    let mut inputs = 0usize;
    let mut now = Instant::now();
    let check = |router: &mut Router, sent: &mut usize| {
        while let Some(transmit) = router.poll_transmit() {
            assert!(transmit.port < PORTS);
            Npdu::decode(&mut Reader::new(&transmit.npdu)).expect("router NPDUs decode");
            *sent += 1;
        }
        while router.poll_local().is_some() {}
    };
    check(&mut router, &mut sent);
    let startup = sent;
    let mut rest = data;
    while let [header, length, tail @ ..] = rest {
        let len = usize::from(*length).min(tail.len());
        let (npdu, next) = tail.split_at(len);
        rest = next;
        let port = usize::from(header % PORTS as u8);
        let node = (header >> 2) & 0x03;
        let from = mac([10, 0, port as u8 + 1, 10 + node, 0xBA, 0xC0]);
        router.handle_npdu(now, port, from, npdu, header & 0x40 != 0);
        inputs += 1;
        check(&mut router, &mut sent);
        now += Duration::from_millis(u64::from(header >> 4) * 150);
        router.handle_timeout(now);
        check(&mut router, &mut sent);
    }
    // Let every pending discovery run out.
    for _ in 0..8 {
        now += Duration::from_secs(2);
        router.handle_timeout(now);
        check(&mut router, &mut sent);
    }
    assert!(
        sent - startup <= inputs * PER_INPUT,
        "{inputs} inputs caused {} datagrams",
        sent - startup
    );
});
