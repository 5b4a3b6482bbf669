//! The secure channel steps of a [`ClientConnection`]: the Acknowledge, OpenSecureChannel
//! (Issue, then Renew once 75 % of the token lifetime has passed) and its response, and the
//! checks of every received chunk (security, channel id, sequence number) before it is
//! reassembled.

use std::time::{Duration, Instant};

use super::{Channel, ClientConnection, Phase};
use crate::channel::{Rejection, asymmetric_header, frame_bytes, header_policy, plain_frame};
use crate::client::ClientEvent;
use crate::client::config::RENEW_AT_PERCENT;
use crate::client::request_table::RequestPurpose;
use crate::encoding::ByteString;
use crate::secure_channel::{AssemblyEvent, SecureChannelChunk, SecurityHeader};
use crate::security::ChannelSecurity;
use crate::services::{
    MessageSecurityMode, OpenSecureChannelRequest, OpenSecureChannelResponse, RequestHeader,
    SecurityTokenRequestType,
};
use crate::transport::{
    Acknowledge, ConnectionMessage, Frame, MessageType, PROTOCOL_VERSION, accept_acknowledge,
};
use crate::types::StatusCode;

impl ClientConnection {
    pub(super) fn handle_acknowledge(&mut self, now: Instant, frame: &Frame) {
        let acknowledge = match Acknowledge::from_frame(frame) {
            Ok(acknowledge) => acknowledge,
            Err(error) => return self.fail(error.status_code(), &error.to_string()),
        };
        let limits = match accept_acknowledge(&self.hello, &acknowledge) {
            Ok(limits) => limits,
            Err(error) => return self.fail(error.status, error.reason),
        };
        self.endpoint.establish(limits);
        self.phase = Phase::OpeningChannel;
        if self.config.security.is_secured() {
            let security = &self.config.security;
            let created = match (&security.identity, &security.server_certificate) {
                (Some(identity), Some(server)) => ChannelSecurity::new(
                    security.policy,
                    security.mode,
                    identity.clone(),
                    server.clone(),
                ),
                _ => Err(StatusCode::BAD_CERTIFICATE_INVALID),
            };
            match created {
                Ok(channel_security) => self.endpoint.set_security(Some(channel_security)),
                Err(status) => {
                    return self.fail(
                        status,
                        "a secured channel needs our certificate and key, the server's certificate and mode sign or encrypt",
                    );
                }
            }
        }
        self.open_channel(now, SecurityTokenRequestType::Issue);
    }

    pub(super) fn open_channel(&mut self, now: Instant, request_type: SecurityTokenRequestType) {
        let nonce_length = self.security().map(|s| s.algorithms().nonce_length);
        self.channel_nonce = match nonce_length {
            Some(length) => match crate::security::crypto::random_bytes(length) {
                Ok(nonce) => nonce,
                Err(error) => return self.fail(error.status_code(), &error.to_string()),
            },
            None => Vec::new(),
        };
        let request = OpenSecureChannelRequest {
            request_header: RequestHeader::default(),
            client_protocol_version: PROTOCOL_VERSION,
            request_type,
            security_mode: self
                .security()
                .map_or(MessageSecurityMode::None, ChannelSecurity::mode),
            client_nonce: ByteString::from(self.channel_nonce.clone()),
            requested_lifetime: self.config.token_lifetime_ms,
        };
        let purpose = match request_type {
            SecurityTokenRequestType::Issue => RequestPurpose::OpenChannel,
            _ => RequestPurpose::RenewChannel,
        };
        if let Some(channel) = self.channel.as_mut() {
            channel.renewing = true;
        }
        let handle = self.allocate_handle();
        let deadline = now + self.config.request_timeout;
        if let Err(error) = self.transmit_request(now, handle, request.into(), purpose, deadline) {
            self.fail(error.status_code(), "OpenSecureChannel could not be sent");
        }
    }

