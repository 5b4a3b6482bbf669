//! Fuzz target: network-layer message parameters (Clause 6.4), for every message type. The
//! first byte picks the type, the next two a vendor id for proprietary types; whatever decodes
//! must re-encode and decode to the same message.
#![no_main]

use buildwire_bacnet::network::{NetworkMessage, NetworkMessageType};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&kind, rest)) = data.split_first() else {
        return;
    };
    let message_type = NetworkMessageType::from_u32(u32::from(kind));
    let (vendor_id, parameters) = if kind >= 0x80 && rest.len() >= 2 {
        (Some(u16::from_be_bytes([rest[0], rest[1]])), &rest[2..])
    } else {
        (None, rest)
    };
    if let Ok(message) = NetworkMessage::decode(message_type, vendor_id, parameters) {
        let mut encoded = Vec::new();
        message.encode_data(&mut encoded);
        let again = NetworkMessage::decode(message_type, vendor_id, &encoded)
            .expect("re-encoded network message must decode");
        assert_eq!(again, message);
    }
});
