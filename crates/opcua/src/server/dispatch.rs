//! The service router: a decoded request goes to the handlers of its service set (OPC
//! 10000-4 §5): Discovery, Session, Attribute, View, Method, and Subscription with
//! MonitoredItem. Operation counts are checked against the [`OperationLimits`] here, and
//! every failure becomes a ServiceFault with its status ([`fault`]).
//!
//! [`OperationLimits`]: super::config::OperationLimits

use std::time::Instant;

use super::attribute_services::{read_one, write_one};
use super::discovery_services::{find_servers, get_endpoints};
use super::method_services::{call_step, encode_call_response};
use super::server_state::{Server, SessionEvent};
use super::session_services::{activate_session, activated_session, close_session, create_session};
use super::subscriptions::services::handle as subscription_service;
use super::user_hooks::{CallStep, WrittenValue};
use super::view_services::{browse_next_one, browse_references, page_result, translate_path};
use crate::channel::OutgoingBody;
use crate::encoding::{BinaryEncodable, DateTime, NodeId, Reader};
use crate::security::ChannelSecurity;
use crate::services::{
    BrowseNextResponse, BrowseResponse, BrowseResult, CallRequest, ReadResponse, RequestHeader,
    ResponseHeader, ServiceFault, ServiceRequest, ServiceResponse, TimestampsToReturn,
    TranslateBrowsePathsToNodeIdsResponse, WriteResponse,
};
use crate::types::StatusCode;

/// Where and when a request is handled.
#[derive(Clone, Copy, Debug)]
pub(super) struct ServiceContext<'a> {
    /// The secure channel the request came on.
    pub channel_id: u32,
    /// Its request id (a queued Publish is answered with it later).
    pub request_id: u32,
    /// The monotonic time.
    pub now: Instant,
    /// The server's wall clock at `now`.
    pub wall_now: DateTime,
    /// The channel's security (None under SecurityPolicy None).
    pub security: Option<&'a ChannelSecurity>,
}

impl ServiceContext<'_> {
    /// A Good response header answering `header`.
    fn ok(&self, header: &RequestHeader) -> ResponseHeader {
        ResponseHeader::answering(header, StatusCode::GOOD, self.wall_now)
    }
}

/// Runs one decoded service request: the encoded response, or None when it is answered
/// later through the channel's outbox (a queued Publish).
pub(super) fn dispatch(
    server: &mut Server,
    context: &ServiceContext<'_>,
    request: ServiceRequest,
) -> Result<Option<OutgoingBody>, StatusCode> {
    let response = match request {
        ServiceRequest::GetEndpoints(_) | ServiceRequest::FindServers(_) => {
            discovery(server, context, request)?
        }
        ServiceRequest::CreateSession(_)
        | ServiceRequest::ActivateSession(_)
        | ServiceRequest::CloseSession(_) => session(server, context, request)?,
        ServiceRequest::Read(_) | ServiceRequest::Write(_) => attribute(server, context, request)?,
        ServiceRequest::Browse(_)
        | ServiceRequest::BrowseNext(_)
        | ServiceRequest::TranslateBrowsePathsToNodeIds(_) => view(server, context, request)?,
        ServiceRequest::Call(request) => return call(server, context, &request),
        ServiceRequest::CreateSubscription(_)
        | ServiceRequest::ModifySubscription(_)
        | ServiceRequest::SetPublishingMode(_)
        | ServiceRequest::Publish(_)
        | ServiceRequest::Republish(_)
        | ServiceRequest::TransferSubscriptions(_)
        | ServiceRequest::DeleteSubscriptions(_)
        | ServiceRequest::CreateMonitoredItems(_)
        | ServiceRequest::ModifyMonitoredItems(_)
        | ServiceRequest::SetMonitoringMode(_)
        | ServiceRequest::DeleteMonitoredItems(_) => {
            let response = subscription_service(
                server,
                context.channel_id,
                context.request_id,
                context.now,
                request,
            )?;
            return Ok(response.map(|response| OutgoingBody::owned(response.encode_message())));
        }
        ServiceRequest::OpenSecureChannel(_) | ServiceRequest::CloseSecureChannel(_) => {
            return Err(StatusCode::BAD_SERVICE_UNSUPPORTED);
        }
    };
    Ok(Some(OutgoingBody::owned(response.encode_message())))
}

/// A ServiceFault answering `header` with `status`.
pub(super) fn fault(
    header: &RequestHeader,
    status: StatusCode,
    wall_now: DateTime,
) -> OutgoingBody {
    let fault = ServiceResponse::from(ServiceFault {
        response_header: ResponseHeader::answering(header, status, wall_now),
    });
    OutgoingBody::owned(fault.encode_message())
}

/// The RequestHeader of an undecodable request, if its first fields are readable.
pub(super) fn read_request_header(body: &[u8]) -> Option<RequestHeader> {
    let mut reader = Reader::new(body);
    NodeId::decode(&mut reader).ok()?;
    RequestHeader::decode(&mut reader).ok()
}

