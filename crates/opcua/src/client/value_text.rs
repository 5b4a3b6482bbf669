//! Values at the edge: typed text (`--type double 42.5`, call arguments `uint32:1`) parsed
//! into [`Variant`]s, and Variants rendered as JSON for command-line output (DateTime as
//! ISO 8601 UTC, ByteString as its length and hex, other structures by their text form).

use serde_json::{Value, json};

use crate::encoding::{ByteString, DateTime, UNIX_EPOCH_TICKS, Variant, VariantType};

/// ByteString bytes shown in hex in JSON output; longer ones are cut (the length is given).
pub const MAX_HEX_BYTES_SHOWN: usize = 64;

/// Why a text is not a value of the asked type.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ValueTextError {
    /// The type name is not one of [`TYPE_NAMES`].
    #[error("unknown type `{0}`; expected one of {TYPE_NAMES:?}")]
    UnknownType(String),
    /// The text does not parse as the type.
    #[error("`{text}` is not a valid {type_name}")]
    Invalid {
        /// The type asked for.
        type_name: &'static str,
        /// The text.
        text: String,
    },
    /// A number the type cannot hold.
    #[error("{text} is out of range for {type_name} ({range})")]
    OutOfRange {
        /// The type asked for.
        type_name: &'static str,
        /// The number as given.
        text: String,
        /// What the type holds.
        range: &'static str,
    },
    /// The built-in type has no text or JSON form here.
    #[error("values of type {0} cannot be given here")]
    Unsupported(&'static str),
}

/// Type names accepted by [`parse_value`] (lower case; matching ignores case).
pub const TYPE_NAMES: [&str; 13] = [
    "boolean",
    "sbyte",
    "byte",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "float",
    "double",
    "string",
    "bytestring",
];

fn invalid(type_name: &'static str, text: &str) -> ValueTextError {
    ValueTextError::Invalid {
        type_name,
        text: text.to_owned(),
    }
}

