//! Service messages against public captures and through the message dispatch, using only the
//! crate's public API.
//!
//! The two captures are Wireshark dissections of an open62541 client talking to a server,
//! published in the `solimand/fuzz-opcua-test` repository (docs/OPC_UA-related.md). The
//! dissection gives every field and the chunk's MessageSize; the bytes below are those fields
//! laid out per OPC 10000-6 §5.2, and their length matches the captured MessageSize minus the
//! 24 bytes of message, security and sequence headers (§7.1.2, §6.7.2).

use buildwire_opcua::encoding::{
    BinaryEncodable, ByteString, DateTime, DecodingLimits, ExtensionObject, Guid, NodeId, UaString,
};
use buildwire_opcua::services::{
    ActivateSessionRequest, AnonymousIdentityToken, BrowseDescription, BrowseDirection,
    BrowseRequest, GetEndpointsRequest, MessageSecurityMode, OpenSecureChannelRequest, ReadRequest,
    ReadValueId, RequestHeader, ResponseHeader, SecurityTokenRequestType, ServiceDecodeError,
    ServiceFault, ServiceRequest, ServiceResponse, SignatureData, TimestampsToReturn,
    UserIdentityToken, ViewDescription, well_known_nodes,
};
use buildwire_opcua::{DecodeErrorKind, StatusCode};

/// MessageHeader with SecureChannelId (12) + symmetric security header (4) + sequence header (8).
const MSG_HEADERS_LEN: usize = 24;

#[test]
fn get_endpoints_request_from_capture() {
    // Captured MessageSize 100; timestamp Oct 22 2021 15:23:20.6181897 CEST.
    let request = ServiceRequest::GetEndpoints(GetEndpointsRequest {
        request_header: RequestHeader {
            timestamp: DateTime(132_793_826_006_181_897),
            request_handle: 1,
            timeout_hint: 10_000,
            ..RequestHeader::default()
        },
        endpoint_url: UaString::from("opc.tcp://150.140.188.188:4840/"),
        locale_ids: vec![],
        profile_uris: vec![],
    });
    let mut expected = vec![
        0x01, 0x00, 0xAC,
        0x01, // four-byte NodeId i=428 GetEndpointsRequest_Encoding_DefaultBinary
        0x00, 0x00, // authentication token: null
        0x09, 0xA8, 0x76, 0xFB, 0x47, 0xC7, 0xD7, 0x01, // timestamp
        0x01, 0x00, 0x00, 0x00, // request handle 1
        0x00, 0x00, 0x00, 0x00, // return diagnostics
        0xFF, 0xFF, 0xFF, 0xFF, // audit entry id: null
        0x10, 0x27, 0x00, 0x00, // timeout hint 10000
        0x00, 0x00, 0x00, // additional header: null ExtensionObject
        31, 0, 0, 0, // endpoint URL length
    ];
    expected.extend_from_slice(b"opc.tcp://150.140.188.188:4840/");
    expected.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]); // empty locale ids, profile uris
    assert_eq!(expected.len() + MSG_HEADERS_LEN, 100);
    assert_eq!(request.encode_message(), expected);
    assert_eq!(ServiceRequest::decode_message(&expected).unwrap(), request);
}

#[test]
fn activate_session_request_from_capture() {
    // Captured MessageSize 146; anonymous token with open62541's policy id.
    let token = UserIdentityToken::Anonymous(AnonymousIdentityToken {
        policy_id: UaString::from("open62541-anonymous-policy"),
    });
    let request = ServiceRequest::ActivateSession(ActivateSessionRequest {
        request_header: RequestHeader {
            authentication_token: NodeId::guid(
                1,
                Guid::from_u128(0xC7BD3734_2A3A_374A_75A7_0A00A8DA6D26),
            ),
            timestamp: DateTime(132_809_245_183_702_395),
            request_handle: 1_000_002,
            timeout_hint: 10_000,
            ..RequestHeader::default()
        },
        client_signature: SignatureData::default(),
        client_software_certificates: vec![],
        locale_ids: vec![UaString::from("en-US")],
        user_identity_token: token.to_extension_object(),
        user_token_signature: SignatureData::default(),
    });
    let bytes = request.encode_message();
    assert_eq!(bytes.len() + MSG_HEADERS_LEN, 146);
    // ns=0;i=467, then the Guid NodeId (form 0x04, namespace 1, Data1 little-endian first).
    assert_eq!(
        bytes[..11],
        [
            0x01, 0x00, 0xD3, 0x01, 0x04, 0x01, 0x00, 0x34, 0x37, 0xBD, 0xC7
        ]
    );
    // The identity token: ns=0;i=321 four-byte form, binary body of 30 bytes.
    let token_start = bytes.len() - 8 - 39;
    assert_eq!(
        bytes[token_start..token_start + 9],
        [0x01, 0x00, 0x41, 0x01, 0x01, 30, 0, 0, 0]
    );
    let decoded = ServiceRequest::decode_message(&bytes).unwrap();
    let ServiceRequest::ActivateSession(activate) = &decoded else {
        panic!("dispatched to {decoded:?}");
    };
    assert_eq!(
        UserIdentityToken::from_extension_object(&activate.user_identity_token).unwrap(),
        Some(token)
    );
    assert_eq!(decoded, request);
}

