//! Subscriptions on [`OpcuaClient`]: create / modify / delete subscriptions and monitored
//! items, and [`next_notification`](OpcuaClient::next_notification), which keeps Publish
//! requests outstanding, acknowledges what arrived, asks Republish for gaps and hands out
//! [`SubscriptionEvent`]s one at a time (call it in a loop: it is the stream of changes).
//!
//! Like every other call, nothing runs in the background: Publish responses that arrive while
//! another call waits are kept and handed out by the next `next_notification`.
//!
//! The subscription state ([`SubscriptionSet`]) survives the connection:
//! [`take_subscription_set`](OpcuaClient::take_subscription_set) on the old client and
//! [`recreate_subscriptions`](OpcuaClient::recreate_subscriptions) on a new one build the
//! same subscriptions and items again, with the same client handles (the hook a reconnecting
//! client uses when TransferSubscriptions is not possible).

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Duration;

use super::{ClientError, OpcuaClient, first, unexpected};
use crate::client::subscriptions::{
    MonitoredItemSpec, SubscriptionEvent, SubscriptionSet, SubscriptionSettings,
};
use crate::services::{
    DeleteMonitoredItemsRequest, DeleteSubscriptionsRequest, ModifyMonitoredItemsRequest,
    ModifySubscriptionRequest, ModifySubscriptionResponse, MonitoredItemCreateResult,
    MonitoredItemModifyRequest, MonitoredItemModifyResult, MonitoringMode, PublishRequest,
    RepublishRequest, RequestHeader, ServiceResponse, SetMonitoringModeRequest,
    SetPublishingModeRequest, TimestampsToReturn,
};
use crate::types::StatusCode;

/// Publish requests kept outstanding by default.
pub const DEFAULT_PUBLISH_REQUESTS: usize = 3;
/// Most events kept between two `next_notification` calls; beyond, the oldest are dropped.
pub const MAX_BUFFERED_EVENTS: usize = 1_000_000;

/// The subscription side of one client.
#[derive(Debug)]
pub(crate) struct SubscriptionDriver {
    pub(crate) set: SubscriptionSet,
    publish: HashSet<u32>,
    republish: HashMap<u32, (u32, u32)>,
    events: VecDeque<SubscriptionEvent>,
    target: usize,
}

impl Default for SubscriptionDriver {
    fn default() -> Self {
        Self {
            set: SubscriptionSet::default(),
            publish: HashSet::new(),
            republish: HashMap::new(),
            events: VecDeque::new(),
            target: DEFAULT_PUBLISH_REQUESTS,
        }
    }
}

impl OpcuaClient {
    /// Creates a subscription; returns its id. Notifications come from
    /// [`next_notification`](Self::next_notification).
    pub async fn create_subscription(
        &mut self,
        settings: SubscriptionSettings,
    ) -> Result<u32, ClientError> {
        let request = self.subs.set.create_request(&settings);
        let ServiceResponse::CreateSubscription(response) = self.request(request).await? else {
            return Err(unexpected("CreateSubscription"));
        };
        self.subs.set.created(settings, &response);
        Ok(response.subscription_id)
    }

    /// Changes a subscription's parameters; returns the revised ones.
    pub async fn modify_subscription(
        &mut self,
        subscription_id: u32,
        settings: SubscriptionSettings,
    ) -> Result<ModifySubscriptionResponse, ClientError> {
        let request = ModifySubscriptionRequest {
            request_header: RequestHeader::default(),
            subscription_id,
            requested_publishing_interval: settings.publishing_interval_ms,
            requested_lifetime_count: settings.lifetime_count,
            requested_max_keep_alive_count: settings.max_keep_alive_count,
            max_notifications_per_publish: settings.max_notifications_per_publish,
            priority: settings.priority,
        };
        let ServiceResponse::ModifySubscription(response) = self.request(request).await? else {
            return Err(unexpected("ModifySubscription"));
        };
        if let Some(subscription) = self.subs.set.subscriptions.get_mut(&subscription_id) {
            subscription.settings = settings;
            subscription.revised_publishing_interval_ms = response.revised_publishing_interval;
            subscription.revised_lifetime_count = response.revised_lifetime_count;
            subscription.revised_max_keep_alive_count = response.revised_max_keep_alive_count;
        }
        Ok(response)
    }

