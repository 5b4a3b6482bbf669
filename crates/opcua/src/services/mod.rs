//! OPC 10000-4 (Part 4) service structures with their UA Binary encodings, one file per
//! service set, bottom to top:
//!
//! - [`header`]: RequestHeader, ResponseHeader, ServiceFault.
//! - [`secure_channel`]: OpenSecureChannel, CloseSecureChannel.
//! - [`discovery`]: GetEndpoints, FindServers and the descriptions they return.
//! - [`session`]: CreateSession, ActivateSession (with the user identity tokens), CloseSession.
//! - [`view`]: Browse, BrowseNext, TranslateBrowsePathsToNodeIds.
//! - [`attribute`]: Read, Write, attribute ids.
//! - [`method`]: the Call service.
//! - [`monitored_item`]: CreateMonitoredItems, ModifyMonitoredItems, SetMonitoringMode,
//!   DeleteMonitoredItems and the DataChangeFilter.
//! - [`subscription`]: the Subscription service set, Publish / Republish and the
//!   NotificationMessage bodies.
//! - [`message`]: [`ServiceRequest`] / [`ServiceResponse`], a message body's type NodeId and
//!   dispatch, generated from the single encoding-id table below.
//! - [`well_known_nodes`]: namespace-0 NodeIds a server needs.
//!
//! Arrays are `Vec<T>`: a null array (length -1) decodes as empty and is written back with
//! length 0, which OPC 10000-6 §5.2.5 treats alike for every field of these services.
//!
//! ```
//! use buildwire_opcua::services::{ReadRequest, ServiceRequest, TimestampsToReturn};
//!
//! let request = ServiceRequest::from(ReadRequest {
//!     request_header: Default::default(),
//!     max_age: 0.0,
//!     timestamps_to_return: TimestampsToReturn::Both,
//!     nodes_to_read: vec![],
//! });
//! let bytes = request.encode_message();
//! assert_eq!(&bytes[..4], [0x01, 0x00, 0x77, 0x02]); // ns=0;i=631 ReadRequest_Encoding_DefaultBinary
//! assert_eq!(ServiceRequest::decode_message(&bytes).unwrap(), request);
//! ```

mod structure_codec;
#[cfg(test)]
pub(crate) mod test_values;

pub mod attribute;
pub mod discovery;
pub mod header;
pub mod message;
pub mod method;
pub mod monitored_item;
pub mod secure_channel;
pub mod session;
pub mod subscription;
pub mod view;
pub mod well_known_nodes;

pub use attribute::{
    AttributeId, ReadRequest, ReadResponse, ReadValueId, TimestampsToReturn, WriteRequest,
    WriteResponse, WriteValue,
};
pub use discovery::{
    ApplicationDescription, ApplicationType, EndpointDescription, FindServersRequest,
    FindServersResponse, GetEndpointsRequest, GetEndpointsResponse, MessageSecurityMode,
    UserTokenPolicy, UserTokenType,
};
pub use header::{RequestHeader, ResponseHeader, ServiceFault};

