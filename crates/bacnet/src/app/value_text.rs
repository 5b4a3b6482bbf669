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
        ValueType::Real => {
            ApplicationValue::Real(parse_float(text, "real", f32::MAX.into())? as f32)
        }
        ValueType::Double => ApplicationValue::Double(parse_float(text, "double", f64::MAX)?),
        ValueType::String => ApplicationValue::CharacterString(
            text.strip_prefix('"')
                .and_then(|t| t.strip_suffix('"'))
                .unwrap_or(text)
                .to_owned(),
        ),
    };
    Ok(vec![Element::Application(value)])
}

/// A REAL (`limit` f32::MAX) or DOUBLE from text. A number beyond the type's range is
/// refused rather than written as infinity (`1e400`, `3.4e39` for a REAL); only the
/// words `inf`, `-inf`, `infinity` and `nan` give those values.
fn parse_float(text: &str, kind: &str, limit: f64) -> Result<f64, String> {
    let value: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a valid {kind} value"))?;
    let word = text
        .trim_start_matches(['+', '-'])
        .chars()
        .all(|c| c.is_ascii_alphabetic());
    if !word && value.abs() > limit {
        return Err(format!(
            "`{text}` is out of range for a {kind} (largest magnitude about {limit:.7e}); \
             a {kind} cannot hold it"
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
        for too_big in ["1e400", "3.4e39", "-3.5e38"] {
            let error = parse_value_text(too_big, None, av, pv).unwrap_err();
            assert!(error.contains("out of range for a real"), "{error}");
        }
        let error = parse_value_text("1e400", Some(ValueType::Double), av, pv).unwrap_err();
        assert!(error.contains("out of range for a double"), "{error}");
        assert_eq!(guess("3.4e38", av), one(ApplicationValue::Real(3.4e38_f32)));
        assert_eq!(
            guess("-inf", av),
            one(ApplicationValue::Real(f32::NEG_INFINITY))
        );
    }
}
