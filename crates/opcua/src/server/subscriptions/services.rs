//! The service handlers of the Subscription and MonitoredItem service sets over the
//! [`SubscriptionEngine`](super::SubscriptionEngine) of a [`Server`]. Publish requests are
//! queued and answered later (through the channel's outbox); every other request is answered
//! at once.

use std::time::{Duration, Instant};

use super::item::{MonitoredItem, is_numeric};
use super::subscription::Subscription;
use super::{PendingPublish, SubscriptionEngine};
use crate::encoding::{
    BinaryEncodable, DateTime, ExtensionObject, ExtensionObjectBody, NodeId, QualifiedName, Reader,
    Variant,
};
use crate::server::address_space::{AddNodeError, AddressSpace, NodeAttributes};
use crate::server::server_state::Server;
use crate::server::session_services::activated_session;
use crate::services::well_known_nodes as ids;
use crate::services::{
    AttributeId, CreateMonitoredItemsRequest, CreateMonitoredItemsResponse,
    CreateSubscriptionRequest, CreateSubscriptionResponse, DataChangeFilter, DataChangeTrigger,
    DeleteMonitoredItemsResponse, DeleteSubscriptionsResponse, ModifyMonitoredItemsRequest,
    ModifyMonitoredItemsResponse, ModifySubscriptionRequest, ModifySubscriptionResponse,
    MonitoredItemCreateResult, MonitoredItemModifyResult, MonitoringFilter, MonitoringMode,
    MonitoringParameters, PublishRequest, ReadValueId, RepublishRequest, RepublishResponse,
    RequestHeader, ResponseHeader, ServiceFault, ServiceRequest, ServiceResponse,
    SetMonitoringModeResponse, SetPublishingModeResponse, TimestampsToReturn, TransferResult,
    TransferSubscriptionsRequest, TransferSubscriptionsResponse, deadband_type,
};
use crate::types::StatusCode;

/// `Range_Encoding_DefaultBinary` (ns=0;i=886): the body type of an EURange value.
pub use crate::server::address_space::RANGE_BINARY_ENCODING_ID;
/// The `Range` DataType (ns=0;i=884).
pub use crate::server::address_space::RANGE_DATA_TYPE_ID as RANGE_DATA_TYPE;

/// An EURange value: the Range structure (low, high) in an ExtensionObject.
pub fn eu_range_value(low: f64, high: f64) -> Variant {
    Variant::ExtensionObject(Box::new(crate::server::address_space::range_object(
        low, high,
    )))
}

/// Adds the EURange property (`<node>.EURange`, in the node's namespace) to an analog
/// variable, which percent deadbands need.
pub fn add_eu_range(
    space: &mut AddressSpace,
    node: &NodeId,
    low: f64,
    high: f64,
) -> Result<(), AddNodeError> {
    let stem = crate::server::address_space::identifier_text(node);
    let id = NodeId::string(node.namespace, &format!("{stem}.EURange"));
    space.add_property(
        node,
        id,
        QualifiedName::new(0, "EURange"),
        eu_range_value(low, high),
        NodeId::numeric(0, RANGE_DATA_TYPE),
    )
}

