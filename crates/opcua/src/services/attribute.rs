//! Attribute services (OPC 10000-4 §5.10): Read and Write, with ReadValueId (§7.29), WriteValue,
//! TimestampsToReturn (§7.40) and the table of attribute ids (OPC 10000-6 §A.1).

use super::header::{RequestHeader, ResponseHeader};
use super::structure_codec::{ua_enumeration, ua_structure};
use crate::encoding::{DataValue, DiagnosticInfo, NodeId, QualifiedName, UaString};
use crate::types::StatusCode;

/// Declares [`AttributeId`] from one `Name = number` table.
macro_rules! attribute_ids {
    ($( $(#[$meta:meta])* $name:ident = $value:literal ),+ $(,)?) => {
        /// The attributes of a node (OPC 10000-6 §A.1). ReadValueId and WriteValue carry the
        /// number as a UInt32, so unknown numbers stay representable there (the server answers
        /// Bad_AttributeIdInvalid).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u32)]
        pub enum AttributeId {
            $( $(#[$meta])* $name = $value, )+
        }

        impl AttributeId {
            /// Every attribute, in table order.
            pub const ALL: &'static [AttributeId] = &[$( AttributeId::$name ),+];

            /// The attribute with this number, if the table lists it.
            pub const fn from_u32(value: u32) -> Option<Self> {
                match value {
                    $( $value => Some(Self::$name), )+
                    _ => None,
                }
            }

            /// The number written in ReadValueId / WriteValue.
            pub const fn id(self) -> u32 {
                self as u32
            }

            /// The specification's name of the attribute.
            pub const fn name(self) -> &'static str {
                match self {
                    $( Self::$name => stringify!($name), )+
                }
            }

            /// The attribute named `name`, ignoring case, `-` and `_` (`BrowseName`,
            /// `browse-name` and `browse_name` alike), if the table lists it.
            pub fn from_name(name: &str) -> Option<Self> {
                let wanted = name.chars().filter(|c| *c != '-' && *c != '_');
                Self::ALL.iter().copied().find(|attribute| {
                    attribute.name().len() == wanted.clone().count()
                        && attribute
                            .name()
                            .chars()
                            .zip(wanted.clone())
                            .all(|(a, b)| a.eq_ignore_ascii_case(&b))
                })
            }
        }
    };
}

attribute_ids! {
    /// NodeId of the node.
    NodeId = 1,
    /// NodeClass of the node.
    NodeClass = 2,
    /// BrowseName of the node.
    BrowseName = 3,
    /// DisplayName of the node.
    DisplayName = 4,
    /// Description of the node.
    Description = 5,
    /// Which attributes are writable.
    WriteMask = 6,
    /// Which attributes the current user may write.
    UserWriteMask = 7,
    /// Whether a type is abstract.
    IsAbstract = 8,
    /// Whether a ReferenceType is symmetric.
    Symmetric = 9,
    /// Inverse name of a ReferenceType.
    InverseName = 10,
    /// Whether a View contains no loops.
    ContainsNoLoops = 11,
    /// Event notifier bits of an Object or View.
    EventNotifier = 12,
    /// Value of a Variable or VariableType.
    Value = 13,
    /// DataType of a Variable.
    DataType = 14,
    /// ValueRank of a Variable.
    ValueRank = 15,
    /// ArrayDimensions of a Variable.
    ArrayDimensions = 16,
    /// AccessLevel of a Variable.
    AccessLevel = 17,
    /// AccessLevel for the current user.
    UserAccessLevel = 18,
    /// Fastest useful sampling interval.
    MinimumSamplingInterval = 19,
    /// Whether the server keeps history.
    Historizing = 20,
    /// Whether a Method can be called.
    Executable = 21,
    /// Whether the current user can call a Method.
    UserExecutable = 22,
    /// Definition of a DataType.
    DataTypeDefinition = 23,
    /// Role permissions of the node.
    RolePermissions = 24,
    /// Role permissions for the current user.
    UserRolePermissions = 25,
    /// Access restrictions of the node.
    AccessRestrictions = 26,
    /// Extended AccessLevel of a Variable.
    AccessLevelEx = 27,
}

ua_enumeration! {
    /// Which timestamps Read returns (OPC 10000-4 §7.40).
    pub enum TimestampsToReturn {
        /// Source timestamp only.
        Source = 0,
        /// Server timestamp only.
        Server = 1,
        /// Both timestamps.
        Both = 2,
        /// No timestamps.
        Neither = 3,
        /// Not a valid choice (servers answer Bad_TimestampsToReturnInvalid).
        Invalid = 4,
    }
}

ua_structure! {
    /// One attribute to read (OPC 10000-4 §7.29).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct ReadValueId {
        /// The node.
        pub node_id: NodeId,
        /// The attribute (see [`AttributeId`]).
        pub attribute_id: u32,
        /// Sub-range of an array value (null: all).
        pub index_range: UaString,
        /// Requested data encoding of a structured value (null: default).
        pub data_encoding: QualifiedName,
    }
}

ua_structure! {
    /// Reads attributes of nodes (OPC 10000-4 §5.10.2.2).
    #[derive(Clone, Debug, PartialEq)]
    pub struct ReadRequest {
        /// Common request parameters.
        pub request_header: RequestHeader,
        /// Oldest acceptable cached value, in milliseconds (0: read from the source).
        pub max_age: f64,
        /// Which timestamps to return.
        pub timestamps_to_return: TimestampsToReturn,
        /// The attributes to read.
        pub nodes_to_read: Vec<ReadValueId>,
    }
}

ua_structure! {
    /// Values read, one per ReadValueId (OPC 10000-4 §5.10.2.2).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ReadResponse {
        /// Common response parameters.
        pub response_header: ResponseHeader,
        /// One DataValue per attribute to read.
        pub results: Vec<DataValue>,
        /// Diagnostics for `results`.
        pub diagnostic_infos: Vec<DiagnosticInfo>,
    }
}

ua_structure! {
    /// One attribute value to write (OPC 10000-4 §5.10.4.2).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct WriteValue {
        /// The node.
        pub node_id: NodeId,
        /// The attribute (see [`AttributeId`]).
        pub attribute_id: u32,
        /// Sub-range of an array value (null: all).
        pub index_range: UaString,
        /// The value, with optional status and timestamps.
        pub value: DataValue,
    }
}

