//! Decodes the Project Haystack example sites (alpha, bravo) in Zinc, JSON and Trio
//! from `/work/shared/data/haystack` and checks counts, known values, round trips
//! and that all three encodings agree row by row.

use buildwire_haystack::codec::{json, trio, zinc};
use buildwire_haystack::{Date, DateTime, Dict, Grid, Time, Value};
use std::path::PathBuf;

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/haystack")
}

fn read(name: &str) -> String {
    let path = data_dir().join(name);
    match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => panic!(
            "sample data {} is missing ({e}); these tests need the shared Haystack example files",
            path.display()
        ),
    }
}

fn zinc_grid(name: &str) -> Grid {
    match zinc::decode_grid(&read(name)) {
        Ok(grid) => grid,
        Err(e) => panic!("{name}: {e}"),
    }
}

fn row_with_id(grid: &Grid, id: &str) -> Dict {
    for i in 0..grid.row_count() {
        if let Some(Value::Ref(r)) = grid.get(i, "id")
            && r.id == id
        {
            return grid.row_dict(i).unwrap_or_default();
        }
    }
    panic!("no row with id {id}")
}

fn nested<'a>(dict: &'a Dict, outer: &str, inner: &str) -> Option<&'a Value> {
    match dict.get(outer)? {
        Value::Dict(d) => d.get(inner),
        _ => None,
    }
}

#[test]
fn alpha_zinc() {
    let grid = zinc_grid("alpha.zinc");
    assert_eq!(grid.row_count(), 2032);
    assert_eq!(grid.meta.get("numEquips"), Some(&Value::number(184.0)));
    let site = row_with_id(&grid, "a-0000");
    assert_eq!(
        site.get("area"),
        Some(&Value::number_with_unit(151455.0, "ft²"))
    );
    assert_eq!(
        site.get("geoElevation"),
        Some(&Value::number_with_unit(2956.0, "m"))
    );
    assert_eq!(site.get("dis"), Some(&Value::Str("Alpha".into())));
    let mat = row_with_id(&grid, "a-0005");
    assert_eq!(mat.get("unit"), Some(&Value::Str("°F".into())));
    assert_eq!(
        nested(&mat, "custom", "description"),
        Some(&Value::Str("MAT".into()))
    );
    round_trip(&grid);
}

#[test]
fn bravo_zinc() -> Result<(), Box<dyn std::error::Error>> {
    let grid = zinc_grid("bravo.zinc");
    assert_eq!(grid.row_count(), 1077);
    let chiller = row_with_id(&grid, "b-002c");
    // `10.6EER` is 10.6 in unit EER, not an exponent.
    assert_eq!(
        nested(&chiller, "custom", "designEfficiency"),
        Some(&Value::number_with_unit(10.6, "EER"))
    );
    let sat = row_with_id(&grid, "b-0004");
    let expected = DateTime::new(
        Date::new(2020, 7, 10)?,
        Time::new(1, 0, 9, 879_000_000)?,
        -4 * 3600,
        Some("New_York".into()),
    )?;
    assert_eq!(
        nested(&sat, "custom", "dataSyncRecovered"),
        Some(&Value::DateTime(Box::new(expected)))
    );
    round_trip(&grid);
    Ok(())
}

fn round_trip(grid: &Grid) {
    let text = zinc::encode_grid(grid);
    match zinc::decode_grid(&text) {
        Ok(again) => assert!(again == *grid, "zinc round trip differs"),
        Err(e) => panic!("re-decoding our own Zinc failed: {e}"),
    }
    assert_eq!(zinc::encode_grid(grid), text, "encoding is deterministic");
}

/// Compares two decodes of the same site row by row, naming the first difference.
fn assert_same_rows(expected: &Grid, actual: &Grid, what: &str) {
    assert_eq!(
        actual.row_count(),
        expected.row_count(),
        "{what}: row count"
    );
    for i in 0..expected.row_count() {
        let (want, got) = (expected.row_dict(i), actual.row_dict(i));
        if want != got {
            panic!("{what}: row {i} differs\nzinc: {want:?}\nother: {got:?}");
        }
    }
}

