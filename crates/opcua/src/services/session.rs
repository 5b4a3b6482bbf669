//! Session services (OPC 10000-4 §5.6): CreateSession, ActivateSession and CloseSession, with
//! SignatureData (§7.37), SignedSoftwareCertificate (§7.38) and the user identity tokens
//! (§7.41) that ActivateSession carries inside an ExtensionObject.

use super::discovery::{ApplicationDescription, EndpointDescription};
use super::header::{RequestHeader, ResponseHeader};
use super::structure_codec::{BinaryEncodingId, ua_structure};
use crate::encoding::{
    BinaryEncodable, ByteString, DecodeError, DiagnosticInfo, ExtensionObject, ExtensionObjectBody,
    NodeId, Reader, UaString,
};
use crate::types::StatusCode;

ua_structure! {
    /// A digital signature and the URI of its algorithm (OPC 10000-4 §7.37).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct SignatureData {
        /// Signature algorithm URI (null when unsigned).
        pub algorithm: UaString,
        /// The signature bytes.
        pub signature: ByteString,
    }
}

ua_structure! {
    /// A software certificate with its signature (OPC 10000-4 §7.38; no longer used, but
    /// still on the wire).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct SignedSoftwareCertificate {
        /// The encoded certificate.
        pub certificate_data: ByteString,
        /// Signature over `certificate_data`.
        pub signature: ByteString,
    }
}

ua_structure! {
    /// Asks the server to create a session (OPC 10000-4 §5.6.2.2).
    #[derive(Clone, Debug, PartialEq)]
    pub struct CreateSessionRequest {
        /// Common request parameters.
        pub request_header: RequestHeader,
        /// Describes the client application.
        pub client_description: ApplicationDescription,
        /// Application URI of the server the client wants (null: any).
        pub server_uri: UaString,
        /// The URL the client connected to.
        pub endpoint_url: UaString,
        /// Human-readable session name.
        pub session_name: UaString,
        /// Client random bytes (at least 32 when the channel is secured).
        pub client_nonce: ByteString,
        /// The client's application instance certificate (DER).
        pub client_certificate: ByteString,
        /// Requested inactivity timeout in milliseconds.
        pub requested_session_timeout: f64,
        /// Largest response the client accepts (0: no limit).
        pub max_response_message_size: u32,
    }
}

ua_structure! {
    /// The new session's identifiers and the server's credentials (OPC 10000-4 §5.6.2.2).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct CreateSessionResponse {
        /// Common response parameters.
        pub response_header: ResponseHeader,
        /// Public identifier of the session.
        pub session_id: NodeId,
        /// Secret identifier the client puts in every RequestHeader.
        pub authentication_token: NodeId,
        /// Timeout the server granted, in milliseconds.
        pub revised_session_timeout: f64,
        /// Server random bytes the client signs in ActivateSession.
        pub server_nonce: ByteString,
        /// The server's application instance certificate (DER).
        pub server_certificate: ByteString,
        /// The server's endpoints, for the client to check against GetEndpoints.
        pub server_endpoints: Vec<EndpointDescription>,
        /// Unused; normally empty.
        pub server_software_certificates: Vec<SignedSoftwareCertificate>,
        /// Server signature over client certificate and nonce.
        pub server_signature: SignatureData,
        /// Largest request the server accepts (0: no limit).
        pub max_request_message_size: u32,
    }
}

ua_structure! {
    /// Activates a session with a user identity (OPC 10000-4 §5.6.3.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct ActivateSessionRequest {
        /// Common request parameters (with the session's authentication token).
        pub request_header: RequestHeader,
        /// Client signature over server certificate and nonce.
        pub client_signature: SignatureData,
        /// Unused; normally empty.
        pub client_software_certificates: Vec<SignedSoftwareCertificate>,
        /// Preferred locales, most preferred first.
        pub locale_ids: Vec<UaString>,
        /// One of the identity tokens, see [`UserIdentityToken`].
        pub user_identity_token: ExtensionObject,
        /// Signature made with the user's certificate (X509 tokens).
        pub user_token_signature: SignatureData,
    }
}

ua_structure! {
    /// The result of ActivateSession (OPC 10000-4 §5.6.3.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct ActivateSessionResponse {
        /// Common response parameters.
        pub response_header: ResponseHeader,
        /// New server nonce for the next ActivateSession.
        pub server_nonce: ByteString,
        /// Per software certificate results (normally empty).
        pub results: Vec<StatusCode>,
        /// Diagnostics for `results`.
        pub diagnostic_infos: Vec<DiagnosticInfo>,
    }
}

