//! Zinc decoder/encoder tests: spec examples, edge cases, malformed input, round trips.

use super::*;
use crate::codec::{DecodeErrorKind, MAX_DEPTH};
use crate::value::{Coord, Date, DateTime, Dict, Number, Ref, Time, XStr};
use proptest::prelude::*;

fn value(text: &str) -> Value {
    match decode_value(text) {
        Ok(v) => v,
        Err(e) => panic!("{text:?}: {e}"),
    }
}

fn error_kind(text: &str) -> DecodeErrorKind {
    match decode_value(text) {
        Ok(v) => panic!("{text:?} decoded to {v:?}"),
        Err(e) => e.kind,
    }
}

#[test]
fn numbers_units_and_exponents() {
    // Haystack Zinc grammar: <exp> needs a digit after e/E, otherwise it begins the unit.
    assert_eq!(value("10.6EER"), Value::number_with_unit(10.6, "EER"));
    assert_eq!(value("1e5"), Value::number(1e5));
    assert_eq!(value("1E-3"), Value::number(1e-3));
    assert_eq!(value("2.5e+2kW"), Value::number_with_unit(250.0, "kW"));
    assert_eq!(value("-12.5°F"), Value::number_with_unit(-12.5, "°F"));
    assert_eq!(value("100%"), Value::number_with_unit(100.0, "%"));
    assert_eq!(value("3$"), Value::number_with_unit(3.0, "$"));
    assert_eq!(value("9BTU/lb"), Value::number_with_unit(9.0, "BTU/lb"));
    assert_eq!(value("4kW_h"), Value::number_with_unit(4.0, "kW_h"));
    assert_eq!(value("151455ft²"), Value::number_with_unit(151455.0, "ft²"));
    assert_eq!(value("1_000_000"), Value::number(1e6));
    assert_eq!(value("INF"), Value::number(f64::INFINITY));
    assert_eq!(value("-INF"), Value::number(f64::NEG_INFINITY));
    assert_eq!(value("NaN"), Value::number(f64::NAN));
    assert_eq!(
        encode_value(&Value::number_with_unit(10.6, "EER")),
        "10.6EER"
    );
    assert_eq!(encode_value(&Value::number_with_unit(1e20, "kW")), "1e20kW");
    assert_eq!(Value::number_with_unit(-3.5, "°F").to_string(), "-3.5°F");
}

