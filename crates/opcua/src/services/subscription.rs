//! Subscription services (OPC 10000-4 §5.13): CreateSubscription, ModifySubscription,
//! SetPublishingMode, Publish, Republish, TransferSubscriptions, DeleteSubscriptions, and the
//! NotificationMessage (§7.25) with its DataChangeNotification (§7.25.2) and
//! StatusChangeNotification (§7.25.4) bodies.
//!
//! NotificationMessage carries its notifications as ExtensionObjects;
//! [`NotificationData`] reads and writes the typed bodies. EventNotificationList bodies are
//! recognised and skipped (this stack has no events).

use super::header::{RequestHeader, ResponseHeader};
use super::structure_codec::{BinaryEncodingId, ua_structure};
use crate::encoding::{
    BinaryEncodable, DataValue, DateTime, DecodeError, DiagnosticInfo, ExtensionObject,
    ExtensionObjectBody, Identifier, NodeId, Reader,
};
use crate::types::StatusCode;

ua_structure! {
    /// Creates a subscription (OPC 10000-4 §5.13.2.2).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct CreateSubscriptionRequest {
        /// Common request parameters.
        pub request_header: RequestHeader,
        /// Requested publishing interval in milliseconds.
        pub requested_publishing_interval: f64,
        /// Publishing intervals without a Publish request before the subscription is deleted.
        pub requested_lifetime_count: u32,
        /// Publishing intervals without notifications before a keep-alive is sent.
        pub requested_max_keep_alive_count: u32,
        /// Most notifications in one Publish response (0: no limit).
        pub max_notifications_per_publish: u32,
        /// Whether publishing starts enabled.
        pub publishing_enabled: bool,
        /// Relative priority among the session's subscriptions.
        pub priority: u8,
    }
}

ua_structure! {
    /// The revised parameters of a new subscription (OPC 10000-4 §5.13.2.2).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct CreateSubscriptionResponse {
        /// Common response parameters.
        pub response_header: ResponseHeader,
        /// The server-assigned id.
        pub subscription_id: u32,
        /// Publishing interval granted, in milliseconds.
        pub revised_publishing_interval: f64,
        /// Lifetime count granted.
        pub revised_lifetime_count: u32,
        /// Keep-alive count granted.
        pub revised_max_keep_alive_count: u32,
    }
}

ua_structure! {
    /// Changes a subscription's parameters (OPC 10000-4 §5.13.3.2).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ModifySubscriptionRequest {
        /// Common request parameters.
        pub request_header: RequestHeader,
        /// The subscription.
        pub subscription_id: u32,
        /// Requested publishing interval in milliseconds.
        pub requested_publishing_interval: f64,
        /// Requested lifetime count.
        pub requested_lifetime_count: u32,
        /// Requested keep-alive count.
        pub requested_max_keep_alive_count: u32,
        /// Most notifications in one Publish response (0: no limit).
        pub max_notifications_per_publish: u32,
        /// Relative priority.
        pub priority: u8,
    }
}

ua_structure! {
    /// The revised parameters (OPC 10000-4 §5.13.3.2).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ModifySubscriptionResponse {
        /// Common response parameters.
        pub response_header: ResponseHeader,
        /// Publishing interval granted.
        pub revised_publishing_interval: f64,
        /// Lifetime count granted.
        pub revised_lifetime_count: u32,
        /// Keep-alive count granted.
        pub revised_max_keep_alive_count: u32,
    }
}

ua_structure! {
    /// Enables or disables publishing of subscriptions (OPC 10000-4 §5.13.4.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct SetPublishingModeRequest {
        /// Common request parameters.
        pub request_header: RequestHeader,
        /// The new mode.
        pub publishing_enabled: bool,
        /// The subscriptions.
        pub subscription_ids: Vec<u32>,
    }
}

ua_structure! {
    /// One status per subscription id; also the response of DeleteSubscriptions.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct SetPublishingModeResponse {
        /// Common response parameters.
        pub response_header: ResponseHeader,
        /// One status per subscription id.
        pub results: Vec<StatusCode>,
        /// Diagnostics for `results`.
        pub diagnostic_infos: Vec<DiagnosticInfo>,
    }
}

ua_structure! {
    /// Acknowledges one NotificationMessage (OPC 10000-4 §5.13.5.2).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct SubscriptionAcknowledgement {
        /// The subscription.
        pub subscription_id: u32,
        /// The sequence number received.
        pub sequence_number: u32,
    }
}

