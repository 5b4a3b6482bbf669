//! `ReconnectingClient`: an [`OpcuaClient`] that survives its server. When the socket or the
//! secure channel is lost it reconnects with exponential backoff and jitter
//! ([`Backoff`](crate::client::reconnect::Backoff)), opens a new secure channel and
//! re-activates the EXISTING session on it; only when the server says the session is gone
//! (after a restart) does it create one new session. Then it brings the client's
//! subscriptions back (kept by a re-activated session; otherwise TransferSubscriptions, and
//! what the server cannot hand over is re-created with its monitored items and client
//! handles) and runs the registered [`ReconnectHook`]s.
//!
//! Subscriptions made through [`create_subscription`](ReconnectingClient::create_subscription)
//! and [`create_monitored_items`](ReconnectingClient::create_monitored_items) survive
//! reconnects; [`next_notification`](ReconnectingClient::next_notification) waits across
//! them, so a loop over it sees the changes go on after a server restart with the same
//! client handles.
//!
//! No storm of sessions: the client is driven through `&mut self`, so exactly one reconnect
//! attempt is in flight at a time, and a failed attempt drops its socket (the server frees
//! the channel and any session it never activated). Share one client between tasks behind a
//! `tokio::sync::Mutex`: the tasks queue on the lock, one of them reconnects, the others find
//! the connection back.
//!
//! What happens to a call while the connection is down (documented contract):
//! - every call first waits for the connection to come back, for at most
//!   [`ReconnectPolicy::reconnect_timeout`]; past that it fails with Bad_NotConnected and a
//!   message saying the client keeps reconnecting on the next call;
//! - a read-only call (read, read_many, browse, translate, get_endpoints) that loses the
//!   connection while in flight is sent again once reconnected (within the same timeout);
//! - a write or a method call that loses the connection while in flight is NOT sent again
//!   (it may or may not have been applied): it fails with Bad_ConnectionClosed and the
//!   connection comes back on the next call.
//!
//! ```no_run
//! # async fn demo() -> Result<(), buildwire_opcua::driver::ClientError> {
//! use buildwire_opcua::client::ClientConfig;
//! use buildwire_opcua::driver::client::nodes;
//! use buildwire_opcua::driver::reconnect::{ConnectionEvent, ReconnectPolicy, ReconnectingClient};
//! use buildwire_opcua::services::AttributeId;
//!
//! let config = ClientConfig::new("opc.tcp://127.0.0.1:4840/");
//! let mut client = ReconnectingClient::connect(config, ReconnectPolicy::default()).await?;
//! let mut events = client.subscribe_events();
//! let values = client.read(&[nodes::CURRENT_TIME], AttributeId::Value).await?;
//! // ... the server restarts; the next call reconnects by itself.
//! while let Ok(event) = events.try_recv() {
//!     if let ConnectionEvent::Reconnected { session_reactivated, .. } = event {
//!         println!("back, same session: {session_reactivated}");
//!     }
//! }
//! # Ok(()) }
//! ```

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::broadcast;

use super::client::{ClientError, OpcuaClient};
use crate::client::ClientConfig;
use crate::client::reconnect::{
    Backoff, BackoffConfig, ResumeSession, SessionOutcome, is_connection_lost,
};
use crate::client::subscriptions::{
    MonitoredItemSpec, SubscriptionEvent, SubscriptionSet, SubscriptionSettings,
};
use crate::encoding::{DataValue, ExpandedNodeId, NodeId, QualifiedName, Variant};
use crate::services::MonitoredItemCreateResult;
use crate::services::{AttributeId, EndpointDescription, ReadValueId, ReferenceDescription};
use crate::types::StatusCode;

/// Default time a call waits for a lost connection to come back.
pub const DEFAULT_RECONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Connection events kept for a slow listener before the oldest are dropped.
pub const EVENT_CAPACITY: usize = 256;

/// How the client reconnects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReconnectPolicy {
    /// Delays between attempts.
    pub backoff: BackoffConfig,
    /// How long one call waits for a lost connection to come back before it fails with
    /// Bad_NotConnected (the next call goes on trying). Zero fails fast.
    pub reconnect_timeout: Duration,
}