#[test]
fn scalars() -> Result<(), Box<dyn std::error::Error>> {
    assert_eq!(value("M"), Value::Marker);
    assert_eq!(value("NA"), Value::Na);
    assert_eq!(value("R"), Value::Remove);
    assert_eq!(value("N"), Value::Null);
    assert_eq!(value("T"), Value::Bool(true));
    assert_eq!(value("F"), Value::Bool(false));
    assert_eq!(
        value(r#""a\b\f\n\r\t\"\\\$\u00e9\ud83d\ude00""#),
        Value::Str("a\u{8}\u{c}\n\r\t\"\\$é😀".into())
    );
    assert_eq!(
        value(r"`http://x/a\?b\`c`"),
        Value::Uri(r"http://x/a\?b`c".into())
    );
    assert_eq!(value("@a-0001"), Value::Ref(Ref::new("a-0001")));
    assert_eq!(
        value(r#"@a:b.c~d "Dis""#),
        Value::Ref(Ref::with_dis("a:b.c~d", "Dis"))
    );
    assert_eq!(value("^elec-meter"), Value::Symbol("elec-meter".into()));
    assert_eq!(value("2020-04-03"), Value::Date(Date::new(2020, 4, 3)?));
    assert_eq!(
        value("23:59:01.5"),
        Value::Time(Time::new(23, 59, 1, 500_000_000)?)
    );
    assert_eq!(
        value("C(39.04532,-103.57159)"),
        Value::Coord(Coord::new(39.04532, -103.57159)?)
    );
    assert_eq!(
        value(r#"Span("2020-01-01")"#),
        Value::XStr(Box::new(XStr {
            type_name: "Span".into(),
            value: "2020-01-01".into()
        }))
    );
    Ok(())
}

#[test]
fn datetimes_with_offsets_and_zones() -> Result<(), Box<dyn std::error::Error>> {
    let date = Date::new(2020, 1, 1)?;
    let ten = Time::new(10, 0, 0, 0)?;
    let cases = [
        (
            "2020-01-01T10:00:00-05:00 New_York",
            -18000,
            Some("New_York"),
        ),
        ("2020-01-01T10:00:00Z UTC", 0, Some("UTC")),
        ("2020-01-01T10:00:00Z", 0, None),
        ("2020-01-01T10:00:00+05:00 GMT-5", 18000, Some("GMT-5")),
    ];
    for (text, offset, tz) in cases {
        let expected = DateTime::new(date, ten, offset, tz.map(String::from))?;
        assert_eq!(value(text), Value::DateTime(Box::new(expected)), "{text}");
        assert_eq!(encode_value(&value(text)), text);
    }
    // Inside a dict a lower-case name after the space is the next tag, not a zone.
    let dict = value("{t:2020-01-01T10:00:00Z next}");
    let Value::Dict(dict) = dict else {
        panic!("not a dict")
    };
    assert_eq!(dict.get("next"), Some(&Value::Marker));
    Ok(())
}

#[test]
fn collections() -> Result<(), Box<dyn std::error::Error>> {
    assert_eq!(
        value("[1, \"two\", N]"),
        Value::List(vec![
            Value::number(1.0),
            Value::Str("two".into()),
            Value::Null
        ])
    );
    let mut dict = Dict::new();
    dict.insert("dis", Value::Str("Dict!".into()))?;
    dict.insert_marker("foo")?;
    assert_eq!(value("{dis:\"Dict!\" foo}"), Value::from(dict.clone()));
    assert_eq!(value("{dis:\"Dict!\", foo}"), Value::from(dict));
    assert_eq!(value("[]"), Value::List(vec![]));
    assert_eq!(value("{}"), Value::from(Dict::new()));
    Ok(())
}

/// Example grid from the Haystack Zinc specification (docHaystack::Zinc, "Grid" section).
const SPEC_SITE_ENERGY: &str = "ver:\"3.0\" database:\"test\" dis:\"Site Energy Summary\"\n\
siteName dis:\"Sites\", val dis:\"Value\" unit:\"kW\"\n\
\"Site 1\", 356.214kW\n\
\"Site 2\", 463.028kW\n";

#[test]
fn spec_grid_with_meta() -> Result<(), DecodeError> {
    let grid = decode_grid(SPEC_SITE_ENERGY)?;
    assert_eq!(grid.meta.get("database"), Some(&Value::Str("test".into())));
    assert_eq!(
        grid.columns()[1].meta.get("unit"),
        Some(&Value::Str("kW".into()))
    );
    assert_eq!(grid.row_count(), 2);
    assert_eq!(
        grid.get(1, "val"),
        Some(&Value::number_with_unit(463.028, "kW"))
    );
    let canonical = encode_grid(&grid);
    assert_eq!(
        canonical,
        "ver:\"3.0\" database:\"test\" dis:\"Site Energy Summary\"\n\
         siteName dis:\"Sites\",val dis:\"Value\" unit:\"kW\"\n\
         \"Site 1\",356.214kW\n\"Site 2\",463.028kW\n"
    );
    assert_eq!(decode_grid(&canonical)?, grid);
    let mut via_method = String::new();
    Grid::decode_zinc(&canonical)?.encode_zinc(&mut via_method);
    assert_eq!(via_method, canonical);
    Ok(())
}

/// Nested collections example from the Zinc specification (indented nested grid).
#[test]
fn spec_nested_grid() -> Result<(), DecodeError> {
    let text = "ver:\"3.0\"\ntype,val\n\"list\",[1,2,3]\n\"dict\",{dis:\"Dict!\" foo}\n\
                \"grid\",<<\n  ver:\"2.0\"\n  a,b\n  1,2\n  3,4\n  >>\n\"scalar\",\"simple string\"\n";
    let grid = decode_grid(text)?;
    assert_eq!(grid.row_count(), 4);
    let Some(Value::Grid(inner)) = grid.get(2, "val") else {
        panic!("no nested grid")
    };
    assert_eq!(inner.row_count(), 2);
    assert_eq!(inner.get(1, "b"), Some(&Value::number(4.0)));
    assert_eq!(decode_grid(&encode_grid(&grid))?, grid);
    Ok(())
}

#[test]
fn empty_cells_and_empty_grid() -> Result<(), DecodeError> {
    let grid = decode_grid("ver:\"3.0\"\na,b,c\n,,\n1,,N\n")?;
    assert_eq!(
        grid.row(0).map(|r| r.to_vec()),
        Some(vec![None, None, None])
    );
    assert_eq!(
        grid.row(1).map(|r| r.to_vec()),
        Some(vec![Some(Value::number(1.0)), None, None])
    );
    let empty = decode_grid("ver:\"3.0\"\nempty\n")?;
    assert_eq!(empty.row_count(), 0);
    assert_eq!(encode_grid(&Grid::default()), "ver:\"3.0\"\nempty\n");
    let crlf = decode_grid("ver:\"3.0\"\r\na\r\n1\r\n")?;
    assert_eq!(crlf.get(0, "a"), Some(&Value::number(1.0)));
    Ok(())
}

#[test]
fn malformed_input_reports_line_and_column() {
    let e = decode_grid("ver:\"3.0\"\na,b\n1,2\n1,\"open\n").err();
    let e = e.map(|e| (e.line_column(), e.kind));
    assert_eq!(
        e,
        Some((
            Some((4, 8)),
            DecodeErrorKind::Unexpected {
                found: '\n',
                expected: "'\"' closing the string"
            }
        ))
    );
    let e = decode_grid("ver:\"3.0\"\na\n1,2\n")
        .err()
        .map(|e| (e.line_column(), e.kind));
    assert_eq!(e, Some((Some((3, 2)), DecodeErrorKind::RowTooWide(1))));
    let e = decode_grid("ver:\"9.0\"\na\n").err().map(|e| e.kind);
    assert_eq!(e, Some(DecodeErrorKind::UnsupportedVersion("9.0".into())));
    let e = decode_grid("ver:\"3.0\"\na,a\n").err().map(|e| e.kind);
    assert_eq!(e, Some(DecodeErrorKind::DuplicateName("a".into())));
    assert_eq!(error_kind(r#""\q""#), DecodeErrorKind::InvalidEscape);
    assert_eq!(error_kind(r#""\ud83d""#), DecodeErrorKind::InvalidEscape);
    assert!(matches!(
        error_kind("2021-02-29"),
        DecodeErrorKind::InvalidTemporal(_)
    ));
    assert!(matches!(
        error_kind("25:00:00"),
        DecodeErrorKind::InvalidTemporal(_)
    ));
    assert_eq!(error_kind("C(91,0)"), DecodeErrorKind::InvalidCoord);
    assert_eq!(
        error_kind("{a:1 a:2}"),
        DecodeErrorKind::DuplicateName("a".into())
    );
    assert_eq!(error_kind("1 2"), DecodeErrorKind::TrailingInput);
    assert_eq!(
        error_kind("1e400kW"),
        DecodeErrorKind::InvalidNumber("1e400".into())
    );
    assert_eq!(error_kind("[1,"), DecodeErrorKind::UnexpectedEnd("a value"));
    assert_eq!(
        error_kind("foo"),
        DecodeErrorKind::Unexpected {
            found: 'f',
            expected: "a value"
        }
    );
    assert_eq!(
        decode_grid_bytes(b"ver:\"3.0\"\na\n\xff\n")
            .err()
            .map(|e| (e.line_column(), e.kind)),
        Some((Some((3, 1)), DecodeErrorKind::InvalidUtf8))
    );
}

#[test]
fn nesting_is_limited() {
    let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
    assert_eq!(error_kind(&deep), DecodeErrorKind::TooDeep(MAX_DEPTH));
    let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert!(decode_value(&ok).is_ok());
}

#[test]
fn uri_backslashes_round_trip() {
    for uri in [r"a\b", r"a\\b", r"a\:b", "x`y\n", r"\"] {
        let v = Value::Uri(uri.into());
        assert_eq!(value(&encode_value(&v)), v, "{uri:?}");
    }
}

/// Strategy for scalar values that Zinc can carry exactly.
pub(crate) fn scalar() -> BoxedStrategy<Value> {
    let unit = "[a-zA-Z%$/_°²]{1,6}";
    let finite = prop_oneof![
        any::<f64>().prop_filter("finite", |f| f.is_finite()),
        -1e6f64..1e6
    ];
    prop_oneof![
        Just(Value::Marker),
        Just(Value::Na),
        Just(Value::Remove),
        any::<bool>().prop_map(Value::Bool),
        finite.clone().prop_map(Value::number),
        (finite, unit).prop_map(|(v, u)| Value::number_with_unit(v, &u)),
        prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY)]
            .prop_map(Value::number),
        any::<String>().prop_map(Value::Str),
        "[ -~é]{0,12}".prop_map(Value::Uri),
        (
            "[a-zA-Z0-9_:.~-]{1,12}",
            proptest::option::of(any::<String>())
        )
            .prop_map(|(id, dis)| Value::Ref(Ref { id, dis })),
        "[a-zA-Z0-9_:.~-]{1,12}".prop_map(Value::Symbol),
        (0i32..=9999, 1u8..=12, 1u8..=28)
            .prop_filter_map("date", |(y, m, d)| Date::new(y, m, d).ok().map(Value::Date)),
        (0u8..24, 0u8..60, 0u8..60, 0u32..1_000_000_000).prop_filter_map("time", |(h, m, s, n)| {
            Time::new(h, m, s, n).ok().map(Value::Time)
        }),
        (
            2000i32..2100,
            0u8..24,
            -18i32..=18,
            proptest::option::of("[A-Z][a-zA-Z_+-]{0,10}")
        )
            .prop_filter_map("datetime", |(y, h, off, tz)| {
                let date = Date::new(y, 3, 1).ok()?;
                let time = Time::new(h, 30, 15, 125_000_000).ok()?;
                DateTime::new(date, time, off * 3600 + 1800, tz)
                    .ok()
                    .map(|dt| Value::DateTime(Box::new(dt)))
            }),
        (-90.0f64..=90.0, -180.0f64..=180.0)
            .prop_filter_map("coord", |(a, b)| Coord::new(a, b).ok().map(Value::Coord)),
        ("[A-Z][a-zA-Z0-9_]{0,8}", any::<String>())
            .prop_map(|(type_name, value)| { Value::XStr(Box::new(XStr { type_name, value })) }),
    ]
    .boxed()
}

/// Strategy for nested values: lists, dicts and small grids of scalars.
pub(crate) fn nested_value() -> BoxedStrategy<Value> {
    scalar()
        .prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::List),
                proptest::collection::vec(("[a-z][a-zA-Z0-9_]{0,6}", inner.clone()), 0..4)
                    .prop_map(|pairs| {
                        let mut dict = Dict::new();
                        for (name, value) in pairs {
                            let _ = dict.insert(name, value);
                        }
                        Value::from(dict)
                    }),
                small_grid(inner).prop_map(|g| Value::Grid(Box::new(g))),
            ]
        })
        .boxed()
}

/// Strategy for grids with 1..4 columns and 0..5 rows of `cells`.
pub(crate) fn small_grid(
    cells: impl Strategy<Value = Value> + Clone,
) -> impl Strategy<Value = Grid> {
    (1usize..4, 0usize..5).prop_flat_map(move |(width, height)| {
        proptest::collection::vec(
            proptest::collection::vec(proptest::option::of(cells.clone()), width),
            height,
        )
        .prop_map(move |rows| {
            let names: Vec<String> = (0..width).map(|i| format!("c{i}")).collect();
            let mut grid = match Grid::with_column_names(names) {
                Ok(grid) => grid,
                Err(e) => panic!("{e}"),
            };
            let _ = grid.meta.insert_marker("generated");
            for row in rows {
                let _ = grid.push_row(row);
            }
            grid
        })
    })
}

proptest! {
    #[test]
    fn scalar_round_trip(v in scalar()) {
        let text = encode_value(&v);
        prop_assert_eq!(decode_value(&text).ok(), Some(v), "text {}", text);
    }

    #[test]
    fn grid_round_trip(grid in small_grid(nested_value())) {
        let text = encode_grid(&grid);
        let decoded = decode_grid(&text);
        prop_assert!(decoded.is_ok(), "{:?}\n{}", decoded, text);
        prop_assert_eq!(decoded.ok(), Some(grid));
    }

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        let _ = decode_grid(&text);
        let _ = decode_value(&text);
    }
}