ua_structure! {
    /// Closes a session (OPC 10000-4 §5.6.4.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct CloseSessionRequest {
        /// Common request parameters.
        pub request_header: RequestHeader,
        /// Whether the server deletes the session's subscriptions.
        pub delete_subscriptions: bool,
    }
}

ua_structure! {
    /// Confirms CloseSession (OPC 10000-4 §5.6.4.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct CloseSessionResponse {
        /// Common response parameters.
        pub response_header: ResponseHeader,
    }
}

ua_structure! {
    /// No user information (OPC 10000-4 §7.41.3).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct AnonymousIdentityToken {
        /// The `policy_id` of the endpoint's anonymous UserTokenPolicy.
        pub policy_id: UaString,
    }
}

ua_structure! {
    /// A user name and a password, possibly encrypted (OPC 10000-4 §7.41.4).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct UserNameIdentityToken {
        /// The `policy_id` of the endpoint's UserName UserTokenPolicy.
        pub policy_id: UaString,
        /// The user name.
        pub user_name: UaString,
        /// The password, or its encrypted form (see `encryption_algorithm`).
        pub password: ByteString,
        /// Asymmetric encryption algorithm URI applied to `password` (null: plain text).
        pub encryption_algorithm: UaString,
    }
}

ua_structure! {
    /// A user's X.509 certificate (OPC 10000-4 §7.41.5).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct X509IdentityToken {
        /// The `policy_id` of the endpoint's Certificate UserTokenPolicy.
        pub policy_id: UaString,
        /// The DER-encoded certificate.
        pub certificate_data: ByteString,
    }
}

ua_structure! {
    /// A token from an external authorization service (OPC 10000-4 §7.41.6).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct IssuedIdentityToken {
        /// The `policy_id` of the endpoint's IssuedToken UserTokenPolicy.
        pub policy_id: UaString,
        /// The token, possibly encrypted.
        pub token_data: ByteString,
        /// Asymmetric encryption algorithm URI applied to `token_data` (null: plain).
        pub encryption_algorithm: UaString,
    }
}

/// The user identity tokens an ActivateSessionRequest may carry in its ExtensionObject.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UserIdentityToken {
    /// [`AnonymousIdentityToken`] (also what a null ExtensionObject means).
    Anonymous(AnonymousIdentityToken),
    /// [`UserNameIdentityToken`].
    UserName(UserNameIdentityToken),
    /// [`X509IdentityToken`].
    X509(X509IdentityToken),
    /// [`IssuedIdentityToken`].
    Issued(IssuedIdentityToken),
}

/// Decodes the whole of a binary ExtensionObject body as `T`.
fn decode_body<T: BinaryEncodable>(body: &[u8]) -> Result<T, DecodeError> {
    let mut reader = Reader::new(body);
    let value = T::decode(&mut reader)?;
    reader.expect_end()?;
    Ok(value)
}

fn wrap<T: BinaryEncodable + BinaryEncodingId>(token: &T) -> ExtensionObject {
    ExtensionObject {
        type_id: NodeId::numeric(0, T::BINARY_ENCODING_ID),
        body: ExtensionObjectBody::Binary(token.to_bytes()),
    }
}

impl UserIdentityToken {
    /// Reads the token of an ActivateSessionRequest. A null ExtensionObject is the anonymous
    /// token (OPC 10000-4 §5.6.3.2). Returns `Ok(None)` for a type this stack does not know
    /// or an XML body (the server answers Bad_IdentityTokenInvalid), and the decode error,
    /// with its offset inside the body, for a malformed body.
    pub fn from_extension_object(object: &ExtensionObject) -> Result<Option<Self>, DecodeError> {
        let bytes = match &object.body {
            ExtensionObjectBody::None if object.type_id.is_null() => {
                return Ok(Some(Self::Anonymous(AnonymousIdentityToken::default())));
            }
            ExtensionObjectBody::Binary(bytes) => bytes.as_slice(),
            ExtensionObjectBody::None | ExtensionObjectBody::Xml(_) => &[],
        };
        let crate::encoding::Identifier::Numeric(id) = object.type_id.identifier else {
            return Ok(None);
        };
        if object.type_id.namespace != 0 || matches!(object.body, ExtensionObjectBody::Xml(_)) {
            return Ok(None);
        }
        Ok(Some(match id {
            AnonymousIdentityToken::BINARY_ENCODING_ID => Self::Anonymous(decode_body(bytes)?),
            UserNameIdentityToken::BINARY_ENCODING_ID => Self::UserName(decode_body(bytes)?),
            X509IdentityToken::BINARY_ENCODING_ID => Self::X509(decode_body(bytes)?),
            IssuedIdentityToken::BINARY_ENCODING_ID => Self::Issued(decode_body(bytes)?),
            _ => return Ok(None),
        }))
    }

