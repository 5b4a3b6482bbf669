//! Fuzz target: NPDUs. Whatever decodes must re-encode and decode to the same value.
#![no_main]

use buildwire_bacnet::encoding::Reader;
use buildwire_bacnet::network::Npdu;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(npdu) = Npdu::decode(&mut Reader::new(data)) {
        let mut encoded = Vec::new();
        npdu.encode(&mut encoded);
        let again = Npdu::decode(&mut Reader::new(&encoded)).expect("re-encoded NPDU must decode");
        assert_eq!(again, npdu);
    }
});