#[test]
fn number_unit_helper_matches_reader() {
    assert!(Number::with_unit(1.0, "kW").has_zinc_safe_unit());
}

/// Zinc-flavoured token soup: exercises the same property as the `zinc` fuzz target
/// (whatever decodes must re-encode and decode to the same thing) on stable Rust.
pub(crate) fn zinc_soup() -> impl Strategy<Value = String> {
    let token = prop::sample::select(vec![
        "ver:\"3.0\"",
        "\n",
        ",",
        " ",
        "a",
        "b",
        "dis",
        ":",
        "M",
        "N",
        "NA",
        "R",
        "T",
        "F",
        "1",
        "-",
        "e",
        "E",
        "5",
        ".",
        "_",
        "\"x\"",
        "\"\\n\"",
        "\\",
        "@a-1",
        " \"d\"",
        "^s",
        "[",
        "]",
        "{",
        "}",
        "<<",
        ">>",
        "2020-01-01",
        "T10:00:00",
        ".5",
        "Z",
        "-05:00",
        " UTC",
        "C(1,2)",
        "C(",
        "X(\"y\")",
        "`u\\:`",
        "kW",
        "°F",
        "%",
        "INF",
        "-INF",
        "NaN",
        "\r\n",
    ]);
    (any::<bool>(), proptest::collection::vec(token, 0..40)).prop_map(|(header, tokens)| {
        let body: String = tokens.concat();
        if header {
            format!("ver:\"3.0\"\n{body}")
        } else {
            body
        }
    })
}

