//! The standard structures a user meets when reading a server (OPC 10000-5 and -8):
//! ServerStatusDataType, BuildInfo, Range, EUInformation and Argument, decoded from the
//! binary body of their ExtensionObject into named fields for text and JSON output (instead
//! of only the encoding's NodeId), and the Argument's DataType for typing call arguments.

use serde_json::{Value, json};

use super::value_text::date_time_to_iso;
use crate::encoding::{
    BinaryEncodable, DateTime, ExtensionObject, ExtensionObjectBody, LocalizedText, NodeId, Reader,
    UaString,
};
use crate::services::BuildInfo;

/// `ServerStatusDataType_Encoding_DefaultBinary`.
pub const SERVER_STATUS_ENCODING: u32 = 864;
/// `BuildInfo_Encoding_DefaultBinary`.
pub const BUILD_INFO_ENCODING: u32 = 340;
/// `Range_Encoding_DefaultBinary`.
pub const RANGE_ENCODING: u32 = 886;
/// `EUInformation_Encoding_DefaultBinary`.
pub const EU_INFORMATION_ENCODING: u32 = 889;
/// `Argument_Encoding_DefaultBinary`.
pub const ARGUMENT_ENCODING: u32 = 298;

/// The names of the ServerState enumeration (OPC 10000-5 §12.6), by value.
const SERVER_STATES: [&str; 8] = [
    "Running",
    "Failed",
    "NoConfiguration",
    "Suspended",
    "Shutdown",
    "Test",
    "CommunicationFault",
    "Unknown",
];

/// One decoded standard structure.
#[derive(Clone, Debug, PartialEq)]
pub enum Structure {
    /// ServerStatusDataType (OPC 10000-5 §12.10).
    ServerStatus {
        /// StartTime.
        start_time: DateTime,
        /// CurrentTime.
        current_time: DateTime,
        /// State (ServerState).
        state: i32,
        /// BuildInfo.
        build_info: BuildInfo,
        /// SecondsTillShutdown.
        seconds_till_shutdown: u32,
        /// ShutdownReason.
        shutdown_reason: String,
    },
    /// BuildInfo.
    BuildInfo(BuildInfo),
    /// Range (OPC 10000-8 §5.6.2).
    Range {
        /// Low.
        low: f64,
        /// High.
        high: f64,
    },
    /// EUInformation (OPC 10000-8 §5.6.3).
    EuInformation {
        /// NamespaceUri.
        namespace_uri: String,
        /// UnitId.
        unit_id: i32,
        /// DisplayName.
        display_name: String,
        /// Description.
        description: String,
    },
    /// Argument (OPC 10000-3 §8.6).
    Argument {
        /// Name.
        name: String,
        /// DataType.
        data_type: NodeId,
        /// ValueRank.
        value_rank: i32,
        /// ArrayDimensions.
        array_dimensions: Vec<u32>,
        /// Description.
        description: String,
    },
}

fn text(value: UaString) -> String {
    value.as_str().unwrap_or_default().to_owned()
}

fn localized(value: LocalizedText) -> String {
    text(value.text)
}

fn build_info(reader: &mut Reader<'_>) -> Option<BuildInfo> {
    Some(BuildInfo {
        product_uri: text(UaString::decode(reader).ok()?),
        manufacturer_name: text(UaString::decode(reader).ok()?),
        product_name: text(UaString::decode(reader).ok()?),
        software_version: text(UaString::decode(reader).ok()?),
        build_number: text(UaString::decode(reader).ok()?),
        build_date: DateTime::decode(reader).ok()?,
    })
}

fn build_info_json(info: &BuildInfo) -> Value {
    json!({
        "product_uri": info.product_uri,
        "manufacturer_name": info.manufacturer_name,
        "product_name": info.product_name,
        "software_version": info.software_version,
        "build_number": info.build_number,
        "build_date": date_time_to_iso(info.build_date),
    })
}

/// The name of a ServerState value (its number when unknown).
pub fn server_state_name(state: i32) -> String {
    usize::try_from(state)
        .ok()
        .and_then(|i| SERVER_STATES.get(i))
        .map_or_else(|| state.to_string(), |name| (*name).to_owned())
}