/// The (low, high) of a node's EURange property, when it has a readable one.
pub fn eu_range(space: &AddressSpace, node: &NodeId) -> Option<(f64, f64)> {
    let node = space.node(node)?;
    node.references
        .iter()
        .filter(|r| r.is_forward && r.reference_type == ids::HAS_PROPERTY)
        .filter_map(|r| space.node(&r.target))
        .find(|p| p.browse_name.name.as_str() == Some("EURange"))
        .and_then(|property| match &property.attributes {
            NodeAttributes::Variable(variable) => match &variable.value {
                Variant::ExtensionObject(object) => match &object.body {
                    ExtensionObjectBody::Binary(body) => {
                        let mut reader = Reader::new(body);
                        let low = f64::decode(&mut reader).ok()?;
                        let high = f64::decode(&mut reader).ok()?;
                        (low.is_finite() && high.is_finite()).then_some((low, high))
                    }
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        })
}

/// Runs a subscription or monitored-item request. `Ok(None)` for a Publish request that was
/// queued (its answer comes later through the outbox of `channel_id`).
pub fn handle(
    server: &mut Server,
    channel_id: u32,
    request_id: u32,
    now: Instant,
    request: ServiceRequest,
) -> Result<Option<ServiceResponse>, StatusCode> {
    let wall_now = server.wall_clock(now);
    let ok = |header: &RequestHeader| ResponseHeader::answering(header, StatusCode::GOOD, wall_now);
    let session = activated_session(server, request.request_header(), channel_id, now)?;
    let session_id = session.session_id.clone();
    let user = session.user.clone();
    let limits = server.config.subscription_limits;
    server.subscriptions.bind(&session_id, channel_id);
    let response: ServiceResponse = match request {
        ServiceRequest::CreateSubscription(request) => create_subscription(
            server,
            &request,
            session_id,
            user,
            now,
            ok(&request.request_header),
        )?
        .into(),
        ServiceRequest::ModifySubscription(request) => {
            let engine = &mut server.subscriptions;
            let subscription = owned(engine, &session_id, request.subscription_id)?;
            apply_parameters(subscription, &limits, &request);
            ModifySubscriptionResponse {
                response_header: ok(&request.request_header),
                revised_publishing_interval: subscription.publishing_interval_ms,
                revised_lifetime_count: subscription.lifetime_count,
                revised_max_keep_alive_count: subscription.max_keep_alive_count,
            }
            .into()
        }
        ServiceRequest::SetPublishingMode(request) => {
            check_count(request.subscription_ids.len())?;
            let engine = &mut server.subscriptions;
            let results = request
                .subscription_ids
                .iter()
                .map(|id| match owned(engine, &session_id, *id) {
                    Ok(subscription) => {
                        subscription.publishing_enabled = request.publishing_enabled;
                        StatusCode::GOOD
                    }
                    Err(status) => status,
                })
                .collect();
            SetPublishingModeResponse {
                response_header: ok(&request.request_header),
                results,
                diagnostic_infos: Vec::new(),
            }
            .into()
        }
        ServiceRequest::DeleteSubscriptions(request) => {
            check_count(request.subscription_ids.len())?;
            let engine = &mut server.subscriptions;
            let results = request
                .subscription_ids
                .iter()
                .map(|id| match owned(engine, &session_id, *id) {
                    Ok(_) => {
                        engine.remove_subscription(*id);
                        StatusCode::GOOD
                    }
                    Err(status) => status,
                })
                .collect();
            engine.fail_publish_without_subscriptions(&session_id, wall_now);
            DeleteSubscriptionsResponse {
                response_header: ok(&request.request_header),
                results,
                diagnostic_infos: Vec::new(),
            }
            .into()
        }
        ServiceRequest::Publish(request) => {
            publish(server, &session_id, channel_id, request_id, now, request)?;
            return Ok(None);
        }
        ServiceRequest::Republish(request) => {
            let subscription = owned(
                &mut server.subscriptions,
                &session_id,
                request.subscription_id,
            )?;
            republish(subscription, &request, ok(&request.request_header))?.into()
        }
        ServiceRequest::TransferSubscriptions(request) => transfer(
            server,
            &session_id,
            user,
            &request,
            wall_now,
            ok(&request.request_header),
        )?
        .into(),
        ServiceRequest::CreateMonitoredItems(request) => create_items(
            server,
            &session_id,
            &request,
            now,
            ok(&request.request_header),
        )?
        .into(),
        ServiceRequest::ModifyMonitoredItems(request) => modify_items(
            server,
            &session_id,
            &request,
            now,
            ok(&request.request_header),
        )?
        .into(),
        ServiceRequest::SetMonitoringMode(request) => {
            check_count(request.monitored_item_ids.len())?;
            if request.monitoring_mode.name().is_none() {
                return Err(StatusCode::BAD_MONITORING_MODE_INVALID);
            }
            let subscription = owned(
                &mut server.subscriptions,
                &session_id,
                request.subscription_id,
            )?;
            let results = request
                .monitored_item_ids
                .iter()
                .map(|id| match subscription.items.get_mut(id) {
                    Some(item) => {
                        set_mode(item, request.monitoring_mode, now);
                        StatusCode::GOOD
                    }
                    None => StatusCode::BAD_MONITORED_ITEM_ID_INVALID,
                })
                .collect();
            SetMonitoringModeResponse {
                response_header: ok(&request.request_header),
                results,
                diagnostic_infos: Vec::new(),
            }
            .into()
        }
        ServiceRequest::DeleteMonitoredItems(request) => {
            check_count(request.monitored_item_ids.len())?;
            let engine = &mut server.subscriptions;
            let subscription = owned(engine, &session_id, request.subscription_id)?;
            let mut removed = 0;
            let results = request
                .monitored_item_ids
                .iter()
                .map(|id| match subscription.items.remove(id) {
                    Some(_) => {
                        removed += 1;
                        StatusCode::GOOD
                    }
                    None => StatusCode::BAD_MONITORED_ITEM_ID_INVALID,
                })
                .collect();
            engine.total_items = engine.total_items.saturating_sub(removed);
            DeleteMonitoredItemsResponse {
                response_header: ok(&request.request_header),
                results,
                diagnostic_infos: Vec::new(),
            }
            .into()
        }
        _ => return Err(StatusCode::BAD_SERVICE_UNSUPPORTED),
    };
    Ok(Some(response))
}

fn check_count(count: usize) -> Result<(), StatusCode> {
    if count == 0 {
        Err(StatusCode::BAD_NOTHING_TO_DO)
    } else {
        Ok(())
    }
}

/// The subscription `id` of the session: Bad_SubscriptionIdInvalid when unknown or owned by
/// another session.
fn owned<'a>(
    engine: &'a mut SubscriptionEngine,
    session_id: &NodeId,
    id: u32,
) -> Result<&'a mut Subscription, StatusCode> {
    engine
        .subscriptions
        .get_mut(&id)
        .filter(|s| s.session_id == *session_id)
        .ok_or(StatusCode::BAD_SUBSCRIPTION_ID_INVALID)
}