    /// Checks and decrypts a received chunk under the channel's security.
    pub(super) fn open_secured(&mut self, frame: &Frame) -> Result<Frame, Rejection> {
        if frame.header.message_type != MessageType::OpenSecureChannel {
            let plain = self.endpoint.open_symmetric(frame)?;
            // The server uses the newest token: the previous keys can go.
            if let (Some(channel), Some(security)) = (self.channel, self.endpoint.security_mut())
                && frame.body.get(4..8) == Some(&channel.token_id.to_le_bytes()[..])
            {
                security.drop_tokens_except(channel.token_id);
            }
            return Ok(plain);
        }
        let policy = self.config.security.policy;
        let (header, header_end) = asymmetric_header(frame)?;
        if header_policy(&header)? != policy {
            return Err(Rejection::new(
                StatusCode::BAD_SECURITY_POLICY_REJECTED,
                format!("the server answered with another policy than {policy}"),
            ));
        }
        let Some(security) = self.endpoint.security() else {
            return Ok(frame.clone());
        };
        let ours = security.local().certificate.thumbprint();
        if header.receiver_certificate_thumbprint.as_bytes() != Some(&ours[..]) {
            return Err(Rejection::new(
                StatusCode::BAD_SECURITY_CHECKS_FAILED,
                "the OPN response is not for our certificate",
            ));
        }
        if header.sender_certificate.as_bytes() != Some(security.remote().der()) {
            return Err(Rejection::new(
                StatusCode::BAD_SECURITY_CHECKS_FAILED,
                "the server signed with another certificate",
            ));
        }
        plain_frame(security.unsecure_asymmetric(&frame_bytes(frame), header_end)?)
    }

    pub(super) fn handle_chunk(&mut self, now: Instant, frame: &Frame) {
        let frame = match self.open_secured(frame) {
            Ok(frame) => frame,
            Err(rejection) => return self.fail(rejection.status, &rejection.reason),
        };
        let chunk = match SecureChannelChunk::from_frame(&frame) {
            Ok(chunk) => chunk,
            Err(error) => return self.fail(error.status_code(), &error.to_string()),
        };
        let known_channel = self.channel.map(|c| c.id);
        match (&chunk.security_header, known_channel) {
            (SecurityHeader::Symmetric(_), None) => {
                return self.fail(
                    StatusCode::BAD_TCP_SECURE_CHANNEL_UNKNOWN,
                    "a message arrived before the secure channel was open",
                );
            }
            (_, Some(id)) if id != chunk.secure_channel_id => {
                return self.fail(
                    StatusCode::BAD_TCP_SECURE_CHANNEL_UNKNOWN,
                    "a chunk names another secure channel",
                );
            }
            _ => {}
        }
        if let Err(status) = self
            .endpoint
            .accept_sequence(chunk.sequence_header.sequence_number)
        {
            return self.fail(status, "sequence number out of order");
        }
        match self.endpoint.assemble(chunk) {
            Ok(Some(AssemblyEvent::Message(message))) => self.handle_message(now, message),
            Ok(Some(AssemblyEvent::Aborted {
                request_id, error, ..
            })) => {
                if let Some(request) = self.requests.take(request_id) {
                    self.request_failed(now, request, error);
                }
            }
            Ok(None) => {}
            Err(error) => self.fail(error.status_code(), &error.to_string()),
        }
    }

    /// The OpenSecureChannel response: the channel's (new) token, its keys, and on the first
    /// one the session: re-activated when resuming, created otherwise.
    pub(super) fn channel_opened(
        &mut self,
        now: Instant,
        purpose: RequestPurpose,
        open: OpenSecureChannelResponse,
    ) {
        let token = open.security_token;
        let lifetime = match token.revised_lifetime {
            0 => self.config.token_lifetime_ms,
            granted => granted,
        };
        let renew_after = u64::from(lifetime) * u64::from(RENEW_AT_PERCENT) / 100;
        self.channel = Some(Channel {
            id: token.channel_id,
            token_id: token.token_id,
            renew_at: now + Duration::from_millis(renew_after),
            renewing: false,
        });
        if let Some(security) = self.endpoint.security_mut() {
            let server_nonce = open.server_nonce.as_bytes().unwrap_or_default();
            if server_nonce.len() != security.algorithms().nonce_length {
                return self.fail(
                    StatusCode::BAD_NONCE_INVALID,
                    "the server nonce has the wrong length",
                );
            }
            security.install_token(token.token_id, &self.channel_nonce, server_nonce, true);
        }
        if purpose == RequestPurpose::OpenChannel {
            if self.config.discovery_only {
                self.phase = Phase::Active;
                self.events.push_back(ClientEvent::SessionActivated);
                self.flush_waiting(now);
            } else {
                match self.resume.clone() {
                    Some(session) => {
                        self.session_id = session.session_id;
                        self.authentication_token = session.authentication_token;
                        self.server_endpoints = session.server_endpoints;
                        self.max_request_message_size = session.max_request_message_size;
                        self.session_nonces.1 = session.server_nonce;
                        self.activate_session(now);
                    }
                    None => self.create_session(now),
                }
            }
        }
    }
}