proptest! {
    #[test]
    fn whatever_decodes_round_trips(text in zinc_soup()) {
        if let Ok(grid) = decode_grid(&text) {
            let encoded = encode_grid(&grid);
            prop_assert_eq!(decode_grid(&encoded).ok(), Some(grid), "{:?} -> {:?}", text, encoded);
        }
        if let Ok(value) = decode_value(&text) {
            let encoded = encode_value(&value);
            prop_assert_eq!(decode_value(&encoded).ok(), Some(value), "{:?} -> {:?}", text, encoded);
        }
    }
}

#[test]
fn blank_lines_are_rows_until_the_end() -> Result<(), DecodeError> {
    let grid = decode_grid("ver:\"3.0\"\na,b\n1,2\n\n3,4\n\n\n")?;
    assert_eq!(grid.row_count(), 3);
    assert_eq!(grid.row(1).map(|r| r.to_vec()), Some(vec![None, None]));
    let nested = decode_value("<<\nver:\"3.0\"\na\n1\n\n  >>")?;
    let Value::Grid(nested) = nested else {
        panic!("not a grid")
    };
    assert_eq!(nested.row_count(), 1);
    // Many blank lines stay cheap (linear scan).
    let many = format!("ver:\"3.0\"\na,b\n{}1,2\n", "\n".repeat(200_000));
    assert_eq!(decode_grid(&many)?.row_count(), 200_001);
    assert!(matches!(
        decode_value("<<\nver:\"3.0\"\na\n1\n")
            .err()
            .map(|e| e.kind),
        Some(DecodeErrorKind::UnexpectedEnd(_))
    ));
    Ok(())
}