#[test]
fn json_matches_zinc() {
    for site in ["alpha", "bravo"] {
        let from_zinc = zinc_grid(&format!("{site}.zinc"));
        let from_json = match json::hayson::decode_grid(&read(&format!("{site}.json"))) {
            Ok(grid) => grid,
            Err(e) => panic!("{site}.json: {e}"),
        };
        assert_same_rows(&from_zinc, &from_json, &format!("{site}.json"));
        assert_eq!(from_json.meta, from_zinc.meta, "{site}: grid meta");
        let names = |g: &Grid| {
            g.columns()
                .iter()
                .map(|c| c.name.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&from_json), names(&from_zinc), "{site}: columns");
        // Our own Hayson and JSON v3 output decode back to the same grid.
        let again = json::hayson::decode_grid(&json::hayson::encode_grid(&from_json));
        assert!(
            again.as_ref().ok() == Some(&from_json),
            "{site}: Hayson round trip"
        );
        let v3 = json::v3::decode_grid(&json::v3::encode_grid(&from_json));
        assert!(
            v3.as_ref().ok() == Some(&from_json),
            "{site}: JSON v3 round trip"
        );
    }
}

#[test]
fn trio_matches_zinc() {
    for site in ["alpha", "bravo"] {
        let from_zinc = zinc_grid(&format!("{site}.zinc"));
        let text = read(&format!("{site}.trio"));
        let records = match trio::decode_records(&text) {
            Ok(records) => records,
            Err(e) => panic!("{site}.trio: {e}"),
        };
        assert_eq!(
            records.len(),
            from_zinc.row_count(),
            "{site}.trio: record count"
        );
        for (i, record) in records.iter().enumerate() {
            let row = from_zinc.row_dict(i).unwrap_or_default();
            if *record != row {
                panic!("{site}.trio: record {i} differs\nzinc: {row:?}\ntrio: {record:?}");
            }
        }
        // Our own Trio output decodes back to the same records.
        let again = trio::decode_records(&trio::encode_records(&records));
        assert!(
            again.as_ref().ok() == Some(&records),
            "{site}: Trio round trip"
        );
    }
}

/// Our canonical Zinc is byte-for-byte the published files (bravo.zinc only adds a
/// final blank line), which pins number, unit, string and escape formatting.
#[test]
fn zinc_encoding_reproduces_published_files() {
    for site in ["alpha", "bravo"] {
        let name = format!("{site}.zinc");
        let published = read(&name);
        let ours = zinc::encode_grid(&zinc_grid(&name));
        let published = published.trim_end_matches('\n');
        let ours = ours.trim_end_matches('\n');
        if ours != published {
            let line = ours
                .lines()
                .zip(published.lines())
                .position(|(a, b)| a != b);
            panic!("{name}: first differing line {line:?}");
        }
    }
}

/// Written with the tag order the published Trio files use (`id`, `dis`, then the
/// rest alphabetically), our Trio is byte-for-byte the published files.
#[test]
fn trio_encoding_reproduces_published_files() {
    for site in ["alpha", "bravo"] {
        let grid = zinc_grid(&format!("{site}.zinc"));
        let records: Vec<Dict> = (0..grid.row_count())
            .map(|i| {
                let row = grid.row_dict(i).unwrap_or_default();
                let mut names: Vec<&str> = row.iter().map(|(n, _)| n).collect();
                names.sort_by_key(|n| (*n != "id", *n != "dis", *n));
                let mut ordered = Dict::new();
                for name in names {
                    if let Some(value) = row.get(name) {
                        let _ = ordered.insert(name, value.clone());
                    }
                }
                ordered
            })
            .collect();
        let ours = trio::encode_records(&records);
        let published = read(&format!("{site}.trio"));
        if ours.trim_end() != published.trim_end() {
            let line = ours
                .lines()
                .zip(published.lines())
                .position(|(a, b)| a != b);
            let show = |text: &str| {
                line.and_then(|l| text.lines().nth(l))
                    .unwrap_or("")
                    .to_owned()
            };
            panic!(
                "{site}.trio: line {line:?}\nours:      {}\npublished: {}",
                show(&ours),
                show(&published)
            );
        }
    }
}

/// Streaming decode gives the same rows, meta and columns as the whole-grid decode.
#[test]
fn streaming_decode_matches_whole_decode() {
    for name in ["alpha.zinc", "bravo.zinc"] {
        let text = read(name);
        let whole = zinc_grid(name);
        let stream = zinc::ZincRowStream::new(text.as_bytes()).expect("header decodes");
        assert_eq!(stream.meta(), &whole.meta, "{name} meta");
        assert_eq!(stream.columns(), whole.columns(), "{name} columns");
        let rows: Vec<Dict> = stream.collect::<Result<_, _>>().expect("rows decode");
        assert_eq!(rows.len(), whole.row_count(), "{name}");
        for (i, row) in rows.iter().enumerate() {
            assert_eq!(Some(row), whole.row_dict(i).as_ref(), "{name} row {i}");
        }
    }
}
