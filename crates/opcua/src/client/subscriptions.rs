//! The client side of subscriptions, sans-IO: what was asked for (parameters and monitored
//! items, by client handle), what the server granted, the sequence numbers received, the
//! acknowledgements owed and the gaps to ask Republish for. It turns PublishResponses into
//! [`SubscriptionEvent`]s.
//!
//! [`SubscriptionSet`] holds everything needed to build the same subscriptions again on
//! another session (after a reconnect): [`SubscriptionSet::recreate_requests`] gives the
//! requests, [`SubscriptionSet::adopt`] records the new server ids.
//!
//! ```
//! use buildwire_opcua::client::subscriptions::{SubscriptionSet, SubscriptionSettings};
//!
//! let mut set = SubscriptionSet::default();
//! let request = set.create_request(&SubscriptionSettings::default());
//! assert_eq!(request.requested_publishing_interval, 1000.0);
//! assert!(set.is_empty());
//! ```

use std::collections::{BTreeMap, VecDeque};

use crate::encoding::{DataValue, NodeId, QualifiedName, UaString};
use crate::services::{
    AttributeId, CreateMonitoredItemsRequest, CreateSubscriptionRequest,
    CreateSubscriptionResponse, DataChangeFilter, MonitoredItemCreateRequest,
    MonitoredItemCreateResult, MonitoringMode, MonitoringParameters, NotificationData,
    NotificationMessage, PublishResponse, ReadValueId, RequestHeader, SubscriptionAcknowledgement,
    TimestampsToReturn,
};
use crate::types::StatusCode;

/// Most sequence numbers one gap asks Republish for; older ones are reported lost.
pub const MAX_REPUBLISH_PER_GAP: u32 = 64;
/// Most acknowledgements carried by one Publish request.
pub const MAX_ACKS_PER_PUBLISH: usize = 256;

/// The requested parameters of a subscription.
#[derive(Clone, Debug, PartialEq)]
pub struct SubscriptionSettings {
    /// Publishing interval in milliseconds.
    pub publishing_interval_ms: f64,
    /// Lifetime count (the server raises it to three keep-alive counts).
    pub lifetime_count: u32,
    /// Keep-alive count.
    pub max_keep_alive_count: u32,
    /// Most notifications per Publish response (0: no limit).
    pub max_notifications_per_publish: u32,
    /// Priority among the session's subscriptions.
    pub priority: u8,
    /// Whether publishing starts enabled.
    pub publishing_enabled: bool,
}

impl Default for SubscriptionSettings {
    fn default() -> Self {
        Self {
            publishing_interval_ms: 1000.0,
            lifetime_count: 60,
            max_keep_alive_count: 10,
            max_notifications_per_publish: 0,
            priority: 0,
            publishing_enabled: true,
        }
    }
}

/// One item to monitor, as the client asks for it.
#[derive(Clone, Debug, PartialEq)]
pub struct MonitoredItemSpec {
    /// The node.
    pub node_id: NodeId,
    /// The attribute (Value by default).
    pub attribute_id: u32,
    /// Sampling interval in milliseconds (-1: the publishing interval).
    pub sampling_interval_ms: f64,
    /// Queue size (0 and 1: latest value only).
    pub queue_size: u32,
    /// Discard policy on overflow.
    pub discard_oldest: bool,
    /// A data-change filter (trigger and deadband), if any.
    pub filter: Option<DataChangeFilter>,
    /// Initial monitoring mode.
    pub mode: MonitoringMode,
}

impl MonitoredItemSpec {
    /// The Value of `node_id`, sampled at the publishing interval, latest value only.
    pub fn value(node_id: NodeId) -> Self {
        Self {
            node_id,
            attribute_id: AttributeId::Value.id(),
            sampling_interval_ms: -1.0,
            queue_size: 1,
            discard_oldest: true,
            filter: None,
            mode: MonitoringMode::Reporting,
        }
    }

