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
//! under SecurityPolicy None; MSG chunks reassembled by the
//! [`MessageAssembler`] and dispatched to the service handlers; CloseSecureChannel ends the
//! connection. Every protocol violation sends an ERR message with its Bad_ status and
//! closes; service-level failures are answered with a ServiceFault. Responses are cut into
//! chunks of the client's receive buffer size as they are polled.

use std::collections::VecDeque;
use std::time::Instant;

use bytes::BytesMut;

use super::attribute_services::{read_one, write_one};
use super::channel_state::{ChannelState, ReceiveSequence, SendSequence};
use super::discovery_services::{find_servers, get_endpoints};
use super::method_services::{call_one, encode_call_response};
use super::outgoing::{OutgoingBody, OutgoingMessage};
use super::security::{
    Rejection, limit_body, open_server_opn, open_symmetric, unix_seconds, write_secured_chunk,
};
use super::server_state::Server;
use super::session_services::{activate_session, activated_session, close_session, create_session};
use super::subscriptions::TickScope;
use super::subscriptions::services::handle as subscription_service;
use super::view_services::{browse_next_one, browse_references, page_result, translate_path};
use crate::encoding::{BinaryEncodable, ByteString, DateTime, DecodingLimits, NodeId, Reader};
use crate::secure_channel::{
    AssembledMessage, AssemblerRole, AssemblyEvent, AsymmetricSecurityHeader, MessageAssembler,
    SecureChannelChunk, SecurityHeader,
};
use crate::security::{ChannelSecurity, SecurityPolicy};
use crate::services::{
    BrowseNextResponse, BrowseResponse, BrowseResult, CallRequest, MessageSecurityMode,
    OpenSecureChannelResponse, ReadResponse, RequestHeader, ResponseHeader,
    SecurityTokenRequestType, ServiceFault, ServiceRequest, ServiceResponse, TimestampsToReturn,
    TranslateBrowsePathsToNodeIdsResponse, WriteResponse,
};
use crate::transport::{
    ChunkSink, ConnectionMessage, ErrorMessage, Frame, FrameDecoder, Hello, MessageType,
    NegotiatedLimits, PROTOCOL_VERSION, TransmitBuffer, acknowledge_hello,
};
use crate::types::StatusCode;

/// Why a connection closed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CloseReason {
    /// The client sent CloseSecureChannel.
    ClosedByClient,
    /// An error; an ERR message with `status` was queued.
    Error {
        /// The status sent in the ERR message.
        status: StatusCode,
        /// Human-readable reason.
        reason: String,
    },
}

/// The negotiated state after the Hello.
#[derive(Debug)]
struct Established {
    limits: NegotiatedLimits,
    assembler: MessageAssembler,
}

/// One client connection.
#[derive(Debug)]
pub struct ServerConnection {
    decoder: FrameDecoder,
    established: Option<Established>,
    channel: Option<ChannelState>,
    receive_sequence: ReceiveSequence,
    send_sequence: SendSequence,
    /// The Acknowledge, sent before any chunk.
    immediate: VecDeque<Vec<u8>>,
    outgoing: VecDeque<OutgoingMessage>,
    /// The ERR message, sent after the responses queued before the failure.
    final_error: Option<Vec<u8>>,
    close_reason: Option<CloseReason>,
    decoding_limits: DecodingLimits,
    /// The channel's security (None under SecurityPolicy None).
    security: Option<ChannelSecurity>,
    /// The security of the OPN being handled, until its response is queued.
    pending_security: Option<ChannelSecurity>,
    /// Client certificates refused as untrusted, for the driver to store in `rejected/`.
    rejected_certificates: Vec<Vec<u8>>,
    /// A SecurityPolicy None channel on a server without a None endpoint: discovery only.
    discovery_only: bool,
    /// When this channel's subscriptions need a tick (see `handle_timeout_with`).
    subscription_deadline: Option<Instant>,
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

impl ServerConnection {
    /// A connection waiting for the client's Hello.
    pub fn new(server: &Server) -> Self {
        let limits = &server.config.connection_limits;
        Self {
            decoder: FrameDecoder::new(limits.receive_buffer_size),
            established: None,
            channel: None,
            receive_sequence: ReceiveSequence::default(),
            send_sequence: SendSequence::default(),
            immediate: VecDeque::new(),
            outgoing: VecDeque::new(),
            final_error: None,
            close_reason: None,
            decoding_limits: DecodingLimits::default(),
            security: None,
            pending_security: None,
            rejected_certificates: Vec::new(),
            discovery_only: false,
            subscription_deadline: None,
        }
    }

