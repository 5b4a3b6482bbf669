//! Fuzzes the Zinc decoder: any bytes must decode or fail cleanly, the same whether read
//! by one thread or split for two; whatever decodes must survive encode → decode unchanged.
#![no_main]

use buildwire_haystack::codec::{set_parallel_decode, set_parallel_min_bytes, zinc};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        assert!(zinc::decode_grid_bytes(data).is_err());
        return;
    };
    // Split into parts for two threads (every document, however small) or read on one:
    // the same grid or the same error.
    set_parallel_min_bytes(0);
    set_parallel_decode(true);
    let split = zinc::decode_grid(text);
    set_parallel_decode(false);
    assert_eq!(split, zinc::decode_grid(text));
    if let Ok(grid) = zinc::decode_grid(text) {
        let encoded = zinc::encode_grid(&grid);
        let again = zinc::decode_grid(&encoded).expect("re-decoding our own Zinc grid");
        assert_eq!(again, grid);
    }
    if let Ok(value) = zinc::decode_value(text) {
        let encoded = zinc::encode_value(&value);
        let again = zinc::decode_value(&encoded).expect("re-decoding our own Zinc value");
        assert_eq!(again, value);
    }
});
