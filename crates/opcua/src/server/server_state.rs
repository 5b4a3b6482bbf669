//! `Server`: the state shared by every connection of one server (configuration, address space,
//! sessions, the benchmark buffer, id and nonce sources). Connections borrow it mutably while
//! they handle bytes, so there is no lock inside the core: a driver keeps the `Server` in one
//! task (or behind its own mutex) and passes `&mut Server` into each
//! [`ServerConnection`](super::ServerConnection) call.

use std::time::{Duration, Instant};

use super::address_space::{AddNodeError, AddressSpace};
use super::bench_methods::ThroughputBuffer;
use super::config::ServerConfig;
use super::namespace_zero;
use super::session::SessionTable;
use super::subscriptions::{SubscriptionEngine, TickScope};
use crate::encoding::{DateTime, LocalizedText, NodeId, Variant};
use crate::services::well_known_nodes as ids;

/// Server_ServerStatus_SecondsTillShutdown and Server_ServerStatus_ShutdownReason.
pub(crate) const SECONDS_TILL_SHUTDOWN: u32 = 2992;
pub(crate) const SHUTDOWN_REASON: u32 = 2993;

/// Ticks (100 ns) per millisecond.
const TICKS_PER_MILLISECOND: i64 = 10_000;

/// `ServerState.Shutdown` (OPC 10000-5 §12.6): the server is shutting down.
pub const SERVER_STATE_SHUTDOWN: i32 = 4;

/// A shutdown announced to clients: when it happens (wall clock) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnnouncedShutdown {
    /// When the connections close.
    pub at: DateTime,
    /// Why, as ShutdownReason says it.
    pub reason: String,
}

impl AnnouncedShutdown {
    /// Whole seconds from `now` until the shutdown (0 once it is due).
    pub fn seconds_left(&self, now: DateTime) -> u32 {
        let ticks = self.at.ticks().saturating_sub(now.ticks()).max(0);
        // Round up: a shutdown 0.4 s away is still coming.
        u32::try_from((ticks + TICKS_PER_SECOND - 1) / TICKS_PER_SECOND).unwrap_or(u32::MAX)
    }
}

/// Ticks (100 ns) per second.
const TICKS_PER_SECOND: i64 = 10_000_000;

/// The shared server state.
#[derive(Debug)]
pub struct Server {
    /// The configuration.
    pub config: ServerConfig,
    /// The nodes.
    pub address_space: AddressSpace,
    /// Open sessions.
    pub sessions: SessionTable,
    /// The payload of the throughput benchmark (empty unless
    /// [`bench_methods::install`](super::bench_methods::install) added its methods).
    pub throughput: ThroughputBuffer,
    /// Subscriptions and monitored items of all sessions.
    pub subscriptions: SubscriptionEngine,
    /// The write and method hooks and the Call requests waiting for external methods.
    pub(crate) hooks: super::user_hooks::UserHooks,
    /// The shutdown announced with [`Server::announce_shutdown`], if any.
    shutdown: Option<AnnouncedShutdown>,
    /// User certificates refused by ActivateSession, for the driver's log and `rejected/`.
    refusals: Vec<super::security::Refusal>,
    /// Sessions created, activated, closed or refused, for the driver's log.
    session_events: Vec<SessionEvent>,
    epoch: Instant,
    next_channel_id: u32,
    next_session_number: u32,
    random_state: u64,
}

/// Most session events kept for the driver (see [`Server::take_session_events`]).
pub const MAX_SESSION_EVENTS: usize = 1024;

