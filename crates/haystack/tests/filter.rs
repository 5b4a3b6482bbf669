//! Filter parser, printer and evaluator tests: a corpus of filters (including the
//! examples of the Project Haystack 4 "Filters" chapter) that must print canonically
//! and re-parse to the same tree, error positions, limits against hostile input, and
//! the comparison semantics (units, kinds, missing tags, refs, `->`, dates).

use std::collections::HashMap;

use buildwire_haystack::filter::{
    CmpOp, Filter, FilterError, FilterErrorKind, MAX_DEPTH, MAX_FILTER_LEN, MAX_TERMS, NoRefs,
    Path, RefResolver, parse,
};
use buildwire_haystack::{Date, DateTime, Dict, Ref, Time, Value};
use proptest::prelude::*;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// (input, canonical text).
const CORPUS: &[(&str, &str)] = &[
    // Examples from the "Filters" chapter, section Usage.
    ("site", "site"),
    ("geoPostalCode == \"23220\"", "geoPostalCode == \"23220\""),
    ("geoPostalCode != \"23220\"", "geoPostalCode != \"23220\""),
    ("curVal < 75", "curVal < 75"),
    ("curVal <= 75", "curVal <= 75"),
    ("curVal > 75", "curVal > 75"),
    ("curVal >= 75", "curVal >= 75"),
    ("site or equip", "site or equip"),
    ("equip and hvac", "equip and hvac"),
    ("equip and not ahu", "equip and not ahu"),
    // Section Arrow Operator.
    (
        "equip and siteRef->geoCity == \"Chicago\"",
        "equip and siteRef->geoCity == \"Chicago\"",
    ),
    // Section Ref Lists.
    ("airRef==@vav-1", "airRef == @vav-1"),
    // Literals of every kind.
    ("enabled==true", "enabled == true"),
    ("enabled != false", "enabled != false"),
    ("temp > 70°F", "temp > 70°F"),
    ("flow >= -1.5e3gal/min", "flow >= -1500gal/min"),
    ("big > 1_000", "big > 1000"),
    ("uri == `http://x/y`", "uri == `http://x/y`"),
    ("sym == ^elec-meter", "sym == ^elec-meter"),
    ("d >= 2024-02-29", "d >= 2024-02-29"),
    ("t < 08:30:00", "t < 08:30:00"),
    ("t < 08:30:00.5", "t < 08:30:00.5"),
    (
        "ts > 2020-07-10T01:00:09.879-04:00 New_York",
        "ts > 2020-07-10T01:00:09.879-04:00 New_York",
    ),
    ("ts < 2020-01-01T00:00:00Z", "ts < 2020-01-01T00:00:00Z"),
    (
        "s == \"a \\\"quoted\\\" \\n line\"",
        "s == \"a \\\"quoted\\\" \\n line\"",
    ),
    ("s == \"é\"", "s == \"é\""),
    ("ref == @p:demo:r:2f0c", "ref == @p:demo:r:2f0c"),
    // Structure and parentheses.
    ("a and b or c", "a and b or c"),
    ("a or b and c", "a or b and c"),
    ("(a or b) and c", "(a or b) and c"),
    ("a and (b or c)", "a and (b or c)"),
    ("(a and b) and c", "(a and b) and c"),
    ("a and (b and c)", "a and (b and c)"),
    ("(a or b) or c", "(a or b) or c"),
    ("((a))", "a"),
    ("  not   dis\t", "not dis"),
    ("notes", "notes"),
    ("not notes and android", "not notes and android"),
    ("orange or andes", "orange or andes"),
    ("a->b->c", "a->b->c"),
    ("not a->b", "not a->b"),
    ("(point)and(his)", "point and his"),
    ("x==1\nand\ny==2", "x == 1 and y == 2"),
    (
        "point and his and kind==\"Number\"",
        "point and his and kind == \"Number\"",
    ),
];

#[test]
fn corpus_prints_canonically_and_round_trips() -> TestResult {
    for (input, canonical) in CORPUS {
        let parsed = parse(input).map_err(|e| format!("{input:?}: {e}"))?;
        assert_eq!(&parsed.to_string(), canonical, "printing {input:?}");
        assert_eq!(parse(canonical)?, parsed, "re-parsing {canonical:?}");
    }
    Ok(())
}

