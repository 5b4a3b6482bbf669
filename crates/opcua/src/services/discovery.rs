//! Discovery services (OPC 10000-4 §5.4): FindServers and GetEndpoints, with the descriptions
//! of applications, endpoints and user token policies they return (§7.2, §7.14, §7.42).

use super::header::{RequestHeader, ResponseHeader};
use super::structure_codec::{ua_enumeration, ua_structure};
use crate::encoding::{ByteString, LocalizedText, UaString};

ua_enumeration! {
    /// How messages on a secure channel are protected (OPC 10000-4 §7.20).
    pub enum MessageSecurityMode {
        /// Not a valid mode (the default value of the type).
        Invalid = 0,
        /// No security.
        None = 1,
        /// Signed, not encrypted.
        Sign = 2,
        /// Signed and encrypted.
        SignAndEncrypt = 3,
    }
}

ua_enumeration! {
    /// The role of an application (OPC 10000-4 §7.2).
    pub enum ApplicationType {
        /// A server.
        Server = 0,
        /// A client.
        Client = 1,
        /// Both a client and a server.
        ClientAndServer = 2,
        /// A discovery server.
        DiscoveryServer = 3,
    }
}

ua_enumeration! {
    /// The kind of user identity token a policy accepts (OPC 10000-4 §7.42).
    pub enum UserTokenType {
        /// No user information.
        Anonymous = 0,
        /// A user name and password.
        UserName = 1,
        /// An X.509 certificate.
        Certificate = 2,
        /// A token issued by an external authorization service.
        IssuedToken = 3,
    }
}

ua_structure! {
    /// Describes an application (OPC 10000-4 §7.2).
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct ApplicationDescription {
        /// Globally unique identifier of the application instance.
        pub application_uri: UaString,
        /// Globally unique identifier of the product.
        pub product_uri: UaString,
        /// Human-readable name.
        pub application_name: LocalizedText,
        /// Server, client, both, or discovery server.
        pub application_type: ApplicationType,
        /// URI of the gateway server (null when none).
        pub gateway_server_uri: UaString,
        /// Discovery profile URI (null when not a discovery server).
        pub discovery_profile_uri: UaString,
        /// URLs of the application's discovery endpoints.
        pub discovery_urls: Vec<UaString>,
    }
}

ua_structure! {
    /// A kind of user identity token an endpoint accepts (OPC 10000-4 §7.42).
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct UserTokenPolicy {
        /// Server-assigned identifier the client echoes in its identity token.
        pub policy_id: UaString,
        /// The token kind.
        pub token_type: UserTokenType,
        /// For issued tokens: the token type URI.
        pub issued_token_type: UaString,
        /// For issued tokens: where to obtain one.
        pub issuer_endpoint_url: UaString,
        /// Security policy used to encrypt secrets in the token (null: the channel's).
        pub security_policy_uri: UaString,
    }
}

ua_structure! {
    /// An endpoint of a server and how to connect to it (OPC 10000-4 §7.14).
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct EndpointDescription {
        /// URL of the endpoint.
        pub endpoint_url: UaString,
        /// The server the endpoint belongs to.
        pub server: ApplicationDescription,
        /// The server's application instance certificate (DER).
        pub server_certificate: ByteString,
        /// Message security mode of the endpoint.
        pub security_mode: MessageSecurityMode,
        /// Security policy URI of the endpoint.
        pub security_policy_uri: UaString,
        /// User identity tokens the endpoint accepts.
        pub user_identity_tokens: Vec<UserTokenPolicy>,
        /// Transport profile URI (e.g. UA TCP with UA Binary).
        pub transport_profile_uri: UaString,
        /// Relative security level; higher is more secure.
        pub security_level: u8,
    }
}

ua_structure! {
    /// Asks a server for its endpoints (OPC 10000-4 §5.4.4.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct GetEndpointsRequest {
        /// Common request parameters.
        pub request_header: RequestHeader,
        /// The URL the client used to reach the server.
        pub endpoint_url: UaString,
        /// Preferred locales for the returned names.
        pub locale_ids: Vec<UaString>,
        /// Transport profile URIs to filter by (empty: all).
        pub profile_uris: Vec<UaString>,
    }
}

ua_structure! {
    /// The server's endpoints (OPC 10000-4 §5.4.4.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct GetEndpointsResponse {
        /// Common response parameters.
        pub response_header: ResponseHeader,
        /// The endpoints matching the request.
        pub endpoints: Vec<EndpointDescription>,
    }
}

ua_structure! {
    /// Asks for the servers known to a server or discovery server (OPC 10000-4 §5.4.2.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct FindServersRequest {
        /// Common request parameters.
        pub request_header: RequestHeader,
        /// The URL the client used to reach the server.
        pub endpoint_url: UaString,
        /// Preferred locales for the returned names.
        pub locale_ids: Vec<UaString>,
        /// Application URIs to filter by (empty: all).
        pub server_uris: Vec<UaString>,
    }
}

ua_structure! {
    /// The servers found (OPC 10000-4 §5.4.2.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct FindServersResponse {
        /// Common response parameters.
        pub response_header: ResponseHeader,
        /// The servers matching the request.
        pub servers: Vec<ApplicationDescription>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::BinaryEncodable;
    use crate::services::test_values::{assert_round_trip, generate_from_seed};
    use proptest::prelude::*;

    #[test]
    fn user_token_policy_layout() {
        let policy = UserTokenPolicy {
            policy_id: UaString::from("anon"),
            token_type: UserTokenType::Anonymous,
            issued_token_type: UaString::NULL,
            issuer_endpoint_url: UaString::NULL,
            security_policy_uri: UaString::NULL,
        };
        let expected = [
            4, 0, 0, 0, b'a', b'n', b'o', b'n', // policy id
            0, 0, 0, 0, // Anonymous
            0xFF, 0xFF, 0xFF, 0xFF, // issued token type: null
            0xFF, 0xFF, 0xFF, 0xFF, // issuer endpoint: null
            0xFF, 0xFF, 0xFF, 0xFF, // security policy: null
        ];
        assert_eq!(policy.to_bytes(), expected);
        assert_eq!(UserTokenPolicy::from_bytes(&expected).unwrap(), policy);
    }

    #[test]
    fn enumeration_tables() {
        assert_eq!(MessageSecurityMode::SignAndEncrypt.to_i32(), 3);
        assert_eq!(
            ApplicationType::from_i32(3),
            ApplicationType::DiscoveryServer
        );
        assert_eq!(UserTokenType::from_i32(2), UserTokenType::Certificate);
        assert_eq!(UserTokenType::from_i32(-1), UserTokenType::Other(-1));
    }

    proptest! {
        #[test]
        fn discovery_messages_round_trip(seed: u64) {
            assert_round_trip(&generate_from_seed::<EndpointDescription>(seed));
            assert_round_trip(&generate_from_seed::<GetEndpointsRequest>(seed));
            assert_round_trip(&generate_from_seed::<GetEndpointsResponse>(seed));
            assert_round_trip(&generate_from_seed::<FindServersRequest>(seed));
            assert_round_trip(&generate_from_seed::<FindServersResponse>(seed));
        }
    }
}