impl Structure {
    /// Decodes `object` when it is one of the structures above in binary; None otherwise
    /// (another type, or a body that does not decode).
    pub fn decode(object: &ExtensionObject) -> Option<Self> {
        let ExtensionObjectBody::Binary(body) = &object.body else {
            return None;
        };
        if object.type_id.namespace != 0 {
            return None;
        }
        let crate::encoding::Identifier::Numeric(id) = object.type_id.identifier else {
            return None;
        };
        let reader = &mut Reader::new(body);
        Some(match id {
            SERVER_STATUS_ENCODING => Self::ServerStatus {
                start_time: DateTime::decode(reader).ok()?,
                current_time: DateTime::decode(reader).ok()?,
                state: i32::decode(reader).ok()?,
                build_info: build_info(reader)?,
                seconds_till_shutdown: u32::decode(reader).ok()?,
                shutdown_reason: localized(LocalizedText::decode(reader).ok()?),
            },
            BUILD_INFO_ENCODING => Self::BuildInfo(build_info(reader)?),
            RANGE_ENCODING => Self::Range {
                low: f64::decode(reader).ok()?,
                high: f64::decode(reader).ok()?,
            },
            EU_INFORMATION_ENCODING => Self::EuInformation {
                namespace_uri: text(UaString::decode(reader).ok()?),
                unit_id: i32::decode(reader).ok()?,
                display_name: localized(LocalizedText::decode(reader).ok()?),
                description: localized(LocalizedText::decode(reader).ok()?),
            },
            ARGUMENT_ENCODING => Self::Argument {
                name: text(UaString::decode(reader).ok()?),
                data_type: NodeId::decode(reader).ok()?,
                value_rank: i32::decode(reader).ok()?,
                array_dimensions: Vec::<u32>::decode(reader).ok()?,
                description: localized(LocalizedText::decode(reader).ok()?),
            },
            _ => return None,
        })
    }

    /// The structure's type name.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::ServerStatus { .. } => "ServerStatusDataType",
            Self::BuildInfo(_) => "BuildInfo",
            Self::Range { .. } => "Range",
            Self::EuInformation { .. } => "EUInformation",
            Self::Argument { .. } => "Argument",
        }
    }

    /// The fields as a JSON object (DateTimes in ISO 8601, ServerState by name, DataTypes
    /// as NodeId text).
    pub fn to_json(&self) -> Value {
        match self {
            Self::ServerStatus {
                start_time,
                current_time,
                state,
                build_info,
                seconds_till_shutdown,
                shutdown_reason,
            } => json!({
                "start_time": date_time_to_iso(*start_time),
                "current_time": date_time_to_iso(*current_time),
                "state": server_state_name(*state),
                "build_info": build_info_json(build_info),
                "seconds_till_shutdown": seconds_till_shutdown,
                "shutdown_reason": shutdown_reason,
            }),
            Self::BuildInfo(info) => build_info_json(info),
            Self::Range { low, high } => json!({"low": low, "high": high}),
            Self::EuInformation {
                namespace_uri,
                unit_id,
                display_name,
                description,
            } => json!({
                "namespace_uri": namespace_uri,
                "unit_id": unit_id,
                "display_name": display_name,
                "description": description,
            }),
            Self::Argument {
                name,
                data_type,
                value_rank,
                array_dimensions,
                description,
            } => json!({
                "name": name,
                "data_type": crate::services::attribute::builtin_type_of(data_type)
                    .map_or_else(|| data_type.to_string(), |t| t.name().to_owned()),
                "value_rank": value_rank,
                "array_dimensions": array_dimensions,
                "description": description,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_and_argument_round_trip() {
        let mut body = Vec::new();
        (-20.0f64).encode(&mut body);
        60.0f64.encode(&mut body);
        let range = ExtensionObject {
            type_id: NodeId::numeric(0, RANGE_ENCODING),
            body: ExtensionObjectBody::Binary(body),
        };
        assert_eq!(
            Structure::decode(&range).map(|s| s.to_json()),
            Some(json!({"low": -20.0, "high": 60.0}))
        );
        let mut body = Vec::new();
        UaString::from("size").encode(&mut body);
        NodeId::numeric(0, 7).encode(&mut body);
        (-1i32).encode(&mut body);
        Vec::<u32>::new().encode(&mut body);
        LocalizedText::new("", "KiB").encode(&mut body);
        let argument = ExtensionObject {
            type_id: NodeId::numeric(0, ARGUMENT_ENCODING),
            body: ExtensionObjectBody::Binary(body),
        };
        let decoded = Structure::decode(&argument).map(|s| s.to_json());
        assert_eq!(
            decoded.as_ref().map(|j| j["data_type"].clone()),
            Some(json!("UInt32"))
        );
        // A body cut short is not decoded.
        let short = ExtensionObject {
            type_id: NodeId::numeric(0, RANGE_ENCODING),
            body: ExtensionObjectBody::Binary(vec![0; 9]),
        };
        assert_eq!(Structure::decode(&short), None);
        assert_eq!(server_state_name(4), "Shutdown");
        assert_eq!(server_state_name(99), "99");
    }
}
