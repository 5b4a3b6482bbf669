//! The unit database: parsing of the units table and lookups by name, symbol,
//! quantity and dimension, plus conversion between compatible units.

use std::collections::HashMap;

use super::dimension::{Dimension, InvalidDimension};

/// Most unit lines a table may hold.
pub const MAX_UNITS: usize = 10_000;

/// Most names and symbols one unit may have.
pub const MAX_IDS_PER_UNIT: usize = 16;

/// Quantity given to units that precede any `-- quantity --` header.
pub const NO_QUANTITY: &str = "";

/// Dimensionless quantities whose units measure unrelated things and never convert
/// into one another (`dimensionless` holds %, px, pH, dB...; `currency` holds money).
pub const UNRELATED_QUANTITIES: &[&str] = &["dimensionless", "currency"];

/// One unit: its canonical name, its symbols, its quantity and how it relates to
/// the SI base units (`si = value * scale + offset`).
#[derive(Debug, Clone, PartialEq)]
pub struct Unit<'a> {
    ids: Vec<&'a str>,
    /// Quantity it measures, e.g. `power` or `temperature`.
    pub quantity: &'a str,
    /// Exponents of the SI base quantities.
    pub dimension: Dimension,
    /// Factor to the SI unit of the same dimension.
    pub scale: f64,
    /// Offset added after scaling (non-zero only for °F and °C).
    pub offset: f64,
}

impl<'a> Unit<'a> {
    /// Canonical name, e.g. `kilowatt`.
    pub fn name(&self) -> &'a str {
        self.ids.first().copied().unwrap_or("")
    }

    /// Preferred symbol, e.g. `kW` (the name when the unit has no symbol).
    pub fn symbol(&self) -> &'a str {
        self.ids.last().copied().unwrap_or("")
    }

    /// Name followed by every symbol.
    pub fn ids(&self) -> &[&'a str] {
        &self.ids
    }

    /// Converts a value of this unit to SI base units.
    pub fn to_si(&self, value: f64) -> f64 {
        value * self.scale + self.offset
    }

    /// Converts a value in SI base units to this unit.
    pub fn from_si(&self, value: f64) -> f64 {
        (value - self.offset) / self.scale
    }

    /// Whether values of `self` can be converted to `other`: same dimension, and for
    /// dimensionless units the same quantity, except the catch-all quantities
    /// [`UNRELATED_QUANTITIES`] (`%` is not `px`, `$` is not `€`).
    pub fn is_convertible_to(&self, other: &Unit<'_>) -> bool {
        if self.name() == other.name() {
            return true;
        }
        if self.dimension != other.dimension {
            return false;
        }
        if self.dimension.is_dimensionless() {
            return self.quantity == other.quantity
                && !UNRELATED_QUANTITIES.contains(&self.quantity);
        }
        true
    }
}

/// Why a units table could not be parsed; `line` is 1-based.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum UnitTableError {
    /// A line did not have the `ids; dimension; scale; offset` shape.
    #[error("line {line}: {message}")]
    Malformed {
        /// 1-based line number.
        line: usize,
        /// What was wrong.
        message: String,
    },
    /// A dimension field did not parse.
    #[error("line {line}: {source}")]
    Dimension {
        /// 1-based line number.
        line: usize,
        /// The rejected factor.
        source: InvalidDimension,
    },
    /// The same name or symbol was given to two units.
    #[error("line {line}: `{id}` is already defined")]
    Duplicate {
        /// 1-based line number.
        line: usize,
        /// The repeated name or symbol.
        id: String,
    },
    /// More than [`MAX_UNITS`] units or [`MAX_IDS_PER_UNIT`] ids on one line.
    #[error("line {line}: too many units or ids")]
    TooMany {
        /// 1-based line number.
        line: usize,
    },
}

/// Why a conversion was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConversionError {
    /// No unit has this name or symbol.
    #[error("unknown unit `{0}`")]
    UnknownUnit(String),
    /// The units measure different things.
    #[error("cannot convert `{from}` to `{to}`: incompatible dimensions")]
    Incompatible {
        /// Source unit as given.
        from: String,
        /// Target unit as given.
        to: String,
    },
}

/// A set of units indexed by every name and symbol.
#[derive(Debug, Clone, Default)]
pub struct UnitDb<'a> {
    units: Vec<Unit<'a>>,
    by_id: HashMap<&'a str, usize>,
    quantities: Vec<&'a str>,
}

fn malformed(line: usize, message: impl Into<String>) -> UnitTableError {
    UnitTableError::Malformed {
        line,
        message: message.into(),
    }
}

