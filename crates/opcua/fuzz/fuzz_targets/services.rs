//! Fuzzes the service message dispatch: arbitrary bytes go to `ServiceRequest::decode_message`
//! and `ServiceResponse::decode_message`; whatever decodes must re-encode, decode again to the
//! same message and re-encode to identical bytes. Identity tokens inside ActivateSession
//! requests, monitoring filters of CreateMonitoredItems /
//! ModifyMonitoredItems and the notification bodies of Publish / Republish responses are
//! decoded too.

#![no_main]

use buildwire_opcua::services::{
    MonitoringFilter, NotificationData, ServiceRequest, ServiceResponse, UserIdentityToken,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(request) = ServiceRequest::decode_message(data) {
        let encoded = request.encode_message();
        let again = ServiceRequest::decode_message(&encoded).expect("a re-encoded request decodes");
        // Debug text compares floats NaN-safely; the bytes must be identical too.
        assert_eq!(format!("{again:?}"), format!("{request:?}"));
        assert_eq!(again.encode_message(), encoded);
        if let ServiceRequest::ActivateSession(activate) = &request {
            if let Ok(Some(token)) =
                UserIdentityToken::from_extension_object(&activate.user_identity_token)
            {
                let object = token.to_extension_object();
                let back = UserIdentityToken::from_extension_object(&object)
                    .expect("a re-encoded token decodes");
                assert_eq!(back, Some(token));
            }
        }
        let filters: Vec<_> = match &request {
            ServiceRequest::CreateMonitoredItems(create) => create
                .items_to_create
                .iter()
                .map(|item| &item.requested_parameters.filter)
                .collect(),
            ServiceRequest::ModifyMonitoredItems(modify) => modify
                .items_to_modify
                .iter()
                .map(|item| &item.requested_parameters.filter)
                .collect(),
            _ => Vec::new(),
        };
        for filter in filters {
            if let Ok(MonitoringFilter::DataChange(data_change)) =
                MonitoringFilter::from_extension_object(filter)
            {
                let back =
                    MonitoringFilter::from_extension_object(&data_change.to_extension_object()).ok();
                let expected = Some(MonitoringFilter::DataChange(data_change));
                assert_eq!(format!("{back:?}"), format!("{expected:?}"));
            }
        }
    }
    if let Ok(response) = ServiceResponse::decode_message(data) {
        let encoded = response.encode_message();
        let again =
            ServiceResponse::decode_message(&encoded).expect("a re-encoded response decodes");
        assert_eq!(format!("{again:?}"), format!("{response:?}"));
        assert_eq!(again.encode_message(), encoded);
        let message = match &response {
            ServiceResponse::Publish(publish) => Some(&publish.notification_message),
            ServiceResponse::Republish(republish) => Some(&republish.notification_message),
            _ => None,
        };
        for object in message.map(|m| m.notification_data.as_slice()).unwrap_or_default() {
            if let Ok(Some(data)) = NotificationData::from_extension_object(object) {
                let back = NotificationData::from_extension_object(&data.to_extension_object())
                    .expect("a re-encoded notification decodes")
                    .expect("a re-encoded notification is known");
                assert_eq!(format!("{back:?}"), format!("{data:?}"));
            }
        }
    }
});