    /// The ExtensionObject (binary body) carrying this token.
    pub fn to_extension_object(&self) -> ExtensionObject {
        match self {
            Self::Anonymous(token) => wrap(token),
            Self::UserName(token) => wrap(token),
            Self::X509(token) => wrap(token),
            Self::Issued(token) => wrap(token),
        }
    }

    /// The `policy_id` the client chose.
    pub fn policy_id(&self) -> &UaString {
        match self {
            Self::Anonymous(token) => &token.policy_id,
            Self::UserName(token) => &token.policy_id,
            Self::X509(token) => &token.policy_id,
            Self::Issued(token) => &token.policy_id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::DecodeErrorKind;
    use crate::services::test_values::{assert_round_trip, generate_from_seed};
    use proptest::prelude::*;

    #[test]
    fn user_name_token_in_extension_object() {
        let token = UserIdentityToken::UserName(UserNameIdentityToken {
            policy_id: UaString::from("u"),
            user_name: UaString::from("op"),
            password: ByteString::from(b"pw".to_vec()),
            encryption_algorithm: UaString::NULL,
        });
        let object = token.to_extension_object();
        // OPC 10000-6 §5.2.2.15: four-byte NodeId i=324, 0x01 binary body, Int32 length, body.
        let expected = [
            0x01, 0x00, 0x44,
            0x01, // NodeId ns=0;i=324 (UserNameIdentityToken_Encoding_DefaultBinary)
            0x01, // binary body
            21, 0, 0, 0, // body length
            1, 0, 0, 0, b'u', // policy id
            2, 0, 0, 0, b'o', b'p', // user name
            2, 0, 0, 0, b'p', b'w', // password
            0xFF, 0xFF, 0xFF, 0xFF, // encryption algorithm: null
        ];
        assert_eq!(object.to_bytes(), expected);
        assert_eq!(
            UserIdentityToken::from_extension_object(&object).unwrap(),
            Some(token)
        );
    }

    #[test]
    fn null_token_is_anonymous_and_unknown_type_is_none() {
        assert_eq!(
            UserIdentityToken::from_extension_object(&ExtensionObject::default()).unwrap(),
            Some(UserIdentityToken::Anonymous(
                AnonymousIdentityToken::default()
            ))
        );
        let unknown = ExtensionObject {
            type_id: NodeId::numeric(0, 999),
            body: ExtensionObjectBody::Binary(vec![]),
        };
        assert_eq!(
            UserIdentityToken::from_extension_object(&unknown).unwrap(),
            None
        );
    }

    #[test]
    fn malformed_token_body_reports_offset() {
        let object = ExtensionObject {
            type_id: NodeId::numeric(0, X509IdentityToken::BINARY_ENCODING_ID),
            body: ExtensionObjectBody::Binary(vec![0xFF, 0xFF, 0xFF, 0xFF, 5, 0, 0, 0, 1]),
        };
        let error = UserIdentityToken::from_extension_object(&object).unwrap_err();
        // The certificate's 5 announced bytes would start at offset 8 of the body.
        assert_eq!(error.offset, 8);
        assert_eq!(
            error.kind,
            DecodeErrorKind::UnexpectedEnd {
                needed: 5,
                available: 1
            }
        );
    }

    proptest! {
        #[test]
        fn session_messages_round_trip(seed: u64) {
            assert_round_trip(&generate_from_seed::<CreateSessionRequest>(seed));
            assert_round_trip(&generate_from_seed::<CreateSessionResponse>(seed));
            assert_round_trip(&generate_from_seed::<ActivateSessionRequest>(seed));
            assert_round_trip(&generate_from_seed::<ActivateSessionResponse>(seed));
            assert_round_trip(&generate_from_seed::<CloseSessionRequest>(seed));
            assert_round_trip(&generate_from_seed::<CloseSessionResponse>(seed));
        }

        #[test]
        fn identity_tokens_survive_extension_objects(seed: u64) {
            let tokens = [
                UserIdentityToken::Anonymous(generate_from_seed(seed)),
                UserIdentityToken::UserName(generate_from_seed(seed)),
                UserIdentityToken::X509(generate_from_seed(seed)),
                UserIdentityToken::Issued(generate_from_seed(seed)),
            ];
            for token in tokens {
                let object = ExtensionObject::from_bytes(&token.to_extension_object().to_bytes()).unwrap();
                prop_assert_eq!(UserIdentityToken::from_extension_object(&object).unwrap(), Some(token));
            }
        }
    }
}
