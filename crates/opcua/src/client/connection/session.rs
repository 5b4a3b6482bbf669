//! The session steps of a [`ClientConnection`]: CreateSession, ActivateSession (anonymous,
//! user name or X509, signed on a secured channel) and their responses, and the way back to
//! a new session when a resumed one is refused (OPC 10000-4 §5.6.2, §5.6.3).

use std::time::Instant;

use super::{CLIENT_NONCE_LENGTH, ClientConnection, Phase};
use crate::client::ClientEvent;
use crate::client::reconnect::{SessionOutcome, session_is_gone};
use crate::client::request_table::RequestPurpose;
use crate::client::security::{
    client_signature, secure_user_token, user_token_signature, verify_server_signature,
};
use crate::encoding::{ByteString, LocalizedText, NodeId, UaString};
use crate::services::{
    ActivateSessionRequest, ActivateSessionResponse, ApplicationDescription, ApplicationType,
    CloseSessionRequest, CreateSessionRequest, CreateSessionResponse, RequestHeader,
};
use crate::types::StatusCode;

impl ClientConnection {
    pub(super) fn create_session(&mut self, now: Instant) {
        self.phase = Phase::CreatingSession;
        let nonce = match self.security() {
            Some(_) => match crate::security::crypto::random_bytes(CLIENT_NONCE_LENGTH) {
                Ok(nonce) => nonce,
                Err(error) => return self.fail(error.status_code(), &error.to_string()),
            },
            None => self.nonce(),
        };
        self.session_nonces.0 = nonce.clone();
        let client_certificate = match self.security() {
            Some(security) => ByteString::from(security.local().certificate.der()),
            None => ByteString::NULL,
        };
        let request = CreateSessionRequest {
            request_header: RequestHeader::default(),
            client_description: ApplicationDescription {
                application_uri: UaString::from(self.config.application_uri.as_str()),
                product_uri: UaString::from("urn:buildwire"),
                application_name: LocalizedText::new("", &self.config.session_name),
                application_type: ApplicationType::Client,
                gateway_server_uri: UaString::NULL,
                discovery_profile_uri: UaString::NULL,
                discovery_urls: Vec::new(),
            },
            server_uri: UaString::NULL,
            endpoint_url: UaString::from(self.config.endpoint_url.as_str()),
            session_name: UaString::from(self.config.session_name.as_str()),
            client_nonce: ByteString::from(nonce),
            client_certificate,
            requested_session_timeout: self.config.session_timeout_ms,
            max_response_message_size: self.config.connection_limits.max_message_size,
        };
        self.internal_request(now, request.into(), RequestPurpose::CreateSession);
    }

    pub(super) fn activate_session(&mut self, now: Instant) {
        self.phase = Phase::ActivatingSession;
        let security = &self.config.security;
        let mut token = if self.security().is_some() {
            self.config
                .identity
                .token_for_endpoint(security.matching_endpoint(&self.server_endpoints))
        } else {
            self.config.identity.token(&self.server_endpoints)
        };
        let nonce = self.session_nonces.1.clone();
        let allow_cleartext = self.config.allow_cleartext_password;
        if let Err(status) = secure_user_token(
            security,
            &self.server_endpoints,
            &nonce,
            &mut token,
            allow_cleartext,
        ) {
            let reason = if status == StatusCode::BAD_SECURITY_MODE_INSUFFICIENT {
                "the server's UserName policy would carry the password in clear; \
                 allow_cleartext_password permits it"
            } else {
                "the password could not be encrypted for the server"
            };
            return self.fail(status, reason);
        }
        let mut client_signature_data = Default::default();
        let mut user_signature = Default::default();
        if self.security().is_some() {
            let endpoints = &self.server_endpoints;
            let signed = client_signature(security, &nonce).and_then(|signature| {
                let user =
                    user_token_signature(security, endpoints, &nonce, &self.config.identity)?;
                Ok((signature, user))
            });
            match signed {
                Ok((signature, user)) => {
                    client_signature_data = signature;
                    user_signature = user;
                }
                Err(status) => return self.fail(status, "ActivateSession could not be signed"),
            }
        }
        let request = ActivateSessionRequest {
            client_signature: client_signature_data,
            user_identity_token: token.to_extension_object(),
            user_token_signature: user_signature,
            ..ActivateSessionRequest::default()
        };
        self.internal_request(now, request.into(), RequestPurpose::ActivateSession);
    }

