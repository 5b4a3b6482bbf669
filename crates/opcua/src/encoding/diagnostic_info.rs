//! DiagnosticInfo (OPC 10000-6 §5.2.2.12): an encoding mask then the present fields, in the
//! order SymbolicId, NamespaceUri, Locale, LocalizedText, AdditionalInfo, InnerStatusCode,
//! InnerDiagnosticInfo. The recursion through InnerDiagnosticInfo is bounded by
//! `DecodingLimits::max_diagnostic_depth`.

use super::binary_encodable::BinaryEncodable;
use super::error::{DecodeError, DecodeErrorKind};
use super::reader::Reader;
use super::string::UaString;
use crate::types::StatusCode;

/// Encoding mask bits, in the order of OPC 10000-6 Table 11 / Table 21.
mod mask {
    pub const SYMBOLIC_ID: u8 = 0x01;
    pub const NAMESPACE_URI: u8 = 0x02;
    pub const LOCALIZED_TEXT: u8 = 0x04;
    pub const LOCALE: u8 = 0x08;
    pub const ADDITIONAL_INFO: u8 = 0x10;
    pub const INNER_STATUS_CODE: u8 = 0x20;
    pub const INNER_DIAGNOSTIC_INFO: u8 = 0x40;
    pub const ALL: u8 = 0x7F;
}

/// Vendor diagnostics for an operation. The Int32 fields index the string table of the
/// response header.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct DiagnosticInfo {
    /// String-table index of a vendor symbolic id.
    pub symbolic_id: Option<i32>,
    /// String-table index of the namespace qualifying `symbolic_id`.
    pub namespace_uri: Option<i32>,
    /// String-table index of the locale of `localized_text`.
    pub locale: Option<i32>,
    /// String-table index of a human-readable summary.
    pub localized_text: Option<i32>,
    /// Free-form vendor detail; written only when not null.
    pub additional_info: UaString,
    /// Status code from an underlying system.
    pub inner_status_code: Option<StatusCode>,
    /// Diagnostics for `inner_status_code`.
    pub inner_diagnostic_info: Option<Box<DiagnosticInfo>>,
}

impl DiagnosticInfo {
    fn mask(&self) -> u8 {
        let mut bits = 0;
        let mut set = |present: bool, bit: u8| {
            if present {
                bits |= bit;
            }
        };
        set(self.symbolic_id.is_some(), mask::SYMBOLIC_ID);
        set(self.namespace_uri.is_some(), mask::NAMESPACE_URI);
        set(self.localized_text.is_some(), mask::LOCALIZED_TEXT);
        set(self.locale.is_some(), mask::LOCALE);
        set(!self.additional_info.is_null(), mask::ADDITIONAL_INFO);
        set(self.inner_status_code.is_some(), mask::INNER_STATUS_CODE);
        set(
            self.inner_diagnostic_info.is_some(),
            mask::INNER_DIAGNOSTIC_INFO,
        );
        bits
    }

    /// Decodes one level; `depth` counts the enclosing DiagnosticInfos.
    fn decode_at_depth(reader: &mut Reader<'_>, depth: usize) -> Result<Self, DecodeError> {
        let limit = reader.limits().max_diagnostic_depth;
        if depth >= limit {
            return Err(reader.error(DecodeErrorKind::NestingTooDeep { limit }));
        }
        let offset = reader.position();
        let bits = reader.read_u8()?;
        if bits & !mask::ALL != 0 {
            return Err(reader.error_at(
                offset,
                DecodeErrorKind::InvalidEncodingByte {
                    field: "DiagnosticInfo mask",
                    value: bits,
                },
            ));
        }
        let has = |bit: u8| bits & bit != 0;
        let optional_i32 = |reader: &mut Reader<'_>, bit: u8| -> Result<Option<i32>, DecodeError> {
            if has(bit) {
                i32::decode(reader).map(Some)
            } else {
                Ok(None)
            }
        };
        let symbolic_id = optional_i32(reader, mask::SYMBOLIC_ID)?;
        let namespace_uri = optional_i32(reader, mask::NAMESPACE_URI)?;
        let locale = optional_i32(reader, mask::LOCALE)?;
        let localized_text = optional_i32(reader, mask::LOCALIZED_TEXT)?;
        let additional_info = if has(mask::ADDITIONAL_INFO) {
            UaString::decode(reader)?
        } else {
            UaString::NULL
        };
        let inner_status_code = if has(mask::INNER_STATUS_CODE) {
            Some(StatusCode::decode(reader)?)
        } else {
            None
        };
        let inner_diagnostic_info = if has(mask::INNER_DIAGNOSTIC_INFO) {
            Some(Box::new(Self::decode_at_depth(reader, depth + 1)?))
        } else {
            None
        };
        Ok(Self {
            symbolic_id,
            namespace_uri,
            locale,
            localized_text,
            additional_info,
            inner_status_code,
            inner_diagnostic_info,
        })
    }
}

