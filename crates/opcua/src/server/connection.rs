//! `ServerConnection`: the sans-IO state machine of one TCP connection to the server, in the
//! quinn-proto style. The driver feeds whatever the socket returned to
//! [`handle_bytes`](ServerConnection::handle_bytes), writes what
//! [`poll_transmit`](ServerConnection::poll_transmit) returns, arms a timer for
//! [`poll_timeout`](ServerConnection::poll_timeout) and calls
//! [`handle_timeout`](ServerConnection::handle_timeout) when it fires. Once
//! [`is_closed`](ServerConnection::is_closed) is true the driver drains `poll_transmit` (an
//! ERR message may be pending) and closes the socket.
//!
//! Flow (OPC 10000-6 §7.1, §6.7): Hello → Acknowledge; OpenSecureChannel (Issue, later Renew)
//! under the policy the client names; MSG chunks opened, checked and reassembled by the
//! [`ChannelEndpoint`](crate::channel::ChannelEndpoint) and dispatched by the service router
//! (`dispatch.rs`); CloseSecureChannel ends the connection. Every protocol violation sends an
//! ERR message with its Bad_ status and closes; service-level failures are answered with a
//! ServiceFault. Responses are cut into chunks of the client's receive buffer size as they
//! are polled.

use std::time::Instant;

use bytes::BytesMut;

use super::dispatch::{ServiceContext, dispatch, fault, read_request_header};
use super::security::{Refusal, open_server_opn, unix_seconds};
use super::server_state::Server;
use super::subscriptions::TickScope;
pub use crate::channel::CloseReason;
use crate::channel::{
    ChannelEndpoint, ChannelTokens, OutgoingBody, OutgoingMessage, Rejection, Side,
    opn_security_header,
};
use crate::encoding::{BinaryEncodable, ByteString, DateTime, DecodingLimits};
use crate::secure_channel::{AssembledMessage, AssemblyEvent, SecureChannelChunk, SecurityHeader};
use crate::security::{ChannelSecurity, SecurityPolicy};
use crate::services::{
    MessageSecurityMode, OpenSecureChannelResponse, RequestHeader, ResponseHeader,
    SecurityTokenRequestType, ServiceRequest, ServiceResponse,
};
use crate::transport::{
    ConnectionMessage, Frame, Hello, MessageType, NegotiatedLimits, PROTOCOL_VERSION,
    TransmitBuffer, acknowledge_hello,
};
use crate::types::StatusCode;

/// One client connection.
#[derive(Debug)]
pub struct ServerConnection {
    /// Framing, limits, sequences, send queues and security.
    endpoint: ChannelEndpoint,
    /// The channel id and its tokens, once a channel is open.
    tokens: Option<ChannelTokens>,
    /// Client certificates refused, for the driver's log and `rejected/`.
    refusals: Vec<Refusal>,
    /// A SecurityPolicy None channel on a server without a None endpoint: discovery only.
    discovery_only: bool,
    /// When this channel's subscriptions need a tick (see `handle_timeout_with`).
    subscription_deadline: Option<Instant>,
    /// Until the secure channel is open: when the connection is closed if the client has
    /// not sent its Hello and OpenSecureChannel by then ([`ServerConnection::accepted`]).
    opening_deadline: Option<Instant>,
}

impl ServerConnection {
    /// A connection waiting for the client's Hello.
    pub fn new(server: &Server) -> Self {
        let limits = &server.config.connection_limits;
        Self {
            endpoint: ChannelEndpoint::new(
                Side::Server,
                limits.receive_buffer_size,
                DecodingLimits::default(),
            ),
            tokens: None,
            refusals: Vec::new(),
            discovery_only: false,
            subscription_deadline: None,
            opening_deadline: None,
        }
    }

    /// A connection accepted at `now`, waiting for the client's Hello: unless the client
    /// opens a secure channel within `config.opening_timeout`, it is closed with Bad_Timeout.
    /// ([`ServerConnection::new`] sets no such deadline.)
    pub fn accepted(server: &Server, now: Instant) -> Self {
        let mut connection = Self::new(server);
        connection.opening_deadline = Some(now + server.config.opening_timeout);
        connection
    }

    /// True once the client opened a secure channel.
    pub fn is_open(&self) -> bool {
        self.tokens.is_some()
    }

    /// Closes the connection with an Error message of `status` (after what is queued): for a
    /// driver that must make room.
    pub fn close_with(&mut self, status: StatusCode, reason: &str) {
        if !self.is_closed() {
            self.fail(status, reason);
        }
    }

    /// The channel's security policy and mode, once a channel is open.
    pub fn security(&self) -> Option<&ChannelSecurity> {
        self.endpoint.security()
    }

