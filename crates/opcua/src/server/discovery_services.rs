//! GetEndpoints and FindServers (OPC 10000-4 §5.4), answered from the server's configuration:
//! one endpoint per configured policy × mode, with the user token policies each offers.

use super::server_state::Server;
use crate::encoding::{ByteString, LocalizedText, UaString};
use crate::security::SecurityPolicy;
use crate::services::{
    ApplicationDescription, ApplicationType, EndpointDescription, FindServersRequest,
    FindServersResponse, GetEndpointsRequest, GetEndpointsResponse, MessageSecurityMode,
    ResponseHeader, UserTokenPolicy, UserTokenType,
};

/// PolicyId of the anonymous token policy.
pub const ANONYMOUS_POLICY_ID: &str = "anonymous";
/// PolicyId of the user name token policy.
pub const USER_NAME_POLICY_ID: &str = "username";
/// Transport profile UA TCP with UA Binary encoding (OPC 10000-7).
pub const UA_TCP_BINARY_PROFILE_URI: &str =
    "http://opcfoundation.org/UA-Profile/Transport/uatcp-uasc-uabinary";

/// The server's ApplicationDescription.
pub fn application_description(server: &Server) -> ApplicationDescription {
    let config = &server.config;
    ApplicationDescription {
        application_uri: UaString::from(config.application_uri.as_str()),
        product_uri: UaString::from(config.build_info.product_uri.as_str()),
        application_name: LocalizedText {
            locale: UaString::NULL,
            text: UaString::from(config.application_name.as_str()),
        },
        application_type: ApplicationType::Server,
        gateway_server_uri: UaString::NULL,
        discovery_profile_uri: UaString::NULL,
        discovery_urls: vec![UaString::from(config.endpoint_url.as_str())],
    }
}

/// The security policy that encrypts UserName passwords on the SecurityPolicy None endpoint
/// when the server has a certificate. Basic256Sha256 rather than the strongest policy the
/// server offers: it is the one every client stack implements for user tokens (open62541,
/// node-opcua, asyncua, the .NET stack), and the secret is a single RSA-OAEP block either way.
pub const NONE_ENDPOINT_USER_TOKEN_POLICY: SecurityPolicy = SecurityPolicy::Basic256Sha256;

/// The user token policies of an endpoint of security `policy`: anonymous (when allowed),
/// UserName and, on a secured endpoint, X.509.
///
/// The UserName policy names the security policy that encrypts the password: the
/// endpoint's on a secured endpoint; on the None endpoint [`NONE_ENDPOINT_USER_TOKEN_POLICY`]
/// when the server has a certificate. A None endpoint of a server without certificate lists
/// UserName (with an empty securityPolicyUri: the password in clear) only with
/// `allow_cleartext_passwords`; otherwise it offers no UserName at all. Clients of
/// open62541 drop a UserName policy that would send the password in clear, and then find
/// no endpoint: naming a policy is what lets them log in over a None channel.
pub fn user_token_policies(server: &Server, policy: SecurityPolicy) -> Vec<UserTokenPolicy> {
    let token = |id: &str, token_type, security: Option<SecurityPolicy>| UserTokenPolicy {
        policy_id: UaString::from(id),
        token_type,
        issued_token_type: UaString::NULL,
        issuer_endpoint_url: UaString::NULL,
        security_policy_uri: security.map_or(UaString::NULL, |p| UaString::from(p.uri())),
    };
    let mut policies = Vec::new();
    if server.config.allow_anonymous {
        policies.push(token(ANONYMOUS_POLICY_ID, UserTokenType::Anonymous, None));
    }
    if let Some(security) = user_name_security(server, policy) {
        policies.push(token(
            USER_NAME_POLICY_ID,
            UserTokenType::UserName,
            security,
        ));
    }
    if policy.is_secured() {
        policies.push(token(
            X509_POLICY_ID,
            UserTokenType::Certificate,
            Some(policy),
        ));
    }
    policies
}

/// Whether an endpoint of security `policy` offers UserName, and with which security policy
/// for the password: `Some(Some(p))` encrypted under `p`, `Some(None)` in clear, `None` not
/// offered.
pub fn user_name_security(
    server: &Server,
    policy: SecurityPolicy,
) -> Option<Option<SecurityPolicy>> {
    if policy.is_secured() {
        Some(Some(policy))
    } else if server.config.security.identity.is_some() {
        Some(Some(NONE_ENDPOINT_USER_TOKEN_POLICY))
    } else if server.config.allow_cleartext_passwords {
        Some(None)
    } else {
        None
    }
}

/// PolicyId of the X.509 user certificate token policy (secured endpoints).
pub const X509_POLICY_ID: &str = "x509";

/// The server's endpoints: one per configured policy × mode, with the server certificate
/// and the user token policies of [`user_token_policies`].
pub fn endpoints(server: &Server) -> Vec<EndpointDescription> {
    let security = &server.config.security;
    let certificate = security
        .identity
        .as_ref()
        .map_or(ByteString::NULL, |identity| {
            ByteString::from(identity.certificate.der())
        });
    security
        .endpoints
        .iter()
        .map(|&(policy, mode)| {
            let tokens = user_token_policies(server, policy);
            EndpointDescription {
                endpoint_url: UaString::from(server.config.endpoint_url.as_str()),
                server: application_description(server),
                // On the None endpoint too: clients encrypt the UserName password with it.
                server_certificate: certificate.clone(),
                security_mode: mode,
                security_policy_uri: UaString::from(policy.uri()),
                user_identity_tokens: tokens,
                transport_profile_uri: UaString::from(UA_TCP_BINARY_PROFILE_URI),
                // Higher for stronger: Sign < SignAndEncrypt, and by policy order.
                security_level: match mode {
                    MessageSecurityMode::SignAndEncrypt => 10 + policy as u8,
                    MessageSecurityMode::Sign => 5 + policy as u8,
                    _ => 0,
                },
            }
        })
        .collect()
}

/// GetEndpoints: every endpoint, unless the profile filter excludes UA TCP binary.
pub fn get_endpoints(
    server: &Server,
    request: &GetEndpointsRequest,
    header: ResponseHeader,
) -> GetEndpointsResponse {
    let wanted = request.profile_uris.is_empty()
        || request
            .profile_uris
            .iter()
            .any(|uri| uri.as_str() == Some(UA_TCP_BINARY_PROFILE_URI));
    GetEndpointsResponse {
        response_header: header,
        endpoints: if wanted {
            endpoints(server)
        } else {
            Vec::new()
        },
    }
}

/// FindServers: this server, unless the URI filter names others only.
pub fn find_servers(
    server: &Server,
    request: &FindServersRequest,
    header: ResponseHeader,
) -> FindServersResponse {
    let uri = server.config.application_uri.as_str();
    let wanted = request.server_uris.is_empty()
        || request.server_uris.iter().any(|u| u.as_str() == Some(uri));
    FindServersResponse {
        response_header: header,
        servers: if wanted {
            vec![application_description(server)]
        } else {
            Vec::new()
        },
    }
}
