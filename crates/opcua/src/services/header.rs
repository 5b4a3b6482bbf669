//! The headers every service message starts with (OPC 10000-4 §7.33 RequestHeader, §7.34
//! ResponseHeader) and the ServiceFault response (§7.35) a server sends when a whole request fails.

use super::structure_codec::ua_structure;
use crate::encoding::{DateTime, DiagnosticInfo, ExtensionObject, NodeId, UaString};
use crate::types::StatusCode;

/// Bits of [`RequestHeader::return_diagnostics`] (OPC 10000-4 §7.33, Table 177).
pub mod return_diagnostics {
    /// Service level: SymbolicId.
    pub const SERVICE_SYMBOLIC_ID: u32 = 0x0001;
    /// Service level: LocalizedText.
    pub const SERVICE_LOCALIZED_TEXT: u32 = 0x0002;
    /// Service level: AdditionalInfo.
    pub const SERVICE_ADDITIONAL_INFO: u32 = 0x0004;
    /// Service level: inner StatusCode.
    pub const SERVICE_INNER_STATUS_CODE: u32 = 0x0008;
    /// Service level: inner diagnostics.
    pub const SERVICE_INNER_DIAGNOSTICS: u32 = 0x0010;
    /// Operation level: SymbolicId.
    pub const OPERATION_SYMBOLIC_ID: u32 = 0x0020;
    /// Operation level: LocalizedText.
    pub const OPERATION_LOCALIZED_TEXT: u32 = 0x0040;
    /// Operation level: AdditionalInfo.
    pub const OPERATION_ADDITIONAL_INFO: u32 = 0x0080;
    /// Operation level: inner StatusCode.
    pub const OPERATION_INNER_STATUS_CODE: u32 = 0x0100;
    /// Operation level: inner diagnostics.
    pub const OPERATION_INNER_DIAGNOSTICS: u32 = 0x0200;
}

ua_structure! {
    /// Common parameters of every request (OPC 10000-4 §7.33).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct RequestHeader {
        /// The secret session identifier returned by CreateSession (null before a session).
        pub authentication_token: NodeId,
        /// When the client sent the request.
        pub timestamp: DateTime,
        /// Client-chosen handle echoed in the response.
        pub request_handle: u32,
        /// Which diagnostics the client wants back (bits in [`return_diagnostics`]).
        pub return_diagnostics: u32,
        /// Identifier for audit logs (null when none).
        pub audit_entry_id: UaString,
        /// Milliseconds after which the client gives up (0: no hint).
        pub timeout_hint: u32,
        /// Reserved for extensions; normally a null ExtensionObject.
        pub additional_header: ExtensionObject,
    }
}

ua_structure! {
    /// Common parameters of every response (OPC 10000-4 §7.34).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct ResponseHeader {
        /// When the server sent the response.
        pub timestamp: DateTime,
        /// The request's `request_handle`.
        pub request_handle: u32,
        /// Outcome of the whole service call.
        pub service_result: StatusCode,
        /// Diagnostics for `service_result` (indexes into `string_table`).
        pub service_diagnostics: DiagnosticInfo,
        /// Strings referenced by every DiagnosticInfo of the response.
        pub string_table: Vec<UaString>,
        /// Reserved for extensions; normally a null ExtensionObject.
        pub additional_header: ExtensionObject,
    }
}

impl ResponseHeader {
    /// A header answering `request` with `service_result` at `timestamp`.
    pub fn answering(
        request: &RequestHeader,
        service_result: StatusCode,
        timestamp: DateTime,
    ) -> Self {
        Self {
            timestamp,
            request_handle: request.request_handle,
            service_result,
            ..Self::default()
        }
    }
}

ua_structure! {
    /// The response to a request that failed as a whole (OPC 10000-4 §7.35); the reason is the
    /// header's `service_result`.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct ServiceFault {
        /// The header carrying the failure status.
        pub response_header: ResponseHeader,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::{BinaryEncodable, DecodeErrorKind};
    use crate::services::test_values::generate_from_seed;
    use proptest::prelude::*;

    #[test]
    fn default_request_header_layout() {
        // OPC 10000-6 §5.2.2.9 (two-byte null NodeId), §5.2.2.5 (DateTime Int64), §5.2.2.4
        // (null String -1), §5.2.2.15 (ExtensionObject with no body: 00 00 00).
        let header = RequestHeader {
            request_handle: 7,
            timeout_hint: 10_000,
            ..RequestHeader::default()
        };
        let expected = [
            0x00, 0x00, // authentication token i=0
            0, 0, 0, 0, 0, 0, 0, 0, // timestamp
            7, 0, 0, 0, // request handle
            0, 0, 0, 0, // return diagnostics
            0xFF, 0xFF, 0xFF, 0xFF, // audit entry id: null
            0x10, 0x27, 0, 0, // timeout hint 10000
            0x00, 0x00, 0x00, // additional header: null ExtensionObject
        ];
        assert_eq!(header.to_bytes(), expected);
        assert_eq!(RequestHeader::from_bytes(&expected).unwrap(), header);
    }

    #[test]
    fn service_fault_layout() {
        let request = RequestHeader {
            request_handle: 0x0102_0304,
            ..RequestHeader::default()
        };
        let fault = ServiceFault {
            response_header: ResponseHeader::answering(
                &request,
                StatusCode::BAD_SERVICE_UNSUPPORTED,
                DateTime(1),
            ),
        };
        let expected = [
            1, 0, 0, 0, 0, 0, 0, 0, // timestamp
            0x04, 0x03, 0x02, 0x01, // request handle
            0x00, 0x00, 0x0B, 0x80, // Bad_ServiceUnsupported 0x800B0000
            0x00, // DiagnosticInfo with an empty mask
            0, 0, 0, 0, // empty string table
            0x00, 0x00, 0x00, // additional header
        ];
        assert_eq!(fault.to_bytes(), expected);
        assert_eq!(ServiceFault::from_bytes(&expected).unwrap(), fault);
    }

    #[test]
    fn truncated_header_reports_offset() {
        let bytes = RequestHeader::default().to_bytes();
        let error = RequestHeader::from_bytes(&bytes[..12]).unwrap_err();
        // The request handle starts at offset 10 and needs 4 bytes.
        assert_eq!(error.offset, 10);
        assert_eq!(
            error.kind,
            DecodeErrorKind::UnexpectedEnd {
                needed: 4,
                available: 2
            }
        );
    }

    proptest! {
        #[test]
        fn headers_round_trip(seed: u64) {
            let request: RequestHeader = generate_from_seed(seed);
            prop_assert_eq!(request.to_bytes().len(), request.encoded_len());
            prop_assert_eq!(RequestHeader::from_bytes(&request.to_bytes()).unwrap(), request);
            let fault: ServiceFault = generate_from_seed(seed);
            prop_assert_eq!(fault.to_bytes().len(), fault.encoded_len());
            prop_assert_eq!(ServiceFault::from_bytes(&fault.to_bytes()).unwrap(), fault);
        }
    }
}