#[test]
fn tree_shapes() -> TestResult {
    let has = |n: &str| Filter::Has(Path::tag(n));
    assert_eq!(
        parse("a and b or c")?,
        Filter::Or(vec![Filter::And(vec![has("a"), has("b")]), has("c")])
    );
    assert_eq!(
        parse("siteRef->geoCity == \"Chicago\"")?,
        Filter::Cmp {
            path: Path(vec!["siteRef".into(), "geoCity".into()]),
            op: CmpOp::Eq,
            value: Value::from("Chicago"),
        }
    );
    assert_eq!(
        parse("x <= 5kW")?,
        Filter::Cmp {
            path: Path::tag("x"),
            op: CmpOp::Le,
            value: Value::number_with_unit(5.0, "kW"),
        }
    );
    assert_eq!("equip".parse::<Filter>()?, has("equip"));
    assert_eq!(parse("a or b or c")?.term_count(), 3);
    Ok(())
}

fn error(input: &str) -> FilterError {
    match parse(input) {
        Ok(f) => panic!("{input:?} parsed as {f:?}"),
        Err(e) => e,
    }
}

#[test]
fn errors_carry_the_column() {
    let cases: &[(&str, usize, FilterErrorKind)] = &[
        ("", 1, FilterErrorKind::Empty),
        ("   ", 4, FilterErrorKind::Empty),
        (
            "site and",
            9,
            FilterErrorKind::UnexpectedEnd("a tag name, 'not' or '('"),
        ),
        (
            "site or )",
            9,
            FilterErrorKind::Unexpected {
                found: ')',
                expected: "a tag name, 'not' or '('",
            },
        ),
        (
            "(site",
            6,
            FilterErrorKind::UnexpectedEnd("')' or 'and'/'or'"),
        ),
        (
            "site)",
            5,
            FilterErrorKind::Unexpected {
                found: ')',
                expected: "'and', 'or' or the end of the filter",
            },
        ),
        (
            "a = 1",
            3,
            FilterErrorKind::Unexpected {
                found: '=',
                expected: "'==' (a single '=' is not an operator)",
            },
        ),
        ("a == N", 6, FilterErrorKind::UnsupportedLiteral("N".into())),
        (
            "a == INF",
            6,
            FilterErrorKind::UnsupportedLiteral("INF".into()),
        ),
        (
            "a == -INF",
            6,
            FilterErrorKind::UnsupportedLiteral("-INF".into()),
        ),
        (
            "a == NaN",
            6,
            FilterErrorKind::UnsupportedLiteral("NaN".into()),
        ),
        ("a == T", 6, FilterErrorKind::UnsupportedLiteral("T".into())),
        ("a ==", 5, FilterErrorKind::UnexpectedEnd("a value")),
        (
            "a == [1]",
            6,
            FilterErrorKind::Unexpected {
                found: '[',
                expected: "a value",
            },
        ),
        ("and", 1, FilterErrorKind::KeywordAsName("and".into())),
        (
            "equip and not (ahu or vav)",
            15,
            FilterErrorKind::Unexpected {
                found: '(',
                expected: "a tag path ('not' applies to a path, not a group)",
            },
        ),
        ("not or", 5, FilterErrorKind::KeywordAsName("or".into())),
        (
            "Site",
            1,
            FilterErrorKind::Unexpected {
                found: 'S',
                expected: "a tag name (starting with a lowercase letter)",
            },
        ),
        (
            "a->",
            4,
            FilterErrorKind::UnexpectedEnd("a tag name, 'not' or '('"),
        ),
        (
            "a == @",
            7,
            FilterErrorKind::UnexpectedEnd("a ref id after '@'"),
        ),
    ];
    for (input, column, kind) in cases {
        let e = error(input);
        assert_eq!(
            (&e.kind, e.column, e.line),
            (kind, *column, 1),
            "{input:?}: {e}"
        );
    }
}

