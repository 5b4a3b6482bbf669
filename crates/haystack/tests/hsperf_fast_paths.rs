//! The fast decoding paths (direct Hayson scanner, direct Trio grid builder, in-place
//! Zinc rows) on the published example sites and on malformed input: same grids as
//! the reference paths, and errors that still say where the input went wrong.

use buildwire_haystack::codec::json::hayson;
use buildwire_haystack::codec::{DecodeErrorKind, Location, trio, zinc};
use buildwire_haystack::{Grid, Value};
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
