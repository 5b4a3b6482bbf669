//! CreateSession, ActivateSession and CloseSession (OPC 10000-4 §5.6) under SecurityPolicy
//! None, and the session check every other service goes through.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::config::SESSION_TIMEOUT_RANGE_MS;
use super::discovery_services::{
    ANONYMOUS_POLICY_ID, NONE_ENDPOINT_USER_TOKEN_POLICY, USER_NAME_POLICY_ID, X509_POLICY_ID,
    endpoints,
};
use super::security::{Refusal, refused_certificate_detail, unix_seconds};
use super::server_state::Server;
use super::session::Session;
use crate::encoding::{ByteString, NodeId};
use crate::security::identity::{
    decrypt_user_password, sign_certificate_and_nonce, verify_certificate_and_nonce,
};
use crate::security::{Certificate, ChannelSecurity};
use crate::services::{
    ActivateSessionRequest, ActivateSessionResponse, CloseSessionRequest, CloseSessionResponse,
    CreateSessionRequest, CreateSessionResponse, RequestHeader, ResponseHeader, SignatureData,
    UserIdentityToken, UserNameIdentityToken,
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

/// A nonce for a session: from the system's secure generator on a secured channel, and on
/// any channel of a server with a certificate (a UserName secret encrypted over a None
/// channel ends with the nonce, which must not be guessable).
fn session_nonce(
    server: &mut Server,
    security: Option<&ChannelSecurity>,
) -> Result<Vec<u8>, StatusCode> {
    if security.is_some() || server.config.security.identity.is_some() {
        crate::security::crypto::random_bytes(NONCE_LENGTH).map_err(|e| e.status_code())
    } else {
        Ok(server.random_bytes(NONCE_LENGTH))
    }
}

/// CreateSession: Bad_TooManySessions past the per-connection cap, or past the server's cap
/// when every session is activated (otherwise the oldest never-activated one makes room). On a secured
/// channel the client certificate must be the channel's and carry the client's application
/// URI, and the response carries our certificate and our signature over the client's
/// certificate and nonce (OPC 10000-4 §5.6.2).
pub fn create_session(
    server: &mut Server,
    request: &CreateSessionRequest,
    channel_id: u32,
    now: Instant,
    header: ResponseHeader,
    security: Option<&ChannelSecurity>,
) -> Result<CreateSessionResponse, StatusCode> {
    let mut server_signature = SignatureData::default();
    let mut server_certificate = ByteString::NULL;
    if let Some(security) = security {
        let sent = request.client_certificate.as_bytes().unwrap_or_default();
        let certificate =
            Certificate::from_der(sent).map_err(|_| StatusCode::BAD_CERTIFICATE_INVALID)?;
        if &certificate != security.remote() {
            return Err(StatusCode::BAD_CERTIFICATE_INVALID);
        }
        let now_unix = unix_seconds(server.wall_clock(now));
        certificate.check(
            security.policy(),
            now_unix,
            request.client_description.application_uri.as_str(),
        )?;
        let client_nonce = request.client_nonce.as_bytes().unwrap_or_default();
        if client_nonce.len() < NONCE_LENGTH {
            return Err(StatusCode::BAD_NONCE_INVALID);
        }
        let local = security.local();
        server_signature = sign_certificate_and_nonce(
            security.policy(),
            &local.private_key,
            certificate.der(),
            client_nonce,
        )
        .map_err(|e| e.status_code())?;
        server_certificate = ByteString::from(local.certificate.der());
    } else if let Some(identity) = &server.config.security.identity {
        // Over a None channel too: clients (node-opcua among them) encrypt the UserName
        // password with the certificate CreateSession returns.
        server_certificate = ByteString::from(identity.certificate.der());
    }
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
    // The token is the session's secret: from the secure generator on a secured channel.
    let authentication_token = NodeId::opaque(1, session_nonce(server, security)?);
    let nonce = session_nonce(server, security)?;
    let server_nonce = ByteString::from(nonce.clone());
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
        server_nonce: nonce,
        client_certificate: security.map(|s| s.remote().der().to_vec()),
    });
    Ok(CreateSessionResponse {
        response_header: header,
        session_id,
        authentication_token,
        revised_session_timeout: timeout_ms,
        server_nonce,
        server_certificate,
        server_endpoints: endpoints(server),
        server_software_certificates: Vec::new(),
        server_signature,
        max_request_message_size: server.config.connection_limits.max_message_size,
    })
}

/// The password of a UserName token, decrypted when it comes encrypted.
///
/// - On a secured channel the UserName policy names the channel's security policy, so the
///   secret is encrypted with it (OPC 10000-4 §7.41.2.3, `legacy` format); a clear password
///   is refused as before.
/// - On a None channel the policy names [`NONE_ENDPOINT_USER_TOKEN_POLICY`] when the server
///   has a certificate: the secret is encrypted under it with our key. A clear password is
///   accepted only with `allow_cleartext_passwords`, else Bad_IdentityTokenRejected (the
///   token is well formed, its form is not one this server accepts).
fn user_password(
    server: &Server,
    user: &UserNameIdentityToken,
    security: Option<&ChannelSecurity>,
    nonce: &[u8],
) -> Result<Vec<u8>, StatusCode> {
    let sent = user.password.as_bytes().unwrap_or_default();
    let algorithm = user
        .encryption_algorithm
        .as_str()
        .filter(|uri| !uri.is_empty());
    match (security, algorithm) {
        (Some(security), algorithm) => decrypt_user_password(
            security.policy(),
            &security.local().private_key,
            algorithm,
            nonce,
            sent,
        ),
        (None, None) if server.config.allow_cleartext_passwords => Ok(sent.to_vec()),
        (None, None) => Err(StatusCode::BAD_IDENTITY_TOKEN_REJECTED),
        (None, Some(algorithm)) => {
            let identity = server
                .config
                .security
                .identity
                .as_ref()
                .ok_or(StatusCode::BAD_IDENTITY_TOKEN_INVALID)?;
            decrypt_user_password(
                NONE_ENDPOINT_USER_TOKEN_POLICY,
                &identity.private_key,
                Some(algorithm),
                nonce,
                sent,
            )
        }
    }
}

