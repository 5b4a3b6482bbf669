//! Fuzz target: BACnet/IPv6 BVLL datagrams (Annex U). Whatever decodes must re-encode and
//! decode to the same value.
#![no_main]

use buildwire_bacnet::link::Bvll6;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(message) = Bvll6::decode_datagram(data) {
        let mut encoded = Vec::new();
        message.encode(&mut encoded);
        let again = Bvll6::decode_datagram(&encoded).expect("re-encoded BVLL6 must decode");
        assert_eq!(again, message);
    }
});
