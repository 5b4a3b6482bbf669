//! The fast decoding paths (direct Hayson scanner, direct Trio grid builder, in-place
//! Zinc rows) on the published example sites and on malformed input: same grids as
//! the reference paths, and errors that still say where the input went wrong.

use buildwire_haystack::codec::json::hayson;
use buildwire_haystack::codec::{DecodeErrorKind, Location, trio, zinc};
use buildwire_haystack::{Grid, Value};
use proptest::prelude::*;
use std::path::PathBuf;

fn read(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/haystack")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("sample data {} is missing ({e})", path.display()))
}

#[test]
fn hayson_scanner_matches_the_tree_decoder_on_the_sites() {
    for name in ["alpha.json", "bravo.json"] {
        let text = read(name);
        let fast = hayson::decode_grid(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let tree = hayson::decode_grid_via_tree(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(fast, tree, "{name}");
        assert!(fast.row_count() > 1000, "{name}");
    }
}

#[test]
fn trio_grid_matches_the_records_on_the_sites() {
    for name in ["alpha.trio", "bravo.trio"] {
        let text = read(name);
        let direct = trio::decode_grid(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let records = trio::decode_records(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            Some(direct.clone()),
            Grid::from_dicts(&records).ok(),
            "{name}"
        );
        // The grid encoder writes the same text as the record encoder given the rows
        // as dicts (tags in column order).
        let rows: Vec<_> = (0..direct.row_count())
            .filter_map(|i| direct.row_dict(i))
            .collect();
        assert_eq!(
            trio::encode_grid(&direct),
            trio::encode_records(&rows),
            "{name}"
        );
    }
}

#[test]
fn hayson_errors_after_good_rows_keep_their_positions() {
    // A syntax error deep in the rows: the scanner gives up, the tree reports line/column.
    let text = "{\"_kind\":\"grid\",\"meta\":{\"ver\":\"3.0\"},\"cols\":[{\"name\":\"a\"}],\n\"rows\":[{\"a\":1},\n{\"a\":2,}]}";
    let e = hayson::decode_grid(text).err();
    assert_eq!(e.as_ref().and_then(|e| e.line_column()), Some((3, 8)));
    assert!(matches!(
        e.map(|e| e.kind),
        Some(DecodeErrorKind::JsonSyntax(_))
    ));
    // A content error: reported with its JSON path.
    let text = r#"{"cols":[{"name":"a"}],"rows":[{"a":1},{"a":{"_kind":"ref","val":"bad id"}}]}"#;
    assert_eq!(
        hayson::decode_grid(text).err().map(|e| e.location),
        Some(Location::Path("rows[1].a.val".into()))
    );
    // Members in an unusual order still decode (through the tree decoder).
    let text = r#"{"rows":[{"a":{"val":"p1","_kind":"ref"}}],"cols":[{"name":"a"}]}"#;
    let grid = hayson::decode_grid(text).ok();
    assert_eq!(
        grid.and_then(|g| g.get(0, "a").cloned()),
        Some(Value::Ref(buildwire_haystack::Ref::new("p1")))
    );
}

#[test]
fn trio_grid_errors_keep_their_positions() {
    let e = trio::decode_grid("id:@a\ndis:Alpha\n---\nid:@b\nid:@c\n").err();
    assert_eq!(
        e.map(|e| (e.line_column(), e.kind)),
        Some((Some((5, 1)), DecodeErrorKind::DuplicateName("id".into())))
    );
    let e = trio::decode_grid("id:@a\nBad\n").err();
    assert_eq!(
        e.map(|e| e.kind),
        Some(DecodeErrorKind::InvalidTagName("Bad".into()))
    );
}

#[test]
fn zinc_rows_filled_in_place_still_check_their_width() {
    let e = zinc::decode_grid("ver:\"3.0\"\na,b\n1,2\n3,4,5\n").err();
    assert_eq!(
        e.map(|e| (e.line_column(), e.kind)),
        Some((Some((4, 4)), DecodeErrorKind::RowTooWide(2)))
    );
    // Short rows get empty trailing cells; `N` is an empty cell.
    let grid = zinc::decode_grid("ver:\"3.0\"\na,b\n1\nN,72.5°F\n").ok();
    assert_eq!(grid.as_ref().map(Grid::row_count), Some(2));
    assert_eq!(grid.as_ref().and_then(|g| g.get(0, "b")), None);
    assert_eq!(grid.as_ref().and_then(|g| g.get(1, "a")), None);
    assert_eq!(
        grid.as_ref().and_then(|g| g.get(1, "b")),
        Some(&Value::number_with_unit(72.5, "°F"))
    );
}

/// Hayson values as encoders lay them out and as they might not: the scanner's shortcut
/// for the common layout (`_kind`, `val`, then one optional member) must build exactly
/// what the tree decoder builds, and refuse exactly what it refuses.
fn arb_kinded() -> impl Strategy<Value = String> {
    let digits = |n: usize| proptest::collection::vec(0u8..10, n..=n);
    let date_time = (
        1990i32..2040,
        prop_oneof![Just(1u8), Just(2), Just(12), Just(13), Just(0)],
        prop_oneof![Just(1u8), Just(28), Just(29), Just(30), Just(31), Just(32)],
        prop_oneof![Just(0u8), Just(23), Just(24)],
        prop_oneof![Just(0u8), Just(59), Just(60)],
        prop_oneof![Just(0u8), Just(59), Just(60)],
        proptest::option::of((1usize..11).prop_flat_map(digits)),
        prop_oneof![
            Just("Z".to_owned()),
            Just("+00:00".to_owned()),
            Just("-05:00".to_owned()),
            Just("+14:00".to_owned()),
            Just("+05:30".to_owned()),
            Just("+05:60".to_owned()),
            Just("-5:00".to_owned()),
            Just("".to_owned()),
        ],
    )
        .prop_map(|(y, mo, d, h, mi, s, fraction, offset)| {
            let fraction = fraction
                .map(|f| {
                    let digits: String = f.iter().map(|d| char::from(b'0' + d)).collect();
                    format!(".{digits}")
                })
                .unwrap_or_default();
            format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}{fraction}{offset}")
        });
    let tz = prop_oneof![
        Just(None),
        Just(Some("\"Chicago\"".to_owned())),
        Just(Some("\"UTC\"".to_owned())),
        Just(Some("\"New_York\"".to_owned())),
        Just(Some("\"\"".to_owned())),
        Just(Some("\"bad tz\"".to_owned())),
        Just(Some("5".to_owned())),
    ];
    let space = prop_oneof![Just(""), Just(" "), Just("\n  ")];
    let text = prop_oneof![
        Just("\"b-0001\"".to_owned()),
        Just("\"a:b.c~d\"".to_owned()),
        Just("\"bad id\"".to_owned()),
        Just("\"\"".to_owned()),
        Just("\"caf\\u00e9\"".to_owned()),
        Just("\"tab\\tx\"".to_owned()),
        Just("\"\\u0041\"".to_owned()),
        Just("12".to_owned()),
    ];
    let number = prop_oneof![
        Just("72.5".to_owned()),
        Just("-0".to_owned()),
        Just("1e3".to_owned()),
        Just("01".to_owned()),
        Just("\"INF\"".to_owned()),
        Just("\"NaN\"".to_owned()),
        Just("\"12\"".to_owned()),
    ];
    let unit = prop_oneof![
        Just(None),
        Just(Some("\"\\u00b0F\"".to_owned())),
        Just(Some("\"ft\\u00b2\"".to_owned())),
        Just(Some("\"%\"".to_owned())),
        Just(Some("7".to_owned())),
    ];
    let date = prop_oneof![
        Just("\"2024-02-29\"".to_owned()),
        Just("\"2023-02-29\"".to_owned()),
        Just("\"2024-1-05\"".to_owned()),
        Just("\"2024-13-01\"".to_owned()),
    ];
    let kinds = prop_oneof![
        (text.clone(), proptest::option::of(text.clone())).prop_map(|(v, d)| (
            "ref",
            v,
            d.map(|d| ("dis", d))
        )),
        (number, unit).prop_map(|(v, u)| ("number", v, u.map(|u| ("unit", u)))),
        (date_time.prop_map(|t| format!("\"{t}\"")), tz).prop_map(|(v, t)| (
            "dateTime",
            v,
            t.map(|t| ("tz", t))
        )),
        date.prop_map(|v| ("date", v, None)),
        text.clone().prop_map(|v| ("symbol", v, None)),
        text.clone().prop_map(|v| ("str", v, None)),
        text.prop_map(|v| ("uri", v, None)),
    ];
    (kinds, space, any::<bool>(), any::<bool>()).prop_map(
        |((kind, val, second), ws, swap, extra)| {
            let mut members = vec![
                format!("\"_kind\":{ws}\"{kind}\""),
                format!("\"val\":{ws}{val}"),
            ];
            if let Some((name, value)) = second {
                members.push(format!("\"{name}\":{ws}{value}"));
            }
            if extra {
                members.push("\"other\":1".to_owned());
            }
            if swap && members.len() > 2 {
                members.swap(1, 2);
            }
            format!("{{{}{ws}}}", members.join(&format!(",{ws}")))
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn hayson_common_layout_matches_the_tree_decoder(cells in proptest::collection::vec(arb_kinded(), 1..4)) {
        let row: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, cell)| format!("\"c{i}\":{cell}"))
            .collect();
        let cols: Vec<String> = (0..cells.len()).map(|i| format!("{{\"name\":\"c{i}\"}}")).collect();
        let text = format!(
            "{{\"_kind\":\"grid\",\"meta\":{{\"ver\":\"3.0\"}},\"cols\":[{}],\"rows\":[{{{}}}]}}",
            cols.join(","),
            row.join(",")
        );
        let fast = hayson::decode_grid(&text).ok();
        let tree = hayson::decode_grid_via_tree(&text).ok();
        prop_assert_eq!(fast, tree, "{}", text);
    }
}
