//! Fuzz target: BVLC-SC messages (Annex AB). Decoding never panics; whatever decodes encodes
//! back to a message that decodes to the same value; and the sans-IO hub, fed the same bytes
//! on a connected node's connection, never panics nor relays to a node what does not decode.
#![no_main]

use std::time::Instant;

use buildwire_bacnet::link::sc::bvlc::BvlcMessage;
use buildwire_bacnet::link::sc::{
    ConnectionConfig, DeviceUuid, Hub, HubConfig, HubOutput, LocalIdentity, ScConnection, Vmac,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(message) = BvlcMessage::decode(data) {
        let bytes = message.to_bytes();
        let again = BvlcMessage::decode(&bytes).expect("an encoded message decodes");
        assert_eq!(again, message);
    }
    let now = Instant::now();
    let mut hub = Hub::new(
        HubConfig::new(Vmac::new([2, 0, 0, 0, 0, 0xFE]), DeviceUuid::new([0xFE; 16])),
        1,
    );
    let mut ids = Vec::new();
    for last in 1..=2u8 {
        let Some(id) = hub.open_connection(now) else {
            return;
        };
        let identity = LocalIdentity {
            vmac: Vmac::new([2, 0, 0, 0, 0, last]),
            uuid: DeviceUuid::new([last; 16]),
            max_bvlc_length: 1600,
            max_npdu_length: 1497,
        };
        let mut node = ScConnection::initiate(now, identity, ConnectionConfig::default(), 1);
        while let Some(frame) = node.poll_transmit() {
            hub.handle_message(now, id, &frame);
        }
        ids.push(id);
    }
    while hub.poll_output().is_some() {}
    // The input, split at 0xFF bytes into frames, all from the first node.
    for frame in data.split(|b| *b == 0xFF) {
        hub.handle_message(now, ids[0], frame);
        while let Some(output) = hub.poll_output() {
            if let HubOutput::Send { connection, frame } = output
                && connection == ids[1]
            {
                BvlcMessage::decode(&frame).expect("a relayed frame decodes");
            }
        }
    }
    while hub.poll_event().is_some() {}
});
