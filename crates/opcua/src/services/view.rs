//! View services (OPC 10000-4 §5.8): Browse, BrowseNext and TranslateBrowsePathsToNodeIds, with
//! the descriptions, results and relative paths they exchange (§7.25, §7.29, §7.30).

use super::header::{RequestHeader, ResponseHeader};
use super::structure_codec::{ua_enumeration, ua_structure};
use crate::encoding::{
    ByteString, DateTime, DiagnosticInfo, ExpandedNodeId, LocalizedText, NodeId, QualifiedName,
};
use crate::types::StatusCode;

ua_enumeration! {
    /// Which references of a node to follow (OPC 10000-4 §7.5).
    pub enum BrowseDirection {
        /// References from the node.
        Forward = 0,
        /// References to the node.
        Inverse = 1,
        /// Both directions.
        Both = 2,
        /// Not a valid direction (servers answer Bad_BrowseDirectionInvalid).
        Invalid = 3,
    }
}

ua_enumeration! {
    /// The class of a node (OPC 10000-3 §8.29). The values are single bits so that they
    /// double as a [`node_class_mask`].
    pub enum NodeClass {
        /// No class given.
        Unspecified = 0,
        /// An Object.
        Object = 1,
        /// A Variable.
        Variable = 2,
        /// A Method.
        Method = 4,
        /// An ObjectType.
        ObjectType = 8,
        /// A VariableType.
        VariableType = 16,
        /// A ReferenceType.
        ReferenceType = 32,
        /// A DataType.
        DataType = 64,
        /// A View.
        View = 128,
    }
}

/// Bits of [`BrowseDescription::node_class_mask`] (OPC 10000-4 §5.8.2.2): one per
/// [`NodeClass`]; 0 selects every class.
pub mod node_class_mask {
    /// Every node class.
    pub const ALL: u32 = 0;
    /// Objects.
    pub const OBJECT: u32 = 1;
    /// Variables.
    pub const VARIABLE: u32 = 2;
    /// Methods.
    pub const METHOD: u32 = 4;
    /// ObjectTypes.
    pub const OBJECT_TYPE: u32 = 8;
    /// VariableTypes.
    pub const VARIABLE_TYPE: u32 = 16;
    /// ReferenceTypes.
    pub const REFERENCE_TYPE: u32 = 32;
    /// DataTypes.
    pub const DATA_TYPE: u32 = 64;
    /// Views.
    pub const VIEW: u32 = 128;
}

/// Bits of [`BrowseDescription::result_mask`]: which [`ReferenceDescription`] fields the server
/// fills (OPC 10000-4 §5.8.2.2, BrowseResultMask).
pub mod browse_result_mask {
    /// No optional field.
    pub const NONE: u32 = 0;
    /// `reference_type_id`.
    pub const REFERENCE_TYPE_ID: u32 = 1;
    /// `is_forward`.
    pub const IS_FORWARD: u32 = 2;
    /// `node_class`.
    pub const NODE_CLASS: u32 = 4;
    /// `browse_name`.
    pub const BROWSE_NAME: u32 = 8;
    /// `display_name`.
    pub const DISPLAY_NAME: u32 = 16;
    /// `type_definition`.
    pub const TYPE_DEFINITION: u32 = 32;
    /// Every field.
    pub const ALL: u32 = 63;
    /// `reference_type_id` and `is_forward`.
    pub const REFERENCE_TYPE_INFO: u32 = 3;
    /// `node_class`, `browse_name`, `display_name` and `type_definition`.
    pub const TARGET_INFO: u32 = 60;
}

ua_structure! {
    /// The View to browse in; a null `view_id` means the whole address space (OPC 10000-4 §7.45).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct ViewDescription {
        /// NodeId of the View (null: no view).
        pub view_id: NodeId,
        /// Browse the view as it was at this time (0: current).
        pub timestamp: DateTime,
        /// Version of the view to browse (0: current).
        pub view_version: u32,
    }
}

