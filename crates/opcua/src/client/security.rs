//! The client side of the security layer: the policy, mode and certificates a client
//! connects with ([`ClientSecurity`]), and the session-level steps of a secured connection
//! (OPC 10000-4 §5.6.2, §5.6.3): checking the server's CreateSession signature, signing
//! ActivateSession, and encrypting the UserName password with the server's certificate under
//! the user token policy's security policy (or the channel's when the policy names none).

use crate::encoding::{ByteString, UaString};
use crate::security::identity::{
    encrypt_user_password, sign_certificate_and_nonce, verify_certificate_and_nonce,
};
use crate::security::{Certificate, LocalIdentity, MessageSecurityMode, SecurityPolicy};
use crate::services::{
    EndpointDescription, SignatureData, UserIdentityToken, UserTokenPolicy, UserTokenType,
};
use crate::types::StatusCode;

/// How a client secures its channel.
#[derive(Clone, Debug)]
pub struct ClientSecurity {
    /// The security policy (None by default).
    pub policy: SecurityPolicy,
    /// Sign or SignAndEncrypt (None with SecurityPolicy None).
    pub mode: MessageSecurityMode,
    /// Our application instance certificate and key (required for a secured policy).
    pub identity: Option<LocalIdentity>,
    /// The server's certificate (from GetEndpoints; required for a secured policy).
    pub server_certificate: Option<Certificate>,
}

impl Default for ClientSecurity {
    fn default() -> Self {
        Self {
            policy: SecurityPolicy::None,
            mode: MessageSecurityMode::None,
            identity: None,
            server_certificate: None,
        }
    }
}

impl ClientSecurity {
    /// True for any policy but None.
    pub fn is_secured(&self) -> bool {
        self.policy.is_secured()
    }

    /// The endpoint among `endpoints` with our policy and mode.
    pub fn matching_endpoint<'a>(
        &self,
        endpoints: &'a [EndpointDescription],
    ) -> Option<&'a EndpointDescription> {
        endpoints.iter().find(|endpoint| {
            endpoint.security_mode == self.mode
                && endpoint.security_policy_uri.as_str() == Some(self.policy.uri())
        })
    }
}

/// Checks the server signature of CreateSession: over our certificate and our nonce.
pub fn verify_server_signature(
    security: &ClientSecurity,
    client_nonce: &[u8],
    signature: &SignatureData,
) -> Result<(), StatusCode> {
    let (Some(identity), Some(server)) = (&security.identity, &security.server_certificate) else {
        return Ok(());
    };
    verify_certificate_and_nonce(
        security.policy,
        server,
        identity.certificate.der(),
        client_nonce,
        signature,
        StatusCode::BAD_APPLICATION_SIGNATURE_INVALID,
    )
}

/// The client signature of ActivateSession: over the server certificate and nonce.
pub fn client_signature(
    security: &ClientSecurity,
    server_nonce: &[u8],
) -> Result<SignatureData, StatusCode> {
    let (Some(identity), Some(server)) = (&security.identity, &security.server_certificate) else {
        return Ok(SignatureData::default());
    };
    sign_certificate_and_nonce(
        security.policy,
        &identity.private_key,
        server.der(),
        server_nonce,
    )
    .map_err(|error| error.status_code())
}

/// The userTokenSignature of an X509 identity: the user's key over the server certificate and
/// nonce, under the policy of the endpoint's X.509 token policy (or the channel's).
pub fn user_token_signature(
    security: &ClientSecurity,
    endpoints: &[EndpointDescription],
    server_nonce: &[u8],
    identity: &crate::client::ClientIdentity,
) -> Result<SignatureData, StatusCode> {
    let crate::client::ClientIdentity::X509(user) = identity else {
        return Ok(SignatureData::default());
    };
    let policy = token_policy(security, endpoints, UserTokenType::Certificate)?;
    let server = security
        .server_certificate
        .as_ref()
        .ok_or(StatusCode::BAD_CERTIFICATE_INVALID)?;
    sign_certificate_and_nonce(policy, &user.private_key, server.der(), server_nonce)
        .map_err(|error| error.status_code())
}