/// Build information (OPC 10000-5 §12.4): what a server reports in ServerStatus.BuildInfo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildInfo {
    /// URI of the product.
    pub product_uri: String,
    /// Who made it.
    pub manufacturer_name: String,
    /// Its name.
    pub product_name: String,
    /// Its version.
    pub software_version: String,
    /// The build number.
    pub build_number: String,
    /// When it was built.
    pub build_date: crate::encoding::DateTime,
}
pub use message::ServiceDecodeError;
pub use method::{CallMethodRequest, CallMethodResult, CallRequest, CallResponse};
pub use monitored_item::{
    CreateMonitoredItemsRequest, CreateMonitoredItemsResponse, DataChangeFilter, DataChangeTrigger,
    DeleteMonitoredItemsRequest, DeleteMonitoredItemsResponse, ModifyMonitoredItemsRequest,
    ModifyMonitoredItemsResponse, MonitoredItemCreateRequest, MonitoredItemCreateResult,
    MonitoredItemModifyRequest, MonitoredItemModifyResult, MonitoringFilter, MonitoringMode,
    MonitoringParameters, SetMonitoringModeRequest, SetMonitoringModeResponse, deadband_type,
};
pub use secure_channel::{
    ChannelSecurityToken, CloseSecureChannelRequest, CloseSecureChannelResponse,
    OpenSecureChannelRequest, OpenSecureChannelResponse, SecurityTokenRequestType,
};
pub use session::{
    ActivateSessionRequest, ActivateSessionResponse, AnonymousIdentityToken, CloseSessionRequest,
    CloseSessionResponse, CreateSessionRequest, CreateSessionResponse, IssuedIdentityToken,
    SignatureData, SignedSoftwareCertificate, UserIdentityToken, UserNameIdentityToken,
    X509IdentityToken,
};
pub use structure_codec::BinaryEncodingId;
pub use subscription::{
    CreateSubscriptionRequest, CreateSubscriptionResponse, DataChangeNotification,
    DeleteSubscriptionsRequest, DeleteSubscriptionsResponse, ModifySubscriptionRequest,
    ModifySubscriptionResponse, MonitoredItemNotification, NotificationData, NotificationMessage,
    PublishRequest, PublishResponse, RepublishRequest, RepublishResponse, SetPublishingModeRequest,
    SetPublishingModeResponse, StatusChangeNotification, SubscriptionAcknowledgement,
    TransferResult, TransferSubscriptionsRequest, TransferSubscriptionsResponse,
};
pub use view::{
    BrowseDescription, BrowseDirection, BrowseNextRequest, BrowseNextResponse, BrowsePath,
    BrowsePathResult, BrowsePathTarget, BrowseRequest, BrowseResponse, BrowseResult, NodeClass,
    ReferenceDescription, RelativePath, RelativePathElement, TranslateBrowsePathsToNodeIdsRequest,
    TranslateBrowsePathsToNodeIdsResponse, ViewDescription,
};

