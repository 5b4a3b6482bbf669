//! The namespace-0 nodes a client expects, from one table: the reference type hierarchy, the
//! types the standard nodes point to, the Root / Objects / Types / Views folders and the Server
//! object with ServerStatus, ServerCapabilities.OperationLimits, NamespaceArray and ServerArray.
//! NodeIds are those of the OPC Foundation's `Schema/NodeIds.csv`.

use super::address_space::{
    ACCESS_LEVEL_CURRENT_READ, VALUE_RANK_ONE_DIMENSION, VALUE_RANK_SCALAR,
};
use super::address_space::{AddNodeError, AddressSpace, NodeAttributes, VariableAttributes};
use super::config::ServerConfig;
use crate::encoding::{DateTime, NodeId, QualifiedName, UaString, Variant, VariantType};
use crate::services::well_known_nodes as ids;

/// `Server_ServerStatus_BuildInfo_ProductName`.
pub const BUILD_INFO_PRODUCT_NAME: u32 = 2261;
/// `Server_ServerStatus_BuildInfo_ProductUri`.
pub const BUILD_INFO_PRODUCT_URI: u32 = 2262;
/// `Server_ServerStatus_BuildInfo_ManufacturerName`.
pub const BUILD_INFO_MANUFACTURER_NAME: u32 = 2263;
/// `Server_ServerStatus_BuildInfo_SoftwareVersion`.
pub const BUILD_INFO_SOFTWARE_VERSION: u32 = 2264;
/// `Server_ServerStatus_BuildInfo_BuildNumber`.
pub const BUILD_INFO_BUILD_NUMBER: u32 = 2265;
/// `Server_ServerStatus_BuildInfo_BuildDate`.
pub const BUILD_INFO_BUILD_DATE: u32 = 2266;
/// `Server_ServerCapabilities_MaxBrowseContinuationPoints`.
pub const MAX_BROWSE_CONTINUATION_POINTS: u32 = 2735;
/// `Server_ServerCapabilities_OperationLimits_MaxNodesPerRead`.
pub const MAX_NODES_PER_READ: u32 = 11705;
/// `Server_ServerCapabilities_OperationLimits_MaxNodesPerWrite`.
pub const MAX_NODES_PER_WRITE: u32 = 11707;
/// `Server_ServerCapabilities_OperationLimits_MaxNodesPerMethodCall`.
pub const MAX_NODES_PER_METHOD_CALL: u32 = 11709;
/// `Server_ServerCapabilities_OperationLimits_MaxNodesPerBrowse`.
pub const MAX_NODES_PER_BROWSE: u32 = 11710;
/// `Server_ServerCapabilities_OperationLimits_MaxNodesPerTranslateBrowsePathsToNodeIds`.
pub const MAX_NODES_PER_TRANSLATE: u32 = 11712;
/// `ServerState.Running` (OPC 10000-5 §12.6).
pub const SERVER_STATE_RUNNING: i32 = 0;

/// Data type ids used below (OPC 10000-6 §5.1.2 built-in type numbers).
const UINT32: u32 = 7;
const STRING: u32 = 12;
const SERVER_CAPABILITIES_TYPE: u32 = 2013;
const BUILD_INFO_TYPE: u32 = 3051;
const OPERATION_LIMITS_TYPE: u32 = 11564;

/// What one row of [`NAMESPACE_ZERO`] declares.
#[derive(Clone, Copy)]
enum Kind {
    /// A ReferenceType (abstract?, symmetric?).
    ReferenceType(bool, bool),
    /// An ObjectType, VariableType or DataType (abstract?).
    ObjectType(bool),
    VariableType(bool),
    DataType(bool),
    /// An Object with a type definition.
    Object(u32),
    /// A Variable: data type, type definition, array?; its value is filled in afterwards.
    Variable(u32, u32, bool),
}

