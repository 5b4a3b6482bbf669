//! Read and Write (OPC 10000-4 §5.10): every attribute of every node class, Value with the
//! requested timestamps and optional index ranges on one-dimensional arrays, the dynamic
//! ServerStatus values, and Write of Value with access-level and type checks.

use std::time::Instant;

use super::address_space::{ACCESS_LEVEL_CURRENT_WRITE, Node, NodeAttributes, VariableAttributes};
use super::namespace_zero::SERVER_STATE_RUNNING;
use super::server_state::Server;
use super::server_state::{SECONDS_TILL_SHUTDOWN, SERVER_STATE_SHUTDOWN};
use crate::encoding::{
    BinaryEncodable, DataValue, DateTime, ExtensionObject, ExtensionObjectBody, LocalizedText,
    NodeId, UaString, Variant, VariantType,
};
use crate::services::well_known_nodes as ids;
use crate::services::{AttributeId, ReadValueId, TimestampsToReturn, WriteValue};
use crate::types::StatusCode;

/// `ServerStatusDataType_Encoding_DefaultBinary`.
pub const SERVER_STATUS_BINARY_ENCODING_ID: u32 = 864;
/// Numeric id of the abstract `BaseDataType`: variables of this type accept any value.
const BASE_DATA_TYPE_ID: u32 = 24;

fn data_value(value: Variant) -> DataValue {
    DataValue {
        value: Some(value),
        ..DataValue::default()
    }
}

fn status_value(status: StatusCode) -> DataValue {
    DataValue {
        status: Some(status),
        ..DataValue::default()
    }
}

/// The ServerStatusDataType structure (OPC 10000-5 §12.10) at `now`.
fn server_status(server: &Server, now: DateTime) -> ExtensionObject {
    let info = &server.config.build_info;
    let mut body = Vec::new();
    server.config.start_time.encode(&mut body);
    now.encode(&mut body);
    match server.announced_shutdown() {
        Some(shutdown) => {
            SERVER_STATE_SHUTDOWN.encode(&mut body);
            super::namespace_zero::encode_build_info(info, &mut body);
            shutdown.seconds_left(now).encode(&mut body);
            LocalizedText::new("en", &shutdown.reason).encode(&mut body);
        }
        None => {
            SERVER_STATE_RUNNING.encode(&mut body);
            super::namespace_zero::encode_build_info(info, &mut body);
            0u32.encode(&mut body); // SecondsTillShutdown
            LocalizedText::default().encode(&mut body); // ShutdownReason
        }
    }
    ExtensionObject {
        type_id: NodeId::numeric(0, SERVER_STATUS_BINARY_ENCODING_ID),
        body: ExtensionObjectBody::Binary(body),
    }
}

/// The current value of a Variable, computing the dynamic ServerStatus values.
fn current_value(
    server: &Server,
    node: &Node,
    variable: &VariableAttributes,
    now: DateTime,
) -> Variant {
    if node.node_id == ids::SERVER_SERVER_STATUS_CURRENT_TIME {
        Variant::DateTime(now)
    } else if node.node_id == ids::SERVER_SERVER_STATUS {
        Variant::ExtensionObject(Box::new(server_status(server, now)))
    } else if node.node_id == NodeId::numeric(0, SECONDS_TILL_SHUTDOWN)
        && let Some(shutdown) = server.announced_shutdown()
    {
        Variant::UInt32(shutdown.seconds_left(now))
    } else {
        variable.value.clone()
    }
}

/// A parsed NumericRange for one dimension (OPC 10000-4 §7.27): `a` or `a:b` with a < b.
fn parse_index_range(text: &str) -> Result<(usize, usize), StatusCode> {
    let invalid = StatusCode::BAD_INDEX_RANGE_INVALID;
    let number = |s: &str| s.parse::<usize>().map_err(|_| invalid);
    match text.split_once(':') {
        None => {
            let index = number(text)?;
            Ok((index, index))
        }
        Some((low, high)) => {
            let (low, high) = (number(low)?, number(high)?);
            if low >= high {
                return Err(invalid);
            }
            Ok((low, high))
        }
    }
}

fn apply_index_range(value: Variant, range: &UaString) -> Result<Variant, StatusCode> {
    let Some(text) = range.as_str().filter(|t| !t.is_empty()) else {
        return Ok(value);
    };
    let (low, high) = parse_index_range(text)?;
    match value {
        Variant::Array(array) if array.dimensions().is_none() => {
            let kind = array.element_type();
            let elements = array.into_elements();
            if low >= elements.len() {
                return Err(StatusCode::BAD_INDEX_RANGE_NO_DATA);
            }
            let end = (high + 1).min(elements.len());
            let slice = elements.into_iter().take(end).skip(low).collect();
            Variant::array(kind, slice).map_err(|_| StatusCode::BAD_INDEX_RANGE_NO_DATA)
        }
        _ => Err(StatusCode::BAD_INDEX_RANGE_NO_DATA),
    }
}