ua_structure! {
    /// A Publish request: acknowledgements, and a slot the server answers when a subscription
    /// of the session has notifications or a keep-alive is due (OPC 10000-4 §5.13.5.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct PublishRequest {
        /// Common request parameters.
        pub request_header: RequestHeader,
        /// Messages received since the last Publish.
        pub subscription_acknowledgements: Vec<SubscriptionAcknowledgement>,
    }
}

ua_structure! {
    /// A message of a subscription (OPC 10000-4 §7.25): a keep-alive when `notification_data`
    /// is empty (its sequence number is then the next one to be used).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct NotificationMessage {
        /// Sequence number of the message.
        pub sequence_number: u32,
        /// When the message was sent.
        pub publish_time: DateTime,
        /// DataChangeNotification, StatusChangeNotification or EventNotificationList bodies.
        pub notification_data: Vec<ExtensionObject>,
    }
}

ua_structure! {
    /// The answer to a Publish request (OPC 10000-4 §5.13.5.2).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct PublishResponse {
        /// Common response parameters.
        pub response_header: ResponseHeader,
        /// The subscription the message belongs to.
        pub subscription_id: u32,
        /// Sequence numbers kept for Republish.
        pub available_sequence_numbers: Vec<u32>,
        /// True when more notifications are waiting.
        pub more_notifications: bool,
        /// The message.
        pub notification_message: NotificationMessage,
        /// One status per acknowledgement of the request.
        pub results: Vec<StatusCode>,
        /// Diagnostics for `results`.
        pub diagnostic_infos: Vec<DiagnosticInfo>,
    }
}

ua_structure! {
    /// Asks for a NotificationMessage again (OPC 10000-4 §5.13.6.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct RepublishRequest {
        /// Common request parameters.
        pub request_header: RequestHeader,
        /// The subscription.
        pub subscription_id: u32,
        /// The sequence number wanted.
        pub retransmit_sequence_number: u32,
    }
}

ua_structure! {
    /// The message asked for (OPC 10000-4 §5.13.6.2).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct RepublishResponse {
        /// Common response parameters.
        pub response_header: ResponseHeader,
        /// The message.
        pub notification_message: NotificationMessage,
    }
}

ua_structure! {
    /// Moves subscriptions to the requesting session (OPC 10000-4 §5.13.7.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct TransferSubscriptionsRequest {
        /// Common request parameters.
        pub request_header: RequestHeader,
        /// The subscriptions.
        pub subscription_ids: Vec<u32>,
        /// Whether the current values of the monitored items are sent first.
        pub send_initial_values: bool,
    }
}

ua_structure! {
    /// The result of one transfer (OPC 10000-4 §5.13.7.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct TransferResult {
        /// Good, Bad_SubscriptionIdInvalid, Bad_UserAccessDenied, ...
        pub status_code: StatusCode,
        /// Sequence numbers available for Republish.
        pub available_sequence_numbers: Vec<u32>,
    }
}

ua_structure! {
    /// One result per subscription id (OPC 10000-4 §5.13.7.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct TransferSubscriptionsResponse {
        /// Common response parameters.
        pub response_header: ResponseHeader,
        /// One result per subscription id.
        pub results: Vec<TransferResult>,
        /// Diagnostics for `results`.
        pub diagnostic_infos: Vec<DiagnosticInfo>,
    }
}

ua_structure! {
    /// Deletes subscriptions (OPC 10000-4 §5.13.8.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct DeleteSubscriptionsRequest {
        /// Common request parameters.
        pub request_header: RequestHeader,
        /// The subscriptions.
        pub subscription_ids: Vec<u32>,
    }
}

ua_structure! {
    /// One status per subscription id (OPC 10000-4 §5.13.8.2).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct DeleteSubscriptionsResponse {
        /// Common response parameters.
        pub response_header: ResponseHeader,
        /// One status per subscription id.
        pub results: Vec<StatusCode>,
        /// Diagnostics for `results`.
        pub diagnostic_infos: Vec<DiagnosticInfo>,
    }
}

ua_structure! {
    /// One changed value of a monitored item (OPC 10000-4 §7.25.2).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct MonitoredItemNotification {
        /// The client handle given at CreateMonitoredItems.
        pub client_handle: u32,
        /// The value, status and timestamps.
        pub value: DataValue,
    }
}

