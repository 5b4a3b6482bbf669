//! Fuzzes the Trio decoder: decode, and on success encode and decode again and compare.
#![no_main]

use buildwire_haystack::codec::trio;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(records) = trio::decode_records(text) {
        // Empty records have no Trio form; the encoder leaves them out.
        let records: Vec<_> = records.into_iter().filter(|r| !r.is_empty()).collect();
        let encoded = trio::encode_records(&records);
        let again = trio::decode_records(&encoded).expect("re-decoding our own Trio");
        assert_eq!(again, records);
    }
});
