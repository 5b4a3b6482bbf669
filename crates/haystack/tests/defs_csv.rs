//! CSV export (Haystack CSV chapter): the Alpha site read back with a small RFC 4180
//! reader, and property tests that any string cells survive quoting.

use buildwire_haystack::codec::{csv, zinc};
use buildwire_haystack::{Dict, Grid, Value};
use proptest::prelude::*;
use std::path::PathBuf;

/// Splits RFC 4180 text into records of fields (quoted fields may hold `,`, `"` and
/// line breaks). Panics on malformed input: the encoder must never produce it.
fn read_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut at_field_start = true;
    while let Some(c) = chars.next() {
        match c {
            '"' if at_field_start => {
                loop {
                    match chars.next() {
                        Some('"') if chars.peek() == Some(&'"') => {
                            chars.next();
                            field.push('"');
                        }
                        Some('"') => break,
                        Some(other) => field.push(other),
                        None => panic!("unterminated quoted field"),
                    }
                }
                assert!(
                    matches!(chars.peek(), Some(',') | Some('\n') | None),
                    "text after a closing quote"
                );
                at_field_start = false;
            }
            '"' => panic!("bare quote inside an unquoted field"),
            ',' => {
                record.push(std::mem::take(&mut field));
                at_field_start = true;
            }
            '\n' => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
                at_field_start = true;
            }
            '\r' => panic!("bare carriage return outside quotes"),
            other => {
                field.push(other);
                at_field_start = false;
            }
        }
    }
    assert!(
        record.is_empty() && field.is_empty(),
        "missing final newline"
    );
    records
}

#[test]
fn alpha_exports_one_line_per_row() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/haystack/alpha.zinc");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("sample data {} is missing: {e}", path.display()));
    let grid = zinc::decode_grid(&text).unwrap();
    let out = csv::encode_grid(&grid);
    let records = read_csv(&out);
    assert_eq!(records.len(), grid.row_count() + 1);
    assert_eq!(records.len(), 2033);
    let header: Vec<&str> = grid.columns().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(records[0], header);
    assert!(records.iter().all(|r| r.len() == header.len()));
    let col = |name: &str| grid.column_index(name).unwrap();
    // Row 0 is the site: area with unit, string, coordinate, marker.
    assert_eq!(records[1][col("id")], "@a-0000");
    assert_eq!(records[1][col("area")], "151455ft²");
    assert_eq!(records[1][col("dis")], "Alpha");
    assert_eq!(records[1][col("geoAddr")], "123 Prarie St, Hugo, CO 80821");
    assert_eq!(records[1][col("geoCoord")], "C(39.04532,-103.57159)");
    assert_eq!(records[1][col("site")], "\u{2713}");
    assert_eq!(records[1][col("ahu")], "");
    // The quoted address is written with quotes on the wire.
    assert!(out.contains(",\"123 Prarie St, Hugo, CO 80821\","));
    assert_eq!(records[2][col("siteRef")], "@a-0000");
}

#[test]
fn display_names_replace_column_names() {
    let grid = zinc::decode_grid("ver:\"3.0\"\na dis:\"Alpha, Inc\",b\n1,\"x\"\n").unwrap();
    let records = read_csv(&csv::encode_grid(&grid));
    assert_eq!(records, vec![vec!["Alpha, Inc", "b"], vec!["1", "x"]]);
}

fn string_grid(cells: &[Vec<String>]) -> Grid {
    let rows: Vec<Dict> = cells
        .iter()
        .map(|row| {
            let mut d = Dict::new();
            for (i, s) in row.iter().enumerate() {
                d.insert(format!("c{i}"), Value::Str(s.clone()))
                    .expect("valid tag name");
            }
            d
        })
        .collect();
    Grid::from_dicts(&rows).expect("rows form a grid")
}

proptest! {
    #[test]
    fn string_cells_survive_quoting(
        cells in prop::collection::vec(
            prop::collection::vec("[a-z ,\"\\r\\n✓é]{0,8}", 3),
            1..6,
        )
    ) {
        let grid = string_grid(&cells);
        let records = read_csv(&csv::encode_grid(&grid));
        prop_assert_eq!(records.len(), cells.len() + 1);
        prop_assert_eq!(&records[0], &vec!["c0".to_string(), "c1".into(), "c2".into()]);
        prop_assert_eq!(&records[1..], &cells[..]);
    }
}
