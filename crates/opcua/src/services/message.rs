//! Service messages as they travel in a secure channel message body (OPC 10000-6 §5.2.9): the
//! NodeId of the type's `DefaultBinary` DataTypeEncoding, then the structure (§5.2.6).
//! [`ServiceRequest`](super::ServiceRequest) and [`ServiceResponse`](super::ServiceResponse) are
//! generated from the table in `services/mod.rs`.

use crate::encoding::{DecodeError, NodeId};
use crate::types::StatusCode;

/// Why a service message could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServiceDecodeError {
    /// The leading type NodeId names no message this stack decodes.
    #[error("unsupported service message type {type_id}")]
    UnsupportedType {
        /// The type NodeId found at offset 0.
        type_id: NodeId,
    },
    /// The type NodeId or the body is malformed or exceeds a limit.
    #[error(transparent)]
    Malformed(#[from] DecodeError),
}

impl ServiceDecodeError {
    /// The status a server answers with: Bad_ServiceUnsupported for an unknown type, else the
    /// decode error's status (Bad_DecodingError or Bad_EncodingLimitsExceeded).
    pub const fn status_code(&self) -> StatusCode {
        match self {
            Self::UnsupportedType { .. } => StatusCode::BAD_SERVICE_UNSUPPORTED,
            Self::Malformed(error) => error.status_code(),
        }
    }
}

/// The numeric identifier of a namespace-0 numeric NodeId, `None` for any other NodeId.
pub(crate) fn namespace_zero_number(type_id: &NodeId) -> Option<u32> {
    match type_id.identifier {
        crate::encoding::Identifier::Numeric(number) if type_id.namespace == 0 => Some(number),
        _ => None,
    }
}

/// Declares the message enum for one direction from its rows of the encoding-id table.
macro_rules! service_message_enum {
    (
        $(#[$meta:meta])*
        $enum_name:ident, $header_field:ident: $header_type:ty,
        { $( $(#[$variant_meta:meta])* $variant:ident($message:ty) ),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq)]
        pub enum $enum_name {
            $( $(#[$variant_meta])* $variant($message), )+
        }

        $(
            impl From<$message> for $enum_name {
                fn from(message: $message) -> Self {
                    Self::$variant(message)
                }
            }
        )+

        impl $enum_name {
            /// The numeric id (namespace 0) of the message's `DefaultBinary` encoding.
            pub const fn binary_encoding_id(&self) -> u32 {
                match self {
                    $( Self::$variant(_) => <$message as $crate::services::BinaryEncodingId>::BINARY_ENCODING_ID, )+
                }
            }

            /// The type NodeId written before the body.
            pub const fn type_id(&self) -> $crate::encoding::NodeId {
                $crate::encoding::NodeId::numeric(0, self.binary_encoding_id())
            }

            /// The common header of the message.
            pub fn $header_field(&self) -> &$header_type {
                match self {
                    $( Self::$variant(message) => &message.$header_field, )+
                }
            }

            /// The common header of the message, mutably.
            pub fn header_mut(&mut self) -> &mut $header_type {
                match self {
                    $( Self::$variant(message) => &mut message.$header_field, )+
                }
            }

            /// Appends the type NodeId and the body to `buf`.
            pub fn encode_message_into(&self, buf: &mut Vec<u8>) {
                use $crate::encoding::BinaryEncodable;
                self.type_id().encode(buf);
                match self {
                    $( Self::$variant(message) => message.encode(buf), )+
                }
            }

            /// The type NodeId followed by the body.
            pub fn encode_message(&self) -> Vec<u8> {
                use $crate::encoding::BinaryEncodable;
                let body_len = match self {
                    $( Self::$variant(message) => message.encoded_len(), )+
                };
                let mut buf = Vec::with_capacity(self.type_id().encoded_len() + body_len);
                self.encode_message_into(&mut buf);
                buf
            }

            /// Decodes a whole message body (type NodeId then structure) with default limits.
            pub fn decode_message(
                bytes: &[u8],
            ) -> Result<Self, $crate::services::ServiceDecodeError> {
                Self::decode_message_with_limits(bytes, $crate::encoding::DecodingLimits::default())
            }

            /// Decodes a whole message body with explicit limits. Unknown type ids give
            /// [`ServiceDecodeError::UnsupportedType`](crate::services::ServiceDecodeError);
            /// bytes left after the structure are an error.
            pub fn decode_message_with_limits(
                bytes: &[u8],
                limits: $crate::encoding::DecodingLimits,
            ) -> Result<Self, $crate::services::ServiceDecodeError> {
                Self::decode_from(&mut $crate::encoding::Reader::with_limits(bytes, limits))
            }

            /// As [`decode_message_with_limits`](Self::decode_message_with_limits), from a
            /// shared buffer: long ByteStrings in the message become slices of `bytes`
            /// instead of copies (see [`Reader::from_shared`](crate::encoding::Reader::from_shared)).
            pub fn decode_message_shared(
                bytes: &::bytes::Bytes,
                limits: $crate::encoding::DecodingLimits,
            ) -> Result<Self, $crate::services::ServiceDecodeError> {
                Self::decode_from(&mut $crate::encoding::Reader::from_shared(bytes, limits))
            }

            fn decode_from(
                reader: &mut $crate::encoding::Reader<'_>,
            ) -> Result<Self, $crate::services::ServiceDecodeError> {
                use $crate::encoding::BinaryEncodable;
                let type_id = $crate::encoding::NodeId::decode(reader)?;
                let message = match $crate::services::message::namespace_zero_number(&type_id) {
                    $(
                        Some(<$message as $crate::services::BinaryEncodingId>::BINARY_ENCODING_ID) => {
                            Self::$variant(<$message>::decode(reader)?)
                        }
                    )+
                    _ => return Err($crate::services::ServiceDecodeError::UnsupportedType { type_id }),
                };
                reader.expect_end()?;
                Ok(message)
            }
        }

        #[cfg(test)]
        impl $crate::services::test_values::Generate for $enum_name {
            fn generate(source: &mut $crate::services::test_values::ValueSource) -> Self {
                use $crate::services::test_values::Generate;
                let choices: &[fn(&mut $crate::services::test_values::ValueSource) -> Self] =
                    &[$( |source| Self::$variant(Generate::generate(source)) ),+];
                let index = source.below(choices.len() as u64) as usize;
                match choices.get(index) {
                    Some(choose) => choose(source),
                    None => choices[0](source),
                }
            }
        }
    };
}

pub(crate) use service_message_enum;
