//! JSON v4 (Hayson) and v3 tests: documented examples, malformed input, round trips.

use super::{hayson, v3};
use crate::codec::zinc::tests::{nested_value, small_grid};
use crate::codec::{DecodeErrorKind, Location};
use crate::value::{Date, DateTime, Dict, Grid, Ref, Time, Value};
use proptest::prelude::*;

fn hay(text: &str) -> Value {
    hayson::decode_value(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn old(text: &str) -> Value {
    v3::decode_value(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn hayson_scalars() -> Result<(), Box<dyn std::error::Error>> {
    // Value encodings as listed in the Haystack JSON (v4) documentation.
    assert_eq!(hay(r#"{"_kind":"marker"}"#), Value::Marker);
    assert_eq!(hay(r#"{"_kind":"na"}"#), Value::Na);
    assert_eq!(hay(r#"{"_kind":"remove"}"#), Value::Remove);
    assert_eq!(hay("123"), Value::number(123.0));
    assert_eq!(
        hay(r#"{"_kind":"number","val":10.6,"unit":"EER"}"#),
        Value::number_with_unit(10.6, "EER")
    );
    assert_eq!(
        hay(r#"{"_kind":"number","val":"-INF"}"#),
        Value::number(f64::NEG_INFINITY)
    );
    assert_eq!(
        hay(r#"{"_kind":"ref","val":"a-0001","dis":"AHU"}"#),
        Value::Ref(Ref::with_dis("a-0001", "AHU"))
    );
    assert_eq!(
        hay(r#"{"_kind":"symbol","val":"sensor"}"#),
        Value::Symbol("sensor".into())
    );
    assert_eq!(
        hay(r#"{"_kind":"date","val":"2020-04-03"}"#),
        Value::Date(Date::new(2020, 4, 3)?)
    );
    let dt = DateTime::new(
        Date::new(2020, 7, 10)?,
        Time::new(1, 0, 9, 879_000_000)?,
        -14400,
        Some("New_York".into()),
    )?;
    assert_eq!(
        hay(r#"{"_kind":"dateTime","val":"2020-07-10T01:00:09.879-04:00","tz":"New_York"}"#),
        Value::DateTime(Box::new(dt.clone()))
    );
    assert_eq!(
        hayson::encode_value(&Value::DateTime(Box::new(dt))),
        r#"{"_kind":"dateTime","val":"2020-07-10T01:00:09.879-04:00","tz":"New_York"}"#
    );
    assert_eq!(
        hayson::encode_value(&Value::number_with_unit(180.0, "°F")),
        r#"{"_kind":"number","val":180,"unit":"°F"}"#
    );
    let mut d = Dict::new();
    d.insert("b", Value::Marker)?;
    d.insert("a", Value::Str("x".into()))?;
    assert_eq!(
        hayson::encode_value(&Value::from(d)),
        r#"{"b":{"_kind":"marker"},"a":"x"}"#
    );
    Ok(())
}

#[test]
fn hayson_grid_example() -> Result<(), crate::codec::DecodeError> {
    let text = r#"{"_kind":"grid","meta":{"ver":"3.0","dis":"G"},
        "cols":[{"name":"id"},{"name":"val","meta":{"unit":"kW"}}],
        "rows":[{"id":{"_kind":"ref","val":"p1"},"val":{"_kind":"number","val":5,"unit":"kW"}},{"id":{"_kind":"ref","val":"p2"}}]}"#;
    let grid = hayson::decode_grid(text)?;
    assert_eq!(grid.row_count(), 2);
    assert_eq!(grid.meta.get("ver"), None);
    assert_eq!(
        grid.columns()[1].meta.get("unit"),
        Some(&Value::Str("kW".into()))
    );
    assert_eq!(grid.get(1, "val"), None);
    assert_eq!(hayson::decode_grid(&hayson::encode_grid(&grid))?, grid);
    Ok(())
}

#[test]
fn v3_prefixed_strings() -> Result<(), Box<dyn std::error::Error>> {
    // Prefixes from the Haystack JSON v3 table.
    assert_eq!(old(r#""m:""#), Value::Marker);
    assert_eq!(old(r#""z:""#), Value::Na);
    assert_eq!(old(r#""-:""#), Value::Remove);
    assert_eq!(old(r#""n:10 kW""#), Value::number_with_unit(10.0, "kW"));
    assert_eq!(old(r#""n:INF""#), Value::number(f64::INFINITY));
    assert_eq!(
        old(r#""r:a-1 Main AHU""#),
        Value::Ref(Ref::with_dis("a-1", "Main AHU"))
    );
    assert_eq!(old(r#""s:x:y""#), Value::Str("x:y".into()));
    assert_eq!(old(r#""plain""#), Value::Str("plain".into()));
    assert_eq!(
        old(r#""d:2020-01-01""#),
        Value::Date(Date::new(2020, 1, 1)?)
    );
    assert_eq!(old(r#""h:10:00:00""#), Value::Time(Time::new(10, 0, 0, 0)?));
    assert_eq!(
        old(r#""t:2020-01-01T10:00:00-05:00 New_York""#),
        Value::DateTime(Box::new(DateTime::new(
            Date::new(2020, 1, 1)?,
            Time::new(10, 0, 0, 0)?,
            -18000,
            Some("New_York".into())
        )?))
    );
    assert_eq!(old(r#""u:http://x""#), Value::Uri("http://x".into()));
    assert_eq!(old(r#""y:elec""#), Value::Symbol("elec".into()));
    assert_eq!(v3::encode_value(&Value::Str("a:b".into())), r#""s:a:b""#);
    assert_eq!(
        v3::encode_value(&Value::number_with_unit(10.0, "kW")),
        r#""n:10 kW""#
    );
    let grid = v3::decode_grid(
        r#"{"meta":{"ver":"3.0"},"cols":[{"name":"a","dis":"A"}],"rows":[{"a":"c:1.5,2"}]}"#,
    )?;
    assert_eq!(
        grid.columns()[0].meta.get("dis"),
        Some(&Value::Str("A".into()))
    );
    assert_eq!(v3::decode_grid(&v3::encode_grid(&grid))?, grid);
    Ok(())
}

#[test]
fn malformed_json_reports_location() {
    let e = hayson::decode_value("{\n  \"a\": [1,,2]\n}").err();
    let e = e.map(|e| {
        (
            e.line_column(),
            matches!(e.kind, DecodeErrorKind::JsonSyntax(_)),
        )
    });
    assert_eq!(e, Some((Some((2, 11)), true)));
    // Columns count characters, also for JSON: `°` is two bytes but one column.
    let e = hayson::decode_value("[\"°\",,1]")
        .err()
        .map(|e| e.line_column());
    assert_eq!(e, Some(Some((1, 6))));
    let e = hayson::decode_grid(r#"{"_kind":"grid","meta":{"ver":"3.0"},"cols":[{"name":"a"}],"rows":[{"a":1},{"a":{"_kind":"date","val":"2021-02-29"}}]}"#).err();
    assert_eq!(
        e.map(|e| e.location),
        Some(Location::Path("rows[1].a.val".into()))
    );
    let e = hayson::decode_grid(r#"{"cols":[{"name":"a"}],"rows":[{"b":1}]}"#).err();
    assert_eq!(
        e.map(|e| (e.location, e.kind)),
        Some((
            Location::Path("rows[0].b".into()),
            DecodeErrorKind::JsonContent("no column named \"b\"".into())
        ))
    );
    let e = hayson::decode_value(r#"{"_kind":"bogus"}"#).err();
    assert_eq!(e.map(|e| e.location), Some(Location::Path("_kind".into())));
    let e = hayson::decode_value(r#"{"Bad":1}"#).err();
    assert_eq!(
        e.map(|e| e.kind),
        Some(DecodeErrorKind::InvalidTagName("Bad".into()))
    );
    let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
    assert_eq!(
        hayson::decode_value(&deep).err().map(|e| e.kind),
        Some(DecodeErrorKind::TooDeep(crate::codec::MAX_DEPTH))
    );
    assert!(v3::decode_value(r#""n:ten""#).is_err());
    assert!(
        v3::decode_value(r#""r:bad id!""#).is_err() || v3::decode_value(r#""r:bad!""#).is_err()
    );
}

proptest! {
    #[test]
    fn hayson_round_trip(grid in small_grid(nested_value())) {
        let text = hayson::encode_grid(&grid);
        let decoded = hayson::decode_grid(&text);
        prop_assert!(decoded.is_ok(), "{:?}\n{}", decoded, text);
        prop_assert_eq!(decoded.ok(), Some(grid));
    }

    #[test]
    fn v3_round_trip(grid in small_grid(nested_value())) {
        let text = v3::encode_grid(&grid);
        let decoded = v3::decode_grid(&text);
        prop_assert!(decoded.is_ok(), "{:?}\n{}", decoded, text);
        prop_assert_eq!(decoded.ok(), Some(grid));
    }
}

/// Hayson / v3 token soup: the `json` fuzz target's property on stable Rust.
fn json_soup() -> impl Strategy<Value = String> {
    let token = prop::sample::select(vec![
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "\"_kind\"",
        "\"marker\"",
        "\"number\"",
        "\"val\"",
        "\"unit\"",
        "\"kW\"",
        "1",
        "-2.5e3",
        "\"INF\"",
        "\"grid\"",
        "\"meta\"",
        "\"ver\"",
        "\"3.0\"",
        "\"cols\"",
        "\"rows\"",
        "\"name\"",
        "\"a\"",
        "\"dateTime\"",
        "\"2020-01-01T00:00:00Z\"",
        "\"tz\"",
        "\"UTC\"",
        "\"ref\"",
        "\"dis\"",
        "\"n:1 kW\"",
        "\"r:x y\"",
        "\"s:a:b\"",
        "\"m:\"",
        "null",
        "true",
        "\"coord\"",
        "\"lat\"",
        "\"lng\"",
        "\"c:1,2\"",
        "\"t:2020-01-01T00:00:00Z UTC\"",
    ]);
    proptest::collection::vec(token, 0..40).prop_map(|tokens| tokens.concat())
}

proptest! {
    #[test]
    fn whatever_decodes_round_trips(text in json_soup()) {
        if let Ok(value) = hayson::decode_value(&text) {
            let encoded = hayson::encode_value(&value);
            prop_assert_eq!(hayson::decode_value(&encoded).ok(), Some(value), "{:?} -> {:?}", text, encoded);
        }
        if let Ok(grid) = hayson::decode_grid(&text) {
            let encoded = hayson::encode_grid(&grid);
            prop_assert_eq!(hayson::decode_grid(&encoded).ok(), Some(grid), "{:?} -> {:?}", text, encoded);
        }
        if let Ok(value) = v3::decode_value(&text) {
            let encoded = v3::encode_value(&value);
            prop_assert_eq!(v3::decode_value(&encoded).ok(), Some(value), "{:?} -> {:?}", text, encoded);
        }
    }
}

/// Hayson with members in any order, kinded objects, escapes and odd numbers: the
/// direct scanner must agree with the tree decoder on every text it accepts.
fn hayson_soup() -> impl Strategy<Value = String> {
    let token = prop::sample::select(vec![
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        " ",
        "\"_kind\"",
        "\"marker\"",
        "\"number\"",
        "\"val\"",
        "\"unit\"",
        "\"kW\"",
        "0",
        "-0",
        "1",
        "-2.5e3",
        "1e400",
        "12345678901234567890",
        "0.1",
        "\"INF\"",
        "\"NaN\"",
        "\"grid\"",
        "\"meta\"",
        "\"ver\"",
        "\"3.0\"",
        "\"cols\"",
        "\"rows\"",
        "\"name\"",
        "\"a\"",
        "\"b\"",
        "\"B\"",
        "\"dict\"",
        "\"list\"",
        "\"vals\"",
        "\"dateTime\"",
        "\"2020-01-01T00:00:00Z\"",
        "\"tz\"",
        "\"UTC\"",
        "\"ref\"",
        "\"dis\"",
        "\"a\\u00e9\\n\"",
        "\"\\ud83d\\ude00\"",
        "\"\\ud83d\"",
        "null",
        "true",
        "false",
        "\"coord\"",
        "\"lat\"",
        "\"lng\"",
        "\"xstr\"",
        "\"type\"",
        "\"Hex\"",
        "\"str\"",
        "\"uri\"",
        "\"symbol\"",
        "\"date\"",
        "\"2021-02-29\"",
        "\"time\"",
        "\"10:00:00\"",
        "\"bool\"",
        "\"na\"",
        "\"remove\"",
    ]);
    proptest::collection::vec(token, 0..48).prop_map(|tokens| tokens.concat())
}

fn assert_scanner_agrees(text: &str) -> Result<(), TestCaseError> {
    if let Ok(value) = super::hayson_scan::scan_value(text) {
        prop_assert_eq!(
            hayson::decode_value_via_tree(text).ok(),
            Some(value),
            "{:?}",
            text
        );
    }
    if let Ok(grid) = super::hayson_scan::scan_grid(text) {
        prop_assert_eq!(
            hayson::decode_grid_via_tree(text).ok(),
            Some(grid),
            "{:?}",
            text
        );
    }
    Ok(())
}

proptest! {
    #[test]
    fn scanner_agrees_with_tree_on_soup(text in hayson_soup()) {
        assert_scanner_agrees(&text)?;
    }

    #[test]
    fn scanner_agrees_with_tree_on_json_soup(text in json_soup()) {
        assert_scanner_agrees(&text)?;
    }

    #[test]
    fn scanner_reads_what_the_encoder_writes(grid in small_grid(nested_value())) {
        // Our own output must take the fast path, not the fallback.
        let text = hayson::encode_grid(&grid);
        prop_assert_eq!(super::hayson_scan::scan_grid(&text).ok(), Some(grid), "{}", text);
    }
}

proptest! {
    #[test]
    fn rows_read_by_two_threads_equal_rows_read_by_one(grid in small_grid(nested_value())) {
        // Split every rows array, whatever its size: wherever the guessed row start falls
        // (between rows, or inside a nested dict or a string), the grid is the same.
        let text = hayson::encode_grid(&grid);
        let split = super::hayson_scan::scan_grid_splitting(&text, Some(0));
        let single = super::hayson_scan::scan_grid_splitting(&text, None);
        prop_assert_eq!(&split, &single, "{}", text);
        prop_assert_eq!(split.ok(), Some(grid), "{}", text);
    }
}

#[test]
fn rows_split_inside_a_string_are_read_again() {
    use super::hayson_scan::scan_grid_splitting;
    use crate::codec::SPLITS_JOINED;
    use std::sync::atomic::Ordering;
    // Strings that look like row boundaries (`},{`) everywhere, and real boundaries.
    let mut grid = Grid::with_column_names(["id", "note", "n"]).expect("valid columns");
    for i in 0..400 {
        let note = format!("{{\"a\":{i}}},{{\"note\":\"x\"}}, {{ }},{{");
        grid.push_row(vec![
            Some(Value::Ref(Ref::new(format!("r{i}")))),
            Some(Value::Str(note)),
            (i % 3 == 0).then(|| Value::number(f64::from(i))),
        ])
        .expect("row fits");
    }
    let text = hayson::encode_grid(&grid);
    let joined_before = SPLITS_JOINED.load(Ordering::Relaxed);
    assert_eq!(scan_grid_splitting(&text, Some(0)).ok(), Some(grid.clone()));
    // The same grid with one string per row shifted so that a guess lands in a string.
    let mut shifted = Grid::with_column_names(["note"]).expect("valid column");
    for i in 0..400 {
        let row = vec![Some(Value::Str(format!("{i}}},{{\"note\":\"{i}\"}}")))];
        shifted.push_row(row).expect("row fits");
    }
    let text = hayson::encode_grid(&shifted);
    assert_eq!(scan_grid_splitting(&text, Some(0)).ok(), Some(shifted));
    // Plain rows: the guess is a row start and the two parts are joined (other tests
    // may add to the counter concurrently, never subtract).
    let mut plain = Grid::with_column_names(["n"]).expect("valid column");
    for i in 0..400 {
        plain
            .push_row(vec![Some(Value::number(f64::from(i)))])
            .expect("row fits");
    }
    let text = hayson::encode_grid(&plain);
    assert_eq!(scan_grid_splitting(&text, Some(0)).ok(), Some(plain));
    assert!(SPLITS_JOINED.load(Ordering::Relaxed) > joined_before);
}

#[test]
fn scanner_handles_the_sample_buildings() {
    // The published example files must take the fast path (skipped when absent).
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/haystack");
    for name in ["alpha.json", "bravo.json"] {
        let Ok(text) = std::fs::read_to_string(dir.join(name)) else {
            continue;
        };
        let fast = super::hayson_scan::scan_grid_splitting(&text, None);
        assert!(fast.is_ok(), "{name}: the scanner gave up");
        let split = super::hayson_scan::scan_grid_splitting(&text, Some(0));
        assert_eq!(fast, split, "{name}: two threads read other rows than one");
        assert_eq!(
            fast.ok(),
            hayson::decode_grid_via_tree(&text).ok(),
            "{name}"
        );
    }
}

#[test]
fn scanner_gives_up_where_the_tree_decides() {
    use super::hayson_scan::{GiveUp, scan_grid, scan_value};
    // `_kind` after other members, a second `_kind`, and errors: all left to the tree.
    assert_eq!(scan_value(r#"{"val":"x","_kind":"str"}"#), Err(GiveUp));
    assert_eq!(
        hayson::decode_value(r#"{"val":"x","_kind":"str"}"#).ok(),
        Some(Value::Str("x".into()))
    );
    assert_eq!(
        scan_value(r#"{"_kind":"dict","_kind":"marker"}"#),
        Err(GiveUp)
    );
    assert_eq!(scan_value("[1,,2]"), Err(GiveUp));
    assert_eq!(
        scan_grid(r#"{"rows":[],"cols":[{"name":"a"}]}"#),
        Err(GiveUp)
    );
    assert_eq!(
        scan_value(r#"{"_kind":"number","val":"INF","unit":"°F"}"#),
        Ok(Value::number_with_unit(f64::INFINITY, "°F"))
    );
    assert_eq!(scan_value(r#""a\u00e9\"""#), Ok(Value::Str("aé\"".into())));
    assert_eq!(scan_value("\"\u{1}\""), Err(GiveUp));
}