impl Default for ReconnectPolicy {
    fn default() -> Self {
        Self {
            backoff: BackoffConfig::default(),
            reconnect_timeout: DEFAULT_RECONNECT_TIMEOUT,
        }
    }
}

/// What happened to the connection, for listeners of
/// [`subscribe_events`](ReconnectingClient::subscribe_events).
#[derive(Clone, Debug, PartialEq)]
pub enum ConnectionEvent {
    /// The first connection is up with a new session.
    Connected {
        /// The session id.
        session_id: NodeId,
    },
    /// The connection was lost.
    Lost {
        /// Why.
        status: StatusCode,
        /// The error's text.
        reason: String,
    },
    /// Attempt `attempt` starts after `delay`.
    Reconnecting {
        /// 1 for the first attempt after a loss.
        attempt: u32,
        /// The backoff delay before it.
        delay: Duration,
    },
    /// Attempt failed.
    AttemptFailed {
        /// Which attempt.
        attempt: u32,
        /// Why.
        status: StatusCode,
        /// The error's text.
        reason: String,
    },
    /// The subscriptions are back on the new connection (sent before `Reconnected`, only when
    /// the client has subscriptions).
    SubscriptionsRestored {
        /// Kept by the re-activated session.
        kept: usize,
        /// Handed over by TransferSubscriptions.
        transferred: usize,
        /// Created again with their monitored items.
        recreated: usize,
    },
    /// The connection is back and the hooks ran.
    Reconnected {
        /// True when the old session was re-activated on the new channel, false when the
        /// server had lost it and a new session was created.
        session_reactivated: bool,
        /// The (possibly new) session id.
        session_id: NodeId,
    },
}

/// Logs `event` (the client's side of a connection's life) and hands it to the subscribers
/// of [`ReconnectingClient::subscribe_events`].
fn publish(events: &broadcast::Sender<ConnectionEvent>, event: ConnectionEvent) {
    match &event {
        ConnectionEvent::Connected { session_id } => {
            tracing::info!(%session_id, "connected");
        }
        ConnectionEvent::Lost { status, reason } => {
            tracing::warn!(%status, reason = %reason, "connection lost");
        }
        ConnectionEvent::Reconnecting { attempt, delay } => {
            tracing::info!(attempt, delay_ms = delay.as_millis() as u64, "reconnecting");
        }
        ConnectionEvent::AttemptFailed {
            attempt,
            status,
            reason,
        } => tracing::warn!(attempt, %status, reason = %reason, "reconnect attempt failed"),
        ConnectionEvent::SubscriptionsRestored {
            kept,
            transferred,
            recreated,
        } => tracing::info!(kept, transferred, recreated, "subscriptions restored"),
        ConnectionEvent::Reconnected {
            session_reactivated,
            session_id,
        } => tracing::info!(%session_id, session_reactivated, "reconnected"),
    }
    // Nobody listening is fine: the events are for those who asked.
    let _ = events.send(event);
}

/// A boxed future, as hooks return.
pub type HookFuture<'a> = Pin<Box<dyn Future<Output = Result<(), ClientError>> + Send + 'a>>;

/// Runs after every successful reconnect, before any waiting call goes on, with the new
/// connection. This is where subscriptions come back:
///
/// - `session_reactivated == true`: the session survived, so its subscriptions did too;
///   republish what was missed (Republish) and go on publishing.
/// - `session_reactivated == false`: the session is new. First try TransferSubscriptions
///   with the old subscription ids (a server that kept them hands them over, OPC 10000-4
///   §5.13.7); for those it refuses, re-create the subscriptions and their monitored items
///   (CreateSubscription, CreateMonitoredItems with the same client handles).
///
/// A hook that fails makes the reconnect count as failed: the connection is dropped and the
/// backoff goes on, so a half-restored state is never reported as Reconnected.
pub trait ReconnectHook: Send {
    /// Restores what this hook owns on `client`.
    fn after_reconnect<'a>(
        &'a mut self,
        client: &'a mut OpcuaClient,
        session_reactivated: bool,
    ) -> HookFuture<'a>;
}

