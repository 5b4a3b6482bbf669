//! The Call service (OPC 10000-4 §5.11.2): argument count and type checks against the declared
//! InputArguments, dispatch to the method's implementation, and the encoding of a CallResponse
//! whose ByteString outputs may be shared buffers (referenced by the chunks, not copied).

use bytes::Bytes;

use super::address_space::{MethodHandler, NodeAttributes};
use super::server_state::Server;
use super::user_hooks::CallStep;
use crate::channel::{BodySegment, OutgoingBody};
use crate::encoding::{BinaryEncodable, NodeId, Variant, VariantType};
use crate::services::{
    BinaryEncodingId, CallMethodRequest, CallMethodResult, CallResponse, ResponseHeader,
};
use crate::types::StatusCode;

/// The outcome of one method call: the result, and possibly a shared ByteString that is the
/// (single) output argument.
#[derive(Debug)]
pub struct CallOutcome {
    /// Status, argument results and (non-shared) outputs.
    pub result: CallMethodResult,
    /// A shared ByteString output, written after `result.output_arguments` (which is empty).
    pub shared_output: Option<Bytes>,
}

impl CallOutcome {
    pub(crate) fn status(status_code: StatusCode) -> Self {
        Self {
            result: CallMethodResult {
                status_code,
                ..CallMethodResult::default()
            },
            shared_output: None,
        }
    }
}

/// Calls one method (an external one answers Bad_NotImplemented: see [`call_step`] for
/// those).
pub fn call_one(server: &mut Server, request: &CallMethodRequest) -> CallOutcome {
    match call_step(server, request) {
        CallStep::Done(outcome) => outcome,
        CallStep::External { .. } => CallOutcome::status(StatusCode::BAD_NOT_IMPLEMENTED),
    }
}

/// Checks and calls one method; an external one is returned with its checked arguments,
/// for the router to hand to user code.
pub(crate) fn call_step(server: &mut Server, request: &CallMethodRequest) -> CallStep {
    CallStep::Done(match call_checked(server, request) {
        Ok(step) => return step,
        Err(outcome) => outcome,
    })
}

fn call_checked(server: &mut Server, request: &CallMethodRequest) -> Result<CallStep, CallOutcome> {
    if server.address_space.node(&request.object_id).is_none() {
        return Err(CallOutcome::status(StatusCode::BAD_NODE_ID_UNKNOWN));
    }
    // The method must be a component of the object.
    let is_component = server
        .address_space
        .node(&request.object_id)
        .is_some_and(|object| {
            object
                .references
                .iter()
                .any(|r| r.is_forward && r.target == request.method_id)
        });
    let Some(method_node) = server.address_space.node_mut(&request.method_id) else {
        return Err(CallOutcome::status(StatusCode::BAD_METHOD_INVALID));
    };
    let NodeAttributes::Method(method) = &mut method_node.attributes else {
        return Err(CallOutcome::status(StatusCode::BAD_METHOD_INVALID));
    };
    if !is_component {
        return Err(CallOutcome::status(StatusCode::BAD_METHOD_INVALID));
    }
    let inputs = &request.input_arguments;
    let declared = &method.input_arguments;
    if inputs.len() < declared.len() {
        return Err(CallOutcome::status(StatusCode::BAD_ARGUMENTS_MISSING));
    }
    if inputs.len() > declared.len() {
        return Err(CallOutcome::status(StatusCode::BAD_TOO_MANY_ARGUMENTS));
    }
    let argument_results: Vec<StatusCode> = inputs
        .iter()
        .zip(declared)
        .map(|(value, argument)| {
            if value.scalar_type() == Some(argument.data_type) {
                StatusCode::GOOD
            } else {
                StatusCode::BAD_TYPE_MISMATCH
            }
        })
        .collect();
    if argument_results.iter().any(|s| s.is_bad()) {
        return Err(CallOutcome {
            result: CallMethodResult {
                status_code: StatusCode::BAD_INVALID_ARGUMENT,
                input_argument_results: argument_results,
                ..CallMethodResult::default()
            },
            shared_output: None,
        });
    }
    let outcome = match &mut method.handler {
        MethodHandler::Callback(callback) => callback(inputs).map(|outputs| (outputs, None)),
        MethodHandler::ThroughputSetSize => match inputs.first() {
            Some(Variant::UInt32(kib)) => server
                .throughput
                .set_size(*kib)
                .map(|()| (Vec::new(), None)),
            _ => Err(StatusCode::BAD_TYPE_MISMATCH),
        },
        MethodHandler::ThroughputGetData => Ok((Vec::new(), Some(server.throughput.data()))),
        MethodHandler::External => {
            return Ok(CallStep::External {
                object_id: request.object_id.clone(),
                method_id: request.method_id.clone(),
                input_arguments: inputs.clone(),
            });
        }
    };
    Ok(CallStep::Done(match outcome {
        Ok((output_arguments, shared_output)) => CallOutcome {
            result: CallMethodResult {
                status_code: StatusCode::GOOD,
                output_arguments,
                ..CallMethodResult::default()
            },
            shared_output,
        },
        Err(status) => CallOutcome::status(status),
    }))
}