/// id, BrowseName, parent id, reference from the parent, kind. Parents precede children.
#[rustfmt::skip]
const NAMESPACE_ZERO: &[(u32, &str, u32, u32, Kind)] = &[
    // Reference types (OPC 10000-5 §11), linked by HasSubtype.
    (31, "References", 0, 0, Kind::ReferenceType(true, true)),
    (33, "HierarchicalReferences", 31, 45, Kind::ReferenceType(true, false)),
    (32, "NonHierarchicalReferences", 31, 45, Kind::ReferenceType(true, false)),
    (34, "HasChild", 33, 45, Kind::ReferenceType(true, false)),
    (35, "Organizes", 33, 45, Kind::ReferenceType(false, false)),
    (36, "HasEventSource", 33, 45, Kind::ReferenceType(false, false)),
    (48, "HasNotifier", 36, 45, Kind::ReferenceType(false, false)),
    (44, "Aggregates", 34, 45, Kind::ReferenceType(true, false)),
    (45, "HasSubtype", 34, 45, Kind::ReferenceType(false, false)),
    (47, "HasComponent", 44, 45, Kind::ReferenceType(false, false)),
    (46, "HasProperty", 44, 45, Kind::ReferenceType(false, false)),
    (40, "HasTypeDefinition", 32, 45, Kind::ReferenceType(false, false)),
    (37, "HasModellingRule", 32, 45, Kind::ReferenceType(false, false)),
    (38, "HasEncoding", 32, 45, Kind::ReferenceType(false, false)),
    (41, "GeneratesEvent", 32, 45, Kind::ReferenceType(false, false)),
    // Object, variable and data types referenced by the instances below.
    (58, "BaseObjectType", 0, 0, Kind::ObjectType(false)),
    (61, "FolderType", 58, 45, Kind::ObjectType(false)),
    (2004, "ServerType", 58, 45, Kind::ObjectType(false)),
    (2013, "ServerCapabilitiesType", 58, 45, Kind::ObjectType(false)),
    (11564, "OperationLimitsType", 61, 45, Kind::ObjectType(false)),
    (62, "BaseVariableType", 0, 0, Kind::VariableType(true)),
    (63, "BaseDataVariableType", 62, 45, Kind::VariableType(false)),
    (68, "PropertyType", 62, 45, Kind::VariableType(false)),
    (2138, "ServerStatusType", 63, 45, Kind::VariableType(false)),
    (3051, "BuildInfoType", 63, 45, Kind::VariableType(false)),
    (24, "BaseDataType", 0, 0, Kind::DataType(true)),
    (1, "Boolean", 24, 45, Kind::DataType(false)),
    (26, "Number", 24, 45, Kind::DataType(true)),
    (11, "Double", 26, 45, Kind::DataType(false)),
    (27, "Integer", 26, 45, Kind::DataType(true)),
    (6, "Int32", 27, 45, Kind::DataType(false)),
    (28, "UInteger", 26, 45, Kind::DataType(true)),
    (7, "UInt32", 28, 45, Kind::DataType(false)),
    (12, "String", 24, 45, Kind::DataType(false)),
    (13, "DateTime", 24, 45, Kind::DataType(false)),
    (15, "ByteString", 24, 45, Kind::DataType(false)),
    (22, "Structure", 24, 45, Kind::DataType(true)),
    (29, "Enumeration", 24, 45, Kind::DataType(true)),
    (296, "Argument", 22, 45, Kind::DataType(false)),
    (338, "BuildInfo", 22, 45, Kind::DataType(false)),
    (862, "ServerStatusDataType", 22, 45, Kind::DataType(false)),
    (852, "ServerState", 29, 45, Kind::DataType(false)),
    // Folders (OPC 10000-5 §8.2).
    (84, "Root", 0, 0, Kind::Object(61)),
    (85, "Objects", 84, 35, Kind::Object(61)),
    (86, "Types", 84, 35, Kind::Object(61)),
    (87, "Views", 84, 35, Kind::Object(61)),
    (88, "ObjectTypes", 86, 35, Kind::Object(61)),
    (89, "VariableTypes", 86, 35, Kind::Object(61)),
    (90, "DataTypes", 86, 35, Kind::Object(61)),
    (91, "ReferenceTypes", 86, 35, Kind::Object(61)),
    // The Server object (OPC 10000-5 §8.3.2).
    (2253, "Server", 85, 35, Kind::Object(2004)),
    (2254, "ServerArray", 2253, 46, Kind::Variable(STRING, 68, true)),
    (2255, "NamespaceArray", 2253, 46, Kind::Variable(STRING, 68, true)),
    (2256, "ServerStatus", 2253, 47, Kind::Variable(862, 2138, false)),
    (2257, "StartTime", 2256, 47, Kind::Variable(294, 63, false)),
    (2258, "CurrentTime", 2256, 47, Kind::Variable(294, 63, false)),
    (2259, "State", 2256, 47, Kind::Variable(852, 63, false)),
    (2260, "BuildInfo", 2256, 47, Kind::Variable(338, BUILD_INFO_TYPE, false)),
    (2262, "ProductUri", 2260, 47, Kind::Variable(STRING, 63, false)),
    (2263, "ManufacturerName", 2260, 47, Kind::Variable(STRING, 63, false)),
    (2261, "ProductName", 2260, 47, Kind::Variable(STRING, 63, false)),
    (2264, "SoftwareVersion", 2260, 47, Kind::Variable(STRING, 63, false)),
    (2265, "BuildNumber", 2260, 47, Kind::Variable(STRING, 63, false)),
    (2266, "BuildDate", 2260, 47, Kind::Variable(294, 63, false)),
    (2268, "ServerCapabilities", 2253, 47, Kind::Object(SERVER_CAPABILITIES_TYPE)),
    (2735, "MaxBrowseContinuationPoints", 2268, 46, Kind::Variable(UINT32, 68, false)),
    (11704, "OperationLimits", 2268, 47, Kind::Object(OPERATION_LIMITS_TYPE)),
    (11705, "MaxNodesPerRead", 11704, 46, Kind::Variable(UINT32, 68, false)),
    (11707, "MaxNodesPerWrite", 11704, 46, Kind::Variable(UINT32, 68, false)),
    (11709, "MaxNodesPerMethodCall", 11704, 46, Kind::Variable(UINT32, 68, false)),
    (11710, "MaxNodesPerBrowse", 11704, 46, Kind::Variable(UINT32, 68, false)),
    (11712, "MaxNodesPerTranslateBrowsePathsToNodeIds", 11704, 46, Kind::Variable(UINT32, 68, false)),
];