/// Something that happened to a session, for the driver's log. Carries no secret: the user
/// is a name (or a certificate subject), never a password or a token.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionEvent {
    /// CreateSession succeeded.
    Created {
        /// The new session's id.
        session_id: NodeId,
        /// The name the client gave it.
        name: String,
        /// The secure channel it came on.
        channel_id: u32,
    },
    /// ActivateSession succeeded.
    Activated {
        /// The session.
        session_id: NodeId,
        /// The user's name (certificate subject for X509), `None` when anonymous.
        user: Option<String>,
        /// The secure channel it is bound to now.
        channel_id: u32,
    },
    /// CloseSession succeeded.
    Closed {
        /// The session.
        session_id: NodeId,
        /// The secure channel it came on.
        channel_id: u32,
    },
    /// A session service failed (a refused login, too many sessions ...).
    Refused {
        /// `CreateSession`, `ActivateSession` or `CloseSession`.
        service: &'static str,
        /// The secure channel it came on.
        channel_id: u32,
        /// The status code the client got.
        status: crate::types::StatusCode,
    },
}

impl Server {
    /// User certificates refused since the last call, for the driver to log and (the
    /// untrusted ones) store in the PKI's `rejected/` folder, like application certificates.
    pub fn take_refusals(&mut self) -> Vec<super::security::Refusal> {
        std::mem::take(&mut self.refusals)
    }

    /// Session events since the last call, for the driver's log.
    pub fn take_session_events(&mut self) -> Vec<SessionEvent> {
        std::mem::take(&mut self.session_events)
    }

    /// Records a session event (see [`take_session_events`](Self::take_session_events));
    /// at most [`MAX_SESSION_EVENTS`] wait, older ones are dropped when no driver drains
    /// them.
    pub(crate) fn session_event(&mut self, event: SessionEvent) {
        if self.session_events.len() >= MAX_SESSION_EVENTS {
            self.session_events.remove(0);
        }
        self.session_events.push(event);
    }

    /// Records a refused user certificate (see [`take_refusals`](Self::take_refusals)).
    pub(crate) fn refuse(&mut self, refusal: super::security::Refusal) {
        self.refusals.push(refusal);
    }

    /// A server with the namespace-0 nodes; `now` is the instant at which the wall clock
    /// read `config.start_time`. Namespaces and nodes of one's own (and the benchmark nodes
    /// of [`bench_methods`](super::bench_methods)) are added afterwards.
    pub fn new(config: ServerConfig, now: Instant) -> Result<Self, AddNodeError> {
        let address_space = namespace_zero::build(&config)?;
        let seed = 0x2545_F491_4F6C_DD1D ^ config.start_time.ticks().unsigned_abs();
        let mut server = Self {
            config,
            address_space,
            sessions: SessionTable::default(),
            throughput: ThroughputBuffer::default(),
            subscriptions: SubscriptionEngine::default(),
            hooks: super::user_hooks::UserHooks::default(),
            shutdown: None,
            refusals: Vec::new(),
            session_events: Vec::new(),
            epoch: now,
            next_channel_id: 1,
            next_session_number: 1,
            random_state: seed.max(1),
        };
        server.refresh_namespace_array();
        Ok(server)
    }

    /// Registers a namespace URI and updates Server.NamespaceArray; returns its index.
    pub fn add_namespace(&mut self, uri: &str) -> u16 {
        let index = self.address_space.add_namespace(uri);
        self.refresh_namespace_array();
        index
    }

    fn refresh_namespace_array(&mut self) {
        let elements = self
            .address_space
            .namespaces()
            .iter()
            .map(|uri| Variant::from(uri.as_str()))
            .collect();
        let value =
            Variant::array(crate::encoding::VariantType::String, elements).unwrap_or_default();
        let at = self.config.start_time;
        let _ = self
            .address_space
            .set_value(&ids::SERVER_NAMESPACE_ARRAY, value, at);
    }

    /// Announces that the server stops `after` from `now`, as OPC 10000-5 §12.6 has it:
    /// ServerStatus.State becomes Shutdown, SecondsTillShutdown counts down to the moment
    /// and ShutdownReason says why, so clients that read or monitor them see it coming.
    /// The driver closes the connections when the time is up.
    pub fn announce_shutdown(&mut self, now: Instant, after: Duration, reason: &str) {
        let wall = self.wall_clock(now);
        let at = self.wall_clock(now + after);
        let shutdown = AnnouncedShutdown {
            at,
            reason: reason.to_owned(),
        };
        let values = [
            (
                ids::SERVER_SERVER_STATUS_STATE,
                Variant::Int32(SERVER_STATE_SHUTDOWN),
            ),
            (
                NodeId::numeric(0, SECONDS_TILL_SHUTDOWN),
                Variant::UInt32(shutdown.seconds_left(wall)),
            ),
            (
                NodeId::numeric(0, SHUTDOWN_REASON),
                Variant::LocalizedText(Box::new(LocalizedText::new("en", reason))),
            ),
        ];
        for (node, value) in values {
            // The nodes are part of namespace 0; a server built without them has nothing
            // to show, which is no reason not to stop.
            let _ = self.address_space.set_value(&node, value, wall);
        }
        self.shutdown = Some(shutdown);
    }