    /// Enables or disables publishing; one status per subscription.
    pub async fn set_publishing_mode(
        &mut self,
        subscription_ids: &[u32],
        enabled: bool,
    ) -> Result<Vec<StatusCode>, ClientError> {
        let request = SetPublishingModeRequest {
            request_header: RequestHeader::default(),
            publishing_enabled: enabled,
            subscription_ids: subscription_ids.to_vec(),
        };
        let ServiceResponse::SetPublishingMode(response) = self.request(request).await? else {
            return Err(unexpected("SetPublishingMode"));
        };
        for (id, status) in subscription_ids.iter().zip(&response.results) {
            if let (true, Some(subscription)) =
                (status.is_good(), self.subs.set.subscriptions.get_mut(id))
            {
                subscription.settings.publishing_enabled = enabled;
            }
        }
        Ok(response.results)
    }

    /// Deletes subscriptions; one status per subscription.
    pub async fn delete_subscriptions(
        &mut self,
        subscription_ids: &[u32],
    ) -> Result<Vec<StatusCode>, ClientError> {
        let request = DeleteSubscriptionsRequest {
            request_header: RequestHeader::default(),
            subscription_ids: subscription_ids.to_vec(),
        };
        let ServiceResponse::DeleteSubscriptions(response) = self.request(request).await? else {
            return Err(unexpected("DeleteSubscriptions"));
        };
        for id in subscription_ids {
            self.subs.set.remove(*id);
        }
        Ok(response.results)
    }

    /// Creates monitored items; returns each item's client handle and result, in order.
    pub async fn create_monitored_items(
        &mut self,
        subscription_id: u32,
        specs: &[MonitoredItemSpec],
    ) -> Result<Vec<(u32, MonitoredItemCreateResult)>, ClientError> {
        let (request, handles) = self.subs.set.create_items_request(subscription_id, specs);
        let ServiceResponse::CreateMonitoredItems(response) = self.request(request).await? else {
            return Err(unexpected("CreateMonitoredItems"));
        };
        self.subs
            .set
            .items_created(subscription_id, specs, &handles, &response.results);
        Ok(handles.into_iter().zip(response.results).collect())
    }

    /// Modifies monitored items (timestamps: both).
    pub async fn modify_monitored_items(
        &mut self,
        subscription_id: u32,
        items: Vec<MonitoredItemModifyRequest>,
    ) -> Result<Vec<MonitoredItemModifyResult>, ClientError> {
        let request = ModifyMonitoredItemsRequest {
            request_header: RequestHeader::default(),
            subscription_id,
            timestamps_to_return: TimestampsToReturn::Both,
            items_to_modify: items,
        };
        let ServiceResponse::ModifyMonitoredItems(response) = self.request(request).await? else {
            return Err(unexpected("ModifyMonitoredItems"));
        };
        Ok(response.results)
    }

    /// Sets the monitoring mode of items; one status per item.
    pub async fn set_monitoring_mode(
        &mut self,
        subscription_id: u32,
        mode: MonitoringMode,
        monitored_item_ids: &[u32],
    ) -> Result<Vec<StatusCode>, ClientError> {
        let request = SetMonitoringModeRequest {
            request_header: RequestHeader::default(),
            subscription_id,
            monitoring_mode: mode,
            monitored_item_ids: monitored_item_ids.to_vec(),
        };
        let ServiceResponse::SetMonitoringMode(response) = self.request(request).await? else {
            return Err(unexpected("SetMonitoringMode"));
        };
        Ok(response.results)
    }

