//! Object types that become points, and their addresses: the connector convention's
//! `bacnetCur`/`bacnetWrite`/`bacnetHis` strings (`AI3`, `TL1`: a type code and the
//! instance) and the gateway's ids (`bacnet.dev1001.ai3`).

use buildwire_bacnet::encoding::ObjectIdentifier;
use buildwire_bacnet::enums::ObjectType;

/// What kind of point an object type makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PointType {
    /// The type code of connector addresses.
    pub code: &'static str,
    /// A Number with units.
    pub analog: bool,
    /// A Bool with active/inactive texts.
    pub binary: bool,
    /// A state out of state-text.
    pub multistate: bool,
    /// A Str.
    pub string: bool,
    /// Commandable when it has a priority-array (outputs always, values optionally).
    pub may_command: bool,
    /// sensor, cmd or sp.
    pub function: &'static str,
}

const fn kind(
    code: &'static str,
    analog: bool,
    binary: bool,
    multistate: bool,
    may_command: bool,
    function: &'static str,
) -> PointType {
    PointType {
        code,
        analog,
        binary,
        multistate,
        string: !analog && !binary && !multistate,
        may_command,
        function,
    }
}

/// The point kind of an object type, `None` for objects that are not points (device,
/// schedule, calendar, trend log, notification class, program...). Codes are those of the
/// Haystack BACnet connector.
pub fn point_type(object_type: ObjectType) -> Option<PointType> {
    Some(match object_type {
        ObjectType::AnalogInput => kind("AI", true, false, false, false, "sensor"),
        ObjectType::AnalogOutput => kind("AO", true, false, false, true, "cmd"),
        ObjectType::AnalogValue => kind("AV", true, false, false, true, "sp"),
        ObjectType::BinaryInput => kind("BI", false, true, false, false, "sensor"),
        ObjectType::BinaryOutput => kind("BO", false, true, false, true, "cmd"),
        ObjectType::BinaryValue => kind("BV", false, true, false, true, "sp"),
        ObjectType::MultiStateInput => kind("MSI", false, false, true, false, "sensor"),
        ObjectType::MultiStateOutput => kind("MSO", false, false, true, true, "cmd"),
        ObjectType::MultiStateValue => kind("MSV", false, false, true, true, "sp"),
        ObjectType::Accumulator => kind("ACC", true, false, false, false, "sensor"),
        ObjectType::PulseConverter => kind("PC", true, false, false, false, "sensor"),
        ObjectType::LargeAnalogValue => kind("LAV", true, false, false, true, "sp"),
        ObjectType::PositiveIntegerValue => kind("PIV", true, false, false, true, "sp"),
        ObjectType::IntegerValue => kind("IV", true, false, false, true, "sp"),
        ObjectType::CharacterstringValue => kind("STR", false, false, false, true, "sp"),
        _ => return None,
    })
}

/// The connector address of an object: `AI3` (points) or `TL1` (trend logs).
pub fn connector_address(object: ObjectIdentifier) -> String {
    let code = match object.object_type() {
        ObjectType::TrendLog => "TL",
        other => point_type(other).map_or("OBJ", |k| k.code),
    };
    format!("{code}{}", object.instance())
}

/// Parses a connector address back (`AI3`, `msv12`).
pub fn parse_connector_address(text: &str) -> Option<ObjectIdentifier> {
    let split = text.find(|c: char| c.is_ascii_digit())?;
    let (code, instance) = text.split_at(split);
    let instance: u32 = instance.parse().ok()?;
    let code = code.to_ascii_uppercase();
    let object_type = if code == "TL" {
        ObjectType::TrendLog
    } else {
        POINT_TYPES
            .iter()
            .copied()
            .find(|t| point_type(*t).is_some_and(|k| k.code == code))?
    };
    ObjectIdentifier::try_new(object_type, instance)
}

/// Every object type that makes a point.
pub const POINT_TYPES: &[ObjectType] = &[
    ObjectType::AnalogInput,
    ObjectType::AnalogOutput,
    ObjectType::AnalogValue,
    ObjectType::BinaryInput,
    ObjectType::BinaryOutput,
    ObjectType::BinaryValue,
    ObjectType::MultiStateInput,
    ObjectType::MultiStateOutput,
    ObjectType::MultiStateValue,
    ObjectType::Accumulator,
    ObjectType::PulseConverter,
    ObjectType::LargeAnalogValue,
    ObjectType::PositiveIntegerValue,
    ObjectType::IntegerValue,
    ObjectType::CharacterstringValue,
];

/// The id of a device's equip: `bacnet.dev1001`.
pub fn equip_id(device: u32) -> String {
    format!("bacnet.dev{device}")
}

/// The id of a device's connector record: `bacnet.dev1001.conn`.
pub fn conn_id(device: u32) -> String {
    format!("bacnet.dev{device}.conn")
}

/// The id of a point: `bacnet.dev1001.ai3` (the connector code in lower case and the
/// instance), stable across restarts and re-discoveries.
pub fn point_id(device: u32, object: ObjectIdentifier) -> String {
    format!(
        "bacnet.dev{device}.{}",
        connector_address(object).to_ascii_lowercase()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_round_trip() {
        for object_type in POINT_TYPES {
            let id = ObjectIdentifier::new(*object_type, 42);
            assert_eq!(parse_connector_address(&connector_address(id)), Some(id));
        }
        let tl = ObjectIdentifier::new(ObjectType::TrendLog, 1);
        assert_eq!(connector_address(tl), "TL1");
        assert_eq!(parse_connector_address("TL1"), Some(tl));
        assert_eq!(parse_connector_address("AI"), None);
        assert_eq!(parse_connector_address("XY3"), None);
        let ai3 = ObjectIdentifier::new(ObjectType::AnalogInput, 3);
        assert_eq!(point_id(1001, ai3), "bacnet.dev1001.ai3");
        assert!(buildwire_haystack::value::is_ref_id(&point_id(1001, ai3)));
    }
}