    /// The channel's security policy and mode, once a channel is open.
    pub fn security(&self) -> Option<&ChannelSecurity> {
        self.security.as_ref()
    }

    /// Client certificates refused as untrusted since the last call (DER), for the driver to
    /// store in the PKI's `rejected/` folder.
    pub fn take_rejected_certificates(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.rejected_certificates)
    }

    /// True once the connection is closed (drain [`poll_transmit`](Self::poll_transmit) first).
    pub fn is_closed(&self) -> bool {
        self.close_reason.is_some()
    }

    /// Why the connection closed.
    pub fn close_reason(&self) -> Option<&CloseReason> {
        self.close_reason.as_ref()
    }

    /// The secure channel id, once a channel is open.
    pub fn channel_id(&self) -> Option<u32> {
        self.channel.as_ref().map(ChannelState::channel_id)
    }

    /// The limits agreed in the Hello / Acknowledge exchange.
    pub fn negotiated_limits(&self) -> Option<&NegotiatedLimits> {
        self.established.as_ref().map(|e| &e.limits)
    }

    /// Feeds bytes read from the socket (any split); they are copied into the receive buffer.
    /// Drivers that can read straight into [`read_buffer`](Self::read_buffer) avoid the copy.
    pub fn handle_bytes(&mut self, server: &mut Server, now: Instant, bytes: &[u8]) {
        if self.is_closed() {
            return;
        }
        self.decoder.push(bytes);
        self.handle_received(server, now);
    }

    /// The receive buffer, with room for the rest of the frame in progress: append what the
    /// socket returns (e.g. tokio's `read_buf`), then call
    /// [`handle_received`](Self::handle_received). Only append. Once the connection is closed
    /// the buffer is emptied each time, so a driver that goes on reading holds nothing.
    pub fn read_buffer(&mut self) -> &mut BytesMut {
        let buffer = self.decoder.read_buffer();
        if self.close_reason.is_some() {
            buffer.clear();
        }
        buffer
    }

    /// Handles the bytes appended to [`read_buffer`](Self::read_buffer).
    pub fn handle_received(&mut self, server: &mut Server, now: Instant) {
        if self.is_closed() {
            return;
        }
        while !self.is_closed() {
            match self.decoder.next_frame() {
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
        }
        self.subscription_deadline = None;
    }

    /// The next chunk or connection message to write, if any.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        self.write_next(&mut out).then_some(out)
    }

    /// Appends whole chunks to `out` until it grew by at least `max_bytes` or nothing is
    /// pending; returns the number of bytes appended. Avoids one allocation per chunk.
    pub fn transmit_into(&mut self, out: &mut Vec<u8>, max_bytes: usize) -> usize {
        self.transmit_to(out, max_bytes)
    }

    /// As [`transmit_into`](Self::transmit_into), into a gather list: shared payloads (the
    /// getData buffer) are referenced, not copied, and the driver writes them with one
    /// vectored write.
    pub fn transmit_buffered(&mut self, out: &mut TransmitBuffer, max_bytes: usize) -> usize {
        self.transmit_to(out, max_bytes)
    }

    fn transmit_to<S: ChunkSink>(&mut self, out: &mut S, max_bytes: usize) -> usize {
        let start = out.len();
        while out.len() - start < max_bytes && self.write_next(out) {}
        out.len() - start
    }

    fn write_next<S: ChunkSink>(&mut self, out: &mut S) -> bool {
        if let Some(bytes) = self.immediate.pop_front() {
            out.put_slice(&bytes);
            return true;
        }
        let chunk_size = self
            .established
            .as_ref()
            .map_or(0, |e| e.limits.send_buffer_size as usize);
        let Some(message) = self.outgoing.front_mut() else {
            return match self.final_error.take() {
                Some(bytes) => {
                    out.put_slice(&bytes);
                    true
                }
                None => false,
            };
        };
        let sequence_number = self.send_sequence.next_number();
        let secured = match message.message_type() {
            MessageType::OpenSecureChannel => {
                self.pending_security.as_ref().or(self.security.as_ref())
            }
            _ => self.security.as_ref(),
        };
        let written = match secured {
            Some(security) => {
                match write_secured_chunk(security, message, chunk_size, sequence_number, out) {
                    Ok(written) => written,
                    Err(error) => {
                        self.outgoing.clear();
                        self.fail(error.status_code(), &error.to_string());
                        return self.write_next(out);
                    }
                }
            }
            None => message.write_next_chunk(chunk_size, sequence_number, out),
        };
        if message.is_done() {
            if message.message_type() == MessageType::OpenSecureChannel
                && let Some(security) = self.pending_security.take()
            {
                self.security = Some(security);
            }
            self.outgoing.pop_front();
        }
        written || self.write_next(out)
    }