#[test]
fn wide_dicts_and_grids_stay_linear() -> Result<(), DecodeError> {
    let tags: Vec<String> = (0..50_000).map(|i| format!("t{i}")).collect();
    let Value::Dict(dict) = decode_value(&format!("{{{}}}", tags.join(" ")))? else {
        panic!("not a dict")
    };
    assert_eq!(dict.len(), 50_000);
    let columns = tags[..crate::codec::MAX_COLUMNS].join(",");
    let grid = decode_grid(&format!("ver:\"3.0\"\n{columns}\n"))?;
    assert_eq!(grid.columns().len(), crate::codec::MAX_COLUMNS);
    let too_many = tags[..crate::codec::MAX_COLUMNS + 1].join(",");
    assert_eq!(
        decode_grid(&format!("ver:\"3.0\"\n{too_many}\n"))
            .err()
            .map(|e| e.kind),
        Some(DecodeErrorKind::TooManyColumns(crate::codec::MAX_COLUMNS))
    );
    Ok(())
}

/// Decodes with the rows split between two threads whatever the grid's size.
fn decode_grid_split(input: &str) -> Result<Grid, DecodeError> {
    let mut reader = ZincReader::new(input)?.split_rows_from(0);
    let grid = reader.read_grid()?;
    reader.expect_end()?;
    Ok(grid)
}