    fn create_request(&self, client_handle: u32) -> MonitoredItemCreateRequest {
        MonitoredItemCreateRequest {
            item_to_monitor: ReadValueId {
                node_id: self.node_id.clone(),
                attribute_id: self.attribute_id,
                index_range: UaString::NULL,
                data_encoding: QualifiedName::default(),
            },
            monitoring_mode: self.mode,
            requested_parameters: MonitoringParameters {
                client_handle,
                sampling_interval: self.sampling_interval_ms,
                filter: self
                    .filter
                    .map(|f| f.to_extension_object())
                    .unwrap_or_default(),
                queue_size: self.queue_size,
                discard_oldest: self.discard_oldest,
            },
        }
    }
}

/// A monitored item as created on the server.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientMonitoredItem {
    /// What was asked for.
    pub spec: MonitoredItemSpec,
    /// The server's id for it.
    pub monitored_item_id: u32,
    /// Sampling interval granted.
    pub revised_sampling_interval_ms: f64,
    /// Queue size granted.
    pub revised_queue_size: u32,
}

/// A subscription as created on the server.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientSubscription {
    /// What was asked for.
    pub settings: SubscriptionSettings,
    /// The server's id.
    pub subscription_id: u32,
    /// Publishing interval granted.
    pub revised_publishing_interval_ms: f64,
    /// Lifetime count granted.
    pub revised_lifetime_count: u32,
    /// Keep-alive count granted.
    pub revised_max_keep_alive_count: u32,
    /// Items by client handle.
    pub items: BTreeMap<u32, ClientMonitoredItem>,
    /// The last sequence number received (0: none yet).
    pub last_sequence_number: u32,
}

/// What a Publish (or Republish) response brought.
#[derive(Clone, Debug, PartialEq)]
pub enum SubscriptionEvent {
    /// A new value of a monitored item.
    DataChange {
        /// The subscription.
        subscription_id: u32,
        /// The item's client handle.
        client_handle: u32,
        /// The item's node (None if the handle is unknown to this set).
        node_id: Option<NodeId>,
        /// The value, status and timestamps.
        value: DataValue,
    },
    /// A keep-alive: the subscription is alive and has nothing new.
    KeepAlive {
        /// The subscription.
        subscription_id: u32,
        /// The sequence number the next message will carry.
        next_sequence_number: u32,
    },
    /// The server changed the subscription's state (Bad_Timeout: it expired and is gone;
    /// Good_SubscriptionTransferred: another session took it).
    StatusChange {
        /// The subscription.
        subscription_id: u32,
        /// The new status.
        status: StatusCode,
    },
    /// A message that could not be recovered by Republish.
    Lost {
        /// The subscription.
        subscription_id: u32,
        /// Its sequence number.
        sequence_number: u32,
    },
}

/// One subscription to build again: its old server id, its settings and its items with their
/// client handles.
pub type RecreatePlan = (u32, SubscriptionSettings, Vec<(u32, MonitoredItemSpec)>);

/// The subscriptions of one client session.
#[derive(Clone, Debug, Default)]
pub struct SubscriptionSet {
    /// By server subscription id.
    pub subscriptions: BTreeMap<u32, ClientSubscription>,
    acknowledgements: VecDeque<SubscriptionAcknowledgement>,
    /// Gaps to ask Republish for: (subscription, sequence number).
    missing: VecDeque<(u32, u32)>,
    next_client_handle: u32,
}

/// The next sequence number after `number` (1 after 4294967295, §7.25).
fn next_number(number: u32) -> u32 {
    number.checked_add(1).unwrap_or(1)
}

impl SubscriptionSet {
    /// True without subscriptions.
    pub fn is_empty(&self) -> bool {
        self.subscriptions.is_empty()
    }

    /// The CreateSubscription request for `settings`.
    pub fn create_request(&self, settings: &SubscriptionSettings) -> CreateSubscriptionRequest {
        CreateSubscriptionRequest {
            request_header: RequestHeader::default(),
            requested_publishing_interval: settings.publishing_interval_ms,
            requested_lifetime_count: settings.lifetime_count,
            requested_max_keep_alive_count: settings.max_keep_alive_count,
            max_notifications_per_publish: settings.max_notifications_per_publish,
            publishing_enabled: settings.publishing_enabled,
            priority: settings.priority,
        }
    }