/// A client that reconnects by itself; see the module documentation for the contract.
pub struct ReconnectingClient {
    config: ClientConfig,
    policy: ReconnectPolicy,
    client: Option<OpcuaClient>,
    resume: Option<ResumeSession>,
    backoff: Backoff,
    next_attempt: Option<Instant>,
    events: broadcast::Sender<ConnectionEvent>,
    hooks: Vec<Box<dyn ReconnectHook>>,
    reconnects: u64,
    /// The subscriptions of the lost connection, until a reconnect restores them.
    subscriptions: SubscriptionSet,
    /// The session those subscriptions live in on the server.
    subscriptions_session: Option<NodeId>,
}

impl std::fmt::Debug for ReconnectingClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReconnectingClient")
            .field("endpoint_url", &self.config.endpoint_url)
            .field("connected", &self.client.is_some())
            .field("reconnects", &self.reconnects)
            .field("hooks", &self.hooks.len())
            .finish_non_exhaustive()
    }
}

/// Runs a read-only operation, again after a reconnect if the connection was lost while it
/// was in flight, until the policy's reconnect timeout.
macro_rules! retrying {
    ($self:ident, $client:ident, $op:expr) => {{
        let deadline = Instant::now() + $self.policy.reconnect_timeout;
        loop {
            let $client = $self.ensure_connected(deadline).await?;
            match $op.await {
                Err(error) if is_connection_lost(error.status_code()) => {
                    $self.lost(&error);
                    if Instant::now() >= deadline {
                        return Err(error);
                    }
                }
                other => return other,
            }
        }
    }};
}

/// Runs an operation that is not sent again: if the connection is lost while it is in
/// flight, it fails with Bad_ConnectionClosed.
macro_rules! once {
    ($self:ident, $client:ident, $op:expr) => {{
        let deadline = Instant::now() + $self.policy.reconnect_timeout;
        let $client = $self.ensure_connected(deadline).await?;
        match $op.await {
            Err(error) if is_connection_lost(error.status_code()) => {
                Err($self.lost_in_flight(&error))
            }
            other => other,
        }
    }};
}

fn jitter_seed() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.subsec_nanos());
    u64::from(nanos) ^ (u64::from(std::process::id()) << 32)
}

impl ReconnectingClient {
    /// Connects for the first time (a failure here is returned at once: check the URL and
    /// that the server runs), then reconnects by itself whenever the connection is lost.
    pub async fn connect(
        config: ClientConfig,
        policy: ReconnectPolicy,
    ) -> Result<Self, ClientError> {
        let client = OpcuaClient::connect_with(config.clone()).await?;
        let (events, _) = broadcast::channel(EVENT_CAPACITY);
        let resume = client.connection().resume_session();
        publish(
            &events,
            ConnectionEvent::Connected {
                session_id: client.connection().session_id().clone(),
            },
        );
        Ok(Self {
            config,
            policy,
            client: Some(client),
            resume,
            backoff: Backoff::new(policy.backoff, jitter_seed()),
            next_attempt: None,
            events,
            hooks: Vec::new(),
            reconnects: 0,
            subscriptions: SubscriptionSet::default(),
            subscriptions_session: None,
        })
    }

    /// Connection events from now on (a listener that falls behind by more than
    /// [`EVENT_CAPACITY`] loses the oldest).
    pub fn subscribe_events(&self) -> broadcast::Receiver<ConnectionEvent> {
        self.events.subscribe()
    }

    /// Registers a hook that runs after every reconnect, in registration order.
    pub fn add_hook(&mut self, hook: Box<dyn ReconnectHook>) {
        self.hooks.push(hook);
    }

    /// Successful reconnects so far.
    pub fn reconnects(&self) -> u64 {
        self.reconnects
    }

    /// The current session id (of the last connection, while down).
    pub fn session_id(&self) -> Option<&NodeId> {
        self.resume.as_ref().map(|session| &session.session_id)
    }

    /// The connection, reconnecting first if it is down (waiting at most the policy's
    /// reconnect timeout).
    pub async fn connection(&mut self) -> Result<&mut OpcuaClient, ClientError> {
        let deadline = Instant::now() + self.policy.reconnect_timeout;
        self.ensure_connected(deadline).await
    }