/// What each numeric type holds, for out-of-range messages.
fn range_of(type_name: &'static str) -> &'static str {
    match type_name {
        "sbyte" => "-128 to 127",
        "byte" => "0 to 255",
        "int16" => "-32768 to 32767",
        "uint16" => "0 to 65535",
        "int32" => "-2147483648 to 2147483647",
        "uint32" => "0 to 4294967295",
        "int64" => "-9223372036854775808 to 9223372036854775807",
        "uint64" => "0 to 18446744073709551615",
        "float" => "magnitude at most 3.4028235e38",
        _ => "magnitude at most 1.7976931348623157e308",
    }
}

fn out_of_range(type_name: &'static str, text: &str) -> ValueTextError {
    ValueTextError::OutOfRange {
        type_name,
        text: text.trim().to_owned(),
        range: range_of(type_name),
    }
}

/// An integer of type `T`; a whole number it cannot hold is out of range, not invalid.
fn number<T: std::str::FromStr>(type_name: &'static str, text: &str) -> Result<T, ValueTextError> {
    let trimmed = text.trim();
    trimmed.parse().map_err(|_| {
        if trimmed.parse::<i128>().is_ok() {
            out_of_range(type_name, text)
        } else {
            invalid(type_name, text)
        }
    })
}

/// A floating-point number: `inf`, `-inf` and `nan` as written, but a finite number too
/// large for the type (`1e400` as a Double, `3.4e39` as a Float) is refused rather than
/// read as infinity.
fn floating<T: std::str::FromStr + Into<f64> + Copy>(
    type_name: &'static str,
    text: &str,
) -> Result<T, ValueTextError> {
    let trimmed = text.trim();
    let value: T = trimmed.parse().map_err(|_| invalid(type_name, text))?;
    let lower = trimmed.to_ascii_lowercase();
    let named = lower.trim_start_matches(['+', '-']);
    if value.into().is_infinite() && !matches!(named, "inf" | "infinity") {
        return Err(out_of_range(type_name, text));
    }
    Ok(value)
}

fn hex_bytes(text: &str) -> Option<Vec<u8>> {
    let digits = text.trim().strip_prefix("0x").unwrap_or(text.trim());
    if !digits.len().is_multiple_of(2) {
        return None;
    }
    (0..digits.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(digits.get(at..at + 2)?, 16).ok())
        .collect()
}

/// Parses `text` as a value of `type_name` (one of [`TYPE_NAMES`], any case).
pub fn parse_value(type_name: &str, text: &str) -> Result<Variant, ValueTextError> {
    let lower = type_name.to_ascii_lowercase();
    Ok(match lower.as_str() {
        "boolean" | "bool" => match text.trim().to_ascii_lowercase().as_str() {
            "true" | "1" => Variant::Boolean(true),
            "false" | "0" => Variant::Boolean(false),
            _ => return Err(invalid("boolean", text)),
        },
        "sbyte" => Variant::SByte(number("sbyte", text)?),
        "byte" => Variant::Byte(number("byte", text)?),
        "int16" => Variant::Int16(number("int16", text)?),
        "uint16" => Variant::UInt16(number("uint16", text)?),
        "int32" => Variant::Int32(number("int32", text)?),
        "uint32" => Variant::UInt32(number("uint32", text)?),
        "int64" => Variant::Int64(number("int64", text)?),
        "uint64" => Variant::UInt64(number("uint64", text)?),
        "float" => Variant::Float(floating("float", text)?),
        "double" => Variant::Double(floating("double", text)?),
        "string" => Variant::from(text),
        "bytestring" => Variant::ByteString(ByteString::from(
            hex_bytes(text).ok_or_else(|| invalid("bytestring", text))?,
        )),
        _ => return Err(ValueTextError::UnknownType(type_name.to_owned())),
    })
}

/// The built-in type with this name (any case: `double`, `Int32`, `LocalizedText`).
pub fn variant_type_named(name: &str) -> Option<VariantType> {
    VariantType::ALL
        .iter()
        .copied()
        .find(|t| t.name().eq_ignore_ascii_case(name))
}

/// Parses `text` as a value of the built-in type `kind` (the types of [`TYPE_NAMES`], plus
/// LocalizedText as its text).
pub fn parse_typed(kind: VariantType, text: &str) -> Result<Variant, ValueTextError> {
    match kind {
        VariantType::LocalizedText => Ok(Variant::LocalizedText(Box::new(
            crate::encoding::LocalizedText::new("", text),
        ))),
        other => {
            let name = other.name().to_ascii_lowercase();
            if TYPE_NAMES.contains(&name.as_str()) {
                parse_value(&name, text)
            } else {
                Err(ValueTextError::Unsupported(other.name()))
            }
        }
    }
}

/// A JSON value as a Variant of the built-in type `kind`: numbers are checked against the
/// type's range (a fraction for an integer type is invalid), strings are parsed as
/// [`parse_typed`] does, and a JSON array becomes an array of `kind`.
pub fn json_to_variant(value: &Value, kind: VariantType) -> Result<Variant, ValueTextError> {
    let type_name = |kind: VariantType| -> &'static str {
        TYPE_NAMES
            .iter()
            .copied()
            .find(|n| n.eq_ignore_ascii_case(kind.name()))
            .unwrap_or("value")
    };
    match value {
        Value::Array(items) => {
            let elements = items
                .iter()
                .map(|item| match item {
                    Value::Array(_) => Err(ValueTextError::Unsupported("nested array")),
                    other => json_to_variant(other, kind),
                })
                .collect::<Result<Vec<_>, _>>()?;
            Variant::array(kind, elements).map_err(|_| invalid(type_name(kind), &value.to_string()))
        }
        Value::String(text) => parse_typed(kind, text),
        Value::Bool(flag) => match kind {
            VariantType::Boolean => Ok(Variant::Boolean(*flag)),
            _ => Err(invalid(type_name(kind), &flag.to_string())),
        },
        Value::Number(number) => {
            let text = number.to_string();
            let is_integer = number.is_i64() || number.is_u64();
            match kind {
                VariantType::Float | VariantType::Double => parse_typed(kind, &text),
                VariantType::Boolean | VariantType::String | VariantType::LocalizedText => {
                    Err(invalid(type_name(kind), &text))
                }
                _ if is_integer => parse_typed(kind, &text),
                _ => Err(invalid(type_name(kind), &text)),
            }
        }
        Value::Null | Value::Object(_) => Err(invalid(type_name(kind), &value.to_string())),
    }
}

/// A method argument: `type:value` (e.g. `uint32:1`, `string:a:b`) or a bare value, read as
/// Boolean (`true`/`false`), Int32, Int64 or Double when it looks like one, else String.
pub fn parse_argument(text: &str) -> Result<Variant, ValueTextError> {
    if let Some((type_name, value)) = text.split_once(':')
        && TYPE_NAMES.contains(&type_name.to_ascii_lowercase().as_str())
    {
        return parse_value(type_name, value);
    }
    Ok(match text {
        "true" => Variant::Boolean(true),
        "false" => Variant::Boolean(false),
        _ => {
            if let Ok(value) = text.parse::<i32>() {
                Variant::Int32(value)
            } else if let Ok(value) = text.parse::<i64>() {
                Variant::Int64(value)
            } else if let Ok(value) = text.parse::<f64>() {
                Variant::Double(value)
            } else {
                Variant::from(text)
            }
        }
    })
}