/// The one table of `<Type>_Encoding_DefaultBinary` NodeIds (namespace 0), from the OPC
/// Foundation's `Schema/NodeIds.csv` (UA-Nodeset). It implements [`BinaryEncodingId`] for each
/// type, lists the rows in [`BINARY_ENCODING_IDS`] and generates [`ServiceRequest`] and
/// [`ServiceResponse`].
macro_rules! binary_encoding_table {
    (
        requests { $( $request_variant:ident($request:ident) = $request_id:literal ),+ $(,)? }
        responses { $( $response_variant:ident($response:ident) = $response_id:literal ),+ $(,)? }
        structures { $( $structure:ident = $structure_id:literal ),+ $(,)? }
    ) => {
        $( impl BinaryEncodingId for $request { const BINARY_ENCODING_ID: u32 = $request_id; } )+
        $( impl BinaryEncodingId for $response { const BINARY_ENCODING_ID: u32 = $response_id; } )+
        $( impl BinaryEncodingId for $structure { const BINARY_ENCODING_ID: u32 = $structure_id; } )+

        /// Every row of the encoding-id table: type name and `DefaultBinary` NodeId number.
        pub const BINARY_ENCODING_IDS: &[(&str, u32)] = &[
            $( (stringify!($request), $request_id), )+
            $( (stringify!($response), $response_id), )+
            $( (stringify!($structure), $structure_id), )+
        ];

        message::service_message_enum! {
            /// Any service request this stack decodes, keyed by its type NodeId.
            ServiceRequest, request_header: RequestHeader,
            { $( #[doc = concat!("A ", stringify!($request), ".")] $request_variant($request) ),+ }
        }

        message::service_message_enum! {
            /// Any service response this stack decodes, keyed by its type NodeId.
            ServiceResponse, response_header: ResponseHeader,
            { $( #[doc = concat!("A ", stringify!($response), ".")] $response_variant($response) ),+ }
        }
    };
}

binary_encoding_table! {
    requests {
        FindServers(FindServersRequest) = 422,
        GetEndpoints(GetEndpointsRequest) = 428,
        OpenSecureChannel(OpenSecureChannelRequest) = 446,
        CloseSecureChannel(CloseSecureChannelRequest) = 452,
        CreateSession(CreateSessionRequest) = 461,
        ActivateSession(ActivateSessionRequest) = 467,
        CloseSession(CloseSessionRequest) = 473,
        Browse(BrowseRequest) = 527,
        BrowseNext(BrowseNextRequest) = 533,
        TranslateBrowsePathsToNodeIds(TranslateBrowsePathsToNodeIdsRequest) = 554,
        Read(ReadRequest) = 631,
        Write(WriteRequest) = 673,
        Call(CallRequest) = 712,
        CreateMonitoredItems(CreateMonitoredItemsRequest) = 751,
        ModifyMonitoredItems(ModifyMonitoredItemsRequest) = 763,
        SetMonitoringMode(SetMonitoringModeRequest) = 769,
        DeleteMonitoredItems(DeleteMonitoredItemsRequest) = 781,
        CreateSubscription(CreateSubscriptionRequest) = 787,
        ModifySubscription(ModifySubscriptionRequest) = 793,
        SetPublishingMode(SetPublishingModeRequest) = 799,
        Publish(PublishRequest) = 826,
        Republish(RepublishRequest) = 832,
        TransferSubscriptions(TransferSubscriptionsRequest) = 841,
        DeleteSubscriptions(DeleteSubscriptionsRequest) = 847,
    }
    responses {
        ServiceFault(ServiceFault) = 397,
        FindServers(FindServersResponse) = 425,
        GetEndpoints(GetEndpointsResponse) = 431,
        OpenSecureChannel(OpenSecureChannelResponse) = 449,
        CloseSecureChannel(CloseSecureChannelResponse) = 455,
        CreateSession(CreateSessionResponse) = 464,
        ActivateSession(ActivateSessionResponse) = 470,
        CloseSession(CloseSessionResponse) = 476,
        Browse(BrowseResponse) = 530,
        BrowseNext(BrowseNextResponse) = 536,
        TranslateBrowsePathsToNodeIds(TranslateBrowsePathsToNodeIdsResponse) = 557,
        Read(ReadResponse) = 634,
        Write(WriteResponse) = 676,
        Call(CallResponse) = 715,
        CreateMonitoredItems(CreateMonitoredItemsResponse) = 754,
        ModifyMonitoredItems(ModifyMonitoredItemsResponse) = 766,
        SetMonitoringMode(SetMonitoringModeResponse) = 772,
        DeleteMonitoredItems(DeleteMonitoredItemsResponse) = 784,
        CreateSubscription(CreateSubscriptionResponse) = 790,
        ModifySubscription(ModifySubscriptionResponse) = 796,
        SetPublishingMode(SetPublishingModeResponse) = 802,
        Publish(PublishResponse) = 829,
        Republish(RepublishResponse) = 835,
        TransferSubscriptions(TransferSubscriptionsResponse) = 844,
        DeleteSubscriptions(DeleteSubscriptionsResponse) = 850,
    }
    structures {
        AnonymousIdentityToken = 321,
        UserNameIdentityToken = 324,
        X509IdentityToken = 327,
        RequestHeader = 391,
        ResponseHeader = 394,
        DataChangeFilter = 724,
        NotificationMessage = 805,
        MonitoredItemNotification = 808,
        DataChangeNotification = 811,
        StatusChangeNotification = 820,
        IssuedIdentityToken = 940,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::{DecodeErrorKind, NodeId};
    use crate::services::test_values::generate_from_seed;
    use crate::types::StatusCode;
    use proptest::prelude::*;
    use std::collections::HashSet;

    #[test]
    fn encoding_ids_are_unique() {
        let mut seen = HashSet::new();
        for (name, id) in BINARY_ENCODING_IDS {
            assert!(seen.insert(*id), "{name} repeats {id}");
        }
        assert_eq!(BINARY_ENCODING_IDS.len(), 24 + 25 + 11);
    }

    #[test]
    fn unknown_type_is_service_unsupported() {
        // i=775 is SetTriggeringRequest_Encoding_DefaultBinary, not decoded by this stack.
        let bytes = [0x01, 0x00, 0x07, 0x03, 0xAA];
        let error = ServiceRequest::decode_message(&bytes).unwrap_err();
        assert_eq!(
            error,
            ServiceDecodeError::UnsupportedType {
                type_id: NodeId::numeric(0, 775)
            }
        );
        assert_eq!(error.status_code(), StatusCode::BAD_SERVICE_UNSUPPORTED);
        // A request id is not a response id.
        let read = ServiceRequest::from(generate_from_seed::<ReadRequest>(1)).encode_message();
        assert!(matches!(
            ServiceResponse::decode_message(&read),
            Err(ServiceDecodeError::UnsupportedType { .. })
        ));
        // A non-zero namespace is never a service message.
        let error = ServiceRequest::decode_message(&[0x01, 0x01, 0x77, 0x02]).unwrap_err();
        assert_eq!(error.status_code(), StatusCode::BAD_SERVICE_UNSUPPORTED);
    }

    #[test]
    fn malformed_and_trailing_bodies() {
        let message = ServiceRequest::from(CloseSessionRequest::default()).encode_message();
        let error = ServiceRequest::decode_message(&message[..message.len() - 1]).unwrap_err();
        assert_eq!(error.status_code(), StatusCode::BAD_DECODING_ERROR);
        let mut longer = message.clone();
        longer.push(0);
        assert_eq!(
            ServiceRequest::decode_message(&longer).unwrap_err(),
            ServiceDecodeError::Malformed(crate::encoding::DecodeError {
                offset: message.len(),
                kind: DecodeErrorKind::TrailingBytes(1)
            })
        );
        assert_eq!(
            ServiceRequest::decode_message(&[])
                .unwrap_err()
                .status_code(),
            StatusCode::BAD_DECODING_ERROR
        );
    }

    proptest! {
        #[test]
        fn every_request_round_trips_through_dispatch(seed: u64) {
            let request: ServiceRequest = generate_from_seed(seed);
            let bytes = request.encode_message();
            prop_assert_eq!(ServiceRequest::decode_message(&bytes).unwrap(), request);
        }

        #[test]
        fn mutated_messages_never_panic(seed: u64, position: usize, byte: u8, cut: u8) {
            // A valid message with one byte replaced and possibly a few bytes cut: decoding may
            // fail, but whatever decodes must re-encode to a fixed point.
            let mutate = |mut bytes: Vec<u8>| {
                let length = bytes.len();
                if let Some(slot) = bytes.get_mut(position % length) {
                    *slot = byte;
                }
                bytes.truncate(length.saturating_sub(usize::from(cut % 4)));
                bytes
            };
            let request = mutate(generate_from_seed::<ServiceRequest>(seed).encode_message());
            if let Ok(decoded) = ServiceRequest::decode_message(&request) {
                let again = decoded.encode_message();
                prop_assert_eq!(ServiceRequest::decode_message(&again).unwrap(), decoded);
            }
            let response = mutate(generate_from_seed::<ServiceResponse>(seed).encode_message());
            if let Ok(decoded) = ServiceResponse::decode_message(&response) {
                let again = decoded.encode_message();
                prop_assert_eq!(ServiceResponse::decode_message(&again).unwrap(), decoded);
            }
        }

        #[test]
        fn every_response_round_trips_through_dispatch(seed: u64) {
            let response: ServiceResponse = generate_from_seed(seed);
            let bytes = response.encode_message();
            prop_assert_eq!(ServiceResponse::decode_message(&bytes).unwrap(), response);
        }
    }
}