fn create_subscription(
    server: &mut Server,
    request: &CreateSubscriptionRequest,
    session_id: NodeId,
    user: Option<String>,
    now: Instant,
    header: ResponseHeader,
) -> Result<CreateSubscriptionResponse, StatusCode> {
    let limits = server.config.subscription_limits;
    let engine = &mut server.subscriptions;
    if engine.len() >= limits.max_subscriptions
        || engine.session_subscriptions(&session_id).len() >= limits.max_subscriptions_per_session
    {
        return Err(StatusCode::BAD_TOO_MANY_SUBSCRIPTIONS);
    }
    let id = engine.allocate_subscription_id();
    let mut subscription = Subscription {
        id,
        session_id,
        user,
        publishing_interval_ms: 0.0,
        lifetime_count: 0,
        max_keep_alive_count: 0,
        max_notifications_per_publish: 0,
        priority: request.priority,
        publishing_enabled: request.publishing_enabled,
        items: Default::default(),
        next_publish: now,
        keep_alive_counter: 0,
        lifetime_counter: 0,
        late: false,
        next_sequence_number: 1,
        retransmission: Default::default(),
        max_retransmission: limits.max_retransmission_queue.max(1),
    };
    apply_parameters(
        &mut subscription,
        &limits,
        &ModifySubscriptionRequest {
            request_header: RequestHeader::default(),
            subscription_id: id,
            requested_publishing_interval: request.requested_publishing_interval,
            requested_lifetime_count: request.requested_lifetime_count,
            requested_max_keep_alive_count: request.requested_max_keep_alive_count,
            max_notifications_per_publish: request.max_notifications_per_publish,
            priority: request.priority,
        },
    );
    // The first cycle always sends a message (notifications or a keep-alive) to tell the
    // client the subscription works (OPC 10000-4 §5.13.1.1).
    subscription.keep_alive_counter = subscription.max_keep_alive_count;
    subscription.next_publish = now + subscription.period();
    let response = CreateSubscriptionResponse {
        response_header: header,
        subscription_id: id,
        revised_publishing_interval: subscription.publishing_interval_ms,
        revised_lifetime_count: subscription.lifetime_count,
        revised_max_keep_alive_count: subscription.max_keep_alive_count,
    };
    engine.subscriptions.insert(id, subscription);
    Ok(response)
}