ua_structure! {
    /// Data changes of monitored items (OPC 10000-4 §7.25.2).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct DataChangeNotification {
        /// The changes, oldest first per item.
        pub monitored_items: Vec<MonitoredItemNotification>,
        /// Diagnostics for `monitored_items`.
        pub diagnostic_infos: Vec<DiagnosticInfo>,
    }
}

ua_structure! {
    /// A change of the subscription's state, e.g. Bad_Timeout when its lifetime expired
    /// (OPC 10000-4 §7.25.4).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct StatusChangeNotification {
        /// The new status.
        pub status: StatusCode,
        /// Diagnostics.
        pub diagnostic_info: DiagnosticInfo,
    }
}

/// `EventNotificationList_Encoding_DefaultBinary` (ns=0;i=916): recognised, not decoded.
pub const EVENT_NOTIFICATION_LIST_BINARY_ENCODING_ID: u32 = 916;

/// One typed notification of a [`NotificationMessage`].
#[derive(Clone, Debug, PartialEq)]
pub enum NotificationData {
    /// Data changes.
    DataChange(DataChangeNotification),
    /// A subscription status change.
    StatusChange(StatusChangeNotification),
    /// An EventNotificationList (events are not supported; the body is skipped).
    Events,
}

impl NotificationData {
    /// Reads one notification body. `Ok(None)` for a type this stack does not know (or an XML
    /// body); the decode error, with its offset inside the body, for a malformed body.
    pub fn from_extension_object(object: &ExtensionObject) -> Result<Option<Self>, DecodeError> {
        let (ExtensionObjectBody::Binary(bytes), 0, Identifier::Numeric(id)) = (
            &object.body,
            object.type_id.namespace,
            &object.type_id.identifier,
        ) else {
            return Ok(None);
        };
        Ok(Some(match *id {
            DataChangeNotification::BINARY_ENCODING_ID => {
                Self::DataChange(decode_whole(bytes.as_slice())?)
            }
            StatusChangeNotification::BINARY_ENCODING_ID => {
                Self::StatusChange(decode_whole(bytes.as_slice())?)
            }
            EVENT_NOTIFICATION_LIST_BINARY_ENCODING_ID => Self::Events,
            _ => return Ok(None),
        }))
    }

    /// The ExtensionObject carrying this notification (`Events` gives an empty list).
    pub fn to_extension_object(&self) -> ExtensionObject {
        match self {
            Self::DataChange(data) => wrap_binary(data),
            Self::StatusChange(status) => wrap_binary(status),
            Self::Events => ExtensionObject {
                type_id: NodeId::numeric(0, EVENT_NOTIFICATION_LIST_BINARY_ENCODING_ID),
                body: ExtensionObjectBody::Binary(0i32.to_bytes()),
            },
        }
    }
}

impl NotificationMessage {
    /// True for a keep-alive (no notifications).
    pub fn is_keep_alive(&self) -> bool {
        self.notification_data.is_empty()
    }

    /// The typed notifications; unknown or malformed bodies are skipped (a client cannot
    /// answer them with anything).
    pub fn notifications(&self) -> Vec<NotificationData> {
        self.notification_data
            .iter()
            .filter_map(|object| {
                NotificationData::from_extension_object(object)
                    .ok()
                    .flatten()
            })
            .collect()
    }
}

/// Decodes the whole of an ExtensionObject body as `T`.
pub(crate) fn decode_whole<T: BinaryEncodable>(body: &[u8]) -> Result<T, DecodeError> {
    let mut reader = Reader::new(body);
    let value = T::decode(&mut reader)?;
    reader.expect_end()?;
    Ok(value)
}

