//! Values between the two sides: a BACnet present-value as the point's Haystack value
//! (`curVal`, history, `writeVal`) and back, and `curStatus` from status-flags,
//! reliability and reachability.

use buildwire_bacnet::encoding::{ApplicationValue, Element, ObjectIdentifier};
use buildwire_bacnet::enums::ObjectType;
use buildwire_haystack::value::{Dict, Number, Value};

use super::address::PointType;

/// A point as the collector and the writer need it, read back from its record.
#[derive(Debug, Clone, PartialEq)]
pub struct PointValue {
    /// The point's id (without `@`).
    pub id: String,
    /// The object.
    pub object: ObjectIdentifier,
    /// Its kind.
    pub kind: PointType,
    /// The unit symbol of its values.
    pub unit: Option<String>,
    /// The names of its states (multi-state: state 1 first; binary: inactive, active).
    pub states: Vec<String>,
}

impl PointValue {
    /// The point of a record with `bacnetCur` (`None` for other records).
    pub fn from_record(record: &Dict) -> Option<Self> {
        let id = match record.get("id")? {
            Value::Ref(r) => r.id.clone(),
            _ => return None,
        };
        let object = match record.get("bacnetCur")? {
            Value::Str(address) => super::address::parse_connector_address(address)?,
            _ => return None,
        };
        let kind = super::address::point_type(object.object_type())?;
        let unit = match record.get("unit") {
            Some(Value::Str(u)) => Some(u.clone()),
            _ => None,
        };
        let states = match record.get("enum") {
            Some(Value::Str(e)) if kind.multistate => e.split(',').map(str::to_owned).collect(),
            _ => Vec::new(),
        };
        Some(Self {
            id,
            object,
            kind,
            unit,
            states,
        })
    }

    /// The Haystack value of a present-value.
    pub fn haystack(&self, elements: &[Element]) -> Option<Value> {
        to_haystack(&self.kind, self.unit.as_deref(), &self.states, elements)
    }

    /// The present-value to write for a Haystack value.
    pub fn bacnet(&self, value: &Value) -> Result<Element, String> {
        to_bacnet(self.object, &self.kind, &self.states, value)
    }
}

/// A present-value as a Haystack value: Number (analog, with the unit), Bool (binary),
/// Str (multi-state: the state's text, else its number; character strings). `None` for
/// NULL or a value of an unexpected type.
pub fn to_haystack(
    kind: &PointType,
    unit: Option<&str>,
    states: &[String],
    elements: &[Element],
) -> Option<Value> {
    let Element::Application(value) = elements.first()? else {
        return None;
    };
    let number = |v: f64| match unit {
        Some(u) => Value::Number(Number::with_unit(v, u)),
        None => Value::Number(Number::new(v)),
    };
    Some(match value {
        ApplicationValue::Real(v) if kind.analog => number(f64::from(*v)),
        ApplicationValue::Double(v) if kind.analog => number(*v),
        ApplicationValue::Unsigned(v) if kind.analog => number(*v as f64),
        ApplicationValue::Signed(v) if kind.analog => number(*v as f64),
        ApplicationValue::Enumerated(v) if kind.binary => Value::Bool(*v != 0),
        ApplicationValue::Unsigned(v) if kind.multistate => {
            let index = usize::try_from(*v).ok()?;
            match index.checked_sub(1).and_then(|i| states.get(i)) {
                Some(text) => Value::Str(text.clone()),
                None => Value::Str(v.to_string()),
            }
        }
        ApplicationValue::CharacterString(s) if kind.string => Value::Str(s.clone()),
        _ => return None,
    })
}

