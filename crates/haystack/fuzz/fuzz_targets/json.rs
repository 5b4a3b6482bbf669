//! Fuzzes the JSON decoders (Hayson v4 and v3): grids read by one thread or split for two
//! (the same result), decode, and on success encode and decode again and compare.
#![no_main]

use buildwire_haystack::codec::json::{hayson, v3};
use buildwire_haystack::codec::{set_parallel_decode, set_parallel_min_bytes};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Split into parts for two threads (every document, however small) or read on one:
    // the same grid or the same error.
    set_parallel_min_bytes(0);
    set_parallel_decode(true);
    let split = hayson::decode_grid(text);
    set_parallel_decode(false);
    assert_eq!(split, hayson::decode_grid(text));
    if let Ok(value) = hayson::decode_value(text) {
        let again = hayson::decode_value(&hayson::encode_value(&value)).expect("Hayson re-decode");
        assert_eq!(again, value);
    }
    if let Ok(grid) = hayson::decode_grid(text) {
        let again = hayson::decode_grid(&hayson::encode_grid(&grid)).expect("Hayson grid re-decode");
        assert_eq!(again, grid);
    }
    if let Ok(value) = v3::decode_value(text) {
        let again = v3::decode_value(&v3::encode_value(&value)).expect("JSON v3 re-decode");
        assert_eq!(again, value);
    }
});