/// ArrayDimensions for a ValueRank: one unknown (0) length per dimension of an array of fixed
/// rank, null otherwise (OPC 10000-3 §5.6.2).
fn array_dimensions(value_rank: i32) -> Variant {
    match usize::try_from(value_rank) {
        Ok(rank) if rank > 0 => {
            Variant::array(VariantType::UInt32, vec![Variant::UInt32(0); rank]).unwrap_or_default()
        }
        _ => Variant::Empty,
    }
}

/// The value of a non-Value attribute, Bad_AttributeIdInvalid when the class lacks it.
fn attribute_value(node: &Node, attribute: AttributeId) -> Result<Variant, StatusCode> {
    let invalid = Err(StatusCode::BAD_ATTRIBUTE_ID_INVALID);
    let attributes = &node.attributes;
    Ok(match (attribute, attributes) {
        (AttributeId::NodeId, _) => Variant::from(node.node_id.clone()),
        (AttributeId::NodeClass, _) => Variant::Int32(node.node_class().to_i32()),
        (AttributeId::BrowseName, _) => Variant::QualifiedName(Box::new(node.browse_name.clone())),
        (AttributeId::DisplayName, _) => {
            Variant::LocalizedText(Box::new(node.display_name.clone()))
        }
        (AttributeId::Description, _) => Variant::LocalizedText(Box::new(node.description.clone())),
        (AttributeId::WriteMask | AttributeId::UserWriteMask, _) => Variant::UInt32(0),
        (
            AttributeId::IsAbstract,
            NodeAttributes::ObjectType { is_abstract }
            | NodeAttributes::VariableType { is_abstract, .. }
            | NodeAttributes::DataType { is_abstract }
            | NodeAttributes::ReferenceType { is_abstract, .. },
        ) => Variant::Boolean(*is_abstract),
        (AttributeId::Symmetric, NodeAttributes::ReferenceType { symmetric, .. }) => {
            Variant::Boolean(*symmetric)
        }
        (AttributeId::InverseName, NodeAttributes::ReferenceType { inverse_name, .. }) => {
            match inverse_name {
                Some(name) => {
                    Variant::LocalizedText(Box::new(super::address_space::plain_text(name)))
                }
                None => Variant::Empty,
            }
        }
        (AttributeId::EventNotifier, NodeAttributes::Object) => Variant::Byte(0),
        (AttributeId::DataType, NodeAttributes::Variable(variable)) => {
            Variant::from(variable.data_type.clone())
        }
        (AttributeId::ValueRank, NodeAttributes::Variable(variable)) => {
            Variant::Int32(variable.value_rank)
        }
        (AttributeId::DataType, NodeAttributes::VariableType { data_type, .. }) => {
            Variant::from(data_type.clone())
        }
        (AttributeId::ValueRank, NodeAttributes::VariableType { value_rank, .. }) => {
            Variant::Int32(*value_rank)
        }
        (
            AttributeId::ArrayDimensions,
            NodeAttributes::Variable(VariableAttributes { value_rank, .. })
            | NodeAttributes::VariableType { value_rank, .. },
        ) => array_dimensions(*value_rank),
        (AttributeId::AccessLevel | AttributeId::UserAccessLevel, NodeAttributes::Variable(v)) => {
            Variant::Byte(v.access_level)
        }
        (AttributeId::MinimumSamplingInterval, NodeAttributes::Variable(_)) => Variant::Double(0.0),
        (AttributeId::Historizing, NodeAttributes::Variable(_)) => Variant::Boolean(false),
        (AttributeId::Executable | AttributeId::UserExecutable, NodeAttributes::Method(_)) => {
            Variant::Boolean(true)
        }
        _ => return invalid,
    })
}

/// Reads one attribute at `now` with the requested timestamps.
pub fn read_one(
    server: &Server,
    item: &ReadValueId,
    timestamps: TimestampsToReturn,
    now: Instant,
) -> DataValue {
    let Some(node) = server.address_space.node(&item.node_id) else {
        return status_value(StatusCode::BAD_NODE_ID_UNKNOWN);
    };
    let Some(attribute) = AttributeId::from_u32(item.attribute_id) else {
        return status_value(StatusCode::BAD_ATTRIBUTE_ID_INVALID);
    };
    let has_range = item.index_range.as_str().is_some_and(|r| !r.is_empty());
    if attribute != AttributeId::Value {
        if has_range {
            return status_value(StatusCode::BAD_INDEX_RANGE_NO_DATA);
        }
        return match attribute_value(node, attribute) {
            Ok(value) => data_value(value),
            Err(status) => status_value(status),
        };
    }
    let NodeAttributes::Variable(variable) = &node.attributes else {
        return status_value(StatusCode::BAD_ATTRIBUTE_ID_INVALID);
    };
    if !item.data_encoding.name.is_null() {
        return status_value(StatusCode::BAD_DATA_ENCODING_INVALID);
    }
    let wall_now = server.wall_clock(now);
    let value = match apply_index_range(
        current_value(server, node, variable, wall_now),
        &item.index_range,
    ) {
        Ok(value) => value,
        Err(status) => return status_value(status),
    };
    let dynamic = node.node_id == ids::SERVER_SERVER_STATUS_CURRENT_TIME
        || node.node_id == ids::SERVER_SERVER_STATUS;
    // A value never written since it was added (DateTime::MIN) has been there since the server
    // started: its source timestamp is the start time, never 1601.
    let source = if dynamic {
        wall_now
    } else if variable.source_timestamp == DateTime::MIN {
        server.config.start_time
    } else {
        variable.source_timestamp
    };
    let (with_source, with_server) = match timestamps {
        TimestampsToReturn::Source => (true, false),
        TimestampsToReturn::Server => (false, true),
        TimestampsToReturn::Both => (true, true),
        _ => (false, false),
    };
    DataValue {
        value: Some(value),
        // No source timestamp rather than one in 1601 (a server configured without start time).
        source_timestamp: (with_source && source != DateTime::MIN).then_some(source),
        server_timestamp: with_server.then_some(wall_now),
        ..DataValue::default()
    }
}