/// A Haystack value as the present-value to write: the application type the object type
/// takes (REAL, Double, Unsigned, INTEGER, Enumerated, CharacterString).
pub fn to_bacnet(
    object: ObjectIdentifier,
    kind: &PointType,
    states: &[String],
    value: &Value,
) -> Result<Element, String> {
    let wrong = || format!("{value:?} does not fit {object}");
    let app = match (value, object.object_type()) {
        (Value::Number(n), ObjectType::LargeAnalogValue) => ApplicationValue::Double(n.value),
        (Value::Number(n), ObjectType::PositiveIntegerValue) if n.value >= 0.0 => {
            ApplicationValue::Unsigned(n.value.round() as u64)
        }
        (Value::Number(n), ObjectType::IntegerValue) => {
            ApplicationValue::Signed(n.value.round() as i64)
        }
        (Value::Number(n), _) if kind.analog => ApplicationValue::Real(n.value as f32),
        (Value::Bool(b), _) if kind.binary => ApplicationValue::Enumerated(u32::from(*b)),
        (Value::Number(n), _) if kind.binary && (n.value == 0.0 || n.value == 1.0) => {
            ApplicationValue::Enumerated(n.value as u32)
        }
        (Value::Str(s), _) if kind.multistate => match states.iter().position(|t| t == s) {
            Some(index) => ApplicationValue::Unsigned(index as u64 + 1),
            None => match s.parse::<u64>() {
                Ok(n) if n >= 1 => ApplicationValue::Unsigned(n),
                _ => {
                    return Err(format!(
                        "{s:?} is not a state of {object} (states: {})",
                        states.join(", ")
                    ));
                }
            },
        },
        (Value::Number(n), _) if kind.multistate && n.value >= 1.0 && n.value.fract() == 0.0 => {
            ApplicationValue::Unsigned(n.value as u64)
        }
        (Value::Str(s), _) if kind.string => ApplicationValue::CharacterString(s.clone()),
        _ => return Err(wrong()),
    };
    Ok(Element::Application(app))
}

/// `curStatus`: `down` when the device does not answer, `fault` when status-flags says
/// fault or reliability is not no-fault-detected, `disabled` when out of service, else
/// `ok`.
pub fn cur_status(flags: Option<[bool; 4]>, reliability: Option<u32>, down: bool) -> &'static str {
    if down {
        "down"
    } else if flags.is_some_and(|f| f[1]) || reliability.is_some_and(|r| r != 0) {
        "fault"
    } else if flags.is_some_and(|f| f[3]) {
        "disabled"
    } else {
        "ok"
    }
}

#[cfg(test)]
mod tests {
    use super::super::address::point_type;
    use super::*;

    fn app(value: ApplicationValue) -> Vec<Element> {
        vec![Element::Application(value)]
    }

    #[test]
    fn values_both_ways() {
        let msv = ObjectIdentifier::new(ObjectType::MultiStateValue, 1);
        let kind = point_type(ObjectType::MultiStateValue).unwrap_or_else(|| unreachable!());
        let states = vec!["Off".to_owned(), "Low".to_owned(), "High".to_owned()];
        assert_eq!(
            to_haystack(&kind, None, &states, &app(ApplicationValue::Unsigned(2))),
            Some(Value::Str("Low".into()))
        );
        assert_eq!(
            to_bacnet(msv, &kind, &states, &Value::Str("High".into())),
            Ok(Element::Application(ApplicationValue::Unsigned(3)))
        );
        assert!(to_bacnet(msv, &kind, &states, &Value::Str("Turbo".into())).is_err());
        let av = ObjectIdentifier::new(ObjectType::AnalogValue, 1);
        let kind = point_type(ObjectType::AnalogValue).unwrap_or_else(|| unreachable!());
        assert_eq!(
            to_haystack(&kind, Some("°F"), &[], &app(ApplicationValue::Real(71.5))),
            Some(Value::Number(Number::with_unit(71.5, "°F")))
        );
        assert_eq!(
            to_bacnet(av, &kind, &[], &Value::Number(Number::new(70.0))),
            Ok(Element::Application(ApplicationValue::Real(70.0)))
        );
        assert!(to_bacnet(av, &kind, &[], &Value::Bool(true)).is_err());
        let bv = ObjectIdentifier::new(ObjectType::BinaryValue, 1);
        let kind = point_type(ObjectType::BinaryValue).unwrap_or_else(|| unreachable!());
        assert_eq!(
            to_bacnet(bv, &kind, &[], &Value::Bool(true)),
            Ok(Element::Application(ApplicationValue::Enumerated(1)))
        );
        assert_eq!(
            to_haystack(&kind, None, &[], &app(ApplicationValue::Null)),
            None
        );
    }

    #[test]
    fn status_from_flags() {
        assert_eq!(cur_status(Some([false; 4]), Some(0), false), "ok");
        assert_eq!(
            cur_status(Some([false, true, false, false]), None, false),
            "fault"
        );
        assert_eq!(cur_status(None, Some(7), false), "fault");
        assert_eq!(
            cur_status(Some([false, false, false, true]), None, false),
            "disabled"
        );
        assert_eq!(cur_status(None, None, true), "down");
    }
}