#[test]
fn literal_errors_point_inside_the_literal() {
    // The Zinc reader reports the bad month; the column is mapped into the filter.
    let e = error("due > 2024-13-01");
    assert!(matches!(e.kind, FilterErrorKind::InvalidLiteral(_)), "{e}");
    assert_eq!(e.column, 7);
    let e = error("s == \"open");
    assert!(matches!(e.kind, FilterErrorKind::InvalidLiteral(_)), "{e}");
    assert_eq!(e.column, 11);
    let e = error("a and\n  b == \"x\\q\"");
    assert_eq!((e.line, e.column), (2, 10), "{e}");
    assert!(e.to_string().starts_with("filter line 2, column 10:"));
}

#[test]
fn hostile_filters_are_refused_quickly() {
    let start = std::time::Instant::now();
    let huge_or = vec!["a"; 100_000].join(" or ");
    assert!(matches!(
        error(&huge_or).kind,
        FilterErrorKind::TooLong {
            limit: MAX_FILTER_LEN,
            ..
        }
    ));
    let deep = format!("{}a{}", "(".repeat(10_000), ")".repeat(10_000));
    assert!(matches!(error(&deep).kind, FilterErrorKind::TooLong { .. }));
    // Deep but short enough: refused at the 33rd parenthesis.
    let deep = format!("{}a{}", "(".repeat(5_000), ")".repeat(5_000));
    let e = error(&deep);
    assert_eq!(e.kind, FilterErrorKind::TooDeep(MAX_DEPTH));
    assert_eq!(e.column, MAX_DEPTH + 1);
    // Within the length limit but over the term limit.
    let many = vec!["a"; MAX_TERMS + 1].join(" or ");
    assert!(many.len() <= MAX_FILTER_LEN);
    assert_eq!(error(&many).kind, FilterErrorKind::TooManyTerms(MAX_TERMS));
    let long_path = vec!["a"; 17].join("->");
    assert!(matches!(
        error(&long_path).kind,
        FilterErrorKind::PathTooLong(16)
    ));
    assert!(start.elapsed().as_secs() < 2, "took {:?}", start.elapsed());
    // Exactly at the limits is accepted.
    let ok_terms = vec!["a"; MAX_TERMS].join(" or ");
    assert!(parse(&ok_terms).is_ok());
    let ok_deep = format!("{}a{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
    assert!(parse(&ok_deep).is_ok());
}

// ---- semantics ----

fn dict(tags: &[(&str, Value)]) -> Dict {
    let mut d = Dict::new();
    for (name, value) in tags {
        if let Err(e) = d.insert(*name, value.clone()) {
            panic!("{e}");
        }
    }
    d
}

fn matches(filter: &str, d: &Dict) -> bool {
    match parse(filter) {
        Ok(f) => f.matches(d, &NoRefs),
        Err(e) => panic!("{filter:?}: {e}"),
    }
}

fn ts(y: i32, mo: u8, d: u8, h: u8, offset_hours: i32, tz: &str) -> Value {
    match (Date::new(y, mo, d), Time::new(h, 0, 0, 0)) {
        (Ok(date), Ok(time)) => {
            match DateTime::new(date, time, offset_hours * 3600, Some(tz.into())) {
                Ok(dt) => Value::from(dt),
                Err(e) => panic!("{e}"),
            }
        }
        _ => panic!("bad test timestamp"),
    }
}

#[test]
fn semantics_table() {
    let rec = dict(&[
        ("point", Value::Marker),
        ("plain", Value::number(75.0)),
        ("temp", Value::number_with_unit(75.0, "°F")),
        ("dis", Value::from("Bravo")),
        ("siteRef", Value::Ref(Ref::with_dis("s1", "Site One"))),
        (
            "airRef",
            Value::from(vec![Value::Ref(Ref::new("a1")), Value::Ref(Ref::new("a2"))]),
        ),
        ("enabled", Value::Bool(true)),
        (
            "day",
            Value::Date(Date::new(2024, 2, 29).unwrap_or_else(|e| panic!("{e}"))),
        ),
        (
            "at",
            Value::Time(Time::new(8, 30, 0, 0).unwrap_or_else(|e| panic!("{e}"))),
        ),
        ("ts", ts(2020, 1, 1, 0, -5, "New_York")),
        ("uri", Value::Uri("http://b".into())),
        ("sym", Value::Symbol("elec".into())),
        ("nothing", Value::Null),
    ]);
    let table: &[(&str, bool)] = &[
        ("point", true),
        ("not point", false),
        ("ahu", false),
        ("not ahu", true),
        ("nothing", false), // null is absent
        ("not nothing", true),
        // Units: no conversion, unit-less never equals a unit (chapter "Number Comparisons").
        ("plain == 75", true),
        ("temp == 75°F", true),
        ("temp == 75", false),
        ("plain == 75°F", false),
        ("temp == 75°C", false),
        ("temp != 75°C", true),
        ("plain != 75", false),
        ("temp > 74°F", true),
        ("temp > 74", false),
        ("temp < 76°C", false),
        ("temp >= 75°F", true),
        ("temp <= 75°F", true),
        // Missing tags never compare, not even with !=.
        ("missing != 1", false),
        ("missing == 1", false),
        ("missing < 1", false),
        // Kinds must agree.
        ("dis == 1", false),
        ("dis > 1", false),
        ("dis != 1", true),
        ("plain < \"z\"", false),
        // Strings by code point.
        ("dis > \"Alpha\"", true),
        ("dis < \"bravo\"", true),
        ("dis == \"Bravo\"", true),
        ("dis < \"Bravo\"", false),
        // Refs by id, display names ignored.
        ("siteRef == @s1", true),
        ("siteRef != @s1", false),
        ("siteRef == @s2", false),
        ("siteRef < @s2", true),
        // Ref lists match when any ref matches.
        ("airRef == @a2", true),
        ("airRef == @a3", false),
        ("enabled == true", true),
        ("enabled == false", false),
        ("enabled > false", true),
        ("day == 2024-02-29", true),
        ("day < 2024-03-01", true),
        ("day > 2024-03-01", false),
        ("at > 08:00:00", true),
        ("at < 08:29:59.999", false),
        // Timestamps as absolute instants: midnight in New York is 05:00 UTC.
        ("ts == 2020-01-01T05:00:00Z UTC", true),
        ("ts < 2020-01-01T05:00:01Z UTC", true),
        ("ts > 2020-01-01T04:00:00Z", true),
        ("ts > 2020-01-01T00:00:00-04:00 Halifax", true),
        ("uri == `http://b`", true),
        ("uri > `http://a`", true),
        ("sym == ^elec", true),
        ("sym == \"elec\"", false),
        // Arrow without a resolver: nothing to follow.
        ("siteRef->dis", false),
        ("not siteRef->dis", true),
        ("point and (ahu or enabled)", true),
        ("ahu or not point", false),
    ];
    for (filter, expected) in table {
        assert_eq!(matches(filter, &rec), *expected, "{filter}");
    }
}

struct Entities(HashMap<String, Dict>);

impl RefResolver for Entities {
    fn resolve(&self, reference: &Ref) -> Option<&Dict> {
        self.0.get(&reference.id)
    }
}

#[test]
fn arrows_follow_refs_nested_dicts_and_ref_lists() -> TestResult {
    let site = dict(&[("site", Value::Marker), ("geoCity", Value::from("Chicago"))]);
    let equip = dict(&[
        ("equip", Value::Marker),
        ("siteRef", Value::Ref(Ref::with_dis("site", "The site"))),
    ]);
    let looped = dict(&[("selfRef", Value::Ref(Ref::new("loop")))]);
    let resolver = Entities(HashMap::from([
        ("site".to_owned(), site),
        ("equip".to_owned(), equip),
        ("loop".to_owned(), looped.clone()),
    ]));
    let point = dict(&[
        ("point", Value::Marker),
        ("equipRef", Value::Ref(Ref::new("equip"))),
        ("meta", Value::from(dict(&[("owner", Value::from("ops"))]))),
        (
            "airRef",
            Value::from(vec![
                Value::Ref(Ref::new("nope")),
                Value::Ref(Ref::new("site")),
            ]),
        ),
        ("deadRef", Value::Ref(Ref::new("gone"))),
    ]);
    let check = |f: &str| -> Result<bool, FilterError> { Ok(parse(f)?.matches(&point, &resolver)) };
    assert!(check("equipRef->siteRef->geoCity == \"Chicago\"")?);
    assert!(check("equipRef->siteRef->site")?);
    assert!(!check("equipRef->siteRef->geoCity == \"Denver\"")?);
    assert!(check("meta->owner == \"ops\"")?);
    assert!(check("airRef->geoCity")?);
    assert!(!check("deadRef->dis")?);
    assert!(check("not deadRef->dis")?);
    assert!(!check("point->x")?);
    // A cycle ends when the path does.
    let long = vec!["selfRef"; 16].join("->");
    assert!(!parse(&format!("{long} == 1"))?.matches(&looped, &resolver));
    assert!(parse(&long)?.matches(&looped, &resolver));
    Ok(())
}

// ---- property tests ----

fn arb_name() -> impl Strategy<Value = String> {
    "[a-z][a-zA-Z0-9_]{0,6}".prop_filter("keyword", |s| {
        !matches!(s.as_str(), "and" | "or" | "not" | "true" | "false")
    })
}

fn arb_literal() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<bool>().prop_map(Value::Bool),
        "[a-zA-Z0-9_:.~-]{1,8}".prop_map(|id| Value::Ref(Ref::new(id))),
        "\\PC{0,8}".prop_map(Value::Str),
        "[a-z/:.]{0,8}".prop_map(Value::Uri),
        "[a-z][a-zA-Z0-9_]{0,6}".prop_map(Value::Symbol),
        (
            -1.0e9f64..1.0e9,
            proptest::option::of(prop_oneof![
                Just("°F"),
                Just("kW"),
                Just("%"),
                Just("m³/h"),
                Just("ft²")
            ])
        )
            .prop_map(|(v, unit)| match unit {
                Some(u) => Value::number_with_unit(v, u),
                None => Value::number(v),
            }),
        (1900i32..2100, 1u8..=12, 1u8..=28).prop_filter_map("date", |(y, m, d)| {
            Date::new(y, m, d).ok().map(Value::Date)
        }),
        (0u8..24, 0u8..60, 0u8..60, 0u32..1_000_000_000).prop_filter_map("time", |(h, m, s, n)| {
            Time::new(h, m, s, n).ok().map(Value::Time)
        }),
        (
            2000i32..2030,
            1u8..=12,
            1u8..=28,
            0u8..24,
            -12i32..=14,
            prop_oneof![
                Just(None),
                Just(Some("UTC".to_owned())),
                Just(Some("New_York".to_owned()))
            ]
        )
            .prop_filter_map("datetime", |(y, mo, d, h, off, tz)| {
                let dt = DateTime::new(
                    Date::new(y, mo, d).ok()?,
                    Time::new(h, 1, 2, 0).ok()?,
                    off * 3600,
                    tz,
                )
                .ok()?;
                Some(Value::from(dt))
            }),
    ]
}

