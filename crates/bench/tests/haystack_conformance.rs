//! Conformance: our decodings of the example buildings equal libhaystack's (an independent
//! Rust decoder), compared as canonical JSON v4 (Hayson) row by row, for Zinc, JSON and Trio.
//! The other independent decoder, haystack-core, is compared in
//! `tests/test_haystack_conformance.py`.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::path::PathBuf;

use buildwire_bench::haystack::decode::libhaystack_grid;
use buildwire_haystack::codec::Format;
use serde_json::{Value, json};

fn data_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/haystack");
    assert!(
        dir.join("alpha.zinc").is_file(),
        "{} is missing: clone the project next to shared/",
        dir.display()
    );
    dir
}

/// The liberties Hayson leaves that the two encoders take differently, folded: a unitless
/// number may be bare or a number object, integral floats may print as 5 or 5.0, a dict may
/// carry `"_kind": "dict"`, an empty unit may be absent, and fractional seconds may carry
/// trailing zeros (`10.870` is `10.87`; we trim them as haystack-core does, libhaystack pads
/// milliseconds).
fn normalize(value: &Value) -> Value {
    match value {
        Value::Object(map)
            if matches!(
                map.get("_kind").and_then(Value::as_str),
                Some("dateTime" | "time")
            ) =>
        {
            let mut out = map.clone();
            if let Some(text) = map.get("val").and_then(Value::as_str) {
                out.insert("val".into(), json!(trim_fraction(text)));
            }
            Value::Object(out)
        }
        Value::Number(n) => json!({"_kind": "number", "val": n.as_f64()}),
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        Value::Object(map) if map.get("_kind") == Some(&json!("number")) => {
            let mut out = serde_json::Map::new();
            out.insert("_kind".into(), json!("number"));
            let val = &map["val"];
            out.insert(
                "val".into(),
                val.as_f64().map_or_else(|| val.clone(), |f| json!(f)),
            );
            if let Some(unit) = map.get("unit").filter(|u| !u.is_null() && *u != "") {
                out.insert("unit".into(), unit.clone());
            }
            Value::Object(out)
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, v)| !(k.as_str() == "_kind" && *v == "dict"))
                .map(|(k, v)| (k.clone(), normalize(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `01:00:10.870-04:00` -> `01:00:10.87-04:00`; `10.000` -> `10`.
fn trim_fraction(text: &str) -> String {
    let Some(dot) = text.find('.') else {
        return text.to_owned();
    };
    let digits_end = text[dot + 1..]
        .find(|c: char| !c.is_ascii_digit())
        .map_or(text.len(), |i| dot + 1 + i);
    let fraction = text[dot + 1..digits_end].trim_end_matches('0');
    let head = if fraction.is_empty() {
        &text[..dot]
    } else {
        &text[..dot + 1 + fraction.len()]
    };
    format!("{head}{}", &text[digits_end..])
}

#[test]
fn fraction_trimming() {
    assert_eq!(
        trim_fraction("2020-07-10T01:00:10.870-04:00"),
        "2020-07-10T01:00:10.87-04:00"
    );
    assert_eq!(trim_fraction("10:00:00.000"), "10:00:00");
    assert_eq!(trim_fraction("10:00:00Z"), "10:00:00Z");
}

fn compare(name: &str, format: Format, expected_rows: usize) {
    let text = std::fs::read_to_string(data_dir().join(format!("{name}.{format}"))).unwrap();
    let ours: Value =
        serde_json::from_str(&Format::Json.encode_grid(&format.decode_grid(&text).unwrap()))
            .unwrap();
    let theirs = serde_json::to_value(libhaystack_grid(format, &text).unwrap()).unwrap();
    let (our_rows, their_rows) = (
        ours["rows"].as_array().unwrap(),
        theirs["rows"].as_array().unwrap(),
    );
    assert_eq!(our_rows.len(), expected_rows);
    assert_eq!(their_rows.len(), expected_rows);
    let differing: Vec<usize> = (0..expected_rows)
        .filter(|&i| normalize(&our_rows[i]) != normalize(&their_rows[i]))
        .collect();
    if let Some(&first) = differing.first() {
        panic!(
            "{name}.{format}: {} rows differ; first, row {first}:\nours   {}\ntheirs {}",
            differing.len(),
            normalize(&our_rows[first]),
            normalize(&their_rows[first])
        );
    }
    if format != Format::Trio {
        // Trio holds records only: no grid meta.
        assert_eq!(
            normalize(&ours["meta"]),
            normalize(&theirs["meta"]),
            "{name}.{format} meta"
        );
        let names = |v: &Value| -> Vec<String> {
            v["cols"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["name"].to_string())
                .collect()
        };
        assert_eq!(names(&ours), names(&theirs), "{name}.{format} columns");
    }
}

#[test]
fn alpha_zinc() {
    compare("alpha", Format::Zinc, 2032);
}

#[test]
fn alpha_json() {
    compare("alpha", Format::Json, 2032);
}

#[test]
fn alpha_trio() {
    compare("alpha", Format::Trio, 2032);
}

#[test]
fn bravo_zinc() {
    compare("bravo", Format::Zinc, 1077);
}

#[test]
fn bravo_json() {
    compare("bravo", Format::Json, 1077);
}

#[test]
fn bravo_trio() {
    compare("bravo", Format::Trio, 1077);
}