fn parse_factor(text: &str, default: f64, line: usize) -> Result<f64, UnitTableError> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(default);
    }
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(malformed(line, format!("bad number `{text}`"))),
    }
}

impl<'a> UnitDb<'a> {
    /// Parses a table in the Haystack `units.txt` line format: `-- quantity --`
    /// headers, then one `name, symbol...; dimension; scale; offset` line per unit
    /// (trailing fields optional); blank lines and `//` comments are skipped.
    pub fn parse(table: &'a str) -> Result<Self, UnitTableError> {
        let mut db = UnitDb::default();
        let mut quantity = NO_QUANTITY;
        for (index, raw) in table.lines().enumerate() {
            let line = index + 1;
            let text = raw.trim();
            if text.is_empty() || text.starts_with("//") {
                continue;
            }
            if let Some(rest) = text.strip_prefix("--") {
                let name = rest
                    .strip_suffix("--")
                    .ok_or_else(|| malformed(line, "quantity header must end with `--`"))?;
                quantity = name.trim();
                db.quantities.push(quantity);
                continue;
            }
            if db.units.len() >= MAX_UNITS {
                return Err(UnitTableError::TooMany { line });
            }
            let mut fields = text.split(';');
            let ids_field = fields.next().unwrap_or("");
            let dimension = Dimension::parse(fields.next().unwrap_or(""))
                .map_err(|source| UnitTableError::Dimension { line, source })?;
            let scale = parse_factor(fields.next().unwrap_or(""), 1.0, line)?;
            let offset = parse_factor(fields.next().unwrap_or(""), 0.0, line)?;
            if fields.next().is_some() {
                return Err(malformed(line, "more than four `;` fields"));
            }
            if scale == 0.0 {
                return Err(malformed(line, "scale must not be zero"));
            }
            let ids: Vec<&'a str> = ids_field.split(',').map(str::trim).collect();
            if ids.len() > MAX_IDS_PER_UNIT {
                return Err(UnitTableError::TooMany { line });
            }
            if ids.iter().any(|id| id.is_empty()) {
                return Err(malformed(line, "empty unit name or symbol"));
            }
            let position = db.units.len();
            for id in &ids {
                if db.by_id.insert(id, position).is_some() {
                    return Err(UnitTableError::Duplicate {
                        line,
                        id: (*id).to_owned(),
                    });
                }
            }
            db.units.push(Unit {
                ids,
                quantity,
                dimension,
                scale,
                offset,
            });
        }
        Ok(db)
    }

    /// Writes the units back in the table format [`UnitDb::parse`] reads (a quantity
    /// header wherever the quantity changes; empty quantities are not written).
    pub fn to_table(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let mut quantity = NO_QUANTITY;
        for unit in &self.units {
            if unit.quantity != quantity {
                let _ = writeln!(out, "-- {} --", unit.quantity);
                quantity = unit.quantity;
            }
            let _ = writeln!(
                out,
                "{}; {}; {}; {}",
                unit.ids.join(", "),
                unit.dimension,
                unit.scale,
                unit.offset
            );
        }
        out
    }

    /// Number of units.
    pub fn len(&self) -> usize {
        self.units.len()
    }

