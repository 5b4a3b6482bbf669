//! Fuzz target: APDU header, then the service payload as a sequence of tagged values.
//! Both must survive encode/decode; values are compared by their re-encoded bytes so that
//! NaN reals do not count as mismatches.
#![no_main]

use buildwire_bacnet::apdu::{Apdu, BacnetError};
use buildwire_bacnet::encoding::Reader;
use buildwire_bacnet::encoding::abstract_syntax::{decode_to_end, encode_elements};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(apdu) = Apdu::decode(&mut Reader::new(data)) else {
        return;
    };
    let mut encoded = Vec::new();
    apdu.encode(&mut encoded);
    let again = Apdu::decode(&mut Reader::new(&encoded)).expect("re-encoded APDU must decode");
    assert_eq!(again, apdu);

    let payload = match apdu {
        Apdu::ConfirmedRequest { payload, .. }
        | Apdu::UnconfirmedRequest { payload, .. }
        | Apdu::ComplexAck { payload, .. } => payload,
        Apdu::Error { payload, .. } => {
            if let Ok(error) = BacnetError::decode_payload(&mut Reader::new(payload)) {
                let mut bytes = Vec::new();
                error.encode(&mut bytes);
                let again =
                    BacnetError::decode(&mut Reader::new(&bytes)).expect("error re-decodes");
                assert_eq!(again, error);
            }
            payload
        }
        _ => return,
    };
    if let Ok(elements) = decode_to_end(&mut Reader::new(payload)) {
        let mut first = Vec::new();
        encode_elements(&elements, &mut first);
        let decoded = decode_to_end(&mut Reader::new(&first)).expect("re-encoded values decode");
        let mut second = Vec::new();
        encode_elements(&decoded, &mut second);
        assert_eq!(first, second);
    }
});
