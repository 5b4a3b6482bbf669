//! Property values given as text at the edge (command line, Python): `72.5`, `active`,
//! `null`, `"text"`, with an optional explicit datatype. Without one, the datatype is guessed
//! from the object type and property, as a controls engineer would expect: present-value of a
//! binary object is Enumerated (`active`/`inactive`/`1`), of a multi-state object Unsigned, of
//! an analog object REAL.

use std::str::FromStr;

use crate::encoding::{ApplicationValue, Element, ObjectIdentifier};
use crate::enums::{ObjectType, PropertyIdentifier};

/// The datatype of a value given as text (on the command line, or from Python).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueType {
    /// REAL (single precision).
    Real,
    /// Double.
    Double,
    /// Unsigned Integer.
    Unsigned,
    /// Signed Integer.
    Signed,
    /// Enumerated (a number, or active/inactive).
    Enumerated,
    /// BOOLEAN.
    Boolean,
    /// NULL (relinquishes a commandable priority).
    Null,
    /// CharacterString.
    String,
}

impl ValueType {
    /// Every datatype, with its name.
    pub const ALL: [(ValueType, &'static str); 8] = [
        (ValueType::Real, "real"),
        (ValueType::Double, "double"),
        (ValueType::Unsigned, "unsigned"),
        (ValueType::Signed, "signed"),
        (ValueType::Enumerated, "enumerated"),
        (ValueType::Boolean, "boolean"),
        (ValueType::Null, "null"),
        (ValueType::String, "string"),
    ];
}

impl FromStr for ValueType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ValueType::ALL
            .iter()
            .find(|(_, name)| name.eq_ignore_ascii_case(s))
            .map(|(t, _)| *t)
            .ok_or_else(|| {
                format!("unknown datatype `{s}`: use real, double, unsigned, signed, enumerated, boolean, null or string")
            })
    }
}

/// Parses `text` as the value of `property` of `object`, with `value_type` or a guessed type.
pub fn parse_value_text(
    text: &str,
    value_type: Option<ValueType>,
    object: ObjectIdentifier,
    property: PropertyIdentifier,
) -> Result<Vec<Element>, String> {
    let bad = |kind: &str| format!("`{text}` is not a valid {kind} value");
    let text = text.trim();
    let lower = text.to_ascii_lowercase();
    let guessed = value_type.unwrap_or_else(|| {
        if lower == "null" {
            ValueType::Null
        } else if lower == "true" || lower == "false" {
            ValueType::Boolean
        } else if lower == "active" || lower == "inactive" {
            ValueType::Enumerated
        } else if property == PropertyIdentifier::PresentValue
            || property == PropertyIdentifier::RelinquishDefault
        {
            match object.object_type() {
                ObjectType::BinaryInput | ObjectType::BinaryOutput | ObjectType::BinaryValue => {
                    ValueType::Enumerated
                }
                ObjectType::MultiStateInput
                | ObjectType::MultiStateOutput
                | ObjectType::MultiStateValue => ValueType::Unsigned,
                _ if text.parse::<f64>().is_ok() => ValueType::Real,
                _ => ValueType::String,
            }
        } else if text.parse::<u64>().is_ok() {
            ValueType::Unsigned
        } else if text.parse::<f64>().is_ok() {
            ValueType::Real
        } else {
            ValueType::String
        }
    });
    let value = match guessed {
        ValueType::Null => ApplicationValue::Null,
        ValueType::Boolean => match lower.as_str() {
            "true" | "1" => ApplicationValue::Boolean(true),
            "false" | "0" => ApplicationValue::Boolean(false),
            _ => return Err(bad("boolean")),
        },
        ValueType::Enumerated => match lower.as_str() {
            "active" => ApplicationValue::Enumerated(1),
            "inactive" => ApplicationValue::Enumerated(0),
            _ => ApplicationValue::Enumerated(text.parse().map_err(|_| bad("enumerated"))?),
        },
        ValueType::Unsigned => {
            ApplicationValue::Unsigned(text.parse().map_err(|_| bad("unsigned"))?)
        }
        ValueType::Signed => ApplicationValue::Signed(text.parse().map_err(|_| bad("signed"))?),
        ValueType::Real => ApplicationValue::Real(real(text)?),
        ValueType::Double => ApplicationValue::Double(double(text)?),
        ValueType::String => ApplicationValue::CharacterString(
            text.strip_prefix('"')
                .and_then(|t| t.strip_suffix('"'))
                .unwrap_or(text)
                .to_owned(),
        ),
    };
    Ok(vec![Element::Application(value)])
}

