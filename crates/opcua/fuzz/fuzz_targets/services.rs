//! Fuzzes the service message dispatch: arbitrary bytes go to `ServiceRequest::decode_message`
//! and `ServiceResponse::decode_message`; whatever decodes must re-encode, decode again to the
//! same message and re-encode to identical bytes. Identity tokens inside ActivateSession
//! requests are decoded too.

#![no_main]

use buildwire_opcua::services::{ServiceRequest, ServiceResponse, UserIdentityToken};
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
    }
    if let Ok(response) = ServiceResponse::decode_message(data) {
        let encoded = response.encode_message();
        let again =
            ServiceResponse::decode_message(&encoded).expect("a re-encoded response decodes");
        assert_eq!(format!("{again:?}"), format!("{response:?}"));
        assert_eq!(again.encode_message(), encoded);
    }
});