ua_structure! {
    /// One node to browse and which references to return (OPC 10000-4 §5.8.2.2).
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct BrowseDescription {
        /// The node to browse.
        pub node_id: NodeId,
        /// Direction of the references to follow.
        pub browse_direction: BrowseDirection,
        /// Reference type to follow (null: all).
        pub reference_type_id: NodeId,
        /// Whether subtypes of `reference_type_id` are followed too.
        pub include_subtypes: bool,
        /// Classes of target nodes to return (bits in [`node_class_mask`]).
        pub node_class_mask: u32,
        /// Fields to fill in each reference (bits in [`browse_result_mask`]).
        pub result_mask: u32,
    }
}

ua_structure! {
    /// A reference found by Browse (OPC 10000-4 §7.30).
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct ReferenceDescription {
        /// Type of the reference.
        pub reference_type_id: NodeId,
        /// True when the browsed node is the source of the reference.
        pub is_forward: bool,
        /// The target node.
        pub node_id: ExpandedNodeId,
        /// BrowseName of the target.
        pub browse_name: QualifiedName,
        /// DisplayName of the target.
        pub display_name: LocalizedText,
        /// NodeClass of the target.
        pub node_class: NodeClass,
        /// Type definition of the target (Objects and Variables only).
        pub type_definition: ExpandedNodeId,
    }
}

ua_structure! {
    /// The references of one browsed node (OPC 10000-4 §7.6).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct BrowseResult {
        /// Outcome for this node.
        pub status_code: StatusCode,
        /// Where to continue with BrowseNext (null when complete).
        pub continuation_point: ByteString,
        /// The references found.
        pub references: Vec<ReferenceDescription>,
    }
}

ua_structure! {
    /// Browses the references of nodes (OPC 10000-4 §5.8.2.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct BrowseRequest {
        /// Common request parameters.
        pub request_header: RequestHeader,
        /// View to browse in.
        pub view: ViewDescription,
        /// Largest number of references per node (0: no limit).
        pub requested_max_references_per_node: u32,
        /// The nodes to browse.
        pub nodes_to_browse: Vec<BrowseDescription>,
    }
}

ua_structure! {
    /// Results of Browse, one per requested node (OPC 10000-4 §5.8.2.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct BrowseResponse {
        /// Common response parameters.
        pub response_header: ResponseHeader,
        /// One result per node to browse.
        pub results: Vec<BrowseResult>,
        /// Diagnostics for `results`.
        pub diagnostic_infos: Vec<DiagnosticInfo>,
    }
}

ua_structure! {
    /// Continues or releases earlier Browse results (OPC 10000-4 §5.8.3.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct BrowseNextRequest {
        /// Common request parameters.
        pub request_header: RequestHeader,
        /// True to free the continuation points without returning references.
        pub release_continuation_points: bool,
        /// Continuation points from earlier results.
        pub continuation_points: Vec<ByteString>,
    }
}

ua_structure! {
    /// Results of BrowseNext, one per continuation point (OPC 10000-4 §5.8.3.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct BrowseNextResponse {
        /// Common response parameters.
        pub response_header: ResponseHeader,
        /// One result per continuation point.
        pub results: Vec<BrowseResult>,
        /// Diagnostics for `results`.
        pub diagnostic_infos: Vec<DiagnosticInfo>,
    }
}

ua_structure! {
    /// One step of a relative path (OPC 10000-4 §7.31).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct RelativePathElement {
        /// Reference type to follow (null: any).
        pub reference_type_id: NodeId,
        /// Follow the reference backwards.
        pub is_inverse: bool,
        /// Also follow subtypes of `reference_type_id`.
        pub include_subtypes: bool,
        /// BrowseName of the target (may be null only for the last element).
        pub target_name: QualifiedName,
    }
}