fn arb_path() -> impl Strategy<Value = Path> {
    proptest::collection::vec(arb_name(), 1..4).prop_map(Path)
}

fn arb_op() -> impl Strategy<Value = CmpOp> {
    proptest::sample::select(CmpOp::ALL.to_vec())
}

fn arb_filter() -> impl Strategy<Value = Filter> {
    let leaf = prop_oneof![
        arb_path().prop_map(Filter::Has),
        arb_path().prop_map(Filter::Missing),
        (arb_path(), arb_op(), arb_literal()).prop_map(|(path, op, value)| Filter::Cmp {
            path,
            op,
            value
        }),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 2..4).prop_map(Filter::And),
            proptest::collection::vec(inner, 2..4).prop_map(Filter::Or),
        ]
    })
}

proptest! {
    #[test]
    fn printed_filters_parse_back_to_the_same_tree(filter in arb_filter()) {
        let text = filter.to_string();
        let parsed = parse(&text).map_err(|e| TestCaseError::fail(format!("{text:?}: {e}")))?;
        prop_assert_eq!(&parsed, &filter, "{}", text);
        prop_assert_eq!(parsed.to_string(), text);
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,40}") {
        if let Ok(f) = parse(&text) {
            prop_assert_eq!(parse(&f.to_string()), Ok(f));
        }
    }
}
