//! The Call service (OPC 10000-4 §5.11.2): CallMethodRequest, CallMethodResult, CallRequest and
//! CallResponse.

use super::header::{RequestHeader, ResponseHeader};
use super::structure_codec::ua_structure;
use crate::encoding::{DiagnosticInfo, NodeId, Variant};
use crate::types::StatusCode;

ua_structure! {
    /// One method to call (OPC 10000-4 §5.11.2.2).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct CallMethodRequest {
        /// The Object (or ObjectType) the method is called on.
        pub object_id: NodeId,
        /// The Method node.
        pub method_id: NodeId,
        /// Input arguments, in declaration order.
        pub input_arguments: Vec<Variant>,
    }
}

ua_structure! {
    /// The outcome of one method call (OPC 10000-4 §5.11.2.2).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct CallMethodResult {
        /// Outcome of the call.
        pub status_code: StatusCode,
        /// One status per input argument (empty when all were good).
        pub input_argument_results: Vec<StatusCode>,
        /// Diagnostics for `input_argument_results`.
        pub input_argument_diagnostic_infos: Vec<DiagnosticInfo>,
        /// Output arguments, in declaration order.
        pub output_arguments: Vec<Variant>,
    }
}

ua_structure! {
    /// Calls methods (OPC 10000-4 §5.11.2.2).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct CallRequest {
        /// Common request parameters.
        pub request_header: RequestHeader,
        /// The calls to make.
        pub methods_to_call: Vec<CallMethodRequest>,
    }
}

ua_structure! {
    /// Results of Call, one per method (OPC 10000-4 §5.11.2.2).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct CallResponse {
        /// Common response parameters.
        pub response_header: ResponseHeader,
        /// One result per method to call.
        pub results: Vec<CallMethodResult>,
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
    fn call_method_request_layout() {
        let call = CallMethodRequest {
            object_id: NodeId::numeric(0, 2253),
            method_id: NodeId::numeric(0, 11492),
            input_arguments: vec![Variant::UInt32(5)],
        };
        let expected = [
            0x01, 0x00, 0xCD, 0x08, // four-byte NodeId i=2253 (Server)
            0x01, 0x00, 0xE4, 0x2C, // four-byte NodeId i=11492 (GetMonitoredItems)
            1, 0, 0, 0, // one argument
            0x07, 5, 0, 0, 0, // Variant UInt32 5
        ];
        assert_eq!(call.to_bytes(), expected);
        assert_eq!(CallMethodRequest::from_bytes(&expected).unwrap(), call);
    }

    proptest! {
        #[test]
        fn call_messages_round_trip(seed: u64) {
            assert_round_trip(&generate_from_seed::<CallRequest>(seed));
            assert_round_trip(&generate_from_seed::<CallResponse>(seed));
        }
    }
}