    /// Records that the connection is gone (a call saw `error`).
    fn lost(&mut self, error: &ClientError) {
        if let Some(mut client) = self.client.take() {
            self.subscriptions = client.take_subscription_set();
            self.subscriptions_session = Some(client.connection().session_id().clone());
            publish(
                &self.events,
                ConnectionEvent::Lost {
                    status: error.status_code(),
                    reason: error.to_string(),
                },
            );
        }
    }

    async fn ensure_connected(
        &mut self,
        deadline: Instant,
    ) -> Result<&mut OpcuaClient, ClientError> {
        self.wait_connected(deadline, None).await?;
        self.client.as_mut().ok_or_else(|| ClientError::Status {
            status: StatusCode::BAD_NOT_CONNECTED,
            context: "not connected".into(),
        })
    }

    /// Reconnects if the connection is down. Fails with Bad_NotConnected when the next
    /// attempt is due after `deadline`; returns `Ok(false)` (after sleeping until `patience`)
    /// when the next attempt is due after `patience`, so a caller that only wanted to wait
    /// that long gets control back between attempts. An attempt that has started always runs
    /// to its end here: it is never cut off by `patience`.
    async fn wait_connected(
        &mut self,
        deadline: Instant,
        patience: Option<Instant>,
    ) -> Result<bool, ClientError> {
        if self.client.as_mut().is_some_and(|client| !client.is_open()) {
            self.lost(&ClientError::Status {
                status: StatusCode::BAD_CONNECTION_CLOSED,
                context: "the server closed the connection".into(),
            });
        }
        while self.client.is_none() {
            let now = Instant::now();
            let at = match self.next_attempt {
                Some(at) => at,
                None => {
                    let attempt = self.backoff.next_attempt(now);
                    publish(
                        &self.events,
                        ConnectionEvent::Reconnecting {
                            attempt: attempt.attempt,
                            delay: attempt.delay,
                        },
                    );
                    self.next_attempt = Some(attempt.at);
                    attempt.at
                }
            };
            if at > deadline {
                return Err(ClientError::Status {
                    status: StatusCode::BAD_NOT_CONNECTED,
                    context: format!(
                        "the connection to {} is lost and not back yet (attempt {} is due in \
                         {} ms); the client keeps trying on the next call",
                        self.config.endpoint_url,
                        self.backoff.attempts(),
                        at.saturating_duration_since(now).as_millis()
                    ),
                });
            }
            if let Some(patience) = patience.filter(|&patience| at > patience) {
                tokio::time::sleep_until(patience.into()).await;
                return Ok(false);
            }
            tokio::time::sleep_until(at.into()).await;
            self.next_attempt = None;
            let attempt = self.backoff.attempts();
            match self.attempt().await {
                Ok(client) => {
                    self.backoff.reset();
                    self.reconnects += 1;
                    self.client = Some(client);
                }
                Err(error) => {
                    publish(
                        &self.events,
                        ConnectionEvent::AttemptFailed {
                            attempt,
                            status: error.status_code(),
                            reason: error.to_string(),
                        },
                    );
                }
            }
        }
        Ok(true)
    }

    /// One reconnect: connect, re-activate (or re-create) the session, run the hooks.
    async fn attempt(&mut self) -> Result<OpcuaClient, ClientError> {
        let mut client =
            OpcuaClient::connect_resuming(self.config.clone(), self.resume.clone()).await?;
        let session_reactivated =
            client.connection().session_outcome() == Some(SessionOutcome::Reactivated);
        // From now on a later reconnect resumes this session, even if a hook fails below.
        self.resume = client.connection().resume_session();
        if !self.subscriptions.is_empty() {
            // Kept only if the re-activated session is the one they live in: an attempt
            // abandoned half-way (its caller cancelled) may have left a newer session that
            // never had them. On failure the set stays here for the next attempt.
            let same_session = session_reactivated
                && self.subscriptions_session.as_ref() == Some(client.connection().session_id());
            let restored = client
                .restore_subscriptions(&self.subscriptions, same_session)
                .await?;
            self.subscriptions = SubscriptionSet::default();
            publish(
                &self.events,
                ConnectionEvent::SubscriptionsRestored {
                    kept: restored.kept,
                    transferred: restored.transferred,
                    recreated: restored.recreated,
                },
            );
        }
        for hook in &mut self.hooks {
            if let Err(error) = hook.after_reconnect(&mut client, session_reactivated).await {
                // Keep what was restored (now under this session) for the next attempt.
                self.subscriptions = client.take_subscription_set();
                self.subscriptions_session = Some(client.connection().session_id().clone());
                return Err(error);
            }
        }
        publish(
            &self.events,
            ConnectionEvent::Reconnected {
                session_reactivated,
                session_id: client.connection().session_id().clone(),
            },
        );
        Ok(client)
    }