fn apply_parameters(
    subscription: &mut Subscription,
    limits: &super::SubscriptionLimits,
    request: &ModifySubscriptionRequest,
) {
    let (interval, lifetime, keep_alive) = limits.revise(
        request.requested_publishing_interval,
        request.requested_lifetime_count,
        request.requested_max_keep_alive_count,
    );
    subscription.publishing_interval_ms = interval;
    subscription.lifetime_count = lifetime;
    subscription.max_keep_alive_count = keep_alive;
    subscription.max_notifications_per_publish = match request.max_notifications_per_publish {
        0 => limits.max_notifications_per_publish,
        n => n.min(limits.max_notifications_per_publish),
    }
    .max(1);
    subscription.priority = request.priority;
}

fn publish(
    server: &mut Server,
    session_id: &NodeId,
    channel_id: u32,
    request_id: u32,
    now: Instant,
    request: PublishRequest,
) -> Result<(), StatusCode> {
    let wall_now = server.wall_clock(now);
    let max_queued = server
        .config
        .subscription_limits
        .max_publish_requests_per_session;
    let engine = &mut server.subscriptions;
    let results = request
        .subscription_acknowledgements
        .iter()
        .map(|ack| match owned(engine, session_id, ack.subscription_id) {
            Ok(subscription) => subscription.acknowledge(ack.sequence_number),
            Err(status) => status,
        })
        .collect();
    let ids = engine.session_subscriptions(session_id);
    let queue = engine.sessions.entry(session_id.clone()).or_default();
    if ids.is_empty() && queue.status_messages.is_empty() {
        return Err(StatusCode::BAD_NO_SUBSCRIPTION);
    }
    if queue.publish.len() >= max_queued {
        return Err(StatusCode::BAD_TOO_MANY_PUBLISH_REQUESTS);
    }
    let deadline = match request.request_header.timeout_hint {
        0 => None,
        hint => Some(now + Duration::from_millis(u64::from(hint))),
    };
    queue.publish.push_back(PendingPublish {
        channel_id,
        request_id,
        header: request.request_header,
        results,
        deadline,
    });
    for id in ids {
        if let Some(subscription) = engine.subscriptions.get_mut(&id) {
            subscription.lifetime_counter = 0;
        }
    }
    engine.serve_waiting(session_id, wall_now);
    Ok(())
}

fn republish(
    subscription: &Subscription,
    request: &RepublishRequest,
    header: ResponseHeader,
) -> Result<RepublishResponse, StatusCode> {
    subscription
        .retransmission
        .iter()
        .find(|m| m.sequence_number == request.retransmit_sequence_number)
        .map(|message| RepublishResponse {
            response_header: header,
            notification_message: message.clone(),
        })
        .ok_or(StatusCode::BAD_MESSAGE_NOT_AVAILABLE)
}