/// Checks the number of operations of a request: Bad_NothingToDo for none,
/// Bad_TooManyOperations past `limit` (0: no limit).
fn check_count(count: usize, limit: u32) -> Result<(), StatusCode> {
    if count == 0 {
        return Err(StatusCode::BAD_NOTHING_TO_DO);
    }
    if limit != 0 && count > limit as usize {
        return Err(StatusCode::BAD_TOO_MANY_OPERATIONS);
    }
    Ok(())
}

/// The Discovery service set: GetEndpoints, FindServers.
fn discovery(
    server: &mut Server,
    context: &ServiceContext<'_>,
    request: ServiceRequest,
) -> Result<ServiceResponse, StatusCode> {
    Ok(match request {
        ServiceRequest::GetEndpoints(request) => {
            get_endpoints(server, &request, context.ok(&request.request_header)).into()
        }
        ServiceRequest::FindServers(request) => {
            find_servers(server, &request, context.ok(&request.request_header)).into()
        }
        _ => return Err(StatusCode::BAD_SERVICE_UNSUPPORTED),
    })
}

/// The Session service set: CreateSession, ActivateSession, CloseSession.
fn session(
    server: &mut Server,
    context: &ServiceContext<'_>,
    request: ServiceRequest,
) -> Result<ServiceResponse, StatusCode> {
    let ServiceContext {
        channel_id,
        now,
        security,
        ..
    } = *context;
    let refused = |server: &mut Server, service: &'static str, status: StatusCode| {
        server.session_event(SessionEvent::Refused {
            service,
            channel_id,
            status,
        });
        status
    };
    Ok(match request {
        ServiceRequest::CreateSession(request) => {
            let header = context.ok(&request.request_header);
            let response = create_session(server, &request, channel_id, now, header, security)
                .map_err(|status| refused(server, "CreateSession", status))?;
            server.session_event(SessionEvent::Created {
                session_id: response.session_id.clone(),
                name: request.session_name.as_str().unwrap_or_default().to_owned(),
                channel_id,
            });
            response.into()
        }
        ServiceRequest::ActivateSession(request) => {
            let header = context.ok(&request.request_header);
            let response = activate_session(server, &request, channel_id, now, header, security)
                .map_err(|status| refused(server, "ActivateSession", status))?;
            let token = &request.request_header.authentication_token;
            if let Some((session_id, user)) = server
                .sessions
                .find_any(token, now)
                .ok()
                .map(|session| (session.session_id.clone(), session.user.clone()))
            {
                server.session_event(SessionEvent::Activated {
                    session_id,
                    user,
                    channel_id,
                });
            }
            response.into()
        }
        ServiceRequest::CloseSession(request) => {
            let closing = server
                .sessions
                .find_any(&request.request_header.authentication_token, now)
                .ok()
                .map(|session| session.session_id.clone());
            let session_id = closing.clone().filter(|_| request.delete_subscriptions);
            let response = close_session(
                server,
                &request,
                channel_id,
                now,
                context.ok(&request.request_header),
            )
            .map_err(|status| refused(server, "CloseSession", status))?;
            if let Some(session_id) = session_id {
                server.subscriptions.delete_session(&session_id);
            }
            if let Some(session_id) = closing {
                server.session_event(SessionEvent::Closed {
                    session_id,
                    channel_id,
                });
            }
            response.into()
        }
        _ => return Err(StatusCode::BAD_SERVICE_UNSUPPORTED),
    })
}

/// The Attribute service set: Read, Write.
fn attribute(
    server: &mut Server,
    context: &ServiceContext<'_>,
    request: ServiceRequest,
) -> Result<ServiceResponse, StatusCode> {
    let ServiceContext {
        channel_id, now, ..
    } = *context;
    let limits = server.config.operation_limits;
    Ok(match request {
        ServiceRequest::Read(request) => {
            activated_session(server, &request.request_header, channel_id, now)?;
            check_count(request.nodes_to_read.len(), limits.max_nodes_per_read)?;
            if request.max_age < 0.0 || request.max_age.is_nan() {
                return Err(StatusCode::BAD_MAX_AGE_INVALID);
            }
            let timestamps = request.timestamps_to_return;
            if !matches!(
                timestamps,
                TimestampsToReturn::Source
                    | TimestampsToReturn::Server
                    | TimestampsToReturn::Both
                    | TimestampsToReturn::Neither
            ) {
                return Err(StatusCode::BAD_TIMESTAMPS_TO_RETURN_INVALID);
            }
            ReadResponse {
                response_header: context.ok(&request.request_header),
                results: request
                    .nodes_to_read
                    .iter()
                    .map(|item| read_one(server, item, timestamps, now))
                    .collect(),
                diagnostic_infos: Vec::new(),
            }
            .into()
        }
        ServiceRequest::Write(request) => {
            let user = activated_session(server, &request.request_header, channel_id, now)?
                .user
                .clone();
            check_count(request.nodes_to_write.len(), limits.max_nodes_per_write)?;
            let results: Vec<StatusCode> = request
                .nodes_to_write
                .iter()
                .map(|item| write_one(server, item, now))
                .collect();
            // Written values reach monitored items at once, not at the next sample.
            for (item, status) in request.nodes_to_write.iter().zip(&results) {
                if status.is_good() {
                    server.value_written(&item.node_id, now);
                    if let Some(value) = &item.value.value {
                        let wall_now = server.wall_clock(now);
                        server.written(WrittenValue {
                            node_id: item.node_id.clone(),
                            value: value.clone(),
                            source_timestamp: item.value.source_timestamp.unwrap_or(wall_now),
                            user: user.clone(),
                        });
                    }
                }
            }
            WriteResponse {
                response_header: context.ok(&request.request_header),
                results,
                diagnostic_infos: Vec::new(),
            }
            .into()
        }
        _ => return Err(StatusCode::BAD_SERVICE_UNSUPPORTED),
    })
}

