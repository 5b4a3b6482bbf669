//! Namespace-0 NodeIds a server's address space starts from, in one table (numbers from the
//! OPC Foundation's `Schema/NodeIds.csv`, UA-Nodeset).

use crate::encoding::NodeId;

/// Declares one `NodeId` constant per row and the [`WELL_KNOWN_NODES`] list.
macro_rules! well_known_nodes {
    ($( $(#[$meta:meta])* $constant:ident = $name:literal, $id:literal; )+) => {
        $(
            $(#[$meta])*
            #[doc = concat!("`", $name, "`, `ns=0;i=", stringify!($id), "`.")]
            pub const $constant: NodeId = NodeId::numeric(0, $id);
        )+

        /// Every row of the table: browse-path style name and numeric id.
        pub const WELL_KNOWN_NODES: &[(&str, u32)] = &[$( ($name, $id) ),+];
    };
}

well_known_nodes! {
    // Data types.
    BOOLEAN = "Boolean", 1;
    INT32 = "Int32", 6;
    DOUBLE = "Double", 11;
    STRING = "String", 12;
    LOCALIZED_TEXT = "LocalizedText", 21;
    STRUCTURE = "Structure", 22;
    BASE_DATA_TYPE = "BaseDataType", 24;
    ENUMERATION = "Enumeration", 29;
    UTC_TIME = "UtcTime", 294;
    BUILD_INFO = "BuildInfo", 338;
    SERVER_STATE = "ServerState", 852;
    SERVER_STATUS_DATA_TYPE = "ServerStatusDataType", 862;
    // Reference types.
    REFERENCES = "References", 31;
    NON_HIERARCHICAL_REFERENCES = "NonHierarchicalReferences", 32;
    HIERARCHICAL_REFERENCES = "HierarchicalReferences", 33;
    HAS_CHILD = "HasChild", 34;
    ORGANIZES = "Organizes", 35;
    HAS_EVENT_SOURCE = "HasEventSource", 36;
    HAS_MODELLING_RULE = "HasModellingRule", 37;
    HAS_ENCODING = "HasEncoding", 38;
    HAS_TYPE_DEFINITION = "HasTypeDefinition", 40;
    GENERATES_EVENT = "GeneratesEvent", 41;
    AGGREGATES = "Aggregates", 44;
    HAS_SUBTYPE = "HasSubtype", 45;
    HAS_PROPERTY = "HasProperty", 46;
    HAS_COMPONENT = "HasComponent", 47;
    HAS_NOTIFIER = "HasNotifier", 48;
    // Object and variable types.
    BASE_OBJECT_TYPE = "BaseObjectType", 58;
    FOLDER_TYPE = "FolderType", 61;
    BASE_VARIABLE_TYPE = "BaseVariableType", 62;
    BASE_DATA_VARIABLE_TYPE = "BaseDataVariableType", 63;
    PROPERTY_TYPE = "PropertyType", 68;
    SERVER_TYPE = "ServerType", 2004;
    SERVER_STATUS_TYPE = "ServerStatusType", 2138;
    MODELLING_RULE_MANDATORY = "ModellingRule_Mandatory", 78;
    // Folders.
    ROOT_FOLDER = "RootFolder", 84;
    OBJECTS_FOLDER = "ObjectsFolder", 85;
    TYPES_FOLDER = "TypesFolder", 86;
    VIEWS_FOLDER = "ViewsFolder", 87;
    OBJECT_TYPES_FOLDER = "ObjectTypesFolder", 88;
    VARIABLE_TYPES_FOLDER = "VariableTypesFolder", 89;
    DATA_TYPES_FOLDER = "DataTypesFolder", 90;
    REFERENCE_TYPES_FOLDER = "ReferenceTypesFolder", 91;
    // The Server object.
    SERVER = "Server", 2253;
    SERVER_SERVER_ARRAY = "Server_ServerArray", 2254;
    SERVER_NAMESPACE_ARRAY = "Server_NamespaceArray", 2255;
    SERVER_SERVER_STATUS = "Server_ServerStatus", 2256;
    SERVER_SERVER_STATUS_START_TIME = "Server_ServerStatus_StartTime", 2257;
    SERVER_SERVER_STATUS_CURRENT_TIME = "Server_ServerStatus_CurrentTime", 2258;
    SERVER_SERVER_STATUS_STATE = "Server_ServerStatus_State", 2259;
    SERVER_SERVER_STATUS_BUILD_INFO = "Server_ServerStatus_BuildInfo", 2260;
    SERVER_SERVICE_LEVEL = "Server_ServiceLevel", 2267;
    SERVER_SERVER_CAPABILITIES = "Server_ServerCapabilities", 2268;
    SERVER_SERVER_CAPABILITIES_SERVER_PROFILE_ARRAY = "Server_ServerCapabilities_ServerProfileArray", 2269;
    SERVER_SERVER_DIAGNOSTICS = "Server_ServerDiagnostics", 2274;
    SERVER_VENDOR_SERVER_INFO = "Server_VendorServerInfo", 2295;
    SERVER_SERVER_REDUNDANCY = "Server_ServerRedundancy", 2296;
    SERVER_SERVER_CAPABILITIES_OPERATION_LIMITS = "Server_ServerCapabilities_OperationLimits", 11704;
    SERVER_NAMESPACES = "Server_Namespaces", 11715;
}

/// The table name of a namespace-0 NodeId, if the table lists it.
pub fn name_of(node_id: &NodeId) -> Option<&'static str> {
    let number = super::message::namespace_zero_number(node_id)?;
    WELL_KNOWN_NODES
        .iter()
        .find(|(_, id)| *id == number)
        .map(|(name, _)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn table_rows() {
        assert_eq!(OBJECTS_FOLDER, NodeId::numeric(0, 85));
        assert_eq!(SERVER_SERVER_STATUS_CURRENT_TIME, NodeId::numeric(0, 2258));
        assert_eq!(name_of(&NodeId::numeric(0, 47)), Some("HasComponent"));
        assert_eq!(name_of(&NodeId::numeric(1, 47)), None);
        let mut seen = HashSet::new();
        for (name, id) in WELL_KNOWN_NODES {
            assert!(seen.insert(*id), "{name} repeats {id}");
        }
    }
}