/// The security policy of the endpoint's user token policy of `token_type`, or the channel's
/// when it names none.
fn token_policy(
    security: &ClientSecurity,
    endpoints: &[EndpointDescription],
    token_type: UserTokenType,
) -> Result<SecurityPolicy, StatusCode> {
    let uri = security
        .matching_endpoint(endpoints)
        .and_then(|endpoint| {
            endpoint
                .user_identity_tokens
                .iter()
                .find(|policy| policy.token_type == token_type)
        })
        .and_then(|policy| policy.security_policy_uri.as_str().map(str::to_owned))
        .filter(|uri| !uri.is_empty());
    match uri {
        Some(uri) => SecurityPolicy::from_uri(&uri).ok_or(StatusCode::BAD_SECURITY_POLICY_REJECTED),
        None => Ok(security.policy),
    }
}

/// The endpoint and UserTokenPolicy a UserName token with `policy_id` answers: on a secured
/// channel the endpoint of the channel's policy and mode, on a None channel the None
/// endpoint that lists the policy.
fn user_name_policy<'a>(
    security: &ClientSecurity,
    endpoints: &'a [EndpointDescription],
    policy_id: &UaString,
) -> Option<(&'a EndpointDescription, &'a UserTokenPolicy)> {
    let candidates: Vec<&EndpointDescription> = if security.is_secured() {
        security.matching_endpoint(endpoints).into_iter().collect()
    } else {
        endpoints
            .iter()
            .filter(|endpoint| {
                endpoint.security_mode == MessageSecurityMode::None
                    || endpoint.security_policy_uri.as_str() == Some(SecurityPolicy::None.uri())
            })
            .collect()
    };
    candidates.into_iter().find_map(|endpoint| {
        endpoint
            .user_identity_tokens
            .iter()
            .find(|policy| {
                policy.token_type == UserTokenType::UserName && &policy.policy_id == policy_id
            })
            .map(|policy| (endpoint, policy))
    })
}

/// Protects the password of a UserName token in place (OPC 10000-4 §7.41.2.3, `legacy`
/// secret). The security policy is the user token policy's, and the channel's only when the
/// token policy names none: over a None channel a server that names Basic256Sha256 in its
/// UserName policy gets the password encrypted with its certificate, as it expects.
///
/// A password that would cross in clear (no security policy for the token, and a channel
/// that does not encrypt) is refused with Bad_SecurityModeInsufficient unless
/// `allow_cleartext` is set: the caller asks for it by name
/// ([`ClientConfig::allow_cleartext_password`](super::ClientConfig::allow_cleartext_password)).
///
/// The certificate encrypted for is the one the caller checked for the channel when there is
/// one, else the one in the endpoint description (over a None channel nothing authenticates
/// it: it keeps the password from passive listeners, not from a peer in the middle).
pub fn secure_user_token(
    security: &ClientSecurity,
    endpoints: &[EndpointDescription],
    server_nonce: &[u8],
    token: &mut UserIdentityToken,
    allow_cleartext: bool,
) -> Result<(), StatusCode> {
    let UserIdentityToken::UserName(user) = token else {
        return Ok(());
    };
    let listed = user_name_policy(security, endpoints, &user.policy_id);
    let token_policy_uri = listed
        .and_then(|(_, policy)| policy.security_policy_uri.as_str())
        .filter(|uri| !uri.is_empty());
    let policy = match token_policy_uri {
        Some(uri) => {
            SecurityPolicy::from_uri(uri).ok_or(StatusCode::BAD_SECURITY_POLICY_REJECTED)?
        }
        None => security.policy,
    };
    if !policy.is_secured() {
        let channel_encrypts =
            security.is_secured() && security.mode == MessageSecurityMode::SignAndEncrypt;
        return if channel_encrypts || allow_cleartext {
            Ok(())
        } else {
            Err(StatusCode::BAD_SECURITY_MODE_INSUFFICIENT)
        };
    }
    let listed_certificate;
    let server = match &security.server_certificate {
        Some(certificate) => certificate,
        None => {
            let der = listed
                .and_then(|(endpoint, _)| endpoint.server_certificate.as_bytes())
                .ok_or(StatusCode::BAD_CERTIFICATE_INVALID)?;
            // A chain is fine: the leading certificate is the server's.
            listed_certificate =
                Certificate::from_der(der).map_err(|_| StatusCode::BAD_CERTIFICATE_INVALID)?;
            &listed_certificate
        }
    };
    let password = user.password.as_bytes().unwrap_or_default().to_vec();
    let (secret, algorithm) = encrypt_user_password(policy, server, server_nonce, &password)
        .map_err(|error| error.status_code())?;
    user.password = ByteString::from(secret);
    user.encryption_algorithm = UaString::from(algorithm);
    Ok(())
}