    /// Client certificates refused since the last call, for the driver to log and (the
    /// untrusted ones) store in the PKI's `rejected/` folder.
    pub fn take_refusals(&mut self) -> Vec<Refusal> {
        std::mem::take(&mut self.refusals)
    }

    /// True once the connection is closed (drain [`poll_transmit`](Self::poll_transmit) first).
    pub fn is_closed(&self) -> bool {
        self.endpoint.is_closed()
    }

    /// Why the connection closed.
    pub fn close_reason(&self) -> Option<&CloseReason> {
        self.endpoint.close_reason()
    }

    /// The secure channel id, once a channel is open.
    pub fn channel_id(&self) -> Option<u32> {
        self.tokens.as_ref().map(ChannelTokens::channel_id)
    }

    /// The limits agreed in the Hello / Acknowledge exchange.
    pub fn negotiated_limits(&self) -> Option<&NegotiatedLimits> {
        self.endpoint.limits()
    }

    /// Feeds bytes read from the socket (any split); they are copied into the receive buffer.
    /// Drivers that can read straight into [`read_buffer`](Self::read_buffer) avoid the copy.
    pub fn handle_bytes(&mut self, server: &mut Server, now: Instant, bytes: &[u8]) {
        if self.is_closed() {
            return;
        }
        self.endpoint.push(bytes);
        self.handle_received(server, now);
    }

    /// The receive buffer, with room for the rest of the frame in progress: append what the
    /// socket returns (e.g. tokio's `read_buf`), then call
    /// [`handle_received`](Self::handle_received). Only append. Once the connection is closed
    /// the buffer is emptied each time, so a driver that goes on reading holds nothing.
    pub fn read_buffer(&mut self) -> &mut BytesMut {
        self.endpoint.read_buffer()
    }

    /// Handles the bytes appended to [`read_buffer`](Self::read_buffer).
    pub fn handle_received(&mut self, server: &mut Server, now: Instant) {
        if self.is_closed() {
            return;
        }
        while !self.is_closed() {
            match self.endpoint.next_frame() {
                Ok(Some(frame)) => self.handle_frame(server, now, &frame),
                Ok(None) => break,
                Err(error) => self.fail(error.status_code(), &error.to_string()),
            }
        }
        if self.is_closed()
            && let Some(channel_id) = self.channel_id()
        {
            server.sessions.drop_unactivated_on_channel(channel_id);
        }
        self.sync_subscriptions(server, now);
    }

    /// Moves the Publish responses ready for this channel into the send queue and notes when
    /// its subscriptions need the next tick.
    fn sync_subscriptions(&mut self, server: &mut Server, now: Instant) {
        let Some(channel_id) = self.channel_id() else {
            return;
        };
        if self.is_closed() {
            server.subscriptions.release_channel(channel_id);
            server.drop_pending_calls(channel_id);
            self.subscription_deadline = None;
            return;
        }
        let ready = server.subscriptions.take_outbox(channel_id);
        if !ready.is_empty() {
            let wall_now = server.wall_clock(now);
            for response in ready {
                self.enqueue_response(
                    response.request_id,
                    OutgoingBody::owned(response.body),
                    wall_now,
                    &response.request_header,
                );
            }
        }
        self.subscription_deadline = server
            .subscriptions
            .next_deadline_for_channel(channel_id, now);
    }

    /// As [`handle_timeout`](Self::handle_timeout), and also samples and publishes this
    /// channel's subscriptions (drivers with subscriptions call this one).
    pub fn handle_timeout_with(&mut self, server: &mut Server, now: Instant) {
        self.handle_timeout(now);
        if let Some(channel_id) = self.channel_id()
            && !self.is_closed()
        {
            server.tick_subscriptions(TickScope::Channel(channel_id), now);
        }
        self.sync_subscriptions(server, now);
    }

    /// Tells the server this connection is gone (the driver calls it once the socket
    /// closed): Publish requests waiting on the channel are dropped and its sessions'
    /// subscriptions run on without a channel until their session is used again.
    pub fn release(&mut self, server: &mut Server) {
        if let Some(channel_id) = self.channel_id() {
            server.subscriptions.release_channel(channel_id);
            server.drop_pending_calls(channel_id);
        }
        self.subscription_deadline = None;
    }