/// Checks an identity token against the endpoint's policies and the user list; returns the
/// user name (None for anonymous). `nonce` is the last server nonce of the session.
fn authenticate(
    server: &mut Server,
    token: &UserIdentityToken,
    security: Option<&ChannelSecurity>,
    nonce: &[u8],
    request: &ActivateSessionRequest,
    now_unix: i64,
) -> Result<Option<String>, StatusCode> {
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
            let password = user_password(server, user, security, nonce)?;
            let name = user.user_name.as_str().unwrap_or_default();
            let known = server.config.users.iter().any(|account| {
                account.user_name == name && account.password.as_bytes() == password.as_slice()
            });
            if known {
                Ok(Some(name.to_owned()))
            } else {
                Err(StatusCode::BAD_USER_ACCESS_DENIED)
            }
        }
        UserIdentityToken::X509(x509) => {
            let Some(security) = security else {
                return Err(StatusCode::BAD_IDENTITY_TOKEN_INVALID);
            };
            if x509.policy_id.as_str() != Some(X509_POLICY_ID) {
                return Err(StatusCode::BAD_IDENTITY_TOKEN_INVALID);
            }
            let certificate =
                Certificate::from_der(x509.certificate_data.as_bytes().unwrap_or_default())
                    .map_err(|_| StatusCode::BAD_IDENTITY_TOKEN_INVALID)?;
            // The user's key proves possession: a signature over our certificate and nonce.
            verify_certificate_and_nonce(
                security.policy(),
                &certificate,
                security.local().certificate.der(),
                nonce,
                &request.user_token_signature,
                StatusCode::BAD_USER_SIGNATURE_INVALID,
            )?;
            // A user certificate is accepted when it is in the trust list. A refused one is
            // logged and (when untrusted) stored in rejected/ like an application
            // certificate, so the operator can trust it the same way; the client only gets
            // Bad_IdentityTokenRejected.
            let validated = server.config.security.trust.validate(
                &certificate,
                security.policy(),
                now_unix,
                None,
            );
            if let Err(status) = validated {
                server.refuse(Refusal {
                    detail: refused_certificate_detail("user", &certificate, status),
                    certificate: (status == StatusCode::BAD_CERTIFICATE_UNTRUSTED)
                        .then(|| certificate.der().to_vec()),
                });
                return Err(StatusCode::BAD_IDENTITY_TOKEN_REJECTED);
            }
            Ok(Some(certificate.subject().to_owned()))
        }
        UserIdentityToken::Issued(_) => Err(StatusCode::BAD_IDENTITY_TOKEN_INVALID),
    }
}

/// ActivateSession: on a secured channel checks the client signature (over our certificate
/// and the last nonce we sent), then authenticates the identity token and activates the
/// session.
pub fn activate_session(
    server: &mut Server,
    request: &ActivateSessionRequest,
    channel_id: u32,
    now: Instant,
    header: ResponseHeader,
    security: Option<&ChannelSecurity>,
) -> Result<ActivateSessionResponse, StatusCode> {
    let token = UserIdentityToken::from_extension_object(&request.user_identity_token)
        .map_err(|_| StatusCode::BAD_IDENTITY_TOKEN_INVALID)?
        .ok_or(StatusCode::BAD_IDENTITY_TOKEN_INVALID)?;
    let auth_token = &request.request_header.authentication_token;
    // The session must exist (and may not move channels unless activated before) before the
    // identity is looked at.
    let (activated, bound_to, last_nonce, created_by) = {
        let session = server.sessions.find_any(auth_token, now)?;
        (
            session.activated,
            session.channel_id,
            session.server_nonce.clone(),
            session.client_certificate.clone(),
        )
    };
    if bound_to != channel_id && !activated {
        return Err(StatusCode::BAD_SECURE_CHANNEL_ID_INVALID);
    }
    // A session moves to a new channel only from the application that created it: the same
    // client certificate, and never from a secured channel to an unsecured one (OPC 10000-4
    // §5.6.3.1). The client signature below is then checked with that certificate.
    let channel_certificate = security.map(|s| s.remote().der());
    if created_by.as_deref() != channel_certificate {
        return Err(StatusCode::BAD_SECURITY_CHECKS_FAILED);
    }
    if let Some(security) = security {
        verify_certificate_and_nonce(
            security.policy(),
            security.remote(),
            security.local().certificate.der(),
            &last_nonce,
            &request.client_signature,
            StatusCode::BAD_APPLICATION_SIGNATURE_INVALID,
        )?;
    }
    let now_unix = unix_seconds(server.wall_clock(now));
    let user = authenticate(server, &token, security, &last_nonce, request, now_unix)?;
    let nonce = session_nonce(server, security)?;
    let server_nonce = ByteString::from(nonce.clone());
    let session = server.sessions.rebind(auth_token, channel_id, now)?;
    session.activated = true;
    session.user = user;
    session.server_nonce = nonce;
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
