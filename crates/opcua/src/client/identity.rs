//! `ClientIdentity`: who a session is activated as, and the identity token built for it from
//! the endpoints the server returned in CreateSession (OPC 10000-4 §7.41: the token's
//! `policy_id` must name one of the endpoint's UserTokenPolicies).

use crate::encoding::{ByteString, UaString};
use crate::secure_channel::SECURITY_POLICY_NONE_URI;
use crate::services::{
    AnonymousIdentityToken, EndpointDescription, MessageSecurityMode, UserIdentityToken,
    UserNameIdentityToken, UserTokenType, X509IdentityToken,
};

/// Policy id used when the server lists no anonymous policy on a None endpoint.
pub const FALLBACK_ANONYMOUS_POLICY_ID: &str = "anonymous";
/// Policy id used when the server lists no X.509 policy on the endpoint.
pub const FALLBACK_X509_POLICY_ID: &str = "x509";
/// Policy id used when the server lists no user name policy on a None endpoint.
pub const FALLBACK_USER_NAME_POLICY_ID: &str = "username";

/// The user a session is activated as.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ClientIdentity {
    /// No user.
    #[default]
    Anonymous,
    /// A user name and a password (in plain text under SecurityPolicy None, encrypted with
    /// the server's certificate on a secured endpoint).
    UserName {
        /// The user name.
        user_name: String,
        /// The password.
        password: String,
    },
    /// A user certificate and its key (X509IdentityToken; secured endpoints only): the
    /// userTokenSignature proves possession of the key.
    X509(crate::security::LocalIdentity),
}

impl ClientIdentity {
    /// The token type this identity needs.
    pub fn token_type(&self) -> UserTokenType {
        match self {
            Self::Anonymous => UserTokenType::Anonymous,
            Self::UserName { .. } => UserTokenType::UserName,
            Self::X509(_) => UserTokenType::Certificate,
        }
    }

    /// The identity token for ActivateSession, with the `policy_id` of the first matching
    /// UserTokenPolicy of a SecurityPolicy None endpoint in `endpoints`.
    pub fn token(&self, endpoints: &[EndpointDescription]) -> UserIdentityToken {
        let wanted = self.token_type();
        let listed = endpoints
            .iter()
            .filter(|endpoint| {
                endpoint.security_mode == MessageSecurityMode::None
                    || endpoint.security_policy_uri.as_str() == Some(SECURITY_POLICY_NONE_URI)
            })
            .flat_map(|endpoint| endpoint.user_identity_tokens.iter())
            .find(|policy| policy.token_type == wanted)
            .map(|policy| policy.policy_id.clone());
        self.build(listed)
    }

    /// The identity token with the `policy_id` of the first matching UserTokenPolicy of
    /// `endpoint` (the endpoint of a secured channel).
    pub fn token_for_endpoint(&self, endpoint: Option<&EndpointDescription>) -> UserIdentityToken {
        let wanted = self.token_type();
        let listed = endpoint
            .into_iter()
            .flat_map(|endpoint| endpoint.user_identity_tokens.iter())
            .find(|policy| policy.token_type == wanted)
            .map(|policy| policy.policy_id.clone());
        self.build(listed)
    }

    fn build(&self, listed: Option<UaString>) -> UserIdentityToken {
        match self {
            Self::Anonymous => UserIdentityToken::Anonymous(AnonymousIdentityToken {
                policy_id: listed.unwrap_or_else(|| UaString::from(FALLBACK_ANONYMOUS_POLICY_ID)),
            }),
            Self::UserName {
                user_name,
                password,
            } => UserIdentityToken::UserName(UserNameIdentityToken {
                policy_id: listed.unwrap_or_else(|| UaString::from(FALLBACK_USER_NAME_POLICY_ID)),
                user_name: UaString::from(user_name.as_str()),
                password: ByteString::from(password.as_bytes().to_vec()),
                encryption_algorithm: UaString::NULL,
            }),
            Self::X509(user) => UserIdentityToken::X509(X509IdentityToken {
                policy_id: listed.unwrap_or_else(|| UaString::from(FALLBACK_X509_POLICY_ID)),
                certificate_data: ByteString::from(user.certificate.der()),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::services::{ApplicationDescription, ApplicationType, UserTokenPolicy};

    fn endpoint(
        mode: MessageSecurityMode,
        policies: &[(&str, UserTokenType)],
    ) -> EndpointDescription {
        EndpointDescription {
            security_mode: mode,
            user_identity_tokens: policies
                .iter()
                .map(|(id, token_type)| UserTokenPolicy {
                    policy_id: UaString::from(*id),
                    token_type: *token_type,
                    issued_token_type: UaString::NULL,
                    issuer_endpoint_url: UaString::NULL,
                    security_policy_uri: UaString::NULL,
                })
                .collect(),
            endpoint_url: UaString::from("opc.tcp://h"),
            server: ApplicationDescription {
                application_uri: UaString::NULL,
                product_uri: UaString::NULL,
                application_name: Default::default(),
                application_type: ApplicationType::Server,
                gateway_server_uri: UaString::NULL,
                discovery_profile_uri: UaString::NULL,
                discovery_urls: Vec::new(),
            },
            server_certificate: ByteString::NULL,
            security_policy_uri: UaString::NULL,
            transport_profile_uri: UaString::NULL,
            security_level: 0,
        }
    }

    #[test]
    fn policy_id_comes_from_a_none_endpoint() {
        let endpoints = [
            endpoint(
                MessageSecurityMode::SignAndEncrypt,
                &[("secure_user", UserTokenType::UserName)],
            ),
            endpoint(
                MessageSecurityMode::None,
                &[
                    ("open", UserTokenType::Anonymous),
                    ("plain_user", UserTokenType::UserName),
                ],
            ),
        ];
        let user = ClientIdentity::UserName {
            user_name: "alice".into(),
            password: "pw".into(),
        };
        let UserIdentityToken::UserName(token) = user.token(&endpoints) else {
            panic!("expected a user name token");
        };
        assert_eq!(token.policy_id.as_str(), Some("plain_user"));
        assert_eq!(token.password.as_bytes(), Some(&b"pw"[..]));
        assert!(token.encryption_algorithm.is_null());
        assert_eq!(
            ClientIdentity::Anonymous
                .token(&endpoints)
                .policy_id()
                .as_str(),
            Some("open")
        );
        assert_eq!(
            ClientIdentity::Anonymous.token(&[]).policy_id().as_str(),
            Some(FALLBACK_ANONYMOUS_POLICY_ID)
        );
    }
}