#[test]
fn open_secure_channel_request_dispatch() {
    let request = ServiceRequest::OpenSecureChannel(OpenSecureChannelRequest {
        request_header: RequestHeader::default(),
        client_protocol_version: 0,
        request_type: SecurityTokenRequestType::Issue,
        security_mode: MessageSecurityMode::None,
        client_nonce: ByteString::from(vec![0]),
        requested_lifetime: 300_000,
    });
    let bytes = request.encode_message();
    assert_eq!(bytes[..4], [0x01, 0x00, 0xBE, 0x01]); // i=446
    assert_eq!(request.type_id(), NodeId::numeric(0, 446));
    assert_eq!(ServiceRequest::decode_message(&bytes).unwrap(), request);
    assert_eq!(request.request_header().request_handle, 0);
}

#[test]
fn browse_and_read_requests_dispatch() {
    let browse = ServiceRequest::Browse(BrowseRequest {
        request_header: RequestHeader::default(),
        view: ViewDescription::default(),
        requested_max_references_per_node: 0,
        nodes_to_browse: vec![BrowseDescription {
            node_id: well_known_nodes::OBJECTS_FOLDER,
            browse_direction: BrowseDirection::Forward,
            reference_type_id: well_known_nodes::HIERARCHICAL_REFERENCES,
            include_subtypes: true,
            node_class_mask: 0,
            result_mask: 63,
        }],
    });
    let read = ServiceRequest::Read(ReadRequest {
        request_header: RequestHeader::default(),
        max_age: 0.0,
        timestamps_to_return: TimestampsToReturn::Both,
        nodes_to_read: vec![ReadValueId {
            node_id: well_known_nodes::SERVER_SERVER_STATUS_CURRENT_TIME,
            attribute_id: 13,
            ..ReadValueId::default()
        }],
    });
    for request in [browse, read] {
        let bytes = request.encode_message();
        assert_eq!(ServiceRequest::decode_message(&bytes).unwrap(), request);
    }
}

#[test]
fn service_fault_answers_unsupported_request() {
    // i=615 is QueryFirstRequest: the Query service set is not implemented.
    let error = ServiceRequest::decode_message(&[0x01, 0x00, 0x67, 0x02]).unwrap_err();
    assert_eq!(error.status_code(), StatusCode::BAD_SERVICE_UNSUPPORTED);
    let fault = ServiceResponse::ServiceFault(ServiceFault {
        response_header: ResponseHeader {
            request_handle: 9,
            service_result: error.status_code(),
            ..ResponseHeader::default()
        },
    });
    let bytes = fault.encode_message();
    assert_eq!(bytes[..4], [0x01, 0x00, 0x8D, 0x01]); // i=397 ServiceFault
    let decoded = ServiceResponse::decode_message(&bytes).unwrap();
    assert_eq!(
        decoded.response_header().service_result,
        StatusCode::BAD_SERVICE_UNSUPPORTED
    );
}

#[test]
fn limits_apply_inside_messages() {
    let request = ServiceRequest::GetEndpoints(GetEndpointsRequest {
        locale_ids: vec![UaString::from("en"), UaString::from("de")],
        ..GetEndpointsRequest::default()
    });
    let bytes = request.encode_message();
    let limits = DecodingLimits {
        max_array_length: 1,
        ..DecodingLimits::default()
    };
    let error = ServiceRequest::decode_message_with_limits(&bytes, limits).unwrap_err();
    let ServiceDecodeError::Malformed(decode) = &error else {
        panic!("expected a limit error, got {error:?}");
    };
    // Type id (4) + header (29) + null endpoint URL (4).
    assert_eq!(decode.offset, 37);
    assert_eq!(
        decode.kind,
        DecodeErrorKind::ArrayTooLong {
            length: 2,
            limit: 1
        }
    );
    assert_eq!(
        error.status_code(),
        StatusCode::BAD_ENCODING_LIMITS_EXCEEDED
    );
}

#[test]
fn malformed_identity_token_extension_object() {
    let object =
        ExtensionObject::from_bytes(&[0x01, 0x00, 0x44, 0x01, 0x01, 2, 0, 0, 0, 1, 2]).unwrap();
    let error = UserIdentityToken::from_extension_object(&object).unwrap_err();
    assert_eq!(
        error.kind,
        DecodeErrorKind::UnexpectedEnd {
            needed: 4,
            available: 2
        }
    );
}