    /// Records a created subscription.
    pub fn created(
        &mut self,
        settings: SubscriptionSettings,
        response: &CreateSubscriptionResponse,
    ) {
        self.subscriptions.insert(
            response.subscription_id,
            ClientSubscription {
                settings,
                subscription_id: response.subscription_id,
                revised_publishing_interval_ms: response.revised_publishing_interval,
                revised_lifetime_count: response.revised_lifetime_count,
                revised_max_keep_alive_count: response.revised_max_keep_alive_count,
                items: BTreeMap::new(),
                last_sequence_number: 0,
            },
        );
    }

    /// Forgets a subscription (deleted, expired).
    pub fn remove(&mut self, subscription_id: u32) -> Option<ClientSubscription> {
        self.acknowledgements
            .retain(|a| a.subscription_id != subscription_id);
        self.missing.retain(|(id, _)| *id != subscription_id);
        self.subscriptions.remove(&subscription_id)
    }

    /// A fresh client handle (unique within this set).
    pub fn allocate_client_handle(&mut self) -> u32 {
        self.next_client_handle = self.next_client_handle.wrapping_add(1).max(1);
        self.next_client_handle
    }

    /// The CreateMonitoredItems request for `specs` (with fresh client handles, returned in
    /// order).
    pub fn create_items_request(
        &mut self,
        subscription_id: u32,
        specs: &[MonitoredItemSpec],
    ) -> (CreateMonitoredItemsRequest, Vec<u32>) {
        let handles: Vec<u32> = specs
            .iter()
            .map(|_| self.allocate_client_handle())
            .collect();
        let request = CreateMonitoredItemsRequest {
            request_header: RequestHeader::default(),
            subscription_id,
            timestamps_to_return: TimestampsToReturn::Both,
            items_to_create: specs
                .iter()
                .zip(&handles)
                .map(|(spec, handle)| spec.create_request(*handle))
                .collect(),
        };
        (request, handles)
    }

    /// Records the created items (those with a Good result).
    pub fn items_created(
        &mut self,
        subscription_id: u32,
        specs: &[MonitoredItemSpec],
        handles: &[u32],
        results: &[MonitoredItemCreateResult],
    ) {
        let Some(subscription) = self.subscriptions.get_mut(&subscription_id) else {
            return;
        };
        for ((spec, handle), result) in specs.iter().zip(handles).zip(results) {
            if result.status_code.is_good() {
                subscription.items.insert(
                    *handle,
                    ClientMonitoredItem {
                        spec: spec.clone(),
                        monitored_item_id: result.monitored_item_id,
                        revised_sampling_interval_ms: result.revised_sampling_interval,
                        revised_queue_size: result.revised_queue_size,
                    },
                );
            }
        }
    }

    /// Forgets deleted items (by server item id).
    pub fn items_deleted(&mut self, subscription_id: u32, item_ids: &[u32]) {
        if let Some(subscription) = self.subscriptions.get_mut(&subscription_id) {
            subscription
                .items
                .retain(|_, item| !item_ids.contains(&item.monitored_item_id));
        }
    }

    /// Acknowledgements for the next Publish request (taken: each is sent once).
    pub fn take_acknowledgements(&mut self) -> Vec<SubscriptionAcknowledgement> {
        let count = self.acknowledgements.len().min(MAX_ACKS_PER_PUBLISH);
        self.acknowledgements.drain(..count).collect()
    }

    /// The next (subscription, sequence number) to ask Republish for.
    pub fn next_missing(&mut self) -> Option<(u32, u32)> {
        self.missing.pop_front()
    }

    /// Handles a PublishResponse: events in order, acknowledgements owed, gaps noted.
    pub fn on_publish(&mut self, response: &PublishResponse) -> Vec<SubscriptionEvent> {
        self.on_message(
            response.subscription_id,
            &response.notification_message,
            false,
        )
    }

    /// Handles a RepublishResponse's message: its events (no new gap detection).
    pub fn on_republish(
        &mut self,
        subscription_id: u32,
        message: &NotificationMessage,
    ) -> Vec<SubscriptionEvent> {
        self.on_message(subscription_id, message, true)
    }

