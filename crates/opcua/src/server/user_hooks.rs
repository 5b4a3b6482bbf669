//! What user code outside the core sees of the clients' actions: the values clients write
//! (a write hook), and calls of methods implemented outside the core
//! ([`MethodHandler::External`](super::MethodHandler::External)), which are answered later.
//!
//! An external method call does not block the server: the Call request is held, each
//! external method of it becomes a [`MethodInvocation`] handed to the method hook, and when
//! the last one is answered with [`Server::complete_method_call`] the CallResponse goes to
//! the channel's outbox (the same way a queued Publish is answered). A driver wakes the
//! connection then; the Python package runs `async` callbacks this way.

use std::collections::HashMap;
use std::time::Instant;

use super::method_services::{CallOutcome, encode_call_response};
use super::server_state::Server;
use super::subscriptions::ReadyResponse;
use crate::encoding::{DateTime, NodeId, Variant};
use crate::services::{CallMethodResult, RequestHeader, ResponseHeader};
use crate::types::StatusCode;

/// A value a client wrote (after the server accepted it).
#[derive(Clone, Debug, PartialEq)]
pub struct WrittenValue {
    /// The Variable written.
    pub node_id: NodeId,
    /// The new value.
    pub value: Variant,
    /// Its source timestamp (the client's, else the server's time of the write).
    pub source_timestamp: DateTime,
    /// The session's user name (None: anonymous).
    pub user: Option<String>,
}

/// One call of an external method, to be answered with [`Server::complete_method_call`].
#[derive(Clone, Debug, PartialEq)]
pub struct MethodInvocation {
    /// Identifies this invocation in `complete_method_call`.
    pub id: u64,
    /// The object the method was called on.
    pub object_id: NodeId,
    /// The method.
    pub method_id: NodeId,
    /// The input arguments (already checked against the declared InputArguments).
    pub input_arguments: Vec<Variant>,
    /// The session's user name (None: anonymous).
    pub user: Option<String>,
}

/// Called with every value a client writes.
pub type WriteHook = Box<dyn FnMut(&WrittenValue) + Send>;
/// Called with every call of an external method.
pub type MethodHook = Box<dyn FnMut(MethodInvocation) + Send>;

/// A Call request waiting for its external methods.
struct PendingCall {
    channel_id: u32,
    request_id: u32,
    header: RequestHeader,
    /// One per method of the request; None until answered.
    outcomes: Vec<Option<CallOutcome>>,
    missing: usize,
}

/// The hooks and the Call requests waiting for answers.
#[derive(Default)]
pub struct UserHooks {
    write_hook: Option<WriteHook>,
    method_hook: Option<MethodHook>,
    /// Pending calls by their own number.
    calls: HashMap<u64, PendingCall>,
    /// Invocation id -> (pending call, index of the method in it).
    invocations: HashMap<u64, (u64, usize)>,
    next_id: u64,
}

impl std::fmt::Debug for UserHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserHooks")
            .field("write_hook", &self.write_hook.is_some())
            .field("method_hook", &self.method_hook.is_some())
            .field("pending_calls", &self.calls.len())
            .finish()
    }
}

/// Most Call requests waiting for external methods at once; past it new external calls get
/// Bad_TooManyOperations instead of piling up behind a stuck implementation.
pub const MAX_PENDING_CALLS: usize = 10_000;

/// A Call request's methods as the router found them: done, or waiting for user code.
pub(crate) enum CallStep {
    Done(CallOutcome),
    External {
        object_id: NodeId,
        method_id: NodeId,
        input_arguments: Vec<Variant>,
    },
}

impl Server {
    /// Calls `hook` with every value a client writes successfully (not with values set by
    /// [`AddressSpace::set_value`](super::AddressSpace::set_value)).
    pub fn on_write(&mut self, hook: impl FnMut(&WrittenValue) + Send + 'static) {
        self.hooks.write_hook = Some(Box::new(hook));
    }

    /// Calls `hook` with every call of a method whose handler is
    /// [`MethodHandler::External`](super::MethodHandler::External); each must be answered
    /// with [`complete_method_call`](Self::complete_method_call). Without a hook such
    /// methods answer Bad_NotImplemented.
    pub fn on_method_call(&mut self, hook: impl FnMut(MethodInvocation) + Send + 'static) {
        self.hooks.method_hook = Some(Box::new(hook));
    }

