//! The sans-IO subscription engine (OPC 10000-4 §5.12, §5.13): per-session subscriptions with
//! their monitored items, the queue of Publish requests of each session, publishing cycles,
//! keep-alives, lifetime expiry, sequence numbers and the retransmission queue.
//!
//! Time is passed in; [`SubscriptionEngine::next_deadline_for_channel`] tells a connection
//! when to call back. A Publish request is answered later, when a subscription of its
//! session has notifications or a keep-alive is due: the answer goes to the *outbox* of the
//! secure channel the request came on, and that channel's
//! [`ServerConnection`](super::ServerConnection) drains it. Subscriptions of sessions whose
//! channel closed (no connection drives them) are ticked by `Server::handle_timeout`, so
//! their lifetime still runs out.
//!
//! Every resource is bounded by [`SubscriptionLimits`]: subscriptions per session and per
//! server, monitored items per subscription and per server, queue sizes, Publish requests
//! queued per session, messages kept for Republish.
//!
//! ```
//! use std::time::{Duration, Instant};
//! use buildwire_opcua::server::subscriptions::SubscriptionLimits;
//!
//! let limits = SubscriptionLimits::default();
//! // A 0 ms request is raised to the fastest interval, the lifetime to 3x the keep-alive.
//! let revised = limits.revise(0.0, 5, 10);
//! assert_eq!(revised, (limits.min_publishing_interval_ms, 30, 10));
//! ```

pub mod item;
pub mod services;
pub mod subscription;

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use crate::encoding::{DataValue, DateTime, NodeId};
use crate::services::{
    AttributeId, PublishResponse, RequestHeader, ResponseHeader, ServiceFault, ServiceResponse,
    TimestampsToReturn,
};
use crate::types::StatusCode;

pub use item::{MonitoredItem, OVERFLOW_INFO_BITS};
pub use subscription::Subscription;

use super::server_state::Server;

/// Bounds on subscriptions and monitored items (per session and per server) and the ranges
/// parameters are revised into.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SubscriptionLimits {
    /// Most subscriptions on the server (Bad_TooManySubscriptions beyond).
    pub max_subscriptions: usize,
    /// Most subscriptions of one session (Bad_TooManySubscriptions beyond).
    pub max_subscriptions_per_session: usize,
    /// Most monitored items on the server (Bad_TooManyMonitoredItems beyond).
    pub max_monitored_items: usize,
    /// Most monitored items in one subscription (Bad_TooManyMonitoredItems beyond).
    pub max_monitored_items_per_subscription: usize,
    /// Largest queue size granted.
    pub max_queue_size: u32,
    /// Most Publish requests a session may have waiting (Bad_TooManyPublishRequests beyond).
    pub max_publish_requests_per_session: usize,
    /// Most messages a subscription keeps for Republish.
    pub max_retransmission_queue: usize,
    /// Most item notifications in one NotificationMessage.
    pub max_notifications_per_publish: u32,
    /// Fastest publishing interval, in milliseconds.
    pub min_publishing_interval_ms: f64,
    /// Slowest publishing interval, in milliseconds.
    pub max_publishing_interval_ms: f64,
    /// Fastest sampling interval, in milliseconds.
    pub min_sampling_interval_ms: f64,
    /// Slowest sampling interval, in milliseconds.
    pub max_sampling_interval_ms: f64,
    /// Largest keep-alive count.
    pub max_keep_alive_count: u32,
    /// Largest lifetime count.
    pub max_lifetime_count: u32,
}

impl Default for SubscriptionLimits {
    fn default() -> Self {
        Self {
            max_subscriptions: 1_000,
            max_subscriptions_per_session: 100,
            max_monitored_items: 100_000,
            max_monitored_items_per_subscription: 20_000,
            max_queue_size: 1_000,
            max_publish_requests_per_session: 20,
            max_retransmission_queue: 100,
            max_notifications_per_publish: 10_000,
            min_publishing_interval_ms: 10.0,
            max_publishing_interval_ms: 3_600_000.0,
            min_sampling_interval_ms: 10.0,
            max_sampling_interval_ms: 3_600_000.0,
            max_keep_alive_count: 10_000,
            max_lifetime_count: 300_000,
        }
    }
}

/// Most missed publishing cycles one tick runs for a subscription.
const MAX_CATCH_UP: u32 = 1_000;

/// Keep-alive count granted when the client asks for 0.
pub const DEFAULT_KEEP_ALIVE_COUNT: u32 = 10;