ua_structure! {
    /// Writes attributes of nodes (OPC 10000-4 §5.10.4.2).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct WriteRequest {
        /// Common request parameters.
        pub request_header: RequestHeader,
        /// The values to write.
        pub nodes_to_write: Vec<WriteValue>,
    }
}

ua_structure! {
    /// Results of Write, one per WriteValue (OPC 10000-4 §5.10.4.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct WriteResponse {
        /// Common response parameters.
        pub response_header: ResponseHeader,
        /// One status per value to write.
        pub results: Vec<StatusCode>,
        /// Diagnostics for `results`.
        pub diagnostic_infos: Vec<DiagnosticInfo>,
    }
}

/// Numeric id of `UtcTime`, a DateTime.
pub const UTC_TIME_DATA_TYPE_ID: u32 = 294;
/// Numeric ids of the enumerations whose values are Int32 here (`Enumeration`,
/// `ServerState`).
pub const ENUMERATION_DATA_TYPE_IDS: &[u32] = &[29, 852];

/// The built-in type that carries values of a DataType: the built-in DataTypes themselves
/// (ns=0, ids 1 to 25), `UtcTime` (DateTime) and the enumerations known here (Int32); None
/// for other types (structures, abstract types, other namespaces).
pub fn builtin_type_of(data_type: &NodeId) -> Option<crate::encoding::VariantType> {
    let crate::encoding::Identifier::Numeric(number) = data_type.identifier else {
        return None;
    };
    if data_type.namespace != 0 {
        return None;
    }
    if number == UTC_TIME_DATA_TYPE_ID {
        return Some(crate::encoding::VariantType::DateTime);
    }
    if ENUMERATION_DATA_TYPE_IDS.contains(&number) {
        return Some(crate::encoding::VariantType::Int32);
    }
    u8::try_from(number)
        .ok()
        .and_then(crate::encoding::VariantType::from_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::{BinaryEncodable, DecodeErrorKind, DecodingLimits, Reader, Variant};
    use crate::services::test_values::{assert_round_trip, generate_from_seed};
    use proptest::prelude::*;

    #[test]
    fn attribute_table() {
        assert_eq!(AttributeId::NodeId.id(), 1);
        assert_eq!(AttributeId::Value.id(), 13);
        assert_eq!(AttributeId::from_u32(27), Some(AttributeId::AccessLevelEx));
        assert_eq!(AttributeId::from_u32(28), None);
        assert_eq!(AttributeId::ALL.len(), 27);
        for (index, attribute) in AttributeId::ALL.iter().enumerate() {
            assert_eq!(attribute.id() as usize, index + 1, "{}", attribute.name());
        }
    }

    #[test]
    fn read_value_id_layout() {
        // Value attribute of ns=2;s=T (OPC 10000-6 §5.2.2.9: string NodeId form 0x03).
        let read = ReadValueId {
            node_id: NodeId::string(2, "T"),
            attribute_id: AttributeId::Value.id(),
            index_range: UaString::NULL,
            data_encoding: QualifiedName::default(),
        };
        let expected = [
            0x03, 2, 0, 1, 0, 0, 0, b'T', // ns=2;s=T
            13, 0, 0, 0, // Value
            0xFF, 0xFF, 0xFF, 0xFF, // no index range
            0, 0, 0xFF, 0xFF, 0xFF, 0xFF, // QualifiedName 0:null
        ];
        assert_eq!(read.to_bytes(), expected);
        assert_eq!(ReadValueId::from_bytes(&expected).unwrap(), read);
    }

    #[test]
    fn write_value_carries_a_data_value() {
        let write = WriteValue {
            node_id: NodeId::numeric(1, 1000),
            attribute_id: AttributeId::Value.id(),
            index_range: UaString::NULL,
            value: DataValue {
                value: Some(Variant::Double(21.5)),
                ..DataValue::default()
            },
        };
        let bytes = write.to_bytes();
        // DataValue mask 0x01 (value), Variant type 11 (Double), 21.5 little-endian.
        assert_eq!(
            &bytes[bytes.len() - 10..],
            [0x01, 0x0B, 0, 0, 0, 0, 0, 0x80, 0x35, 0x40]
        );
        assert_round_trip(&write);
    }

    #[test]
    fn read_request_array_limit() {
        let request = ReadRequest {
            request_header: RequestHeader::default(),
            max_age: 0.0,
            timestamps_to_return: TimestampsToReturn::Both,
            nodes_to_read: vec![ReadValueId::default(); 3],
        };
        let bytes = request.to_bytes();
        let limits = DecodingLimits {
            max_array_length: 2,
            ..DecodingLimits::default()
        };
        let mut reader = Reader::with_limits(&bytes, limits);
        let error = ReadRequest::decode(&mut reader).unwrap_err();
        // The array length follows the header (29 bytes), max age (8) and timestamps (4).
        assert_eq!(error.offset, 41);
        assert_eq!(
            error.kind,
            DecodeErrorKind::ArrayTooLong {
                length: 3,
                limit: 2
            }
        );
    }

    proptest! {
        #[test]
        fn attribute_messages_round_trip(seed: u64) {
            assert_round_trip(&generate_from_seed::<ReadRequest>(seed));
            assert_round_trip(&generate_from_seed::<ReadResponse>(seed));
            assert_round_trip(&generate_from_seed::<WriteRequest>(seed));
            assert_round_trip(&generate_from_seed::<WriteResponse>(seed));
        }
    }
}