    /// The error a call in flight gets when the connection was lost under it.
    fn lost_in_flight(&mut self, error: &ClientError) -> ClientError {
        self.lost(error);
        ClientError::Status {
            status: StatusCode::BAD_CONNECTION_CLOSED,
            context: format!(
                "the connection was lost while the request was in flight, so it may or may not \
                 have been applied; read back before retrying ({error})"
            ),
        }
    }

    /// [`OpcuaClient::read`], retried across a reconnect.
    pub async fn read(
        &mut self,
        nodes: &[NodeId],
        attribute: AttributeId,
    ) -> Result<Vec<DataValue>, ClientError> {
        retrying!(self, client, client.read(nodes, attribute))
    }

    /// [`OpcuaClient::read_many`], retried across a reconnect.
    pub async fn read_many(
        &mut self,
        reads: &[ReadValueId],
    ) -> Result<Vec<DataValue>, ClientError> {
        retrying!(self, client, client.read_many(reads))
    }

    /// [`OpcuaClient::browse`], retried across a reconnect.
    pub async fn browse(
        &mut self,
        node: &NodeId,
    ) -> Result<Vec<ReferenceDescription>, ClientError> {
        retrying!(self, client, client.browse(node))
    }

    /// [`OpcuaClient::translate`], retried across a reconnect.
    pub async fn translate(
        &mut self,
        start: &NodeId,
        path: &[QualifiedName],
    ) -> Result<Vec<ExpandedNodeId>, ClientError> {
        retrying!(self, client, client.translate(start, path))
    }

    /// [`OpcuaClient::get_endpoints`], retried across a reconnect.
    pub async fn get_endpoints(&mut self) -> Result<Vec<EndpointDescription>, ClientError> {
        retrying!(self, client, client.get_endpoints())
    }

    /// [`OpcuaClient::value_type`], retried across a reconnect.
    pub async fn value_type(
        &mut self,
        node: &NodeId,
    ) -> Result<Option<crate::encoding::VariantType>, ClientError> {
        retrying!(self, client, client.value_type(node))
    }

    /// [`OpcuaClient::input_argument_types`], retried across a reconnect.
    pub async fn input_argument_types(
        &mut self,
        method: &NodeId,
    ) -> Result<Vec<Option<crate::encoding::VariantType>>, ClientError> {
        retrying!(self, client, client.input_argument_types(method))
    }

    /// [`OpcuaClient::write`]; not sent again after a loss in flight.
    pub async fn write(&mut self, node: &NodeId, value: Variant) -> Result<(), ClientError> {
        once!(self, client, client.write(node, value))
    }

    /// [`OpcuaClient::call`]; not sent again after a loss in flight.
    pub async fn call(
        &mut self,
        object: &NodeId,
        method: &NodeId,
        args: Vec<Variant>,
    ) -> Result<Vec<Variant>, ClientError> {
        once!(self, client, client.call(object, method, args))
    }

    /// [`OpcuaClient::create_subscription`]; the subscription survives reconnects. Not sent
    /// again if the connection is lost while in flight (Bad_ConnectionClosed).
    pub async fn create_subscription(
        &mut self,
        settings: SubscriptionSettings,
    ) -> Result<u32, ClientError> {
        once!(self, client, client.create_subscription(settings))
    }

