//! `ClientConnection`: the sans-IO state machine of one client connection, the mirror of
//! [`ServerConnection`](crate::server::ServerConnection). The driver writes what
//! [`poll_transmit`](ClientConnection::poll_transmit) returns, feeds the socket's bytes to
//! [`handle_bytes`](ClientConnection::handle_bytes), arms a timer for
//! [`poll_timeout`](ClientConnection::poll_timeout), calls
//! [`handle_timeout`](ClientConnection::handle_timeout) when it fires and takes
//! [`ClientEvent`]s from [`poll_event`](ClientConnection::poll_event).
//!
//! Flow (OPC 10000-6 §7.1, §6.7; OPC 10000-4 §5.5, §5.6): Hello → Acknowledge;
//! OpenSecureChannel (Issue) under SecurityPolicy None, renewed once 75 % of the token lifetime
//! has passed; CreateSession; ActivateSession (anonymous or user name); then application
//! requests, each chunked to the server's receive buffer, correlated by request id and checked
//! against its request handle, and failed with Bad_Timeout at its deadline.
//! [`close`](ClientConnection::close) sends CloseSession, then CloseSecureChannel.
//!
//! Requests sent before the session is active wait and go out once it is.
//!
//! [`resume`](ClientConnection::resume) starts a connection that takes over an existing
//! session after a reconnect: ActivateSession with the old authentication token on the new
//! channel, and CreateSession only when the server says the session is gone (see
//! [`reconnect`](super::reconnect)).

mod channel;
mod requests;
mod session;

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use bytes::BytesMut;

use self::requests::{millis, request_header_mut};
use super::config::ClientConfig;
use super::reconnect::{ResumeSession, SessionOutcome};
use super::request_table::{PendingRequest, RequestPurpose, RequestTable};
use crate::channel::{ChannelEndpoint, CloseReason, Side};
use crate::encoding::{DateTime, NodeId};
use crate::secure_channel::AssembledMessage;
use crate::security::ChannelSecurity;
use crate::services::{
    CloseSecureChannelRequest, CloseSessionRequest, EndpointDescription, RequestHeader,
    SecurityTokenRequestType, ServiceRequest, ServiceResponse,
};
use crate::transport::{
    ConnectionMessage, ErrorMessage, Frame, Hello, MessageType, NegotiatedLimits, TransmitBuffer,
};
use crate::types::StatusCode;

/// Ticks (100 ns) per millisecond of the wall clock.
const TICKS_PER_MILLISECOND: i64 = 10_000;
/// Length of the CreateSession client nonce (OPC 10000-4 §5.6.2.2 asks for at least 32).
const CLIENT_NONCE_LENGTH: usize = 32;

/// What happened on the connection.
#[derive(Clone, Debug, PartialEq)]
pub enum ClientEvent {
    /// The session is activated: application requests go out from now on.
    SessionActivated,
    /// A response with a good (or uncertain) service result.
    Response {
        /// The handle `send` returned.
        handle: u32,
        /// The decoded response.
        response: Box<ServiceResponse>,
    },
    /// A request failed as a whole: ServiceFault, bad service result, abort chunk, undecodable
    /// response, Bad_Timeout, or the connection closed first.
    RequestFailed {
        /// The handle `send` returned.
        handle: u32,
        /// Why.
        status: StatusCode,
    },
    /// The connection is closed (Good after [`ClientConnection::close`]).
    Closed {
        /// Why.
        status: StatusCode,
        /// A human-readable reason.
        reason: String,
    },
}

/// Where the connection is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientState {
    /// Hello, secure channel, session creation and activation are under way.
    Connecting,
    /// The session is active.
    Active,
    /// CloseSession was sent.
    Closing,
    /// Closed: drain `poll_transmit`, then close the socket.
    Closed,
}

/// Why a request could not be sent.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// The connection is closing or closed.
    #[error("the connection is closed ({0})")]
    Closed(StatusCode),
    /// Too many requests are outstanding.
    #[error("too many outstanding requests")]
    TooManyRequests,
    /// The encoded request exceeds what the server accepts.
    #[error("request of {size} bytes exceeds the server's limit of {limit}")]
    RequestTooLarge {
        /// Encoded size.
        size: usize,
        /// The server's limit.
        limit: usize,
    },
}