fn transfer(
    server: &mut Server,
    session_id: &NodeId,
    user: Option<String>,
    request: &TransferSubscriptionsRequest,
    wall_now: DateTime,
    header: ResponseHeader,
) -> Result<TransferSubscriptionsResponse, StatusCode> {
    check_count(request.subscription_ids.len())?;
    let engine = &mut server.subscriptions;
    let mut results = Vec::with_capacity(request.subscription_ids.len());
    for id in &request.subscription_ids {
        let Some(subscription) = engine.subscriptions.get_mut(id) else {
            results.push(TransferResult {
                status_code: StatusCode::BAD_SUBSCRIPTION_ID_INVALID,
                available_sequence_numbers: Vec::new(),
            });
            continue;
        };
        // OPC 10000-4 §5.13.7.1: only to a session of the same user.
        if subscription.user != user {
            results.push(TransferResult {
                status_code: StatusCode::BAD_USER_ACCESS_DENIED,
                available_sequence_numbers: Vec::new(),
            });
            continue;
        }
        let previous = std::mem::replace(&mut subscription.session_id, session_id.clone());
        subscription.lifetime_counter = 0;
        if request.send_initial_values {
            for item in subscription.items.values_mut() {
                if item.mode != MonitoringMode::Disabled
                    && let Some(last) = item.last_value.clone()
                {
                    let stripped = item.strip_timestamps(last);
                    item.enqueue(stripped);
                }
            }
        }
        let available = subscription.available_sequence_numbers();
        if previous != *session_id {
            // The old session learns with Good_SubscriptionTransferred; the message takes no
            // sequence number from the subscription's stream, which goes on in the new session.
            let message = subscription.keep_alive(wall_now);
            let mut message = message;
            message.notification_data = vec![
                crate::services::NotificationData::StatusChange(
                    crate::services::StatusChangeNotification {
                        status: StatusCode::GOOD_SUBSCRIPTION_TRANSFERRED,
                        diagnostic_info: Default::default(),
                    },
                )
                .to_extension_object(),
            ];
            engine.queue_status_message(&previous, *id, message, wall_now);
        }
        results.push(TransferResult {
            status_code: StatusCode::GOOD,
            available_sequence_numbers: available,
        });
    }
    Ok(TransferSubscriptionsResponse {
        response_header: header,
        results,
        diagnostic_infos: Vec::new(),
    })
}

/// Checks an item's filter against its node: the filter, and the deadband in value units.
fn check_filter(
    server: &Server,
    item: &ReadValueId,
    parameters: &MonitoringParameters,
) -> Result<(DataChangeFilter, Option<f64>), StatusCode> {
    let filter = match MonitoringFilter::from_extension_object(&parameters.filter) {
        Ok(MonitoringFilter::None) => return Ok((DataChangeFilter::default(), None)),
        Ok(MonitoringFilter::DataChange(filter)) => filter,
        Ok(MonitoringFilter::Unsupported) => {
            return Err(StatusCode::BAD_MONITORED_ITEM_FILTER_UNSUPPORTED);
        }
        Err(_) => return Err(StatusCode::BAD_MONITORED_ITEM_FILTER_INVALID),
    };
    if item.attribute_id != AttributeId::Value.id() {
        return Err(StatusCode::BAD_FILTER_NOT_ALLOWED);
    }
    if !matches!(
        filter.trigger,
        DataChangeTrigger::Status
            | DataChangeTrigger::StatusValue
            | DataChangeTrigger::StatusValueTimestamp
    ) {
        return Err(StatusCode::BAD_MONITORED_ITEM_FILTER_INVALID);
    }
    let value = filter.deadband_value;
    let deadband = match filter.deadband_type {
        deadband_type::NONE => None,
        deadband_type::ABSOLUTE | deadband_type::PERCENT if !value.is_finite() || value < 0.0 => {
            return Err(StatusCode::BAD_DEADBAND_FILTER_INVALID);
        }
        deadband_type::ABSOLUTE => Some(value),
        deadband_type::PERCENT => {
            // OPC 10000-8 §6.2: percent of the EURange span; no EURange, no percent deadband.
            if value > 100.0 {
                return Err(StatusCode::BAD_DEADBAND_FILTER_INVALID);
            }
            let (low, high) = eu_range(&server.address_space, &item.node_id)
                .ok_or(StatusCode::BAD_DEADBAND_FILTER_INVALID)?;
            Some(value / 100.0 * (high - low).abs())
        }
        _ => return Err(StatusCode::BAD_DEADBAND_FILTER_INVALID),
    };
    if deadband.is_some() {
        let numeric = match server
            .address_space
            .node(&item.node_id)
            .map(|n| &n.attributes)
        {
            Some(NodeAttributes::Variable(variable)) => {
                is_numeric(&variable.value) || variable.value == Variant::Empty
            }
            _ => false,
        };
        if !numeric {
            return Err(StatusCode::BAD_FILTER_NOT_ALLOWED);
        }
    }
    Ok((filter, deadband))
}