/// An ExtensionObject with `value`'s DefaultBinary encoding id and binary body.
pub(crate) fn wrap_binary<T: BinaryEncodable + BinaryEncodingId>(value: &T) -> ExtensionObject {
    ExtensionObject {
        type_id: NodeId::numeric(0, T::BINARY_ENCODING_ID),
        body: ExtensionObjectBody::Binary(value.to_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::Variant;
    use crate::services::test_values::{assert_round_trip, generate_from_seed};
    use proptest::prelude::*;

    #[test]
    fn create_subscription_layout() {
        let request = CreateSubscriptionRequest {
            request_header: RequestHeader::default(),
            requested_publishing_interval: 500.0,
            requested_lifetime_count: 30,
            requested_max_keep_alive_count: 10,
            max_notifications_per_publish: 0,
            publishing_enabled: true,
            priority: 7,
        };
        let bytes = request.to_bytes();
        let header_len = RequestHeader::default().encoded_len();
        // Double 500.0, UInt32 30, UInt32 10, UInt32 0, Boolean 1, Byte 7.
        assert_eq!(
            &bytes[header_len..],
            [
                0, 0, 0, 0, 0, 0x40, 0x7F, 0x40, 30, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 1, 7
            ]
        );
        assert_round_trip(&request);
    }

    #[test]
    fn notification_bodies_round_trip_through_extension_objects() {
        let change = NotificationData::DataChange(DataChangeNotification {
            monitored_items: vec![MonitoredItemNotification {
                client_handle: 5,
                value: DataValue {
                    value: Some(Variant::Double(1.5)),
                    ..DataValue::default()
                },
            }],
            diagnostic_infos: vec![],
        });
        let object = change.to_extension_object();
        assert_eq!(object.type_id, NodeId::numeric(0, 811));
        assert_eq!(
            NotificationData::from_extension_object(&object).unwrap(),
            Some(change)
        );
        let status = NotificationData::StatusChange(StatusChangeNotification {
            status: StatusCode::BAD_TIMEOUT,
            diagnostic_info: DiagnosticInfo::default(),
        });
        let object = status.to_extension_object();
        assert_eq!(object.type_id, NodeId::numeric(0, 820));
        // Status (UInt32) then an empty DiagnosticInfo (mask 0).
        assert_eq!(
            object.body,
            ExtensionObjectBody::Binary(vec![0, 0, 0x0A, 0x80, 0])
        );
        assert_eq!(
            NotificationData::from_extension_object(&object).unwrap(),
            Some(status)
        );
        let events = NotificationData::Events.to_extension_object();
        assert_eq!(
            NotificationData::from_extension_object(&events).unwrap(),
            Some(NotificationData::Events)
        );
        // Unknown type: None; malformed body: an error.
        let unknown = ExtensionObject {
            type_id: NodeId::numeric(0, 1),
            body: ExtensionObjectBody::Binary(vec![]),
        };
        assert_eq!(
            NotificationData::from_extension_object(&unknown).unwrap(),
            None
        );
        let truncated = ExtensionObject {
            type_id: NodeId::numeric(0, 820),
            body: ExtensionObjectBody::Binary(vec![0, 0]),
        };
        assert!(NotificationData::from_extension_object(&truncated).is_err());
        let message = NotificationMessage {
            sequence_number: 1,
            publish_time: DateTime::MIN,
            notification_data: vec![object, unknown, truncated],
        };
        assert_eq!(message.notifications().len(), 1);
        assert!(!message.is_keep_alive());
    }

    proptest! {
        #[test]
        fn subscription_messages_round_trip(seed: u64) {
            assert_round_trip(&generate_from_seed::<CreateSubscriptionRequest>(seed));
            assert_round_trip(&generate_from_seed::<CreateSubscriptionResponse>(seed));
            assert_round_trip(&generate_from_seed::<ModifySubscriptionRequest>(seed));
            assert_round_trip(&generate_from_seed::<ModifySubscriptionResponse>(seed));
            assert_round_trip(&generate_from_seed::<SetPublishingModeRequest>(seed));
            assert_round_trip(&generate_from_seed::<SetPublishingModeResponse>(seed));
            assert_round_trip(&generate_from_seed::<PublishRequest>(seed));
            assert_round_trip(&generate_from_seed::<PublishResponse>(seed));
            assert_round_trip(&generate_from_seed::<RepublishRequest>(seed));
            assert_round_trip(&generate_from_seed::<RepublishResponse>(seed));
            assert_round_trip(&generate_from_seed::<TransferSubscriptionsRequest>(seed));
            assert_round_trip(&generate_from_seed::<TransferSubscriptionsResponse>(seed));
            assert_round_trip(&generate_from_seed::<DeleteSubscriptionsRequest>(seed));
            assert_round_trip(&generate_from_seed::<DeleteSubscriptionsResponse>(seed));
        }

        #[test]
        fn notification_data_round_trips(seed: u64) {
            let change = NotificationData::DataChange(generate_from_seed(seed));
            prop_assert_eq!(
                NotificationData::from_extension_object(&change.to_extension_object()).unwrap(),
                Some(change)
            );
            let status = NotificationData::StatusChange(generate_from_seed(seed));
            prop_assert_eq!(
                NotificationData::from_extension_object(&status.to_extension_object()).unwrap(),
                Some(status)
            );
        }
    }
}
