//! GetEndpoints and FindServers (OPC 10000-4 §5.4), answered from the server's configuration:
//! one endpoint with SecurityPolicy None and the Anonymous and UserName token policies.

use super::server_state::Server;
use crate::encoding::{ByteString, LocalizedText, UaString};
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

/// The user token policies offered: anonymous (when allowed) and user name.
pub fn user_token_policies(server: &Server) -> Vec<UserTokenPolicy> {
    let policy = |id: &str, token_type| UserTokenPolicy {
        policy_id: UaString::from(id),
        token_type,
        issued_token_type: UaString::NULL,
        issuer_endpoint_url: UaString::NULL,
        security_policy_uri: UaString::NULL,
    };
    let mut policies = Vec::new();
    if server.config.allow_anonymous {
        policies.push(policy(ANONYMOUS_POLICY_ID, UserTokenType::Anonymous));
    }
    policies.push(policy(USER_NAME_POLICY_ID, UserTokenType::UserName));
    policies
}

/// PolicyId of the X.509 user certificate token policy (secured endpoints).
pub const X509_POLICY_ID: &str = "x509";

/// The server's endpoints: one per configured policy × mode, with the server certificate.
/// On a secured endpoint the UserName policy names the endpoint's security policy (the
/// password is encrypted with it) and an X.509 user token policy is offered.
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
            let mut tokens = user_token_policies(server);
            if policy.is_secured() {
                for token in &mut tokens {
                    if token.token_type == UserTokenType::UserName {
                        token.security_policy_uri = UaString::from(policy.uri());
                    }
                }
                tokens.push(UserTokenPolicy {
                    policy_id: UaString::from(X509_POLICY_ID),
                    token_type: UserTokenType::Certificate,
                    issued_token_type: UaString::NULL,
                    issuer_endpoint_url: UaString::NULL,
                    security_policy_uri: UaString::from(policy.uri()),
                });
            }
            EndpointDescription {
                endpoint_url: UaString::from(server.config.endpoint_url.as_str()),
                server: application_description(server),
                server_certificate: if policy.is_secured() || !certificate.is_null() {
                    certificate.clone()
                } else {
                    ByteString::NULL
                },
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