/// A method argument for a method whose declared type is `declared`: `type:value` keeps
/// its own type; a bare value is read as the declared type (`1.5` for a Double, `7` for a
/// UInt32), or guessed as [`parse_argument`] does when the type is unknown.
pub fn parse_argument_as(
    text: &str,
    declared: Option<VariantType>,
) -> Result<Variant, ValueTextError> {
    match declared {
        Some(kind) if !is_typed_argument(text) => parse_typed(kind, text),
        _ => parse_argument(text),
    }
}

/// True when an argument names its own type (`uint32:4`); a caller with only such
/// arguments needs no look at the method's InputArguments.
pub fn is_typed_argument(text: &str) -> bool {
    text.split_once(':')
        .is_some_and(|(name, _)| TYPE_NAMES.contains(&name.to_ascii_lowercase().as_str()))
}

/// `YYYY-MM-DDTHH:MM:SS.fffffffZ` for a DateTime (ticks of 100 ns since 1601, UTC).
pub fn date_time_to_iso(value: DateTime) -> String {
    let since_epoch = i128::from(value.ticks()) - i128::from(UNIX_EPOCH_TICKS);
    let ticks_per_day: i128 = 864_000_000_000;
    let days = i64::try_from(since_epoch.div_euclid(ticks_per_day)).unwrap_or(0);
    let in_day = since_epoch.rem_euclid(ticks_per_day);
    let (year, month, day) = buildwire_civil::civil_from_days(days);
    let seconds = in_day / 10_000_000;
    let fraction = in_day % 10_000_000;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{fraction:07}Z",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// A DataValue of `node` as one JSON object: `node`, `value`, `type`, `status` and the two
/// timestamps (ISO 8601, or null). The form the CLI prints and the Python package reads.
pub fn data_value_json(node: &str, value: &crate::encoding::DataValue) -> Value {
    let status = value.status.unwrap_or(crate::types::StatusCode::GOOD);
    json!({
        "node": node,
        "value": value.value.as_ref().map_or(Value::Null, value_to_json),
        "type": value.value.as_ref().and_then(Variant::scalar_type).map(|t| t.name()),
        "status": status.to_string(),
        "source_timestamp": value.source_timestamp.map(date_time_to_iso),
        "server_timestamp": value.server_timestamp.map(date_time_to_iso),
    })
}

/// A Variant as JSON.
pub fn value_to_json(value: &Variant) -> Value {
    match value {
        Variant::Empty => Value::Null,
        Variant::Boolean(v) => json!(v),
        Variant::SByte(v) => json!(v),
        Variant::Byte(v) => json!(v),
        Variant::Int16(v) => json!(v),
        Variant::UInt16(v) => json!(v),
        Variant::Int32(v) => json!(v),
        Variant::UInt32(v) => json!(v),
        Variant::Int64(v) => json!(v),
        Variant::UInt64(v) => json!(v),
        Variant::Float(v) if v.is_finite() => json!(v),
        Variant::Double(v) if v.is_finite() => json!(v),
        Variant::Float(v) => json!(v.to_string()),
        Variant::Double(v) => json!(v.to_string()),
        Variant::String(v) => v.as_str().map_or(Value::Null, |s| json!(s)),
        Variant::DateTime(v) => json!(date_time_to_iso(*v)),
        Variant::Guid(v) => json!(v.to_string()),
        Variant::ByteString(v) => match v.as_bytes() {
            None => Value::Null,
            Some(bytes) => {
                let shown = bytes.get(..MAX_HEX_BYTES_SHOWN).unwrap_or(bytes);
                let hex: String = shown.iter().map(|b| format!("{b:02x}")).collect();
                json!({"length": bytes.len(), "hex": hex, "truncated": shown.len() < bytes.len()})
            }
        },
        Variant::XmlElement(v) => v.as_str().map_or(Value::Null, |s| json!(s)),
        Variant::StatusCode(v) => json!(v.to_string()),
        Variant::NodeId(v) => json!(v.to_string()),
        Variant::ExpandedNodeId(v) => json!(v.node_id.to_string()),
        Variant::QualifiedName(v) => json!(v.to_string()),
        Variant::LocalizedText(v) => v.text.as_str().map_or(Value::Null, |s| json!(s)),
        Variant::ExtensionObject(v) => super::structures::Structure::decode(v).map_or_else(
            || json!({"type_id": v.type_id.to_string()}),
            |s| s.to_json(),
        ),
        Variant::DataValue(v) => v.value.as_ref().map_or(Value::Null, value_to_json),
        Variant::DiagnosticInfo(_) => json!("DiagnosticInfo"),
        Variant::Array(array) => Value::Array(array.elements().iter().map(value_to_json).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_text() {
        assert_eq!(
            parse_value("Double", "42.5").unwrap(),
            Variant::Double(42.5)
        );
        assert_eq!(parse_value("uint32", "7").unwrap(), Variant::UInt32(7));
        assert_eq!(
            parse_value("boolean", "TRUE").unwrap(),
            Variant::Boolean(true)
        );
        assert_eq!(parse_value("string", "a b").unwrap(), Variant::from("a b"));
        assert_eq!(
            parse_value("bytestring", "0x0aff").unwrap(),
            Variant::ByteString(ByteString::from(vec![0x0A, 0xFF]))
        );
        assert_eq!(
            parse_value("int16", "70000").unwrap_err(),
            ValueTextError::OutOfRange {
                type_name: "int16",
                text: "70000".into(),
                range: "-32768 to 32767"
            }
        );
        assert!(matches!(
            parse_value("quaternion", "1"),
            Err(ValueTextError::UnknownType(_))
        ));
    }

    #[test]
    fn out_of_range_numbers() {
        for (kind, text) in [("float", "3.4e39"), ("double", "1e400"), ("float", "-1e39")] {
            assert!(
                matches!(
                    parse_value(kind, text),
                    Err(ValueTextError::OutOfRange { .. })
                ),
                "{kind} {text}"
            );
        }
        assert_eq!(
            parse_value("float", "-inf"),
            Ok(Variant::Float(f32::NEG_INFINITY))
        );
        assert_eq!(parse_value("float", "3.4e38"), Ok(Variant::Float(3.4e38)));
        assert!(matches!(
            parse_value("byte", "256"),
            Err(ValueTextError::OutOfRange { .. })
        ));
        assert!(matches!(
            parse_value("byte", "2.5"),
            Err(ValueTextError::Invalid { .. })
        ));
    }

    #[test]
    fn json_values_by_type() {
        assert_eq!(
            json_to_variant(&json!(21), VariantType::Double),
            Ok(Variant::Double(21.0))
        );
        assert_eq!(
            json_to_variant(&json!(7), VariantType::UInt16),
            Ok(Variant::UInt16(7))
        );
        assert!(json_to_variant(&json!(1.5), VariantType::Int32).is_err());
        assert!(json_to_variant(&json!(70000), VariantType::UInt16).is_err());
        assert!(json_to_variant(&json!(1e39), VariantType::Float).is_err());
        assert_eq!(
            json_to_variant(&json!([1, 2]), VariantType::Int32)
                .ok()
                .and_then(|v| v.scalar_type().or(Some(VariantType::Int32))),
            Some(VariantType::Int32)
        );
        assert_eq!(
            variant_type_named("localizedtext"),
            Some(VariantType::LocalizedText)
        );
    }

    #[test]
    fn arguments() {
        assert_eq!(parse_argument("uint32:1").unwrap(), Variant::UInt32(1));
        assert_eq!(parse_argument("string:a:b").unwrap(), Variant::from("a:b"));
        assert_eq!(parse_argument("12").unwrap(), Variant::Int32(12));
        assert_eq!(
            parse_argument("5000000000").unwrap(),
            Variant::Int64(5_000_000_000)
        );
        assert_eq!(parse_argument("1.5").unwrap(), Variant::Double(1.5));
        assert_eq!(parse_argument("true").unwrap(), Variant::Boolean(true));
        assert_eq!(
            parse_argument("ns=1;i=5").unwrap(),
            Variant::from("ns=1;i=5")
        );
    }

    #[test]
    fn dates_and_json() {
        assert_eq!(
            date_time_to_iso(DateTime(UNIX_EPOCH_TICKS)),
            "1970-01-01T00:00:00.0000000Z"
        );
        // 2024-02-29T12:34:56.789Z is 1709210096789 ms after the Unix epoch.
        assert_eq!(
            date_time_to_iso(DateTime::from_unix_millis(1_709_210_096_789)),
            "2024-02-29T12:34:56.7890000Z"
        );
        assert_eq!(
            date_time_to_iso(DateTime(0)),
            "1601-01-01T00:00:00.0000000Z"
        );
        let bytes = Variant::ByteString(ByteString::from(vec![1u8; 100]));
        assert_eq!(value_to_json(&bytes)["length"], 100);
        assert_eq!(value_to_json(&bytes)["truncated"], true);
        assert_eq!(value_to_json(&Variant::Double(f64::NAN)), json!("NaN"));
        let array = Variant::array(
            crate::encoding::VariantType::Int32,
            vec![Variant::Int32(1), Variant::Int32(2)],
        )
        .unwrap();
        assert_eq!(value_to_json(&array), json!([1, 2]));
    }
}