    fn on_message(
        &mut self,
        subscription_id: u32,
        message: &NotificationMessage,
        republished: bool,
    ) -> Vec<SubscriptionEvent> {
        let mut events = Vec::new();
        let number = message.sequence_number;
        let subscription = self.subscriptions.get_mut(&subscription_id);
        if message.is_keep_alive() {
            if let Some(subscription) = subscription
                && !republished
            {
                // A keep-alive carries the next number: anything between was lost.
                let last = subscription.last_sequence_number;
                if last != 0 && number != next_number(last) {
                    note_gap(
                        &mut self.missing,
                        &mut events,
                        subscription_id,
                        last,
                        number,
                    );
                    subscription.last_sequence_number = number.wrapping_sub(1).max(1);
                }
            }
            events.push(SubscriptionEvent::KeepAlive {
                subscription_id,
                next_sequence_number: number,
            });
            return events;
        }
        if self.acknowledgements.len() < 4 * MAX_ACKS_PER_PUBLISH {
            self.acknowledgements
                .push_back(SubscriptionAcknowledgement {
                    subscription_id,
                    sequence_number: number,
                });
        }
        let items = subscription.as_ref().map(|s| &s.items);
        let node_of = |handle: u32| {
            items
                .and_then(|items| items.get(&handle))
                .map(|i| i.spec.node_id.clone())
        };
        for notification in message.notifications() {
            match notification {
                NotificationData::DataChange(change) => {
                    for item in change.monitored_items {
                        events.push(SubscriptionEvent::DataChange {
                            subscription_id,
                            client_handle: item.client_handle,
                            node_id: node_of(item.client_handle),
                            value: item.value,
                        });
                    }
                }
                NotificationData::StatusChange(status) => {
                    events.push(SubscriptionEvent::StatusChange {
                        subscription_id,
                        status: status.status,
                    });
                }
                NotificationData::Events => {}
            }
        }
        if let Some(subscription) = self.subscriptions.get_mut(&subscription_id)
            && !republished
        {
            let last = subscription.last_sequence_number;
            if last != 0 && number != next_number(last) && number > last {
                note_gap(
                    &mut self.missing,
                    &mut events,
                    subscription_id,
                    last,
                    number,
                );
            }
            if last == 0 || number > last || (last == u32::MAX && number == 1) {
                subscription.last_sequence_number = number;
            }
        }
        let gone = events.iter().any(|e| {
            matches!(e, SubscriptionEvent::StatusChange { status, .. }
                if *status == StatusCode::BAD_TIMEOUT
                    || *status == StatusCode::GOOD_SUBSCRIPTION_TRANSFERRED)
        });
        if gone {
            self.remove(subscription_id);
        }
        events
    }

    /// The subscriptions and items to build again on a new session, in order.
    pub fn recreate_requests(&self) -> Vec<RecreatePlan> {
        self.subscriptions
            .values()
            .map(|s| {
                (
                    s.subscription_id,
                    s.settings.clone(),
                    s.items
                        .iter()
                        .map(|(handle, item)| (*handle, item.spec.clone()))
                        .collect(),
                )
            })
            .collect()
    }

    /// Replaces an old subscription by its re-created one, keeping the client handles.
    pub fn adopt(
        &mut self,
        old_subscription_id: u32,
        response: &CreateSubscriptionResponse,
        items: &[(u32, MonitoredItemSpec)],
        results: &[MonitoredItemCreateResult],
    ) {
        let Some(old) = self.remove(old_subscription_id) else {
            return;
        };
        self.created(old.settings, response);
        let (handles, specs): (Vec<u32>, Vec<MonitoredItemSpec>) = items.iter().cloned().unzip();
        self.items_created(response.subscription_id, &specs, &handles, results);
    }
}

