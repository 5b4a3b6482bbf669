//! Trio tests: the specification's example, multi-line strings, nested Zinc grids,
//! malformed input and round trips.

use super::*;
use crate::codec::DecodeErrorKind;
use crate::codec::zinc::tests::nested_value;
use crate::value::{Coord, Value};
use proptest::prelude::*;

/// Example from the Haystack Trio documentation (docHaystack::Trio).
const SPEC_EXAMPLE: &str = "// Trio example
dis: \"Site 1\"
site
area: 3702ft²
geoAddr: \"100 Main St, Richmond, VA\"
geoCoord: C(37.5458266,-77.4491888)
strTag: OK if unquoted if only safe chars
summary:
  This is a string value which spans multiple
  lines with two or more space characters
---
name: \"Another record\"
";

#[test]
fn spec_example() -> Result<(), Box<dyn std::error::Error>> {
    let records = decode_records(SPEC_EXAMPLE)?;
    assert_eq!(records.len(), 2);
    let site = &records[0];
    assert_eq!(site.get("site"), Some(&Value::Marker));
    assert_eq!(
        site.get("area"),
        Some(&Value::number_with_unit(3702.0, "ft²"))
    );
    assert_eq!(
        site.get("geoCoord"),
        Some(&Value::Coord(Coord::new(37.5458266, -77.4491888)?))
    );
    assert_eq!(
        site.get("strTag"),
        Some(&Value::Str("OK if unquoted if only safe chars".into()))
    );
    assert_eq!(
        site.get("summary"),
        Some(&Value::Str(
            "This is a string value which spans multiple\nlines with two or more space characters"
                .into()
        ))
    );
    assert_eq!(
        records[1].get("name"),
        Some(&Value::Str("Another record".into()))
    );
    assert_eq!(decode_records(&encode_records(&records))?, records);
    Ok(())
}

#[test]
fn nested_zinc_grid() -> Result<(), Box<dyn std::error::Error>> {
    let text = "dis: \"Nested grid\"\ngrid: Zinc:\n  ver:\"3.0\"\n  a,b\n  1,2\n  3,4\n";
    let records = decode_records(text)?;
    let Some(Value::Grid(grid)) = records[0].get("grid") else {
        panic!("no grid")
    };
    assert_eq!(grid.row_count(), 2);
    assert_eq!(grid.get(1, "b"), Some(&Value::number(4.0)));
    let encoded = encode_records(&records);
    assert_eq!(
        encoded,
        "dis:Nested grid\ngrid:Zinc:\n  ver:\"3.0\"\n  a,b\n  1,2\n  3,4\n"
    );
    assert_eq!(decode_records(&encoded)?, records);
    Ok(())
}

#[test]
fn strings_that_look_like_values_are_quoted() {
    let mut d = Dict::new();
    for (name, s) in [
        ("a", "T"),
        ("b", "NA"),
        ("c", "12kW"),
        ("d", " padded"),
        ("e", "Zinc:"),
        ("f", "\"q\""),
    ] {
        let _ = d.insert(name, Value::Str(s.into()));
    }
    let text = encode_records(std::slice::from_ref(&d));
    assert_eq!(
        text,
        "a:\"T\"\nb:\"NA\"\nc:\"12kW\"\nd:\" padded\"\ne:\"Zinc:\"\nf:\"\\\"q\\\"\"\n"
    );
    assert_eq!(decode_records(&text).ok(), Some(vec![d]));
}

#[test]
fn malformed_input_reports_line_and_column() {
    let e = decode_records("id:@a\ndis:\"open\n")
        .err()
        .map(|e| (e.line_column(), e.kind));
    assert_eq!(
        e,
        Some((
            Some((2, 10)),
            DecodeErrorKind::Unexpected {
                found: '\n',
                expected: "'\"' closing the string"
            }
        ))
    );
    let e = decode_records("a\nBad:1\n")
        .err()
        .map(|e| (e.line_column(), e.kind));
    assert_eq!(
        e,
        Some((Some((2, 1)), DecodeErrorKind::InvalidTagName("Bad".into())))
    );
    let e = decode_records("a:1\na:2\n").err().map(|e| e.kind);
    assert_eq!(e, Some(DecodeErrorKind::DuplicateName("a".into())));
    let e = decode_records("g:Zinc:\n  ver:\"3.0\"\n  a\n  1,2\n")
        .err()
        .map(|e| (e.line_column(), e.kind));
    assert_eq!(e, Some((Some((4, 4)), DecodeErrorKind::RowTooWide(1))));
    let e = decode_records("a\n\tb\n")
        .err()
        .map(|e| (e.line_column(), e.kind));
    assert_eq!(
        e,
        Some((
            Some((2, 1)),
            DecodeErrorKind::Unexpected {
                found: '\t',
                expected: "a tag name at the start of the line"
            }
        ))
    );
    let e = decode_records("a=1\n").err().map(|e| e.kind);
    assert_eq!(
        e,
        Some(DecodeErrorKind::Unexpected {
            found: '=',
            expected: "':' or the end of the line"
        })
    );
}

