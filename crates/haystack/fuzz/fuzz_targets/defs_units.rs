//! Fuzzes the unit table reader: any text either parses or is refused with a line
//! number; a parsed table written back parses to the same units, and conversions
//! between any two of its units never panic.
#![no_main]

use buildwire_haystack::units::UnitDb;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(db) = UnitDb::parse(text) else {
        return;
    };
    let written = db.to_table();
    let again = UnitDb::parse(&written).expect("written table parses");
    assert!(db.units().eq(again.units()), "{written}");
    let ids: Vec<&str> = db.units().take(8).map(|u| u.name()).collect();
    for from in &ids {
        for to in &ids {
            let _ = db.convert(1.5, from, to);
        }
    }
});