/// Checks the item's node and attribute.
fn check_target(server: &Server, item: &ReadValueId) -> Result<(), StatusCode> {
    let node = server
        .address_space
        .node(&item.node_id)
        .ok_or(StatusCode::BAD_NODE_ID_UNKNOWN)?;
    let attribute =
        AttributeId::from_u32(item.attribute_id).ok_or(StatusCode::BAD_ATTRIBUTE_ID_INVALID)?;
    if attribute == AttributeId::Value && !matches!(node.attributes, NodeAttributes::Variable(_)) {
        return Err(StatusCode::BAD_ATTRIBUTE_ID_INVALID);
    }
    Ok(())
}

fn check_timestamps(timestamps: TimestampsToReturn) -> Result<(), StatusCode> {
    match timestamps {
        TimestampsToReturn::Source
        | TimestampsToReturn::Server
        | TimestampsToReturn::Both
        | TimestampsToReturn::Neither => Ok(()),
        _ => Err(StatusCode::BAD_TIMESTAMPS_TO_RETURN_INVALID),
    }
}

fn set_mode(item: &mut MonitoredItem, mode: MonitoringMode, now: Instant) {
    if mode == MonitoringMode::Disabled {
        item.queue.clear();
        item.last_value = None;
    } else if item.mode == MonitoringMode::Disabled {
        item.next_sample = now;
    }
    item.mode = mode;
}

fn create_items(
    server: &mut Server,
    session_id: &NodeId,
    request: &CreateMonitoredItemsRequest,
    now: Instant,
    header: ResponseHeader,
) -> Result<CreateMonitoredItemsResponse, StatusCode> {
    check_count(request.items_to_create.len())?;
    check_timestamps(request.timestamps_to_return)?;
    let limits = server.config.subscription_limits;
    let mut engine = std::mem::take(&mut server.subscriptions);
    let outcome = (|| -> Result<Vec<MonitoredItemCreateResult>, StatusCode> {
        let interval =
            owned(&mut engine, session_id, request.subscription_id)?.publishing_interval_ms;
        let mut results = Vec::with_capacity(request.items_to_create.len());
        for create in &request.items_to_create {
            let in_subscription = engine
                .subscriptions
                .get(&request.subscription_id)
                .map_or(0, |s| s.items.len());
            let result = if engine.total_items >= limits.max_monitored_items
                || in_subscription >= limits.max_monitored_items_per_subscription
            {
                Err(StatusCode::BAD_TOO_MANY_MONITORED_ITEMS)
            } else {
                new_item(
                    server,
                    &limits,
                    create,
                    interval,
                    request.timestamps_to_return,
                    now,
                )
            };
            results.push(match result {
                Ok(mut item) => {
                    item.id = engine.allocate_item_id();
                    let result = MonitoredItemCreateResult {
                        status_code: StatusCode::GOOD,
                        monitored_item_id: item.id,
                        revised_sampling_interval: item.sampling_interval_ms,
                        revised_queue_size: u32::try_from(item.queue_size).unwrap_or(u32::MAX),
                        filter_result: ExtensionObject::default(),
                    };
                    if let Some(subscription) =
                        engine.subscriptions.get_mut(&request.subscription_id)
                    {
                        subscription.items.insert(item.id, item);
                        engine.total_items += 1;
                    }
                    result
                }
                Err(status) => MonitoredItemCreateResult {
                    status_code: status,
                    ..Default::default()
                },
            });
        }
        Ok(results)
    })();
    server.subscriptions = engine;
    Ok(CreateMonitoredItemsResponse {
        response_header: header,
        results: outcome?,
        diagnostic_infos: Vec::new(),
    })
}