/// Records the numbers between `last` and `number` as missing (the newest
/// MAX_REPUBLISH_PER_GAP; older ones are reported lost at once).
fn note_gap(
    missing: &mut VecDeque<(u32, u32)>,
    events: &mut Vec<SubscriptionEvent>,
    subscription_id: u32,
    last: u32,
    number: u32,
) {
    let first = next_number(last);
    if number <= first {
        return;
    }
    let count = number - first;
    let skipped = count.saturating_sub(MAX_REPUBLISH_PER_GAP);
    for lost in first..first + skipped.min(16) {
        events.push(SubscriptionEvent::Lost {
            subscription_id,
            sequence_number: lost,
        });
    }
    for wanted in first + skipped..number {
        if missing.len() < 4 * MAX_REPUBLISH_PER_GAP as usize {
            missing.push_back((subscription_id, wanted));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::{DateTime, Variant};
    use crate::services::{
        DataChangeNotification, MonitoredItemNotification, StatusChangeNotification,
    };

    fn set_with_one() -> SubscriptionSet {
        let mut set = SubscriptionSet::default();
        set.created(
            SubscriptionSettings::default(),
            &CreateSubscriptionResponse {
                subscription_id: 9,
                revised_publishing_interval: 100.0,
                revised_lifetime_count: 30,
                revised_max_keep_alive_count: 10,
                ..Default::default()
            },
        );
        let specs = [MonitoredItemSpec::value(NodeId::string(1, "A"))];
        let (_, handles) = set.create_items_request(9, &specs);
        set.items_created(
            9,
            &specs,
            &handles,
            &[MonitoredItemCreateResult {
                monitored_item_id: 4,
                ..Default::default()
            }],
        );
        set
    }

    fn data(sequence_number: u32, value: f64) -> PublishResponse {
        let change = NotificationData::DataChange(DataChangeNotification {
            monitored_items: vec![MonitoredItemNotification {
                client_handle: 1,
                value: DataValue {
                    value: Some(Variant::Double(value)),
                    ..DataValue::default()
                },
            }],
            diagnostic_infos: vec![],
        });
        PublishResponse {
            subscription_id: 9,
            notification_message: NotificationMessage {
                sequence_number,
                publish_time: DateTime::MIN,
                notification_data: vec![change.to_extension_object()],
            },
            ..Default::default()
        }
    }

    #[test]
    fn data_changes_are_acknowledged_and_gaps_noted() {
        let mut set = set_with_one();
        let events = set.on_publish(&data(1, 1.0));
        assert_eq!(
            events,
            [SubscriptionEvent::DataChange {
                subscription_id: 9,
                client_handle: 1,
                node_id: Some(NodeId::string(1, "A")),
                value: DataValue {
                    value: Some(Variant::Double(1.0)),
                    ..DataValue::default()
                },
            }]
        );
        assert_eq!(
            set.take_acknowledgements(),
            [SubscriptionAcknowledgement {
                subscription_id: 9,
                sequence_number: 1
            }]
        );
        assert!(set.take_acknowledgements().is_empty());
        // 2 and 3 went missing.
        set.on_publish(&data(4, 4.0));
        assert_eq!(set.next_missing(), Some((9, 2)));
        assert_eq!(set.next_missing(), Some((9, 3)));
        assert_eq!(set.next_missing(), None);
        // A keep-alive announcing 6 after 4: 5 is missing.
        let mut keep_alive = data(6, 0.0);
        keep_alive.notification_message.notification_data.clear();
        let events = set.on_publish(&keep_alive);
        assert_eq!(
            events,
            [SubscriptionEvent::KeepAlive {
                subscription_id: 9,
                next_sequence_number: 6
            }]
        );
        assert_eq!(set.next_missing(), Some((9, 5)));
    }

    #[test]
    fn timeout_status_removes_the_subscription() {
        let mut set = set_with_one();
        let status = NotificationData::StatusChange(StatusChangeNotification {
            status: StatusCode::BAD_TIMEOUT,
            diagnostic_info: Default::default(),
        });
        let mut response = data(1, 0.0);
        response.notification_message.notification_data = vec![status.to_extension_object()];
        let events = set.on_publish(&response);
        assert_eq!(
            events,
            [SubscriptionEvent::StatusChange {
                subscription_id: 9,
                status: StatusCode::BAD_TIMEOUT
            }]
        );
        assert!(set.is_empty());
    }

    #[test]
    fn recreate_keeps_client_handles() {
        let mut set = set_with_one();
        let plan = set.recreate_requests();
        assert_eq!(plan.len(), 1);
        let (old, _, items) = &plan[0];
        assert_eq!(*old, 9);
        assert_eq!(items[0].0, 1);
        set.adopt(
            9,
            &CreateSubscriptionResponse {
                subscription_id: 20,
                ..Default::default()
            },
            items,
            &[MonitoredItemCreateResult {
                monitored_item_id: 77,
                ..Default::default()
            }],
        );
        assert!(!set.subscriptions.contains_key(&9));
        assert_eq!(set.subscriptions[&20].items[&1].monitored_item_id, 77);
    }
}