    /// Whether the database holds no unit.
    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }

    /// Every unit in table order.
    pub fn units(&self) -> impl Iterator<Item = &Unit<'a>> {
        self.units.iter()
    }

    /// The unit with this name or symbol (`"°F"`, `"fahrenheit"`, `"kW"`), case-sensitive.
    pub fn get(&self, id: &str) -> Option<&Unit<'a>> {
        self.by_id.get(id).and_then(|i| self.units.get(*i))
    }

    /// Quantity names in table order.
    pub fn quantities(&self) -> &[&'a str] {
        &self.quantities
    }

    /// Units of one quantity, e.g. `"temperature"`.
    pub fn units_of_quantity<'s>(
        &'s self,
        quantity: &'s str,
    ) -> impl Iterator<Item = &'s Unit<'a>> {
        self.units.iter().filter(move |u| u.quantity == quantity)
    }

    /// Units of one dimension.
    pub fn units_with_dimension(&self, dimension: Dimension) -> impl Iterator<Item = &Unit<'a>> {
        self.units.iter().filter(move |u| u.dimension == dimension)
    }

    /// Converts `value` from one unit to another, both given by name or symbol.
    pub fn convert(&self, value: f64, from: &str, to: &str) -> Result<f64, ConversionError> {
        let source = self
            .get(from)
            .ok_or_else(|| ConversionError::UnknownUnit(from.to_owned()))?;
        let target = self
            .get(to)
            .ok_or_else(|| ConversionError::UnknownUnit(to.to_owned()))?;
        if !source.is_convertible_to(target) {
            return Err(ConversionError::Incompatible {
                from: from.to_owned(),
                to: to.to_owned(),
            });
        }
        if source.name() == target.name() {
            return Ok(value);
        }
        Ok(target.from_si(source.to_si(value)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "// test table\n-- length --\nmeter, m; m1\nfoot, ft; m1; 0.3048\n\n-- currency --\neuro, €\nus_dollar, $\n";

    #[test]
    fn parses_a_small_table() {
        let db = UnitDb::parse(SMALL).unwrap();
        assert_eq!(db.len(), 4);
        assert_eq!(db.quantities(), &["length", "currency"]);
        let foot = db.get("ft").unwrap();
        assert_eq!(foot.name(), "foot");
        assert_eq!(foot.symbol(), "ft");
        assert_eq!(foot.ids(), &["foot", "ft"]);
        assert_eq!(foot.scale, 0.3048);
        assert_eq!(db.units_of_quantity("length").count(), 2);
        assert!((db.convert(10.0, "ft", "meter").unwrap() - 3.048).abs() < 1e-12);
        assert_eq!(
            db.convert(1.0, "€", "$"),
            Err(ConversionError::Incompatible {
                from: "€".into(),
                to: "$".into()
            })
        );
        assert_eq!(db.convert(2.0, "€", "euro"), Ok(2.0));
        let again = db.to_table();
        assert!(
            again.starts_with("-- length --\nmeter, m; m1; 1; 0\n"),
            "{again}"
        );
        let reparsed = UnitDb::parse(&again).unwrap();
        assert!(db.units().eq(reparsed.units()));
    }

    #[test]
    fn table_errors_carry_the_line() {
        assert_eq!(
            UnitDb::parse("-- a --\nx, y; m1\nz, y; m1\n").unwrap_err(),
            UnitTableError::Duplicate {
                line: 3,
                id: "y".into()
            }
        );
        assert!(matches!(
            UnitDb::parse("-- a\n"),
            Err(UnitTableError::Malformed { line: 1, .. })
        ));
        assert!(matches!(
            UnitDb::parse("x; m1; abc\n"),
            Err(UnitTableError::Malformed { line: 1, .. })
        ));
        assert!(matches!(
            UnitDb::parse("\nx; m1; 0\n"),
            Err(UnitTableError::Malformed { line: 2, .. })
        ));
        assert!(matches!(
            UnitDb::parse("x; q7\n"),
            Err(UnitTableError::Dimension { line: 1, .. })
        ));
        assert!(matches!(
            UnitDb::parse("x; m1; 1; 0; 9\n"),
            Err(UnitTableError::Malformed { line: 1, .. })
        ));
        assert!(matches!(
            UnitDb::parse("x,,y\n"),
            Err(UnitTableError::Malformed { line: 1, .. })
        ));
    }

    fn unit_line() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        (
            proptest::collection::vec("[a-zA-Z_°²³µΔ/%$€]{1,6}", 1..4),
            proptest::array::uniform7(-3i8..4),
            prop_oneof![Just(1.0f64), 1e-6f64..1e6, -1e3f64..-1e-3],
            prop_oneof![Just(0.0f64), -500f64..500.0],
        )
            .prop_map(|(ids, exps, scale, offset)| {
                format!("{}; {}; {scale}; {offset}", ids.join(", "), Dimension(exps))
            })
    }

    proptest::proptest! {
        #[test]
        fn tables_round_trip(
            lines in proptest::collection::vec(
                (proptest::option::of("[a-z ]{1,10}"), unit_line()),
                0..12,
            )
        ) {
            let mut text = String::new();
            for (header, line) in &lines {
                if let Some(q) = header {
                    text.push_str(&format!("-- {q} --\n"));
                }
                text.push_str(line);
                text.push('\n');
            }
            // Random ids may repeat; only tables that parse are round-tripped.
            if let Ok(db) = UnitDb::parse(&text) {
                let written = db.to_table();
                let again = UnitDb::parse(&written);
                proptest::prop_assert!(again.is_ok());
                let again = again.unwrap();
                proptest::prop_assert!(db.units().eq(again.units()));
            }
        }

        #[test]
        fn same_dimension_conversions_invert(value in -1e6f64..1e6) {
            let db = UnitDb::parse(super::super::STANDARD_TABLE).unwrap();
            for (from, to) in [("°F", "°C"), ("kW", "BTU/h"), ("ft²", "m²"), ("psi", "kPa")] {
                let there = db.convert(value, from, to).unwrap();
                let back = db.convert(there, to, from).unwrap();
                proptest::prop_assert!((back - value).abs() <= 1e-9 * value.abs().max(1.0));
            }
        }
    }
}