ua_structure! {
    /// A sequence of references and browse names (OPC 10000-4 §7.31).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct RelativePath {
        /// The steps, in order.
        pub elements: Vec<RelativePathElement>,
    }
}

ua_structure! {
    /// A starting node and a path to follow from it (OPC 10000-4 §5.8.4.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct BrowsePath {
        /// Where the path starts.
        pub starting_node: NodeId,
        /// The path.
        pub relative_path: RelativePath,
    }
}

ua_structure! {
    /// A node a browse path leads to (OPC 10000-4 §5.8.4.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct BrowsePathTarget {
        /// The target node.
        pub target_id: ExpandedNodeId,
        /// Index of the first element not followed (u32::MAX when the path was complete).
        pub remaining_path_index: u32,
    }
}

ua_structure! {
    /// The targets of one browse path (OPC 10000-4 §5.8.4.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct BrowsePathResult {
        /// Outcome for this path.
        pub status_code: StatusCode,
        /// The nodes reached.
        pub targets: Vec<BrowsePathTarget>,
    }
}

ua_structure! {
    /// Resolves browse paths to NodeIds (OPC 10000-4 §5.8.4.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct TranslateBrowsePathsToNodeIdsRequest {
        /// Common request parameters.
        pub request_header: RequestHeader,
        /// The paths to resolve.
        pub browse_paths: Vec<BrowsePath>,
    }
}

ua_structure! {
    /// One result per browse path (OPC 10000-4 §5.8.4.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct TranslateBrowsePathsToNodeIdsResponse {
        /// Common response parameters.
        pub response_header: ResponseHeader,
        /// One result per browse path.
        pub results: Vec<BrowsePathResult>,
        /// Diagnostics for `results`.
        pub diagnostic_infos: Vec<DiagnosticInfo>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::BinaryEncodable;
    use crate::services::test_values::{assert_round_trip, generate_from_seed};
    use proptest::prelude::*;

    #[test]
    fn browse_description_layout() {
        // Browse the Objects folder (i=85) forward along HierarchicalReferences (i=33).
        let description = BrowseDescription {
            node_id: NodeId::numeric(0, 85),
            browse_direction: BrowseDirection::Forward,
            reference_type_id: NodeId::numeric(0, 33),
            include_subtypes: true,
            node_class_mask: node_class_mask::ALL,
            result_mask: browse_result_mask::ALL,
        };
        let expected = [
            0x00, 85, // two-byte NodeId i=85
            0, 0, 0, 0, // Forward
            0x00, 33, // i=33
            1,  // include subtypes
            0, 0, 0, 0, // all node classes
            63, 0, 0, 0, // all result fields
        ];
        assert_eq!(description.to_bytes(), expected);
        assert_eq!(
            BrowseDescription::from_bytes(&expected).unwrap(),
            description
        );
    }

    #[test]
    fn node_class_values_are_mask_bits() {
        for class in NodeClass::ALL {
            let value = class.to_i32();
            assert!(value == 0 || value.count_ones() == 1, "{class:?}");
        }
        assert_eq!(
            NodeClass::from_i32(node_class_mask::VIEW as i32),
            NodeClass::View
        );
        assert_eq!(
            browse_result_mask::REFERENCE_TYPE_INFO | browse_result_mask::TARGET_INFO,
            browse_result_mask::ALL
        );
    }

    proptest! {
        #[test]
        fn view_messages_round_trip(seed: u64) {
            assert_round_trip(&generate_from_seed::<BrowseRequest>(seed));
            assert_round_trip(&generate_from_seed::<BrowseResponse>(seed));
            assert_round_trip(&generate_from_seed::<BrowseNextRequest>(seed));
            assert_round_trip(&generate_from_seed::<BrowseNextResponse>(seed));
            assert_round_trip(&generate_from_seed::<TranslateBrowsePathsToNodeIdsRequest>(seed));
            assert_round_trip(&generate_from_seed::<TranslateBrowsePathsToNodeIdsResponse>(seed));
        }
    }
}