/// A REAL from text: a number within the 32-bit range, or NaN. Text parsing alone turns
/// `3.4e39` or `1e400` into infinity, which would then be written to the device.
fn real(text: &str) -> Result<f32, String> {
    let value: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a valid real value"))?;
    if !value.is_nan() && value.abs() > f64::from(f32::MAX) {
        return Err(format!(
            "{text} is out of the REAL (32-bit float) range of ±3.4028235e38; \
             write it as a double (value type `double`) if the property takes one"
        ));
    }
    Ok(value as f32)
}

/// A Double from text: any finite number, or NaN; infinities are refused.
fn double(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a valid double value"))?;
    if value.is_infinite() {
        return Err(format!(
            "{text} is infinite (or beyond the 64-bit float range); BACnet devices expect a \
             finite number"
        ));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(value: ApplicationValue) -> Vec<Element> {
        vec![Element::Application(value)]
    }

    #[test]
    fn values_are_typed_from_the_object_and_the_text() {
        let av: ObjectIdentifier = "av,1".parse().unwrap();
        let bv: ObjectIdentifier = "bv,1".parse().unwrap();
        let msv: ObjectIdentifier = "msv,1".parse().unwrap();
        let pv = PropertyIdentifier::PresentValue;
        let guess = |text, object| parse_value_text(text, None, object, pv).unwrap();
        assert_eq!(guess("72.5", av), one(ApplicationValue::Real(72.5)));
        assert_eq!(guess("null", av), one(ApplicationValue::Null));
        assert_eq!(guess("active", bv), one(ApplicationValue::Enumerated(1)));
        assert_eq!(guess("0", bv), one(ApplicationValue::Enumerated(0)));
        assert_eq!(guess("2", msv), one(ApplicationValue::Unsigned(2)));
        let description = PropertyIdentifier::Description;
        assert_eq!(
            parse_value_text("\"north zone\"", None, av, description).unwrap(),
            one(ApplicationValue::CharacterString("north zone".to_owned()))
        );
        assert_eq!(
            parse_value_text("-3", Some(ValueType::Signed), av, pv).unwrap(),
            one(ApplicationValue::Signed(-3))
        );
        let error = parse_value_text("warm", Some(ValueType::Real), av, pv).unwrap_err();
        assert_eq!(error, "`warm` is not a valid real value");
    }

    #[test]
    fn reals_out_of_range_are_refused_not_written_as_infinity() {
        let av: ObjectIdentifier = "av,1".parse().unwrap();
        let pv = PropertyIdentifier::PresentValue;
        for text in ["3.4e39", "-3.4e39", "1e400", "inf", "-inf"] {
            let error = parse_value_text(text, Some(ValueType::Real), av, pv).unwrap_err();
            assert!(error.contains(text), "{error}");
            let guessed = parse_value_text(text, None, av, pv).unwrap_err();
            assert!(
                guessed.contains("range") || guessed.contains("infinite"),
                "{guessed}"
            );
        }
        assert_eq!(
            parse_value_text("3.4e38", Some(ValueType::Real), av, pv).unwrap(),
            one(ApplicationValue::Real(3.4e38))
        );
        assert_eq!(
            parse_value_text("3.4e39", Some(ValueType::Double), av, pv).unwrap(),
            one(ApplicationValue::Double(3.4e39))
        );
        assert!(parse_value_text("1e400", Some(ValueType::Double), av, pv).is_err());
    }
}