    /// Deletes monitored items; one status per item.
    pub async fn delete_monitored_items(
        &mut self,
        subscription_id: u32,
        monitored_item_ids: &[u32],
    ) -> Result<Vec<StatusCode>, ClientError> {
        let request = DeleteMonitoredItemsRequest {
            request_header: RequestHeader::default(),
            subscription_id,
            monitored_item_ids: monitored_item_ids.to_vec(),
        };
        let ServiceResponse::DeleteMonitoredItems(response) = self.request(request).await? else {
            return Err(unexpected("DeleteMonitoredItems"));
        };
        self.subs
            .set
            .items_deleted(subscription_id, monitored_item_ids);
        Ok(response.results)
    }

    /// The subscriptions of this client as the server granted them.
    pub fn subscription_set(&self) -> &SubscriptionSet {
        &self.subs.set
    }

    /// Takes the subscription state (e.g. before dropping a dead connection), leaving none.
    pub fn take_subscription_set(&mut self) -> SubscriptionSet {
        self.subs.publish.clear();
        self.subs.republish.clear();
        std::mem::take(&mut self.subs.set)
    }

    /// How many Publish requests to keep outstanding (at least 1).
    pub fn set_publish_requests(&mut self, count: usize) {
        self.subs.target = count.max(1);
    }

    /// Builds the subscriptions of `set` again on this client's session, with the same
    /// settings, items and client handles; the new server ids replace the old ones. The
    /// resume path after a reconnect when TransferSubscriptions is not possible.
    pub async fn recreate_subscriptions(
        &mut self,
        set: SubscriptionSet,
    ) -> Result<(), ClientError> {
        let plan = set.recreate_requests();
        let mut set = set;
        for (old_id, settings, items) in plan {
            let request = set.create_request(&settings);
            let ServiceResponse::CreateSubscription(created) = self.request(request).await? else {
                return Err(unexpected("CreateSubscription"));
            };
            let specs: Vec<MonitoredItemSpec> =
                items.iter().map(|(_, spec)| spec.clone()).collect();
            let mut results = Vec::new();
            if !specs.is_empty() {
                let (mut request, _) = set.create_items_request(created.subscription_id, &specs);
                for (create, (handle, _)) in request.items_to_create.iter_mut().zip(&items) {
                    create.requested_parameters.client_handle = *handle;
                }
                let ServiceResponse::CreateMonitoredItems(response) = self.request(request).await?
                else {
                    return Err(unexpected("CreateMonitoredItems"));
                };
                results = response.results;
            }
            set.adopt(old_id, &created, &items, &results);
        }
        self.subs.set = set;
        Ok(())
    }

    fn publish_timeout_hint(&self) -> u32 {
        // Long enough for a keep-alive of the slowest subscription, with room for delays.
        let longest = self
            .subs
            .set
            .subscriptions
            .values()
            .map(|s| s.revised_publishing_interval_ms * f64::from(s.revised_max_keep_alive_count))
            .fold(0.0, f64::max);
        let wanted =
            Duration::from_secs_f64((longest * 2.0 / 1000.0).min(3_600.0)) + Duration::from_secs(5);
        let floor = self.connection.config().request_timeout;
        u32::try_from(wanted.max(floor).as_millis()).unwrap_or(u32::MAX)
    }

