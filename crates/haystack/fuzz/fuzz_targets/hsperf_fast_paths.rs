//! Fuzzes the fast decoding paths against their references: the direct Hayson scanner
//! (inside `hayson::decode_*`) against the tree decoder, and the direct Trio grid
//! builder against `Grid::from_dicts` of the decoded records; on success the result
//! is encoded, decoded again and compared.
#![no_main]

use buildwire_haystack::Grid;
use buildwire_haystack::codec::json::hayson;
use buildwire_haystack::codec::{trio, zinc};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Hayson: same result (value or error) with and without the scanner.
    let value = hayson::decode_value(text);
    assert_eq!(value, hayson::decode_value_via_tree(text));
    if let Ok(value) = value {
        let again = hayson::decode_value(&hayson::encode_value(&value)).expect("Hayson re-decode");
        assert_eq!(again, value);
    }
    let grid = hayson::decode_grid(text);
    assert_eq!(grid, hayson::decode_grid_via_tree(text));
    if let Ok(grid) = grid {
        let again =
            hayson::decode_grid(&hayson::encode_grid(&grid)).expect("Hayson grid re-decode");
        assert_eq!(again, grid);
    }
    // Trio: the direct grid equals the grid built from the records.
    let direct = trio::decode_grid(text);
    let via_records = trio::decode_records(text).map(|records| Grid::from_dicts(&records));
    match (&direct, &via_records) {
        (Ok(grid), Ok(Ok(expected))) => assert_eq!(grid, expected),
        (Err(e), Err(expected)) => assert_eq!(e, expected),
        (Err(_), Ok(Err(_))) => {}
        _ => panic!("Trio grid decoders disagree: {direct:?} vs {via_records:?}"),
    }
    if let Ok(grid) = direct {
        // A record whose tags are all null (`a:N`) is an empty dict, and Trio has no text
        // for an empty record: the encoder writes nothing for it, so only rows with a tag
        // come back.
        let again = trio::decode_grid(&trio::encode_grid(&grid)).expect("Trio re-decode");
        let tagged = grid
            .rows()
            .filter(|row| !row.is_empty())
            .count();
        assert_eq!(again.row_count(), tagged);
    }
    // Zinc: decode, encode, decode.
    if let Ok(grid) = zinc::decode_grid(text) {
        let again = zinc::decode_grid(&zinc::encode_grid(&grid)).expect("Zinc re-decode");
        assert_eq!(again, grid);
    }
});