    /// The shutdown announced, if any.
    pub fn announced_shutdown(&self) -> Option<&AnnouncedShutdown> {
        self.shutdown.as_ref()
    }

    /// The wall-clock time at `now`: `config.start_time` plus the time since creation.
    pub fn wall_clock(&self, now: Instant) -> DateTime {
        let elapsed = now.saturating_duration_since(self.epoch);
        let millis = i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX);
        let ticks = millis
            .saturating_mul(TICKS_PER_MILLISECOND)
            .saturating_add(i64::from(elapsed.subsec_micros() % 1000) * 10);
        DateTime(self.config.start_time.ticks().saturating_add(ticks))
    }

    /// A fresh secure channel id.
    pub fn allocate_channel_id(&mut self) -> u32 {
        let id = self.next_channel_id;
        self.next_channel_id = self.next_channel_id.wrapping_add(1).max(1);
        id
    }

    /// A fresh numeric session id, in namespace 1 (the server's first own namespace).
    pub fn allocate_session_id(&mut self) -> NodeId {
        let number = self.next_session_number;
        self.next_session_number = self.next_session_number.wrapping_add(1).max(1);
        NodeId::numeric(1, number)
    }

    /// `length` pseudo-random bytes (xorshift64*; SecurityPolicy None needs no secrecy, only
    /// uniqueness of authentication tokens and nonces).
    pub fn random_bytes(&mut self, length: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(length + 8);
        while out.len() < length {
            let mut x = self.random_state;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.random_state = x;
            out.extend_from_slice(&x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
        }
        out.truncate(length);
        out
    }

    /// The earliest session deadline or publishing cycle of a subscription whose session
    /// has no open channel, for the driver's timer.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let orphans = self.subscriptions.next_orphan_deadline();
        match (self.sessions.next_deadline(), orphans) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Drops the sessions that timed out by `now` and runs the lifetimes of subscriptions
    /// no connection drives.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.sessions.expire(now);
        self.tick_subscriptions(TickScope::Orphans, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn wall_clock_is_start_time_plus_elapsed() {
        let now = Instant::now();
        let config = ServerConfig {
            start_time: DateTime(1_000),
            ..ServerConfig::default()
        };
        let server = Server::new(config, now).unwrap();
        assert_eq!(server.wall_clock(now), DateTime(1_000));
        // 1.5 ms and 2 µs later: 15 020 ticks of 100 ns.
        let later = now + Duration::from_micros(1_502);
        assert_eq!(server.wall_clock(later), DateTime(1_000 + 15_020));
        // An instant before creation reads as the start time.
        assert_eq!(
            server.wall_clock(now.checked_sub(Duration::from_secs(1)).unwrap_or(now)),
            DateTime(1_000)
        );
    }

    #[test]
    fn ids_and_nonces_are_fresh() {
        let mut server = Server::new(ServerConfig::default(), Instant::now()).unwrap();
        assert_eq!(server.allocate_channel_id(), 1);
        assert_eq!(server.allocate_channel_id(), 2);
        assert_ne!(server.allocate_session_id(), server.allocate_session_id());
        let (a, b) = (server.random_bytes(32), server.random_bytes(32));
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }

    #[test]
    fn server_and_connections_can_move_between_threads() {
        fn assert_send<T: Send>() {}
        assert_send::<Server>();
        assert_send::<super::super::ServerConnection>();
    }
}