impl SubscriptionLimits {
    /// Revised (publishing interval, lifetime count, keep-alive count): the interval into its
    /// range (NaN or <= 0: the fastest), the keep-alive count into 1..=max (0: 10), and the
    /// lifetime count to at least three keep-alive periods (OPC 10000-4 §5.13.2.2).
    pub fn revise(&self, interval_ms: f64, lifetime: u32, keep_alive: u32) -> (f64, u32, u32) {
        let interval = if interval_ms.is_nan() || interval_ms <= 0.0 {
            self.min_publishing_interval_ms
        } else {
            interval_ms.clamp(
                self.min_publishing_interval_ms,
                self.max_publishing_interval_ms,
            )
        };
        let keep_alive = match keep_alive {
            0 => DEFAULT_KEEP_ALIVE_COUNT,
            n => n,
        }
        .clamp(1, self.max_keep_alive_count);
        let lifetime = lifetime
            .min(self.max_lifetime_count)
            .max(keep_alive.saturating_mul(3));
        (interval, lifetime, keep_alive)
    }

    /// Revised sampling interval: negative or NaN means the publishing interval (§7.21),
    /// otherwise clamped into the supported range (0: the fastest).
    pub fn revise_sampling(&self, requested_ms: f64, publishing_interval_ms: f64) -> f64 {
        let wanted = if requested_ms.is_nan() || requested_ms < 0.0 {
            publishing_interval_ms
        } else {
            requested_ms
        };
        wanted.clamp(self.min_sampling_interval_ms, self.max_sampling_interval_ms)
    }

    /// Revised queue size: 0 and 1 keep one value; at most `max_queue_size`.
    pub fn revise_queue_size(&self, requested: u32) -> u32 {
        requested.clamp(1, self.max_queue_size.max(1))
    }
}

/// A Publish request waiting for a message.
#[derive(Debug)]
struct PendingPublish {
    channel_id: u32,
    request_id: u32,
    header: RequestHeader,
    /// Results of the request's acknowledgements.
    results: Vec<StatusCode>,
    /// When the client stops waiting (its timeout hint), if it gave one.
    deadline: Option<Instant>,
}

/// A response ready for a secure channel: request id, the request's header and the encoded
/// message.
#[derive(Debug)]
pub struct ReadyResponse {
    /// The request id of the Publish request answered.
    pub request_id: u32,
    /// The header of that request.
    pub request_header: RequestHeader,
    /// The encoded response (type id and body).
    pub body: Vec<u8>,
}

/// Per-session state of the engine.
#[derive(Debug, Default)]
struct SessionQueue {
    /// The channel the session last used for a subscription service (None: closed).
    channel_id: Option<u32>,
    publish: VecDeque<PendingPublish>,
    /// Messages of subscriptions that are gone (lifetime expired, transferred away), sent
    /// with the next Publish requests.
    status_messages: VecDeque<(u32, DateTime, NotificationMessageBox)>,
}

type NotificationMessageBox = Box<crate::services::NotificationMessage>;

/// All subscriptions of a server.
#[derive(Debug, Default)]
pub struct SubscriptionEngine {
    /// Subscriptions by id.
    pub subscriptions: HashMap<u32, Subscription>,
    sessions: HashMap<NodeId, SessionQueue>,
    outbox: HashMap<u32, Vec<ReadyResponse>>,
    next_subscription_id: u32,
    next_item_id: u32,
    total_items: usize,
}

/// Which subscriptions a tick serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TickScope {
    /// Those of sessions last seen on this secure channel.
    Channel(u32),
    /// Those of sessions with no open channel: they sample and count their lifetimes as
    /// usual, and their notifications wait in the item queues for the session's next
    /// channel.
    Orphans,
}

impl SubscriptionEngine {
    /// Number of monitored items on the server.
    pub fn monitored_item_count(&self) -> usize {
        self.total_items
    }

    /// Number of subscriptions on the server.
    pub fn len(&self) -> usize {
        self.subscriptions.len()
    }

    /// True without subscriptions.
    pub fn is_empty(&self) -> bool {
        self.subscriptions.is_empty()
    }

    /// Ids of the subscriptions of a session.
    pub fn session_subscriptions(&self, session_id: &NodeId) -> Vec<u32> {
        let mut ids: Vec<u32> = self
            .subscriptions
            .values()
            .filter(|s| s.session_id == *session_id)
            .map(|s| s.id)
            .collect();
        ids.sort_unstable();
        ids
    }