    /// When [`handle_timeout`](Self::handle_timeout) (or
    /// [`handle_timeout_with`](Self::handle_timeout_with)) must be called: the expiry of the
    /// channel's security token or the next tick of its subscriptions.
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.is_closed() {
            return None;
        }
        let token = self.channel.as_ref().map(ChannelState::expires_at);
        match (token, self.subscription_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Closes the channel if its token expired without renewal.
    pub fn handle_timeout(&mut self, now: Instant) {
        let expired = self.channel.as_ref().is_some_and(|c| now >= c.expires_at());
        if expired && !self.is_closed() {
            self.fail(
                StatusCode::BAD_SECURE_CHANNEL_CLOSED,
                "the security token expired without renewal",
            );
        }
    }

    /// Queues an ERR message (after the responses already queued) and closes.
    fn fail(&mut self, status: StatusCode, reason: &str) {
        if self.is_closed() {
            return;
        }
        self.final_error = Some(ErrorMessage::new(status, reason).to_message_bytes());
        self.close_reason = Some(CloseReason::Error {
            status,
            reason: reason.to_owned(),
        });
    }

    fn handle_frame(&mut self, server: &mut Server, now: Instant, frame: &Frame) {
        if self.established.is_none() {
            self.handle_hello(server, frame);
            return;
        }
        let frame = match self.open_secured(server, now, frame) {
            Ok(frame) => frame,
            Err(rejection) => {
                self.rejected_certificates
                    .extend(rejection.rejected_certificate);
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
        let Some(established) = self.established.as_mut() else {
            return;
        };
        match established.assembler.push(chunk) {
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
                    self.security.as_ref(),
                    frame,
                    now_unix,
                )?;
                if self.channel.is_some() && self.security.is_none() && security.is_some() {
                    return Err(Rejection {
                        status: StatusCode::BAD_SECURITY_POLICY_REJECTED,
                        reason: "a renewal must keep the channel's security policy".into(),
                        rejected_certificate: None,
                    });
                }
                self.pending_security = security;
                Ok(plain)
            }
            _ => match &self.security {
                Some(security) => open_symmetric(security, frame),
                None => Ok(frame.clone()),
            },
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
                self.immediate.push_back(acknowledge.to_message_bytes());
                self.decoder.set_max_frame_size(limits.receive_buffer_size);
                self.established = Some(Established {
                    limits,
                    assembler: MessageAssembler::new(
                        AssemblerRole::Server,
                        limits.max_receive_message_size,
                        limits.max_receive_chunk_count,
                    ),
                });
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
        match (&chunk.security_header, self.channel.as_mut()) {
            (SecurityHeader::Asymmetric(_), channel) => {
                // The policy was checked by open_secured.
                if let Some(channel) = channel
                    && channel.channel_id() != chunk.secure_channel_id
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
            (SecurityHeader::Symmetric(header), Some(channel)) => {
                if channel.channel_id() != chunk.secure_channel_id {
                    return Err((
                        StatusCode::BAD_TCP_SECURE_CHANNEL_UNKNOWN,
                        "unknown secure channel id",
                    ));
                }
                channel
                    .accept_token(header.token_id, now)
                    .map_err(|status| (status, "unknown or expired security token"))?;
                // Once the client uses the newest token the previous keys go too.
                if channel.response_token_id() == channel.current_token_id()
                    && let Some(security) = self.security.as_mut()
                {
                    security.drop_tokens_except(channel.current_token_id());
                }
            }
        }
        self.receive_sequence
            .accept(chunk.sequence_header.sequence_number)
            .map_err(|status| (status, "sequence number out of order"))
    }

    fn handle_message(&mut self, server: &mut Server, now: Instant, message: AssembledMessage) {
        match message.message_type {
            MessageType::OpenSecureChannel => self.handle_open(server, now, &message),
            MessageType::CloseSecureChannel => {
                self.close_reason = Some(CloseReason::ClosedByClient);
            }
            _ => self.handle_service(server, now, &message),
        }
    }

    fn handle_open(&mut self, server: &mut Server, now: Instant, message: &AssembledMessage) {
        let request =
            match ServiceRequest::decode_message_with_limits(&message.body, self.decoding_limits) {
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
            .pending_security
            .as_ref()
            .map_or(SecurityPolicy::None, ChannelSecurity::policy);
        let discovery_only = policy == SecurityPolicy::None
            && request.security_mode == MessageSecurityMode::None
            && !server.config.security.offers(policy, request.security_mode);
        if (!server.config.security.offers(policy, request.security_mode) && !discovery_only)
            || (self.security.is_some()
                && self.security.as_ref().map(ChannelSecurity::mode) != Some(request.security_mode))
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
        let token = match (request.request_type, self.channel.as_mut()) {
            (SecurityTokenRequestType::Issue, None) => {
                let channel_id = server.allocate_channel_id();
                let (channel, token) =
                    ChannelState::issue(channel_id, request.requested_lifetime, now, wall_now);
                self.channel = Some(channel);
                token
            }
            (SecurityTokenRequestType::Renew, Some(channel)) => {
                channel.renew(request.requested_lifetime, now, wall_now)
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
        if let Some(security) = self.pending_security.as_mut() {
            security.set_mode(request.security_mode);
            security.install_token(token.token_id, &client_nonce, &server_nonce, false);
        }
        let security_header = match &self.pending_security {
            Some(security) => AsymmetricSecurityHeader {
                security_policy_uri: security.policy().uri().into(),
                sender_certificate: ByteString::from(security.local().certificate.der()),
                receiver_certificate_thumbprint: ByteString::from(
                    security.remote().thumbprint().as_slice(),
                ),
            },
            None => AsymmetricSecurityHeader::none(),
        };
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
        if let (Some(security), Some(established)) = (&self.pending_security, &self.established) {
            limit_body(
                security,
                &mut outgoing,
                established.limits.send_buffer_size as usize,
            );
        }
        self.outgoing.push_back(outgoing);
    }

    fn handle_service(&mut self, server: &mut Server, now: Instant, message: &AssembledMessage) {
        let wall_now = server.wall_clock(now);
        let request =
            match ServiceRequest::decode_message_shared(&message.body, self.decoding_limits) {
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
            Some(channel_id) if is_subscription_service(&request) => {
                // A queued Publish is answered later, through the channel's outbox.
                match subscription_service(server, channel_id, message.request_id, now, request) {
                    Ok(Some(response)) => Ok(OutgoingBody::owned(response.encode_message())),
                    Ok(None) => return,
                    Err(status) => Err(status),
                }
            }
            Some(channel_id) => dispatch(
                server,
                channel_id,
                now,
                request,
                wall_now,
                self.security.as_ref(),
            ),
            None => Err(StatusCode::BAD_SECURE_CHANNEL_ID_INVALID),
        };
        let body = reply.unwrap_or_else(|status| fault(&header, status, wall_now));
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
        let (Some(established), Some(channel)) = (&self.established, &self.channel) else {
            return;
        };
        let limits = established.limits;
        let token = channel.response_token_id().to_bytes();
        let channel_id = channel.channel_id();
        let mut message = OutgoingMessage::new(
            MessageType::Message,
            channel_id,
            token.clone(),
            request_id,
            body,
        );
        let chunk_size = limits.send_buffer_size as usize;
        if let Some(security) = &self.security {
            limit_body(security, &mut message, chunk_size);
        }
        let too_large = (limits.max_send_message_size != 0
            && message.body_len() > limits.max_send_message_size as usize)
            || (limits.max_send_chunk_count != 0
                && message.chunk_count(limits.send_buffer_size as usize)
                    > limits.max_send_chunk_count as usize);
        let message = if too_large {
            let mut message = OutgoingMessage::new(
                MessageType::Message,
                channel_id,
                token,
                request_id,
                fault(header, StatusCode::BAD_RESPONSE_TOO_LARGE, wall_now),
            );
            if let Some(security) = &self.security {
                limit_body(security, &mut message, chunk_size);
            }
            message
        } else {
            message
        };
        self.outgoing.push_back(message);
    }
}

/// True for the services of the Subscription and MonitoredItem service sets.
fn is_subscription_service(request: &ServiceRequest) -> bool {
    matches!(
        request,
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
            | ServiceRequest::DeleteMonitoredItems(_)
    )
}

/// The RequestHeader of an undecodable request, if its first fields are readable.
fn read_request_header(body: &[u8]) -> Option<RequestHeader> {
    let mut reader = Reader::new(body);
    NodeId::decode(&mut reader).ok()?;
    RequestHeader::decode(&mut reader).ok()
}

fn fault(header: &RequestHeader, status: StatusCode, wall_now: DateTime) -> OutgoingBody {
    let fault = ServiceResponse::from(ServiceFault {
        response_header: ResponseHeader::answering(header, status, wall_now),
    });
    OutgoingBody::owned(fault.encode_message())
}

/// Runs one decoded service request.
fn dispatch(
    server: &mut Server,
    channel_id: u32,
    now: Instant,
    request: ServiceRequest,
    wall_now: DateTime,
    security: Option<&ChannelSecurity>,
) -> Result<OutgoingBody, StatusCode> {
    let ok = |header: &RequestHeader| ResponseHeader::answering(header, StatusCode::GOOD, wall_now);
    let limits = server.config.operation_limits;
    let response: ServiceResponse = match request {
        ServiceRequest::GetEndpoints(request) => {
            get_endpoints(server, &request, ok(&request.request_header)).into()
        }
        ServiceRequest::FindServers(request) => {
            find_servers(server, &request, ok(&request.request_header)).into()
        }
        ServiceRequest::CreateSession(request) => create_session(
            server,
            &request,
            channel_id,
            now,
            ok(&request.request_header),
            security,
        )?
        .into(),
        ServiceRequest::ActivateSession(request) => activate_session(
            server,
            &request,
            channel_id,
            now,
            ok(&request.request_header),
            security,
        )?
        .into(),
        ServiceRequest::CloseSession(request) => {
            let session_id = request
                .delete_subscriptions
                .then(|| {
                    server
                        .sessions
                        .find_any(&request.request_header.authentication_token, now)
                })
                .and_then(Result::ok)
                .map(|session| session.session_id.clone());
            let response = close_session(
                server,
                &request,
                channel_id,
                now,
                ok(&request.request_header),
            )?;
            if let Some(session_id) = session_id {
                server.subscriptions.delete_session(&session_id);
            }
            response.into()
        }
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
                response_header: ok(&request.request_header),
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
            activated_session(server, &request.request_header, channel_id, now)?;
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
                }
            }
            WriteResponse {
                response_header: ok(&request.request_header),
                results,
                diagnostic_infos: Vec::new(),
            }
            .into()
        }
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
                response_header: ok(&request.request_header),
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
                response_header: ok(&request.request_header),
                results,
                diagnostic_infos: Vec::new(),
            }
            .into()
        }
        ServiceRequest::TranslateBrowsePathsToNodeIds(request) => {
            activated_session(server, &request.request_header, channel_id, now)?;
            check_count(request.browse_paths.len(), limits.max_nodes_per_translate)?;
            TranslateBrowsePathsToNodeIdsResponse {
                response_header: ok(&request.request_header),
                results: request
                    .browse_paths
                    .iter()
                    .map(|path| translate_path(&server.address_space, path))
                    .collect(),
                diagnostic_infos: Vec::new(),
            }
            .into()
        }
        ServiceRequest::Call(request) => return call(server, channel_id, now, &request, ok),
        request @ (ServiceRequest::CreateSubscription(_)
        | ServiceRequest::ModifySubscription(_)
        | ServiceRequest::SetPublishingMode(_)
        | ServiceRequest::Publish(_)
        | ServiceRequest::Republish(_)
        | ServiceRequest::TransferSubscriptions(_)
        | ServiceRequest::DeleteSubscriptions(_)
        | ServiceRequest::CreateMonitoredItems(_)
        | ServiceRequest::ModifyMonitoredItems(_)
        | ServiceRequest::SetMonitoringMode(_)
        | ServiceRequest::DeleteMonitoredItems(_)) => {
            // Handled by `subscription_service` before dispatch.
            let _ = request;
            return Err(StatusCode::BAD_SERVICE_UNSUPPORTED);
        }
        ServiceRequest::OpenSecureChannel(_) | ServiceRequest::CloseSecureChannel(_) => {
            return Err(StatusCode::BAD_SERVICE_UNSUPPORTED);
        }
    };
    Ok(OutgoingBody::owned(response.encode_message()))
}

fn call(
    server: &mut Server,
    channel_id: u32,
    now: Instant,
    request: &CallRequest,
    ok: impl Fn(&RequestHeader) -> ResponseHeader,
) -> Result<OutgoingBody, StatusCode> {
    activated_session(server, &request.request_header, channel_id, now)?;
    check_count(
        request.methods_to_call.len(),
        server.config.operation_limits.max_nodes_per_method_call,
    )?;
    let outcomes = request
        .methods_to_call
        .iter()
        .map(|method| call_one(server, method))
        .collect();
    Ok(encode_call_response(&ok(&request.request_header), outcomes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secure_channel::SequenceHeader;
    use crate::server::ServerConfig;
    use crate::services::OpenSecureChannelRequest;
    use crate::transport::{Acknowledge, ChunkType, ConnectionLimits};
    use proptest::prelude::*;

    fn preamble() -> Vec<u8> {
        let limits = ConnectionLimits {
            receive_buffer_size: 8192,
            send_buffer_size: 8192,
            ..ConnectionLimits::default()
        };
        let mut bytes = limits.hello("opc.tcp://x/").to_message_bytes();
        let open = ServiceRequest::from(OpenSecureChannelRequest {
            request_header: RequestHeader::default(),
            client_protocol_version: 0,
            request_type: SecurityTokenRequestType::Issue,
            security_mode: MessageSecurityMode::None,
            client_nonce: ByteString::NULL,
            requested_lifetime: 1,
        });
        let chunk = SecureChannelChunk {
            message_type: MessageType::OpenSecureChannel,
            chunk_type: ChunkType::Final,
            secure_channel_id: 0,
            security_header: SecurityHeader::Asymmetric(AsymmetricSecurityHeader::none()),
            sequence_header: SequenceHeader {
                sequence_number: 1,
                request_id: 1,
            },
            body: open.encode_message().into(),
        };
        bytes.extend_from_slice(&chunk.to_bytes());
        bytes
    }

    fn run(stream: &[u8], piece: usize, now: Instant) -> (Vec<u8>, bool) {
        let mut server = Server::new(ServerConfig::default(), now).unwrap();
        let mut connection = ServerConnection::new(&server);
        let mut output = Vec::new();
        for part in stream.chunks(piece.max(1)) {
            connection.handle_bytes(&mut server, now, part);
            connection.transmit_into(&mut output, usize::MAX);
        }
        (output, connection.is_closed())
    }

    /// As `run`, appending to the connection's own receive buffer, with `first` bytes in the
    /// first read and the rest in one more; output gathered in a TransmitBuffer.
    fn run_direct(stream: &[u8], first: usize, now: Instant) -> (Vec<u8>, bool) {
        let mut server = Server::new(ServerConfig::default(), now).unwrap();
        let mut connection = ServerConnection::new(&server);
        let mut gathered = TransmitBuffer::new();
        let (head, tail) = stream.split_at(first.min(stream.len()));
        for part in [head, tail] {
            connection.read_buffer().extend_from_slice(part);
            connection.handle_received(&mut server, now);
            connection.transmit_buffered(&mut gathered, usize::MAX);
        }
        (gathered.to_vec(), connection.is_closed())
    }

    #[test]
    fn read_buffer_at_every_split_offset_matches_handle_bytes() {
        let now = Instant::now();
        let stream = preamble();
        let expected = run(&stream, stream.len(), now);
        assert!(!expected.1);
        for first in 0..=stream.len() {
            assert_eq!(
                run_direct(&stream, first, now),
                expected,
                "split at {first}"
            );
        }
        // A violation found in the receive buffer closes with the same ERR as handle_bytes.
        let mut bad = stream.clone();
        bad.extend_from_slice(b"GETF\x10\x00\x00\x00");
        let expected = run(&bad, bad.len(), now);
        assert!(expected.1);
        assert_eq!(run_direct(&bad, stream.len() + 2, now), expected);
    }

    #[test]
    fn hello_then_open_gives_ack_then_opn() {
        let now = Instant::now();
        let (output, closed) = run(&preamble(), 5, now);
        assert!(!closed);
        let mut decoder = FrameDecoder::new(8192);
        decoder.push(&output);
        let ack = Acknowledge::from_frame(&decoder.next_frame().unwrap().unwrap()).unwrap();
        assert_eq!(ack.receive_buffer_size, 8192);
        let opn = SecureChannelChunk::from_frame(&decoder.next_frame().unwrap().unwrap()).unwrap();
        assert_eq!(
            opn.sequence_header,
            SequenceHeader {
                sequence_number: 1,
                request_id: 1
            }
        );
        let ServiceResponse::OpenSecureChannel(response) =
            ServiceResponse::decode_message(&opn.body).unwrap()
        else {
            panic!("not an OPN response");
        };
        // The lifetime is raised to the 10 s minimum.
        assert_eq!(response.security_token.revised_lifetime, 10_000);
        assert_eq!(response.security_token.channel_id, opn.secure_channel_id);
        assert_eq!(decoder.next_frame().unwrap(), None);
    }

    #[test]
    fn acknowledge_and_error_bytes() {
        // OPC 10000-6 §7.1.2.4: "ACK" "F", MessageSize, then ProtocolVersion,
        // ReceiveBufferSize, SendBufferSize, MaxMessageSize, MaxChunkCount (all UInt32).
        let now = Instant::now();
        let stream = preamble();
        let hello_len = u32::from_le_bytes([stream[4], stream[5], stream[6], stream[7]]) as usize;
        let (output, _) = run(&stream[..hello_len], hello_len, now);
        let mut expected = b"ACKF".to_vec();
        for value in [
            28u32,
            0,
            8192,
            8192,
            super::super::config::DEFAULT_MAX_MESSAGE_SIZE,
            4096,
        ] {
            expected.extend_from_slice(&value.to_le_bytes());
        }
        assert_eq!(output, expected);
        // §7.1.2.5: "ERR" "F", MessageSize, Error (UInt32), Reason (String).
        let (output, closed) = run(b"HELF\x07\x00\x00\x00", 8, now);
        assert!(closed);
        let reason = "message size 7 is smaller than the 8-byte header";
        let mut expected = b"ERRF".to_vec();
        expected.extend_from_slice(&(16 + reason.len() as u32).to_le_bytes());
        expected.extend_from_slice(&StatusCode::BAD_DECODING_ERROR.bits().to_le_bytes());
        expected.extend_from_slice(&(reason.len() as u32).to_le_bytes());
        expected.extend_from_slice(reason.as_bytes());
        assert_eq!(output, expected);
    }

    #[test]
    fn second_hello_is_rejected() {
        let now = Instant::now();
        let mut stream = preamble();
        stream.extend_from_slice(
            &ConnectionLimits::default()
                .hello("opc.tcp://x/")
                .to_message_bytes(),
        );
        let (output, closed) = run(&stream, stream.len(), now);
        assert!(closed);
        let mut decoder = FrameDecoder::new(8192);
        decoder.push(&output);
        let mut last = None;
        while let Some(frame) = decoder.next_frame().unwrap() {
            last = Some(frame);
        }
        let error = ErrorMessage::from_frame(&last.unwrap()).unwrap();
        assert_eq!(error.error, StatusCode::BAD_TCP_MESSAGE_TYPE_INVALID);
    }

    proptest! {
        #[test]
        fn arbitrary_input_never_panics_and_is_split_independent(
            tail in proptest::collection::vec(any::<u8>(), 0..512),
            with_preamble: bool,
            piece in 1usize..64,
        ) {
            let now = Instant::now();
            let mut stream = if with_preamble { preamble() } else { Vec::new() };
            stream.extend_from_slice(&tail);
            let whole = run(&stream, stream.len(), now);
            let split = run(&stream, piece, now);
            prop_assert_eq!(&whole, &split);
            let mut decoder = FrameDecoder::new(u32::MAX);
            decoder.push(&whole.0);
            while let Some(frame) = decoder.next_frame().unwrap() {
                prop_assert!(frame.header.message_size <= 8192 || !with_preamble);
                match frame.header.message_type {
                    MessageType::Acknowledge => { Acknowledge::from_frame(&frame).unwrap(); }
                    MessageType::Error => { ErrorMessage::from_frame(&frame).unwrap(); }
                    _ => { SecureChannelChunk::from_frame(&frame).unwrap(); }
                }
            }
        }
    }
}