    /// Removes both hooks (their queues end); external methods called from now on answer
    /// Bad_NotImplemented.
    pub fn clear_hooks(&mut self) {
        self.hooks.write_hook = None;
        self.hooks.method_hook = None;
    }

    pub(crate) fn written(&mut self, value: WrittenValue) {
        if let Some(hook) = &mut self.hooks.write_hook {
            hook(&value);
        }
    }

    /// Holds a Call request whose steps include external methods and hands those to the
    /// method hook; when there is no hook or too many calls wait already, nothing is held
    /// and the outcomes to answer at once come back (the external ones refused).
    pub(crate) fn defer_call(
        &mut self,
        channel_id: u32,
        request_id: u32,
        header: &RequestHeader,
        steps: Vec<CallStep>,
        user: Option<&str>,
    ) -> Result<(), Vec<CallOutcome>> {
        let refuse = |steps: Vec<CallStep>, status: StatusCode| {
            steps
                .into_iter()
                .map(|step| match step {
                    CallStep::Done(outcome) => outcome,
                    CallStep::External { .. } => CallOutcome::status(status),
                })
                .collect()
        };
        if self.hooks.method_hook.is_none() {
            return Err(refuse(steps, StatusCode::BAD_NOT_IMPLEMENTED));
        }
        if self.hooks.calls.len() >= MAX_PENDING_CALLS {
            return Err(refuse(steps, StatusCode::BAD_TOO_MANY_OPERATIONS));
        }
        let hooks = &mut self.hooks;
        hooks.next_id += 1;
        let call_id = hooks.next_id;
        let mut outcomes = Vec::with_capacity(steps.len());
        let mut invocations = Vec::new();
        for (index, step) in steps.into_iter().enumerate() {
            match step {
                CallStep::Done(outcome) => outcomes.push(Some(outcome)),
                CallStep::External {
                    object_id,
                    method_id,
                    input_arguments,
                } => {
                    outcomes.push(None);
                    hooks.next_id += 1;
                    let id = hooks.next_id;
                    hooks.invocations.insert(id, (call_id, index));
                    invocations.push(MethodInvocation {
                        id,
                        object_id,
                        method_id,
                        input_arguments,
                        user: user.map(str::to_owned),
                    });
                }
            }
        }
        hooks.calls.insert(
            call_id,
            PendingCall {
                channel_id,
                request_id,
                header: header.clone(),
                outcomes,
                missing: invocations.len(),
            },
        );
        if let Some(hook) = &mut hooks.method_hook {
            for invocation in invocations {
                hook(invocation);
            }
        }
        Ok(())
    }

    /// Answers invocation `id` with its outputs or a status. When it was the last one its
    /// Call request waited for, the CallResponse goes to the channel's outbox: the driver
    /// then wakes that connection (its next `handle_timeout_with` sends it). False when the
    /// invocation is unknown (answered already, or its channel closed).
    pub fn complete_method_call(
        &mut self,
        id: u64,
        result: Result<Vec<Variant>, StatusCode>,
        now: Instant,
    ) -> bool {
        let Some((call_id, index)) = self.hooks.invocations.remove(&id) else {
            return false;
        };
        let Some(call) = self.hooks.calls.get_mut(&call_id) else {
            return false;
        };
        let outcome = match result {
            Ok(output_arguments) => CallOutcome {
                result: CallMethodResult {
                    status_code: StatusCode::GOOD,
                    output_arguments,
                    ..CallMethodResult::default()
                },
                shared_output: None,
            },
            Err(status) => CallOutcome::status(status),
        };
        if let Some(slot) = call.outcomes.get_mut(index)
            && slot.is_none()
        {
            *slot = Some(outcome);
            call.missing = call.missing.saturating_sub(1);
        }
        if call.missing > 0 {
            return true;
        }
        let Some(call) = self.hooks.calls.remove(&call_id) else {
            return true;
        };
        let header =
            ResponseHeader::answering(&call.header, StatusCode::GOOD, self.wall_clock(now));
        let outcomes = call.outcomes.into_iter().flatten().collect();
        let body = encode_call_response(&header, outcomes).to_vec();
        self.subscriptions.push_ready(
            call.channel_id,
            ReadyResponse {
                request_id: call.request_id,
                request_header: call.header,
                body,
            },
        );
        true
    }