/// The View service set: Browse, BrowseNext, TranslateBrowsePathsToNodeIds.
fn view(
    server: &mut Server,
    context: &ServiceContext<'_>,
    request: ServiceRequest,
) -> Result<ServiceResponse, StatusCode> {
    let ServiceContext {
        channel_id, now, ..
    } = *context;
    let limits = server.config.operation_limits;
    Ok(match request {
        ServiceRequest::Browse(request) => {
            check_count(request.nodes_to_browse.len(), limits.max_nodes_per_browse)?;
            if !request.view.view_id.is_null() {
                return Err(StatusCode::BAD_VIEW_ID_UNKNOWN);
            }
            let requested = request.requested_max_references_per_node;
            let max = match requested {
                0 => limits.max_references_per_node,
                n => n.min(limits.max_references_per_node),
            } as usize;
            let found: Vec<_> = request
                .nodes_to_browse
                .iter()
                .map(|description| browse_references(&server.address_space, description))
                .collect();
            let session = activated_session(server, &request.request_header, channel_id, now)?;
            let results = found
                .into_iter()
                .map(|references| match references {
                    Ok(references) => page_result(
                        session,
                        references,
                        max,
                        limits.max_browse_continuation_points,
                    ),
                    Err(status) => BrowseResult {
                        status_code: status,
                        ..Default::default()
                    },
                })
                .collect();
            BrowseResponse {
                response_header: context.ok(&request.request_header),
                results,
                diagnostic_infos: Vec::new(),
            }
            .into()
        }
        ServiceRequest::BrowseNext(request) => {
            check_count(
                request.continuation_points.len(),
                limits.max_nodes_per_browse,
            )?;
            let session = activated_session(server, &request.request_header, channel_id, now)?;
            let results = request
                .continuation_points
                .iter()
                .map(|point| {
                    browse_next_one(
                        session,
                        point,
                        request.release_continuation_points,
                        limits.max_browse_continuation_points,
                    )
                })
                .collect();
            BrowseNextResponse {
                response_header: context.ok(&request.request_header),
                results,
                diagnostic_infos: Vec::new(),
            }
            .into()
        }
        ServiceRequest::TranslateBrowsePathsToNodeIds(request) => {
            activated_session(server, &request.request_header, channel_id, now)?;
            check_count(request.browse_paths.len(), limits.max_nodes_per_translate)?;
            TranslateBrowsePathsToNodeIdsResponse {
                response_header: context.ok(&request.request_header),
                results: request
                    .browse_paths
                    .iter()
                    .map(|path| translate_path(&server.address_space, path))
                    .collect(),
                diagnostic_infos: Vec::new(),
            }
            .into()
        }
        _ => return Err(StatusCode::BAD_SERVICE_UNSUPPORTED),
    })
}

/// The Method service set: Call (its response may share the getData payload, so it is
/// encoded as segments rather than as one `ServiceResponse`). A request that calls external
/// methods is answered later, when user code has answered them all (None here).
fn call(
    server: &mut Server,
    context: &ServiceContext<'_>,
    request: &CallRequest,
) -> Result<Option<OutgoingBody>, StatusCode> {
    let user = activated_session(
        server,
        &request.request_header,
        context.channel_id,
        context.now,
    )?
    .user
    .clone();
    check_count(
        request.methods_to_call.len(),
        server.config.operation_limits.max_nodes_per_method_call,
    )?;
    let steps: Vec<CallStep> = request
        .methods_to_call
        .iter()
        .map(|method| call_step(server, method))
        .collect();
    let outcomes = if steps.iter().any(|s| matches!(s, CallStep::External { .. })) {
        match server.defer_call(
            context.channel_id,
            context.request_id,
            &request.request_header,
            steps,
            user.as_deref(),
        ) {
            Ok(()) => return Ok(None),
            Err(outcomes) => outcomes,
        }
    } else {
        steps
            .into_iter()
            .filter_map(|step| match step {
                CallStep::Done(outcome) => Some(outcome),
                CallStep::External { .. } => None,
            })
            .collect()
    };
    Ok(Some(encode_call_response(
        &context.ok(&request.request_header),
        outcomes,
    )))
}
