//! CreateSession, ActivateSession and CloseSession (OPC 10000-4 §5.6) under SecurityPolicy
//! None, and the session check every other service goes through.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::config::SESSION_TIMEOUT_RANGE_MS;
use super::discovery_services::{ANONYMOUS_POLICY_ID, USER_NAME_POLICY_ID, endpoints};
use super::server_state::Server;
use super::session::Session;
use crate::encoding::{ByteString, NodeId};
use crate::services::{
    ActivateSessionRequest, ActivateSessionResponse, CloseSessionRequest, CloseSessionResponse,
    CreateSessionRequest, CreateSessionResponse, RequestHeader, ResponseHeader, SignatureData,
    UserIdentityToken,
};
use crate::types::StatusCode;

/// Length of server nonces and authentication tokens in bytes.
pub const NONCE_LENGTH: usize = 32;

/// The session named by `header` on `channel_id`, which must be activated.
pub fn activated_session<'a>(
    server: &'a mut Server,
    header: &RequestHeader,
    channel_id: u32,
    now: Instant,
) -> Result<&'a mut Session, StatusCode> {
    let session = server
        .sessions
        .find(&header.authentication_token, channel_id, now)?;
    if !session.activated {
        return Err(StatusCode::BAD_SESSION_NOT_ACTIVATED);
    }
    Ok(session)
}

/// CreateSession: Bad_TooManySessions past the per-connection cap, or past the server's cap
/// when every session is activated (otherwise the oldest never-activated one makes room).
pub fn create_session(
    server: &mut Server,
    request: &CreateSessionRequest,
    channel_id: u32,
    now: Instant,
    header: ResponseHeader,
) -> Result<CreateSessionResponse, StatusCode> {
    server.sessions.expire(now);
    if server.sessions.count_on_channel(channel_id) >= server.config.max_sessions_per_connection {
        return Err(StatusCode::BAD_TOO_MANY_SESSIONS);
    }
    if server.sessions.len() >= server.config.max_sessions {
        // "To protect against misbehaving Clients and denial of service attacks, the Server
        // shall close the oldest Session that is not activated before reaching the maximum
        // number of supported Sessions" (OPC 10000-4 §5.6.2.1): a storm of sessions that are
        // created and never activated cannot lock out well-behaved clients. Activated
        // sessions are never evicted; with only those, the answer is Bad_TooManySessions.
        match server.sessions.oldest_unactivated() {
            Some(token) => {
                server.sessions.remove(&token);
            }
            None => return Err(StatusCode::BAD_TOO_MANY_SESSIONS),
        }
    }
    let requested = request.requested_session_timeout;
    let timeout_ms = if requested.is_finite() && requested > 0.0 {
        requested.clamp(SESSION_TIMEOUT_RANGE_MS.0, SESSION_TIMEOUT_RANGE_MS.1)
    } else {
        SESSION_TIMEOUT_RANGE_MS.0
    };
    let timeout = Duration::from_millis(timeout_ms as u64);
    let session_id = server.allocate_session_id();
    let authentication_token = NodeId::opaque(1, server.random_bytes(NONCE_LENGTH));
    let server_nonce = ByteString::from(server.random_bytes(NONCE_LENGTH));
    server.sessions.insert(Session {
        session_id: session_id.clone(),
        authentication_token: authentication_token.clone(),
        name: request.session_name.as_str().unwrap_or_default().to_owned(),
        channel_id,
        activated: false,
        user: None,
        timeout,
        deadline: now + timeout,
        continuation_points: HashMap::new(),
        next_continuation_id: 1,
    });
    Ok(CreateSessionResponse {
        response_header: header,
        session_id,
        authentication_token,
        revised_session_timeout: timeout_ms,
        server_nonce,
        server_certificate: ByteString::NULL,
        server_endpoints: endpoints(server),
        server_software_certificates: Vec::new(),
        server_signature: SignatureData::default(),
        max_request_message_size: server.config.connection_limits.max_message_size,
    })
}

/// Checks an identity token against the endpoint's policies and the user list; returns the
/// user name (None for anonymous).
fn authenticate(server: &Server, token: &UserIdentityToken) -> Result<Option<String>, StatusCode> {
    match token {
        UserIdentityToken::Anonymous(anonymous) => {
            let policy = anonymous.policy_id.as_str();
            if !server.config.allow_anonymous {
                return Err(StatusCode::BAD_IDENTITY_TOKEN_REJECTED);
            }
            // A null policy id is what a null ExtensionObject (or a lax client) sends.
            if policy.is_some_and(|p| p != ANONYMOUS_POLICY_ID) {
                return Err(StatusCode::BAD_IDENTITY_TOKEN_INVALID);
            }
            Ok(None)
        }
        UserIdentityToken::UserName(user) => {
            if user.policy_id.as_str() != Some(USER_NAME_POLICY_ID) {
                return Err(StatusCode::BAD_IDENTITY_TOKEN_INVALID);
            }
            if !user.encryption_algorithm.is_null() {
                // Under SecurityPolicy None the password travels in plain text.
                return Err(StatusCode::BAD_IDENTITY_TOKEN_INVALID);
            }
            let name = user.user_name.as_str().unwrap_or_default();
            let password = user.password.as_bytes().unwrap_or_default();
            let known = server.config.users.iter().any(|account| {
                account.user_name == name && account.password.as_bytes() == password
            });
            if known {
                Ok(Some(name.to_owned()))
            } else {
                Err(StatusCode::BAD_USER_ACCESS_DENIED)
            }
        }
        UserIdentityToken::X509(_) | UserIdentityToken::Issued(_) => {
            Err(StatusCode::BAD_IDENTITY_TOKEN_INVALID)
        }
    }
}

/// ActivateSession: authenticates the identity token and activates the session.
pub fn activate_session(
    server: &mut Server,
    request: &ActivateSessionRequest,
    channel_id: u32,
    now: Instant,
    header: ResponseHeader,
) -> Result<ActivateSessionResponse, StatusCode> {
    let token = UserIdentityToken::from_extension_object(&request.user_identity_token)
        .map_err(|_| StatusCode::BAD_IDENTITY_TOKEN_INVALID)?
        .ok_or(StatusCode::BAD_IDENTITY_TOKEN_INVALID)?;
    let auth_token = &request.request_header.authentication_token;
    // The session must exist (and may not move channels unless activated before) before the
    // identity is looked at.
    let (activated, bound_to) = {
        let session = server.sessions.find_any(auth_token, now)?;
        (session.activated, session.channel_id)
    };
    if bound_to != channel_id && !activated {
        return Err(StatusCode::BAD_SECURE_CHANNEL_ID_INVALID);
    }
    let user = authenticate(server, &token)?;
    let server_nonce = ByteString::from(server.random_bytes(NONCE_LENGTH));
    let session = server.sessions.rebind(auth_token, channel_id, now)?;
    session.activated = true;
    session.user = user;
    Ok(ActivateSessionResponse {
        response_header: header,
        server_nonce,
        results: Vec::new(),
        diagnostic_infos: Vec::new(),
    })
}

/// CloseSession: removes the session.
pub fn close_session(
    server: &mut Server,
    request: &CloseSessionRequest,
    channel_id: u32,
    now: Instant,
    header: ResponseHeader,
) -> Result<CloseSessionResponse, StatusCode> {
    let token = &request.request_header.authentication_token;
    server.sessions.find(token, channel_id, now)?;
    server.sessions.remove(token);
    Ok(CloseSessionResponse {
        response_header: header,
    })
}