    fn allocate_subscription_id(&mut self) -> u32 {
        loop {
            self.next_subscription_id = self.next_subscription_id.wrapping_add(1).max(1);
            if !self.subscriptions.contains_key(&self.next_subscription_id) {
                return self.next_subscription_id;
            }
        }
    }

    fn allocate_item_id(&mut self) -> u32 {
        self.next_item_id = self.next_item_id.wrapping_add(1).max(1);
        self.next_item_id
    }

    /// Notes that `session_id` uses `channel_id`.
    fn bind(&mut self, session_id: &NodeId, channel_id: u32) {
        self.sessions
            .entry(session_id.clone())
            .or_default()
            .channel_id = Some(channel_id);
    }

    fn channel_of(&self, session_id: &NodeId) -> Option<u32> {
        self.sessions.get(session_id).and_then(|s| s.channel_id)
    }

    /// When a connection on `channel_id` must call back: the earliest sampling or publishing
    /// deadline of its sessions' subscriptions, the earliest Publish timeout, or now when
    /// responses wait in its outbox.
    pub fn next_deadline_for_channel(&self, channel_id: u32, now: Instant) -> Option<Instant> {
        if self.outbox.get(&channel_id).is_some_and(|o| !o.is_empty()) {
            return Some(now);
        }
        if self.sessions.is_empty() {
            return None;
        }
        let subscriptions = self
            .subscriptions
            .values()
            .filter(|s| self.channel_of(&s.session_id) == Some(channel_id))
            .map(Subscription::next_deadline);
        let publish = self
            .sessions
            .values()
            .filter(|s| s.channel_id == Some(channel_id))
            .flat_map(|s| s.publish.iter().filter_map(|p| p.deadline));
        subscriptions.chain(publish).min()
    }

    /// The earliest deadline of subscriptions whose session has no open channel.
    pub fn next_orphan_deadline(&self) -> Option<Instant> {
        self.subscriptions
            .values()
            .filter(|s| self.channel_of(&s.session_id).is_none())
            .flat_map(|s| {
                let samples = s
                    .items
                    .values()
                    .filter(|item| item.mode != crate::services::MonitoringMode::Disabled)
                    .map(|item| item.next_sample);
                std::iter::once(s.next_publish).chain(samples)
            })
            .min()
    }

    /// Responses ready for `channel_id`, in order.
    pub fn take_outbox(&mut self, channel_id: u32) -> Vec<ReadyResponse> {
        self.outbox.remove(&channel_id).unwrap_or_default()
    }

    /// Forgets a closed channel: its waiting Publish requests and undelivered responses are
    /// dropped, and its sessions' subscriptions become orphans until the session is used on
    /// another channel.
    pub fn release_channel(&mut self, channel_id: u32) {
        self.outbox.remove(&channel_id);
        for session in self.sessions.values_mut() {
            session.publish.retain(|p| p.channel_id != channel_id);
            if session.channel_id == Some(channel_id) {
                session.channel_id = None;
            }
        }
        let subscriptions = &self.subscriptions;
        self.sessions.retain(|session_id, queue| {
            !queue.status_messages.is_empty()
                || !queue.publish.is_empty()
                || subscriptions.values().any(|s| s.session_id == *session_id)
        });
    }

    /// Deletes every subscription of a session (CloseSession with deleteSubscriptions).
    pub fn delete_session(&mut self, session_id: &NodeId) {
        for id in self.session_subscriptions(session_id) {
            self.remove_subscription(id);
        }
        self.sessions.remove(session_id);
    }

    /// Removes a subscription and its items.
    pub(crate) fn remove_subscription(&mut self, id: u32) -> Option<Subscription> {
        let subscription = self.subscriptions.remove(&id)?;
        self.total_items = self.total_items.saturating_sub(subscription.items.len());
        Some(subscription)
    }

    /// Queues a response that was answered late (an external method call) for its channel.
    pub(crate) fn push_ready(&mut self, channel_id: u32, response: ReadyResponse) {
        self.outbox.entry(channel_id).or_default().push(response);
    }

    fn push_response(&mut self, publish: PendingPublish, response: ServiceResponse) {
        self.outbox
            .entry(publish.channel_id)
            .or_default()
            .push(ReadyResponse {
                request_id: publish.request_id,
                request_header: publish.header,
                body: response.encode_message(),
            });
    }