fn new_item(
    server: &Server,
    limits: &super::SubscriptionLimits,
    create: &crate::services::MonitoredItemCreateRequest,
    publishing_interval_ms: f64,
    timestamps: TimestampsToReturn,
    now: Instant,
) -> Result<MonitoredItem, StatusCode> {
    check_target(server, &create.item_to_monitor)?;
    if create.monitoring_mode.name().is_none() {
        return Err(StatusCode::BAD_MONITORING_MODE_INVALID);
    }
    let parameters = &create.requested_parameters;
    let (filter, deadband) = check_filter(server, &create.item_to_monitor, parameters)?;
    let mut item = MonitoredItem {
        id: 0,
        client_handle: parameters.client_handle,
        item_to_monitor: create.item_to_monitor.clone(),
        mode: create.monitoring_mode,
        sampling_interval_ms: limits
            .revise_sampling(parameters.sampling_interval, publishing_interval_ms),
        queue_size: limits.revise_queue_size(parameters.queue_size) as usize,
        discard_oldest: parameters.discard_oldest,
        filter,
        deadband,
        timestamps,
        last_value: None,
        queue: Default::default(),
        next_sample: now,
    };
    if item.mode != MonitoringMode::Disabled {
        // The first sample is always queued (OPC 10000-4 §5.12.1.2).
        let value = super::sample(server, &item, now);
        item.offer(value);
    }
    item.next_sample = now + item.sampling_period();
    Ok(item)
}

fn modify_items(
    server: &mut Server,
    session_id: &NodeId,
    request: &ModifyMonitoredItemsRequest,
    now: Instant,
    header: ResponseHeader,
) -> Result<ModifyMonitoredItemsResponse, StatusCode> {
    check_count(request.items_to_modify.len())?;
    check_timestamps(request.timestamps_to_return)?;
    let limits = server.config.subscription_limits;
    let mut engine = std::mem::take(&mut server.subscriptions);
    let outcome = owned(&mut engine, session_id, request.subscription_id).map(|subscription| {
        let interval = subscription.publishing_interval_ms;
        request
            .items_to_modify
            .iter()
            .map(|modify| {
                let Some(item) = subscription.items.get_mut(&modify.monitored_item_id) else {
                    return MonitoredItemModifyResult {
                        status_code: StatusCode::BAD_MONITORED_ITEM_ID_INVALID,
                        ..Default::default()
                    };
                };
                let parameters = &modify.requested_parameters;
                match check_filter(server, &item.item_to_monitor, parameters) {
                    Ok((filter, deadband)) => {
                        item.filter = filter;
                        item.deadband = deadband;
                    }
                    Err(status) => {
                        return MonitoredItemModifyResult {
                            status_code: status,
                            ..Default::default()
                        };
                    }
                }
                item.client_handle = parameters.client_handle;
                item.timestamps = request.timestamps_to_return;
                item.sampling_interval_ms =
                    limits.revise_sampling(parameters.sampling_interval, interval);
                item.discard_oldest = parameters.discard_oldest;
                item.resize_queue(limits.revise_queue_size(parameters.queue_size) as usize);
                item.next_sample = item.next_sample.min(now + item.sampling_period());
                MonitoredItemModifyResult {
                    status_code: StatusCode::GOOD,
                    revised_sampling_interval: item.sampling_interval_ms,
                    revised_queue_size: u32::try_from(item.queue_size).unwrap_or(u32::MAX),
                    filter_result: ExtensionObject::default(),
                }
            })
            .collect()
    });
    server.subscriptions = engine;
    Ok(ModifyMonitoredItemsResponse {
        response_header: header,
        results: outcome?,
        diagnostic_infos: Vec::new(),
    })
}

impl SubscriptionEngine {
    /// Answers the waiting Publish requests of a session left without subscriptions with
    /// Bad_NoSubscription (OPC 10000-4 §5.13.5.1).
    pub(crate) fn fail_publish_without_subscriptions(
        &mut self,
        session_id: &NodeId,
        wall_now: DateTime,
    ) {
        if !self.session_subscriptions(session_id).is_empty() {
            return;
        }
        let Some(queue) = self.sessions.get_mut(session_id) else {
            return;
        };
        if !queue.status_messages.is_empty() {
            return;
        }
        let waiting: Vec<_> = queue.publish.drain(..).collect();
        for publish in waiting {
            let response = ServiceResponse::from(ServiceFault {
                response_header: ResponseHeader::answering(
                    &publish.header,
                    StatusCode::BAD_NO_SUBSCRIPTION,
                    wall_now,
                ),
            });
            self.push_response(publish, response);
        }
    }
}