fn record() -> impl Strategy<Value = Dict> {
    let text = prop_oneof![
        any::<String>().prop_map(Value::Str),
        "[a-zA-Z °/-]{1,20}".prop_map(Value::Str),
        "[a-z]{1,5}(\n[ a-z]{0,5}){1,3}".prop_map(Value::Str),
    ];
    proptest::collection::vec(
        ("[a-z][a-zA-Z0-9_]{0,6}", prop_oneof![text, nested_value()]),
        1..6,
    )
    .prop_map(|pairs| {
        let mut dict = Dict::new();
        for (name, value) in pairs {
            let _ = dict.insert(name, value);
        }
        dict
    })
}

proptest! {
    #[test]
    fn records_round_trip(records in proptest::collection::vec(record(), 0..4)) {
        let text = encode_records(&records);
        let decoded = decode_records(&text);
        prop_assert!(decoded.is_ok(), "{:?}\n{}", decoded, text);
        prop_assert_eq!(decoded.ok(), Some(records), "{}", text);
    }

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        let _ = decode_records(&text);
    }
}

/// Trio-flavoured token soup: the `trio` fuzz target's property on stable Rust.
fn trio_soup() -> impl Strategy<Value = String> {
    let token = prop::sample::select(vec![
        "a",
        "b",
        "dis",
        ":",
        "\n",
        "  ",
        "\t",
        "---",
        "//",
        "Zinc:",
        "ver:\"3.0\"",
        "x,y",
        "1",
        "M",
        "T",
        "\"q\"",
        "[",
        "]",
        "{",
        "}",
        "<<",
        ">>",
        "@r",
        "Hello World",
        "°F",
        "N",
        "-",
    ]);
    proptest::collection::vec(token, 0..40).prop_map(|tokens| tokens.concat())
}

proptest! {
    #[test]
    fn whatever_decodes_round_trips(text in trio_soup()) {
        if let Ok(records) = decode_records(&text) {
            let encoded = encode_records(&records);
            prop_assert_eq!(decode_records(&encoded).ok(), Some(records), "{:?} -> {:?}", text, encoded);
        }
    }
}

/// Trio grids: the direct grid builder must give the grid built from the records.
fn assert_grid_matches_records(text: &str) -> Result<(), TestCaseError> {
    let via_records = decode_records(text).map(|r| crate::value::Grid::from_dicts(&r));
    match (decode_grid(text), via_records) {
        (Ok(grid), Ok(Ok(expected))) => prop_assert_eq!(grid, expected, "{:?}", text),
        (Err(e), Err(expected)) => prop_assert_eq!(e, expected, "{:?}", text),
        (got, expected) => prop_assert!(false, "{:?}: {:?} vs {:?}", text, got, expected),
    }
    Ok(())
}

proptest! {
    #[test]
    fn grid_decoder_agrees_with_records(text in trio_soup()) {
        assert_grid_matches_records(&text)?;
    }

    #[test]
    fn grid_decoder_agrees_on_round_trips(records in proptest::collection::vec(record(), 0..4)) {
        assert_grid_matches_records(&encode_records(&records))?;
    }

    #[test]
    fn plain_text_shortcut_only_skips_failing_zinc(
        text in "(T|F|M|N|R|NA|INF|NaN|C|Hex|Alpha|a|°F|x_1)[ ()\"a-zA-Z0-9,.-]{0,6}"
    ) {
        // The shortcut may only take text that the Zinc reader would not read as a
        // whole value on the line.
        if super::reader::is_plain_text(&text) {
            let mut reader = crate::codec::zinc::ZincReader::new(&text)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let whole = reader.read_value().is_ok() && reader.at_line_end_after_spaces();
            prop_assert!(!whole, "{:?}", text);
        }
    }
}

#[test]
fn duplicate_tags_are_reported_by_both_decoders() {
    let text = "a\nb:1\n---\na:2\nb\na:3\n";
    let expected = decode_records(text).err();
    assert_eq!(
        expected.as_ref().map(|e| &e.kind),
        Some(&DecodeErrorKind::DuplicateName("a".into()))
    );
    assert_eq!(decode_grid(text).err(), expected);
    let grid = decode_grid("a\n---\n---\nb:1\na:Hello World\n");
    assert_eq!(grid.as_ref().map(|g| g.row_count()).ok(), Some(2));
    assert_eq!(
        grid.ok().and_then(|g| g.get(1, "a").cloned()),
        Some(Value::Str("Hello World".into()))
    );
}