    /// Forgets the calls waiting on a closed channel (their answers have nowhere to go).
    pub(crate) fn drop_pending_calls(&mut self, channel_id: u32) {
        let hooks = &mut self.hooks;
        hooks.calls.retain(|_, call| call.channel_id != channel_id);
        let calls = &hooks.calls;
        hooks
            .invocations
            .retain(|_, (call_id, _)| calls.contains_key(call_id));
    }

    /// How many Call requests wait for external methods.
    pub fn pending_method_calls(&self) -> usize {
        self.hooks.calls.len()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::server::ServerConfig;
    use crate::services::{ServiceResponse, well_known_nodes as ids};

    fn external(input: f64) -> CallStep {
        CallStep::External {
            object_id: ids::OBJECTS_FOLDER,
            method_id: NodeId::string(0, "M"),
            input_arguments: vec![Variant::Double(input)],
        }
    }

    #[test]
    fn external_calls_wait_for_every_answer_then_reach_the_outbox() {
        let now = Instant::now();
        let mut server = Server::new(ServerConfig::default(), now).unwrap();
        let header = RequestHeader {
            request_handle: 9,
            ..RequestHeader::default()
        };
        // No hook: the external step is refused at once, the done one kept.
        let refused = server
            .defer_call(
                1,
                5,
                &header,
                vec![
                    CallStep::Done(CallOutcome::status(StatusCode::GOOD)),
                    external(1.0),
                ],
                None,
            )
            .unwrap_err();
        assert_eq!(
            refused[1].result.status_code,
            StatusCode::BAD_NOT_IMPLEMENTED
        );

        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        server.on_method_call(move |invocation| sink.lock().unwrap().push(invocation));
        server
            .defer_call(
                1,
                5,
                &header,
                vec![external(1.0), external(2.0)],
                Some("alice"),
            )
            .unwrap();
        let invocations = std::mem::take(&mut *seen.lock().unwrap());
        assert_eq!(invocations.len(), 2);
        assert_eq!(invocations[0].user.as_deref(), Some("alice"));
        assert_eq!(invocations[1].input_arguments, vec![Variant::Double(2.0)]);
        assert_eq!(server.pending_method_calls(), 1);

        // Answered out of order; nothing goes out until both are.
        assert!(server.complete_method_call(
            invocations[1].id,
            Err(StatusCode::BAD_OUT_OF_RANGE),
            now
        ));
        assert!(server.subscriptions.take_outbox(1).is_empty());
        assert!(server.complete_method_call(
            invocations[0].id,
            Ok(vec![Variant::Double(3.0)]),
            now
        ));
        assert!(!server.complete_method_call(invocations[0].id, Ok(Vec::new()), now));
        let ready = server.subscriptions.take_outbox(1);
        assert_eq!(ready.len(), 1);
        assert_eq!(ready[0].request_id, 5);
        let ServiceResponse::Call(response) =
            ServiceResponse::decode_message(&ready[0].body).unwrap()
        else {
            panic!("a CallResponse");
        };
        assert_eq!(response.response_header.request_handle, 9);
        assert_eq!(
            response.results[0].output_arguments,
            vec![Variant::Double(3.0)]
        );
        assert_eq!(
            response.results[1].status_code,
            StatusCode::BAD_OUT_OF_RANGE
        );
        assert_eq!(server.pending_method_calls(), 0);
    }

    #[test]
    fn calls_on_a_closed_channel_are_forgotten() {
        let now = Instant::now();
        let mut server = Server::new(ServerConfig::default(), now).unwrap();
        let invoked = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&invoked);
        server.on_method_call(move |invocation| sink.lock().unwrap().push(invocation.id));
        server
            .defer_call(7, 1, &RequestHeader::default(), vec![external(1.0)], None)
            .unwrap();
        server.drop_pending_calls(7);
        let id = invoked.lock().unwrap()[0];
        assert!(!server.complete_method_call(id, Ok(Vec::new()), now));
        assert!(server.subscriptions.take_outbox(7).is_empty());

        let writes = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&writes);
        server.on_write(move |written| sink.lock().unwrap().push(written.clone()));
        server.clear_hooks();
        server.written(WrittenValue {
            node_id: ids::OBJECTS_FOLDER,
            value: Variant::Boolean(true),
            source_timestamp: DateTime::MIN,
            user: None,
        });
        assert!(writes.lock().unwrap().is_empty());
    }
}
