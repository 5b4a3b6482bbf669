//! One subscription (OPC 10000-4 §5.13.1): its revised parameters, monitored items, counters
//! of the publishing cycle and the retransmission queue kept for Republish.

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use super::item::MonitoredItem;
use crate::encoding::{DateTime, NodeId};
use crate::services::{
    DataChangeNotification, MonitoredItemNotification, MonitoringMode, NotificationData,
    NotificationMessage, StatusChangeNotification,
};
use crate::types::StatusCode;

/// One subscription of a session.
#[derive(Debug)]
pub struct Subscription {
    /// Server-assigned id.
    pub id: u32,
    /// The session that owns it (SessionId, changed by TransferSubscriptions).
    pub session_id: NodeId,
    /// The user of the session that created it (transfers require the same user).
    pub user: Option<String>,
    /// Revised publishing interval in milliseconds.
    pub publishing_interval_ms: f64,
    /// Revised lifetime count (at least three times the keep-alive count).
    pub lifetime_count: u32,
    /// Revised keep-alive count.
    pub max_keep_alive_count: u32,
    /// Most item notifications in one message (never 0: the server's cap applies).
    pub max_notifications_per_publish: u32,
    /// Relative priority: a free Publish request goes to the highest.
    pub priority: u8,
    /// Whether notifications are published.
    pub publishing_enabled: bool,
    /// Monitored items by id.
    pub items: BTreeMap<u32, MonitoredItem>,
    /// When the next publishing cycle ends.
    pub next_publish: Instant,
    /// Publishing cycles without a message since the last one.
    pub keep_alive_counter: u32,
    /// Publishing cycles without an available Publish request.
    pub lifetime_counter: u32,
    /// A message is due but no Publish request was available.
    pub late: bool,
    /// The sequence number of the next NotificationMessage.
    pub next_sequence_number: u32,
    /// Messages sent and not yet acknowledged, oldest first.
    pub retransmission: VecDeque<NotificationMessage>,
    /// How many messages `retransmission` keeps.
    pub max_retransmission: usize,
}

impl Subscription {
    /// The publishing period.
    pub fn period(&self) -> Duration {
        Duration::from_secs_f64(self.publishing_interval_ms.max(1.0) / 1000.0)
    }

    /// The earliest sampling deadline of its items.
    pub fn next_sample(&self) -> Option<Instant> {
        self.items
            .values()
            .filter(|item| item.mode != MonitoringMode::Disabled)
            .map(|item| item.next_sample)
            .min()
    }

    /// The earliest instant the subscription needs attention.
    pub fn next_deadline(&self) -> Instant {
        match self.next_sample() {
            Some(sample) => sample.min(self.next_publish),
            None => self.next_publish,
        }
    }

    /// True when publishing is enabled and a reporting item has queued values.
    pub fn has_notifications(&self) -> bool {
        self.publishing_enabled
            && self
                .items
                .values()
                .any(|item| item.mode == MonitoringMode::Reporting && !item.queue.is_empty())
    }

    /// Takes the next sequence number (1 after 4294967295: 0 is never used, §7.25).
    fn take_sequence_number(&mut self) -> u32 {
        let number = self.next_sequence_number;
        self.next_sequence_number = number.checked_add(1).unwrap_or(1);
        number
    }

    /// Builds the next NotificationMessage from the reporting items' queues (oldest first, at
    /// most `max_notifications_per_publish` values) and keeps it for Republish. Returns the
    /// message and whether values are left.
    pub fn take_notification(&mut self, publish_time: DateTime) -> (NotificationMessage, bool) {
        let limit = self.max_notifications_per_publish as usize;
        let mut notifications = Vec::new();
        let mut more = false;
        for item in self.items.values_mut() {
            if item.mode != MonitoringMode::Reporting {
                continue;
            }
            while let Some(value) = item.queue.pop_front() {
                if notifications.len() >= limit {
                    item.queue.push_front(value);
                    more = true;
                    break;
                }
                notifications.push(MonitoredItemNotification {
                    client_handle: item.client_handle,
                    value,
                });
            }
            if more {
                break;
            }
        }
        let data = NotificationData::DataChange(DataChangeNotification {
            monitored_items: notifications,
            diagnostic_infos: Vec::new(),
        });
        let message = NotificationMessage {
            sequence_number: self.take_sequence_number(),
            publish_time,
            notification_data: vec![data.to_extension_object()],
        };
        self.remember(message.clone());
        (message, more)
    }

    /// A keep-alive: no notifications, the sequence number the next message will carry
    /// (not consumed, §7.25).
    pub fn keep_alive(&self, publish_time: DateTime) -> NotificationMessage {
        NotificationMessage {
            sequence_number: self.next_sequence_number,
            publish_time,
            notification_data: Vec::new(),
        }
    }

    /// A StatusChangeNotification message (e.g. Bad_Timeout when the lifetime expired).
    pub fn status_change(
        &mut self,
        status: StatusCode,
        publish_time: DateTime,
    ) -> NotificationMessage {
        let data = NotificationData::StatusChange(StatusChangeNotification {
            status,
            diagnostic_info: Default::default(),
        });
        NotificationMessage {
            sequence_number: self.take_sequence_number(),
            publish_time,
            notification_data: vec![data.to_extension_object()],
        }
    }

    fn remember(&mut self, message: NotificationMessage) {
        if self.retransmission.len() >= self.max_retransmission {
            self.retransmission.pop_front();
        }
        self.retransmission.push_back(message);
    }

    /// Removes an acknowledged message: Good, or Bad_SequenceNumberUnknown.
    pub fn acknowledge(&mut self, sequence_number: u32) -> StatusCode {
        match self
            .retransmission
            .iter()
            .position(|m| m.sequence_number == sequence_number)
        {
            Some(index) => {
                self.retransmission.remove(index);
                StatusCode::GOOD
            }
            None => StatusCode::BAD_SEQUENCE_NUMBER_UNKNOWN,
        }
    }

    /// The sequence numbers available for Republish.
    pub fn available_sequence_numbers(&self) -> Vec<u32> {
        self.retransmission
            .iter()
            .map(|m| m.sequence_number)
            .collect()
    }
}
