//! Fuzz target: BVLL datagrams. Whatever decodes must re-encode and decode to the same value.
#![no_main]

use buildwire_bacnet::link::Bvll;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(message) = Bvll::decode_datagram(data) {
        let mut encoded = Vec::new();
        message.encode(&mut encoded);
        let again = Bvll::decode_datagram(&encoded).expect("re-encoded BVLL must decode");
        assert_eq!(again, message);
    }
});
