//! Fuzz target: the client core. A few requests are outstanding while the input, split into
//! NPDUs (a length octet before each), arrives as answers with a moving clock. The client
//! must never panic; every NPDU it sends must decode and re-encode to the same bytes, and
//! every completion must name a request that was sent.
#![no_main]

use std::collections::HashSet;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::{Duration, Instant};

use buildwire_bacnet::app::{ClientCore, PeerAddress};
use buildwire_bacnet::encoding::{ObjectIdentifier, Reader};
use buildwire_bacnet::network::Npdu;
use buildwire_bacnet::tsm::TsmConfig;
use buildwire_bacnet::{ObjectType, PropertyIdentifier};
use libfuzzer_sys::fuzz_target;

const PEER: SocketAddrV4 = SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 9), 47808);

fuzz_target!(|data: &[u8]| {
    let mut client = ClientCore::new(TsmConfig::default());
    let start = Instant::now();
    let mut sent = HashSet::new();
    for instance in 0..4 {
        let object = ObjectIdentifier::new(ObjectType::AnalogInput, instance);
        if let Ok(invoke_id) =
            client.read_property(start, PEER, object, PropertyIdentifier::PresentValue, None)
        {
            sent.insert(invoke_id);
        }
    }
    let mut now = start;
    let mut rest = data;
    while let [header, tail @ ..] = rest {
        let len = usize::from(*header).min(tail.len());
        let (npdu, next) = tail.split_at(len);
        rest = next;
        client.handle_npdu(now, PEER, npdu);
        now += Duration::from_millis(u64::from(*header) * 10);
        client.handle_timeout(now);
        while let Some(transmit) = client.poll_transmit() {
            let decoded =
                Npdu::decode(&mut Reader::new(&transmit.npdu)).expect("client NPDUs decode");
            let mut encoded = Vec::new();
            decoded.encode(&mut encoded);
            assert_eq!(encoded, transmit.npdu);
        }
        while let Some(done) = client.poll_completion() {
            assert_eq!(done.peer, PeerAddress::local(PEER));
            assert!(
                sent.contains(&done.invoke_id),
                "completion for an unknown request"
            );
        }
        while client.poll_announcement().is_some() {}
    }
});