    /// Answers waiting Publish requests of `session_id` with what is ready: messages of
    /// gone subscriptions first, then late subscriptions by priority.
    fn serve_waiting(&mut self, session_id: &NodeId, wall_now: DateTime) {
        loop {
            let Some(queue) = self.sessions.get_mut(session_id) else {
                return;
            };
            if queue.publish.is_empty() {
                return;
            }
            if let Some((subscription_id, _, message)) = queue.status_messages.pop_front() {
                let Some(publish) = queue.publish.pop_front() else {
                    return;
                };
                let response = publish_response(
                    &publish,
                    subscription_id,
                    *message,
                    Vec::new(),
                    false,
                    wall_now,
                );
                self.push_response(publish, response);
                continue;
            }
            let late = self
                .subscriptions
                .values()
                .filter(|s| s.session_id == *session_id && s.late)
                .max_by_key(|s| (s.priority, std::cmp::Reverse(s.id)))
                .map(|s| s.id);
            let Some(id) = late else {
                return;
            };
            self.send_message(id, wall_now);
        }
    }

    /// Sends the subscription's next message (notifications or a keep-alive) on a waiting
    /// Publish request of its session; marks it late when none waits.
    fn send_message(&mut self, id: u32, wall_now: DateTime) {
        let Some(subscription) = self.subscriptions.get_mut(&id) else {
            return;
        };
        let Some(publish) = self
            .sessions
            .get_mut(&subscription.session_id)
            .and_then(|q| q.publish.pop_front())
        else {
            subscription.late = true;
            return;
        };
        let (message, more) = if subscription.has_notifications() {
            subscription.take_notification(wall_now)
        } else {
            (subscription.keep_alive(wall_now), false)
        };
        subscription.keep_alive_counter = 0;
        subscription.lifetime_counter = 0;
        subscription.late = more;
        let available = subscription.available_sequence_numbers();
        let response = publish_response(&publish, id, message, available, more, wall_now);
        self.push_response(publish, response);
    }

    /// One publishing cycle of a subscription (OPC 10000-4 §5.13.1.1, simplified to the
    /// states Normal / Late / KeepAlive): a message when there are notifications or a
    /// keep-alive is due, lifetime counting when no Publish request is available, expiry.
    fn publishing_cycle(&mut self, id: u32, wall_now: DateTime) {
        let Some(subscription) = self.subscriptions.get_mut(&id) else {
            return;
        };
        let session_id = subscription.session_id.clone();
        let has_publish = self
            .sessions
            .get(&session_id)
            .is_some_and(|q| !q.publish.is_empty());
        if !has_publish {
            subscription.lifetime_counter = subscription.lifetime_counter.saturating_add(1);
        }
        if subscription.lifetime_counter >= subscription.lifetime_count {
            self.expire(id, wall_now);
            return;
        }
        let due = subscription.has_notifications() || {
            subscription.keep_alive_counter = subscription.keep_alive_counter.saturating_add(1);
            subscription.keep_alive_counter >= subscription.max_keep_alive_count
        };
        if due {
            if has_publish {
                self.send_message(id, wall_now);
            } else {
                subscription.late = true;
            }
        }
    }

    /// Lifetime expired: the subscription is deleted and a StatusChangeNotification with
    /// Bad_Timeout waits for the session's next Publish request (OPC 10000-4 §5.13.1.1).
    fn expire(&mut self, id: u32, wall_now: DateTime) {
        let Some(mut subscription) = self.remove_subscription(id) else {
            return;
        };
        let message = subscription.status_change(StatusCode::BAD_TIMEOUT, wall_now);
        self.queue_status_message(&subscription.session_id, id, message, wall_now);
    }

    fn queue_status_message(
        &mut self,
        session_id: &NodeId,
        subscription_id: u32,
        message: crate::services::NotificationMessage,
        wall_now: DateTime,
    ) {
        let queue = self.sessions.entry(session_id.clone()).or_default();
        // Bounded: one per subscription the session could have had.
        if queue.status_messages.len() >= 256 {
            queue.status_messages.pop_front();
        }
        queue
            .status_messages
            .push_back((subscription_id, wall_now, Box::new(message)));
        self.serve_waiting(session_id, wall_now);
    }

