//! BACnet engineering units (Clause 21, `BACnetEngineeringUnits`) to Haystack units (the
//! standard unit database of `buildwire_haystack::units`).
//!
//! The two vocabularies mostly spell the same unit alike: BACnet's hyphenated plural
//! (`kilowatt-hours`, `degrees-fahrenheit`) becomes Haystack's underscored singular
//! (`kilowatt_hour`, `fahrenheit`). [`haystack_unit`] derives the candidate names that way
//! and asks the database; the few units the rules miss are in `EXCEPTIONS` (facts of the
//! two standards' tables, written here by hand). `no-units` and the units Haystack lacks
//! (currencies, radiation doses, brewing scales, many per-day rates: about half of
//! BACnet's 2020s additions) give `None`, and the point then has no `unit` tag.

use buildwire_bacnet::enums::EngineeringUnits;
use buildwire_haystack::units;

/// BACnet unit names whose Haystack name the spelling rules below do not find.
const EXCEPTIONS: &[(&str, &str)] = &[
    ("btus", "btu"),
    ("ton-hours", "tons_refrigeration_hour"),
    ("delta-degrees-fahrenheit", "fahrenheit_degrees"),
    ("delta-degrees-celsius", "celsius_degrees"),
    ("delta-kelvin", "kelvin_degrees"),
    ("meters-per-second-per-second", "meters_per_second_squared"),
    ("pounds-force-per-square-inch", "pounds_per_square_inch"),
    ("kelvin-per-hour", "degrees_kelvin_per_hour"),
    ("kelvin-per-minute", "degrees_kelvin_per_minute"),
    ("foot-candles", "footcandle"),
];

/// Words spelled differently in the two tables.
const WORDS: &[(&str, &str)] = &[
    ("pounds-mass", "pounds"),
    ("us-gallons", "gallons"),
    ("kilo-btus", "kilobtus"),
    ("mega-btus", "megabtus"),
    ("micro-siemens", "microsiemens"),
];

/// The Haystack unit (its preferred symbol, as the `unit` tag holds it) of a BACnet unit.
pub fn haystack_unit(unit: EngineeringUnits) -> Option<&'static str> {
    let name = unit.name()?;
    if name == "no-units" {
        return None;
    }
    candidates(name)
        .into_iter()
        .find_map(|candidate| units::get(&candidate))
        .map(units::Unit::symbol)
}

/// Haystack names to try for a BACnet unit name, most likely first: the exception, then
/// the name with and without its `degrees-` prefix, each word plural or singular.
fn candidates(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some((_, haystack)) = EXCEPTIONS.iter().find(|(bacnet, _)| *bacnet == name) {
        out.push((*haystack).to_owned());
    }
    let mut spelled = name.to_owned();
    for (bacnet, haystack) in WORDS {
        spelled = spelled.replace(bacnet, haystack);
    }
    let mut bases = vec![spelled.clone()];
    if let Some(stripped) = spelled.strip_prefix("degrees-") {
        bases.push(stripped.to_owned());
    }
    for base in bases {
        let words: Vec<&str> = base.split('-').collect();
        // Every choice of plural or singular per word (names have at most a few words).
        let choices = 1usize << words.len().min(8);
        for mask in 0..choices {
            let joined: Vec<String> = words
                .iter()
                .enumerate()
                .map(|(i, w)| {
                    if mask & (1 << i) != 0 {
                        singular(w)
                    } else {
                        (*w).to_owned()
                    }
                })
                .collect();
            out.push(joined.join("_"));
        }
    }
    out
}

fn singular(word: &str) -> String {
    if word == "feet" {
        "foot".to_owned()
    } else if let Some(stem) = word.strip_suffix("ies") {
        format!("{stem}y")
    } else if let Some(stem) = word
        .strip_suffix("es")
        .filter(|s| s.ends_with("ch") || s.ends_with('x'))
    {
        stem.to_owned()
    } else if word.ends_with("ss") {
        word.to_owned()
    } else {
        word.strip_suffix('s').unwrap_or(word).to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_units_map() {
        let cases = [
            (EngineeringUnits::DegreesFahrenheit, "°F"),
            (EngineeringUnits::DegreesCelsius, "°C"),
            (EngineeringUnits::PercentRelativeHumidity, "%RH"),
            (EngineeringUnits::Pascals, "Pa"),
            (EngineeringUnits::Watts, "W"),
            (EngineeringUnits::KilowattHours, "kWh"),
            (EngineeringUnits::Amperes, "A"),
            (EngineeringUnits::Volts, "V"),
            (EngineeringUnits::Hertz, "Hz"),
            (EngineeringUnits::Percent, "%"),
        ];
        for (bacnet, haystack) in cases {
            assert_eq!(haystack_unit(bacnet), Some(haystack), "{bacnet}");
        }
        assert_eq!(haystack_unit(EngineeringUnits::NoUnits), None);
    }

    #[test]
    fn most_bacnet_units_have_a_haystack_unit() {
        let mapped = EngineeringUnits::ALL
            .iter()
            .filter(|u| haystack_unit(**u).is_some())
            .count();
        // Every unit that maps gives a unit the database knows.
        for unit in EngineeringUnits::ALL {
            if let Some(symbol) = haystack_unit(*unit) {
                assert!(units::get(symbol).is_some(), "{unit} -> {symbol}");
            }
        }
        // Haystack's table lacks whole families BACnet has (currencies, radiation, brewing,
        // many rates per day): a little under half map.
        assert!(
            mapped * 10 >= EngineeringUnits::ALL.len() * 4,
            "only {mapped} of {} units map",
            EngineeringUnits::ALL.len()
        );
    }
}
