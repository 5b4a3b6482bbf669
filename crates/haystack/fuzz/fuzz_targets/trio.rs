//! Fuzzes the Trio decoder: records and grids, read by one thread or split for two (the
//! same result), and on success encode and decode again and compare.
#![no_main]

use buildwire_haystack::codec::{set_parallel_decode, set_parallel_min_bytes, trio};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Split into parts for two threads (every document, however small) or read on one:
    // the same grid or the same error.
    set_parallel_min_bytes(0);
    set_parallel_decode(true);
    let split = trio::decode_grid(text);
    set_parallel_decode(false);
    assert_eq!(split, trio::decode_grid(text));
    if let Ok(records) = trio::decode_records(text) {
        // Empty records have no Trio form; the encoder leaves them out.
        let records: Vec<_> = records.into_iter().filter(|r| !r.is_empty()).collect();
        let encoded = trio::encode_records(&records);
        let again = trio::decode_records(&encoded).expect("re-decoding our own Trio");
        assert_eq!(again, records);
    }
});