    /// Answers Publish requests whose timeout hint passed with Bad_Timeout.
    fn expire_publish_requests(&mut self, scope: TickScope, now: Instant, wall_now: DateTime) {
        let mut expired = Vec::new();
        for queue in self.sessions.values_mut() {
            let in_scope = match scope {
                TickScope::Channel(channel) => queue.channel_id == Some(channel),
                TickScope::Orphans => queue.channel_id.is_none(),
            };
            if !in_scope {
                continue;
            }
            while queue
                .publish
                .front()
                .is_some_and(|p| p.deadline.is_some_and(|d| now >= d))
            {
                if let Some(publish) = queue.publish.pop_front() {
                    expired.push(publish);
                }
            }
        }
        for publish in expired {
            let response = ServiceResponse::from(ServiceFault {
                response_header: ResponseHeader::answering(
                    &publish.header,
                    StatusCode::BAD_TIMEOUT,
                    wall_now,
                ),
            });
            self.push_response(publish, response);
        }
    }
}

fn publish_response(
    publish: &PendingPublish,
    subscription_id: u32,
    notification_message: crate::services::NotificationMessage,
    available_sequence_numbers: Vec<u32>,
    more_notifications: bool,
    wall_now: DateTime,
) -> ServiceResponse {
    ServiceResponse::from(PublishResponse {
        response_header: ResponseHeader::answering(&publish.header, StatusCode::GOOD, wall_now),
        subscription_id,
        available_sequence_numbers,
        more_notifications,
        notification_message,
        results: publish.results.clone(),
        diagnostic_infos: Vec::new(),
    })
}

/// Reads the sampled attribute of an item with both timestamps.
fn sample(server: &Server, item: &MonitoredItem, now: Instant) -> DataValue {
    super::attribute_services::read_one(
        server,
        &item.item_to_monitor,
        TimestampsToReturn::Both,
        now,
    )
}

impl Server {
    /// Samples due items and runs due publishing cycles of the subscriptions in `scope`;
    /// answers Publish requests that timed out. Responses go to the channels' outboxes.
    pub fn tick_subscriptions(&mut self, scope: TickScope, now: Instant) {
        if self.subscriptions.is_empty() && self.subscriptions.sessions.is_empty() {
            return;
        }
        let mut engine = std::mem::take(&mut self.subscriptions);
        let wall_now = self.wall_clock(now);
        engine.expire_publish_requests(scope, now, wall_now);
        let mut due: Vec<(u8, u32)> = Vec::new();
        for subscription in engine.subscriptions.values_mut() {
            let channel = engine
                .sessions
                .get(&subscription.session_id)
                .and_then(|s| s.channel_id);
            let in_scope = match scope {
                TickScope::Channel(id) => channel == Some(id),
                TickScope::Orphans => channel.is_none(),
            };
            if !in_scope {
                continue;
            }
            // Sampling goes on without a channel too: a subscription samples and queues until
            // its lifetime expires, whatever happens to the channel (its lifetime, not the
            // channel, bounds it: OPC 10000-4 §5.13.1.1), so a client that re-activates its
            // session on a new channel finds every sample taken meanwhile in the item
            // queues, up to their queueSize.
            for item in subscription.items.values_mut() {
                if item.mode == crate::services::MonitoringMode::Disabled || now < item.next_sample
                {
                    continue;
                }
                let value = sample(self, item, now);
                item.offer(value);
                let period = item.sampling_period();
                item.next_sample += period;
                if item.next_sample <= now {
                    item.next_sample = now + period;
                }
            }
            // Every cycle that ended counts (a late tick runs the missed cycles, so lifetimes
            // hold in wall time even when ticks are sparse); at most MAX_CATCH_UP at once.
            let period = subscription.period();
            let mut cycles = 0;
            while now >= subscription.next_publish && cycles < MAX_CATCH_UP {
                due.push((subscription.priority, subscription.id));
                subscription.next_publish += period;
                cycles += 1;
            }
            if subscription.next_publish <= now {
                subscription.next_publish = now + period;
            }
        }
        // Higher priority first when Publish requests are scarce (stable: cycles in order).
        due.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for (_, id) in due {
            engine.publishing_cycle(id, wall_now);
        }
        self.subscriptions = engine;
    }

    /// Samples at once the items monitoring the Value of `node_id` (after a Write), so that
    /// every written value is seen even between two sampling instants.
    pub fn value_written(&mut self, node_id: &NodeId, now: Instant) {
        if self.subscriptions.total_items == 0 {
            return;
        }
        let mut engine = std::mem::take(&mut self.subscriptions);
        for subscription in engine.subscriptions.values_mut() {
            for item in subscription.items.values_mut() {
                if item.item_to_monitor.node_id == *node_id
                    && item.item_to_monitor.attribute_id == AttributeId::Value.id()
                {
                    let value = sample(self, item, now);
                    item.offer(value);
                }
            }
        }
        self.subscriptions = engine;
    }
}
