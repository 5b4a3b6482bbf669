//! UA Binary encoding (OPC 10000-6 §5.2): the [`Reader`] cursor, [`DecodingLimits`],
//! [`DecodeError`], the [`BinaryEncodable`] trait and every built-in type with its codec.

mod binary_encodable;
mod data_value;
mod date_time;
mod diagnostic_info;
mod error;
mod extension_object;
mod guid;
mod limits;
mod localized_text;
mod node_id;
mod qualified_name;
mod reader;
mod string;
mod variant;
mod variant_type;

pub use binary_encodable::BinaryEncodable;
pub use data_value::DataValue;
pub use date_time::{DateTime, UNIX_EPOCH_TICKS};
pub use diagnostic_info::DiagnosticInfo;
pub use error::{DecodeError, DecodeErrorKind};
pub use extension_object::{ExtensionObject, ExtensionObjectBody};
pub use guid::Guid;
pub use limits::{
    DEFAULT_MAX_ARRAY_LENGTH, DEFAULT_MAX_BYTE_STRING_LENGTH, DEFAULT_MAX_DIAGNOSTIC_DEPTH,
    DEFAULT_MAX_NESTING_DEPTH, DEFAULT_MAX_STRING_LENGTH, DecodingLimits,
};
pub use localized_text::LocalizedText;
pub use node_id::{ExpandedNodeId, Identifier, NodeId};
pub use qualified_name::QualifiedName;
pub use reader::{Reader, SHARE_MIN_LENGTH};
pub use string::{ByteString, UaString, XmlElement};
pub use variant::{Variant, VariantArray, VariantArrayError};
pub use variant_type::VariantType;
