//! Decoding errors: what went wrong, at which byte offset, and which StatusCode reports it.

use crate::types::StatusCode;

/// A UA Binary decoding failure at a byte offset of the input given to the [`Reader`](super::Reader).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} at byte offset {offset}")]
pub struct DecodeError {
    /// Offset (from the start of the reader's input) of the field that could not be decoded.
    pub offset: usize,
    /// What was wrong with it.
    pub kind: DecodeErrorKind,
}

/// The reason a decode failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeErrorKind {
    /// The input ended inside a value.
    #[error("input ended: {needed} bytes needed, {available} available")]
    UnexpectedEnd {
        /// Bytes the field needs.
        needed: usize,
        /// Bytes that were left.
        available: usize,
    },
    /// A length prefix was negative but not -1 (the only negative value, meaning null).
    #[error("invalid negative length {0}")]
    NegativeLength(i32),
    /// A String, XmlElement or ByteString is longer than the configured limit.
    #[error("string of {length} bytes exceeds the limit of {limit}")]
    StringTooLong {
        /// Length announced by the input.
        length: usize,
        /// Configured limit.
        limit: usize,
    },
    /// An array is longer than the configured limit.
    #[error("array of {length} elements exceeds the limit of {limit}")]
    ArrayTooLong {
        /// Length announced by the input.
        length: usize,
        /// Configured limit.
        limit: usize,
    },
    /// Values are nested (Variant in DataValue in Variant ..., or DiagnosticInfo) too deeply.
    #[error("nesting deeper than the limit of {limit}")]
    NestingTooDeep {
        /// Configured limit.
        limit: usize,
    },
    /// A String or XmlElement is not valid UTF-8.
    #[error("string is not valid UTF-8")]
    InvalidUtf8,
    /// An encoding byte or mask has a value or bits the specification does not define.
    #[error("invalid {field} 0x{value:02X}")]
    InvalidEncodingByte {
        /// Which field (e.g. `"NodeId encoding"`).
        field: &'static str,
        /// The rejected byte.
        value: u8,
    },
    /// A Variant names a built-in type id outside 1..=25 (or a scalar of type Variant).
    #[error("unknown Variant type id {0}")]
    UnknownVariantType(u8),
    /// A Variant array dimension is negative.
    #[error("negative array dimension {0}")]
    NegativeDimension(i32),
    /// The product of a Variant's array dimensions differs from its element count.
    #[error("array dimensions multiply to {product} but the array has {length} elements")]
    ArrayDimensionsMismatch {
        /// Product of the dimensions.
        product: u64,
        /// Number of elements.
        length: usize,
    },
    /// Bytes were left over after a value that should fill the whole input.
    #[error("{0} unexpected trailing bytes")]
    TrailingBytes(usize),
}

impl DecodeErrorKind {
    /// The StatusCode a stack reports for this failure (Bad_EncodingLimitsExceeded for limits,
    /// Bad_DecodingError for malformed input).
    pub const fn status_code(&self) -> StatusCode {
        match self {
            Self::StringTooLong { .. }
            | Self::ArrayTooLong { .. }
            | Self::NestingTooDeep { .. } => StatusCode::BAD_ENCODING_LIMITS_EXCEEDED,
            _ => StatusCode::BAD_DECODING_ERROR,
        }
    }
}

impl DecodeError {
    /// The StatusCode a stack reports for this failure.
    pub const fn status_code(&self) -> StatusCode {
        self.kind.status_code()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_map_to_encoding_limits_exceeded() {
        let limit = DecodeErrorKind::ArrayTooLong {
            length: 10,
            limit: 5,
        };
        assert_eq!(
            limit.status_code(),
            StatusCode::BAD_ENCODING_LIMITS_EXCEEDED
        );
        assert_eq!(
            DecodeErrorKind::InvalidUtf8.status_code(),
            StatusCode::BAD_DECODING_ERROR
        );
        let error = DecodeError {
            offset: 7,
            kind: DecodeErrorKind::NegativeLength(-2),
        };
        assert_eq!(
            error.to_string(),
            "invalid negative length -2 at byte offset 7"
        );
    }
}
