//! Fuzzes def loading: Trio text either forms a checked namespace or is refused; in a
//! namespace every inheritance chain is finite and free of repeats, and the records
//! written back as Trio load into an equal taxonomy.
#![no_main]

use buildwire_haystack::Dict;
use buildwire_haystack::codec::trio;
use buildwire_haystack::defs;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(ns) = defs::load_trio(text) else {
        return;
    };
    for def in ns.defs() {
        let chain = ns.inheritance(def.name()).expect("declared def");
        assert!(chain.len() <= ns.len());
        for supertype in def.is() {
            assert!(!ns.fits_def(supertype, def.name()), "cycle");
        }
        let _ = ns.implementation(def.name());
        let _ = ns.choices_of(def.name());
    }
    let records: Vec<Dict> = ns.defs().map(|d| d.tags().clone()).collect();
    let again = defs::load_trio(&trio::encode_records(&records)).expect("re-encoded defs load");
    assert_eq!(again.len(), ns.len());
    for def in ns.defs() {
        assert_eq!(again.def(def.name()), Some(def));
    }
});