    /// The next data change, keep-alive, status change or lost message of any subscription.
    /// Keeps Publish requests outstanding and asks Republish for missing messages while it
    /// waits. Fails with Bad_NoSubscription when there is nothing to wait for.
    pub async fn next_notification(&mut self) -> Result<SubscriptionEvent, ClientError> {
        loop {
            if let Some(event) = self.subs.events.pop_front() {
                return Ok(event);
            }
            self.collect_publish_results()?;
            if !self.subs.events.is_empty() {
                continue;
            }
            if self.subs.set.is_empty() {
                return Err(ClientError::status(
                    StatusCode::BAD_NO_SUBSCRIPTION,
                    "no subscription to wait on: create one first",
                ));
            }
            while !self.subs.set.is_empty() && self.subs.publish.len() < self.subs.target {
                let request = PublishRequest {
                    request_header: RequestHeader {
                        timeout_hint: self.publish_timeout_hint(),
                        ..RequestHeader::default()
                    },
                    subscription_acknowledgements: self.subs.set.take_acknowledgements(),
                };
                let handle = self.connection.send(std::time::Instant::now(), request)?;
                self.subs.publish.insert(handle);
            }
            if self.subs.republish.is_empty()
                && let Some((subscription_id, sequence_number)) = self.subs.set.next_missing()
            {
                let request = RepublishRequest {
                    request_header: RequestHeader::default(),
                    subscription_id,
                    retransmit_sequence_number: sequence_number,
                };
                let handle = self.connection.send(std::time::Instant::now(), request)?;
                self.subs
                    .republish
                    .insert(handle, (subscription_id, sequence_number));
            }
            self.check_open()?;
            self.step().await?;
        }
    }

    /// Moves finished Publish / Republish requests from the completed table into events.
    fn collect_publish_results(&mut self) -> Result<(), ClientError> {
        let mut finished: Vec<u32> = self
            .completed
            .keys()
            .copied()
            .filter(|h| self.subs.publish.contains(h) || self.subs.republish.contains_key(h))
            .collect();
        // In the order they were sent (handles grow), so messages keep their order.
        finished.sort_unstable();
        let mut failure = None;
        for handle in finished {
            let Some(result) = self.completed.remove(&handle) else {
                continue;
            };
            if self.subs.publish.remove(&handle) {
                match result {
                    Ok(ServiceResponse::Publish(response)) => {
                        let events = self.subs.set.on_publish(&response);
                        self.push_events(events);
                    }
                    Ok(_) => failure = Some(unexpected("Publish")),
                    // The server held it past its timeout hint, or was busy: send another.
                    Err(StatusCode::BAD_TIMEOUT) => {}
                    Err(StatusCode::BAD_TOO_MANY_PUBLISH_REQUESTS) => {
                        self.subs.target = self.subs.publish.len().max(1);
                    }
                    Err(status) => {
                        failure = Some(ClientError::status(
                            status,
                            if status == StatusCode::BAD_NO_SUBSCRIPTION {
                                "Publish: the server has no subscription for this session \
                                 (expired or deleted); create or recreate them"
                            } else {
                                "Publish"
                            },
                        ));
                    }
                }
            } else if let Some((subscription_id, sequence_number)) =
                self.subs.republish.remove(&handle)
            {
                match result {
                    Ok(ServiceResponse::Republish(response)) => {
                        let events = self
                            .subs
                            .set
                            .on_republish(subscription_id, &response.notification_message);
                        self.push_events(events);
                    }
                    // Bad_MessageNotAvailable or other: the message is gone for good.
                    _ => self.push_events(vec![SubscriptionEvent::Lost {
                        subscription_id,
                        sequence_number,
                    }]),
                }
            }
        }
        match failure {
            // The subscriptions went away (transferred, expired, deleted) and the events that
            // said so are queued: those tell the caller, not the error.
            Some(error)
                if error.status_code() == StatusCode::BAD_NO_SUBSCRIPTION
                    && (self.subs.set.is_empty() || !self.subs.events.is_empty()) =>
            {
                Ok(())
            }
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    fn push_events(&mut self, events: Vec<SubscriptionEvent>) {
        for event in events {
            if self.subs.events.len() >= MAX_BUFFERED_EVENTS {
                self.subs.events.pop_front();
            }
            self.subs.events.push_back(event);
        }
    }
}

/// The first result of a one-item call, for callers that create a single item.
pub fn single_result(
    results: Vec<(u32, MonitoredItemCreateResult)>,
) -> Result<(u32, MonitoredItemCreateResult), ClientError> {
    first(results, "CreateMonitoredItems")
}