    /// [`OpcuaClient::create_monitored_items`]; the items survive reconnects.
    pub async fn create_monitored_items(
        &mut self,
        subscription_id: u32,
        specs: &[MonitoredItemSpec],
    ) -> Result<Vec<(u32, MonitoredItemCreateResult)>, ClientError> {
        once!(
            self,
            client,
            client.create_monitored_items(subscription_id, specs)
        )
    }

    /// [`OpcuaClient::delete_subscriptions`].
    pub async fn delete_subscriptions(
        &mut self,
        subscription_ids: &[u32],
    ) -> Result<Vec<StatusCode>, ClientError> {
        once!(self, client, client.delete_subscriptions(subscription_ids))
    }

    /// The subscriptions as the server granted them (those waiting for a reconnect while
    /// the connection is down).
    pub fn subscription_set(&self) -> &SubscriptionSet {
        match &self.client {
            Some(client) => client.subscription_set(),
            None => &self.subscriptions,
        }
    }

    /// The server ids of the client's subscriptions now (they change when a server restart
    /// made the client create them again).
    pub fn subscription_ids(&self) -> Vec<u32> {
        self.subscription_set()
            .subscriptions
            .keys()
            .copied()
            .collect()
    }

    /// [`OpcuaClient::next_notification`] across reconnects: when the connection is lost
    /// while it waits, it reconnects (restoring the subscriptions) and goes on waiting; it
    /// fails only when the connection stays down past the policy's reconnect timeout. To poll
    /// with a short wait, use [`next_notification_within`](Self::next_notification_within)
    /// rather than a timeout around this call, which would cut reconnect attempts off.
    pub async fn next_notification(&mut self) -> Result<SubscriptionEvent, ClientError> {
        loop {
            // Without an end to the wait there is always an event or an error.
            if let Some(event) = self.notification_until(None).await? {
                return Ok(event);
            }
        }
    }

    /// [`next_notification`](Self::next_notification) that waits for a notification at most
    /// `wait` (then `Ok(None)`), for callers that poll and must let other calls on the client
    /// run in between. Unlike wrapping `next_notification` in a timeout, a reconnect attempt
    /// that has started is never cut off half-way: an attempt can take longer than a short
    /// poll (a new channel, a new session, subscriptions created again), and cutting it off
    /// every time would keep the client from ever coming back. So this call may return later
    /// than `wait` by the length of one attempt.
    ///
    /// ```no_run
    /// # async fn demo(client: &mut buildwire_opcua::driver::ReconnectingClient)
    /// #     -> Result<(), buildwire_opcua::driver::ClientError> {
    /// use std::time::Duration;
    /// while let Some(event) = client.next_notification_within(Duration::from_millis(100)).await? {
    ///     println!("{event:?}");
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn next_notification_within(
        &mut self,
        wait: Duration,
    ) -> Result<Option<SubscriptionEvent>, ClientError> {
        self.notification_until(Some(Instant::now() + wait)).await
    }

    /// The next notification across reconnects, or `None` once `until` has passed (never
    /// before an attempt that has started has ended).
    async fn notification_until(
        &mut self,
        until: Option<Instant>,
    ) -> Result<Option<SubscriptionEvent>, ClientError> {
        loop {
            let deadline = Instant::now() + self.policy.reconnect_timeout;
            if !self.wait_connected(deadline, until).await? {
                return Ok(None);
            }
            let Some(client) = self.client.as_mut() else {
                continue;
            };
            let event = match until {
                Some(until) => {
                    let left = until.saturating_duration_since(Instant::now());
                    match tokio::time::timeout(left, client.next_notification()).await {
                        Err(_) => return Ok(None),
                        Ok(event) => event,
                    }
                }
                None => client.next_notification().await,
            };
            match event {
                Err(error) if is_connection_lost(error.status_code()) => self.lost(&error),
                other => return other.map(Some),
            }
        }
    }

    /// Closes the session and the channel if connected; a client that is down just stops.
    pub async fn close(mut self) -> Result<(), ClientError> {
        match self.client.take() {
            Some(mut client) => {
                if client.is_open() {
                    client.close().await
                } else {
                    Ok(())
                }
            }
            None => Ok(()),
        }
    }
}
