//! Fuzzes the filter parser: any text must parse or fail cleanly; whatever parses must
//! print and re-parse to the same tree, and evaluate against a small fixed store
//! (planned and brute-force reads agreeing) without panicking.
#![no_main]

use buildwire_haystack::filter::{MAX_FILTER_LEN, parse};
use buildwire_haystack::store::EntityStore;
use buildwire_haystack::{Dict, Ref, Value};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn entity(id: &str, tags: &[(&str, Value)]) -> Dict {
    let mut d = Dict::new();
    d.insert("id", Value::Ref(Ref::new(id))).expect("id tag");
    for (name, value) in tags {
        d.insert(*name, value.clone())
            .expect("fixed tag names are valid");
    }
    d
}

fn store() -> &'static EntityStore {
    static STORE: OnceLock<EntityStore> = OnceLock::new();
    STORE.get_or_init(|| {
        let mut s = EntityStore::new();
        let rows = [
            entity(
                "s",
                &[
                    ("site", Value::Marker),
                    ("dis", Value::from("S")),
                    ("geoCity", Value::from("Hugo")),
                ],
            ),
            entity(
                "e",
                &[
                    ("equip", Value::Marker),
                    ("ahu", Value::Marker),
                    ("siteRef", Value::Ref(Ref::new("s"))),
                ],
            ),
            entity(
                "p",
                &[
                    ("point", Value::Marker),
                    ("his", Value::Marker),
                    ("kind", Value::from("Number")),
                    ("unit", Value::from("°F")),
                    ("curVal", Value::number_with_unit(72.5, "°F")),
                    ("equipRef", Value::Ref(Ref::new("e"))),
                    ("siteRef", Value::Ref(Ref::new("s"))),
                    (
                        "airRef",
                        Value::from(vec![Value::Ref(Ref::new("e")), Value::Ref(Ref::new("x"))]),
                    ),
                    ("enabled", Value::Bool(true)),
                ],
            ),
            entity(
                "loop",
                &[
                    ("selfRef", Value::Ref(Ref::new("loop"))),
                    ("n", Value::number(1.0)),
                ],
            ),
        ];
        for row in rows {
            s.add(row).expect("fixed entities are valid");
        }
        s
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(filter) = parse(text) else {
        return;
    };
    let printed = filter.to_string();
    // Printing escapes control characters (`\u0000` for one input byte), so the canonical
    // text can outgrow the input limit the parser enforces; round trips are checked within it.
    if printed.len() <= MAX_FILTER_LEN {
        let again = parse(&printed).expect("re-parsing a printed filter");
        assert_eq!(again, filter, "{printed}");
    }
    let store = store();
    let planned: Vec<_> = store
        .read(&filter, None)
        .into_iter()
        .map(|d| d.get("id").cloned())
        .collect();
    let scanned: Vec<_> = store
        .read_by_scan(&filter, None)
        .into_iter()
        .map(|d| d.get("id").cloned())
        .collect();
    assert_eq!(planned, scanned, "{printed}");
});