/// The built-in type a data type NodeId stands for, for write type checks.
fn expected_type(data_type: &NodeId) -> Option<VariantType> {
    crate::services::attribute::builtin_type_of(data_type)
}

fn type_matches(variable: &VariableAttributes, value: &Variant) -> bool {
    let base = NodeId::numeric(0, BASE_DATA_TYPE_ID);
    if variable.data_type == base {
        return true;
    }
    let expected = expected_type(&variable.data_type).or_else(|| match &variable.value {
        Variant::Array(array) => Some(array.element_type()),
        other => other.scalar_type(),
    });
    let Some(expected) = expected else {
        return false;
    };
    match value {
        Variant::Array(array) => variable.value_rank >= 0 && array.element_type() == expected,
        Variant::Empty => false,
        scalar => variable.value_rank < 0 && scalar.scalar_type() == Some(expected),
    }
}

/// Writes one value at `now` (Value attribute only).
pub fn write_one(server: &mut Server, item: &WriteValue, now: Instant) -> StatusCode {
    let wall_now = server.wall_clock(now);
    let Some(node) = server.address_space.node_mut(&item.node_id) else {
        return StatusCode::BAD_NODE_ID_UNKNOWN;
    };
    let Some(attribute) = AttributeId::from_u32(item.attribute_id) else {
        return StatusCode::BAD_ATTRIBUTE_ID_INVALID;
    };
    if attribute != AttributeId::Value {
        return match attribute_value(node, attribute) {
            Ok(_) => StatusCode::BAD_NOT_WRITABLE,
            Err(status) => status,
        };
    }
    let NodeAttributes::Variable(variable) = &mut node.attributes else {
        return StatusCode::BAD_ATTRIBUTE_ID_INVALID;
    };
    if variable.access_level & ACCESS_LEVEL_CURRENT_WRITE == 0 {
        return StatusCode::BAD_NOT_WRITABLE;
    }
    if item.index_range.as_str().is_some_and(|r| !r.is_empty()) {
        return StatusCode::BAD_WRITE_NOT_SUPPORTED;
    }
    let Some(value) = &item.value.value else {
        return StatusCode::BAD_TYPE_MISMATCH;
    };
    if !type_matches(variable, value) {
        return StatusCode::BAD_TYPE_MISMATCH;
    }
    variable.value = value.clone();
    variable.source_timestamp = item.value.source_timestamp.unwrap_or(wall_now);
    StatusCode::GOOD
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_ranges() {
        assert_eq!(parse_index_range("2"), Ok((2, 2)));
        assert_eq!(parse_index_range("1:3"), Ok((1, 3)));
        assert_eq!(
            parse_index_range("3:1"),
            Err(StatusCode::BAD_INDEX_RANGE_INVALID)
        );
        assert_eq!(
            parse_index_range("x"),
            Err(StatusCode::BAD_INDEX_RANGE_INVALID)
        );
        let array =
            Variant::array(VariantType::Int32, (0..5).map(Variant::Int32).collect()).unwrap();
        let sliced = apply_index_range(array.clone(), &UaString::from("1:2")).unwrap();
        assert_eq!(
            sliced,
            Variant::array(
                VariantType::Int32,
                vec![Variant::Int32(1), Variant::Int32(2)]
            )
            .unwrap()
        );
        assert_eq!(
            apply_index_range(array, &UaString::from("9")),
            Err(StatusCode::BAD_INDEX_RANGE_NO_DATA)
        );
    }

    #[test]
    fn data_type_mapping() {
        assert_eq!(
            expected_type(&NodeId::numeric(0, 7)),
            Some(VariantType::UInt32)
        );
        assert_eq!(expected_type(&ids::UTC_TIME), Some(VariantType::DateTime));
        assert_eq!(
            expected_type(&NodeId::numeric(0, 852)),
            Some(VariantType::Int32)
        );
        assert_eq!(expected_type(&NodeId::numeric(2, 7)), None);
    }
}