fn decode_grid_one_thread(input: &str) -> Result<Grid, DecodeError> {
    let mut reader = ZincReader::new(input)?;
    let grid = reader.read_grid()?;
    reader.expect_end()?;
    Ok(grid)
}

proptest! {
    #[test]
    fn rows_read_by_two_threads_equal_rows_read_by_one(grid in small_grid(nested_value())) {
        // Nested grids span lines, so the guessed row start may fall inside one.
        let text = encode_grid(&grid);
        let split = decode_grid_split(&text);
        prop_assert_eq!(&split, &decode_grid_one_thread(&text), "{}", text);
        prop_assert_eq!(split.ok(), Some(grid), "{}", text);
    }
}

#[test]
fn split_rows_fall_back_inside_nested_grids_and_keep_error_positions() {
    use crate::codec::SPLITS_JOINED;
    use std::sync::atomic::Ordering;
    let mut text = String::from("ver:\"3.0\"\nid,n,inner\n");
    for i in 0..300 {
        text.push_str(&format!("@r{i},{i},"));
        if i % 7 == 0 {
            // A nested grid over several lines: a line start inside it is no row start.
            text.push_str("<<\nver:\"3.0\"\na,b\n1,2\n3,4\n>>");
        }
        text.push('\n');
    }
    let before = SPLITS_JOINED.load(Ordering::Relaxed);
    let split = decode_grid_split(&text);
    assert!(split.is_ok(), "{split:?}");
    assert_eq!(split, decode_grid_one_thread(&text));
    assert_eq!(split.map(|g| g.row_count()).ok(), Some(300));
    assert!(SPLITS_JOINED.load(Ordering::Relaxed) > before);
    // Only nested grids after the middle: every guess is inside one, or between rows.
    let mut nested = String::from("ver:\"3.0\"\nid,inner\n");
    for i in 0..40 {
        nested.push_str(&format!("@r{i},<<\nver:\"3.0\"\na\n{i}\n{i}\n>>\n"));
    }
    assert_eq!(decode_grid_split(&nested), decode_grid_one_thread(&nested));
    // An error in the second half: the same message and position either way.
    let broken = text.replacen("@r250,250,", "@r250,250,,,,", 1);
    let one = decode_grid_one_thread(&broken);
    assert!(one.is_err());
    assert_eq!(decode_grid_split(&broken), one);
}