impl BinaryEncodable for DiagnosticInfo {
    fn encode(&self, buf: &mut Vec<u8>) {
        buf.push(self.mask());
        for value in [
            self.symbolic_id,
            self.namespace_uri,
            self.locale,
            self.localized_text,
        ]
        .into_iter()
        .flatten()
        {
            value.encode(buf);
        }
        if !self.additional_info.is_null() {
            self.additional_info.encode(buf);
        }
        if let Some(code) = self.inner_status_code {
            code.encode(buf);
        }
        if let Some(inner) = &self.inner_diagnostic_info {
            inner.encode(buf);
        }
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Self::decode_at_depth(reader, 0)
    }

    fn encoded_len(&self) -> usize {
        let ints = [
            self.symbolic_id,
            self.namespace_uri,
            self.locale,
            self.localized_text,
        ]
        .iter()
        .flatten()
        .count()
            * 4;
        let info = if self.additional_info.is_null() {
            0
        } else {
            self.additional_info.encoded_len()
        };
        let status = if self.inner_status_code.is_some() {
            4
        } else {
            0
        };
        let inner = self
            .inner_diagnostic_info
            .as_ref()
            .map_or(0, |inner| inner.encoded_len());
        1 + ints + info + status + inner
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::encoding::DecodingLimits;
    use proptest::prelude::*;

    /// Any DiagnosticInfo up to three levels deep.
    pub(crate) fn any_diagnostic_info() -> impl Strategy<Value = DiagnosticInfo> {
        let leaf = (
            any::<Option<i32>>(),
            any::<Option<i32>>(),
            any::<Option<i32>>(),
            any::<Option<i32>>(),
            any::<Option<String>>(),
            any::<Option<u32>>(),
        )
            .prop_map(|(a, b, c, d, info, code)| DiagnosticInfo {
                symbolic_id: a,
                namespace_uri: b,
                locale: c,
                localized_text: d,
                additional_info: UaString(info),
                inner_status_code: code.map(StatusCode::from_u32),
                inner_diagnostic_info: None,
            });
        leaf.prop_recursive(3, 4, 1, |inner| {
            (inner.clone(), inner).prop_map(|(mut outer, inner)| {
                outer.inner_diagnostic_info = Some(Box::new(inner));
                outer
            })
        })
    }

    #[test]
    fn field_order_follows_the_table() {
        let value = DiagnosticInfo {
            symbolic_id: Some(1),
            locale: Some(3),
            localized_text: Some(4),
            inner_status_code: Some(StatusCode::BAD_TIMEOUT),
            ..DiagnosticInfo::default()
        };
        assert_eq!(
            value.to_bytes(),
            [
                0x2D, 1, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 0x00, 0x00, 0x0A, 0x80
            ]
        );
    }

    #[test]
    fn nesting_limit() {
        // Eleven DiagnosticInfos, each with only an inner one, then an empty one: 12 levels.
        let mut bytes = vec![0x40; 11];
        bytes.push(0x00);
        let error = DiagnosticInfo::from_bytes(&bytes).unwrap_err();
        assert_eq!(error.kind, DecodeErrorKind::NestingTooDeep { limit: 10 });
        assert_eq!(error.offset, 10);
        assert_eq!(
            error.status_code(),
            StatusCode::BAD_ENCODING_LIMITS_EXCEEDED
        );
        // Ten levels are fine.
        let mut ok = vec![0x40; 9];
        ok.push(0x00);
        assert!(DiagnosticInfo::from_bytes(&ok).is_ok());
        let limits = DecodingLimits {
            max_diagnostic_depth: 2,
            ..DecodingLimits::default()
        };
        let mut reader = Reader::with_limits(&[0x40, 0x40, 0x00], limits);
        assert!(DiagnosticInfo::decode(&mut reader).is_err());
    }

    #[test]
    fn reserved_bit_rejected() {
        assert_eq!(
            DiagnosticInfo::from_bytes(&[0x80]).unwrap_err().kind,
            DecodeErrorKind::InvalidEncodingByte {
                field: "DiagnosticInfo mask",
                value: 0x80
            }
        );
    }

    proptest! {
        #[test]
        fn round_trip(value in any_diagnostic_info()) {
            prop_assert_eq!(value.to_bytes().len(), value.encoded_len());
            prop_assert_eq!(DiagnosticInfo::from_bytes(&value.to_bytes()).unwrap(), value);
        }
    }
}
