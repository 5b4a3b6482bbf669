//! The standard unit database and timezone table: lookups, conversions, offsets, and
//! coverage of every unit and timezone used by the example sites Alpha and Bravo.

use buildwire_haystack::codec::zinc;
use buildwire_haystack::timezone;
use buildwire_haystack::units::{self, ConversionError, Dimension};
use buildwire_haystack::{Date, DateTime, Grid, Number, Time, Value};
use std::collections::BTreeSet;
use std::path::PathBuf;

fn site(name: &str) -> Grid {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/haystack")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("sample data {} is missing: {e}", path.display()));
    zinc::decode_grid(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Visits every value of a grid, descending into lists, dicts and nested grids.
fn walk(value: &Value, visit: &mut dyn FnMut(&Value)) {
    visit(value);
    match value {
        Value::List(items) => items.iter().for_each(|v| walk(v, visit)),
        Value::Dict(d) => d.iter().for_each(|(_, v)| walk(v, visit)),
        Value::Grid(g) => walk_grid(g, visit),
        _ => {}
    }
}

fn walk_grid(grid: &Grid, visit: &mut dyn FnMut(&Value)) {
    for row in grid.rows() {
        row.iter().flatten().for_each(|v| walk(v, visit));
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

fn dt(y: i32, mo: u8, d: u8, h: u8, mi: u8, offset: i32, tz: &str) -> DateTime {
    DateTime::new(
        Date::new(y, mo, d).expect("valid test date"),
        Time::new(h, mi, 0, 0).expect("valid test time"),
        offset,
        Some(tz.into()),
    )
    .expect("valid test timestamp")
}

#[test]
fn lookups_by_name_and_symbol() {
    let f = units::get("°F").unwrap();
    assert_eq!(f.name(), "fahrenheit");
    assert_eq!(units::get("fahrenheit"), Some(f));
    assert_eq!(f.quantity, "temperature");
    assert_eq!(f.dimension, Dimension([0, 0, 0, 1, 0, 0, 0]));
    let kw = units::get("kW").unwrap();
    assert_eq!(units::get("kilowatt"), Some(kw));
    assert_eq!(kw.symbol(), "kW");
    assert_eq!(kw.quantity, "power");
    assert_eq!(kw.dimension, Dimension::parse("kg1*m2*sec-3").unwrap());
    assert_eq!(units::get("kw"), None, "lookups are case-sensitive");
    assert_eq!(units::get("furlong"), None);
    let db = units::standard();
    assert!(db.quantities().contains(&"area"));
    assert!(
        db.units_of_quantity("temperature")
            .any(|u| u.symbol() == "°C")
    );
    assert!(
        db.units_with_dimension(kw.dimension)
            .any(|u| u.name() == "watt")
    );
}

#[test]
fn conversions() {
    let c = units::convert(212.0, "°F", "°C").unwrap();
    assert!(close(c, 100.0), "{c}");
    let f = units::convert(-40.0, "celsius", "fahrenheit").unwrap();
    assert!(close(f, -40.0), "{f}");
    let k = units::convert(0.0, "°C", "K").unwrap();
    assert!(close(k, 273.15), "{k}");
    assert!(close(units::convert(2.5, "kW", "W").unwrap(), 2500.0));
    assert!(close(units::convert(1500.0, "W", "kW").unwrap(), 1.5));
    // 1 ft² = 0.092903 m² in the Haystack table.
    assert!(close(units::convert(100.0, "ft²", "m²").unwrap(), 9.2903));
    assert!(close(units::convert(9.2903, "m²", "ft²").unwrap(), 100.0));
    // Temperature differences have no offset.
    assert!(close(units::convert(9.0, "Δ°F", "Δ°C").unwrap(), 5.0));
    assert!(close(units::convert(1.0, "MB", "kB").unwrap(), 1024.0));
    let n = units::convert_number(&Number::with_unit(32.0, "°F"), "celsius").unwrap();
    assert_eq!(n.unit.as_deref(), Some("°C"));
    assert!(close(n.value, 0.0) && n.value.abs() < 1e-9);
}

#[test]
fn incompatible_conversions_are_refused() {
    assert_eq!(
        units::convert(1.0, "kW", "°F"),
        Err(ConversionError::Incompatible {
            from: "kW".into(),
            to: "°F".into()
        })
    );
    assert!(matches!(
        units::convert(1.0, "ft²", "ft"),
        Err(ConversionError::Incompatible { .. })
    ));
    // Dimensionless units of different quantities, and currencies, do not mix.
    assert!(matches!(
        units::convert(1.0, "%", "px"),
        Err(ConversionError::Incompatible { .. })
    ));
    assert!(matches!(
        units::convert(1.0, "$", "€"),
        Err(ConversionError::Incompatible { .. })
    ));
    assert_eq!(
        units::convert(1.0, "parsec", "m"),
        Err(ConversionError::UnknownUnit("parsec".into()))
    );
    assert_eq!(
        units::convert_number(&Number::new(1.0), "m"),
        Err(ConversionError::UnknownUnit(String::new()))
    );
}

#[test]
fn every_unit_in_alpha_and_bravo_resolves() {
    let mut seen = BTreeSet::new();
    for name in ["alpha.zinc", "bravo.zinc"] {
        walk_grid(&site(name), &mut |v| {
            if let Value::Number(Number { unit: Some(u), .. }) = v {
                seen.insert(u.clone());
            }
        });
    }
    assert!(seen.len() >= 10, "{seen:?}");
    for unit in &seen {
        assert!(
            units::get(unit).is_some(),
            "unit {unit:?} not in the database"
        );
    }
    assert!(seen.contains("°F") && seen.contains("EER") && seen.contains("ft²"));
}

#[test]
fn haystack_names_and_iana_ids() {
    assert_eq!(timezone::to_iana("New_York"), Some("America/New_York"));
    assert_eq!(
        timezone::to_iana("Los_Angeles"),
        Some("America/Los_Angeles")
    );
    assert_eq!(timezone::to_iana("Chicago"), Some("America/Chicago"));
    assert_eq!(timezone::to_iana("London"), Some("Europe/London"));
    assert_eq!(timezone::to_iana("UTC"), Some("Etc/UTC"));
    assert_eq!(timezone::to_iana("GMT+5"), Some("Etc/GMT+5"));
    assert_eq!(
        timezone::to_iana("Indianapolis"),
        Some("America/Indiana/Indianapolis")
    );
    assert_eq!(timezone::from_iana("America/New_York"), Some("New_York"));
    assert_eq!(timezone::from_iana("Etc/GMT-3"), Some("GMT-3"));
    assert_eq!(timezone::to_iana("Atlantis"), None);
    assert_eq!(timezone::from_iana("Mars/Olympus_Mons"), None);
    for zone in timezone::standard().zones() {
        assert_eq!(timezone::from_iana(zone.iana), Some(zone.name));
        assert_eq!(timezone::to_iana(zone.name), Some(zone.iana));
    }
}

#[test]
fn offsets_follow_daylight_saving() {
    let jan = timezone::utc_seconds(&dt(2024, 1, 15, 12, 0, 0, "UTC"));
    let jul = timezone::utc_seconds(&dt(2024, 7, 15, 12, 0, 0, "UTC"));
    assert_eq!(timezone::offset_at("New_York", jan), Some(-5 * 3600));
    assert_eq!(timezone::offset_at("New_York", jul), Some(-4 * 3600));
    assert_eq!(timezone::offset_at("Los_Angeles", jul), Some(-7 * 3600));
    assert_eq!(timezone::offset_at("London", jan), Some(0));
    assert_eq!(timezone::offset_at("London", jul), Some(3600));
    assert_eq!(timezone::offset_at("Sydney", jan), Some(11 * 3600));
    assert_eq!(timezone::offset_at("Sydney", jul), Some(10 * 3600));
    assert_eq!(timezone::offset_at("Kolkata", jul), Some(5 * 3600 + 1800));
    // POSIX sign inversion: Etc/GMT+5 is five hours behind UTC.
    assert_eq!(timezone::offset_at("GMT+5", jan), Some(-5 * 3600));
    assert_eq!(timezone::offset_at("GMT-3", jul), Some(3 * 3600));
    assert_eq!(timezone::offset_at("Atlantis", jan), None);
}

#[test]
fn timestamps_check_and_convert() {
    let ok = dt(2024, 7, 4, 9, 30, -4 * 3600, "New_York");
    assert_eq!(timezone::offset_matches_zone(&ok), Some(true));
    let wrong = dt(2024, 1, 4, 9, 30, -4 * 3600, "New_York");
    assert_eq!(timezone::offset_matches_zone(&wrong), Some(false));
    let unknown = dt(2024, 1, 4, 9, 30, 0, "Atlantis");
    assert_eq!(timezone::offset_matches_zone(&unknown), None);

    let la = timezone::in_zone(&ok, "Los_Angeles").unwrap();
    assert_eq!(la, dt(2024, 7, 4, 6, 30, -7 * 3600, "Los_Angeles"));
    let tokyo = timezone::in_zone(&ok, "Tokyo").unwrap();
    assert_eq!(tokyo, dt(2024, 7, 4, 22, 30, 9 * 3600, "Tokyo"));
    // Crossing midnight backwards, and the same instant either way.
    let late = dt(2024, 1, 1, 0, 15, 0, "UTC");
    let ny = timezone::in_zone(&late, "New_York").unwrap();
    assert_eq!(ny, dt(2023, 12, 31, 19, 15, -5 * 3600, "New_York"));
    assert_eq!(timezone::utc_seconds(&ny), timezone::utc_seconds(&late));
    assert!(timezone::in_zone(&late, "Atlantis").is_none());
}

#[test]
fn every_timezone_in_alpha_and_bravo_maps_and_matches() {
    let mut names = BTreeSet::new();
    let mut stamps = Vec::new();
    for name in ["alpha.zinc", "bravo.zinc"] {
        let grid = site(name);
        for i in 0..grid.row_count() {
            if let Some(Value::Str(tz)) = grid.get(i, "tz") {
                names.insert(tz.clone());
            }
        }
        walk_grid(&grid, &mut |v| {
            if let Value::DateTime(d) = v {
                if let Some(tz) = &d.tz {
                    names.insert(tz.clone());
                }
                stamps.push((**d).clone());
            }
        });
    }
    assert!(names.contains("Denver") && names.contains("Chicago") && names.contains("New_York"));
    for name in &names {
        assert!(timezone::to_iana(name).is_some(), "timezone {name} unknown");
    }
    assert!(!stamps.is_empty());
    for stamp in &stamps {
        assert_eq!(
            timezone::offset_matches_zone(stamp),
            Some(true),
            "{stamp:?}"
        );
    }
}