fn attributes(kind: Kind) -> NodeAttributes {
    match kind {
        Kind::ReferenceType(is_abstract, symmetric) => NodeAttributes::ReferenceType {
            is_abstract,
            symmetric,
            inverse_name: None,
        },
        Kind::ObjectType(is_abstract) => NodeAttributes::ObjectType { is_abstract },
        Kind::VariableType(is_abstract) => NodeAttributes::VariableType { is_abstract },
        Kind::DataType(is_abstract) => NodeAttributes::DataType { is_abstract },
        Kind::Object(_) => NodeAttributes::Object,
        Kind::Variable(data_type, _, is_array) => NodeAttributes::Variable(VariableAttributes {
            value: Variant::Empty,
            source_timestamp: DateTime::MIN,
            data_type: NodeId::numeric(0, data_type),
            value_rank: if is_array {
                VALUE_RANK_ONE_DIMENSION
            } else {
                VALUE_RANK_SCALAR
            },
            access_level: ACCESS_LEVEL_CURRENT_READ,
        }),
    }
}

fn strings(values: &[&str]) -> Variant {
    let elements = values
        .iter()
        .map(|v| Variant::String(UaString::from(*v)))
        .collect();
    Variant::array(VariantType::String, elements).unwrap_or_default()
}

/// An address space with the namespace-0 nodes of the table, their values taken from `config`.
pub fn build(config: &ServerConfig) -> Result<AddressSpace, AddNodeError> {
    let mut space = AddressSpace::empty();
    for &(id, name, _, _, kind) in NAMESPACE_ZERO {
        space.insert(
            NodeId::numeric(0, id),
            QualifiedName::new(0, name),
            name,
            attributes(kind),
        )?;
    }
    // UtcTime (a DateTime subtype) is the data type of the time variables.
    space.insert(
        ids::UTC_TIME,
        QualifiedName::new(0, "UtcTime"),
        "UtcTime",
        NodeAttributes::DataType { is_abstract: false },
    )?;
    space.add_reference(&NodeId::numeric(0, 13), &ids::HAS_SUBTYPE, &ids::UTC_TIME)?;
    for &(id, _, parent, reference, kind) in NAMESPACE_ZERO {
        let node = NodeId::numeric(0, id);
        if parent != 0 {
            space.add_reference(
                &NodeId::numeric(0, parent),
                &NodeId::numeric(0, reference),
                &node,
            )?;
        }
        let type_definition = match kind {
            Kind::Object(type_id) | Kind::Variable(_, type_id, _) => type_id,
            _ => continue,
        };
        space.add_reference(
            &node,
            &ids::HAS_TYPE_DEFINITION,
            &NodeId::numeric(0, type_definition),
        )?;
    }
    let info = &config.build_info;
    let limits = &config.operation_limits;
    let values = [
        (2254, strings(&[config.application_uri.as_str()])),
        (2255, strings(&["http://opcfoundation.org/UA/"])),
        (2257, Variant::DateTime(config.start_time)),
        (2259, Variant::Int32(SERVER_STATE_RUNNING)),
        (
            BUILD_INFO_PRODUCT_URI,
            Variant::from(info.product_uri.as_str()),
        ),
        (
            BUILD_INFO_MANUFACTURER_NAME,
            Variant::from(info.manufacturer_name.as_str()),
        ),
        (
            BUILD_INFO_PRODUCT_NAME,
            Variant::from(info.product_name.as_str()),
        ),
        (
            BUILD_INFO_SOFTWARE_VERSION,
            Variant::from(info.software_version.as_str()),
        ),
        (
            BUILD_INFO_BUILD_NUMBER,
            Variant::from(info.build_number.as_str()),
        ),
        (BUILD_INFO_BUILD_DATE, Variant::DateTime(info.build_date)),
        (
            MAX_BROWSE_CONTINUATION_POINTS,
            Variant::UInt32(
                u32::try_from(limits.max_browse_continuation_points).unwrap_or(u32::MAX),
            ),
        ),
        (
            MAX_NODES_PER_READ,
            Variant::UInt32(limits.max_nodes_per_read),
        ),
        (
            MAX_NODES_PER_WRITE,
            Variant::UInt32(limits.max_nodes_per_write),
        ),
        (
            MAX_NODES_PER_METHOD_CALL,
            Variant::UInt32(limits.max_nodes_per_method_call),
        ),
        (
            MAX_NODES_PER_BROWSE,
            Variant::UInt32(limits.max_nodes_per_browse),
        ),
        (
            MAX_NODES_PER_TRANSLATE,
            Variant::UInt32(limits.max_nodes_per_translate),
        ),
    ];
    for (id, value) in values {
        // Every id above is a Variable of the table.
        let _ = space.set_value(&NodeId::numeric(0, id), value, config.start_time);
    }
    Ok(space)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_builds_with_the_hierarchy_clients_expect() {
        let space = build(&ServerConfig::default()).unwrap();
        assert_eq!(space.len(), NAMESPACE_ZERO.len() + 1);
        for (sub, base) in [
            (ids::HAS_COMPONENT, ids::HIERARCHICAL_REFERENCES),
            (ids::HAS_PROPERTY, ids::AGGREGATES),
            (ids::ORGANIZES, ids::REFERENCES),
            (ids::HAS_TYPE_DEFINITION, ids::NON_HIERARCHICAL_REFERENCES),
        ] {
            assert!(space.is_subtype_of(&sub, &base), "{sub} under {base}");
        }
        assert!(!space.is_subtype_of(&ids::HAS_TYPE_DEFINITION, &ids::HIERARCHICAL_REFERENCES));
        // Every node but the roots of the hierarchies has an inverse reference to a parent.
        for &(id, name, parent, _, _) in NAMESPACE_ZERO {
            let node = space.node(&NodeId::numeric(0, id)).unwrap();
            assert_eq!(node.browse_name.name.as_str(), Some(name));
            if parent != 0 {
                assert!(
                    node.references
                        .iter()
                        .any(|r| !r.is_forward && r.target == NodeId::numeric(0, parent))
                );
            }
        }
        let server = space.node(&ids::SERVER).unwrap();
        assert_eq!(server.type_definition(), Some(&ids::SERVER_TYPE));
        let Some(NodeAttributes::Variable(limit)) = space
            .node(&NodeId::numeric(0, MAX_NODES_PER_READ))
            .map(|n| &n.attributes)
        else {
            panic!("MaxNodesPerRead is not a variable");
        };
        assert_eq!(limit.value, Variant::UInt32(10_000));
    }
}
