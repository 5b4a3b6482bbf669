//! [`Number`]: a 64-bit float with an optional unit name.

/// A Haystack number: an IEEE 754 double and an optional unit such as `"°F"` or `"kW"`.
///
/// Equality treats NaN as equal to NaN (and `0.0` as equal to `-0.0`), so that
/// decode → encode → decode round trips compare equal. This is deliberately not
/// IEEE equality.
#[derive(Debug, Clone)]
pub struct Number {
    /// The numeric value; may be infinite or NaN.
    pub value: f64,
    /// The unit name, if any.
    pub unit: Option<String>,
}

impl Number {
    /// A number without unit.
    pub fn new(value: f64) -> Self {
        Number { value, unit: None }
    }

    /// A number with a unit.
    pub fn with_unit(value: f64, unit: impl Into<String>) -> Self {
        Number {
            value,
            unit: Some(unit.into()),
        }
    }

    /// Whether `c` may appear in a unit name written in Zinc:
    /// ASCII letters, `%`, `_`, `/`, `$` and any non-ASCII character.
    pub fn is_unit_char(c: char) -> bool {
        c.is_ascii_alphabetic() || matches!(c, '%' | '_' | '/' | '$') || !c.is_ascii()
    }

    /// Whether the unit (if any) can be written in Zinc without ambiguity.
    pub fn has_zinc_safe_unit(&self) -> bool {
        self.unit
            .as_deref()
            .is_none_or(|u| !u.is_empty() && u.chars().all(Number::is_unit_char))
    }

    /// Writes the value the canonical way shared by the Zinc and JSON encoders:
    /// shortest round-trip digits, exponent form for very large or small magnitudes,
    /// `INF`, `-INF`, `NaN` for the non-finite values. The unit is not written.
    pub fn write_value(value: f64, out: &mut String) {
        use std::fmt::Write;
        if value.is_nan() {
            out.push_str("NaN");
        } else if value == f64::INFINITY {
            out.push_str("INF");
        } else if value == f64::NEG_INFINITY {
            out.push_str("-INF");
        } else {
            let magnitude = value.abs();
            // Writing into a String cannot fail.
            let _ = if magnitude != 0.0 && !(1e-6..1e15).contains(&magnitude) {
                write!(out, "{value:e}")
            } else {
                write!(out, "{value}")
            };
        }
    }
}

/// Powers of ten that are exact in an f64, for [`Number::parse_short_decimal`].
const EXACT_POWERS_OF_TEN: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// Most significant digits the short-decimal fast path takes (exact below 2^53).
const SHORT_DECIMAL_DIGITS: usize = 15;

impl Number {
    /// Parses `-?digits[.digits]` with at most 15 digits in all, exactly as
    /// `str::parse::<f64>` would, but faster; `None` for any other text (the caller
    /// then uses the full parser). The digits and the power of ten are both exact
    /// doubles, so the one division rounds correctly.
    pub(crate) fn parse_short_decimal(text: &str) -> Option<f64> {
        let (negative, body) = match text.strip_prefix('-') {
            Some(body) => (true, body),
            None => (false, text),
        };
        let mut mantissa: u64 = 0;
        let mut digits = 0usize;
        let mut fraction_digits = 0usize;
        let mut seen_point = false;
        for b in body.bytes() {
            match b {
                b'0'..=b'9' => {
                    mantissa = mantissa * 10 + u64::from(b - b'0');
                    digits += 1;
                    if seen_point {
                        fraction_digits += 1;
                    }
                    if digits > SHORT_DECIMAL_DIGITS {
                        return None;
                    }
                }
                b'.' if !seen_point && digits > 0 => seen_point = true,
                _ => return None,
            }
        }
        if digits == 0 || (seen_point && fraction_digits == 0) {
            return None;
        }
        let magnitude = mantissa as f64 / EXACT_POWERS_OF_TEN.get(fraction_digits)?;
        Some(if negative { -magnitude } else { magnitude })
    }
}

impl PartialEq for Number {
    fn eq(&self, other: &Self) -> bool {
        let same_value = self.value == other.value || (self.value.is_nan() && other.value.is_nan());
        same_value && self.unit == other.unit
    }
}

#[cfg(test)]
mod tests {
    use super::Number;

    fn text(v: f64) -> String {
        let mut s = String::new();
        Number::write_value(v, &mut s);
        s
    }

    #[test]
    fn canonical_value_text() {
        assert_eq!(text(151455.0), "151455");
        assert_eq!(text(-10.5), "-10.5");
        assert_eq!(text(0.7893816782198223), "0.7893816782198223");
        assert_eq!(text(1e300), "1e300");
        assert_eq!(text(1.5e-7), "1.5e-7");
        assert_eq!(text(f64::NAN), "NaN");
        assert_eq!(text(f64::NEG_INFINITY), "-INF");
    }

    #[test]
    fn short_decimals_parse_like_the_standard_parser() {
        for text in [
            "0",
            "-0",
            "1",
            "72.5",
            "-10.25",
            "0.1",
            "0.7893816782198",
            "123456789012345",
            "99999.9999999999",
            "3.14159",
            "151455",
            "-0.000001",
        ] {
            let fast = Number::parse_short_decimal(text);
            assert_eq!(
                fast.map(f64::to_bits),
                text.parse::<f64>().ok().map(f64::to_bits),
                "{text}"
            );
        }
        for text in [
            "",
            "-",
            "1.",
            ".5",
            "1e3",
            "1234567890123456",
            "1_0",
            "+1",
            "1.2.3",
        ] {
            assert_eq!(Number::parse_short_decimal(text), None, "{text}");
        }
    }

    proptest::proptest! {
        #[test]
        fn short_decimal_fast_path_is_exact(text in "-?[0-9]{1,9}(\\.[0-9]{1,8})?") {
            if let Some(fast) = Number::parse_short_decimal(&text) {
                proptest::prop_assert_eq!(Some(fast.to_bits()), text.parse::<f64>().ok().map(f64::to_bits));
            }
        }
    }

    #[test]
    fn nan_equals_nan_for_round_trips() {
        assert_eq!(Number::new(f64::NAN), Number::new(f64::NAN));
        assert_ne!(Number::with_unit(1.0, "kW"), Number::new(1.0));
        assert!(Number::with_unit(1.0, "°F").has_zinc_safe_unit());
        assert!(!Number::with_unit(1.0, "m3").has_zinc_safe_unit());
    }
}