/// Encodes a CallResponse message body (type id then structure) whose shared outputs become
/// shared segments of the body.
pub fn encode_call_response(header: &ResponseHeader, outcomes: Vec<CallOutcome>) -> OutgoingBody {
    let mut body = OutgoingBody::default();
    let mut buf = Vec::new();
    NodeId::numeric(0, CallResponse::BINARY_ENCODING_ID).encode(&mut buf);
    header.encode(&mut buf);
    encode_count(outcomes.len(), &mut buf);
    for outcome in outcomes {
        let result = &outcome.result;
        result.status_code.encode(&mut buf);
        result.input_argument_results.encode(&mut buf);
        result.input_argument_diagnostic_infos.encode(&mut buf);
        match outcome.shared_output {
            None => result.output_arguments.encode(&mut buf),
            Some(shared) => {
                encode_count(result.output_arguments.len() + 1, &mut buf);
                for output in &result.output_arguments {
                    output.encode(&mut buf);
                }
                // Variant mask for a ByteString scalar, then the Int32 length.
                buf.push(VariantType::ByteString.id());
                encode_count(shared.len(), &mut buf);
                body.push(BodySegment::Owned(std::mem::take(&mut buf)));
                body.push(BodySegment::Shared(shared));
            }
        }
    }
    encode_count(0, &mut buf); // diagnostic infos
    body.push(BodySegment::Owned(buf));
    body
}

fn encode_count(count: usize, buf: &mut Vec<u8>) {
    i32::try_from(count).unwrap_or(i32::MAX).encode(buf);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::{ByteString, DateTime};
    use crate::services::ServiceResponse;

    #[test]
    fn shared_encoding_equals_generic_encoding() {
        let header = ResponseHeader {
            timestamp: DateTime(77),
            request_handle: 5,
            ..ResponseHeader::default()
        };
        let payload = Bytes::from(vec![1u8, 2, 3, 4, 5]);
        let outcomes = vec![
            CallOutcome::status(StatusCode::BAD_METHOD_INVALID),
            CallOutcome {
                result: CallMethodResult::default(),
                shared_output: Some(payload.clone()),
            },
        ];
        let body = encode_call_response(&header, outcomes).to_vec();
        let generic = ServiceResponse::from(CallResponse {
            response_header: header,
            results: vec![
                CallMethodResult {
                    status_code: StatusCode::BAD_METHOD_INVALID,
                    ..CallMethodResult::default()
                },
                CallMethodResult {
                    output_arguments: vec![Variant::ByteString(ByteString::from(payload.to_vec()))],
                    ..CallMethodResult::default()
                },
            ],
            diagnostic_infos: Vec::new(),
        });
        assert_eq!(body, generic.encode_message());
        assert_eq!(ServiceResponse::decode_message(&body).unwrap(), generic);
    }
}