impl SendError {
    /// The StatusCode for this error.
    pub const fn status_code(&self) -> StatusCode {
        match self {
            Self::Closed(status) => *status,
            Self::TooManyRequests => StatusCode::BAD_TOO_MANY_OPERATIONS,
            Self::RequestTooLarge { .. } => StatusCode::BAD_REQUEST_TOO_LARGE,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    AwaitingAcknowledge,
    OpeningChannel,
    CreatingSession,
    ActivatingSession,
    Active,
    ClosingSession,
    Closed,
}

#[derive(Clone, Copy, Debug)]
struct Channel {
    id: u32,
    token_id: u32,
    renew_at: Instant,
    renewing: bool,
}

#[derive(Debug)]
struct WaitingRequest {
    handle: u32,
    request: ServiceRequest,
    deadline: Instant,
}

/// One client connection: channel, session and request correlation.
#[derive(Debug)]
pub struct ClientConnection {
    config: ClientConfig,
    epoch: Instant,
    start_time: DateTime,
    hello: Hello,
    /// Framing, limits, sequences, send queues and security.
    endpoint: ChannelEndpoint,
    phase: Phase,
    channel: Option<Channel>,
    authentication_token: NodeId,
    session_id: NodeId,
    resume: Option<ResumeSession>,
    outcome: Option<SessionOutcome>,
    server_endpoints: Vec<EndpointDescription>,
    max_request_message_size: usize,
    requests: RequestTable,
    waiting: VecDeque<WaitingRequest>,
    events: VecDeque<ClientEvent>,
    next_handle: u32,
    next_request_id: u32,
    connect_deadline: Instant,
    nonce_state: u64,
    /// The nonce of the OpenSecureChannel request in flight.
    channel_nonce: Vec<u8>,
    /// The nonce of CreateSession (the server signs it) and the server's latest nonce.
    session_nonces: (Vec<u8>, Vec<u8>),
}

impl ClientConnection {
    /// A connection that starts with the Hello; `now` is the instant at which the wall clock
    /// read `start_time` (RequestHeader timestamps are `start_time` plus the elapsed time).
    pub fn new(config: ClientConfig, now: Instant, start_time: DateTime) -> Self {
        let hello = config.connection_limits.hello(&config.endpoint_url);
        let mut endpoint = ChannelEndpoint::new(
            Side::Client,
            hello.receive_buffer_size,
            config.decoding_limits,
        );
        endpoint.queue_immediate(hello.to_message_bytes());
        Self {
            endpoint,
            hello,
            epoch: now,
            start_time,
            phase: Phase::AwaitingAcknowledge,
            channel: None,
            authentication_token: NodeId::default(),
            session_id: NodeId::default(),
            resume: None,
            outcome: None,
            server_endpoints: Vec::new(),
            max_request_message_size: 0,
            requests: RequestTable::default(),
            waiting: VecDeque::new(),
            events: VecDeque::new(),
            next_handle: 1,
            next_request_id: 1,
            connect_deadline: now + config.connect_timeout,
            nonce_state: (start_time.ticks().unsigned_abs() ^ 0x9E37_79B9_7F4A_7C15).max(1),
            channel_nonce: Vec::new(),
            session_nonces: (Vec::new(), Vec::new()),
            config,
        }
    }

    /// The channel's security, once it is open under a policy other than None.
    pub fn security(&self) -> Option<&ChannelSecurity> {
        self.endpoint.security()
    }

    /// A connection that re-activates `session` on its new channel instead of creating one
    /// (OPC 10000-4 §5.6.3.1); when the server answers that the session is gone
    /// ([`session_is_gone`](super::reconnect::session_is_gone)) a new session is created, and when re-activation fails for another
    /// reason the old session is asked to close (it might still exist) before a new one is
    /// created.
    pub fn resume(
        config: ClientConfig,
        now: Instant,
        start_time: DateTime,
        session: ResumeSession,
    ) -> Self {
        let mut connection = Self::new(config, now, start_time);
        connection.resume = Some(session);
        connection
    }

    /// How the active session was reached (None until it is active).
    pub fn session_outcome(&self) -> Option<SessionOutcome> {
        self.outcome
    }

    /// The session id from CreateSession (or the resumed session's).
    pub fn session_id(&self) -> &NodeId {
        &self.session_id
    }

    /// What a later connection needs to re-activate this session, once it was created.
    pub fn resume_session(&self) -> Option<ResumeSession> {
        (!self.authentication_token.is_null()).then(|| ResumeSession {
            session_id: self.session_id.clone(),
            authentication_token: self.authentication_token.clone(),
            server_endpoints: self.server_endpoints.clone(),
            max_request_message_size: self.max_request_message_size,
            server_nonce: self.session_nonces.1.clone(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// Where the connection is in its life.
    pub fn state(&self) -> ClientState {
        match self.phase {
            Phase::AwaitingAcknowledge
            | Phase::OpeningChannel
            | Phase::CreatingSession
            | Phase::ActivatingSession => ClientState::Connecting,
            Phase::Active => ClientState::Active,
            Phase::ClosingSession => ClientState::Closing,
            Phase::Closed => ClientState::Closed,
        }
    }

    /// True once closed (drain [`poll_transmit`](Self::poll_transmit) first).
    pub fn is_closed(&self) -> bool {
        self.phase == Phase::Closed
    }

    /// The limits agreed in the Hello / Acknowledge exchange.
    pub fn negotiated_limits(&self) -> Option<&NegotiatedLimits> {
        self.endpoint.limits()
    }

    /// The secure channel id and current token id, once the channel is open.
    pub fn channel_token(&self) -> Option<(u32, u32)> {
        self.channel.map(|c| (c.id, c.token_id))
    }

    /// The endpoints the server returned in CreateSession.
    pub fn server_endpoints(&self) -> &[EndpointDescription] {
        &self.server_endpoints
    }

    /// Number of requests sent and not yet answered (or waiting for the session).
    pub fn outstanding(&self) -> usize {
        self.requests.len() + self.waiting.len()
    }

    fn wall_clock(&self, now: Instant) -> DateTime {
        let elapsed = now.saturating_duration_since(self.epoch);
        let millis = i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX);
        DateTime(
            self.start_time
                .ticks()
                .saturating_add(millis.saturating_mul(TICKS_PER_MILLISECOND)),
        )
    }

    /// Sends an application request (its header's handle, token and timestamp are filled in;
    /// a zero `timeout_hint` becomes the configured request timeout). Returns the request
    /// handle that its [`ClientEvent`] carries.
    pub fn send(
        &mut self,
        now: Instant,
        request: impl Into<ServiceRequest>,
    ) -> Result<u32, SendError> {
        let mut request = request.into();
        match self.phase {
            Phase::ClosingSession | Phase::Closed => {
                return Err(SendError::Closed(StatusCode::BAD_SESSION_CLOSED));
            }
            _ if self.outstanding() >= super::request_table::MAX_OUTSTANDING_REQUESTS => {
                return Err(SendError::TooManyRequests);
            }
            _ => {}
        }
        let handle = self.allocate_handle();
        let header = request_header_mut(&mut request);
        if header.timeout_hint == 0 {
            header.timeout_hint = millis(self.config.request_timeout);
        }
        let deadline = now + Duration::from_millis(u64::from(header.timeout_hint));
        if self.phase == Phase::Active {
            self.transmit_request(now, handle, request, RequestPurpose::Application, deadline)?;
        } else {
            self.waiting.push_back(WaitingRequest {
                handle,
                request,
                deadline,
            });
        }
        Ok(handle)
    }

    /// Closes gracefully: CloseSession (when a session is active), then CloseSecureChannel.
    pub fn close(&mut self, now: Instant) {
        match self.phase {
            Phase::Active if !self.config.discovery_only => {
                let request = CloseSessionRequest {
                    request_header: RequestHeader::default(),
                    delete_subscriptions: true,
                };
                let handle = self.allocate_handle();
                let deadline = now + self.config.request_timeout;
                match self.transmit_request(
                    now,
                    handle,
                    request.into(),
                    RequestPurpose::CloseSession,
                    deadline,
                ) {
                    Ok(()) => self.phase = Phase::ClosingSession,
                    Err(_) => self.close_channel(now),
                }
            }
            Phase::ClosingSession | Phase::Closed => {}
            _ => self.close_channel(now),
        }
    }

    /// Sends CloseSecureChannel (when a channel is open) and closes with Good.
    fn close_channel(&mut self, now: Instant) {
        if self.channel.is_some() {
            let handle = self.allocate_handle();
            let mut request = ServiceRequest::from(CloseSecureChannelRequest::default());
            self.fill_header(now, &mut request, handle, self.config.request_timeout);
            // No response follows a CloseSecureChannel (OPC 10000-4 §5.5.3).
            let request_id = self.allocate_request_id();
            // Without an open channel there is nothing to close: ignore the refusal.
            let _ = self.queue_message(MessageType::CloseSecureChannel, request_id, &request);
        }
        self.finish(StatusCode::GOOD, "closed by the client", false);
    }

    /// The next bytes to write, if any.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        let bytes = self.endpoint.poll_transmit();
        self.sync_send_failure();
        bytes
    }

    /// Appends whole chunks to `out` until it grew by at least `max_bytes` or nothing is
    /// pending; returns the number of bytes appended.
    pub fn transmit_into(&mut self, out: &mut Vec<u8>, max_bytes: usize) -> usize {
        let written = self.endpoint.transmit_into(out, max_bytes);
        self.sync_send_failure();
        written
    }

    /// As [`transmit_into`](Self::transmit_into), into a gather list for a vectored write.
    pub fn transmit_buffered(&mut self, out: &mut TransmitBuffer, max_bytes: usize) -> usize {
        let written = self.endpoint.transmit_buffered(out, max_bytes);
        self.sync_send_failure();
        written
    }

    /// A chunk that could not be secured closed the endpoint while sending: the connection
    /// closes with it (outstanding requests fail, then the Closed event).
    fn sync_send_failure(&mut self) {
        if let (false, Some(CloseReason::Error { status, reason })) =
            (self.is_closed(), self.endpoint.close_reason())
        {
            let (status, reason) = (*status, reason.clone());
            self.fail(status, &reason);
        }
    }

    /// The next event, if any.
    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        self.events.pop_front()
    }

    /// When [`handle_timeout`](Self::handle_timeout) must be called next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.is_closed() {
            return None;
        }
        let connect = (self.phase != Phase::Active && self.phase != Phase::ClosingSession)
            .then_some(self.connect_deadline);
        let renew = self
            .channel
            .filter(|channel| !channel.renewing)
            .map(|channel| channel.renew_at);
        let waiting = self.waiting.iter().map(|w| w.deadline).min();
        [connect, renew, waiting, self.requests.next_deadline()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Fails requests past their deadline with Bad_Timeout, renews the security token when
    /// due, and gives up a connection that did not reach an active session in time.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.is_closed() {
            return;
        }
        if !matches!(self.phase, Phase::Active | Phase::ClosingSession)
            && now >= self.connect_deadline
        {
            return self.fail(
                StatusCode::BAD_TIMEOUT,
                "no active session within the connect timeout",
            );
        }
        for request in self.requests.take_expired(now) {
            self.request_failed(now, request, StatusCode::BAD_TIMEOUT);
            if self.is_closed() {
                return;
            }
        }
        while let Some(index) = self.waiting.iter().position(|w| w.deadline <= now) {
            if let Some(waiting) = self.waiting.remove(index) {
                self.events.push_back(ClientEvent::RequestFailed {
                    handle: waiting.handle,
                    status: StatusCode::BAD_TIMEOUT,
                });
            }
        }
        if let Some(channel) = self.channel
            && !channel.renewing
            && now >= channel.renew_at
        {
            self.open_channel(now, SecurityTokenRequestType::Renew);
        }
    }

    /// Feeds bytes read from the socket (any split); they are copied into the receive buffer.
    /// Drivers that can read straight into [`read_buffer`](Self::read_buffer) avoid the copy.
    pub fn handle_bytes(&mut self, now: Instant, bytes: &[u8]) {
        if self.is_closed() {
            return;
        }
        self.endpoint.push(bytes);
        self.handle_received(now);
    }

    /// The receive buffer, with room for the rest of the frame in progress: append what the
    /// socket returns (e.g. tokio's `read_buf`), then call
    /// [`handle_received`](Self::handle_received). Only append. Once the connection is closed
    /// the buffer is emptied each time, so a driver that goes on reading holds nothing.
    pub fn read_buffer(&mut self) -> &mut BytesMut {
        self.endpoint.read_buffer()
    }

    /// Handles the bytes appended to [`read_buffer`](Self::read_buffer): frames are split off
    /// the buffer without a copy, and a response of one chunk is decoded from that chunk (a
    /// long ByteString in it becomes a slice of the receive buffer).
    pub fn handle_received(&mut self, now: Instant) {
        while !self.is_closed() {
            match self.endpoint.next_frame() {
                Ok(Some(frame)) => self.handle_frame(now, &frame),
                Ok(None) => break,
                Err(error) => self.fail(error.status_code(), &error.to_string()),
            }
        }
    }

    /// The socket reached its end: everything outstanding fails with Bad_ConnectionClosed.
    pub fn handle_end_of_stream(&mut self) {
        if !self.is_closed() {
            self.fail(
                StatusCode::BAD_CONNECTION_CLOSED,
                "the server closed the connection",
            );
        }
    }

    /// Closes after a failure: outstanding requests fail with `status`, nothing more is sent.
    fn fail(&mut self, status: StatusCode, reason: &str) {
        self.finish(status, reason, true);
    }

    fn finish(&mut self, status: StatusCode, reason: &str, drop_outgoing: bool) {
        if self.is_closed() {
            return;
        }
        self.phase = Phase::Closed;
        if drop_outgoing {
            self.endpoint.fail(status, reason);
        } else {
            self.endpoint.close();
        }
        let request_status = if status.is_good() {
            StatusCode::BAD_CONNECTION_CLOSED
        } else {
            status
        };
        let handles: Vec<u32> = self
            .requests
            .drain()
            .into_iter()
            .filter(|request| request.purpose == RequestPurpose::Application)
            .map(|request| request.handle)
            .chain(self.waiting.drain(..).map(|waiting| waiting.handle))
            .collect();
        for handle in handles {
            self.events.push_back(ClientEvent::RequestFailed {
                handle,
                status: request_status,
            });
        }
        self.events.push_back(ClientEvent::Closed {
            status,
            reason: reason.to_owned(),
        });
    }

    fn handle_frame(&mut self, now: Instant, frame: &Frame) {
        match frame.header.message_type {
            MessageType::Error => {
                let (status, reason) = match ErrorMessage::from_frame(frame) {
                    Ok(error) => (error.error, error.reason.to_string()),
                    Err(error) => (error.status_code(), error.to_string()),
                };
                self.fail(status, &format!("the server sent an error: {reason}"));
            }
            MessageType::Acknowledge if self.phase == Phase::AwaitingAcknowledge => {
                self.handle_acknowledge(now, frame);
            }
            _ if self.phase == Phase::AwaitingAcknowledge => self.fail(
                StatusCode::BAD_TCP_MESSAGE_TYPE_INVALID,
                "expected an Acknowledge",
            ),
            message_type if !message_type.is_secure_channel() => self.fail(
                StatusCode::BAD_TCP_MESSAGE_TYPE_INVALID,
                "unexpected connection message",
            ),
            _ => self.handle_chunk(now, frame),
        }
    }

    fn handle_message(&mut self, now: Instant, message: AssembledMessage) {
        // A response to a request that already timed out is dropped.
        let Some(request) = self.requests.take(message.request_id) else {
            return;
        };
        let response = match ServiceResponse::decode_message_shared(
            &message.body,
            self.config.decoding_limits,
        ) {
            Ok(response) => response,
            Err(error) => return self.request_failed(now, request, error.status_code()),
        };
        let header = response.response_header();
        if header.request_handle != request.handle {
            return self.request_failed(now, request, StatusCode::BAD_UNKNOWN_RESPONSE);
        }
        let status = header.service_result;
        if matches!(response, ServiceResponse::ServiceFault(_)) || status.is_bad() {
            let status = if status.is_bad() {
                status
            } else {
                StatusCode::BAD_UNKNOWN_RESPONSE
            };
            return self.request_failed(now, request, status);
        }
        match (request.purpose, response) {
            (RequestPurpose::Application, response) => {
                self.events.push_back(ClientEvent::Response {
                    handle: request.handle,
                    response: Box::new(response),
                });
            }
            (
                RequestPurpose::OpenChannel | RequestPurpose::RenewChannel,
                ServiceResponse::OpenSecureChannel(open),
            ) => self.channel_opened(now, request.purpose, open),
            (RequestPurpose::CreateSession, ServiceResponse::CreateSession(created)) => {
                self.session_created(now, created);
            }
            (RequestPurpose::ActivateSession, ServiceResponse::ActivateSession(activated)) => {
                self.session_activated(now, activated);
            }
            (RequestPurpose::CloseSession, ServiceResponse::CloseSession(_)) => {
                self.close_channel(now);
            }
            (RequestPurpose::CloseStaleSession, _) => {}
            (_, _) => self.request_failed(now, request, StatusCode::BAD_UNKNOWN_RESPONSE),
        }
    }

    /// A request failed: the application hears of its own; a failed step of the connection's
    /// own life closes it (a failed CloseSession still closes the channel politely).
    fn request_failed(&mut self, now: Instant, request: PendingRequest, status: StatusCode) {
        match request.purpose {
            RequestPurpose::Application => self.events.push_back(ClientEvent::RequestFailed {
                handle: request.handle,
                status,
            }),
            RequestPurpose::CloseSession => self.close_channel(now),
            RequestPurpose::CloseStaleSession => {}
            RequestPurpose::ActivateSession if self.resume.is_some() => {
                self.resume_refused(now, status);
            }
            RequestPurpose::OpenChannel => self.fail(status, "OpenSecureChannel failed"),
            RequestPurpose::RenewChannel => self.fail(status, "renewing the channel failed"),
            RequestPurpose::CreateSession => self.fail(status, "CreateSession failed"),
            RequestPurpose::ActivateSession => self.fail(status, "ActivateSession failed"),
        }
    }
}