    /// The next chunk or connection message to write, if any.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.endpoint.poll_transmit()
    }

    /// Appends whole chunks to `out` until it grew by at least `max_bytes` or nothing is
    /// pending; returns the number of bytes appended. Avoids one allocation per chunk.
    pub fn transmit_into(&mut self, out: &mut Vec<u8>, max_bytes: usize) -> usize {
        self.endpoint.transmit_into(out, max_bytes)
    }

    /// As [`transmit_into`](Self::transmit_into), into a gather list: shared payloads (the
    /// getData buffer) are referenced, not copied, and the driver writes them with one
    /// vectored write.
    pub fn transmit_buffered(&mut self, out: &mut TransmitBuffer, max_bytes: usize) -> usize {
        self.endpoint.transmit_buffered(out, max_bytes)
    }

    /// When [`handle_timeout`](Self::handle_timeout) (or
    /// [`handle_timeout_with`](Self::handle_timeout_with)) must be called: the expiry of the
    /// channel's security token or the next tick of its subscriptions.
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.is_closed() {
            return None;
        }
        let token = self.tokens.as_ref().map(ChannelTokens::expires_at);
        let opening = self.opening_deadline.filter(|_| !self.is_open());
        [token, self.subscription_deadline, opening]
            .into_iter()
            .flatten()
            .min()
    }

    /// Closes the channel if its token expired without renewal, or the connection if it
    /// did not open a channel in time.
    pub fn handle_timeout(&mut self, now: Instant) {
        let late = !self.is_open() && self.opening_deadline.is_some_and(|at| now >= at);
        if late && !self.is_closed() {
            self.fail(
                StatusCode::BAD_TIMEOUT,
                "no Hello and OpenSecureChannel in time after connecting",
            );
            return;
        }
        let expired = self.tokens.as_ref().is_some_and(|c| now >= c.expires_at());
        if expired && !self.is_closed() {
            self.fail(
                StatusCode::BAD_SECURE_CHANNEL_CLOSED,
                "the security token expired without renewal",
            );
        }
    }

    /// Queues an ERR message (after the responses already queued) and closes.
    fn fail(&mut self, status: StatusCode, reason: &str) {
        self.endpoint.fail(status, reason);
    }

    fn handle_frame(&mut self, server: &mut Server, now: Instant, frame: &Frame) {
        if !self.endpoint.is_established() {
            self.handle_hello(server, frame);
            return;
        }
        let frame = match self.open_secured(server, now, frame) {
            Ok(frame) => frame,
            Err(rejection) => {
                if let Some(detail) = rejection.detail {
                    self.refusals.push(Refusal {
                        detail,
                        certificate: rejection.rejected_certificate,
                    });
                }
                return self.fail(rejection.status, &rejection.reason);
            }
        };
        let chunk = match SecureChannelChunk::from_frame(&frame) {
            Ok(chunk) => chunk,
            Err(error) => return self.fail(error.status_code(), &error.to_string()),
        };
        if let Err((status, reason)) = self.check_chunk(&chunk, now) {
            return self.fail(status, reason);
        }
        match self.endpoint.assemble(chunk) {
            Ok(Some(AssemblyEvent::Message(message))) => self.handle_message(server, now, message),
            Ok(Some(AssemblyEvent::Aborted { .. }) | None) => {}
            Err(error) => self.fail(error.status_code(), &error.to_string()),
        }
    }

    /// Checks signature and decrypts a received chunk under the channel's security (or the
    /// policy its OPN names); chunks under SecurityPolicy None pass unchanged.
    fn open_secured(
        &mut self,
        server: &Server,
        now: Instant,
        frame: &Frame,
    ) -> Result<Frame, Rejection> {
        match frame.header.message_type {
            MessageType::OpenSecureChannel => {
                let now_unix = unix_seconds(server.wall_clock(now));
                let (plain, security) = open_server_opn(
                    &server.config.security,
                    self.endpoint.security(),
                    frame,
                    now_unix,
                )?;
                if self.tokens.is_some() && self.endpoint.security().is_none() && security.is_some()
                {
                    return Err(Rejection::new(
                        StatusCode::BAD_SECURITY_POLICY_REJECTED,
                        "a renewal must keep the channel's security policy",
                    ));
                }
                self.endpoint.set_pending_security(security);
                Ok(plain)
            }
            _ => self.endpoint.open_symmetric(frame),
        }
    }

    fn handle_hello(&mut self, server: &Server, frame: &Frame) {
        if frame.header.message_type != MessageType::Hello {
            return self.fail(
                StatusCode::BAD_TCP_MESSAGE_TYPE_INVALID,
                "the first message must be a Hello",
            );
        }
        let hello = match Hello::from_frame(frame) {
            Ok(hello) => hello,
            Err(error) => return self.fail(error.status_code(), &error.to_string()),
        };
        match acknowledge_hello(&server.config.connection_limits, &hello) {
            Ok((acknowledge, limits)) => {
                self.endpoint
                    .queue_immediate(acknowledge.to_message_bytes());
                self.endpoint.establish(limits);
            }
            Err(error) => self.fail(error.status, error.reason),
        }
    }

    /// Channel id, security header, token and sequence number checks of one chunk.
    fn check_chunk(
        &mut self,
        chunk: &SecureChannelChunk,
        now: Instant,
    ) -> Result<(), (StatusCode, &'static str)> {
        match (&chunk.security_header, self.tokens.as_mut()) {
            (SecurityHeader::Asymmetric(_), tokens) => {
                // The policy was checked by open_secured.
                if let Some(tokens) = tokens
                    && tokens.channel_id() != chunk.secure_channel_id
                {
                    return Err((
                        StatusCode::BAD_TCP_SECURE_CHANNEL_UNKNOWN,
                        "OpenSecureChannel names another channel",
                    ));
                }
            }
            (SecurityHeader::Symmetric(_), None) => {
                return Err((
                    StatusCode::BAD_TCP_SECURE_CHANNEL_UNKNOWN,
                    "no secure channel is open",
                ));
            }
            (SecurityHeader::Symmetric(header), Some(tokens)) => {
                if tokens.channel_id() != chunk.secure_channel_id {
                    return Err((
                        StatusCode::BAD_TCP_SECURE_CHANNEL_UNKNOWN,
                        "unknown secure channel id",
                    ));
                }
                tokens
                    .accept_token(header.token_id, now)
                    .map_err(|status| (status, "unknown or expired security token"))?;
                // Once the client uses the newest token the previous keys go too.
                if tokens.response_token_id() == tokens.current_token_id()
                    && let Some(security) = self.endpoint.security_mut()
                {
                    security.drop_tokens_except(tokens.current_token_id());
                }
            }
        }
        self.endpoint
            .accept_sequence(chunk.sequence_header.sequence_number)
            .map_err(|status| (status, "sequence number out of order"))
    }

    fn handle_message(&mut self, server: &mut Server, now: Instant, message: AssembledMessage) {
        match message.message_type {
            MessageType::OpenSecureChannel => self.handle_open(server, now, &message),
            MessageType::CloseSecureChannel => self.endpoint.close(),
            _ => self.handle_service(server, now, &message),
        }
    }

    fn handle_open(&mut self, server: &mut Server, now: Instant, message: &AssembledMessage) {
        let limits = self.endpoint.decoding_limits();
        let request = match ServiceRequest::decode_message_with_limits(&message.body, limits) {
            Ok(ServiceRequest::OpenSecureChannel(request)) => request,
            Ok(_) => {
                return self.fail(
                    StatusCode::BAD_TCP_MESSAGE_TYPE_INVALID,
                    "an OPN message must carry an OpenSecureChannelRequest",
                );
            }
            Err(error) => return self.fail(error.status_code(), &error.to_string()),
        };
        let policy = self
            .endpoint
            .pending_security()
            .map_or(SecurityPolicy::None, ChannelSecurity::policy);
        let offered = server.config.security.offers(policy, request.security_mode);
        let discovery_only = policy == SecurityPolicy::None
            && request.security_mode == MessageSecurityMode::None
            && !offered;
        let channel_mode = self.endpoint.security().map(ChannelSecurity::mode);
        if (!offered && !discovery_only)
            || (channel_mode.is_some() && channel_mode != Some(request.security_mode))
        {
            return self.fail(
                StatusCode::BAD_SECURITY_MODE_REJECTED,
                &format!(
                    "this server offers no {policy} endpoint with mode {:?}",
                    request.security_mode
                ),
            );
        }
        self.discovery_only = discovery_only;
        let client_nonce = request.client_nonce.as_bytes().unwrap_or_default().to_vec();
        let server_nonce = match policy.algorithms() {
            Some(algorithms) => {
                if client_nonce.len() != algorithms.nonce_length {
                    return self.fail(
                        StatusCode::BAD_NONCE_INVALID,
                        &format!(
                            "the client nonce must have {} bytes",
                            algorithms.nonce_length
                        ),
                    );
                }
                match crate::security::crypto::random_bytes(algorithms.nonce_length) {
                    Ok(nonce) => nonce,
                    Err(error) => return self.fail(error.status_code(), &error.to_string()),
                }
            }
            None => Vec::new(),
        };
        let wall_now = server.wall_clock(now);
        let token = match (request.request_type, self.tokens.as_mut()) {
            (SecurityTokenRequestType::Issue, None) => {
                let channel_id = server.allocate_channel_id();
                let (tokens, token) =
                    ChannelTokens::issue(channel_id, request.requested_lifetime, now, wall_now);
                self.tokens = Some(tokens);
                token
            }
            (SecurityTokenRequestType::Renew, Some(tokens)) => {
                tokens.renew(request.requested_lifetime, now, wall_now)
            }
            (SecurityTokenRequestType::Issue, Some(_)) => {
                return self.fail(
                    StatusCode::BAD_INVALID_STATE,
                    "Issue on a channel that is already open",
                );
            }
            _ => {
                return self.fail(
                    StatusCode::BAD_TCP_SECURE_CHANNEL_UNKNOWN,
                    "Renew without an open channel",
                );
            }
        };
        let channel_id = token.channel_id;
        if let Some(security) = self.endpoint.pending_security_mut() {
            security.set_mode(request.security_mode);
            security.install_token(token.token_id, &client_nonce, &server_nonce, false);
        }
        let security_header = opn_security_header(self.endpoint.pending_security());
        let response = ServiceResponse::from(OpenSecureChannelResponse {
            response_header: ResponseHeader::answering(
                &request.request_header,
                StatusCode::GOOD,
                wall_now,
            ),
            server_protocol_version: PROTOCOL_VERSION,
            security_token: token,
            server_nonce: ByteString::from(server_nonce),
        });
        let mut outgoing = OutgoingMessage::new(
            MessageType::OpenSecureChannel,
            channel_id,
            security_header.to_bytes(),
            message.request_id,
            OutgoingBody::owned(response.encode_message()),
        );
        self.endpoint.limit_body(&mut outgoing);
        self.endpoint.queue(outgoing);
    }

    fn handle_service(&mut self, server: &mut Server, now: Instant, message: &AssembledMessage) {
        let wall_now = server.wall_clock(now);
        let limits = self.endpoint.decoding_limits();
        let request = match ServiceRequest::decode_message_shared(&message.body, limits) {
            Ok(request) => request,
            Err(error) => {
                // Answer with the client's request handle when the header is readable.
                let header = read_request_header(&message.body).unwrap_or_default();
                let fault = fault(&header, error.status_code(), wall_now);
                return self.enqueue_response(message.request_id, fault, wall_now, &header);
            }
        };
        let header = request.request_header().clone();
        if self.discovery_only
            && !matches!(
                request,
                ServiceRequest::GetEndpoints(_) | ServiceRequest::FindServers(_)
            )
        {
            // The channel is unsecured and the server offers no None endpoint.
            let fault = fault(&header, StatusCode::BAD_SECURITY_POLICY_REJECTED, wall_now);
            return self.enqueue_response(message.request_id, fault, wall_now, &header);
        }
        let reply = match self.channel_id() {
            Some(channel_id) => {
                let context = ServiceContext {
                    channel_id,
                    request_id: message.request_id,
                    now,
                    wall_now,
                    security: self.endpoint.security(),
                };
                dispatch(server, &context, request)
            }
            None => Err(StatusCode::BAD_SECURE_CHANNEL_ID_INVALID),
        };
        let body = match reply {
            Ok(Some(body)) => body,
            // A queued Publish is answered later, through the channel's outbox.
            Ok(None) => return,
            Err(status) => fault(&header, status, wall_now),
        };
        self.enqueue_response(message.request_id, body, wall_now, &header);
    }

    /// Queues a MSG response, replaced by a Bad_ResponseTooLarge fault when it exceeds the
    /// client's MaxMessageSize or MaxChunkCount.
    fn enqueue_response(
        &mut self,
        request_id: u32,
        body: OutgoingBody,
        wall_now: DateTime,
        header: &RequestHeader,
    ) {
        let (Some(&limits), Some(tokens)) = (self.endpoint.limits(), &self.tokens) else {
            return;
        };
        let token = tokens.response_token_id().to_bytes();
        let channel_id = tokens.channel_id();
        let message = |body| {
            OutgoingMessage::new(
                MessageType::Message,
                channel_id,
                token.clone(),
                request_id,
                body,
            )
        };
        let mut response = message(body);
        self.endpoint.limit_body(&mut response);
        let too_large = (limits.max_send_message_size != 0
            && response.body_len() > limits.max_send_message_size as usize)
            || (limits.max_send_chunk_count != 0
                && response.chunk_count(limits.send_buffer_size as usize)
                    > limits.max_send_chunk_count as usize);
        if too_large {
            response = message(fault(header, StatusCode::BAD_RESPONSE_TOO_LARGE, wall_now));
            self.endpoint.limit_body(&mut response);
        }
        self.endpoint.queue(response);
    }
}

#[cfg(test)]
mod tests;
