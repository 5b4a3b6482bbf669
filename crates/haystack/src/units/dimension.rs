//! Physical dimensions of units: exponents of the seven SI base quantities.

use std::fmt;

/// Names of the SI base quantities in the order [`Dimension`] stores their exponents,
/// as spelled in the Haystack units table (`kg1*m2*sec-3`).
pub const BASE_NAMES: [&str; 7] = ["kg", "m", "sec", "K", "A", "mol", "cd"];

/// Exponents of kilogram, meter, second, kelvin, ampere, mole and candela.
///
/// The all-zero dimension is "dimensionless" (percentages, currencies, bytes...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Dimension(pub [i8; 7]);

/// Why a dimension text such as `kg1*m2*sec-3` was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid dimension factor `{0}`")]
pub struct InvalidDimension(pub String);

impl Dimension {
    /// The dimension of pure numbers.
    pub const NONE: Dimension = Dimension([0; 7]);

    /// Whether every exponent is zero.
    pub fn is_dimensionless(&self) -> bool {
        self.0 == [0; 7]
    }

    /// Parses the table form: `*`-separated factors, each a base name and a signed
    /// exponent (`kg1*m-1*sec-2`); the empty string is dimensionless.
    pub fn parse(text: &str) -> Result<Self, InvalidDimension> {
        let mut exps = [0i8; 7];
        let text = text.trim();
        if text.is_empty() {
            return Ok(Dimension(exps));
        }
        for factor in text.split('*') {
            let factor = factor.trim();
            let split = factor
                .find(|c: char| c == '-' || c.is_ascii_digit())
                .ok_or_else(|| InvalidDimension(factor.to_owned()))?;
            let (name, exp) = factor.split_at(split);
            let index = BASE_NAMES
                .iter()
                .position(|b| *b == name)
                .ok_or_else(|| InvalidDimension(factor.to_owned()))?;
            let exp: i8 = exp
                .parse()
                .map_err(|_| InvalidDimension(factor.to_owned()))?;
            if let Some(slot) = exps.get_mut(index) {
                *slot = exp;
            }
        }
        Ok(Dimension(exps))
    }
}

impl fmt::Display for Dimension {
    /// Writes the table form, e.g. `kg1*m2*sec-3` (empty when dimensionless).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (name, exp) in BASE_NAMES.iter().zip(self.0) {
            if exp != 0 {
                if !first {
                    f.write_str("*")?;
                }
                write!(f, "{name}{exp}")?;
                first = false;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_display_round_trip() {
        let watt = Dimension::parse("kg1*m2*sec-3").unwrap();
        assert_eq!(watt, Dimension([1, 2, -3, 0, 0, 0, 0]));
        assert_eq!(watt.to_string(), "kg1*m2*sec-3");
        assert_eq!(Dimension::parse("").unwrap(), Dimension::NONE);
        assert!(Dimension::NONE.is_dimensionless());
        assert_eq!(Dimension::NONE.to_string(), "");
    }

    #[test]
    fn bad_factors_are_named() {
        assert_eq!(
            Dimension::parse("kg1*lb2"),
            Err(InvalidDimension("lb2".into()))
        );
        assert_eq!(Dimension::parse("kg"), Err(InvalidDimension("kg".into())));
        assert_eq!(
            Dimension::parse("m999"),
            Err(InvalidDimension("m999".into()))
        );
    }

    proptest::proptest! {
        #[test]
        fn display_round_trips(exps in proptest::array::uniform7(proptest::num::i8::ANY)) {
            let dim = Dimension(exps);
            proptest::prop_assert_eq!(Dimension::parse(&dim.to_string()), Ok(dim));
        }

        #[test]
        fn parse_never_panics(text in "[a-zA-Z0-9*-]{0,24}") {
            let _ = Dimension::parse(&text);
        }
    }
}
