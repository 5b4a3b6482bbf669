//! Fuzz target: the device server. The input is split into NPDUs (a length octet before
//! each) fed from a few peers with a moving clock. The server must never panic, and every
//! NPDU it sends must decode (NPDU and APDU), re-encode to the same bytes and decode again
//! to the same value.
#![no_main]

#[allow(dead_code)]
#[path = "../../../bench/src/bacnet/profiles.rs"]
mod profiles;

use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use buildwire_bacnet::apdu::Apdu;
use buildwire_bacnet::app::DeviceServer;
use buildwire_bacnet::encoding::Reader;
use buildwire_bacnet::network::Npdu;
use buildwire_bacnet::network::npdu::NpduBody;
use buildwire_bacnet::objects::profile::DeviceProfile;
use profiles::stress_profile;
use buildwire_bacnet::tsm::TsmConfig;
use libfuzzer_sys::fuzz_target;

fn profile() -> &'static DeviceProfile {
    static PROFILE: OnceLock<DeviceProfile> = OnceLock::new();
    PROFILE.get_or_init(stress_profile)
}

fn check(npdu_bytes: &[u8]) {
    let npdu = Npdu::decode(&mut Reader::new(npdu_bytes)).expect("server NPDUs decode");
    let mut encoded = Vec::new();
    npdu.encode(&mut encoded);
    assert_eq!(encoded, npdu_bytes);
    let NpduBody::Apdu(apdu_bytes) = npdu.body else {
        panic!("the server only sends APDUs");
    };
    let apdu = Apdu::decode(&mut Reader::new(apdu_bytes)).expect("server APDUs decode");
    let mut encoded = Vec::new();
    apdu.encode(&mut encoded);
    let again = Apdu::decode(&mut Reader::new(&encoded)).expect("re-encoded APDU decodes");
    assert_eq!(again, apdu);
}

fuzz_target!(|data: &[u8]| {
    let Ok(database) = profile().build() else {
        return;
    };
    let mut server = DeviceServer::new(database, TsmConfig::default());
    let start = Instant::now();
    let mut now = start;
    let mut rest = data;
    while let [header, tail @ ..] = rest {
        let len = usize::from(header & 0x7F).min(tail.len());
        let (npdu, next) = tail.split_at(len);
        rest = next;
        let peer = SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 1 + (header >> 7)), 47808);
        server.handle_npdu(now, peer, npdu, header & 0x01 == 0);
        now += Duration::from_millis(u64::from(*header) * 20);
        server.handle_timeout(now);
        while let Some(transmit) = server.poll_transmit() {
            check(&transmit.npdu);
        }
    }
});