    /// The CreateSession response: on a secured channel the server's certificate and
    /// signature are checked; then the session is activated.
    pub(super) fn session_created(&mut self, now: Instant, created: CreateSessionResponse) {
        if self.security().is_some() {
            let expected = self
                .config
                .security
                .server_certificate
                .as_ref()
                .map(|c| c.der());
            let sent = created.server_certificate.as_bytes();
            // The certificate may come as a chain: ours must lead it.
            if !matches!((expected, sent), (Some(e), Some(s)) if s.starts_with(e)) {
                return self.fail(
                    StatusCode::BAD_CERTIFICATE_INVALID,
                    "CreateSession returned another server certificate than the endpoint's",
                );
            }
            if let Err(status) = verify_server_signature(
                &self.config.security,
                &self.session_nonces.0,
                &created.server_signature,
            ) {
                return self.fail(status, "the server's CreateSession signature is invalid");
            }
        }
        self.session_nonces.1 = created.server_nonce.as_bytes().unwrap_or_default().to_vec();
        self.authentication_token = created.authentication_token;
        self.session_id = created.session_id;
        self.server_endpoints = created.server_endpoints;
        self.max_request_message_size = created.max_request_message_size as usize;
        self.activate_session(now);
    }

    /// The ActivateSession response: the session is active and the waiting requests go out.
    pub(super) fn session_activated(&mut self, now: Instant, activated: ActivateSessionResponse) {
        // The nonce the next ActivateSession (a re-activation on a new channel) signs
        // with (OPC 10000-4 §5.6.3.2: each ActivateSession response carries a new one).
        if let Some(nonce) = activated.server_nonce.as_bytes()
            && !nonce.is_empty()
        {
            self.session_nonces.1 = nonce.to_vec();
        }
        self.outcome = Some(match (&self.resume, self.outcome) {
            (Some(_), _) => SessionOutcome::Reactivated,
            (None, Some(SessionOutcome::Recreated)) => SessionOutcome::Recreated,
            (None, _) => SessionOutcome::Created,
        });
        self.resume = None;
        self.phase = Phase::Active;
        self.events.push_back(ClientEvent::SessionActivated);
        self.flush_waiting(now);
    }

    /// The server refused to re-activate the resumed session: a new one is created (after
    /// asking to close the old one when it may still exist).
    pub(super) fn resume_refused(&mut self, now: Instant, status: StatusCode) {
        self.resume = None;
        if !session_is_gone(status) {
            // The old session might still exist: ask to close it rather than leave it
            // to time out beside the new one. A server that binds the session to its
            // old channel refuses (OPC 10000-4 §5.6.4); then it times out there.
            let request = CloseSessionRequest {
                request_header: RequestHeader::default(),
                delete_subscriptions: true,
            };
            self.internal_request(now, request.into(), RequestPurpose::CloseStaleSession);
            if self.is_closed() {
                return;
            }
        }
        self.authentication_token = NodeId::default();
        self.session_id = NodeId::default();
        self.outcome = Some(SessionOutcome::Recreated);
        self.create_session(now);
    }

    /// Nonce bytes for CreateSession (xorshift64*; SecurityPolicy None needs no secrecy).
    fn nonce(&mut self) -> Vec<u8> {
        let mut out = Vec::with_capacity(CLIENT_NONCE_LENGTH);
        while out.len() < CLIENT_NONCE_LENGTH {
            let mut x = self.nonce_state;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.nonce_state = x;
            out.extend_from_slice(&x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
        }
        out
    }
}
